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
//!
//! A ledger is not trusted for what it names: the run's scratch folder is
//! recorded with its device and inode (`{"scratch": ...}`), and what is made
//! in it gets a `{"proved": ...}` line once made ([`Proof`]); a release acts
//! only on what still matches (see `proof.rs`). Ledgers of an older format,
//! without proofs, are refused whole, reported once and dropped.
//!
//! This room holds what fslab holds and must give back: the ledger, the
//! proofs a release checks (`proof.rs`), the folders it acts in and the
//! walk that opens them (`folder.rs`, `walk.rs`, `given.rs`), removal
//! (`remove.rs`), the kernel log, file locks, and the releases of what the
//! conditions and the image cache make (the machine's sysctl lock and
//! journal, a memory cgroup, a cache write). It names no room above it.

pub mod cache_write;
pub mod cgroup;
pub mod flock;
pub mod folder;
pub mod given;
pub mod give_back;
pub mod kmsg;
pub mod proof;
mod remove;
pub mod sysctl;
pub mod walk;

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};
use serde::{Deserialize, Serialize};

use folder::{FileId, FolderRole, OwnedDir};
use give_back::{describe, release, start_ticks};
use proof::Proof;
use crate::error::{Error, Result};

/// The ledger format this fslab writes: 2 records the scratch folder and
/// proofs. Older ledgers are refused whole.
const FORMAT: u32 = 2;

/// Something a run makes and must give back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// A directory fslab made to hold a run's images and mount points;
    /// removed if empty.
    RunDir(PathBuf),
    /// A sparse image file; deleted.
    Image(PathBuf),
    /// Another file fslab wrote in a run folder (a guest's initramfs and
    /// console, a recording's write log and manifest); deleted.
    File(PathBuf),
    /// A loop device over this image; found by its backing file (its name
    /// is only known once attached) and detached.
    Loop(PathBuf),
    /// An empty directory made to mount on; removed.
    MountPoint(PathBuf),
    /// An empty regular file made to mount on (a FUSE export of one
    /// file is mounted on a file); removed if still empty and unmounted.
    MountFile(PathBuf),
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
        /// The change's entry in the machine's sysctl journal (absent in
        /// ledgers written before the journal).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        journal: Option<String>,
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
    /// A case's memory cgroup (`--memory`), `fslab-RUN-N` inside the
    /// memory controller's mount; tasks left are moved out, then removed.
    MemoryCgroup(PathBuf),
    /// An entry being written into the aged-image cache, named by its
    /// image (`CACHE/KEY.img`): proved by the unnamed image's device and
    /// inode; released by removing that image if it stands without its
    /// json (an incomplete entry), leaving a complete entry.
    CacheImage(PathBuf),
    /// A folder a guest (`--kernel`) writes into over 9p, named
    /// `fslab-share` in the guest's run folder: removed, with whatever the
    /// guest left in it, as a work folder is (never following a symlink,
    /// never crossing a mount).
    GuestShare(PathBuf),
}

impl Resource {
    /// The process `pid` as a [`Resource::Child`], with its start time read
    /// now (0 when it cannot be read).
    pub fn child(pid: u32) -> Resource {
        let pid = pid as i32;
        Resource::Child { pid, start_ticks: give_back::start_ticks(pid).unwrap_or(0) }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    /// The first line: the fslab process that owns the run, and the
    /// ledger's format (absent, so 0, in ledgers older than proofs).
    Owner {
        pid: i32,
        start_ticks: u64,
        #[serde(default)]
        format: u32,
    },
    /// The run's scratch folder, canonical, with its device and inode.
    Scratch { path: PathBuf, id: FileId },
    Make(Resource),
    /// What entry N was, once made.
    Proved { entry: usize, proof: Proof },
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
    state: OwnedDir,
    inner: Mutex<Inner>,
    scratch: OnceLock<OwnedDir>,
}

#[derive(Debug)]
struct Inner {
    file: File,
    entries: Vec<Entry>,
    closed: bool,
}

/// One recorded resource, its proof once made, and whether it is released.
#[derive(Debug, Clone)]
struct Entry {
    resource: Resource,
    proof: Option<Proof>,
    done: bool,
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
        Ledger::create_in(OwnedDir::open_or_make(dir, FolderRole::State)?, run_id)
    }

