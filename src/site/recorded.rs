//! A scratch target whose device's writes are recorded (`--crash-record`):
//! the file system is made on a plain loop device over the image, which
//! is then copied as the image before the work (`before.img`); the
//! recorder (`recorder.rs`) exports the image through FUSE with a
//! `blklogwrites` node in between, and the file system is mounted from a
//! loop device over that export, so every write and flush it issues from
//! the mount on lands in `writes.log` in the order the device completed
//! them. Replaying the log onto `before.img` rebuilds the device at any
//! point (`crate::crash`).
//!
//! What is made, in the order the ledger holds it (and so released in
//! reverse): the run folder and the image (`SCRATCH/RUN-LABEL/FS.img`);
//! the plain loop device mkfs runs on (released at once); the recording's
//! folder (`SCRATCH/RUN-LABEL-recN`) with `before.img` and `writes.log`
//! (sparse, as long as the cap); the empty file the export is mounted on
//! (`RUN-LABEL/device`) and the export's mount, both before the daemon
//! starts; the daemon; the loop device over the export; the mount point
//! and the mount. A case that ends well ends the recording in order
//! ([`Made::end_recording`]): unmount, detach, stop the daemon (which
//! unmounts its export), read and check the log, cut it to its length,
//! write `recording.json`, and keep the folder (or give it back). Any
//! other end — an error, Ctrl-C, SIGKILL then `fslab cleanup` — releases
//! everything, the recording too: no log is left that looks whole and is
//! not.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::fs::{Mode, OFlags};

use super::held::Held;
use super::kind::{Caps, Made};
use super::mounted::{self, Format, MountedFs};
use super::recorder::{Files, Running};
use super::scratch::{Started, attach, make_file};
use super::{FsType, RecordOptions};
use crate::age_cache::image_copy;
use crate::crash::{Marker, WriteLog};
use crate::error::{Error, Result};
use crate::ledger::folder::{FileId, OwnedDir};
use crate::ledger::proof::Proof;
use crate::ledger::{Resource, Token};
use crate::record::CrashRecord;

/// Recordings this process has made: each gets its own folder.
static RECORDINGS: AtomicU32 = AtomicU32::new(0);

/// A log whose last entry ends this close to its cap counts as full: the
/// next request (the largest measured: 1 MiB, one of the loop device's)
/// may have been refused.
const FULL_MARGIN: u64 = 4 << 20;

/// A recorded scratch target, made.
#[derive(Debug)]
pub(super) struct Recorded<'l> {
    fs: MountedFs<'l>,
    daemon: Option<Running>,
    marker: Arc<Marker>,
    image: File,
    device: PathBuf,
    folder: OwnedDir,
    tokens: Tokens,
    options: RecordOptions,
    before_sha256: String,
    /// The loop device's counters when it was attached (a device's
    /// counters outlive a detach, and devices are reused).
    sent_before: (u64, u64),
    /// The recording ended and its folder is still held, neither kept nor
    /// given back yet.
    ended: bool,
}

/// The ledger entries a recording ends out of turn, or keeps.
#[derive(Debug, Clone, Copy)]
struct Tokens {
    folder: Token,
    before: Token,
    log: Token,
    export_file: Token,
    export_mount: Token,
    device: Token,
}

