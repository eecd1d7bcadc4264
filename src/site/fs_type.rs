//! The file systems fslab can make, with their mkfs tools and the package
//! that brings each.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{Error, Result};

/// A file system fslab knows how to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FsType {
    /// ext2: no journal, no extents (block maps).
    Ext2,
    /// ext3: ext2 with a jbd2 journal.
    Ext3,
    /// ext4: extents, delayed allocation, multi-block allocator.
    Ext4,
    /// XFS.
    Xfs,
    /// Btrfs.
    Btrfs,
}

/// Every file system, in the order tables list them.
pub const ALL: [FsType; 5] = [FsType::Ext2, FsType::Ext3, FsType::Ext4, FsType::Xfs, FsType::Btrfs];

/// The directory hash seed every ext file system is made with (any fixed
/// UUID would do).
const EXT_HASH_SEED: &str = "f51ab000-5eed-4000-8000-000000000001";

impl FsType {
    /// The kernel's name for it.
    pub fn name(self) -> &'static str {
        match self {
            FsType::Ext2 => "ext2",
            FsType::Ext3 => "ext3",
            FsType::Ext4 => "ext4",
            FsType::Xfs => "xfs",
            FsType::Btrfs => "btrfs",
        }
    }

    /// The mkfs program.
    pub fn mkfs(self) -> String {
        format!("mkfs.{}", self.name())
    }

    /// The Debian package that brings the mkfs program.
    pub fn package(self) -> &'static str {
        match self {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => "e2fsprogs",
            FsType::Xfs => "xfsprogs",
            FsType::Btrfs => "btrfs-progs",
        }
    }

    /// The mkfs arguments fslab always gives, before the user's: force
    /// (the device is ours), quiet, and for ext3/ext4 inode tables and
    /// journal written at mkfs time — lazy init would otherwise write them
    /// from a kernel thread *during* the measured work.
    ///
    /// ext2/3/4 get a fixed directory hash seed: mke2fs otherwise draws one
    /// at random, and with it the order of names in a directory (what tar
    /// reads in) and where new top-level directories go — so figures that
    /// should be exact would differ from run to run.
    pub fn base_mkfs_args(self) -> Vec<String> {
        let hash_seed = format!("hash_seed={EXT_HASH_SEED}");
        match self {
            FsType::Ext2 => vec!["-F".into(), "-q".into(), "-E".into(), hash_seed],
            FsType::Ext3 | FsType::Ext4 => {
                vec!["-F".into(), "-q".into(), "-E".into(), format!("lazy_itable_init=0,lazy_journal_init=0,{hash_seed}")]
            }
            FsType::Xfs | FsType::Btrfs => vec!["-f".into(), "-q".into()],
        }
    }

    /// The smallest image, in bytes, on which fslab's own mkfs arguments
    /// and the user's `extra` ones make a file system that mounts: found
    /// by running each mkfs on this machine's e2fsprogs 1.47, xfsprogs 6
    /// and btrfs-progs 6 and mounting the result. Below 2 MiB mke2fs
    /// leaves the journal out (an ext3 without one does not mount, an ext4
    /// without one is not the ext4 measured); mkfs.xfs refuses under 300
    /// MiB; mkfs.btrfs under 109 MiB (114294784 bytes), or 16 MiB with
    /// `-M`/`--mixed`.
    pub fn min_image_bytes(self, extra: &[String]) -> u64 {
        match self {
            FsType::Ext2 => 104 << 10,
            FsType::Ext3 | FsType::Ext4 => 2 << 20,
            FsType::Xfs => 300 << 20,
            FsType::Btrfs if extra.iter().any(|w| w == "-M" || w == "--mixed") => 16 << 20,
            FsType::Btrfs => 109 << 20,
        }
    }

    /// The mkfs program's path, if installed.
    pub fn mkfs_path(self) -> Option<PathBuf> {
        find_program(&self.mkfs())
    }

    /// Fail with the fix when the mkfs tool or the kernel's support is
    /// missing.
    pub fn check_available(self) -> Result<()> {
        if self.mkfs_path().is_none() {
            return Err(Error::environment(format!(
                "{} is not installed: install the {} package (apt-get install {}), or leave {} out of --fs",
                self.mkfs(),
                self.package(),
                self.package(),
                self.name()
            )));
        }
        let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        if !kernel_has(&filesystems, self.name()) {
            return Err(Error::environment(format!(
                "this kernel has no {0} support (not in /proc/filesystems): load it (modprobe {0}) or leave {0} out of --fs",
                self.name()
            )));
        }
        Ok(())
    }
}

/// Whether `/proc/filesystems` text lists `name`.
fn kernel_has(filesystems: &str, name: &str) -> bool {
    filesystems.lines().any(|line| line.split_whitespace().last() == Some(name))
}

/// Look a program up on PATH and in the sbin folders, which a non-login
/// root shell may not have on PATH.
pub fn find_program(program: &str) -> Option<PathBuf> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .chain(["/usr/local/sbin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl fmt::Display for FsType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FsType {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        ALL.into_iter().find(|fs| fs.name() == s).ok_or_else(|| {
            format!("unknown file system `{s}`: fslab makes ext2, ext3, ext4, xfs and btrfs")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_say_what_is_known() {
        for fs in ALL {
            assert_eq!(fs.name().parse::<FsType>(), Ok(fs));
        }
        let e = "f2fs".parse::<FsType>().unwrap_err();
        assert!(e.contains("f2fs") && e.contains("btrfs"), "{e}");
    }

    #[test]
    fn kernel_support_is_read_from_proc_filesystems() {
        let text = "nodev\tsysfs\nnodev\ttmpfs\n\text3\n\text4\n";
        assert!(kernel_has(text, "ext4"));
        assert!(kernel_has(text, "ext3"));
        assert!(!kernel_has(text, "xfs"));
        assert!(!kernel_has(text, "ext"));
    }

    #[test]
    fn programs_are_found_in_sbin() {
        assert!(find_program("losetup").is_some());
        assert!(find_program("no-such-program-fslab").is_none());
    }
}
