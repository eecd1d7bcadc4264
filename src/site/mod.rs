//! Where measured work runs: a scratch file system made for it, a real
//! device named with a destructive flag, or an existing directory — each
//! a kind behind [`TargetKind`], one file each.
//!
//! Everything a target makes — folders, images, loop devices, mounts — is
//! written into the run's [`Ledger`](crate::ledger::Ledger) before it is made, and released in
//! reverse order when the target is released or the ledger dropped. fslab
//! formats only what it made itself, or a device the user named twice,
//! and releases only what it can prove it made (`proof.rs`), inside a
//! scratch folder that is its user's alone (`folder.rs`).
//! External tools (losetup, mkfs, mount) get their arguments as argv,
//! never through a shell.

mod crash_states;
mod device;
mod dir;
#[cfg(test)]
pub mod fake;
pub mod fs_type;
pub mod guest_files;
mod held;
mod hosted;
pub mod identity;
pub mod kind;
mod mounted;
pub mod options;
pub mod pool;
mod recorded;
pub mod recorder;
mod scratch;
mod state_check;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use crash_states::StateSeen;
pub use fs_type::FsType;
pub use device::Device;
pub use identity::DeviceIdentity;
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
    /// Start each scratch image as a copy of this image (a cache entry)
    /// instead of mkfs: the copy is made in the run folder (reflink where
    /// the folder's fs can, else a sparse copy), proved and ledgered like
    /// any image, and mounted with the run's options (xfs also with
    /// `nouuid`, since every copy shares the UUID; btrfs since 6.7 mounts a
    /// cloned single-device file system with a temporary fsid by itself).
    /// Its size is the entry's; `size_bytes` is not used.
    pub base_image: Option<std::sync::Arc<crate::age_cache::CacheEntry>>,
    /// The base image's copy in the run's reflink pool ([`pool`]): the
    /// case's image is made in the pool, as a reflink of it, instead of a
    /// copy in the run folder. Used only with `base_image`.
    pub pooled: Option<std::sync::Arc<pool::Pooled>>,
    /// Record every write the scratch device completes
    /// (`--crash-record`); `None` for a plain scratch target.
    pub record: Option<RecordOptions>,
    /// Inside a guest (`--crash-host-log`): the device's writes are
    /// logged by the host's QEMU into this log, which the guest reads.
    pub host_log: Option<PathBuf>,
}

/// How a scratch target's writes are recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    /// The recorder's program, checked ([`recorder::find_daemon`]).
    pub daemon: recorder::Daemon,
    /// The most bytes the write log may take; a case whose log reaches it
    /// fails, and the run exits 2.
    pub cap_bytes: u64,
    /// Keep each case's recording (the image before the work, the log and
    /// its manifest) in the scratch folder after the case.
    pub keep: bool,
}

/// The write log's cap when none is given: 4 GiB, twice the default
/// image.
pub const DEFAULT_LOG_CAP_BYTES: u64 = 4 << 30;

/// The default scratch folder.
pub const DEFAULT_SCRATCH: &str = "/var/tmp/fslab";

/// The default image size: room for a few hundred MB of work on every file
/// system (mkfs.xfs wants at least 300 MiB). Images are sparse, so only
/// what is written takes space.
pub const DEFAULT_SIZE_BYTES: u64 = 2 << 30;

/// The largest image size: a file's length is an `off_t`.
pub const MAX_SIZE_BYTES: u64 = i64::MAX as u64;

/// Refuse an image size no file system in `fs_list` can be made in (with
/// its extra `mkfs_args`), or no file can have, with the smallest (or
/// largest) that works.
pub fn check_size(size: u64, fs_list: &[FsType], mkfs_args: &BTreeMap<FsType, Vec<String>>) -> crate::error::Result<()> {
    if size > MAX_SIZE_BYTES {
        return Err(crate::error::Error::usage(format!(
            "--size {size}: more than the largest file there can be ({}); images are sparse, but give a size the scratch folder's file system can hold, such as 2G (the default)",
            crate::units::bytes_short(MAX_SIZE_BYTES)
        )));
    }
    let smallest = |fs: &FsType| fs.min_image_bytes(mkfs_args.get(fs).map_or(&[], Vec::as_slice));
    if let Some(fs) = fs_list.iter().filter(|fs| size < smallest(fs)).max_by_key(|fs| smallest(fs)) {
        let smallest = smallest(fs);
        return Err(crate::error::Error::usage(format!(
            "--size {}: too small for {fs}, whose smallest image fslab can make is {} ({smallest} bytes): give --size {} or more, or leave {fs} out of --fs",
            size_word(size),
            crate::units::bytes_short(smallest),
            size_word(smallest)
        )));
    }
    Ok(())
}

/// A size as `--size` takes it: `300M`, `104K`.
fn size_word(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    for (shift, suffix) in [(30, "G"), (20, "M"), (10, "K")] {
        if bytes % (1 << shift) == 0 {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_against_the_smallest_of_each_file_system() {
        let none = BTreeMap::new();
        assert!(check_size(2 << 20, &[FsType::Ext4], &none).is_ok());
        let e = check_size((2 << 20) - 1, &[FsType::Ext2, FsType::Ext4], &none).unwrap_err();
        assert!(e.message.contains("too small for ext4") && e.message.contains("--size 2M or more"), "{}", e.message);
        let e = check_size(64 << 20, &fs_type::ALL, &none).unwrap_err();
        assert!(e.message.contains("--size 64M: too small for xfs"), "{}", e.message);
        // btrfs --mixed fits in 16 MiB.
        assert!(check_size(64 << 20, &[FsType::Btrfs], &none).is_err());
        let mixed = BTreeMap::from([(FsType::Btrfs, vec!["--mixed".to_string()])]);
        assert!(check_size(64 << 20, &[FsType::Btrfs], &mixed).is_ok());
        let e = check_size(u64::MAX, &[FsType::Ext4], &none).unwrap_err();
        assert!(e.message.contains("largest file"), "{}", e.message);
    }
}