/// Make the recorded target from a scratch image `started` (made, not yet
/// formatted unless it is a copy of a cache entry).
pub(super) fn make<'l>(
    started: Started<'l>,
    fs: FsType,
    options: &RecordOptions,
    run_id: &str,
    label: &str,
) -> Result<Box<dyn Made + 'l>> {
    let Started { mut held, folder, image, file, id, mkfs_extra, mount_opts, image_copy } = started;
    let args = mounted::mkfs_args(fs, &mkfs_extra);
    if image_copy.is_none() {
        // Formatted through a plain loop device, gone again before the
        // copy: the log starts at the first mount.
        let (device, open, token) = attach(&mut held, &image, &file, id, true)?;
        let made = mounted::mkfs(held.ledger, fs, &args, &device);
        drop(open);
        held.release_one(token)?;
        made?;
    }
    let n = RECORDINGS.fetch_add(1, Ordering::Relaxed) + 1;
    let recording = mounted::make_folder(&mut held, run_id, &format!("{label}-rec{n}"))?;
    let folder_token = held.newest();
    let (before_path, before, _) = make_file(&mut held, &recording, "before.img", 0, Resource::Image)?;
    let before_token = held.newest();
    image_copy::copy_image(&file, &before, false).map_err(|e| Error::io(&before_path, "copy the image before the work", e))?;
    let (before_sha256, _) = image_copy::content_hash(&before).map_err(|e| Error::io(&before_path, "hash the image", e))?;
    drop(before);
    let (log, _, _) = make_file(&mut held, &recording, "writes.log", options.cap_bytes, Resource::File)?;
    let log_token = held.newest();
    let (export, _, _) = make_file(&mut held, &folder, "device", 0, Resource::MountFile)?;
    let export_file = held.newest();
    let export_mount = held.record(Resource::Mount(export.clone()))?;
    let fuse = Proof::Mount { source: "/dev/fuse".into(), fs_type: "fuse".into(), backing: None, diskseq: None };
    held.prove(export_mount, fuse)?;
    let files = Files { image: image.clone(), log: log.clone(), export: export.clone(), cap_bytes: options.cap_bytes };
    let daemon = Running::start(&mut held, &options.daemon.path, &folder, &files)?;
    let (device, export_id, device_token) = attach_export(&mut held, &folder, &export)?;
    let sent_before = device_sent(&device).unwrap_or((0, 0));
    let reader = open_in(&recording, "writes.log", OFlags::RDONLY, &log)?;
    let marker = Arc::new(Marker::new(reader));
    let tokens = Tokens { folder: folder_token, before: before_token, log: log_token, export_file, export_mount, device: device_token };
    let format = Format { fs, mkfs_extra: &mkfs_extra, mount_opts, image_copy, formatted: true };
    // The image is what the disk statistics are read under; the mount is
    // proved by the export the loop device is attached to.
    let mounted = MountedFs::make(held, &device, Some((image, export_id)), &folder, format)?;
    Ok(Box::new(Recorded {
        fs: mounted,
        daemon: Some(daemon),
        marker,
        image: file,
        device,
        folder: recording,
        tokens,
        options: options.clone(),
        before_sha256,
        sent_before,
        ended: false,
    }))
}

/// Attach a loop device, without direct I/O (see `recorder.rs`), to the
/// export mounted on `export` in `folder`: its path, the export's
/// identity, and its ledger entry. Its descriptor is held until release.
fn attach_export(held: &mut Held, folder: &OwnedDir, export: &Path) -> Result<(PathBuf, FileId, Token)> {
    let file = open_in(folder, "device", OFlags::RDWR, export)?;
    let id = FileId::of(&file).map_err(|e| Error::io(export, "stat the recorder's export", e))?;
    let (device, open, token) = attach(held, export, &file, id, false)?;
    held.keep_open(open);
    Ok((device, id, token))
}

/// What the loop device at `device` has been sent since it first
/// existed: bytes written, and requests that each take a log entry
/// (writes, discards, flushes), from `/sys/block/loopN/stat`.
fn device_sent(device: &Path) -> Option<(u64, u64)> {
    let name = device.file_name()?.to_string_lossy().into_owned();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).ok()?;
    let fields: Vec<u64> = stat.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    let field = |i: usize| fields.get(i).copied().unwrap_or(0);
    Some((field(6) * 512, field(4) + field(11) + field(15)))
}

/// `name` in `folder`, opened with `flags` without following a link.
fn open_in(folder: &OwnedDir, name: &str, flags: OFlags, path: &Path) -> Result<File> {
    rustix::fs::openat(folder.fd(), name, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map(File::from)
        .map_err(|e| Error::io(path, "open", e.into()))
}

impl Recorded<'_> {
    /// The recording's folder.
    fn path(&self) -> &Path {
        self.folder.path()
    }

}

/// The log's end as its data says (`SEEK_DATA`), for a log that may not
/// read whole: whether it came within [`FULL_MARGIN`] of its cap.
pub(super) fn log_full(log: &File, cap: u64) -> bool {
    image_copy::data_regions(log).ok().and_then(|r| r.last().map(|(_, end)| *end)).is_some_and(|end| end + FULL_MARGIN > cap)
}

