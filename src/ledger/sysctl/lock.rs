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
//! Only root takes it: an flock needs no more than a descriptor, so a file
//! another user can open is one that user can hold for ever, keeping every
//! root run waiting. The files are root's, 0600 (one an older fslab left
//! open to others is replaced, not given a new mode, as a descriptor opened
//! before would still lock it). A run of another user waits out a root run
//! that holds the lock exclusively — `/proc/locks` names it without the
//! file being opened — then measures holding nothing: a root run that
//! changes sysctls later is not kept waiting by it, so only root's own
//! measuring runs are sure no other run changes sysctls under them.
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

/// How many [`Pinned`] holds this process has. While it has one (a
/// bisect, across its steps) it takes the lock shared again without the
/// turnstile: a run waiting there for the lock exclusively waits for the
/// pinned hold, so waiting behind it would wait for ever.
static PINNED: AtomicUsize = AtomicUsize::new(0);

/// The lock held shared for the life of this value by a process that
/// measures many runs in a row: the machine's settings stay as they are
/// between its runs, which take the lock shared again at once.
#[derive(Debug)]
pub struct Pinned {
    _lock: Option<SysctlLock>,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        PINNED.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Hold the machine's lock shared until the [`Pinned`] is dropped (as
/// [`lock`] takes it: waiting its turn first).
pub fn pin_shared() -> Result<Pinned> {
    let lock = lock(Hold::Shared)?;
    PINNED.fetch_add(1, Ordering::SeqCst);
    Ok(Pinned { _lock: lock })
}

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

/// Open the machine folder `dir`: root makes it (0755: other users look
/// through it at who holds the lock) and insists it is root's and written
/// by no one else, reached through no symlink; for anyone else it must
/// already be so, else `None` (no root run has been here since boot).
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

/// The uid owning the machine folder: the only user who may take the lock.
fn owner(folder: &File, dir: &Path) -> Result<u32> {
    folder.metadata().map(|m| m.uid()).map_err(|e| Error::io(dir, "stat", e))
}

/// Open (making it, 0600) the lock file `name` in the machine folder, as
/// its owner. A file another user may open, or that is not the owner's
/// (an older fslab made them 0644), is replaced by a new one rather than
/// given a new mode: whoever opened it before keeps the descriptor, and an
/// flock needs no more than that.
fn open_file(dir: &File, at: &Path, name: &str) -> Result<File> {
    let path = at.join(name);
    let uid = owner(dir, at)?;
    for _ in 0..3 {
        let flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::CREATE | OFlags::RDWR;
        let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))
            .map_err(|e| Error::io(&path, "open the sysctl lock", e.into()))?;
        let file = File::from(fd);
        let meta = file.metadata().map_err(|e| Error::io(&path, "stat", e))?;
        if !meta.is_file() {
            return Err(Error::environment(format!("{}: not a lock file (not a regular file); remove it as root", path.display())));
        }
        if meta.uid() == uid && meta.mode() & 0o077 == 0 {
            return Ok(file);
        }
        replace(dir, &path, name)?;
    }
    Err(Error::environment(format!(
        "{}: the sysctl lock file was replaced three times and is still open to others; `rm -r {}` as root, and fslab makes it again",
        path.display(),
        at.display()
    )))
}

/// Put a new, empty lock file (0600) in place of `name`, by rename.
fn replace(dir: &File, path: &Path, name: &str) -> Result<()> {
    let new = format!("{name}.new.{}", std::process::id());
    let _ = rustix::fs::unlinkat(dir, new.as_str(), rustix::fs::AtFlags::empty());
    let flags = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::CREATE | OFlags::EXCL | OFlags::RDWR;
    let made = rustix::fs::openat(dir, new.as_str(), flags, Mode::from_raw_mode(0o600))
        .and_then(|fd| rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600)))
        .and_then(|()| rustix::fs::renameat(dir, new.as_str(), dir, name));
    made.map_err(|e| {
        let _ = rustix::fs::unlinkat(dir, new.as_str(), rustix::fs::AtFlags::empty());
        Error::io(path, "replace the sysctl lock file others could open", e.into())
    })
}

/// Whether `name` in the folder still is the file `file` (another root run
/// may have replaced an older fslab's file meanwhile).
fn still_named(dir: &File, name: &str, file: &File) -> bool {
    let (Ok(now), Ok(held)) = (rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW), file.metadata()) else {
        return false;
    };
    inode(&now) == (held.dev(), held.ino())
}

