//! Matching and pooling tests, and the run builders the renderers' tests
//! share.

use super::*;
use crate::record::Figures;

/// A run called `id` holding `cases`.
pub(super) fn run(id: &str, cases: Vec<Case>) -> RunRecord {
    crate::record::test_run(id, cases)
}

/// An ok case of `scenario` on `fs` with `params` (name, value) and one
/// repeat's figures set by `set`.
pub(super) fn case(scenario: &str, fs: &str, params: &[(&str, &str)], repeat: u32, set: impl FnOnce(&mut Figures)) -> Case {
    let params = params.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect();
    let mut case = Case::new(scenario, fs, params, repeat);
    set(&mut case.figures);
    case
}

/// `repeats` cases of tree-copy on ext4 (size=64M), each with a wall time
/// from `walls` and a fixed journal-commit count.
pub(super) fn repeats(walls: &[f64], commits: f64) -> Vec<Case> {
    walls
        .iter()
        .enumerate()
        .map(|(i, &wall)| {
            case("tree-copy", "ext4", &[("size", "64M")], i as u32 + 1, |f| {
                f.set("wall_s", wall, "s", Better::Lower, Kind::Timing);
                f.set("journal_commits", commits, "count", Better::Lower, Kind::Exact);
            })
        })
        .collect()
}

pub(super) fn options() -> CompareOptions {
    CompareOptions { resamples: 1000, ..CompareOptions::default() }
}

pub(super) fn compare_runs(base: &[RunRecord], new: &[RunRecord]) -> Comparison {
    compare(Side { label: "v1", runs: base }, Side { label: "v2", runs: new }, &options())
}

#[test]
fn repeats_pool_and_keys_ignore_parameter_order_and_repeat() {
    let base = [run("b", repeats(&[1.0, 1.1, 0.9, 1.05, 0.95], 21.0))];
    // The new side's params in the other order, its repeats numbered from 7.
    let new_cases = [2.0, 2.2, 1.8, 2.1, 1.9]
        .iter()
        .map(|&wall| {
            case("tree-copy", "ext4", &[("size", "64M")], 7, |f| {
                f.set("wall_s", wall, "s", Better::Lower, Kind::Timing);
                f.set("journal_commits", 2.0, "count", Better::Lower, Kind::Exact);
            })
        })
        .collect();
    let c = compare_runs(&base, &[run("n", new_cases)]);
    assert_eq!(c.rows.len(), 2);
    assert_eq!((c.regressions(), c.improvements()), (1, 1));
    assert_eq!(c.rows[0].figure, "wall_s");
    assert_eq!(c.rows[0].outcome, Outcome::Regression);
    assert_eq!(c.rows[0].base.len(), 5);
    assert_eq!(c.rows[1].figure, "journal_commits");
    assert_eq!(c.rows[1].outcome, Outcome::Improvement);
    assert!(c.only_base.is_empty() && c.only_new.is_empty());
    assert_eq!((c.base_runs.clone(), c.new_runs.clone()), (vec!["b".to_string()], vec!["n".to_string()]));
}

#[test]
fn params_in_another_order_match() {
    let a = case("mmap-fill", "ext4", &[("size", "128M"), ("order", "seed")], 1, |f| {
        f.set("files", 3.0, "count", Better::Lower, Kind::Exact);
    });
    let b = case("mmap-fill", "ext4", &[("order", "seed"), ("size", "128M")], 2, |f| {
        f.set("files", 3.0, "count", Better::Lower, Kind::Exact);
    });
    let c = compare_runs(&[run("b", vec![a])], &[run("n", vec![b])]);
    assert_eq!(c.rows.len(), 1);
    assert_eq!(c.rows[0].outcome, Outcome::Unchanged);
}

#[test]
fn runs_on_a_side_pool_together() {
    let base = [run("b1", repeats(&[1.0, 1.1], 21.0)), run("b2", repeats(&[0.9, 1.05, 0.95], 21.0))];
    let new = [run("n1", repeats(&[1.0, 1.1, 0.9, 1.05, 0.95], 21.0))];
    let c = compare_runs(&base, &new);
    let wall = c.rows.iter().find(|r| r.figure == "wall_s").unwrap();
    assert_eq!(wall.base, [1.0, 1.1, 0.9, 1.05, 0.95]);
    assert_eq!(wall.outcome, Outcome::Unchanged);
    assert_eq!(c.base_runs, ["b1", "b2"]);
}