    /// [`create`](Ledger::create) in a state folder already opened and
    /// checked.
    pub fn create_in(state: OwnedDir, run_id: &str) -> Result<Ledger> {
        // Created under a name cleanup ignores, locked, then renamed: a
        // cleaner never sees an unlocked ledger of a live run.
        let tmp_name = format!(".{run_id}.tmp");
        let tmp = state.path().join(&tmp_name);
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(state.fd(), tmp_name.as_str(), flags, Mode::from_raw_mode(0o600))
            .map_err(|e| Error::io(&tmp, "create the run's ledger", e.into()))?;
        let mut file = File::from(fd);
        rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| Error::io(&tmp, "lock the run's ledger", e.into()))?;
        let pid = std::process::id() as i32;
        let owner = Line::Owner { pid, start_ticks: start_ticks(pid).unwrap_or(0), format: FORMAT };
        write_line(&mut file, &owner).map_err(|e| Error::io(&tmp, "write the run's ledger", e))?;
        let name = format!("{run_id}.ledger");
        let path = state.path().join(&name);
        rustix::fs::renameat(state.fd(), tmp_name.as_str(), state.fd(), name.as_str())
            .map_err(|e| Error::io(&path, "name the run's ledger", e.into()))?;
        let inner = Mutex::new(Inner { file, entries: Vec::new(), closed: false });
        Ok(Ledger { path, state, inner, scratch: OnceLock::new() })
    }

    /// Record the run's scratch folder, checked and held by the caller:
    /// everything made below it is reached from this descriptor, and a
    /// later cleanup acts below it only if it is still this folder.
    pub fn set_scratch(&self, scratch: OwnedDir) -> Result<()> {
        let line = Line::Scratch { path: scratch.path().to_path_buf(), id: scratch.id() };
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        write_line(&mut inner.file, &line).map_err(|e| Error::io(&self.path, "write the run's ledger", e))?;
        self.scratch.set(scratch).map_err(|_| Error::failed("the run's scratch folder was set twice"))
    }

    /// The run's scratch folder, held open.
    pub fn scratch(&self) -> Result<&OwnedDir> {
        self.scratch.get().ok_or_else(|| Error::failed("this run opened no scratch folder"))
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
        inner.entries.push(Entry { resource, proof: None, done: false });
        Ok(Token(inner.entries.len() - 1))
    }

    /// Write down what the resource of `token` is, now that it is made
    /// (or, for a loop device or mount, just before): its release acts
    /// only on what still matches `proof`.
    pub fn prove(&self, token: Token, proof: Proof) -> Result<()> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        write_line(&mut inner.file, &Line::Proved { entry: token.0, proof: proof.clone() })
            .map_err(|e| Error::io(&self.path, "write the run's ledger", e))?;
        if let Some(entry) = inner.entries.get_mut(token.0) {
            entry.proof = Some(proof);
        }
        Ok(())
    }

    /// Release one resource now (and every later one it depends on is the
    /// caller's business: release in reverse order of making).
    pub fn release(&self, token: Token) -> Result<()> {
        let entry = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            match inner.entries.get(token.0) {
                Some(e) if !e.done => e.clone(),
                _ => return Ok(()),
            }
        };
        let refused = release(&entry.resource, entry.proof.as_ref(), self.scratch.get())?;
        // A refused entry is dropped: what stands there is not ours, and
        // trying again would not make it so.
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.entries[token.0].done = true;
        let _ = write_line(&mut inner.file, &Line::Released(token.0));
        match refused {
            None => Ok(()),
            Some(why) => Err(Error::failed(format!("{}: left alone, {why}", describe(&entry.resource)))),
        }
    }

    /// Keep the resource of `token` on purpose (a recording the user asked
    /// to keep): written down as done without touching it, so neither this
    /// run nor a cleanup ever releases it.
    pub fn keep(&self, token: Token) -> Result<()> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.entries.get(token.0).is_none_or(|e| e.done) {
            return Ok(());
        }
        write_line(&mut inner.file, &Line::Released(token.0)).map_err(|e| Error::io(&self.path, "write the run's ledger", e))?;
        inner.entries[token.0].done = true;
        Ok(())
    }

    /// Release everything still held, newest first; returns what could not
    /// be released. The ledger file is deleted only when all went; either
    /// way this is the run's one try (dropping the ledger does not repeat
    /// it): what failed stays written down for `fslab cleanup`.
    pub fn release_all(&self) -> Vec<Error> {
        let mut errors = Vec::new();
        let held: Vec<usize> = {
            let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            if inner.closed {
                return errors;
            }
            inner.entries.iter().enumerate().filter(|(_, e)| !e.done).map(|(i, _)| i).collect()
        };
        for index in held.into_iter().rev() {
            if let Err(e) = self.release(Token(index)) {
                errors.push(e);
            }
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if errors.is_empty() {
            if let Some(name) = self.path.file_name() {
                let _ = rustix::fs::unlinkat(self.state.fd(), name, AtFlags::empty());
            }
        }
        inner.closed = true;
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
        let dir = crate::test_temp::dir("");
        Ledger::create(dir.path(), "unit-test").expect("a ledger in a fresh folder")
    }

    /// Act as if the process died: unlock and forget, releasing nothing.
    pub(crate) fn abandon(self) {
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
    /// Entries refused because fslab cannot prove it made what they name
    /// ("not made by fslab: ..."): left alone, and dropped from the ledger.
    pub refused: Vec<String>,
}

impl CleanedRun {
    /// Whether the ledger held nothing left to release.
    pub fn is_empty(&self) -> bool {
        self.released.is_empty() && self.failed.is_empty() && self.refused.is_empty()
    }
}

/// The ledger's path, then a line per entry: what was released, what
/// failed and what was refused.
impl std::fmt::Display for CleanedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.ledger.display())?;
        for r in &self.released {
            writeln!(f, "  released {r}")?;
        }
        for r in &self.failed {
            writeln!(f, "  FAILED   {r}")?;
        }
        for r in &self.refused {
            writeln!(f, "  refused  {r}")?;
        }
        Ok(())
    }
}

