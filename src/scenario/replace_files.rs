//! `replace-files` (seed 002): dpkg replacing a package's files, and the
//! fsync storm that makes it slow on ext4.
//!
//! The setup writes the existing files and fsyncs each (unmeasured, as in
//! the seed). The measured part writes every file of the list as
//! `NAME.dpkg-new` (16 writes of 1 KiB) and then makes it durable and
//! renames it over NAME by the chosen strategy. The seed's own two are
//! `fsync-each` (dpkg then: fsync and rename, file by file) and
//! `writeback-batch` (its fix: start writeback of each file as it is
//! written, wait for all, fdatasync all, rename all).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::params::{ParamKind, ParamSpec, Params};
use super::seeds::{self, Judged, Preset, Shown, Test, Verdict};
use super::{Case, Scenario, Seeded, Work, WorkOutcome};
use crate::error::{Error, Result};
use crate::units::short_number;
use crate::record::{Better, FigureSpec, Kind};
use crate::ledger::Ledger;
use crate::sys::sync_range;

/// The seed's package: which names exist before the upgrade, and the
/// order dpkg writes them in (existing and new names interleaved).
const SEED_LIST: [&str; 20] = [
    "exist_1", "new_1", "exist_2", "exist_3", "new_2", "new_3", "exist_4", "exist_5", "exist_6", "new_4", "new_5",
    "new_6", "exist_7", "exist_8", "exist_9", "exist_10", "new_7", "new_8", "new_9", "new_10",
];

const STRATEGIES: [&str; 5] = ["fsync-each", "writeback-batch", "fdatasync-each", "syncfs", "none"];

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
        about: "how each file is made durable before its rename",
    },
];

/// Each file: 16 writes of 1 KiB, as the seed's write_file.
const WRITES: usize = 16;
const WRITE_BYTES: usize = 1024;

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
        Box::new(Replace { names: names(params.number("files") as usize), strategy: params.word("strategy").to_string() })
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

struct Replace {
    names: Vec<String>,
    strategy: String,
}

fn io(path: &Path, what: &str) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    let what = what.to_string();
    move |e| Error::io(&path, &what, e)
}

/// Create (truncating) and write one file as the seed does, optionally
/// fsyncing or starting its writeback before closing.
fn write_file(path: &Path, fsync: bool, start_writeback: bool) -> Result<()> {
    let mut f = OpenOptions::new().write(true).create(true).truncate(true).mode(0o666).open(path).map_err(io(path, "create"))?;
    let block = [0u8; WRITE_BYTES];
    for _ in 0..WRITES {
        f.write_all(&block).map_err(io(path, "write"))?;
    }
    if fsync {
        f.sync_all().map_err(io(path, "fsync"))?;
    }
    if start_writeback {
        sync_range::whole_file(&f, sync_range::WRITE).map_err(io(path, "sync_file_range"))?;
    }
    Ok(())
}

/// Open read-only (no atime update), as the seed's sync helpers do.
fn open_quiet(path: &Path) -> Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NOATIME).open(path).map_err(io(path, "open"))
}

impl Replace {
    fn new_name(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{name}.dpkg-new"))
    }

    fn rename(dir: &Path, name: &str) -> Result<()> {
        let from = Self::new_name(dir, name);
        std::fs::rename(&from, dir.join(name)).map_err(io(&from, "rename"))
    }
}

impl Work for Replace {
    fn prepare(&mut self, dir: &Path) -> Result<()> {
        for name in self.names.iter().filter(|n| n.starts_with("exist_")) {
            let path = dir.join(name);
            write_file(&path, true, false)?;
            open_quiet(&path)?.sync_all().map_err(io(&path, "fsync"))?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, _ledger: &Ledger) -> Result<WorkOutcome> {
        let batch = self.strategy == "writeback-batch";
        for name in &self.names {
            write_file(&Self::new_name(dir, name), false, batch)?;
        }
        match self.strategy.as_str() {
            "fsync-each" | "fdatasync-each" => {
                for name in &self.names {
                    let path = Self::new_name(dir, name);
                    let f = open_quiet(&path)?;
                    if self.strategy == "fsync-each" {
                        f.sync_all().map_err(io(&path, "fsync"))?;
                    } else {
                        f.sync_data().map_err(io(&path, "fdatasync"))?;
                    }
                    drop(f);
                    Self::rename(dir, name)?;
                }
            }
            "writeback-batch" => {
                for name in &self.names {
                    let path = Self::new_name(dir, name);
                    sync_range::whole_file(open_quiet(&path)?, sync_range::WAIT_BEFORE)
                        .map_err(io(&path, "sync_file_range"))?;
                }
                for name in &self.names {
                    let path = Self::new_name(dir, name);
                    open_quiet(&path)?.sync_data().map_err(io(&path, "fdatasync"))?;
                }
                for name in &self.names {
                    Self::rename(dir, name)?;
                }
            }
            "syncfs" => {
                let d = File::open(dir).map_err(io(dir, "open"))?;
                rustix::fs::syncfs(&d).map_err(|e| Error::io(dir, "syncfs", e.into()))?;
                for name in &self.names {
                    Self::rename(dir, name)?;
                }
            }
            _ => {
                for name in &self.names {
                    Self::rename(dir, name)?;
                }
            }
        }
        let mut outcome = WorkOutcome::default();
        outcome.figures.set(
            "files_replaced",
            self.names.len() as f64,
            "count",
            crate::record::Better::Higher,
            crate::record::Kind::Exact,
        );
        Ok(outcome)
    }
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

    #[test]
    fn every_strategy_leaves_the_same_files() {
        for strategy in STRATEGIES {
            let dir = tempfile::tempdir().unwrap();
            let mut work = Replace { names: names(20), strategy: strategy.to_string() };
            work.prepare(dir.path()).unwrap();
            work.run(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
            let mut left: Vec<String> =
                std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            left.sort();
            let mut want = names(20);
            want.sort();
            assert_eq!(left, want, "{strategy}");
            assert_eq!(std::fs::metadata(dir.path().join("new_3")).unwrap().len(), 16 * 1024);
        }
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