#[test]
fn only_ok_cases_count_and_one_sided_keys_are_listed() {
    let mut failed = case("tree-copy", "xfs", &[], 1, |f| f.set("wall_s", 9.0, "s", Better::Lower, Kind::Timing));
    failed.status = Status::Failed;
    let mut base_cases = repeats(&[1.0], 21.0);
    base_cases.push(case("tree-copy", "xfs", &[], 1, |f| f.set("wall_s", 1.0, "s", Better::Lower, Kind::Timing)));
    base_cases.push(case("mmap-fill", "btrfs", &[], 1, |f| f.set("wall_s", 1.0, "s", Better::Lower, Kind::Timing)));
    let mut new_cases = repeats(&[1.0], 21.0);
    new_cases.push(failed);
    new_cases.push(case("exec", "dir", &[], 1, |f| f.set("wall_s", 1.0, "s", Better::Lower, Kind::Timing)));
    let c = compare_runs(&[run("b", base_cases)], &[run("n", new_cases)]);
    assert_eq!(c.rows.len(), 2, "only the ext4 case matches");
    assert!(c.rows.iter().all(|r| r.fs == "ext4"));
    assert_eq!(c.only_base, ["mmap-fill on btrfs"]);
    assert_eq!(c.only_new, ["exec on dir"]);
    // The xfs case, ok in v1 and failed in v2, is a regression of its own.
    assert_eq!(c.newly_failed.len(), 1);
    assert_eq!((c.newly_failed[0].fs.as_str(), c.newly_failed[0].failed, c.newly_failed[0].repeats), ("xfs", 1, 1));
    assert_eq!(c.regressions(), 1);
    assert_eq!(c.cases_in_common, 2);
}

fn failed_case(fs: &str, repeat: u32, error: &str) -> Case {
    let mut failed = case("tree-copy", fs, &[], repeat, |_| {});
    failed.status = Status::Failed;
    failed.error = Some(error.into());
    failed
}

fn ok_case(fs: &str, repeat: u32) -> Case {
    case("tree-copy", fs, &[], repeat, |f| f.set("files", 3.0, "count", Better::Lower, Kind::Exact))
}

#[test]
fn a_repeat_that_newly_fails_is_a_regression_but_one_that_failed_before_is_not() {
    let base = [run("b", vec![ok_case("xfs", 1), ok_case("xfs", 2), ok_case("ext4", 1), failed_case("ext4", 2, "old")])];
    let new = [run("n", vec![ok_case("xfs", 1), failed_case("xfs", 2, "ENOSPC"), failed_case("xfs", 3, "again"), failed_case("ext4", 1, "x")])];
    let c = compare_runs(&base, &new);
    assert_eq!(c.newly_failed.len(), 1, "{:?}", c.newly_failed);
    let f = &c.newly_failed[0];
    assert_eq!((f.fs.as_str(), f.failed, f.repeats, f.error.as_deref()), ("xfs", 2, 3, Some("ENOSPC")));
    assert_eq!(f.describe("v2"), "tree-copy on xfs: failed in 2 of 3 repeats in v2: ENOSPC");
    // The xfs repeat that stayed ok is still compared by its figures.
    assert_eq!(c.rows.iter().filter(|r| r.fs == "xfs").count(), 1);
    // ext4 failed in the base too: not newly failed, and listed as before.
    assert_eq!(c.only_base, ["tree-copy on ext4 (failed in v2)"]);
    assert_eq!(c.regressions(), 1);
}

