//! The ledger: every resource a run makes, written down before it is made,
//! so that whatever ends the run — normal exit, an error, a signal, a
//! panic, or SIGKILL — it can be released, by the run itself or by the
//! next fslab that starts.
//!
//! One ledger file per run in the state folder, one JSON line per event:
//! `{"make": RESOURCE}` before a resource is made, `{"released": N}` after
//! the N-th is released. The live run holds an exclusive `flock` on its
//! ledger for its whole life; the kernel drops that lock when the process
//! dies, however it dies, so "the lock can be taken" is exactly "the run is
//! gone" — no pid that could be reused by another process is trusted.
//! Releasing is idempotent: a resource recorded but never made (killed in
//! between) releases as a no-op.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::fs::FlockOperation;
use rustix::mount::UnmountFlags;
use rustix::process::{Pid, Signal};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Something a run makes and must give back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// A directory fslab made to hold a run's images and mount points;
    /// removed if empty.
    RunDir(PathBuf),
    /// A sparse image file; deleted.
    Image(PathBuf),
    /// A loop device over this image; found by its backing file (its name
    /// is only known once attached) and detached.
    Loop(PathBuf),
    /// An empty directory made to mount on; removed.
    MountPoint(PathBuf),
    /// A mount at this path; unmounted (lazily, as a last resort).
    Mount(PathBuf),
    /// A sysctl and the value it had before; the value is put back.
    Sysctl {
        /// Dotted name, e.g. `vm.dirty_ratio`.
        key: String,
        /// The value read before the change.
        old: String,
        /// For a writeback pair (`vm.dirty_bytes` and `vm.dirty_ratio`,
        /// ...), the other member and its value before: setting one zeroes
        /// the other, so both are put back together.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        partner: Option<(String, String)>,
    },
    /// A tracefs instance directory; removed.
    TraceInstance(PathBuf),
    /// A working directory made inside a user's `--dir`; removed with
    /// everything the measured command left in it.
    WorkDir(PathBuf),
    /// A measured command, leader of its own process group, identified by
    /// pid and start time (so a reused pid is never signalled).
    Child {
        /// Process id, also its process-group id.
        pid: i32,
        /// Start time in clock ticks since boot, from `/proc/PID/stat`.
        start_ticks: u64,
    },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    /// The first line: the fslab process that owns the run.
    Owner { pid: i32, start_ticks: u64 },
    Make(Resource),
    Released(usize),
}

/// A handle to one recorded resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token(usize);

/// The live ledger of this run. Dropping it releases whatever is still
/// held, newest first, and deletes the ledger file.
#[derive(Debug)]
pub struct Ledger {
    path: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    file: File,
    entries: Vec<(Resource, bool)>,
    closed: bool,
}

/// The folder holding ledgers: `$FSLAB_STATE_DIR`, else
/// `/var/tmp/fslab/state` for root and `/var/tmp/fslab-UID/state` for
/// anyone else (whose ledgers root's cleanup must not trust, and who
/// cannot write root's).
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FSLAB_STATE_DIR") {
        return PathBuf::from(dir);
    }
    let uid = rustix::process::geteuid();
    if uid.is_root() {
        PathBuf::from("/var/tmp/fslab/state")
    } else {
        PathBuf::from(format!("/var/tmp/fslab-{}/state", uid.as_raw()))
    }
}

