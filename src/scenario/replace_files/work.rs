//! The work: write every file of the list and make it durable and put it
//! in place by the chosen strategy, marking each durability point when
//! the device's writes are recorded.
//!
//! The renaming strategies write `NAME.dpkg-new` and rename it over NAME:
//! `fsync-each` (dpkg then: fsync and rename, file by file),
//! `fdatasync-each`, `writeback-batch` (the seed's fix: start writeback of
//! each file as it is written, wait for all, fdatasync all, rename all),
//! `syncfs` (one syncfs, then every rename), `none` (every rename, no
//! sync) and `rename-no-fsync` (write and rename, file by file, no sync).
//! The in-place ones open NAME itself with `O_TRUNC` and write it:
//! `in-place` (no sync) and `in-place-fsync` (fsync before the close).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::contents::{self, Checker, NEW, OLD, WRITES};
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::record::{Better, Kind};
use crate::scenario::durable::{Durable, StateChecker};
use crate::scenario::{Work, WorkOutcome};
use crate::sys::sync_range;

/// Every strategy, the seed's two first.
pub(super) const STRATEGIES: [&str; 8] =
    ["fsync-each", "writeback-batch", "fdatasync-each", "syncfs", "none", "rename-no-fsync", "in-place", "in-place-fsync"];

/// The work of one case.
pub(super) struct Replace {
    pub names: Vec<String>,
    pub strategy: String,
    pub durable: Option<Durable>,
}

fn io(path: &Path, what: &str) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    let what = what.to_string();
    move |e| Error::io(&path, &what, e)
}

/// How one file is written: its generation, and what is done before the
/// close.
#[derive(Clone, Copy, Default)]
struct Write1 {
    generation: u32,
    fsync: bool,
    start_writeback: bool,
}