#[test]
fn cases_in_common_count_failed_ones_and_incomplete_runs_are_named() {
    let base = [run("b", vec![ok_case("xfs", 1)])];
    let mut killed = run("k", vec![failed_case("xfs", 1, "x")]);
    killed.complete = false;
    let c = compare_runs(&base, &[killed.clone()]);
    assert_eq!((c.cases_in_common, c.new_incomplete.clone(), c.base_incomplete.len()), (1, vec!["k".to_string()], 0));
    let c = compare_runs(&base, &[run("n", vec![ok_case("ext4", 1)])]);
    assert_eq!(c.cases_in_common, 0);
    assert_eq!(summarise_cases(&[killed]), "1 case: tree-copy on xfs");
    assert_eq!(summarise_cases(&[]), "no case at all");
}

#[test]
fn figures_measured_on_one_side_only_are_listed_with_why() {
    let base = case("tree-copy", "ext4", &[], 1, |f| {
        f.set("journal_commits", 21.0, "count", Better::Lower, Kind::Exact);
        f.set_missing("extents", "count", Better::Lower, Kind::Exact, "no FIEMAP");
        f.set_missing("trace_ios", "count", Better::Lower, Kind::Exact, "needs root");
    });
    let new = case("tree-copy", "ext4", &[], 1, |f| {
        f.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "needs root");
        f.set("extents", 5.0, "count", Better::Lower, Kind::Exact);
        f.set_missing("trace_ios", "count", Better::Lower, Kind::Exact, "needs root");
        f.set("files", 1.0, "count", Better::Lower, Kind::Exact);
    });
    let c = compare_runs(&[run("b", vec![base])], &[run("n", vec![new])]);
    assert!(c.rows.is_empty());
    assert_eq!(c.only_base, ["tree-copy journal_commits on ext4 (no value in v2: needs root)"]);
    assert_eq!(
        c.only_new,
        ["tree-copy extents on ext4 (no value in v1: no FIEMAP)", "tree-copy files on ext4 (no value in v1)"]
    );
}

#[test]
fn rows_sort_by_effect() {
    let figures = |f: &mut Figures, scale: f64| {
        f.set("a_same", 5.0, "count", Better::Lower, Kind::Exact);
        f.set("b_small_gain", 100.0 * scale.min(1.0), "count", Better::Lower, Kind::Exact);
        f.set("c_small_loss", 100.0 * scale.max(1.0), "count", Better::Lower, Kind::Exact);
        f.set("d_big_loss", 100.0 * scale.max(1.0).powi(3), "count", Better::Lower, Kind::Exact);
        f.set("e_big_gain", 100.0 * scale.min(1.0).powi(3), "count", Better::Lower, Kind::Exact);
        f.set("f_nudge", 100.0 + scale.max(1.0), "count", Better::Lower, Kind::Exact);
    };
    let base = case("s", "ext4", &[], 1, |f| figures(f, 1.0));
    let new_up = case("s", "ext4", &[], 1, |f| figures(f, 2.0));
    let new_down = case("s", "ext4", &[], 1, |f| figures(f, 0.5));
    // Losses come from a scale of 2, gains from one of 0.5: pool both
    // kinds into one comparison by giving each its own case.
    let mut base_cases = vec![base.clone()];
    let mut other = base;
    other.fs = "xfs".into();
    base_cases.push(other);
    let mut down = new_down;
    down.fs = "xfs".into();
    let c = compare_runs(&[run("b", base_cases)], &[run("n", vec![new_up, down])]);
    let order: Vec<String> = c.rows.iter().map(|r| format!("{} {}", r.fs, r.figure)).collect();
    assert_eq!(order[..5], ["ext4 d_big_loss", "ext4 c_small_loss", "xfs e_big_gain", "xfs b_small_gain", "ext4 f_nudge"]);
    assert!(c.rows[5..].iter().all(|r| r.outcome == Outcome::Unchanged));
}

#[test]
fn the_same_runs_compare_the_same() {
    let base = [run("b", repeats(&[1.0, 1.3, 0.9, 1.05, 0.95], 21.0))];
    let new = [run("n", repeats(&[1.2, 1.1, 1.4, 1.0, 1.25], 21.0))];
    assert_eq!(compare_runs(&base, &new), compare_runs(&base, &new));
}


