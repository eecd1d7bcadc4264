//! The machine's journal of sysctls changed and not yet put back
//! (`/run/fslab/sysctl.journal`), beside the machine's lock.
//!
//! The design decision: a run's ledger lives in its state folder, and two
//! runs may use two state folders; a value a killed run left set must be
//! put back before any other run reads "old" values, whatever folder that
//! run uses. So each change is written here first — key, old value, and
//! for a writeback pair its partner — and its putting back after; only the
//! holder of the exclusive lock writes it. Whoever takes the exclusive
//! lock next puts back what is still open, newest first, and the journal
//! starts empty again. A ledger's sysctl entry names its journal entry, so
//! a value the journal already put back is not written again later from a
//! stale ledger.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The journal's file name in the machine folder.
const NAME: &str = "sysctl.journal";

/// The most of it ever read: more is not one fslab wrote.
const MAX: u64 = 4 << 20;

/// The machine folder of the exclusive lock this process holds, so a
/// ledger's release finds the journal without being told where it is.
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Entries made by this process, for unique ids.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A change, as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Unique on the machine since boot: `PID.START_TICKS.N`.
    pub id: String,
    /// Dotted name.
    pub key: String,
    /// The value before the change.
    pub old: String,
    /// A writeback pair's other member and its value before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<(String, String)>,
    /// The fslab process that made it.
    pub pid: i32,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    Set(Change),
    Back(String),
}

/// Remember `dir` as the journal's folder while this process holds the
/// exclusive lock (set when taken; `None` when released).
pub(super) fn set_dir(dir: Option<&Path>) {
    *DIR.lock().unwrap_or_else(|p| p.into_inner()) = dir.map(Path::to_path_buf);
}

/// The journal's folder, for writing: only under the exclusive lock.
fn dir() -> Result<PathBuf> {
    DIR.lock().unwrap_or_else(|p| p.into_inner()).clone().ok_or_else(|| {
        Error::failed("the sysctl journal is written only under the machine's exclusive sysctl lock")
    })
}

/// The journal's folder, for reading: the lock's, else the machine's.
fn read_dir() -> PathBuf {
    DIR.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_else(|| PathBuf::from(super::lock::MACHINE_DIR))
}

/// The journal file, opened for appending (made 0600 when absent).
fn open(dir: &Path, write: bool) -> Result<Option<File>> {
    let path = dir.join(NAME);
    let flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | if write { OFlags::CREATE | OFlags::RDWR | OFlags::APPEND } else { OFlags::RDONLY };
    let file = match rustix::fs::open(&path, flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => File::from(fd),
        Err(rustix::io::Errno::NOENT) if !write => return Ok(None),
        Err(e) => return Err(Error::io(&path, "open the sysctl journal", e.into())),
    };
    let meta = file.metadata().map_err(|e| Error::io(&path, "stat", e))?;
    if !meta.is_file() || meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o022 != 0 {
        return Err(Error::environment(format!("{}: not fslab's sysctl journal; remove it as root", path.display())));
    }
    Ok(Some(file))
}

fn append(dir: &Path, line: &Line) -> Result<()> {
    let mut text = serde_json::to_vec(line).map_err(|e| Error::failed(format!("sysctl journal: {e}")))?;
    text.push(b'\n');
    let mut file = open(dir, true)?.expect("made when absent");
    file.write_all(&text).map_err(|e| Error::io(&dir.join(NAME), "write the sysctl journal", e))
}

/// The changes not yet put back, oldest first.
fn open_changes(dir: &Path) -> Result<Vec<Change>> {
    let Some(file) = open(dir, false)? else { return Ok(Vec::new()) };
    let mut text = String::new();
    file.take(MAX).read_to_string(&mut text).map_err(|e| Error::io(&dir.join(NAME), "read the sysctl journal", e))?;
    let mut open: Vec<Change> = Vec::new();
    for line in text.lines() {
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Set(change)) => open.push(change),
            Ok(Line::Back(id)) => open.retain(|c| c.id != id),
            Err(_) => break, // a torn last line: its change was never made
        }
    }
    Ok(open)
}

/// Write down, before it is made, that `key` is about to change from
/// `old`; the entry's id.
pub fn record(key: &str, old: &str, partner: Option<&(String, String)>) -> Result<String> {
    let pid = std::process::id() as i32;
    let ticks = crate::ledger::give_back::start_ticks(pid).unwrap_or(0);
    let id = format!("{pid}.{ticks}.{}", NEXT.fetch_add(1, Ordering::SeqCst));
    let change = Change { id: id.clone(), key: key.into(), old: old.into(), partner: partner.cloned(), pid };
    append(&dir()?, &Line::Set(change))?;
    Ok(id)
}

/// Whether change `id` is still open (made and not put back). Read
/// without the lock too: only its holder writes, a change is written down
/// before the ledger names it, and once put back it never opens again.
pub(super) fn is_open(id: &str) -> Result<bool> {
    Ok(open_changes(&read_dir())?.iter().any(|c| c.id == id))
}

/// Write down that change `id` is put back (or never can be); empty the
/// journal once nothing is open.
pub(super) fn settle(id: &str) -> Result<()> {
    let dir = dir()?;
    append(&dir, &Line::Back(id.to_string()))?;
    if open_changes(&dir)?.is_empty() {
        let path = dir.join(NAME);
        let file = open(&dir, true)?.expect("made when absent");
        file.set_len(0).map_err(|e| Error::io(&path, "empty the sysctl journal", e))?;
    }
    Ok(())
}

/// The changes still open, newest first: what runs that ended without
/// putting them back left (call under the exclusive lock).
pub(super) fn left_open() -> Result<Vec<Change>> {
    let mut open = open_changes(&dir()?)?;
    open.reverse();
    Ok(open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_stay_open_until_settled_and_the_journal_then_empties() {
        let dir = crate::test_temp::dir("");
        let _guard = super::super::lock::tests_serial();
        set_dir(Some(dir.path()));
        let a = record("vm.a", "1", None).unwrap();
        let pair = ("vm.b_ratio".to_string(), "20".to_string());
        let b = record("vm.b_bytes", "0", Some(&pair)).unwrap();
        assert_ne!(a, b);
        assert!(is_open(&a).unwrap() && is_open(&b).unwrap());
        let left = left_open().unwrap();
        assert_eq!(left.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["vm.b_bytes", "vm.a"], "newest first");
        assert_eq!(left[0].partner, Some(pair));
        settle(&b).unwrap();
        assert!(!is_open(&b).unwrap() && is_open(&a).unwrap());
        assert!(std::fs::metadata(dir.path().join(NAME)).unwrap().len() > 0);
        settle(&a).unwrap();
        assert_eq!(std::fs::metadata(dir.path().join(NAME)).unwrap().len(), 0, "not emptied once settled");
        // A torn last line is a change never made.
        std::fs::write(dir.path().join(NAME), "{\"set\":{\"id\":\"x\",\"key\":\"vm.c\",\"old\":\"1\",\"pid\":1}}\n{\"se").unwrap();
        assert_eq!(left_open().unwrap().len(), 1);
        set_dir(None);
        assert!(record("vm.a", "1", None).is_err(), "written without the lock");
    }
}