/// The device and inode of a stat.
#[allow(clippy::unnecessary_cast)] // their types differ between targets
fn inode(st: &rustix::fs::Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// Take the machine's sysctl lock as `hold`, waiting (and saying for
/// whom) while another run holds it. Only root (the machine folder's
/// owner) takes it; another user's run cannot (the files are root's,
/// 0600), so it can never keep root's runs waiting: it waits out a run
/// that holds the lock exclusively (as `/proc/locks` tells) and then goes
/// on holding nothing, `None`, as it does when no root run has made the
/// lock since boot.
pub fn lock(hold: Hold) -> Result<Option<SysctlLock>> {
    lock_in(Path::new(MACHINE_DIR), hold)
}

/// [`lock`] in the folder `dir` (tests lock in a folder of their own).
pub fn lock_in(dir: &Path, hold: Hold) -> Result<Option<SysctlLock>> {
    let Some(folder) = open_dir(dir)? else { return Ok(None) };
    if owner(&folder, dir)? != rustix::process::geteuid().as_raw() {
        return watch(&folder, dir, hold);
    }
    let what = format!("the machine's sysctl lock ({})", dir.join("sysctl.lock").display());
    if hold == Hold::Shared && PINNED.load(Ordering::SeqCst) > 0 {
        // Pinned shared here already: no run holds it exclusively, so a
        // second shared hold is granted at once.
        let main = open_file(&folder, dir, "sysctl.lock")?;
        let shared = rustix::fs::flock(main.as_fd(), FlockOperation::NonBlockingLockShared);
        if shared.is_ok() && still_named(&folder, "sysctl.lock", &main) {
            return Ok(Some(taken_as(main, hold, dir)));
        }
    }
    loop {
        let queue = open_file(&folder, dir, "sysctl.queue")?;
        let main = open_file(&folder, dir, "sysctl.lock")?;
        let mut waiting = Waiter::new(&main, what.clone());
        waiting.take(&queue, FlockOperation::NonBlockingLockExclusive)?;
        let op = match hold {
            Hold::Shared => FlockOperation::NonBlockingLockShared,
            Hold::Exclusive => FlockOperation::NonBlockingLockExclusive,
        };
        let taken = waiting.take(&main, op);
        let _ = rustix::fs::flock(queue.as_fd(), FlockOperation::Unlock);
        taken?;
        if still_named(&folder, "sysctl.lock", &main) {
            return Ok(Some(taken_as(main, hold, dir)));
        }
    }
}

/// A run of a user other than the folder's owner: it may not take the
/// lock, so it waits while a run holds it exclusively (one changing
/// sysctls), then goes on holding nothing. A root run that starts changing
/// sysctls after that is not kept waiting by it.
pub(super) fn watch(folder: &File, dir: &Path, hold: Hold) -> Result<Option<SysctlLock>> {
    if hold == Hold::Exclusive {
        return Err(Error::environment("only root changes sysctls (the machine's sysctl lock is root's): run as root, or leave --sysctl out"));
    }
    let path = dir.join("sysctl.lock");
    let meta = match rustix::fs::statat(folder, "sysctl.lock", rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(meta) => meta,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(Error::io(&path, "look at the sysctl lock", e.into())),
    };
    if rustix::fs::FileType::from_raw_mode(meta.st_mode) != rustix::fs::FileType::RegularFile || meta.st_uid != owner(folder, dir)? {
        return Err(Error::environment(format!("{}: not a lock file of the machine folder's owner; remove it as root", path.display())));
    }
    let inode = inode(&meta);
    let what = format!("the machine's sysctl lock ({})", path.display());
    Waiter::for_inode(inode, what).until(|| Ok(!flock::held_exclusively(inode)))?;
    Ok(None)
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
    if owner(&folder, dir).ok()? != rustix::process::geteuid().as_raw() {
        return None;
    }
    let main = open_file(&folder, dir, "sysctl.lock").ok()?;
    let take = || {
        rustix::fs::flock(main.as_fd(), FlockOperation::NonBlockingLockExclusive).is_ok()
            && still_named(&folder, "sysctl.lock", &main)
    };
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
    fn a_pinned_process_takes_it_shared_again_past_a_waiter_for_it_exclusively() {
        let _one = tests_serial();
        let dir = tmp();
        let first = lock_in(dir.path(), Hold::Shared).unwrap().unwrap();
        PINNED.fetch_add(1, Ordering::SeqCst);
        let pinned = Pinned { _lock: Some(first) };
        // A run waiting for the lock exclusively holds the turnstile.
        let queue = std::fs::File::open(dir.path().join("sysctl.queue")).unwrap();
        rustix::fs::flock(queue.as_fd(), FlockOperation::NonBlockingLockExclusive).unwrap();
        let started = Instant::now();
        let again = lock_in(dir.path(), Hold::Shared).unwrap().unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "waited {:?} behind the turnstile", started.elapsed());
        drop((again, pinned));
        assert_eq!(PINNED.load(Ordering::SeqCst), 0);
    }

    /// The lock in `dir`, taken exclusively once its holders dropped it:
    /// another test's child, forked before its exec, may still hold a copy
    /// of their files for a moment on a busy machine.
    fn exclusive_once_free(dir: &Path) -> SysctlLock {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match try_exclusive_in(dir) {
                Some(ex) => return ex,
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                None => panic!("the lock stayed taken after its holders were dropped"),
            }
        }
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
        let ex = exclusive_once_free(dir.path());
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

    /// `flock -x -n` on each of `files` as nobody (uid 65534), in the
    /// background: the child and whether it said it holds them all.
    fn nobody_holds(files: &[PathBuf]) -> (std::process::Child, bool) {
        let opens: Vec<String> = files.iter().enumerate().map(|(i, f)| format!("exec {}<'{}'", i + 3, f.display())).collect();
        let takes: Vec<String> = (0..files.len()).map(|i| format!("flock -x -n {}", i + 3)).collect();
        let script = format!("{} && {} && echo held; exec sleep 30", opens.join(" && "), takes.join(" && "));
        let mut child = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", &script])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let _ = std::io::BufRead::read_line(&mut out, &mut line);
        (child, line.trim() == "held")
    }

    #[test]
    fn no_other_user_can_hold_the_lock_against_root_even_through_files_an_older_fslab_left_open() {
        use std::os::unix::fs::PermissionsExt;
        if !rustix::process::geteuid().is_root() {
            assert!(std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_none(), "sysctl_lock_other_user needs root");
            return;
        }
        let _one = tests_serial();
        let dir = tmp();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let files = [dir.path().join("sysctl.queue"), dir.path().join("sysctl.lock")];
        // The files as an older fslab made them, open to every reader, and
        // another user holding both through descriptors opened then.
        drop(lock_in(dir.path(), Hold::Shared).unwrap().unwrap());
        for f in &files {
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let (mut attacker, held) = nobody_holds(&files);
        assert!(held, "the setup: nobody could not take the files an older fslab left");
        // Root's exclusive run is not kept waiting by them.
        let taking = {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || lock_in(&dir, Hold::Exclusive).map(|l| l.map(|l| l.hold())))
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !taking.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let finished = taking.is_finished();
        let _ = attacker.kill();
        let _ = attacker.wait();
        assert!(finished, "root's exclusive lock waited for another user's flock");
        assert_eq!(taking.join().unwrap().unwrap(), Some(Hold::Exclusive));
        // And the files now are root's alone: nobody cannot open them again.
        for f in &files {
            let meta = std::fs::metadata(f).unwrap();
            assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o600), "{}", f.display());
        }
        let (mut again, held) = nobody_holds(&files[1..]);
        let _ = again.kill();
        let _ = again.wait();
        assert!(!held, "nobody took the lock again");
    }

    #[test]
    fn a_user_who_may_not_take_the_lock_waits_out_only_an_exclusive_holder() {
        let _one = tests_serial();
        let dir = tmp();
        let folder = open_dir(dir.path()).unwrap().unwrap();
        // No lock made yet: nothing to wait for, nothing held.
        assert!(watch(&folder, dir.path(), Hold::Shared).unwrap().is_none());
        let shared = lock_in(dir.path(), Hold::Shared).unwrap().unwrap();
        assert!(watch(&folder, dir.path(), Hold::Shared).unwrap().is_none(), "waited for a shared holder");
        drop(shared);
        let e = watch(&folder, dir.path(), Hold::Exclusive).unwrap_err();
        assert!(e.message.contains("only root changes sysctls"), "{e}");
        let held = exclusive_once_free(dir.path());
        let watching = {
            let dir = dir.path().to_path_buf();
            std::thread::spawn(move || watch(&open_dir(&dir).unwrap().unwrap(), &dir, Hold::Shared).unwrap().is_none())
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!watching.is_finished(), "went on under an exclusive holder");
        drop(held);
        assert!(watching.join().unwrap());
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