#[test]
fn an_emulated_side_s_timings_are_not_judged_but_its_exact_figures_are() {
    // The new side ran in a TCG guest: its wall time is 5× the host's and
    // its journal commits fell from 21 to 2. The commits are judged (an
    // improvement); the wall time is shown, not judged, and fails nothing.
    let base = [run("b", repeats(&[1.0, 1.1, 0.9, 1.05, 0.95], 21.0))];
    let mut emulated = repeats(&[5.0, 5.5, 4.5, 5.2, 4.8], 2.0);
    for case in &mut emulated {
        case.guest = Some(crate::record::guest::tests::guest(true));
    }
    let c = compare_runs(&base, &[run("n", emulated.clone())]);
    let by_name = |name: &str| c.rows.iter().find(|r| r.figure == name).unwrap();
    let (wall, commits) = (by_name("wall_s"), by_name("journal_commits"));
    assert_eq!((wall.outcome, wall.emulated, wall.p_value, wall.ci), (Outcome::Emulated, Some("new"), None, None));
    assert_eq!(wall.note, "timings emulated (TCG): not judged");
    assert_eq!((wall.base_median, wall.new_median), (1.0, 5.0));
    assert_eq!((commits.outcome, commits.emulated), (Outcome::Improvement, Some("new")));
    assert_eq!((c.regressions(), c.improvements(), c.count(Outcome::Emulated)), (0, 1, 1));
    assert!(c.sample_sizes.is_empty(), "an emulated timing is no test: {:?}", c.sample_sizes);
    assert_eq!((c.base_emulated.emulated, c.new_emulated.emulated, c.new_emulated.places.clone()), (0, 5, vec!["ext4".to_string()]));
    // Either side emulated: the base's emulation is enough.
    let swapped = compare_runs(&[run("n", emulated.clone())], &base);
    let wall = swapped.rows.iter().find(|r| r.figure == "wall_s").unwrap();
    assert_eq!((wall.outcome, wall.emulated, swapped.regressions()), (Outcome::Emulated, Some("base"), 1));
    // A KVM guest's timings are the kernel's: judged as usual.
    for case in &mut emulated {
        case.guest = Some(crate::record::guest::tests::guest(false));
    }
    let kvm = compare_runs(&base, &[run("n", emulated)]);
    let wall = kvm.rows.iter().find(|r| r.figure == "wall_s").unwrap();
    assert_eq!((wall.outcome, wall.emulated), (Outcome::Regression, None));
}

/// A gate on `figure`, with its own threshold or none.
pub(super) fn gate(figure: &str, threshold: Option<f64>) -> Gate {
    Gate { figure: figure.into(), threshold, from: "--gate".into() }
}

/// The comparison of `base` against `new` with `gates`.
pub(super) fn gated(base: &[RunRecord], new: &[RunRecord], gates: Vec<Gate>) -> Comparison {
    compare(Side { label: "v1", runs: base }, Side { label: "v2", runs: new }, &CompareOptions { gates, ..options() })
}

/// `walls` repeats of one case with a wall time each and 21 or 22 extents.
pub(super) fn walls_and_extents(walls: &[f64], extents: f64) -> Vec<Case> {
    let mut cases = repeats(walls, 21.0);
    for case in &mut cases {
        case.figures.set("extents", extents, "count", Better::Lower, Kind::Exact);
        case.figures.set("backing_flushes", extents * 2.0, "count", Better::Lower, Kind::Exact);
    }
    cases
}