impl Ledger {
    /// Start the ledger of run `run_id` in `dir`, locked for this process.
    pub fn create(dir: &Path, run_id: &str) -> Result<Ledger> {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create the state folder", e))?;
        // Created under a name cleanup ignores, locked, then renamed: a
        // cleaner never sees an unlocked ledger of a live run.
        let tmp = dir.join(format!(".{run_id}.tmp"));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| Error::io(&tmp, "create the run's ledger", e))?;
        rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| Error::io(&tmp, "lock the run's ledger", e.into()))?;
        let pid = std::process::id() as i32;
        let owner = Line::Owner { pid, start_ticks: start_ticks(pid).unwrap_or(0) };
        let mut file = file;
        write_line(&mut file, &owner).map_err(|e| Error::io(&tmp, "write the run's ledger", e))?;
        let path = dir.join(format!("{run_id}.ledger"));
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, "name the run's ledger", e))?;
        Ok(Ledger { path, inner: Mutex::new(Inner { file, entries: Vec::new(), closed: false }) })
    }

    /// The ledger file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A command for an external tool that makes or releases resources
    /// (losetup, mkfs, mount): it dies with fslab, and it holds the
    /// ledger's lock while it lives, so a cleanup never runs while a
    /// killed run's last `losetup` or `mount` is still finishing.
    pub fn tool_command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        use std::os::fd::AsRawFd;
        let mut command = Command::new(program);
        crate::sys::process::kill_with_parent(&mut command);
        let fd = self.inner.lock().unwrap_or_else(|p| p.into_inner()).file.as_raw_fd();
        crate::sys::process::inherit_fd(&mut command, fd);
        command
    }

    /// Write `resource` down; call this *before* making it.
    pub fn record(&self, resource: Resource) -> Result<Token> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        write_line(&mut inner.file, &Line::Make(resource.clone()))
            .map_err(|e| Error::io(&self.path, "write the run's ledger", e))?;
        inner.entries.push((resource, false));
        Ok(Token(inner.entries.len() - 1))
    }

    /// Release one resource now (and every later one it depends on is the
    /// caller's business: release in reverse order of making).
    pub fn release(&self, token: Token) -> Result<()> {
        let resource = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            match inner.entries.get(token.0) {
                Some((r, false)) => r.clone(),
                _ => return Ok(()),
            }
        };
        release(&resource)?;
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.entries[token.0].1 = true;
        let _ = write_line(&mut inner.file, &Line::Released(token.0));
        Ok(())
    }

    /// Release everything still held, newest first; returns what could not
    /// be released. The ledger file is deleted only when all went.
    pub fn release_all(&self) -> Vec<Error> {
        let mut errors = Vec::new();
        let held: Vec<usize> = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            if inner.closed {
                return errors;
            }
            inner.entries.iter().enumerate().filter(|(_, (_, done))| !done).map(|(i, _)| i).collect()
        };
        for index in held.into_iter().rev() {
            if let Err(e) = self.release(Token(index)) {
                errors.push(e);
            }
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if errors.is_empty() {
            let _ = fs::remove_file(&self.path);
            inner.closed = true;
        }
        errors
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        for e in self.release_all() {
            eprintln!("fslab: could not release: {e} (run `fslab cleanup` to retry)");
        }
    }
}

#[cfg(test)]
impl Ledger {
    /// A ledger of its own in a folder that is gone again, for unit tests
    /// that run work directly: what the work records is released when the
    /// ledger is dropped, as in a run.
    pub fn for_tests() -> Ledger {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").expect("a temporary folder");
        Ledger::create(dir.path(), "unit-test").expect("a ledger in a fresh folder")
    }

    /// Act as if the process died: unlock and forget, releasing nothing.
    fn abandon(self) {
        let mut inner = self.inner.lock().unwrap();
        rustix::fs::flock(inner.file.as_fd(), FlockOperation::Unlock).unwrap();
        inner.closed = true;
    }
}

fn write_line(file: &mut File, line: &Line) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(line).map_err(io::Error::other)?;
    bytes.push(b'\n');
    // One write of a whole line to an O_APPEND file: a kill can cut the
    // ledger between lines, never inside one the reader would trust.
    file.write_all(&bytes)
}

/// What `cleanup` did with one dead run's ledger.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CleanedRun {
    /// The ledger file.
    pub ledger: PathBuf,
    /// Resources released, described.
    pub released: Vec<String>,
    /// Resources that could not be released, and why.
    pub failed: Vec<String>,
}