impl Made for Recorded<'_> {
    super::mounted::forward_to_fs!();


    /// No remount for a cold read: the export's pages stay in the page
    /// cache across one (the loop device reads through it), so the cold
    /// read drops caches instead.
    fn caps(&self) -> Caps {
        Caps { remount: false, ..self.fs.caps() }
    }


    fn remount(&mut self) -> Result<()> {
        Err(Error::failed("a recorded target is not remounted (its caps say so)"))
    }

    fn unmount(&mut self) -> Result<bool> {
        self.fs.unmount()
    }

    fn marker(&self) -> Option<Arc<Marker>> {
        Some(self.marker.clone())
    }

    fn end_recording(&mut self) -> Result<Option<CrashRecord>> {
        let Some(daemon) = self.daemon.take() else { return Ok(None) };
        self.fs.unmount()?;
        let (before_bytes, before_requests) = self.sent_before;
        let sent = device_sent(&self.device).map(|(b, r)| (b.saturating_sub(before_bytes), r.saturating_sub(before_requests)));
        let tokens = self.tokens;
        let held = self.fs.held();
        held.close_open();
        held.release_one(tokens.device)?;
        daemon.stop(held)?;
        held.release_one(tokens.export_mount)?;
        held.release_one(tokens.export_file)?;
        let log_path = self.path().join("writes.log");
        let log_file = open_in(&self.folder, "writes.log", OFlags::RDWR, &log_path)?;
        let cap = self.options.cap_bytes;
        let mut record = CrashRecord {
            folder: self.path().display().to_string(),
            kept: false,
            recorder: self.options.daemon.version.clone(),
            cap_bytes: cap,
            before_sha256: self.before_sha256.clone(),
            marks: self.marker.marks(),
            marks_left_out: self.marker.left_out(),
            ..CrashRecord::default()
        };
        if log_full(&log_file, cap) {
            // At least what the device was sent, with a sector of header
            // for each request.
            let (bytes, requests) = sent.unwrap_or((cap, 0));
            record.needed_bytes = Some((bytes + 512 * (requests + 1)).max(cap + 1));
            self.give_back()?;
            return Ok(Some(record));
        }
        let log = WriteLog::read(&log_path, log_file.try_clone().map_err(|e| Error::io(&log_path, "open", e))?)?;
        log_file.set_len(log.end()).map_err(|e| Error::io(&log_path, "cut the write log to its length", e))?;
        let summary = log.summary();
        record.entries = summary.entries;
        record.flushes = summary.flushes;
        record.discards = summary.discards;
        record.write_bytes = summary.write_bytes;
        record.log_bytes = summary.log_bytes;
        let image_path = self.fs.backing_path().map(Path::to_path_buf).unwrap_or_default();
        record.end_sha256 = image_copy::content_hash(&self.image).map_err(|e| Error::io(&image_path, "hash the image", e))?.0;
        self.ended = true;
        Ok(Some(record))
    }

    fn recorded_log(&self) -> Result<WriteLog> {
        let path = self.path().join("writes.log");
        WriteLog::read(&path, open_in(&self.folder, "writes.log", OFlags::RDONLY, &path)?)
    }

    fn judge_states(
        &mut self,
        log: &WriteLog,
        states: &[crate::crash::State],
        look: &mut dyn FnMut(usize, &Path) -> Result<()>,
    ) -> Result<Vec<super::StateSeen>> {
        if !self.ended {
            return Err(Error::failed("crash states are judged only once the recording has ended"));
        }
        let fs: FsType = self.fs.fs_type().parse().map_err(Error::failed)?;
        super::crash_states::judge_all(self.fs.held(), &self.folder, fs, log, states, look)
    }

    fn finish_recording(&mut self, record: &mut CrashRecord, keep: bool) -> Result<()> {
        if !std::mem::take(&mut self.ended) {
            return Ok(());
        }
        if keep && self.options.keep { self.keep(record) } else { self.give_back() }
    }

    fn release(self: Box<Self>) -> Result<()> {
        let Recorded { fs, .. } = *self;
        Box::new(fs).release()
    }
}

impl Recorded<'_> {
    /// Write `recording.json` (the record, with the file system and the
    /// image's size) and keep the folder with everything in it.
    fn keep(&mut self, record: &mut CrashRecord) -> Result<()> {
        record.kept = true;
        let image_bytes = self.image.metadata().map_err(|e| Error::io(self.folder.path(), "stat the image", e))?.len();
        let manifest = Manifest { fs: self.fs.fs_type().to_string(), image_bytes, recording: record.clone() };
        let held = self.fs.held();
        let (path, file, _) = make_file(held, &self.folder, "recording.json", 0, Resource::File)?;
        let manifest_token = held.newest();
        std::io::Write::write_all(&mut &file, &crate::json_document("recording", &manifest))
            .map_err(|e| Error::io(&path, "write", e))?;
        file.sync_all().map_err(|e| Error::io(&path, "sync", e))?;
        let tokens = self.tokens;
        for token in [manifest_token, tokens.log, tokens.before, tokens.folder] {
            held.keep(token)?;
        }
        Ok(())
    }

    /// Give the recording back: its files, then its folder.
    fn give_back(&mut self) -> Result<()> {
        let tokens = self.tokens;
        let held = self.fs.held();
        for token in [tokens.log, tokens.before, tokens.folder] {
            held.release_one(token)?;
        }
        Ok(())
    }
}

/// `recording.json`: what a kept recording holds, for whoever replays it.
#[derive(Debug, serde::Serialize)]
struct Manifest {
    /// The file system on the image.
    fs: String,
    /// The image's length, in bytes.
    image_bytes: u64,
    /// The case's record of it.
    #[serde(flatten)]
    recording: CrashRecord,
}