#[test]
fn only_gated_figures_decide_and_a_gated_exact_figure_fails_on_any_change() {
    // One extent more (+4.8%, within 5%), and a decided twofold slowdown.
    let base = [run("b", walls_and_extents(&[1.0, 1.1, 0.9, 1.05, 0.95], 21.0))];
    let new = [run("n", walls_and_extents(&[2.0, 2.2, 1.8, 2.1, 1.9], 22.0))];
    let row = |c: &Comparison, name: &str| c.rows.iter().find(|r| r.figure == name).unwrap().clone();
    let all = compare_runs(&base, &new);
    assert_eq!((row(&all, "extents").outcome, all.decision), (Outcome::Changed, Decision::Regression));
    // --gate extents: the slowdown is shown, not gated; the extent fails it.
    let c = gated(&base, &new, vec![gate("extents", None)]);
    let (extents, wall) = (row(&c, "extents"), row(&c, "wall_s"));
    assert_eq!((extents.outcome, extents.gated, extents.threshold), (Outcome::Regression, true, 0.0));
    assert_eq!((wall.outcome, wall.gated, wall.threshold), (Outcome::Regression, false, 0.05));
    assert_eq!((c.decision, c.regressions()), (Decision::Regression, 2));
    // Its own threshold: within 5% is a change; nothing gated got worse.
    let c = gated(&base, &new, vec![gate("extents", Some(0.05))]);
    assert_eq!((row(&c, "extents").outcome, c.decision), (Outcome::Changed, Decision::Pass));
    assert_eq!(c.not_gated(Outcome::Regression), 1);
    // A timing gated without a threshold is judged at --threshold.
    let c = gated(&base, &new, vec![gate("wall_s", None)]);
    assert_eq!((row(&c, "wall_s").threshold, c.decision), (0.05, Decision::Regression));
    // A gated host-wide figure is judged; a gated figure no case has is named.
    let c = gated(&base, &new, vec![gate("backing_flushes", None), gate("seeks", None)]);
    assert_eq!((row(&c, "backing_flushes").outcome, c.decision), (Outcome::Regression, Decision::Regression));
    assert_eq!(c.gates_unmeasured, ["seeks"]);
    assert_eq!(row(&c, "extents").outcome, Outcome::Changed, "not gated: judged at --threshold");
}

#[test]
fn a_regression_wins_over_undecided_and_undecided_over_pass() {
    // Three repeats a side: a 2x slowdown that overlaps cannot be decided.
    let base = [run("b", walls_and_extents(&[1.0, 1.5, 0.9], 21.0))];
    let slow = [run("n", walls_and_extents(&[1.4, 2.2, 1.8], 21.0))];
    let c = compare_runs(&base, &slow);
    let wall = c.rows.iter().find(|r| r.figure == "wall_s").unwrap();
    assert_eq!((wall.outcome, wall.repeats_needed), (Outcome::Undecided, Some(6)));
    assert_eq!((c.decision, c.undecided, c.repeats_needed), (Decision::Undecided, 1, Some(6)));
    // With one extent more, gated: decided, so exit 1 whatever else.
    let more = [run("n", walls_and_extents(&[1.4, 2.2, 1.8], 22.0))];
    let c = gated(&base, &more, vec![gate("extents", None), gate("wall_s", None)]);
    assert_eq!((c.decision, c.undecided), (Decision::Regression, 1));
    // Not gated, the undecided timing decides nothing.
    let c = gated(&base, &slow, vec![gate("extents", None)]);
    assert_eq!((c.decision, c.undecided, c.not_gated(Outcome::Undecided)), (Decision::Pass, 0, 1));
    // Faster is never undecided: nothing to fail.
    assert_eq!(compare_runs(&slow, &base).decision, Decision::Pass);
}

#[test]
fn a_figure_declared_a_timing_on_either_side_is_judged_as_one() {
    // A run stored when journal commits were thought exact (21) against
    // one that knows them for a timing (2): one value a side tells
    // nothing of a timing, whatever the older run said.
    let commits = |n: f64, kind: Kind| case("replace-files", "ext4", &[], 1, |f| f.set("journal_commits", n, "count", Better::Lower, kind));
    for (base, new) in [(Kind::Exact, Kind::Timing), (Kind::Timing, Kind::Exact)] {
        let c = compare_runs(&[run("b", vec![commits(21.0, base)])], &[run("n", vec![commits(2.0, new)])]);
        let row = &c.rows[0];
        assert_eq!((row.kind, row.outcome), (Kind::Timing, Outcome::TooFewRepeats), "{base:?} → {new:?}");
        assert_eq!(c.improvements(), 0);
    }
    // Both sides exact: compared as values, as stored runs always were.
    let c = compare_runs(&[run("b", vec![commits(21.0, Kind::Exact)])], &[run("n", vec![commits(2.0, Kind::Exact)])]);
    assert_eq!((c.rows[0].kind, c.rows[0].outcome), (Kind::Exact, Outcome::Improvement));
    // One repeat of a side a timing (writeback placed its blocks): the row is.
    let extents = |n: f64, kind: Kind, repeat| case("s", "xfs", &[], repeat, |f| f.set("extents", n, "count", Better::Lower, kind));
    let base = vec![extents(200.0, Kind::Exact, 1), extents(200.0, Kind::Exact, 2)];
    let new = vec![extents(201.0, Kind::Timing, 1), extents(200.0, Kind::Exact, 2)];
    let c = compare_runs(&[run("b", base)], &[run("n", new)]);
    assert_eq!(c.rows[0].kind, Kind::Timing);
}

