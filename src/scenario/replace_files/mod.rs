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
    fn preset(&self) -> Preset {
        // "a 5400rpm laptop drive running LVM and LUKS".
        let disk = Some("laptop-5400");
        Preset { settings: &[("strategy", "fsync-each,writeback-batch")], variants: &[], conditions: &[], disk }
    }
    /// Judged on every place by [`shows_at`].
    fn verdict(&self, cases: &[&Case]) -> Verdict {
        seeds::judge_places(self.name(), self.seed(), CLAIM, cases, shows_at)
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
