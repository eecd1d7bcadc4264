//! The seam every kind of target sits behind: a [`TargetKind`] is what was
//! asked for (a scratch ext4, a device, a folder), and [`Made`] is the
//! target once made, ready for work.
//!
//! The design decision: a made target says what it can do in [`Caps`]
//! (remount for a cold cache, block statistics, tracepoints) and names its
//! devices, so the harness never inspects which fields a target happens to
//! have. A new kind is one file implementing these two traits, plus its
//! `mod` line in `target/mod.rs`.

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use super::{FsType, TargetOptions};
use crate::ledger::Ledger;
use crate::error::Result;
use crate::record::TargetRecord;

/// What a made target can do for the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caps {
    /// Unmount and mount again to empty its cache (seed 001's way).
    pub remount: bool,
    /// Block-layer counters of the device under it are worth reading.
    pub block_stats: bool,
    /// Its device may be traced (journal commits, block requests).
    pub trace: bool,
}

/// A kind of target, as planned: everything needed to make it, and
/// nothing made yet.
pub trait TargetKind: Debug + Send + Sync {
    /// The name its rows of results go under (`ext4`, `ext2-1k`, `dir`).
    fn label(&self) -> String;

    /// The file system fslab makes on a fresh scratch image, for kinds that
    /// make one (a preset adds its variants beside these).
    fn scratch_fs(&self) -> Option<FsType> {
        None
    }

    /// Whether making it needs root.
    fn needs_root(&self) -> bool;

    /// Whether it is made in the scratch folder (which must then be ours
    /// alone: checked, and held open, before anything is made).
    fn needs_scratch(&self) -> bool {
        false
    }

    /// Whether it is a sparse image fslab makes in the scratch folder (and
    /// so must fit on the scratch folder's file system).
    fn makes_image(&self) -> bool {
        false
    }

    /// Refuse, before anything is made, what cannot be made here (the
    /// mkfs tool missing, the device mounted, the folder not a folder).
    fn check(&self) -> Result<()>;

    /// Make it for run `run_id`, recording every step in `ledger` before
    /// it is taken.
    fn make<'l>(&self, ledger: &'l Ledger, options: &TargetOptions, run_id: &str) -> Result<Box<dyn Made + 'l>>;
}

/// One planned target (shared, so a plan can be cloned cheaply).
pub type TargetSpec = Arc<dyn TargetKind>;

/// A made target, ready for work in [`work_dir`](Made::work_dir).
/// Dropping it releases what it made; [`release`](Made::release) does the
/// same and says what failed.
pub trait Made: Debug {
    /// Where the work runs.
    fn work_dir(&self) -> &Path;

    /// The file-system type the work lands on.
    fn fs_type(&self) -> &str;

    /// How it was made, for the case's record.
    fn record(&self) -> TargetRecord;

    /// What it can do.
    fn caps(&self) -> Caps;

    /// The block device node the file system sits on, when fslab made or
    /// was given one.
    fn device(&self) -> Option<&Path> {
        None
    }

    /// A path on the disk beneath the target (the image file, or the work
    /// folder itself), whose whole disk's counters are the `backing_`
    /// figures; `None` when nothing lies beneath (a real device).
    fn backing_path(&self) -> Option<&Path>;

    /// Empty its cache by unmounting and mounting again; only called when
    /// [`Caps::remount`] is set. After [`unmount`](Made::unmount), it
    /// mounts.
    fn remount(&mut self) -> Result<()>;

    /// Unmount the file system, keeping its device attached, so what the
    /// unmount writes (a journal's checkpoint, writeback not done yet) can
    /// be counted before the release; `false` for a target fslab does not
    /// unmount (a folder).
    fn unmount(&mut self) -> Result<bool> {
        Ok(false)
    }

    /// Unmount (settling delayed allocation and inode inactivation) and
    /// hand back the image open read-only, for the aged-image cache to
    /// keep (the file itself where it can, else a copy); `None` for targets
    /// without an image (dir, device). After it, only
    /// [`release`](Made::release) is called, which must not write the image.
    fn export_image(&mut self) -> Result<Option<std::fs::File>> {
        Ok(None)
    }

    /// Where the work's durability points are marked, for a target whose
    /// device's writes are recorded (`--crash-record`); `None` for the
    /// rest.
    fn marker(&self) -> Option<std::sync::Arc<crate::crash::Marker>> {
        None
    }

    /// End the recording of a recorded target, after the work and its
    /// unmount: the device detached, the recorder stopped, its log read
    /// and checked; what it holds. The recording stays held until
    /// [`finish_recording`](Made::finish_recording) (or the release, which
    /// gives it back); a log that reached its cap is given back at once.
    /// `None` for a target that records nothing.
    fn end_recording(&mut self) -> Result<Option<crate::record::CrashRecord>> {
        Ok(None)
    }

    /// The ended recording's write log, read again.
    fn recorded_log(&self) -> Result<crate::crash::WriteLog> {
        Err(crate::error::Error::failed("this target recorded no writes"))
    }

    /// Judge each of `states` of the ended recording's `log` on this host
    /// (`site::crash_states`): `look` is called with the state's index and
    /// its mounted root while it is mounted. Interrupted between states.
    fn judge_states(
        &mut self,
        _log: &crate::crash::WriteLog,
        _states: &[crate::crash::State],
        _look: &mut dyn FnMut(usize, &Path) -> Result<()>,
    ) -> Result<Vec<super::StateSeen>> {
        Err(crate::error::Error::failed("this target recorded no writes"))
    }

    /// Keep the ended recording (`recording.json` written beside the
    /// image before and the log) when `keep`, else give it back.
    fn finish_recording(&mut self, _record: &mut crate::record::CrashRecord, _keep: bool) -> Result<()> {
        Ok(())
    }

    /// Release everything it made, newest first.
    fn release(self: Box<Self>) -> Result<()>;
}
