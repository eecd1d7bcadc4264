//! A memory cgroup per case (`--memory 256M`): the work runs under a
//! memory limit, so the page cache it dirties is written back and reclaimed
//! as on a machine with that much memory — the condition seed 000's
//! fragmentation grew in.
//!
//! The design decision: cgroup v2's `memory.max` where the unified
//! hierarchy has the memory controller, else v1's `memory.limit_in_bytes`.
//! The cgroup is named `fslab-RUN-N` (the case's id), written to the ledger
//! before it is made, and released like every other resource: tasks still
//! in it are moved to its parent, then it is removed. A release acts only
//! on a folder so named, strictly inside the memory controller's mount as
//! mountinfo shows it at release time; nothing else is ever removed (a
//! cgroup folder can only be removed when it has no tasks and no children,
//! so even then nothing but an empty cgroup goes).
//!
//! What is inside: fslab's process (every thread of it) from just before
//! the measured work starts until it ends, and every process the work
//! starts in that window (they are born inside). So the work's own memory
//! and the page cache it makes are charged; prepare, mkfs, the cold
//! read-back, layout mapping and the probes' readings before and after are
//! not. While the work runs the probes' sampler threads are inside too;
//! they read `/proc` and `/sys` (no page cache) and allocate a few KiB.
//! Memory charged before the move stays where it was charged (v1 without
//! `move_charge_at_immigrate`, and v2 never moves charges).

use std::fs;
use std::io;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::ledger::cgroup::{CgroupAt, CgroupVersion, MemoryController};

/// A memory cgroup made for one case.
#[derive(Debug)]
pub struct MemoryCgroup {
    /// Its folder.
    pub path: PathBuf,
    /// Its interface.
    pub version: CgroupVersion,
    /// The cgroup this process came from, to go back to.
    home: PathBuf,
}

impl MemoryCgroup {
    /// Make the cgroup at `path` (recorded in the ledger by the caller
    /// first) and set its limit to `limit` bytes.
    pub fn make(controller: &MemoryController, path: PathBuf, limit: u64) -> Result<MemoryCgroup> {
        let home = controller.own_path();
        if controller.version == CgroupVersion::V2 {
            // The root must hand the memory controller to its children.
            let control = controller.mount.join("cgroup.subtree_control");
            let _ = fs::write(&control, "+memory");
        }
        fs::create_dir(&path).map_err(|e| Error::io(&path, "make the memory cgroup", e))?;
        let cgroup = MemoryCgroup { path, version: controller.version, home };
        let file = match cgroup.version {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        };
        cgroup.write(file, &limit.to_string())?;
        if cgroup.version == CgroupVersion::V2 {
            // Without swap the limit is the limit: nothing is swapped out
            // instead of written back.
            let _ = cgroup.write("memory.swap.max", "0");
        }
        Ok(cgroup)
    }

    fn write(&self, file: &str, value: &str) -> Result<()> {
        let path = self.path.join(file);
        fs::write(&path, value).map_err(|e| Error::io(&path, "write", e))
    }

    /// Where it is and which interface it speaks, for a reader of its files.
    pub fn at(&self) -> CgroupAt<'_> {
        CgroupAt { path: &self.path, version: self.version }
    }

    /// Move this process (every thread) into the cgroup.
    pub fn enter(&self) -> Result<()> {
        self.write("cgroup.procs", &std::process::id().to_string())
    }

    /// Move this process back to the cgroup it came from.
    pub fn leave(&self) -> Result<()> {
        let path = self.home.join("cgroup.procs");
        fs::write(&path, std::process::id().to_string()).map_err(|e| Error::io(&path, "move fslab back to its cgroup", e))
    }

    /// For the record: the interface, the limit file, the path.
    pub fn describe(&self) -> String {
        let file = match self.version {
            CgroupVersion::V1 => "memory.limit_in_bytes",
            CgroupVersion::V2 => "memory.max",
        };
        format!("{} {file} {}", self.version.as_str(), self.path.display())
    }

    /// Read one of the cgroup's files, trimmed.
    pub fn read(&self, file: &str) -> io::Result<String> {
        fs::read_to_string(self.path.join(file)).map(|s| s.trim().to_string())
    }
}
