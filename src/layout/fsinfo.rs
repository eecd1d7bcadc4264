//! What kind of file system a file is on, and the longest extent that file
//! system can hand out — the divisor of the "perfection" figure.
//!
//! `docs/DESIGN.md`'s rule, per file system: block-mapped ext2/ext3 files, one
//! block group's data blocks (this reproduces seed 000's "perfection would
//! be 9" for 1 GiB on 4 KiB-block ext3); ext4 extents, 32,768 blocks; xfs,
//! the smaller of the largest extent record (2^21 - 1 blocks) and an
//! allocation group; btrfs, 128 MiB. When the geometry cannot be read (ext
//! superblock without root), perfection is missing, not guessed.

use std::os::fd::AsFd;
use std::path::PathBuf;

use super::ext_super::ExtSuperblock;
use super::mounts;
use super::xfs_ag::AgGeometry;
use crate::sys;

/// `statfs` magic numbers fslab knows by name.
pub mod magic {
    /// ext2, ext3 and ext4 share one magic.
    pub const EXT: i64 = 0xEF53;
    /// XFS.
    pub const XFS: i64 = 0x5846_5342;
    /// btrfs.
    pub const BTRFS: i64 = 0x9123_683E;
    /// tmpfs.
    pub const TMPFS: i64 = 0x0102_1994;
}

/// ext4's longest initialised extent, in blocks.
const EXT4_MAX_EXTENT_BLOCKS: u64 = 32_768;
/// XFS's longest extent record (`XFS_MAX_BMBT_EXTLEN`), in blocks.
const XFS_MAX_EXTENT_BLOCKS: u64 = (1 << 21) - 1;
/// btrfs's longest data extent (`BTRFS_MAX_EXTENT_SIZE`), in bytes.
const BTRFS_MAX_EXTENT_BYTES: u64 = 128 << 20;
/// `EXT4_EXTENTS_FL`: the inode maps its blocks with extents.
const EXT4_EXTENTS_FL: u32 = 0x0008_0000;

/// How the longest possible extent was decided, for printing beside the
/// perfection figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfectionRule {
    /// The longest extent in bytes, or `None` when it cannot be known here.
    pub max_extent_bytes: Option<u64>,
    /// The rule in words, with its numbers.
    pub text: String,
}

impl PerfectionRule {
    /// The fewest extents a file of `size` bytes could have: size divided by
    /// the longest extent, rounded up.
    pub fn perfection(&self, size: u64) -> Option<u64> {
        self.max_extent_bytes.map(|max| size.div_ceil(max))
    }
}

/// Facts about one mounted file system, found once per device.
#[derive(Debug, Clone)]
pub struct FsInfo {
    /// The type name (`ext3`, `xfs`, ...) from mountinfo, else from the
    /// magic, else the magic in hex.
    pub fs_type: String,
    /// `statfs` magic.
    pub magic: i64,
    /// Block size in bytes (FIGETBSZ, as filefrag uses).
    pub block_size: u32,
    /// Where it is mounted, when mountinfo says.
    pub mount_point: Option<PathBuf>,
    /// Total size of the file system in bytes (`statfs`).
    pub total_bytes: u64,
    /// On xfs, the allocation groups' size, to place extents in them.
    pub xfs_ag: Option<AgGeometry>,
    /// Rule for block-mapped files (ext2/ext3 style).
    block_mapped_rule: PerfectionRule,
    /// Rule for everything else on this file system.
    extent_rule: PerfectionRule,
}

