//! Renderer tests on a small comparison with one of each outcome.

use super::*;
use crate::compare::tests::{case, compare_runs, run};
use crate::compare::{CompareOptions, Side};
use crate::record::{Better, Figures, Kind};

/// Base and new runs of tree-copy on ext2-1k (size=64M): a rate that
/// falls 8.8-fold, commits that fall from 21 to 2, a wall time that does
/// not move, a nudge of 21 → 22 extents, a sync time on 3 repeats whose
/// ranges overlap but whose median doubles (undecided), a user time on 3
/// repeats that moves 2.5% (too few repeats), write I/Os on 3 repeats far
/// apart (42 → 761), and a host-wide flush count that falls.
fn comparison() -> Comparison {
    let side = |rates: [f64; 5], commits: f64, extents: f64, sync: [f64; 3], ios: [f64; 3], user: [f64; 3]| {
        let cases: Vec<crate::record::Case> = (0..5)
            .map(|i| {
                case("tree-copy", "ext2-1k", &[("size", "64M")], i as u32 + 1, |f: &mut Figures| {
                    f.set("read_mbps", rates[i], "MB/s", Better::Higher, Kind::Timing);
                    f.set("journal_commits", commits, "count", Better::Lower, Kind::Exact);
                    f.set("extents", extents, "count", Better::Lower, Kind::Exact);
                    f.set("wall_s", [1.0, 1.1, 0.9, 1.05, 0.95][i], "s", Better::Lower, Kind::Timing);
                    f.set("backing_flushes", commits * 2.0, "count", Better::Lower, Kind::Exact);
                    if i < 3 {
                        f.set("sync_s", sync[i], "s", Better::Lower, Kind::Timing);
                        f.set("write_ios", ios[i], "count", Better::Lower, Kind::Timing);
                        f.set("user_s", user[i], "s", Better::Lower, Kind::Timing);
                    }
                })
            })
            .collect();
        cases
    };
    let base = side([400.0, 405.0, 410.0, 415.0, 420.0], 21.0, 21.0, [0.01, 0.011, 0.012], [40.0, 42.0, 44.0], [0.02, 0.021, 0.019]);
    let mut new = side([45.0, 46.0, 46.6, 47.0, 48.0], 2.0, 22.0, [0.011, 0.021, 0.022], [750.0, 761.0, 770.0], [0.0205, 0.019, 0.021]);
    new.push(case("exec", "dir", &[("cmd", "a|b <x>")], 1, |f: &mut Figures| {
        f.set("wall_s", 1.0, "s", Better::Lower, Kind::Timing);
    }));
    compare_runs(&[run("base-run", base)], &[run("new-run", new)])
}

/// A case of scenario `s` on ext4 with one exact count, lower better.
fn counted(name: &str, value: f64) -> crate::record::Case {
    case("s", "ext4", &[], 1, |f: &mut Figures| f.set(name, value, "count", Better::Lower, Kind::Exact))
}

