//! `replace-files` (seed 002): dpkg replacing a package's files, and the
//! fsync storm that makes it slow on ext4.
//!
//! The setup writes the existing files and fsyncs each (unmeasured, as in
//! the seed). The measured part writes every file of the list (16 writes
//! of 1 KiB) and makes it durable and puts it in place by the chosen
//! strategy (`work.rs`). The seed's own two are `fsync-each` (dpkg then:
//! fsync and rename, file by file) and `writeback-batch` (its fix: start
//! writeback of each file as it is written, wait for all, fdatasync all,
//! rename all); the others are there to be judged on what survives a
//! crash (`--crash`) as well as on cost: their contents say which
//! generation they are (`contents.rs`), and their checker tells old, new,
//! empty, torn and missing apart.

mod contents;
mod dpkg;
mod work;

use super::params::{ParamKind, ParamSpec, Params};
use super::seeds::{self, Judged, Preset, Shown, Test, Verdict};
use super::{Case, Scenario, Seeded, Work};
use crate::units::short_number;
use crate::record::{Better, FigureSpec, Kind};
use work::{Replace, STRATEGIES};

/// The seed's package: which names exist before the upgrade, and the
/// order dpkg writes them in (existing and new names interleaved).
const SEED_LIST: [&str; 20] = [
    "exist_1", "new_1", "exist_2", "exist_3", "new_2", "new_3", "exist_4", "exist_5", "exist_6", "new_4", "new_5",
    "new_6", "exist_7", "exist_8", "exist_9", "exist_10", "new_7", "new_8", "new_9", "new_10",
];


const PARAMS: [ParamSpec; 2] = [
    ParamSpec {
        name: "files",
        kind: ParamKind::Count { max: 1_000_000 },
        small: "20",
        full: "20",
        seed: "20 (10 existing, 10 new)",
        about: "files in the package; beyond 20 the seed's list repeats with higher numbers",
    },
    ParamSpec {
        name: "strategy",
        kind: ParamKind::Choice(&STRATEGIES),
        small: "fsync-each",
        full: "fsync-each",
        seed: "fsync-each (dpkg then), writeback-batch (the fix)",
        about: "how each file is made durable and put in place: fsync-each, writeback-batch, fdatasync-each, syncfs, \
                none (rename, no sync), rename-no-fsync (write and rename each), in-place (O_TRUNC, no sync), in-place-fsync",
    },
];

/// The scenario.
#[derive(Debug)]
pub struct ReplaceFiles;

/// The figures it measures beyond the probes', declared once.
const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("files_replaced", "count", Better::Higher, Kind::Exact)
        .about("files renamed into place (existing and new)"),
];

impl Scenario for ReplaceFiles {
    fn name(&self) -> &'static str {
        "replace-files"
    }
    fn about(&self) -> &'static str {
        "replace a package's files the dpkg way; fsync storms vs batched writeback"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &PARAMS
    }
    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }
    fn seeded(&self) -> Option<&dyn Seeded> {
        Some(self)
    }
    fn headline(&self) -> &'static [&'static str] {
        &["wall_s", "user_s", "sys_s", "journal_commits", "flushes"]
    }
    fn work(&self, params: &Params) -> Box<dyn Work> {
        let names = names(params.number("files") as usize);
        Box::new(Replace { names, strategy: params.word("strategy").to_string(), durable: None })
    }
}

impl Seeded for ReplaceFiles {
    fn seed(&self) -> &'static str {
        "002"
    }
    /// time(1)'s wall, user and sys, and the ftrace script's jbd2 commits.
    fn printed(&self) -> &'static [&'static str] {
        &["journal_commits", "wall_s", "user_s", "sys_s"]
    }
    /// The report counted no commits: it says "far fewer".
    fn reported(&self) -> &'static str {
        "ext4, 2009: fsync and rename per file made dpkg slow; writeback first, then syncs: far fewer jbd2 commits"
    }
    fn preset(&self) -> Preset {
        // "a 5400rpm laptop drive running LVM and LUKS".
        let disk = Some("laptop-5400");
        Preset { settings: &[("strategy", "fsync-each,writeback-batch")], variants: &[], conditions: &[], disk }
    }
    /// Judged on every place by [`shows_at`]; each place's cost and safety
    /// beside it when the run judged crash states, else said once that
    /// safety was not tried; dpkg's own cost and safety where it ran (the
    /// preset runs it), at each place and over all of them.
    fn verdict(&self, cases: &[&Case]) -> Verdict {
        let (mine, programs): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| c.scenario == self.name());
        let dpkg = dpkg::pairs(&programs);
        let mut verdict = seeds::judge_places(self.name(), self.seed(), CLAIM, &mine, |place| {
            let mut judged = shows_at(place);
            judged.also.extend(cost_and_safety(place));
            judged.also.extend(place.first().and_then(|c| dpkg::at_place(&dpkg, &c.place())));
            judged
        });
        if !cases.iter().any(|c| c.figures.value("crash_states").is_some()) {
            verdict.safety = "not tried: add --crash flush to judge what each strategy leaves after a crash".into();
        }
        verdict.programs.extend(dpkg::summary(&dpkg));
        verdict
    }
    fn crash_settings(&self) -> &'static [(&'static str, &'static str)] {
        &[("strategy", "fsync-each,writeback-batch,rename-no-fsync,in-place,in-place-fsync")]
    }
    /// dpkg itself, with its fsyncs and with `--force-unsafe-io`.
    fn programs(&self) -> &'static [(&'static str, &'static [(&'static str, &'static str)])] {
        &[(dpkg::DPKG, &[("unsafe_io", "no,yes")])]
    }
}

