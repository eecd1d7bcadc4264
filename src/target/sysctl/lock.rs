//! The machine-wide lock held while a run's sysctls are in force, and the
//! rule that dead runs' values are put back only by whoever holds it.
//!
//! Without that rule a run waiting for the lock could read a killed
//! holder's value as the machine's own and "restore" it for good, and any
//! later start could put a dead run's old value back under a live run that
//! had set its own.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};

use crate::error::{Error, Result};
use crate::target::folder::{FolderRole, OwnedDir};
use crate::target::ledger::start_ticks;

/// How many [`SysctlLock`]s this process holds now.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// The sysctl lock, held: this process may change sysctls and put back
/// what dead runs changed.
#[derive(Debug)]
pub struct SysctlLock {
    _file: File,
}

impl SysctlLock {
    /// The lock, taken: the file says who holds it (pid and start time),
    /// so one who finds it held can tell a live run from a dead one's
    /// straggler.
    fn taken(file: File) -> SysctlLock {
        let pid = std::process::id() as i32;
        let owner = format!("{pid} {}\n", start_ticks(pid).unwrap_or(0));
        let _ = file.set_len(0).and_then(|()| file.write_all_at(owner.as_bytes(), 0));
        HELD.fetch_add(1, Ordering::SeqCst);
        SysctlLock { _file: file }
    }
}

/// Whether the process the lock file names is gone.
fn owner_is_dead(file: &File) -> bool {
    let mut buf = [0u8; 64];
    let len = file.read_at(&mut buf, 0).unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..len]);
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    match (fields.next(), fields.next()) {
        (Some(Ok(pid)), Some(Ok(ticks))) => i32::try_from(pid).is_ok_and(|pid| start_ticks(pid) != Some(ticks)),
        _ => false,
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

/// Open (making it if absent) the lock file in the state folder, through
/// the folder held and checked to be ours alone, never through a link.
fn open(state: &OwnedDir) -> Result<File> {
    let flags = OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(state.fd(), "sysctl.lock", flags, Mode::from_raw_mode(0o600))
        .map(File::from)
        .map_err(|e| Error::io(&state.path().join("sysctl.lock"), "open the sysctl lock", e.into()))
}

/// Take the sysctl lock in `state_dir`, waiting for another run that
/// holds it (and saying so).
pub fn lock(state_dir: &Path) -> Result<SysctlLock> {
    let file = open(&OwnedDir::open_or_make(state_dir, FolderRole::State)?)?;
    if rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_err() {
        eprintln!("fslab: waiting for another fslab run that has sysctls set");
        rustix::fs::flock(file.as_fd(), FlockOperation::LockExclusive)
            .map_err(|e| Error::io(&state_dir.join("sysctl.lock"), "lock", e.into()))?;
    }
    Ok(SysctlLock::taken(file))
}

/// Take the sysctl lock if no live run holds it; `None` if one does (it
/// put back what dead runs changed when it took the lock), or if there is
/// no state folder (no run ever changed anything here). A run that is
/// dead may hold it for a moment through a child it was starting (forked,
/// not yet past exec): that is waited for, a few seconds at most.
pub fn try_lock(state_dir: &Path) -> Option<SysctlLock> {
    let state = OwnedDir::open_existing(state_dir, FolderRole::State).ok()??;
    let file = open(&state).ok()?;
    let take = || rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_ok();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut taken = take();
    while !taken && Instant::now() < deadline && owner_is_dead(&file) {
        std::thread::sleep(Duration::from_millis(50));
        taken = take();
    }
    taken.then(|| SysctlLock::taken(file))
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

    #[test]
    fn a_dead_holders_straggler_is_waited_for_and_a_live_holder_is_not() {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
        // Held by a live process (this one): not waited for.
        let live = lock(dir.path()).unwrap();
        let started = Instant::now();
        assert!(try_lock(dir.path()).is_none());
        assert!(started.elapsed() < Duration::from_secs(1));
        // Its owner gone (a finished child), held a moment longer by a
        // straggler: waited for, then taken.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let ticks = start_ticks(pid).unwrap_or(1);
        child.wait().unwrap();
        live._file.set_len(0).unwrap();
        live._file.write_all_at(format!("{pid} {ticks}\n").as_bytes(), 0).unwrap();
        let straggler = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(live);
        });
        assert!(try_lock(dir.path()).is_some());
        straggler.join().unwrap();
    }
}