#[test]
fn text_groups_rows_by_case_and_ends_with_the_verdict() {
    let out = text(&comparison(), false);
    let rows = "Regressions:\n  tree-copy on ext2-1k (size=64M):\n    read_mbps  8.8x slower  (median 410 → 46.6 MB/s, 95% CI ";
    assert!(out.contains(rows), "{out}");
    let line = out.lines().find(|l| l.contains("read_mbps")).unwrap();
    // Two figures were tested (read_mbps, wall_s): q = 0.008 · 2 / 1.
    assert!(line.ends_with(", p=0.008, q=0.016)"), "{line}");
    // Counts are fewer or more, never slower.
    assert!(out.contains("Improvements:\n  tree-copy on ext2-1k (size=64M):\n    journal_commits  10.5x fewer  (21 → 2)\n"), "{out}");
    let changed = "Changed within 5%:\n  tree-copy on ext2-1k (size=64M):\n    extents  changed +4.76%  (21 → 22)\n";
    assert!(out.contains(changed), "{out}");
    let likely = "Likely regressions (too few repeats to decide, ranges apart):\n  tree-copy on ext2-1k (size=64M):\n    \
                  write_ios  18.1x more  (median 42 → 761, 95% CI ";
    assert!(out.contains(likely), "{out}");
    let line = out.lines().find(|l| l.contains("write_ios")).unwrap();
    assert!(line.ends_with(", 95% CI 17.0x–19.2x)"), "no p on a row that cannot be tested: {line}");
    assert!(out.contains("\n        — ranges apart: 40–44 vs 750–770; --repeat 4 would decide\n"), "{out}");
    // Overlapping, but the median 1.91x slower: undecided, with what would decide it.
    let undecided = "Undecided (too few repeats to decide, past the threshold for the worse):\n  tree-copy on ext2-1k (size=64M):\n    \
                     sync_s  1.91x slower  (median 11 → 21 ms, 95% CI 0.92x–2.2x)  — --repeat 7 would decide\n";
    assert!(out.contains(undecided), "{out}");
    assert!(!out.contains("wall_s") && !out.contains("backing_flushes"), "unchanged and host-wide rows are only counted:\n{out}");
    assert!(out.contains("Not shown (--all shows them): 1 unchanged; 1 with too few repeats to judge; 1 host-wide (backing_*"), "{out}");
    assert!(out.contains("Only in v2 (1):\n  exec on dir (cmd=a|b <x>)\n"), "{out}");
    assert!(out.starts_with("base v1 (1 run: base-run)\nnew  v2 (1 run: new-run)\nthreshold 5%"), "the same setups: {out}");
    // The smallest p is said once, in the header, not on the rows.
    let sizes = "Smallest p the repeats allow: 0.1 with 3 vs 3 values (3 figures), 0.008 with 5 vs 5 (2); below 0.05 needs --repeat 4.\n";
    assert!(out.contains(sizes), "{out}");
    // What is undecided, and what would decide all of it, is said once.
    let flat = out.replace('\n', " ");
    let footer = "Undecided as well (the regression makes it exit 1): 2 figures moved past their threshold for the worse (1 likely \
                  regression, 1 undecided), and the repeats cannot decide them; --repeat 4 on both sides would decide 1 of them, \
                  --repeat 7 all, if the separations seen hold (each row says what it needs).";
    assert_eq!(flat.matches(footer).count(), 1, "{out}");
    assert!(flat.contains("Likely: too few repeats for a test, but every value of one side is more than 25% beyond"), "{out}");
    let verdict = "1 regression, 1 improvement, 1 likely regression, 1 undecided, 1 changed within 5%, 1 unchanged, 1 too few \
                   repeats, 1 host-wide";
    assert!(flat.trim_end().ends_with(&format!("  {verdict}")), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 120), "{out}");
}

#[test]
fn text_with_all_lists_every_row() {
    let out = text(&comparison(), true);
    assert!(out.contains("Unchanged:\n  tree-copy on ext2-1k (size=64M):\n    wall_s  unchanged  (median 1 → 1 s, 95% CI "), "{out}");
    assert!(out.contains("Too few repeats to judge:\n  tree-copy on ext2-1k (size=64M):\n    user_s  too few repeats  (median 20 → 20.5 ms"), "{out}");
    let host = "Host-wide, not judged (the whole disk under the target, or the machine; --host-figures judges them):\n  \
                tree-copy on ext2-1k (size=64M):\n    backing_flushes (host-wide)  10.5x fewer  (42 → 4)\n";
    assert!(out.contains(host), "{out}");
    assert!(!out.contains("Not shown"));
}