/// Create (truncating) and write the file `name`'s contents at `path` as
/// the seed does (16 writes of 1 KiB), then fsync it or start its
/// writeback before closing, as `how` says.
fn write_file(path: &Path, name: &str, how: Write1) -> Result<()> {
    let mut f = OpenOptions::new().write(true).create(true).truncate(true).mode(0o666).open(path).map_err(io(path, "create"))?;
    for i in 0..WRITES {
        f.write_all(&contents::block(name, how.generation, i)).map_err(io(path, "write"))?;
    }
    if how.fsync {
        f.sync_all().map_err(io(path, "fsync"))?;
    }
    if how.start_writeback {
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

    /// Mark `name` durable, when marks are taken.
    fn durable(&self, name: &str) -> Result<()> {
        self.durable.as_ref().map_or(Ok(()), |mark| mark(name))
    }

    fn in_place(&self) -> bool {
        self.strategy.starts_with("in-place")
    }

    /// Write every file under its temporary name, then make each durable
    /// and rename it by the strategy.
    fn by_rename(&self, dir: &Path) -> Result<()> {
        let new = |batch| Write1 { generation: NEW, fsync: false, start_writeback: batch };
        if self.strategy == "rename-no-fsync" {
            for name in &self.names {
                write_file(&Self::new_name(dir, name), name, new(false))?;
                Self::rename(dir, name)?;
            }
            return Ok(());
        }
        let batch = self.strategy == "writeback-batch";
        for name in &self.names {
            write_file(&Self::new_name(dir, name), name, new(batch))?;
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
                    self.durable(name)?;
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
                    self.durable(name)?;
                }
                for name in &self.names {
                    Self::rename(dir, name)?;
                }
            }
            "syncfs" => {
                let d = File::open(dir).map_err(io(dir, "open"))?;
                rustix::fs::syncfs(&d).map_err(|e| Error::io(dir, "syncfs", e.into()))?;
                for name in &self.names {
                    self.durable(name)?;
                }
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
        Ok(())
    }

    /// Write every file over itself (`O_TRUNC`), fsyncing each first for
    /// `in-place-fsync`.
    fn by_overwrite(&self, dir: &Path) -> Result<()> {
        let fsync = self.strategy == "in-place-fsync";
        for name in &self.names {
            write_file(&dir.join(name), name, Write1 { generation: NEW, fsync, start_writeback: false })?;
            if fsync {
                self.durable(name)?;
            }
        }
        Ok(())
    }
}

impl Work for Replace {
    fn prepare(&mut self, dir: &Path, _ledger: &Ledger) -> Result<()> {
        for name in self.names.iter().filter(|n| n.starts_with("exist_")) {
            let path = dir.join(name);
            write_file(&path, name, Write1 { generation: OLD, fsync: true, start_writeback: false })?;
            open_quiet(&path)?.sync_all().map_err(io(&path, "fsync"))?;
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, _ledger: &Ledger) -> Result<WorkOutcome> {
        if self.in_place() {
            self.by_overwrite(dir)?;
        } else {
            self.by_rename(dir)?;
        }
        let mut outcome = WorkOutcome::default();
        outcome.figures.set("files_replaced", self.names.len() as f64, "count", Better::Higher, Kind::Exact);
        Ok(outcome)
    }

    fn mark_durable_with(&mut self, mark: Durable) {
        self.durable = Some(mark);
    }

    fn state_checker(&self) -> Option<Box<dyn StateChecker>> {
        Some(Box::new(Checker { names: self.names.clone(), renames: !self.in_place() }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::super::names;
    use super::*;
    use crate::scenario::durable::FileState;

    /// Run `strategy` on the seed's 20 files in a fresh folder, marks
    /// taken: the folder and the marks in order.
    fn ran(strategy: &str) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let marks = Arc::new(Mutex::new(Vec::new()));
        let seen = marks.clone();
        let mut work = Replace { names: names(20), strategy: strategy.to_string(), durable: None };
        work.mark_durable_with(Arc::new(move |what: &str| {
            seen.lock().unwrap().push(what.to_string());
            Ok(())
        }));
        work.prepare(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        work.run(dir.path(), &Ledger::for_tests()).unwrap();
        let marks = marks.lock().unwrap().clone();
        (dir, marks)
    }

    #[test]
    fn every_strategy_leaves_every_file_new_and_nothing_else() {
        for strategy in STRATEGIES {
            let (dir, _) = ran(strategy);
            let mut left: Vec<String> =
                std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            left.sort();
            let mut want = names(20);
            want.sort();
            assert_eq!(left, want, "{strategy}");
            assert_eq!(std::fs::metadata(dir.path().join("new_3")).unwrap().len(), 16 * 1024);
            let work = Replace { names: names(20), strategy: strategy.to_string(), durable: None };
            let judged = crate::scenario::durable::files_in(&*work.state_checker().unwrap(), dir.path());
            assert!(judged.iter().all(|j| j.state == FileState::New && j.new_somewhere), "{strategy}: {judged:?}");
            assert_eq!(judged.iter().filter(|j| j.existed).count(), 10);
        }
    }

    #[test]
    fn each_strategy_marks_what_its_sync_calls_made_durable() {
        let every = names(20);
        for strategy in STRATEGIES {
            let (_dir, marks) = ran(strategy);
            match strategy {
                "none" | "rename-no-fsync" | "in-place" => assert!(marks.is_empty(), "{strategy}: {marks:?}"),
                _ => assert_eq!(marks, every, "{strategy}"),
            }
        }
    }

    #[test]
    fn the_setup_leaves_old_contents_for_the_checker() {
        let dir = tempfile::tempdir().unwrap();
        let mut work = Replace { names: names(4), strategy: "in-place".into(), durable: None };
        work.prepare(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        let judged = crate::scenario::durable::files_in(&*work.state_checker().unwrap(), dir.path());
        let states: Vec<FileState> = judged.iter().map(|j| j.state).collect();
        assert_eq!(states, [FileState::Old, FileState::Missing, FileState::Old, FileState::Old]);
    }
}
