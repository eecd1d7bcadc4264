//! Judging a recording's crash states on the host: each state rebuilt from
//! the image before the work and the write log, attached, mounted (the
//! file system's own journal recovery), looked at by the work's checker,
//! unmounted, and checked by the file system's own read-only checker.
//!
//! The design decision: the image is rebuilt once per state, since the
//! mount's recovery writes into it, but the log is replayed once per case:
//! one image (`base.img`) is advanced along the log to each state's prefix
//! (states come in prefix order), and each state is a copy of it (a
//! reflink where the scratch folder's file system can, else a sparse copy
//! of its data) plus the state's own entries past the prefix. A state's
//! file system checker runs while the next state is copied, mounted and
//! looked at (`state_check`), so two states' images exist at once. The base
//! image keeps no block of zeros (each is a hole), so a state copies only
//! what is not zero: an xfs image is mostly its log, which mkfs zeroes
//! (64 of 69 MiB written at 512 MiB). The file
//! system's checker runs after the mount's recovery, on the unmounted
//! device: `xfs_repair -n` refuses a dirty log, and what a crash leaves
//! for recovery is no damage. Every image, loop device, mount point and
//! mount is in the ledger before it exists, and given back before the
//! next state is made; a state that will not mount is `unmountable`, and
//! the error is kept.
//!
//! Mounted with default options (xfs with `nouuid`: every state is a copy
//! of one file system): recovery is the file system's, whatever options
//! the work ran under.
//!
//! Each state's image lives in memory: a tmpfs of the case's own, mounted
//! in the recording's folder (in the ledger before it exists) and sized to
//! hold one state's data, when that fits in a quarter of the machine's
//! memory. A state is thrown away after it is judged, so nothing in it
//! needs to reach a disk, yet its mount, recovery and unmount flush the
//! loop device again and again; over an image on disk each flush is a
//! flush of the disk's cache (an xfs state on this kind of machine took
//! 290–910 ms under load that way, 50–110 ms over tmpfs). A state too
//! large for memory is made beside the base image, as before.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::FsType;
use super::held::Held;
use super::mounted;
use super::scratch::{attach, make_file};
use super::state_check::Check;
use crate::age_cache::image_copy;
use crate::crash::replay::apply;
use crate::crash::{Entry, State, WriteLog};
use crate::error::{Error, Result};
use crate::ledger::folder::{FileId, OwnedDir};
use crate::ledger::proof::Proof;
use crate::ledger::{Resource, Token};

/// What one crash state showed the host.
#[derive(Debug, Clone, PartialEq)]
pub struct StateSeen {
    /// Why it would not mount, when it did not (the mount's error).
    pub unmountable: Option<String>,
    /// What the file system's checker said, when it found damage (its
    /// exit status and last lines); `None` when clean or not run.
    pub fsck_failed: Option<String>,
}

/// The places one case's states are judged in: the recording's folder,
/// the image advanced along the log, and the mount point.
pub(super) struct Bench<'a, 'l> {
    held: &'a mut Held<'l>,
    folder: &'a OwnedDir,
    fs: FsType,
    log: &'a WriteLog,
    base: File,
    base_at: usize,
    mount_point: OwnedDir,
    /// The base image's and the mount point's entries, given back by
    /// [`Bench::finish`].
    tokens: [Token; 2],
    /// The tmpfs the states' images are made in, with its mount's and
    /// mount point's entries; `None` where they are made in `folder`.
    memory: Option<(OwnedDir, [Token; 2])>,
    /// The state before, its file system's checker still running.
    checking: Option<Checking>,
    /// States made so far (their images take two names in turn).
    made: usize,
}

/// A state looked at and unmounted, its checker running while the next
/// state is made: on 2 cores xfs's checker is a third of a state's time.
struct Checking {
    /// Why it would not mount (no checker then).
    unmountable: Option<String>,
    check: Option<Check>,
    /// The loop device, open until the checker is done.
    open: File,
    /// The loop device's and the image's entries.
    tokens: [Token; 2],
}

/// The base image's and the mount point's names in the recording's folder.
const BASE: &str = "base.img";
const STATE: [&str; 2] = ["state-a.img", "state-b.img"];
const MOUNT_POINT: &str = "state-mnt";
const MEMORY: &str = "state-mem";

/// Room in the states' tmpfs beyond the data the log can put there: the
/// mount's own recovery writes, and a file system's log.
const MEMORY_SLACK: u64 = 64 << 20;