/// Release what dead runs left: every ledger in `dir` whose lock can be
/// taken (its run is gone) and that belongs to this user. Live runs are
/// never touched.
pub fn cleanup_dead(dir: &Path) -> Result<Vec<CleanedRun>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, "read the state folder", e)),
    };
    let me = rustix::process::geteuid().as_raw();
    let mut cleaned = Vec::new();
    let all: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    // A run killed while creating its ledger leaves only an unnamed,
    // unlocked `.RUN.tmp`, which records nothing.
    for tmp in all.iter().filter(|p| p.extension().is_some_and(|x| x == "tmp")) {
        if let Ok(file) = File::open(tmp) {
            if rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_ok()
                && file.metadata().is_ok_and(|m| m.uid() == me)
            {
                let _ = fs::remove_file(tmp);
            }
        }
    }
    let mut paths: Vec<PathBuf> = all.into_iter().filter(|p| p.extension().is_some_and(|x| x == "ledger")).collect();
    paths.sort();
    for path in paths {
        let Ok(file) = OpenOptions::new().read(true).append(true).open(&path) else { continue };
        // Another user's ledger is not evidence enough to unmount or
        // delete anything.
        if file.metadata().map(|m| m.uid() != me).unwrap_or(true) {
            continue;
        }
        if !lock_when_dead(&file) {
            continue; // a live run
        }
        cleaned.push(release_ledger(&path, file));
    }
    Ok(cleaned)
}

/// Take the lock of a ledger whose run is gone. A run whose fslab process
/// is dead may still hold it for a moment through a tool it started (a
/// `losetup` or `mount` finishing its system call before its death signal
/// lands): wait for those, a few seconds at most.
fn lock_when_dead(file: &File) -> bool {
    let try_lock = || rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_ok();
    if try_lock() {
        return true;
    }
    let owner = io::BufReader::new(file).lines().next().and_then(|l| l.ok()).and_then(|l| serde_json::from_str(&l).ok());
    let Some(Line::Owner { pid, start_ticks: ticks }) = owner else { return false };
    if start_ticks(pid).is_some_and(|now| now == ticks) {
        return false; // its fslab is alive
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        if try_lock() {
            return true;
        }
    }
    false
}

fn release_ledger(path: &Path, mut file: File) -> CleanedRun {
    let mut run = CleanedRun { ledger: path.to_path_buf(), ..Default::default() };
    // Read from the start: looking for the owner may have moved the offset.
    if let Err(e) = io::Seek::seek(&mut file, io::SeekFrom::Start(0)) {
        run.failed.push(format!("reading the ledger: {e}"));
        return run;
    }
    let mut entries: Vec<(Resource, bool)> = Vec::new();
    for line in io::BufReader::new(&file).lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Line>(&line) {
            Ok(Line::Owner { .. }) => {}
            Ok(Line::Make(r)) => entries.push((r, false)),
            Ok(Line::Released(i)) => {
                if let Some(e) = entries.get_mut(i) {
                    e.1 = true;
                }
            }
            Err(_) => break, // a torn last line: it was never acted on
        }
    }
    for (index, (resource, done)) in entries.iter().enumerate().rev() {
        if *done {
            continue;
        }
        match release(resource) {
            Ok(()) => {
                run.released.push(describe(resource));
                let _ = write_line(&mut file, &Line::Released(index));
            }
            Err(e) => run.failed.push(format!("{}: {e}", describe(resource))),
        }
    }
    if run.failed.is_empty() {
        let _ = fs::remove_file(path);
    }
    run
}

/// A resource in words, for what cleanup prints.
pub fn describe(resource: &Resource) -> String {
    match resource {
        Resource::RunDir(p) => format!("run folder {}", p.display()),
        Resource::Image(p) => format!("image {}", p.display()),
        Resource::Loop(p) => format!("loop device over {}", p.display()),
        Resource::MountPoint(p) => format!("mount point {}", p.display()),
        Resource::Mount(p) => format!("mount on {}", p.display()),
        Resource::Sysctl { key, old, partner: None } => format!("sysctl {key} (back to {old})"),
        Resource::Sysctl { key, old, partner: Some((other, was)) } => {
            format!("sysctl {key} (back to {old}, with {other} {was})")
        }
        Resource::TraceInstance(p) => format!("trace instance {}", p.display()),
        Resource::WorkDir(p) => format!("work folder {}", p.display()),
        Resource::Child { pid, .. } => format!("process group {pid}"),
    }
}