/// Release what dead runs left: every ledger in `dir` whose lock can be
/// taken (its run is gone) and that belongs to this user. Live runs are
/// never touched. A state folder that is not ours alone is refused.
pub fn cleanup_dead(dir: &Path) -> Result<Vec<CleanedRun>> {
    let Some(state) = OwnedDir::open_existing(dir, FolderRole::State)? else { return Ok(Vec::new()) };
    let names: Vec<String> = {
        let listing = rustix::fs::Dir::read_from(state.fd()).map_err(|e| Error::io(dir, "read the state folder", e.into()))?;
        listing.filter_map(|e| e.ok()).filter_map(|e| e.file_name().to_str().ok().map(str::to_string)).collect()
    };
    let me = rustix::process::geteuid().as_raw();
    let open = |name: &str, flags: OFlags| -> Option<File> {
        rustix::fs::openat(state.fd(), name, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty()).ok().map(File::from)
    };
    let mut cleaned = Vec::new();
    // A run killed while creating its ledger leaves only an unnamed,
    // unlocked `.RUN.tmp`, which records nothing.
    for tmp in names.iter().filter(|n| n.ends_with(".tmp")) {
        if let Some(file) = open(tmp, OFlags::RDONLY) {
            if rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_ok()
                && file.metadata().is_ok_and(|m| m.uid() == me && m.is_file())
            {
                let _ = rustix::fs::unlinkat(state.fd(), tmp.as_str(), AtFlags::empty());
            }
        }
    }
    let mut ledgers: Vec<&String> = names.iter().filter(|n| n.ends_with(".ledger")).collect();
    ledgers.sort();
    for name in ledgers {
        let Some(file) = open(name, OFlags::RDWR | OFlags::APPEND) else { continue };
        // Another user's ledger is not evidence enough to unmount or
        // delete anything.
        if file.metadata().map(|m| m.uid() != me || !m.is_file()).unwrap_or(true) {
            continue;
        }
        if !lock_when_dead(&file) {
            continue; // a live run
        }
        cleaned.push(release_ledger(&state, name, file));
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
    let Some(Line::Owner { pid, start_ticks: ticks, .. }) = owner else { return false };
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

fn release_ledger(state: &OwnedDir, name: &str, mut file: File) -> CleanedRun {
    let path = state.path().join(name);
    let mut run = CleanedRun { ledger: path.clone(), ..Default::default() };
    // Read from the start: looking for the owner may have moved the offset.
    if let Err(e) = io::Seek::seek(&mut file, io::SeekFrom::Start(0)) {
        run.failed.push(format!("reading the ledger: {e}"));
        return run;
    }
    let mut entries: Vec<Entry> = Vec::new();
    let mut format = 0;
    let mut scratch: Option<(PathBuf, FileId)> = None;
    for line in io::BufReader::new(&file).lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Line>(&line) {
            Ok(Line::Owner { format: f, .. }) => format = f,
            Ok(Line::Scratch { path, id }) => scratch = Some((path, id)),
            Ok(Line::Make(resource)) => entries.push(Entry { resource, proof: None, done: false }),
            Ok(Line::Proved { entry, proof }) => {
                if let Some(e) = entries.get_mut(entry) {
                    e.proof = Some(proof);
                }
            }
            Ok(Line::Released(i)) => {
                if let Some(e) = entries.get_mut(i) {
                    e.done = true;
                }
            }
            Err(_) => break, // a torn last line: it was never acted on
        }
    }
    if format < FORMAT {
        // Written before fslab recorded proofs: nothing in it can be
        // checked, so nothing is done; it is listed once, then dropped.
        for entry in entries.iter().filter(|e| !e.done) {
            run.refused.push(format!(
                "{}: not made by fslab as far as it can prove (a ledger of an older fslab, without proofs); release it by hand if it is still there",
                describe(&entry.resource)
            ));
        }
        let _ = rustix::fs::unlinkat(state.fd(), name, AtFlags::empty());
        return run;
    }
    // The scratch folder it names must still be that folder, and ours
    // alone; otherwise nothing below it is touched.
    let scratch = match scratch {
        None => None,
        Some((path, id)) => match OwnedDir::reopen(&path, id, FolderRole::Scratch) {
            Ok(dir) => Some(dir),
            Err(e) if e.message.contains("no such folder") => None,
            Err(e) => {
                run.failed.push(format!("scratch folder {}: {e}", path.display()));
                None
            }
        },
    };
    for (index, entry) in entries.iter().enumerate().rev() {
        if entry.done {
            continue;
        }
        match release(&entry.resource, entry.proof.as_ref(), scratch.as_ref()) {
            Ok(None) => {
                run.released.push(describe(&entry.resource));
                let _ = write_line(&mut file, &Line::Released(index));
            }
            Ok(Some(why)) => {
                run.refused.push(format!("{}: {why}", describe(&entry.resource)));
                let _ = write_line(&mut file, &Line::Released(index));
            }
            Err(e) => run.failed.push(format!("{}: {e}", describe(&entry.resource))),
        }
    }
    if run.failed.is_empty() {
        let _ = rustix::fs::unlinkat(state.fd(), name, AtFlags::empty());
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A state folder and a scratch folder (ours, 0700) in a fresh folder.
    fn folders() -> (tempfile::TempDir, PathBuf, OwnedDir) {
        let dir = crate::test_temp::dir("");
        let state = dir.path().join("state");
        let scratch = OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap();
        (dir, state, scratch)
    }

    fn owner_line(pid: i32, ticks: u64) -> String {
        serde_json::to_string(&Line::Owner { pid, start_ticks: ticks, format: FORMAT }).unwrap() + "\n"
    }

    fn scratch_line(scratch: &OwnedDir) -> String {
        serde_json::to_string(&Line::Scratch { path: scratch.path().to_path_buf(), id: scratch.id() }).unwrap() + "\n"
    }

    #[test]
    fn a_dead_runs_ledger_is_released_newest_first_and_removed() {
        let (_dir, state, scratch) = folders();
        let made = scratch.path().join("made");
        let image = made.join("image");
        let ledger = Ledger::create(&state, "test-1").unwrap();
        let scratch = { ledger.set_scratch(scratch).unwrap(); ledger.scratch().unwrap() };
        let token = ledger.record(Resource::RunDir(made.clone())).unwrap();
        let folder = scratch.make_child("made").unwrap();
        ledger.prove(token, Proof::File(folder.id())).unwrap();
        let token = ledger.record(Resource::Image(image.clone())).unwrap();
        fs::write(&image, b"x").unwrap();
        ledger.prove(token, Proof::File(FileId::of(File::open(&image).unwrap()).unwrap())).unwrap();
        // Recorded but never made: releasing it must be a no-op.
        ledger.record(Resource::MountPoint(made.join("never"))).unwrap();

        // While the run lives, cleanup leaves it alone.
        assert!(cleanup_dead(&state).unwrap().is_empty());
        assert!(image.exists());

        // "Kill" it: forget the ledger without running Drop, then drop the
        // lock the way process death does, by closing the descriptor.
        let path = ledger.path().to_path_buf();
        ledger.abandon();

        let cleaned = cleanup_dead(&state).unwrap();
        assert_eq!(cleaned.len(), 1, "{cleaned:?}");
        assert!(cleaned[0].failed.is_empty() && cleaned[0].refused.is_empty(), "{cleaned:?}");
        assert_eq!(cleaned[0].released.len(), 3);
        assert!(!image.exists() && !made.exists());
        assert!(!path.exists());
    }

    #[test]
    fn a_kept_resource_outlives_its_run_and_any_cleanup() {
        let (_dir, state, scratch) = folders();
        let kept = scratch.path().join("kept");
        let gone = scratch.path().join("gone");
        let ledger = Ledger::create(&state, "test-keep").unwrap();
        ledger.set_scratch(scratch).unwrap();
        let mut tokens = Vec::new();
        for path in [&kept, &gone] {
            let token = ledger.record(Resource::File(path.clone())).unwrap();
            fs::write(path, b"x").unwrap();
            ledger.prove(token, Proof::File(FileId::of(File::open(path).unwrap()).unwrap())).unwrap();
            tokens.push(token);
        }
        ledger.keep(tokens[0]).unwrap();
        ledger.abandon();
        let cleaned = cleanup_dead(&state).unwrap();
        assert_eq!(cleaned[0].released.len(), 1, "{cleaned:?}");
        assert!(kept.exists() && !gone.exists());
    }

    #[test]
    fn dropping_a_ledger_releases_and_released_items_are_not_redone() {
        let (_dir, state, scratch) = folders();
        let a = scratch.path().join("a");
        let b = scratch.path().join("b");
        {
            let ledger = Ledger::create(&state, "test-2").unwrap();
            ledger.set_scratch(scratch).unwrap();
            let scratch = ledger.scratch().unwrap();
            let ta = ledger.record(Resource::MountPoint(a.clone())).unwrap();
            let made = scratch.make_child("a").unwrap();
            ledger.prove(ta, Proof::File(made.id())).unwrap();
            ledger.release(ta).unwrap();
            // Made again by someone else after release: must survive.
            fs::create_dir(&a).unwrap();
            let tb = ledger.record(Resource::MountPoint(b.clone())).unwrap();
            let made = scratch.make_child("b").unwrap();
            ledger.prove(tb, Proof::File(made.id())).unwrap();
        }
        assert!(a.exists(), "a released resource was released twice");
        assert!(!b.exists());
        assert_eq!(fs::read_dir(&state).unwrap().count(), 0);
    }

    #[test]
    fn a_torn_last_line_is_ignored() {
        let (_dir, state, scratch) = folders();
        fs::create_dir(&state).unwrap();
        let keep = scratch.path().join("keep");
        fs::create_dir(&keep).unwrap();
        let gone = serde_json::to_string(&Line::Make(Resource::MountPoint(scratch.path().join("gone")))).unwrap();
        let torn = format!("{{\"make\":{{\"mount_point\":\"{}", keep.display());
        let text = format!("{}{}{gone}\n{torn}", owner_line(1, 1), scratch_line(&scratch));
        fs::write(state.join("x.ledger"), text).unwrap();
        let cleaned = cleanup_dead(&state).unwrap();
        assert_eq!(cleaned[0].released.len(), 1, "{cleaned:?}");
        assert!(keep.exists());
    }

    #[test]
    fn a_dead_run_whose_tool_still_holds_the_lock_is_waited_for_and_fully_released() {
        let (_dir, state, scratch) = folders();
        fs::create_dir(&state).unwrap();
        let made = scratch.make_child("made").unwrap();
        // A finished child: its pid and start time name a dead owner.
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let ticks = start_ticks(pid).unwrap_or(1);
        child.wait().unwrap();
        let path = state.join("run.ledger");
        let lines = [
            Line::Make(Resource::MountPoint(made.path().to_path_buf())),
            Line::Proved { entry: 0, proof: Proof::File(made.id()) },
        ];
        let text: String = lines.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
        fs::write(&path, owner_line(pid, ticks) + &scratch_line(&scratch) + &text).unwrap();
        // The straggler: holds the lock for a moment, then goes.
        let held = File::open(&path).unwrap();
        rustix::fs::flock(held.as_fd(), FlockOperation::LockExclusive).unwrap();
        let straggler = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let cleaned = cleanup_dead(&state).unwrap();
        straggler.join().unwrap();
        assert_eq!(cleaned.len(), 1);
        assert_eq!(cleaned[0].released.len(), 1, "{cleaned:?}");
        assert!(!made.path().exists());
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
