//! The machine's sysctl lock: one per machine, in `/run/fslab`, whatever
//! state folder a run uses.
//!
//! The design decision: sysctls are machine-wide, so the lock that guards
//! them is too. A run that changes sysctls holds it exclusively for its
//! whole life; every other measuring run holds it shared for its whole
//! life, so no run measures while another has writeback set its own way,
//! and no two runs change the same knob under each other. Waiting goes
//! through a turnstile (`sysctl.queue`): whoever waits for the lock holds
//! the turnstile, so a run that wants to change sysctls is not starved by
//! a stream of measuring runs, and a measuring run waits behind it.
//!
//! A wait polls (so Ctrl-C and SIGTERM answer at once), says for whom it
//! waits — the processes holding the lock, read from `/proc/locks` — and
//! says it again every minute, so a log without a terminal shows it.
//!
//! `/run` is emptied at boot, as the sysctls are reset: the folder and its
//! journal ([`super::journal`]) live exactly as long as what they guard.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Error, Result};
use crate::ledger::flock::{self, Waiter};

/// The machine's fslab folder: the sysctl lock and journal.
pub const MACHINE_DIR: &str = "/run/fslab";

/// How many exclusive [`SysctlLock`]s this process holds now.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// How a run holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// It measures: no other run may change sysctls meanwhile.
    Shared,
    /// It changes sysctls: no other run may measure or change them.
    Exclusive,
}

/// The machine's sysctl lock, held; released when dropped.
#[derive(Debug)]
pub struct SysctlLock {
    _file: File,
    hold: Hold,
    dir: PathBuf,
}

impl SysctlLock {
    /// How it is held.
    pub fn hold(&self) -> Hold {
        self.hold
    }

    /// The folder it lives in (the journal is beside it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for SysctlLock {
    fn drop(&mut self) {
        if self.hold == Hold::Exclusive && HELD.fetch_sub(1, Ordering::SeqCst) == 1 {
            super::journal::set_dir(None);
        }
    }
}

/// Whether this process holds the lock exclusively (so it may write
/// sysctls and put back what dead runs left).
pub fn held() -> bool {
    HELD.load(Ordering::SeqCst) > 0
}

/// Open the machine folder `dir`: root makes it (0755: other users take
/// the lock shared through it) and insists it is root's and written by no
/// one else, reached through no symlink; for anyone else it must already
/// be so, else `None` (no root run has been here since boot).
fn open_dir(dir: &Path) -> Result<Option<File>> {
    let root = rustix::process::geteuid().is_root();
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let name = dir.file_name().unwrap_or_default();
    let parent_fd = rustix::fs::open(parent, flags, Mode::empty()).map_err(|e| Error::io(parent, "open", e.into()))?;
    let fd = match rustix::fs::openat(&parent_fd, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if root => {
            match rustix::fs::mkdirat(&parent_fd, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(Error::io(dir, "make the machine folder", e.into())),
            }
            rustix::fs::openat(&parent_fd, name, flags, Mode::empty()).map_err(|e| Error::io(dir, "open", e.into()))?
        }
        Err(Errno::NOENT) if !root => return Ok(None),
        Err(e) => return Err(Error::io(dir, "open the machine folder", e.into())),
    };
    let file = File::from(fd);
    let meta = file.metadata().map_err(|e| Error::io(dir, "stat", e))?;
    let me = rustix::process::geteuid().as_raw();
    // Root's, or (in tests, which lock in a folder of their own) ours.
    if (meta.uid() != 0 && meta.uid() != me) || meta.mode() & 0o022 != 0 {
        return Err(Error::environment(format!(
            "{}: the folder of the machine's sysctl lock belongs to uid {} (mode {:o}), not to root alone: \
             another user could hold or swap the lock; `rm -r {}` as root, and fslab makes it again",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777,
            dir.display()
        )));
    }
    Ok(Some(file))
}

/// Open (root: making, 0644) the lock file `name` in the machine folder.
fn open_file(dir: &File, at: &Path, name: &str) -> Result<Option<File>> {
    let root = rustix::process::geteuid().is_root();
    let path = at.join(name);
    let flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | if root { OFlags::CREATE | OFlags::RDWR } else { OFlags::RDONLY };
    match rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o644)) {
        Ok(fd) => {
            let file = File::from(fd);
            let meta = file.metadata().map_err(|e| Error::io(&path, "stat", e))?;
            if !meta.is_file() || meta.uid() != dir.metadata().map(|m| m.uid()).unwrap_or(u32::MAX) {
                return Err(Error::environment(format!(
                    "{}: not a lock file of the machine folder's owner; remove it as root",
                    path.display()
                )));
            }
            Ok(Some(file))
        }
        Err(Errno::NOENT) if !root => Ok(None),
        Err(e) => Err(Error::io(&path, "open the sysctl lock", e.into())),
    }
}

/// Take the machine's sysctl lock as `hold`, waiting (and saying for
/// whom) while another run holds it. `None` for a user other than root
/// when no root run has made the lock since boot.
pub fn lock(hold: Hold) -> Result<Option<SysctlLock>> {
    lock_in(Path::new(MACHINE_DIR), hold)
}

