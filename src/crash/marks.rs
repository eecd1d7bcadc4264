//! Durability points: where in the write log the work's fsync, fdatasync,
//! syncfs or directory fsync had returned, so that a crash state from
//! there on must hold what it made durable.
//!
//! The design decision: QEMU's `blklogwrites` takes no mark from outside
//! (its MARK flag is defined and never written, and it has no command
//! that adds one), so a mark is kept beside the log, not in it: the
//! number of entries the log's super block counts when the call returned.
//! The driver rewrites that count at every flush it logs, before the
//! flush completes; a sync call returns only after its flush completed, so
//! the count read then includes the flush that made the call's data
//! durable (and perhaps entries logged after it, never fewer). Before the
//! first flush the super block is still zeros, and the count is 0. The
//! entry a state must reach to hold the data is then the last flush before
//! the mark ([`durable_from`]).

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::time::Instant;

use super::log::{MAGIC, WriteLog};
use crate::record::CrashMark as Mark;

/// The entries the super block of the log open as `log` counts now; 0
/// before the first flush (no super block yet).
pub fn live_entries(log: &File) -> std::io::Result<u64> {
    let mut head = [0u8; 24];
    match log.read_exact_at(&mut head, 0) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(0),
        Err(e) => return Err(e),
    }
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    Ok(if word(0) == MAGIC { word(16) } else { 0 })
}

pub use crate::record::crash::MAX_DURABLE_NAMES;

/// Marks taken while a log is written: shared by whoever marks (the
/// harness around the work; the work itself, later), read once the
/// recording ends.
#[derive(Debug)]
pub struct Marker {
    log: File,
    started: Instant,
    kept: Mutex<Kept>,
}

/// The marks kept so far.
#[derive(Debug, Default)]
struct Kept {
    marks: Vec<Mark>,
    /// The names marked durable, each kept once (its first mark).
    names: HashSet<String>,
    /// Durable marks of new names past [`MAX_DURABLE_NAMES`].
    left_out: u64,
}

impl Marker {
    /// Marks of the log open (for reading) as `log`, timed from now.
    pub fn new(log: File) -> Marker {
        Marker { log, started: Instant::now(), kept: Mutex::new(Kept::default()) }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Mark that `what` has just returned; the log's entry count then.
    pub fn mark(&self, what: &str) -> std::io::Result<u64> {
        let entries = live_entries(&self.log)?;
        let at_s = self.started.elapsed().as_secs_f64();
        self.kept().marks.push(Mark { what: what.to_string(), entries, at_s });
        Ok(entries)
    }

    /// Mark that what the work names `what` (`durable:NAME`) has just been
    /// made durable: kept as [`mark`](Self::mark) does the first time the
    /// name is marked (a name is durable from its first mark on), while
    /// fewer than [`MAX_DURABLE_NAMES`] are kept; else counted as left out.
    pub fn mark_durable(&self, what: &str) -> std::io::Result<()> {
        {
            let mut kept = self.kept();
            if kept.names.contains(what) {
                return Ok(());
            }
            if kept.names.len() >= MAX_DURABLE_NAMES {
                kept.left_out += 1;
                return Ok(());
            }
        }
        let entries = live_entries(&self.log)?;
        let at_s = self.started.elapsed().as_secs_f64();
        let mut kept = self.kept();
        if kept.names.insert(what.to_string()) {
            kept.marks.push(Mark { what: what.to_string(), entries, at_s });
        }
        Ok(())
    }

    /// The marks so far, in the order taken.
    pub fn marks(&self) -> Vec<Mark> {
        self.kept().marks.clone()
    }

    /// How many durable marks of new names were left out (past
    /// [`MAX_DURABLE_NAMES`]).
    pub fn left_out(&self) -> u64 {
        self.kept().left_out
    }
}

/// How many of the log's entries a crash state must hold for what a mark
/// at `entries` made durable to be there: up to and including the last
/// flush among the first `entries`; 0 when none of them is a flush.
pub fn durable_from(log: &WriteLog, entries: u64) -> usize {
    let seen = &log.entries()[..(entries as usize).min(log.entries().len())];
    seen.iter().rposition(|e| e.is_flush()).map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::super::log::tests::{QEMU_LOG, log_of};
    use super::*;

    #[test]
    fn a_mark_counts_what_the_super_block_says_and_resolves_to_its_flush() {
        let (dir, log) = log_of(QEMU_LOG);
        let log = log.unwrap();
        let marker = Marker::new(File::open(dir.path().join("writes.log")).unwrap());
        assert_eq!(marker.mark("fsync").unwrap(), 7);
        assert_eq!(marker.marks()[0].what, "fsync");
        // Entry 1 is the fsync's flush: a state holds the 0xa1 write once
        // it holds two entries; the close's flush is entry 6.
        assert_eq!(durable_from(&log, 2), 2);
        assert_eq!(durable_from(&log, 5), 2);
        assert_eq!(durable_from(&log, 7), 7);
        assert_eq!(durable_from(&log, 1), 0, "no flush yet");
        assert_eq!(durable_from(&log, 99), 7);
    }

    #[test]
    fn durable_names_are_kept_once_each_and_capped_with_a_count() {
        let (dir, _) = log_of(QEMU_LOG);
        let marker = Marker::new(File::open(dir.path().join("writes.log")).unwrap());
        marker.mark("work_start").unwrap();
        for i in 0..MAX_DURABLE_NAMES + 10 {
            marker.mark_durable(&format!("durable:n{i}")).unwrap();
            marker.mark_durable("durable:n0").unwrap();
        }
        marker.mark("work_end").unwrap();
        let marks = marker.marks();
        assert_eq!(marks.len(), MAX_DURABLE_NAMES + 2);
        assert_eq!((marks[1].what.as_str(), marks[2].what.as_str()), ("durable:n0", "durable:n1"));
        assert_eq!(marks.last().unwrap().what, "work_end", "the harness's marks are always kept");
        assert_eq!(marker.left_out(), 10);
    }

    #[test]
    fn before_the_first_flush_the_count_is_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("writes.log");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        assert_eq!(live_entries(&File::open(&path).unwrap()).unwrap(), 0);
        std::fs::write(&path, b"").unwrap();
        assert_eq!(live_entries(&File::open(&path).unwrap()).unwrap(), 0);
    }
}