/// Give one resource back; a resource that is already gone is released.
pub fn release(resource: &Resource) -> Result<()> {
    match resource {
        Resource::RunDir(p) => match fs::remove_dir(p) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(Error::io(p, "remove the run folder", e))
            }
            _ => Ok(()),
        },
        Resource::MountPoint(p) | Resource::TraceInstance(p) => ignore_missing(fs::remove_dir(p), p, "remove"),
        Resource::Image(p) => ignore_missing(fs::remove_file(p), p, "delete the image"),
        Resource::WorkDir(p) => super::remove::remove_work_folder(p),
        Resource::Loop(image) => {
            for device in loops_over(image) {
                let out = Command::new("losetup").arg("-d").arg(&device).output();
                match out {
                    Ok(o) if o.status.success() => {}
                    Ok(o) if loops_over(image).contains(&device) => {
                        return Err(Error::failed(format!(
                            "losetup -d {}: {}",
                            device.display(),
                            String::from_utf8_lossy(&o.stderr).trim()
                        )));
                    }
                    Ok(_) => {}
                    Err(e) => return Err(Error::io(Path::new("losetup"), "run", e)),
                }
            }
            // A device still open somewhere is only marked to detach on its
            // last close (autoclear), and `losetup -d` succeeds at once:
            // released means gone, so wait for that.
            let deadline = Instant::now() + Duration::from_secs(5);
            while let Some(device) = loops_over(image).first() {
                if Instant::now() >= deadline {
                    return Err(Error::failed(format!(
                        "{} is still attached to {}: something holds it open; it detaches when closed",
                        device.display(),
                        image.display()
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(())
        }
        Resource::Mount(p) => unmount(p),
        Resource::Sysctl { key, old, partner } => super::sysctl::restore(key, old, partner.as_ref()),
        Resource::Child { pid, start_ticks } => {
            kill_group(*pid, *start_ticks);
            Ok(())
        }
    }
}

fn ignore_missing(result: io::Result<()>, path: &Path, what: &str) -> Result<()> {
    match result {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io(path, what, e)),
        _ => Ok(()),
    }
}

/// Loop devices whose backing file is `image`, from sysfs.
pub fn loops_over(image: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let want = image.as_os_str().as_bytes();
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir("/sys/block") else { return found };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.as_bytes().starts_with(b"loop") {
            continue;
        }
        let Ok(mut backing) = fs::read(entry.path().join("loop/backing_file")) else { continue };
        if backing.last() == Some(&b'\n') {
            backing.pop();
        }
        let backing = backing.strip_suffix(b" (deleted)").unwrap_or(&backing);
        if backing == want {
            found.push(Path::new("/dev").join(&name));
        }
    }
    found
}

/// Unmount `path` if something is mounted there, waiting up to five
/// seconds while it is busy, then detaching lazily so the mount is gone
/// from the namespace even if a stray process still holds a file.
pub fn unmount(path: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if crate::layout::mounts::find_by_mount_point(path).is_none() {
            return Ok(());
        }
        match rustix::mount::unmount(path, UnmountFlags::empty()) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::BUSY) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(rustix::io::Errno::BUSY) => {
                return rustix::mount::unmount(path, UnmountFlags::DETACH)
                    .map_err(|e| Error::io(path, "detach the busy mount", e.into()));
            }
            Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(e) => return Err(Error::io(path, "unmount", e.into())),
        }
    }
}