/// `n` repeats of an xfs case that wrote `window` bytes in its window and
/// `later` bytes after it, up to the unmount, with small jitter.
fn deferring(n: u32, window: f64, later: Option<f64>) -> Vec<Case> {
    (1..=n)
        .map(|r| {
            case("exec", "xfs", &[], r, |f| {
                let jitter = f64::from(r) * 4096.0;
                f.set("written_bytes", window + jitter, "bytes", Better::Lower, Kind::Timing);
                match later {
                    Some(later) => f.set("deferred_written_bytes", later + jitter, "bytes", Better::Lower, Kind::Timing),
                    None => f.set_missing("deferred_written_bytes", "bytes", Better::Lower, Kind::Timing, "not unmounted"),
                }
            })
        })
        .collect()
}

#[test]
fn work_moved_past_the_window_is_not_an_improvement() {
    // xfs with vm.laptop_mode 5 writes its logged metadata at syncfs; with
    // 0 it leaves it for the unmount: the window falls by the same bytes
    // the deferred part rises.
    let base = [run("b", deferring(5, 10.0e6, Some(22e3)))];
    let new = [run("n", deferring(5, 8.85e6, Some(1.17e6)))];
    let c = compare_runs(&base, &new);
    let row = |name: &str| c.rows.iter().find(|r| r.figure == name).unwrap_or_else(|| panic!("no {name}: {:?}", c.rows));
    let window = row("written_bytes");
    assert_eq!(window.outcome, Outcome::Deferred, "{window:?}");
    assert!(window.note.contains("better in the window only: with what it left for later (deferred_written_bytes)"), "{}", window.note);
    let total = row("total_written_bytes");
    assert_eq!((total.kind, total.unit.as_str()), (Kind::Timing, "bytes"));
    assert_eq!(total.base.len(), 5);
    assert!((total.base_median - 10.022e6 - 3.0 * 4096.0 * 2.0).abs() < 1.0, "{total:?}");
    assert!(!matches!(total.outcome, Outcome::Improvement | Outcome::LikelyImprovement), "{total:?}");
    assert_eq!(c.improvements(), 0);
    assert_eq!(row("deferred_written_bytes").outcome, Outcome::Regression);
    assert!(render::verdict(&c).contains("1 better only in the window"), "{}", render::verdict(&c));

    // Saved, not moved: the total falls too, and the window's gain stands.
    let new = [run("n", deferring(5, 5.0e6, Some(30e3)))];
    let c = compare_runs(&base, &new);
    let window = c.rows.iter().find(|r| r.figure == "written_bytes").unwrap();
    assert_eq!(window.outcome, Outcome::Improvement, "{window:?}");

    // A side that did not measure what it deferred has no total: the
    // window is judged as before, and the total is listed as one-sided.
    let new = [run("n", deferring(5, 8.85e6, None))];
    let c = compare_runs(&base, &new);
    assert!(c.rows.iter().all(|r| r.figure != "total_written_bytes"));
    assert_eq!(c.rows.iter().find(|r| r.figure == "written_bytes").unwrap().outcome, Outcome::Improvement);
    assert!(c.only_base.iter().any(|s| s.contains("total_written_bytes") && s.contains("not unmounted")), "{:?}", c.only_base);
}
