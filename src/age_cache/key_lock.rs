//! The lock of one key of the aged-image cache: `KEY.lock` beside
//! `KEY.img` and `KEY.json`.
//!
//! The design decision: a key is aged once while others wait, and an entry
//! a live run starts its cases from is never removed under it. So a run
//! holds its key's lock shared for as long as it uses the entry, and
//! exclusively while it looks the key up and makes the entry; `cleanup
//! --cache` removes a key only when it can take the lock exclusively
//! without waiting. A lock file is removed only by whoever holds it
//! exclusively, and a taker checks after locking that the name still is the
//! file it locked (else it was removed meanwhile, and it tries again), so
//! two runs never hold two different files for one key.

use std::fs::File;

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::ledger::flock::Waiter;
use crate::ledger::folder::{FileId, OwnedDir};
use crate::error::{Error, Result};

/// A key's lock, held (shared or exclusive); released when dropped.
#[derive(Debug)]
pub struct KeyLock {
    file: File,
    name: String,
}

/// The lock file's name for `key`.
fn name_of(key: &str) -> String {
    format!("{key}.lock")
}

/// `KEY.lock` in `dir`, made 0600 when absent; it must be a regular file
/// of ours (never a symlink).
fn open(dir: &OwnedDir, name: &str) -> Result<File> {
    let flags = OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let path = dir.path().join(name);
    let fd = rustix::fs::openat(dir.fd(), name, flags, Mode::from_raw_mode(0o600))
        .map_err(|e| Error::io(&path, "open the cache key's lock", e.into()))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&path, "stat", e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || stat.st_uid != rustix::process::geteuid().as_raw() {
        return Err(Error::environment(format!("{}: not a lock file of fslab's; remove it", path.display())));
    }
    Ok(File::from(fd))
}

/// Whether the name `name` in `dir` still is the file open as `file`.
fn still_named(dir: &OwnedDir, name: &str, file: &File) -> bool {
    let now = rustix::fs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW).ok().map(|s| FileId { dev: s.st_dev, ino: s.st_ino });
    now.is_some() && now == FileId::of(file).ok()
}

impl KeyLock {
    /// Take `key`'s lock in `dir`, shared or exclusive, waiting (and
    /// saying so, as `what`) while another run holds it the other way; and
    /// whether it had to wait.
    pub fn take(dir: &OwnedDir, key: &str, exclusive: bool, what: &str) -> Result<(KeyLock, bool)> {
        let name = name_of(key);
        let op = if exclusive { FlockOperation::NonBlockingLockExclusive } else { FlockOperation::NonBlockingLockShared };
        let mut waited = false;
        loop {
            let file = open(dir, &name)?;
            let mut waiter = Waiter::new(&file, format!("{what} ({})", dir.path().join(&name).display()));
            waiter.take(&file, op)?;
            waited |= waiter.blocked();
            if still_named(dir, &name, &file) {
                return Ok((KeyLock { file, name }, waited));
            }
        }
    }

    /// Take `key`'s lock exclusively if no run holds it; `None` if one
    /// does.
    pub fn try_exclusive(dir: &OwnedDir, key: &str) -> Result<Option<KeyLock>> {
        let name = name_of(key);
        let file = open(dir, &name)?;
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) if still_named(dir, &name, &file) => Ok(Some(KeyLock { file, name })),
            Ok(()) | Err(Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(Error::io(&dir.path().join(&name), "lock", e.into())),
        }
    }

    /// Hold it shared from now on (after making the entry): runs waiting
    /// to use the entry go on, `cleanup --cache` still cannot remove it.
    pub fn share(&self) -> Result<()> {
        rustix::fs::flock(&self.file, FlockOperation::LockShared)
            .map_err(|e| Error::failed(format!("{}: hold the cache key's lock shared: {e}", self.name)))
    }

    /// Remove the lock file (held exclusively), then let it go.
    pub fn remove(self, dir: &OwnedDir) -> Result<()> {
        match rustix::fs::unlinkat(dir.fd(), self.name.as_str(), AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(Error::io(&dir.path().join(&self.name), "remove the cache key's lock", e.into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::folder::FolderRole;

    const KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn shared_users_keep_out_an_exclusive_taker_and_a_removed_lock_is_not_held_twice() {
        let tmp = crate::test_temp::dir("");
        let dir = OwnedDir::open_or_make(&tmp.path().join("cache"), FolderRole::Cache).unwrap();
        let (user, waited) = KeyLock::take(&dir, KEY, false, "test").unwrap();
        assert!(!waited);
        let (other, _) = KeyLock::take(&dir, KEY, false, "test").unwrap();
        assert!(KeyLock::try_exclusive(&dir, KEY).unwrap().is_none(), "taken under its users");
        drop((user, other));
        let remover = KeyLock::try_exclusive(&dir, KEY).unwrap().expect("free");
        // A taker that opened the file before it was removed finds the name
        // gone once it has the lock, and locks the new file instead.
        let stale = open(&dir, &name_of(KEY)).unwrap();
        remover.remove(&dir).unwrap();
        rustix::fs::flock(&stale, FlockOperation::NonBlockingLockExclusive).unwrap();
        assert!(!still_named(&dir, &name_of(KEY), &stale));
        let (fresh, _) = KeyLock::take(&dir, KEY, true, "test").unwrap();
        assert!(still_named(&dir, &name_of(KEY), &fresh.file));
        assert!(KeyLock::try_exclusive(&dir, KEY).unwrap().is_none());
    }
}