/// What seed 002 reported, kept as one line of the verdict's evidence.
const CLAIM: &str = "ext4 in 2009: dpkg's fsync and rename per file made an unpack slow; starting writeback \
                     of every file first and then syncing them needed far fewer jbd2 commits";

/// How many times writeback-batch's journal commits fsync-each must make:
/// fsync-each forces a commit per file (20 for the seed's list) where the
/// batch's syncs share one or two; 5 × asks for most of the per-file
/// commits, not the one or two the journal's own 5-second timer adds.
const COMMIT_FACTOR: f64 = 5.0;

/// The seed's claim on one place's cases: fsync-each makes at least
/// [`COMMIT_FACTOR`] × the journal commits of writeback-batch (at least
/// one counted for it, so a batch with none still needs 5). A place
/// whose file system has no journal to count (ext2, btrfs) is not judged.
fn shows_at(cases: &[&Case]) -> Judged {
    let commits = |strategy| seeds::median(&seeds::with_params(cases, &[("strategy", strategy)]), "journal_commits");
    match (commits("fsync-each"), commits("writeback-batch")) {
        (Some(each), Some(batch)) => Judged::by(
            vec![Test::at_least("journal_commits", "fsync-each/batch commits", each / batch.max(1.0), COMMIT_FACTOR, Shown::Times)],
            false,
            "journal_commits",
            each,
            Some(batch),
            format!("{} journal commits with fsync-each, {} with writeback-batch", short_number(each), short_number(batch)),
        ),
        _ => Judged::unknown("journal_commits", "no journal commits counted for both strategies"),
    }
}

/// One place's strategies, each with its cost (the median journal commits,
/// or flushes where no journal's commits are counted)
/// and its safety (crash states bad of those judged, over its repeats, and
/// durability violations when there were any): "fsync-each 21 commits, 0
/// of 40 crash states bad; writeback-batch 2 commits, 0 of 12; ...", in
/// the order strategies are listed. `None` where no crash state was judged.
fn cost_and_safety(cases: &[&Case]) -> Option<String> {
    let mut parts = Vec::new();
    for strategy in STRATEGIES {
        let mine = seeds::with_params(cases, &[("strategy", strategy)]);
        let sum = |name| mine.iter().filter_map(|c| c.figures.value(name)).sum::<f64>();
        if !mine.iter().any(|c| c.figures.value("crash_states").is_some()) {
            continue;
        }
        // Journal commits where counted (the seed's cost), else flushes.
        let plural = |n: f64, one: &str, many: &str| format!("{} {}", short_number(n), if n == 1.0 { one } else { many });
        let cost = match (seeds::median(&mine, "journal_commits"), seeds::median(&mine, "flushes")) {
            (Some(n), _) => plural(n, "commit", "commits"),
            (None, Some(n)) => plural(n, "flush", "flushes"),
            (None, None) => "no cost counted".to_string(),
        };
        let states = if parts.is_empty() { " crash states bad" } else { "" };
        let mut safety = format!("{} of {}{states}", short_number(sum("crash_bad")), short_number(sum("crash_states")));
        let violations = sum("crash_durability_violations");
        if violations > 0.0 {
            let s = if violations == 1.0 { "" } else { "s" };
            safety.push_str(&format!(" ({} durability violation{s})", short_number(violations)));
        }
        parts.push(format!("{strategy} {cost}, {safety}"));
    }
    (!parts.is_empty()).then(|| format!("cost and safety: {}", parts.join("; ")))
}