/// [`lock`] in the folder `dir` (tests lock in a folder of their own).
pub fn lock_in(dir: &Path, hold: Hold) -> Result<Option<SysctlLock>> {
    let Some(folder) = open_dir(dir)? else { return Ok(None) };
    let (Some(queue), Some(main)) = (open_file(&folder, dir, "sysctl.queue")?, open_file(&folder, dir, "sysctl.lock")?)
    else {
        return Ok(None);
    };
    let what = format!("the machine's sysctl lock ({})", dir.join("sysctl.lock").display());
    let mut waiting = Waiter::new(&main, what);
    waiting.take(&queue, FlockOperation::NonBlockingLockExclusive)?;
    let op = match hold {
        Hold::Shared => FlockOperation::NonBlockingLockShared,
        Hold::Exclusive => FlockOperation::NonBlockingLockExclusive,
    };
    let taken = waiting.take(&main, op);
    let _ = rustix::fs::flock(queue.as_fd(), FlockOperation::Unlock);
    taken?;
    Ok(Some(taken_as(main, hold, dir)))
}

fn taken_as(file: File, hold: Hold, dir: &Path) -> SysctlLock {
    if hold == Hold::Exclusive && HELD.fetch_add(1, Ordering::SeqCst) == 0 {
        super::journal::set_dir(Some(dir));
    }
    SysctlLock { _file: file, hold, dir: dir.to_path_buf() }
}

/// Take the lock exclusively if no live run holds it (for `fslab
/// cleanup`, which must never wait on a run); `None` otherwise. A run that
/// is dead may hold it a moment longer through a child it was starting
/// (forked, not yet past exec): `/proc/locks` still names the dead run as
/// the holder, and that is waited for, a few seconds at most.
pub fn try_exclusive() -> Option<SysctlLock> {
    try_exclusive_in(Path::new(MACHINE_DIR))
}

/// [`try_exclusive`] in the folder `dir`.
pub fn try_exclusive_in(dir: &Path) -> Option<SysctlLock> {
    let folder = open_dir(dir).ok()??;
    let main = open_file(&folder, dir, "sysctl.lock").ok()??;
    let take = || rustix::fs::flock(main.as_fd(), FlockOperation::NonBlockingLockExclusive).is_ok();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut taken = take();
    while !taken && Instant::now() < deadline && flock::held_only_by_the_dead(&main) {
        std::thread::sleep(Duration::from_millis(50));
        taken = take();
    }
    taken.then(|| taken_as(main, Hold::Exclusive, dir))
}

/// Unit tests that take the exclusive lock (or write the journal) in
/// folders of their own run one at a time: the journal's folder is one per
/// process.
#[cfg(test)]
pub(crate) fn tests_serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> tempfile::TempDir {
        crate::test_temp::dir("")
    }

    #[test]
    fn shared_holders_exclude_an_exclusive_one_and_it_is_counted() {
        let _one = tests_serial();
        let dir = tmp();
        let a = lock_in(dir.path(), Hold::Shared).unwrap().unwrap();
        let b = lock_in(dir.path(), Hold::Shared).unwrap().unwrap();
        assert!(!held());
        // flock locks belong to the open file: another open conflicts as
        // another process's would.
        assert!(try_exclusive_in(dir.path()).is_none(), "taken under shared holders");
        drop((a, b));
        // Another test's child, forked before its exec, may still hold a
        // copy of the dropped locks' files for a moment on a busy machine.
        let deadline = Instant::now() + Duration::from_secs(5);
        let ex = loop {
            match try_exclusive_in(dir.path()) {
                Some(ex) => break ex,
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                None => panic!("the lock stayed taken after its shared holders were dropped"),
            }
        };
        assert!(held());
        let waiting = {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || lock_in(&dir, Hold::Shared).unwrap().unwrap().hold())
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!waiting.is_finished(), "a shared lock was taken under an exclusive one");
        drop(ex);
        assert_eq!(waiting.join().unwrap(), Hold::Shared);
        assert!(!held());
    }

    #[test]
    fn an_exclusive_waiter_goes_before_later_shared_ones() {
        let _one = tests_serial();
        let dir = tmp();
        let first = lock_in(dir.path(), Hold::Shared).unwrap().unwrap();
        let writer = {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || {
                let lock = lock_in(&dir, Hold::Exclusive).unwrap().unwrap();
                std::thread::sleep(Duration::from_millis(200));
                (Instant::now(), lock.hold())
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        let reader = {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || {
                let _lock = lock_in(&dir, Hold::Shared).unwrap().unwrap();
                Instant::now()
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        drop(first);
        let (writer_done, hold) = writer.join().unwrap();
        assert_eq!(hold, Hold::Exclusive);
        assert!(reader.join().unwrap() >= writer_done, "the later reader went before the waiting writer");
    }

    #[test]
    fn a_machine_folder_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = lock_in(dir.path(), Hold::Shared).unwrap_err();
        assert!(e.message.contains("not to root alone"), "{e}");
    }
}
