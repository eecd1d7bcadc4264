//! Waiting for an `flock` the way a person can follow: polled, so Ctrl-C
//! and SIGTERM stop the wait at once; said at once and then every minute
//! (a log without a terminal shows it too, and `--progress json` says it
//! as a `wait` event: `progress::waiting`), naming the processes that hold
//! the lock, as `/proc/locks` tells; and its end said once the lock is
//! taken (a `waited` event: `progress::waited`).
//!
//! `/proc/locks` names the process that took an flock, even after it died
//! and a child it was starting (forked, not yet past exec) still holds the
//! descriptor: so "every holder is dead" is exactly "a dead run's
//! straggler", which lets go within moments.

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use rustix::fs::{FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use super::folder::OwnedDir;
use crate::error::{Error, Result};

/// A wait for one lock (possibly in several steps), and what it has said.
pub struct Waiter {
    /// The device and inode of the lock file whose holders are named.
    watched: (u64, u64),
    what: String,
    started: Instant,
    said: Option<Instant>,
    blocked: bool,
}

impl Waiter {
    /// A wait for `what` (`the machine's sysctl lock (PATH)`), whose
    /// holders are those of `watched`.
    pub fn new(watched: &File, what: String) -> Waiter {
        let watched = watched.metadata().map(|m| (m.dev(), m.ino())).unwrap_or_default();
        Waiter::for_inode(watched, what)
    }

    /// [`Waiter::new`] for a lock file known by its device and inode only
    /// (one this user may not open, whose holders it waits out).
    pub fn for_inode(watched: (u64, u64), what: String) -> Waiter {
        Waiter { watched, what, started: Instant::now(), said: None, blocked: false }
    }

    /// Whether some step had to wait for another holder.
    pub fn blocked(&self) -> bool {
        self.blocked
    }

    /// Take `op` (a non-blocking flock operation) on `file`, polling until
    /// it is free; a signal ends the wait with an error (the run stops).
    pub fn take(&mut self, file: &File, op: FlockOperation) -> Result<()> {
        let what = self.what.clone();
        self.until(|| match rustix::fs::flock(file.as_fd(), op) {
            Ok(()) => Ok(true),
            Err(Errno::WOULDBLOCK | Errno::INTR) => Ok(false),
            Err(e) => Err(Error::failed(format!("lock {what}: {}", std::io::Error::from(e)))),
        })
    }

    /// Poll `done` until it says so, saying the wait as [`Waiter::take`]
    /// does; a signal ends the wait with an error (the run stops).
    pub fn until(&mut self, mut done: impl FnMut() -> Result<bool>) -> Result<()> {
        loop {
            if done()? {
                // A wait that was said is said to be over, and the next
                // one is said at once.
                if self.said.take().is_some() {
                    crate::progress::waited(&self.what, self.started.elapsed());
                }
                return Ok(());
            }
            self.blocked = true;
            crate::interrupt::check()?;
            self.say();
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Say who holds the lock: at once, then once a minute.
    fn say(&mut self) {
        if self.said.is_some_and(|t| t.elapsed() < Duration::from_secs(60)) {
            return;
        }
        self.said = Some(Instant::now());
        let holders: Vec<String> = holders(self.watched).iter().map(Holder::describe).collect();
        crate::progress::waiting(&crate::progress::Wait { what: &self.what, holders: &holders, waited: self.started.elapsed() });
    }
}

/// An exclusive `flock` on a lock file in one of fslab's own folders (a
/// cache's `.lock`), held while the folder is written and released when
/// dropped (the file closes). Waited for as the other locks are: said,
/// and stopped by a signal.
pub struct FolderLock {
    _file: File,
}

impl FolderLock {
    /// Take the lock file `name` in `dir` (made 0600 when absent, never
    /// through a symlink); `what` names the lock in what is said while
    /// waiting (`the kernel cache's lock`).
    pub fn take(dir: &OwnedDir, name: &str, what: &str) -> Result<FolderLock> {
        let path = dir.path().join(name);
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir.fd(), name, flags, Mode::from_raw_mode(0o600))
            .map_err(|e| Error::io(&path, &format!("open {what}"), e.into()))?;
        let file = File::from(fd);
        Waiter::new(&file, format!("{what} ({})", path.display())).take(&file, FlockOperation::NonBlockingLockExclusive)?;
        Ok(FolderLock { _file: file })
    }
}

/// Whether every process `/proc/locks` names as holding a lock on `file`
/// is gone (a dead run's straggler holds it), or none does.
pub fn held_only_by_the_dead(file: &File) -> bool {
    let Ok(meta) = file.metadata() else { return false };
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    holder_pids(&locks, meta.dev(), meta.ino(), false)
        .iter()
        .all(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
}

/// Whether `/proc/locks` names a holder of an exclusive lock (`WRITE`) on
/// the file `dev`:`ino` — which anyone may tell, without opening the file.
pub fn held_exclusively((dev, ino): (u64, u64)) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    !holder_pids(&locks, dev, ino, true).is_empty()
}

/// A process holding a lock, as `/proc/locks` and `/proc/PID` tell.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Holder {
    pid: i32,
    uid: Option<u32>,
    command: String,
}

impl Holder {
    fn describe(&self) -> String {
        let uid = self.uid.map(|u| format!("uid {u}, ")).unwrap_or_default();
        format!("pid {} ({uid}{})", self.pid, self.command)
    }
}

/// The processes other than this one holding a lock on the file
/// `dev`:`ino`.
fn holders((dev, ino): (u64, u64)) -> Vec<Holder> {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let me = std::process::id() as i32;
    let mut found: Vec<Holder> = Vec::new();
    for pid in holder_pids(&locks, dev, ino, false) {
        if pid == me || found.iter().any(|h| h.pid == pid) {
            continue;
        }
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let words: Vec<String> = raw.split(|&b| b == 0).filter(|w| !w.is_empty()).map(printable).collect();
        let mut command = if words.is_empty() { "gone".to_string() } else { words.join(" ") };
        if command.chars().count() > 72 {
            command = command.chars().take(71).chain(['…']).collect();
        }
        let uid = std::fs::metadata(format!("/proc/{pid}")).ok().map(|m| m.uid());
        found.push(Holder { pid, uid, command });
    }
    found
}

/// A command-line word for a message: control characters shown as `?`.
fn printable(word: &[u8]) -> String {
    String::from_utf8_lossy(word).chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// The pids holding (not waiting for) a lock on the file `dev`:`ino`
/// (only exclusive ones, `WRITE`, when `exclusive`), from the text of
/// `/proc/locks` (`N: FLOCK ADVISORY WRITE PID MAJ:MIN:INO START END`,
/// majors and minors in hex; a waiter's line has `->`).
fn holder_pids(locks: &str, dev: u64, ino: u64, exclusive: bool) -> Vec<i32> {
    let want = format!("{:02x}:{:02x}:{ino}", rustix::fs::major(dev), rustix::fs::minor(dev));
    locks
        .lines()
        .filter(|line| !line.contains("->"))
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| *w == want)?;
            let pid_at = at.checked_sub(1)?;
            if exclusive && words.get(pid_at.checked_sub(1)?) != Some(&"WRITE") {
                return None;
            }
            words.get(pid_at)?.parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holders_are_read_from_proc_locks_and_waiters_are_not() {
        let text = "1: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 4343 fd:01:77 0 EOF\n\
                    2: FLOCK  ADVISORY  READ 4444 fd:01:78 0 EOF\n\
                    3: FLOCK  ADVISORY  READ 4545 08:01:77 0 EOF\n";
        let dev = rustix::fs::makedev(0xfd, 1);
        assert_eq!(holder_pids(text, dev, 77, false), vec![4242]);
        assert_eq!(holder_pids(text, dev, 77, true), vec![4242]);
        assert_eq!(holder_pids(text, rustix::fs::makedev(8, 1), 77, false), vec![4545]);
        assert!(holder_pids(text, rustix::fs::makedev(8, 1), 77, true).is_empty(), "a shared holder is not exclusive");
        assert!(holder_pids(text, dev, 79, false).is_empty());
    }

    #[test]
    fn a_waiter_names_the_holder_and_a_dead_holders_straggler_is_known() {
        let dir = crate::test_temp::dir("");
        let path = dir.path().join("lock");
        let file = File::create(&path).unwrap();
        assert!(held_only_by_the_dead(&file), "no holder at all");
        // A child holds it: alive, then gone with a straggler (its own
        // child) keeping the descriptor.
        let script = format!("exec 9>{p}; flock 9; (sleep 2 9>&9 &) ; echo held", p = path.display());
        let mut child = std::process::Command::new("sh")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        child.wait().unwrap();
        let meta = file.metadata().unwrap();
        let held = holders((meta.dev(), meta.ino()));
        assert!(!held.is_empty(), "the lock is held by the straggler");
        assert!(held_only_by_the_dead(&file), "{held:?}");
    }
}