/// A process's start time in clock ticks since boot (`/proc/PID/stat`
/// field 22), the second half of its identity.
pub fn start_ticks(pid: i32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces or ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// SIGKILL the process group a measured command led, if it is still
/// ours: the leader alive with the recorded start time, or the leader gone
/// (its pid stays reserved while group members live, so they are ours).
fn kill_group(pid: i32, recorded: u64) {
    let Some(pid) = Pid::from_raw(pid) else { return };
    match start_ticks(pid.as_raw_nonzero().get()) {
        Some(ticks) if ticks != recorded => {} // a different process now
        _ => {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_runs_ledger_is_released_newest_first_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let made = dir.path().join("made");
        let ledger = Ledger::create(&state, "test-1").unwrap();
        ledger.record(Resource::RunDir(made.clone())).unwrap();
        fs::create_dir(&made).unwrap();
        let file = made.join("image");
        ledger.record(Resource::Image(file.clone())).unwrap();
        fs::write(&file, b"x").unwrap();
        // Recorded but never made: releasing it must be a no-op.
        ledger.record(Resource::MountPoint(made.join("never"))).unwrap();

        // While the run lives, cleanup leaves it alone.
        assert!(cleanup_dead(&state).unwrap().is_empty());
        assert!(file.exists());

        // "Kill" it: forget the ledger without running Drop, then drop the
        // lock the way process death does, by closing the descriptor.
        let path = ledger.path().to_path_buf();
        ledger.abandon();

        let cleaned = cleanup_dead(&state).unwrap();
        assert_eq!(cleaned.len(), 1, "{cleaned:?}");
        assert!(cleaned[0].failed.is_empty(), "{cleaned:?}");
        assert_eq!(cleaned[0].released.len(), 3);
        assert!(!file.exists() && !made.exists());
        assert!(!path.exists());
    }

    #[test]
    fn dropping_a_ledger_releases_and_released_items_are_not_redone() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        {
            let ledger = Ledger::create(&state, "test-2").unwrap();
            let ta = ledger.record(Resource::MountPoint(a.clone())).unwrap();
            fs::create_dir(&a).unwrap();
            ledger.release(ta).unwrap();
            // Made again by someone else after release: must survive.
            fs::create_dir(&a).unwrap();
            ledger.record(Resource::MountPoint(b.clone())).unwrap();
            fs::create_dir(&b).unwrap();
        }
        assert!(a.exists(), "a released resource was released twice");
        assert!(!b.exists());
        assert_eq!(fs::read_dir(&state).unwrap().count(), 0);
    }

    #[test]
    fn a_torn_last_line_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let keep = dir.path().join("keep");
        fs::create_dir(&keep).unwrap();
        let path = dir.path().join("x.ledger");
        let line = serde_json::to_string(&Line::Make(Resource::MountPoint(dir.path().join("gone")))).unwrap();
        fs::write(&path, format!("{line}\n{{\"make\":{{\"mount_point\":\"{}", keep.display())).unwrap();
        let cleaned = cleanup_dead(dir.path()).unwrap();
        assert_eq!(cleaned[0].released.len(), 1);
        assert!(keep.exists());
    }

    #[test]
    fn a_dead_run_whose_tool_still_holds_the_lock_is_waited_for_and_fully_released() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("made");
        fs::create_dir(&made).unwrap();
        // A finished child: its pid and start time name a dead owner.
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let ticks = start_ticks(pid).unwrap_or(1);
        child.wait().unwrap();
        let path = dir.path().join("run.ledger");
        let lines = [Line::Owner { pid, start_ticks: ticks }, Line::Make(Resource::MountPoint(made.clone()))];
        let text: String = lines.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
        fs::write(&path, text).unwrap();
        // The straggler: holds the lock for a moment, then goes.
        let held = File::open(&path).unwrap();
        rustix::fs::flock(held.as_fd(), FlockOperation::LockExclusive).unwrap();
        let straggler = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let cleaned = cleanup_dead(dir.path()).unwrap();
        straggler.join().unwrap();
        assert_eq!(cleaned.len(), 1);
        assert_eq!(cleaned[0].released.len(), 1, "{cleaned:?}");
        assert!(!made.exists());
        assert!(!path.exists());
    }

    #[test]
    fn start_ticks_reads_our_own() {
        let me = std::process::id() as i32;
        let a = start_ticks(me).unwrap();
        assert_eq!(start_ticks(me), Some(a));
        assert!(start_ticks(i32::MAX).is_none());
    }
}
