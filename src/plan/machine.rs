//! What planning asks of the machine it plans for: the bytes free where
//! the scratch images go (a preset sizes direct-stream's stream by them,
//! and an image larger than them is refused) and whether a case can be
//! limited in memory. [`Host`] asks this machine; a test gives its own
//! answers, so a plan is built the same anywhere.

use std::path::Path;

use crate::error::Result;
use crate::scenario::Work;
use crate::site::{TargetOptions, TargetSpec};

/// The machine a plan is for.
pub trait Machine {
    /// The bytes free on the file system that will hold the scratch folder
    /// `scratch` (its nearest existing folder's), or 0 when none can be
    /// read.
    fn scratch_free_bytes(&self, scratch: &Path) -> u64;

    /// Whether a case's work can run in a memory cgroup; the reason when
    /// it cannot.
    fn memory_limits(&self) -> std::result::Result<(), String>;

    /// Refuse (exit 2) a scratch image for `work` on `target`, filled to
    /// `level` first, larger than the scratch folder's file system has
    /// free ([`crate::harness::check_disk`]).
    fn check_disk(&self, target: &TargetSpec, options: &TargetOptions, work: &dyn Work, level: f64) -> Result<()>;
}

/// This machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct Host;

impl Machine for Host {
    fn scratch_free_bytes(&self, scratch: &Path) -> u64 {
        scratch
            .ancestors()
            .find_map(|at| rustix::fs::statvfs(at).ok())
            .map_or(0, |v| v.f_bavail.saturating_mul(v.f_frsize))
    }

    fn memory_limits(&self) -> std::result::Result<(), String> {
        crate::ledger::cgroup::memory_controller().map(|_| ()).map_err(|e| e.message)
    }

    fn check_disk(&self, target: &TargetSpec, options: &TargetOptions, work: &dyn Work, level: f64) -> Result<()> {
        crate::harness::check_disk(target, options, work, level)
    }
}
