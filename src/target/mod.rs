//! Where measured work runs: a scratch file system made for it, a real
//! device named with a destructive flag, or an existing directory.
//!
//! Everything a target makes — folders, images, loop devices, mounts — is
//! written into the run's [`Ledger`] before it is made, and released in
//! reverse order when the target is released or the ledger dropped. fslab
//! formats only what it made itself, or a device the user named twice.
//! External tools (losetup, mkfs, mount) get their arguments as argv,
//! never through a shell.

pub mod fs_type;
pub mod ledger;
mod scratch;
pub mod sysctl;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use fs_type::FsType;
pub use ledger::{Ledger, Resource, Token};
pub use scratch::Target;

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

/// One place to run work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A fresh file system on a loop device over a sparse image.
    Scratch(FsType),
    /// A fresh file system on a real block device the user gave up.
    Device {
        /// The file system to make.
        fs: FsType,
        /// The device, named by both `--device` and `--destroy-data-on`.
        device: PathBuf,
    },
    /// A new folder inside an existing directory.
    Dir(PathBuf),
    /// A scratch file system made a named other way: extra mkfs arguments
    /// and mount options on top of the run's (a preset's `ext2-1k`).
    Variant {
        /// The row's name (`ext2-1k`).
        label: String,
        /// The file system to make.
        fs: FsType,
        /// mkfs arguments added after the run's own for `fs`.
        mkfs_args: Vec<String>,
        /// Mount options, replacing the run's for `fs` when given.
        mount_opts: Option<String>,
    },
}

impl TargetSpec {
    /// The name a row of results goes under: the fs name, or `dir`.
    pub fn label(&self) -> String {
        match self {
            TargetSpec::Scratch(fs) | TargetSpec::Device { fs, .. } => fs.name().to_string(),
            TargetSpec::Variant { label, .. } => label.clone(),
            TargetSpec::Dir(_) => "dir".to_string(),
        }
    }

    /// Whether making this target needs root.
    pub fn needs_root(&self) -> bool {
        !matches!(self, TargetSpec::Dir(_))
    }
}

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
    use crate::error::Error;
    let root = rustix::process::geteuid().is_root();
    for spec in specs {
        if spec.needs_root() && !root {
            return Err(Error::environment(format!(
                "making a scratch {} file system needs root (loop devices, mkfs, mount): run as root, or use --dir PATH to measure in an existing directory",
                spec.label()
            )));
        }
        if let TargetSpec::Scratch(fs) | TargetSpec::Device { fs, .. } | TargetSpec::Variant { fs, .. } = spec {
            fs.check_available()?;
        }
        if let TargetSpec::Device { device, .. } = spec {
            scratch::check_device_free(device)?;
        }
        if let TargetSpec::Dir(dir) = spec {
            check_dir(dir)?;
        }
    }
    Ok(())
}

fn check_dir(dir: &Path) -> crate::error::Result<()> {
    use crate::error::Error;
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::usage(format!("--dir {}: not a directory", dir.display()))),
        Err(e) => Err(Error::io(dir, "--dir", e)),
    }
}
