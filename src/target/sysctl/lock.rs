//! The machine-wide lock held while a run's sysctls are in force, and the
//! rule that dead runs' values are put back only by whoever holds it.
//!
//! Without that rule a run waiting for the lock could read a killed
//! holder's value as the machine's own and "restore" it for good, and any
//! later start could put a dead run's old value back under a live run that
//! had set its own.

use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::fs::FlockOperation;

use crate::error::{Error, Result};

/// How many [`SysctlLock`]s this process holds now.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// The sysctl lock, held: this process may change sysctls and put back
/// what dead runs changed.
#[derive(Debug)]
pub struct SysctlLock {
    _file: File,
}

impl SysctlLock {
    fn taken(file: File) -> SysctlLock {
        HELD.fetch_add(1, Ordering::SeqCst);
        SysctlLock { _file: file }
    }
}

impl Drop for SysctlLock {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether this process holds the sysctl lock (so it may write sysctls).
pub fn held() -> bool {
    HELD.load(Ordering::SeqCst) > 0
}

fn open(state_dir: &Path) -> Result<File> {
    let path = state_dir.join("sysctl.lock");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| Error::io(&path, "open the sysctl lock", e))
}

/// Take the sysctl lock in `state_dir`, waiting for another run that
/// holds it (and saying so).
pub fn lock(state_dir: &Path) -> Result<SysctlLock> {
    std::fs::create_dir_all(state_dir).map_err(|e| Error::io(state_dir, "create the state folder", e))?;
    let file = open(state_dir)?;
    if rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_err() {
        eprintln!("fslab: waiting for another fslab run that has sysctls set");
        rustix::fs::flock(file.as_fd(), FlockOperation::LockExclusive)
            .map_err(|e| Error::io(&state_dir.join("sysctl.lock"), "lock", e.into()))?;
    }
    Ok(SysctlLock::taken(file))
}

/// Take the sysctl lock if no live run holds it; `None` if one does (it
/// put back what dead runs changed when it took the lock), or if there is
/// no state folder (no run ever changed anything here).
pub fn try_lock(state_dir: &Path) -> Option<SysctlLock> {
    if !state_dir.is_dir() {
        return None;
    }
    let file = open(state_dir).ok()?;
    rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(SysctlLock::taken(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_not_taken_twice_and_is_counted() {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
        assert!(try_lock(&dir.path().join("absent")).is_none());
        let first = lock(dir.path()).unwrap();
        assert!(held());
        // flock locks belong to the open file: a second open conflicts,
        // as another process's would.
        assert!(try_lock(dir.path()).is_none());
        drop(first);
        let again = try_lock(dir.path());
        assert!(again.is_some());
    }
}