/// Judge `states` of `log` (each in order, interrupts seen between them)
/// on a bench in the recording's `folder`, whose `before.img` is the
/// image before the work: what each showed. `look` is called with the
/// state's index and its mounted root.
pub(super) fn judge_all(
    held: &mut Held,
    folder: &OwnedDir,
    fs: FsType,
    log: &WriteLog,
    states: &[State],
    look: &mut dyn FnMut(usize, &Path) -> Result<()>,
) -> Result<Vec<StateSeen>> {
    let before_path = folder.path().join("before.img");
    let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    let before = rustix::fs::openat(folder.fd(), "before.img", flags, rustix::fs::Mode::empty())
        .map(File::from)
        .map_err(|e| Error::io(&before_path, "open", e.into()))?;
    let mut bench = Bench::new(held, folder, fs, &before, log)?;
    let mut seen = Vec::with_capacity(states.len());
    for (i, state) in states.iter().enumerate() {
        crate::interrupt::check()?;
        // What the state before showed, its checker done meanwhile.
        seen.extend(bench.judge(state, &mut |root| look(i, root))?);
    }
    seen.extend(bench.settle()?);
    bench.finish()?;
    Ok(seen)
}

impl<'a, 'l> Bench<'a, 'l> {
    /// Make the base image (a copy of `before`), the mount point and,
    /// where one state's data fits in memory, the states' tmpfs in
    /// `folder`, each in the ledger first.
    pub(super) fn new(
        held: &'a mut Held<'l>,
        folder: &'a OwnedDir,
        fs: FsType,
        before: &File,
        log: &'a WriteLog,
    ) -> Result<Self> {
        let (base_path, base, _) = make_file(held, folder, BASE, 0, Resource::Image)?;
        let base_token = held.newest();
        // Its blocks of zeros left holes: each state is a copy of it.
        image_copy::copy_without_zeros(before, &base).map_err(|e| Error::io(&base_path, "copy the image before the work", e))?;
        let path = folder.path().join(MOUNT_POINT);
        let token = held.record(Resource::MountPoint(path.clone()))?;
        let mount_point = folder.make_child(MOUNT_POINT).map_err(|e| Error::io(&path, "create the mount point", e))?;
        held.prove(token, Proof::File(mount_point.id()))?;
        let data = base.metadata().map_err(|e| Error::io(&base_path, "stat", e))?.blocks() * 512;
        // Two states at once: one being checked while the next is made.
        let size = 2 * (data + log.summary().write_bytes) + MEMORY_SLACK;
        let memory = if size <= memory_budget() { Some(memory(held, folder, size)?) } else { None };
        let tokens = [base_token, token];
        Ok(Bench { held, folder, fs, log, base, base_at: 0, mount_point, tokens, memory, checking: None, made: 0 })
    }

    /// Give back the states' tmpfs, the mount point and the base image
    /// (after [`Bench::settle`]).
    pub(super) fn finish(self) -> Result<()> {
        let Bench { held, tokens: [base, mount_point], memory, .. } = self;
        if let Some((root, [mount, memory_point])) = memory {
            drop(root); // an open descriptor would keep the tmpfs busy
            held.release_one(mount)?;
            held.release_one(memory_point)?;
        }
        held.release_one(mount_point)?;
        held.release_one(base)
    }

    /// Judge `state`: `look` is called with the mounted state's root while
    /// it is mounted, and its file system's checker left running. What
    /// the state before showed, once its checker is done: after this
    /// state's mount, so that the two overlap.
    pub(super) fn judge(&mut self, state: &State, look: &mut dyn FnMut(&Path) -> Result<()>) -> Result<Option<StateSeen>> {
        if state.prefix < self.base_at {
            return Err(Error::failed(format!(
                "crash states out of order: prefix {} after {} (the base image only moves forward)",
                state.prefix, self.base_at
            )));
        }
        let entries = self.log.entries();
        apply(self.log, &entries[self.base_at..state.prefix], &self.base)?;
        self.base_at = state.prefix;
        let states = self.memory.as_ref().map_or(self.folder, |(root, _)| root);
        let (path, image, id) = make_file(self.held, states, STATE[self.made % 2], 0, Resource::Image)?;
        self.made += 1;
        let image_token = self.held.newest();
        image_copy::copy_image(&self.base, &image, false).map_err(|e| Error::io(&path, "copy the crash state's image", e))?;
        let extra: Vec<Entry> = state.extra.iter().map(|&i| entries[i]).collect();
        apply(self.log, &extra, &image)?;
        let (device, open, loop_token) = attach(self.held, &path, &image, id, false)?;
        drop(image); // the loop device holds it
        let mounted = self.mounted(&device, id, look);
        let before = self.settle();
        let checking = match mounted {
            Ok(unmountable) => {
                let check = if unmountable.is_none() { Some(Check::start(self.held, self.fs, &device)?) } else { None };
                Checking { unmountable, check, open, tokens: [loop_token, image_token] }
            }
            Err(e) => {
                drop(open);
                self.held.release_one(loop_token)?;
                self.held.release_one(image_token)?;
                return Err(e);
            }
        };
        self.checking = Some(checking);
        before
    }