/// The first `n` names of the seed's list, extended past 20 by repeating
/// its pattern with numbers shifted by 10 per repetition.
fn names(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let (round, name) = (i / SEED_LIST.len(), SEED_LIST[i % SEED_LIST.len()]);
            let (stem, number) = name.rsplit_once('_').expect("seed names are stem_number");
            format!("{stem}_{}", number.parse::<usize>().expect("a number") + round * 10)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_list_is_kept_and_extended_in_its_pattern() {
        assert_eq!(names(20), SEED_LIST.map(String::from).to_vec());
        let n = names(42);
        assert_eq!(n[20], "exist_11");
        assert_eq!(n[21], "new_11");
        assert_eq!(n[39], "new_20");
        assert_eq!(n[41], "new_21");
        assert_eq!(names(42).iter().filter(|n| n.starts_with("exist_")).count(), 21);
    }

    fn case(fs: &str, strategy: &str, commits: Option<f64>) -> Case {
        let mut figures = crate::record::Figures::new();
        match commits {
            Some(n) => figures.set("journal_commits", n, "count", Better::Lower, Kind::Exact),
            None => figures.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "no journal tracepoints"),
        }
        let mut params = serde_json::Map::new();
        params.insert("strategy".into(), strategy.into());
        Case { figures, ..Case::new("replace-files", fs, params, 1) }
    }

    /// `case` with its crash states judged: `bad` of `states`, and
    /// `violations` durability violations.
    fn crashed(mut case: Case, states: f64, bad: f64, violations: f64) -> Case {
        case.conditions.insert("crash".into(), "flush".into());
        for (name, v) in [("crash_states", states), ("crash_bad", bad), ("crash_durability_violations", violations)] {
            case.figures.set(name, v, "count", Better::Lower, Kind::Timing);
        }
        case
    }

    fn with_flushes(mut case: Case, flushes: f64) -> Case {
        case.figures.set("flushes", flushes, "count", Better::Lower, Kind::Exact);
        case
    }

    #[test]
    fn the_verdict_says_cost_and_safety_side_by_side_or_once_that_safety_was_not_tried() {
        let cases = [
            crashed(case("ext4", "fsync-each", Some(21.0)), 40.0, 0.0, 0.0),
            crashed(case("ext4", "writeback-batch", Some(2.0)), 12.0, 0.0, 0.0),
            crashed(case("ext4", "rename-no-fsync", Some(1.0)), 10.0, 0.0, 0.0),
            crashed(case("ext4", "in-place", Some(1.0)), 9.0, 3.0, 0.0),
            crashed(case("ext4", "in-place", Some(1.0)), 9.0, 2.0, 0.0),
            crashed(with_flushes(case("btrfs", "fsync-each", None), 42.0), 30.0, 0.0, 0.0),
            crashed(with_flushes(case("btrfs", "in-place-fsync", None), 1.0), 8.0, 1.0, 1.0),
        ];
        let v = ReplaceFiles.verdict(&cases.iter().collect::<Vec<_>>());
        assert_eq!(
            v.places[0].also,
            ["cost and safety: fsync-each 21 commits, 0 of 40 crash states bad; writeback-batch 2 commits, 0 of 12; \
              rename-no-fsync 1 commit, 0 of 10; in-place 1 commit, 5 of 18"]
        );
        assert_eq!(
            v.places[1].also,
            ["cost and safety: fsync-each 42 flushes, 0 of 30 crash states bad; in-place-fsync 1 flush, 1 of 8 (1 durability violation)"]
        );
        assert_eq!(v.safety, "");

        // Without --crash: as before, and safety said once to be untried.
        let plain = [case("ext4", "fsync-each", Some(21.0)), case("ext4", "writeback-batch", Some(2.0)), case("xfs", "fsync-each", Some(20.0))];
        let v = ReplaceFiles.verdict(&plain.iter().collect::<Vec<_>>());
        assert!(v.places.iter().all(|p| p.also.is_empty()), "{:?}", v.places);
        assert_eq!(v.safety, "not tried: add --crash flush to judge what each strategy leaves after a crash");
    }

    #[test]
    fn the_claim_wants_five_times_the_batchs_commits() {
        let judge = |cases: &[Case]| shows_at(&cases.iter().collect::<Vec<_>>());
        let ext4 = judge(&[case("ext4", "fsync-each", Some(21.0)), case("ext4", "writeback-batch", Some(2.0))]);
        assert_eq!(ext4.shows, Some(true));
        assert_eq!(ext4.evidence, "21 journal commits with fsync-each, 2 with writeback-batch");
        assert_eq!((ext4.value, ext4.against), (Some(21.0), Some(2.0)));
        let at = |each, batch| judge(&[case("xfs", "fsync-each", Some(each)), case("xfs", "writeback-batch", Some(batch))]).shows;
        assert_eq!(at(10.0, 2.0), Some(true));
        assert_eq!(at(9.0, 2.0), Some(false));
        // A batch with no commit at all still needs five from fsync-each.
        assert_eq!(at(5.0, 0.0), Some(true));
        assert_eq!(at(4.0, 0.0), Some(false));
        let btrfs = judge(&[case("btrfs", "fsync-each", None), case("btrfs", "writeback-batch", None)]);
        assert_eq!(btrfs.shows, None);
        assert_eq!(judge(&[case("ext4", "fsync-each", Some(21.0))]).shows, None);
    }
}