impl FsInfo {
    /// Inspect the file system holding the open file `fd`.
    pub fn probe(fd: impl AsFd) -> std::io::Result<FsInfo> {
        let fd = fd.as_fd();
        let st = rustix::fs::fstat(fd)?;
        let sfs = rustix::fs::fstatfs(fd)?;
        let magic = sfs.f_type as i64;
        let block_size = sys::ioctl::block_size(fd).unwrap_or(sfs.f_bsize as u32);
        let mount = mounts::find_by_device(rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        let fs_type = match (&mount, magic) {
            (Some(m), _) => m.fs_type.clone(),
            (None, magic::EXT) => "ext".to_string(),
            (None, magic::XFS) => "xfs".to_string(),
            (None, magic::BTRFS) => "btrfs".to_string(),
            (None, other) => format!("0x{other:x}"),
        };
        let bs = u64::from(block_size);
        let unknown = |why: String| PerfectionRule { max_extent_bytes: None, text: why };
        let mut xfs_ag = None;
        let (block_mapped_rule, extent_rule) = match magic {
            magic::EXT => {
                let group_rule = match mount.as_ref().map(|m| ExtSuperblock::read(m.source.as_ref())) {
                    Some(Ok(sb)) => {
                        let blocks = u64::from(sb.data_blocks_per_group());
                        PerfectionRule {
                            max_extent_bytes: Some(blocks * u64::from(sb.block_size)),
                            text: format!("block-mapped: one block group's data blocks ({blocks} blocks)"),
                        }
                    }
                    Some(Err(e)) => unknown(format!(
                        "block-mapped: group size unknown (superblock unreadable: {}; run as root)",
                        crate::error::describe_io(&e)
                    )),
                    None => unknown("block-mapped: group size unknown (no mount entry)".to_string()),
                };
                let ext4 = PerfectionRule {
                    max_extent_bytes: Some(EXT4_MAX_EXTENT_BLOCKS * bs),
                    text: format!("ext4 extents: {EXT4_MAX_EXTENT_BLOCKS} blocks per extent"),
                };
                (group_rule, ext4)
            }
            magic::XFS => {
                let rule = match sys::xfs::geometry(fd) {
                    Ok(g) => {
                        xfs_ag = Some(AgGeometry::from(g));
                        let blocks = XFS_MAX_EXTENT_BLOCKS.min(u64::from(g.ag_blocks));
                        PerfectionRule {
                            max_extent_bytes: Some(blocks * u64::from(g.block_size)),
                            text: format!(
                                "xfs: min(2^21-1 blocks, allocation group of {} blocks) = {blocks} blocks",
                                g.ag_blocks
                            ),
                        }
                    }
                    Err(e) => unknown(format!("xfs: geometry unreadable ({})", crate::error::describe_io(&e))),
                };
                (rule.clone(), rule)
            }
            magic::BTRFS => {
                let rule = PerfectionRule {
                    max_extent_bytes: Some(BTRFS_MAX_EXTENT_BYTES),
                    text: "btrfs: 128 MiB per extent".to_string(),
                };
                (rule.clone(), rule)
            }
            _ => {
                let rule = unknown(format!("{fs_type}: longest extent unknown"));
                (rule.clone(), rule)
            }
        };
        Ok(FsInfo {
            fs_type,
            magic,
            block_size,
            mount_point: mount.map(|m| m.mount_point),
            total_bytes: sfs.f_blocks * sfs.f_bsize as u64,
            xfs_ag,
            block_mapped_rule,
            extent_rule,
        })
    }

    /// Whether files here may be block-mapped, so that the per-file inode
    /// flag must be asked for (ext3/ext4 only; ext2 never has extents).
    pub fn needs_inode_flags(&self) -> bool {
        self.magic == magic::EXT && self.fs_type != "ext2" && self.fs_type != "ext3"
    }

    /// The perfection rule for the file open on `fd` on this file system.
    /// On ext file systems it depends on whether that inode uses extents,
    /// as filefrag decides it (`EXT4_EXTENTS_FL`).
    pub fn rule_for(&self, fd: impl AsFd) -> &PerfectionRule {
        self.rule_for_size(fd, None, None)
    }

    /// As [`rule_for`](Self::rule_for), skipping the inode-flags ioctl when
    /// both rules give a file of `size` bytes the same perfection (any file
    /// under ~126 MiB on 4 KiB blocks), or when the file's extents already
    /// said how it maps (`merged`: ext4 marks every extent of a block-mapped
    /// inode `FIEMAP_EXTENT_MERGED` and none of an extent-mapped one's;
    /// `None` when it had no extent). A tree walk gives both, and so reads
    /// the flags almost never.
    pub fn rule_for_size(&self, fd: impl AsFd, size: Option<u64>, merged: Option<bool>) -> &PerfectionRule {
        if self.magic != magic::EXT {
            return &self.extent_rule;
        }
        if !self.needs_inode_flags() {
            return &self.block_mapped_rule;
        }
        if let Some(size) = size
            && self.block_mapped_rule.perfection(size) == self.extent_rule.perfection(size)
        {
            return &self.extent_rule;
        }
        match merged {
            Some(true) => return &self.block_mapped_rule,
            Some(false) => return &self.extent_rule,
            None => {}
        }
        match rustix::fs::ioctl_getflags(fd) {
            Ok(flags) if flags.bits() & EXT4_EXTENTS_FL != 0 => &self.extent_rule,
            Ok(_) => &self.block_mapped_rule,
            Err(_) => &self.extent_rule,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfection_rounds_up() {
        let rule = PerfectionRule { max_extent_bytes: Some(32_257 * 4096), text: String::new() };
        // Seed 000: 1 GiB on 4 KiB-block ext3 gives "perfection would be 9".
        assert_eq!(rule.perfection(1 << 30), Some(9));
        assert_eq!(rule.perfection(0), Some(0));
        assert_eq!(rule.perfection(1), Some(1));
        let unknown = PerfectionRule { max_extent_bytes: None, text: String::new() };
        assert_eq!(unknown.perfection(10), None);
    }
}