    /// Wait for the last state's checker, give back its loop device and
    /// image: what it showed (`None` when no state is waiting).
    pub(super) fn settle(&mut self) -> Result<Option<StateSeen>> {
        let Some(Checking { unmountable, check, open, tokens: [loop_token, image_token] }) = self.checking.take() else {
            return Ok(None);
        };
        let fsck_failed = check.map(Check::finish).transpose().map(Option::flatten);
        drop(open);
        let released = self.held.release_one(loop_token).and_then(|()| self.held.release_one(image_token));
        let fsck_failed = fsck_failed?;
        released?;
        Ok(Some(StateSeen { unmountable, fsck_failed }))
    }

    /// Mount `device` (over the state image `id`), look, unmount: why it
    /// would not mount, when it did not.
    fn mounted(&mut self, device: &Path, id: FileId, look: &mut dyn FnMut(&Path) -> Result<()>) -> Result<Option<String>> {
        let diskseq = File::open(device)
            .and_then(crate::sys::loop_dev::diskseq)
            .map_err(|e| Error::io(device, "read the loop device's disk sequence number", e))?;
        let at = self.mount_point_path();
        let proof = Proof::Mount {
            source: device.to_string_lossy().into_owned(),
            fs_type: self.fs.name().to_string(),
            backing: Some(id),
            diskseq: Some(diskseq),
        };
        let token = self.held.record(Resource::Mount(at.clone()))?;
        self.held.prove(token, proof)?;
        if let Err(why) = mount_state(self.fs, device, &self.mount_point) {
            // Nothing mounted: its entry is given back at once.
            self.held.release_one(token)?;
            return Ok(Some(why));
        }
        let looked = look(&at);
        let unmounted = self.held.release_one(token);
        looked?;
        unmounted?;
        Ok(None)
    }

    fn mount_point_path(&self) -> PathBuf {
        self.folder.path().join(MOUNT_POINT)
    }
}

/// Mount `device` (a state of `fs`) on `point` by the kernel's mount API
/// in this process, not through mount(8): its recovery is the same, and a
/// state spends no program start on it. xfs with `nouuid`: every state is
/// a copy of one file system.
/// Why it would not mount, in the kernel's words, on refusal.
fn mount_state(fs: FsType, device: &Path, point: &OwnedDir) -> std::result::Result<(), String> {
    use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags, MoveMountFlags};
    use std::os::fd::AsFd;
    let context = rustix::mount::fsopen(fs.name(), FsOpenFlags::FSOPEN_CLOEXEC)
        .map_err(|e| format!("the kernel would not open a {fs} mount: {e}"))?;
    let refused = |step: &str, e: rustix::io::Errno| {
        let said = super::options::context_log(&context).map_or_else(String::new, |log| format!(": {log}"));
        format!("mount -t {fs} {} ({step}) failed: {e}{said}", device.display())
    };
    rustix::mount::fsconfig_set_string(context.as_fd(), "source", device).map_err(|e| refused("source", e))?;
    if fs == FsType::Xfs {
        rustix::mount::fsconfig_set_flag(context.as_fd(), "nouuid").map_err(|e| refused("nouuid", e))?;
    }
    rustix::mount::fsconfig_create(context.as_fd()).map_err(|e| refused("create", e))?;
    let mount = rustix::mount::fsmount(context.as_fd(), FsMountFlags::FSMOUNT_CLOEXEC, MountAttrFlags::empty())
        .map_err(|e| refused("fsmount", e))?;
    let empty = MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH | MoveMountFlags::MOVE_MOUNT_T_EMPTY_PATH;
    rustix::mount::move_mount(mount.as_fd(), "", point.fd(), "", empty).map_err(|e| refused("move_mount", e))
}

/// Mount a tmpfs of `size` bytes on `folder/state-mem` (its mount point
/// and the mount each in the ledger first): its root, and the two entries.
fn memory(held: &mut Held, folder: &OwnedDir, size: u64) -> Result<(OwnedDir, [Token; 2])> {
    let options = format!("size={}k,mode=0700,nr_inodes=64", size.div_ceil(1024));
    let (path, point, tokens) = mounted::mount_virtual(held, folder, MEMORY, ("tmpfs", "tmpfs"), Some(&options))?;
    drop(point);
    let root = folder.open_dir(Path::new(MEMORY)).map_err(|e| Error::io(&path, "open the states' tmpfs", e))?;
    Ok((root, tokens))
}

/// The most a case's states' tmpfs may hold: a quarter of the machine's
/// memory (0 when it cannot be read, so states go to disk).
fn memory_budget() -> u64 {
    let info = rustix::system::sysinfo();
    (info.totalram as u64).saturating_mul(u64::from(info.mem_unit)) / 4
}