#[test]
fn busy_cases_are_named_once_and_host_figures_are_not_judged() {
    let busy = |repeat: u32, note: Option<&str>, others: f64| {
        let mut c = counted("host_others_cores", others);
        c.repeat = repeat;
        c.busy = note.map(str::to_string);
        c
    };
    let base = [run("b", vec![busy(1, None, 0.1), busy(2, None, 0.1)])];
    let new = [run("n", vec![busy(1, Some("others used 1.6 cores on average"), 1.6), busy(2, None, 0.1)])];
    let c = compare_runs(&base, &new);
    assert_eq!((c.rows[0].outcome, c.rows[0].host_wide, c.regressions()), (Outcome::HostWide, true, 0));
    assert_eq!((c.base_busy.busy.len(), c.new_busy.busy.clone()), (0, vec!["ext4 r1".to_string()]));
    let out = text(&c, false);
    let note = "Busy machine (other processes used ≥ 0.5 cores or moved ≥ 10 MiB/s on the disk under the target): 1 of 2 \
                cases of v2 (ext4 r1) — timings there are less reliable.";
    assert_eq!(out.replace('\n', " ").matches(note).count(), 1, "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= words::WIDTH), "{out}");
    assert!(markdown(&c, false).contains("1 of 2 cases of v2 (ext4 r1)"));
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert_eq!(v["compare"]["new_busy"]["busy"][0], "ext4 r1");
    assert_eq!(v["compare"]["base_busy"]["cases"], 2);
    // Quiet on both sides: nothing said.
    let quiet = compare_runs(&base, &base);
    assert!(!text(&quiet, false).contains("Busy machine"));
}

#[test]
fn host_figures_are_judged_when_asked_and_marked_still() {
    let base = [run("b", vec![counted("backing_flushes", 42.0)])];
    let new = [run("n", vec![counted("backing_flushes", 761.0)])];
    let c = compare_runs(&base, &new);
    assert_eq!((c.rows[0].outcome, c.rows[0].host_wide, c.regressions()), (Outcome::HostWide, true, 0));
    let options = CompareOptions { host_figures: true, ..crate::compare::tests::options() };
    let c = crate::compare::compare(Side { label: "v1", runs: &base }, Side { label: "v2", runs: &new }, &options);
    assert_eq!((c.rows[0].outcome, c.regressions()), (Outcome::Regression, 1));
    assert!(text(&c, false).contains("    backing_flushes (host-wide)  18.1x more  (42 → 761)\n"), "{}", text(&c, false));
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert_eq!((v["compare"]["rows"][0]["host_wide"].as_bool(), v["compare"]["host_figures"].as_bool()), (Some(true), Some(true)));
}

#[test]
fn what_differs_opens_every_output() {
    let mut new = run("n", vec![counted("files", 1.0)]);
    new.cases[0].target.mount_opts = Some("sync".into());
    let c = compare_runs(&[run("b", vec![counted("files", 1.0)])], &[new]);
    assert!(text(&c, false).starts_with("base v1 (1 run: b)\nnew  v2 (1 run: n)\nWhat differs (v1 → v2):\n  ext4 mount: defaults → sync\n"));
    assert!(markdown(&c, false).contains("What differs (v1 → v2):\n\n- ext4 mount: defaults → sync\n"));
    // Sides whose names would not fit a line are named by their roles.
    let mut long = c.clone();
    (long.base_label, long.new_label) = (format!("/var/tmp/{}/defaults.json", "x".repeat(50)), format!("/var/tmp/{}/sync.json", "x".repeat(50)));
    assert!(text(&long, false).contains("\nWhat differs (base → new):\n  ext4 mount: defaults → sync\n"), "{}", text(&long, false));
    assert!(text(&long, false).lines().all(|l| l.chars().count() <= 120), "{}", text(&long, false));
    assert!(html_summary(&c).starts_with("<p class=\"differs\"><b>What differs</b> (v1 → v2):</p>\n<ul class=\"differs\">\n<li><b>ext4 mount:</b> defaults → sync</li>"));
    assert!(!html_table(&c).contains("differs"), "the table is the rows alone: what differs is said once, at the top");
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert_eq!(v["compare"]["differs"], serde_json::json!([{"what": "ext4 mount", "base": "defaults", "new": "sync"}]));
}

#[test]
fn improvements_read_as_speed_ups() {
    let c = comparison();
    // The same runs the other way round: the rate is 8.8x faster.
    let mut flipped = c.clone();
    for row in &mut flipped.rows {
        if row.figure == "read_mbps" {
            std::mem::swap(&mut row.base, &mut row.new);
            std::mem::swap(&mut row.base_median, &mut row.new_median);
            row.slowdown = row.slowdown.map(|s| 1.0 / s);
            row.ci = row.ci.map(|[lo, hi]| [1.0 / hi, 1.0 / lo]);
            row.outcome = Outcome::Improvement;
        }
    }
    let out = text(&flipped, false);
    let line = out.lines().find(|l| l.contains("read_mbps")).unwrap();
    assert!(line.contains(" 8.8x faster  (median 46.6 → 410 MB/s, 95% CI "), "{line}");
    let original = c.rows.iter().find(|r| r.figure == "read_mbps").unwrap().ci.unwrap();
    let shown = format!("{}–{}", format::factor(original[0]), format::factor(original[1]));
    assert!(line.contains(&shown), "the speed-up interval is the slowdown one: {line} {shown}");
}

#[test]
fn markdown_is_one_table_with_escaped_cells() {
    let out = markdown(&comparison(), true);
    assert!(out.contains("| Outcome | Figure | Change | Base → new | 95% CI | p | Note |\n|---|---|---|---|---|---|---|\n"));
    let row = "| improvement | tree-copy journal_commits on ext2-1k (size=64M) | 10.5x fewer | 21 → 2 |  |  |  |\n";
    assert!(out.contains(row), "{out}");
    let row = "| likely regression | tree-copy write_ios on ext2-1k (size=64M) | 18.1x more | median 42 → 761 |";
    assert!(out.contains(row), "{out}");
    assert!(out.contains("| host-wide, not judged | tree-copy backing_flushes on ext2-1k (size=64M) (host-wide) |"), "{out}");
    assert!(out.contains("- exec on dir (cmd=a\\|b &lt;x>)"), "{out}");
    assert_eq!(out.matches("| regression |").count(), 1);
    let row = "| undecided | tree-copy sync_s on ext2-1k (size=64M) | 1.91x slower | median 11 → 21 ms | 0.92x–2.2x |  | \
               --repeat 7 would decide |\n";
    assert!(out.contains(row), "{out}");
    assert!(out.contains("Smallest p the repeats allow: 0.1 with 3 vs 3 values"), "{out}");
    assert!(out.contains("\nUndecided as well (the regression makes it exit 1): 2 figures moved past"), "{out}");
    assert!(out.trim_end().ends_with("1 host-wide**"), "{out}");
}

#[test]
fn json_carries_the_schema_and_lowercase_outcomes() {
    let bytes = json(&comparison());
    assert_eq!(bytes.last(), Some(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["schema"], crate::SCHEMA);
    let rows = v["compare"]["rows"].as_array().unwrap();
    assert_eq!(rows[0]["outcome"], "regression");
    assert_eq!(rows[0]["better"], "higher");
    assert_eq!(rows[0]["kind"], "timing");
    assert!(rows.iter().any(|r| r["outcome"] == "too_few_repeats"));
    // Every row says its threshold, whether it gates and what would decide it.
    let sync = rows.iter().find(|r| r["figure"] == "sync_s").unwrap();
    assert_eq!((sync["outcome"].as_str(), sync["gated"].as_bool()), (Some("undecided"), Some(true)));
    assert_eq!((sync["repeats_needed"].as_u64(), sync["threshold"].as_f64()), (Some(7), Some(0.05)));
    assert!(rows[0]["repeats_needed"].is_null(), "decided: nothing needed");
    let c = &v["compare"];
    assert_eq!((c["decision"].as_str(), c["undecided"].as_u64(), c["repeats_needed"].as_u64()), (Some("regression"), Some(2), Some(7)));
    assert_eq!((c["gates"].clone(), c["gates_unmeasured"].clone()), (serde_json::json!([]), serde_json::json!([])));
    assert_eq!(v["compare"]["only_new"][0], "exec on dir (cmd=a|b <x>)");
    assert_eq!(v["compare"]["base_runs"][0], "base-run");
}

#[test]
fn infinite_factors_are_json_null_and_words_in_text() {
    let base = [run("b", vec![counted("errors", 0.0)])];
    let new = [run("n", vec![counted("errors", 3.0)])];
    let c = compare_runs(&base, &new);
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert!(v["compare"]["rows"][0]["slowdown"].is_null());
    let out = text(&c, false);
    assert!(out.contains("    errors  more (from 0)  (0 → 3)\n        — no finite factor: the base median is 0; "), "{out}");
    assert!(!out.contains("NaN") && !out.contains("inf"));
}

#[test]
fn html_is_one_escaped_table_classed_by_outcome() {
    let out = html_table(&comparison());
    assert!(out.starts_with("<table class=\"compare\">\n<caption>v1 → v2: 1 regression, 1 improvement"), "{out}");
    assert!(!out.contains("compare-note"), "the notes are the summary's");
    assert!(out.ends_with("</table>\n"));
    for class in ["regression", "improvement", "likely_regression", "undecided", "changed"] {
        assert_eq!(out.matches(&format!("<tr class=\"{class}\">")).count(), 1, "{class}");
    }
    for class in ["unchanged", "too_few_repeats", "host_wide"] {
        assert!(!out.contains(&format!("<tr class=\"{class}\">")), "{class}: counted, not listed");
    }
    assert!(out.contains("<tr class=\"not-shown\"><td>not shown</td><td colspan=\"6\">1 unchanged; 1 with too few repeats to judge; 1 host-wide"), "{out}");
    assert!(out.contains("<td colspan=\"6\">exec on dir (cmd=a|b &lt;x&gt;)</td>"), "{out}");
    assert!(!out.contains("<x>") && !out.contains("<script") && !out.contains("href") && !out.contains("src="));
}

#[test]
fn the_html_summary_says_the_setup_the_notes_and_the_verdict_once() {
    let c = comparison();
    let out = html_summary(&c);
    assert!(out.starts_with("<p class=\"differs\">Same setup on both sides (v1 → v2): "), "{out}");
    assert_eq!(out.matches("<p class=\"compare-note\">Smallest p the repeats allow: ").count(), 1, "{out}");
    assert!(out.ends_with(&format!("<p class=\"compare-verdict\">v1 → v2: {}</p>\n", verdict(&c))), "{out}");
    assert!(!out.contains("<table") && !out.contains("<tr"), "the rows are the table's");
}

#[test]
fn nothing_eventful_says_so() {
    let base = [run("b", vec![counted("files", 1.0)])];
    let c = compare_runs(&base, &base);
    assert!(markdown(&c, false).contains("No regressions, improvements or changes.\n\nNot shown (--all shows them): 1 unchanged.\n"));
    assert_eq!(text(&c, false).lines().last(), Some("0 regressions, 0 improvements, 1 unchanged"));
}


#[test]
fn newly_failed_cases_and_incomplete_runs_are_said_everywhere() {
    let ok = counted("files", 1.0);
    let mut failed = counted("files", 1.0);
    failed.status = crate::record::Status::Failed;
    failed.error = Some("mkfs | failed <here>".into());
    let mut killed = run("k", vec![failed]);
    killed.complete = false;
    let c = compare_runs(&[run("b", vec![ok])], &[killed]);
    let out = text(&c, false);
    assert!(out.contains("INCOMPLETE: run k of v2 is incomplete (killed or interrupted)"), "{out}");
    assert!(out.contains("Newly failed (ok in v1, failed in v2), each a regression:\n  s on ext4: failed in its only repeat in v2: mkfs | failed <here>\n"), "{out}");
    assert_eq!(out.lines().last(), Some("1 regression (1 newly failed case), 0 improvements, 0 unchanged"));
    let md = markdown(&c, false);
    assert!(md.contains("**Incomplete:** run k of v2"), "{md}");
    assert!(md.contains("- s on ext4: failed in its only repeat in v2: mkfs \\| failed &lt;here>\n"), "{md}");
    assert!(md.contains("No figure regressed, improved or changed."), "{md}");
    let html = html_table(&c);
    assert!(html.contains("<tr class=\"regression failed\"><td>newly failed</td>"), "{html}");
    assert!(html.contains("<tr class=\"incomplete\"><td>incomplete</td>"), "{html}");
    assert!(html.contains("&lt;here&gt;") && !html.contains("<here>"));
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert_eq!(v["compare"]["newly_failed"][0]["error"], "mkfs | failed <here>");
    assert_eq!(v["compare"]["new_incomplete"][0], "k");
}

#[test]
fn emulated_timings_are_said_once_counted_and_carry_their_reason_in_json() {
    let walls = |walls: &[f64], commits: f64, emulated: bool| {
        let mut cases = crate::compare::tests::repeats(walls, commits);
        for case in cases.iter_mut().filter(|_| emulated) {
            case.guest = Some(crate::record::guest::tests::guest(true));
        }
        cases
    };
    let base = [run("b", walls(&[1.0, 1.1, 0.9], 21.0, false))];
    let new = [run("n", walls(&[5.0, 5.5, 4.5], 2.0, true))];
    let c = compare_runs(&base, &new);
    let out = text(&c, false);
    let note = "Timings emulated (TCG): not judged — 3 of 3 cases of v2 (on ext4) ran in a guest under software emulation (/dev/kvm \
                is PVM, which cannot boot a stock kernel): their timings measure the emulator";
    assert_eq!(out.replace('\n', " ").matches(note).count(), 1, "{out}");
    assert!(out.contains("1 timings emulated (TCG): not judged"), "counted among what is not shown: {out}");
    assert!(out.trim_end().ends_with("0 regressions, 1 improvement, 0 unchanged, 1 emulated, not judged"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= words::WIDTH), "{out}");
    let all = text(&c, true);
    assert!(all.contains("Emulated (TCG), not judged"), "{all}");
    assert!(all.contains("    wall_s  5.0x slower  (median 1 → 5 s)\n"), "one line, no p, no repeated reason: {all}");
    assert_eq!(markdown(&c, false).matches("Timings emulated (TCG): not judged").count(), 1);
    let summary = html_summary(&c);
    assert_eq!(summary.matches("Timings emulated (TCG): not judged").count(), 1, "{summary}");
    assert!(!html_table(&c).contains("<tr class=\"emulated\">"), "emulated rows stay out of the page's table");
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    let wall = v["compare"]["rows"].as_array().unwrap().iter().find(|r| r["figure"] == "wall_s").unwrap().clone();
    assert_eq!((wall["outcome"].as_str(), wall["emulated"].as_str()), (Some("emulated"), Some("new")), "{wall}");
    assert_eq!(wall["note"], "timings emulated (TCG): not judged");
    assert_eq!((v["compare"]["new_emulated"]["emulated"].as_u64(), v["compare"]["new_emulated"]["cases"].as_u64()), (Some(3), Some(3)));
    let commits = v["compare"]["rows"].as_array().unwrap().iter().find(|r| r["figure"] == "journal_commits").unwrap().clone();
    assert_eq!((commits["outcome"].as_str(), commits["emulated"].as_str()), (Some("improvement"), Some("new")));
    // Neither side emulated: nothing said, `emulated` null.
    let host = compare_runs(&base, &base);
    assert!(!text(&host, true).contains("mulated"), "{}", text(&host, true));
    let v: serde_json::Value = serde_json::from_slice(&json(&host)).unwrap();
    assert!(v["compare"]["rows"][0]["emulated"].is_null());
}

#[test]
fn the_gate_is_said_once_and_what_it_leaves_out_is_marked() {
    use crate::compare::tests::{gate, gated, walls_and_extents};
    let base = [run("b", walls_and_extents(&[1.0, 1.5, 0.9], 21.0))];
    let new = [run("n", walls_and_extents(&[1.4, 2.2, 1.8], 22.0))];
    let c = gated(&base, &new, vec![gate("extents", None), gate("seeks", Some(0.1))]);
    let out = text(&c, false);
    let flat = out.replace('\n', " ");
    assert!(out.contains("\nGate: extents (any change), seeks (10%); the other figures are shown, not gated. No case"), "{out}");
    assert!(flat.contains("No case measured seeks on both sides."), "{out}");
    assert!(out.contains("Regressions:\n  tree-copy on ext4 (size=64M):\n    extents  1.05x more  (21 → 22)"), "{out}");
    assert!(out.contains("    wall_s (not gated)  1.80x slower  (median 1 → 1.8 s, "), "{out}");
    assert!(flat.contains("Not gated: 1 undecided in figures outside the gate — shown; they fail nothing."), "{out}");
    assert!(!flat.contains("Undecided (exit 5"), "nothing gated is undecided: {out}");
    let md = markdown(&c, false);
    assert!(md.contains("| undecided | tree-copy wall_s on ext4 (size=64M) (not gated) |"), "{md}");
    assert!(md.contains("\nGate: extents (any change), seeks (10%);"), "{md}");
    assert_eq!(html_summary(&c).matches("<p class=\"compare-note\">Gate: extents (any change)").count(), 1);
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    let gates = serde_json::json!([{"figure": "extents", "threshold": null}, {"figure": "seeks", "threshold": 0.1}]);
    assert_eq!((v["compare"]["gates"].clone(), v["compare"]["decision"].as_str()), (gates, Some("regression")));
    // Gated, the undecided timing leaves an otherwise passing comparison undecided.
    let same = [run("n", walls_and_extents(&[1.4, 2.2, 1.8], 21.0))];
    let c = gated(&base, &same, vec![gate("wall_s", None)]);
    let flat = text(&c, false).replace('\n', " ");
    let footer = "Undecided (exit 5; --allow-undecided: 0): 1 gated figure moved past its threshold for the worse (1 undecided), \
                  and the repeats cannot decide it; --repeat 6 on both sides would, if the separation seen holds.";
    assert!(flat.contains(footer), "{flat}");
}
