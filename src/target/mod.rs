//! Where measured work runs: a scratch file system made for it, a real
//! device named with a destructive flag, or an existing directory — each
//! a kind behind [`TargetKind`], one file each.
//!
//! Everything a target makes — folders, images, loop devices, mounts — is
//! written into the run's [`Ledger`] before it is made, and released in
//! reverse order when the target is released or the ledger dropped. fslab
//! formats only what it made itself, or a device the user named twice,
//! and releases only what it can prove it made (`proof.rs`), inside a
//! scratch folder that is its user's alone (`folder.rs`).
//! External tools (losetup, mkfs, mount) get their arguments as argv,
//! never through a shell.

mod device;
mod dir;
#[cfg(test)]
pub mod fake;
pub mod folder;
pub mod fs_type;
mod held;
pub mod kind;
pub mod ledger;
mod mounted;
pub mod proof;
mod scratch;
pub mod sysctl;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use fs_type::FsType;
pub use ledger::{Ledger, Resource, Token};
pub use device::Device;
pub use dir::Dir;
pub use kind::{Caps, Made, TargetKind, TargetSpec};
pub use mounted::mount_tracefs;
pub use scratch::Scratch;

/// What to make for each file system.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    /// Folder for images and mount points (`--scratch`).
    pub scratch: PathBuf,
    /// Size of each image; `None` for the default.
    pub size_bytes: Option<u64>,
    /// Extra mkfs arguments per file system (`--mkfs-opt FS=ARGS`).
    pub mkfs_args: BTreeMap<FsType, Vec<String>>,
    /// Mount options per file system (`--mount-opt FS=OPTS`).
    pub mount_opts: BTreeMap<FsType, String>,
}

/// The default scratch folder.
pub const DEFAULT_SCRATCH: &str = "/var/tmp/fslab";

/// The default image size: room for a few hundred MB of work on every file
/// system (mkfs.xfs wants at least 300 MiB). Images are sparse, so only
/// what is written takes space.
pub const DEFAULT_SIZE_BYTES: u64 = 2 << 30;

/// Parse `FS=VALUE` (the form of `--mkfs-opt` and `--mount-opt`).
pub fn parse_fs_value(text: &str) -> Result<(FsType, String), String> {
    let (fs, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not FS=VALUE (for example ext4=nodelalloc)"))?;
    Ok((fs.trim().parse()?, value.to_string()))
}

/// Check, before anything is made, that every target can be made here:
/// root, the mkfs tool, the kernel's support; the error says how to fix it.
pub fn check(specs: &[TargetSpec]) -> crate::error::Result<()> {
    let root = rustix::process::geteuid().is_root();
    for spec in specs {
        if spec.needs_root() && !root {
            return Err(crate::error::Error::environment(format!(
                "making a scratch {} file system needs root (loop devices, mkfs, mount): run as root, or use --dir PATH to measure in an existing directory",
                spec.label()
            )));
        }
        spec.check()?;
    }
    Ok(())
}
