//! A device whose writes the host records, seen from inside a guest
//! (`--crash` with `--kernel`; the guest's fslab is given
//! `--crash-host-log`): the host's QEMU puts `blklogwrites` between the
//! guest's `/dev/vda` and its image, and shows the guest the log
//! read-only. The guest makes and mounts its file system on the device as
//! the device kind does, marks durability points by reading the log's
//! super block as the host's recorder does, and once the work is done
//! judges every crash state itself — rebuilt from the log in its own
//! scratch folder, mounted and checked by its own kernel — so that no
//! image a guest wrote is ever mounted by the host.
//!
//! The image before the work is the empty disk the host made (all zeros):
//! the log holds everything from the first write on, mkfs included, and
//! the host checks that replaying it whole gives the disk the guest left.
//! The log's figures count from the mount, as the host's do; crash states
//! start at the work's first mark either way.
//!
//! Made here, in the ledger before each exists: the run folder and mount
//! (as for a device), and at the recording's end the judging folder
//! (`RUN-LABEL-recN`) with `before.img` (sparse, the device's length),
//! given back after the states are judged; the log is the host's and is
//! only read.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::fs::{Mode, OFlags};

use super::kind::{Caps, Made};
use super::mounted::{self, MountedFs};
use super::scratch::make_file;
use super::{FsType, TargetOptions};
use crate::age_cache::image_copy;
use crate::crash::{Marker, WriteLog, live_entries};
use crate::error::{Error, Result};
use crate::ledger::folder::OwnedDir;
use crate::ledger::{Ledger, Resource, Token};
use crate::record::CrashRecord;

/// Judging folders this process has made.
static JUDGINGS: AtomicU32 = AtomicU32::new(0);

/// What the record names as the recorder.
const RECORDER: &str = "QEMU blklogwrites under the guest's virtio disk, on the host";

/// A device recorded by the host, made.
#[derive(Debug)]
pub(super) struct Hosted<'l> {
    fs: MountedFs<'l>,
    device: PathBuf,
    log_path: PathBuf,
    marker: Arc<Marker>,
    /// The log's entry count once the file system was made: what mkfs
    /// wrote, left out of the log's figures.
    mounted_at: u64,
    run_id: String,
    /// The judging folder and `before.img`, from the recording's end until
    /// the states are judged.
    judging: Option<(OwnedDir, [Token; 2])>,
}

/// Make the file system on `device` (checked free, as `--device` is)
/// and mount it, its writes logged by the host into `log`.
pub(super) fn make<'l>(
    ledger: &'l Ledger,
    fs: FsType,
    device: &Path,
    log: &Path,
    options: &TargetOptions,
    run_id: &str,
) -> Result<Box<dyn Made + 'l>> {
    let reader = open_log(log)?;
    let marker = Arc::new(Marker::new(reader.try_clone().map_err(|e| Error::io(log, "open the host's write log", e))?));
    let mounted = super::device::make_mounted(ledger, fs, device, options, run_id)?;
    let device = mounted.device().map(Path::to_path_buf).unwrap_or_else(|| device.to_path_buf());
    // mkfs ends with an fsync of the device, whose flush rewrote the count.
    let mounted_at = live_entries(&reader).map_err(|e| Error::io(log, "read the host's write log", e))?;
    Ok(Box::new(Hosted {
        fs: mounted,
        device,
        log_path: log.to_path_buf(),
        marker,
        mounted_at,
        run_id: run_id.to_string(),
        judging: None,
    }))
}

/// The host's log at `log`, open for reading, never through a link.
fn open_log(log: &Path) -> Result<File> {
    rustix::fs::open(log, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
        .map(File::from)
        .map_err(|e| Error::io(log, "open the host's write log", e.into()))
}

impl Hosted<'_> {
    /// The log, read whole.
    fn read_log(&self) -> Result<WriteLog> {
        WriteLog::read(&self.log_path, open_log(&self.log_path)?)
    }

    /// Flush the device once the file system is unmounted: the log's
    /// super block counts every entry only as of its last flush.
    fn flush_device(&self) -> Result<u64> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.device)
            .map_err(|e| Error::io(&self.device, "open the device to flush it", e))?;
        file.sync_all().map_err(|e| Error::io(&self.device, "flush the device", e))?;
        file.seek(SeekFrom::End(0)).map_err(|e| Error::io(&self.device, "find the device's length", e))
    }
}

impl Made for Hosted<'_> {
    super::mounted::forward_to_fs!();


    fn caps(&self) -> Caps {
        self.fs.caps()
    }


    fn remount(&mut self) -> Result<()> {
        self.fs.remount()
    }

    fn unmount(&mut self) -> Result<bool> {
        self.fs.unmount()
    }

    fn marker(&self) -> Option<Arc<Marker>> {
        Some(self.marker.clone())
    }

    fn end_recording(&mut self) -> Result<Option<CrashRecord>> {
        if self.judging.is_some() {
            return Ok(None);
        }
        self.fs.unmount()?;
        let device_bytes = self.flush_device()?;
        let log = self.read_log()?;
        let n = JUDGINGS.fetch_add(1, Ordering::Relaxed) + 1;
        let label = format!("{}-rec{n}", self.fs.fs_type());
        let run_id = self.run_id.clone();
        let held = self.fs.held();
        let folder = mounted::make_folder(held, &run_id, &label)?;
        let folder_token = held.newest();
        let (before_path, before, _) = make_file(held, &folder, "before.img", device_bytes, Resource::Image)?;
        let before_token = held.newest();
        let (before_sha256, _) = image_copy::content_hash(&before).map_err(|e| Error::io(&before_path, "hash the image", e))?;
        let summary = log.summary_from(self.mounted_at as usize);
        let record = CrashRecord {
            folder: self.log_path.display().to_string(),
            kept: false,
            recorder: RECORDER.to_string(),
            cap_bytes: log.file_len(),
            before_sha256,
            marks: self.marker.marks(),
            marks_left_out: self.marker.left_out(),
            entries: summary.entries,
            flushes: summary.flushes,
            discards: summary.discards,
            write_bytes: summary.write_bytes,
            log_bytes: summary.log_bytes,
            ..CrashRecord::default()
        };
        self.judging = Some((folder, [folder_token, before_token]));
        Ok(Some(record))
    }

    fn recorded_log(&self) -> Result<WriteLog> {
        self.read_log()
    }

    fn judge_states(
        &mut self,
        log: &WriteLog,
        states: &[crate::crash::State],
        look: &mut dyn FnMut(usize, &Path) -> Result<()>,
    ) -> Result<Vec<super::StateSeen>> {
        let Some((folder, _)) = &self.judging else {
            return Err(Error::failed("crash states are judged only once the recording has ended"));
        };
        let fs: FsType = self.fs.fs_type().parse().map_err(Error::failed)?;
        super::crash_states::judge_all(self.fs.held(), folder, fs, log, states, look)
    }

    fn finish_recording(&mut self, _record: &mut CrashRecord, _keep: bool) -> Result<()> {
        let Some((_, [folder, before])) = self.judging.take() else { return Ok(()) };
        let held = self.fs.held();
        held.release_one(before)?;
        held.release_one(folder)
    }

    fn release(self: Box<Self>) -> Result<()> {
        let Hosted { fs, .. } = *self;
        Box::new(fs).release()
    }
}
