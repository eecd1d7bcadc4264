//! The few ext2/3/4 superblock fields that decide how long an extent the
//! allocator can hand out to a block-mapped file: one block group's data
//! blocks.
//!
//! Read straight from the device (root only); `statfs` does not expose the
//! group geometry, and a guess would not be a measurement.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

const SUPERBLOCK_OFFSET: u64 = 1024;
const EXT_MAGIC: u16 = 0xEF53;
const INCOMPAT_FLEX_BG: u32 = 0x0200;
const INCOMPAT_64BIT: u32 = 0x0080;

/// The superblock fields fslab uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtSuperblock {
    /// Total blocks.
    pub blocks_count: u64,
    /// Block size in bytes.
    pub block_size: u32,
    /// First block of group 0 (1 for 1 KiB blocks, else 0, as mke2fs sets
    /// it; read, not assumed).
    pub first_data_block: u32,
    /// Blocks per block group.
    pub blocks_per_group: u32,
    /// Inodes per block group.
    pub inodes_per_group: u32,
    /// On-disk inode size in bytes.
    pub inode_size: u32,
    /// Whether bitmaps and inode tables are packed into flex groups
    /// (then an ordinary group holds no metadata).
    pub flex_bg: bool,
}

impl ExtSuperblock {
    /// Read and check the superblock of the ext file system on `device`.
    pub fn read(device: &Path) -> io::Result<Self> {
        let file = File::open(device)?;
        let mut sb = [0u8; 1024];
        file.read_exact_at(&mut sb, SUPERBLOCK_OFFSET)?;
        Self::parse(&sb)
    }

    /// Decode a 1024-byte superblock.
    pub fn parse(sb: &[u8; 1024]) -> io::Result<Self> {
        let u16_at = |o: usize| u16::from_le_bytes([sb[o], sb[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([sb[o], sb[o + 1], sb[o + 2], sb[o + 3]]);
        if u16_at(0x38) != EXT_MAGIC {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "no ext2/3/4 superblock (bad magic)"));
        }
        let incompat = u32_at(0x60);
        let mut blocks_count = u64::from(u32_at(0x04));
        if incompat & INCOMPAT_64BIT != 0 {
            blocks_count |= u64::from(u32_at(0x150)) << 32;
        }
        let rev_level = u32_at(0x4C);
        let inode_size = if rev_level == 0 { 128 } else { u32::from(u16_at(0x58)) };
        let log_block_size = u32_at(0x18);
        if log_block_size > 6 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "implausible ext block size"));
        }
        Ok(ExtSuperblock {
            blocks_count,
            block_size: 1024 << log_block_size,
            first_data_block: u32_at(0x14),
            blocks_per_group: u32_at(0x20),
            inodes_per_group: u32_at(0x28),
            inode_size,
            flex_bg: incompat & INCOMPAT_FLEX_BG != 0,
        })
    }

    /// Blocks of an ordinary group (no superblock backup) left for data:
    /// the group less its two bitmaps and its inode table, unless flex_bg
    /// moved those elsewhere.
    pub fn data_blocks_per_group(&self) -> u32 {
        if self.flex_bg {
            return self.blocks_per_group;
        }
        let inode_table = (u64::from(self.inodes_per_group) * u64::from(self.inode_size))
            .div_ceil(u64::from(self.block_size)) as u32;
        self.blocks_per_group.saturating_sub(2 + inode_table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn superblock(ipg: u32, inode_size: u16, log_bs: u32, incompat: u32) -> [u8; 1024] {
        let mut sb = [0u8; 1024];
        sb[0x04..0x08].copy_from_slice(&262_144u32.to_le_bytes());
        sb[0x18..0x1C].copy_from_slice(&log_bs.to_le_bytes());
        sb[0x20..0x24].copy_from_slice(&32_768u32.to_le_bytes());
        sb[0x28..0x2C].copy_from_slice(&ipg.to_le_bytes());
        sb[0x38..0x3A].copy_from_slice(&EXT_MAGIC.to_le_bytes());
        sb[0x4C..0x50].copy_from_slice(&1u32.to_le_bytes());
        sb[0x58..0x5A].copy_from_slice(&inode_size.to_le_bytes());
        sb[0x60..0x64].copy_from_slice(&incompat.to_le_bytes());
        sb
    }

    #[test]
    fn seed_001_group_has_32257_data_blocks() {
        // Seed 001's dumpe2fs: 4 KiB blocks, 32768 blocks and 16288 inodes
        // of 128 bytes per group, "Inode blocks per group: 509".
        let sb = ExtSuperblock::parse(&superblock(16_288, 128, 2, 0)).unwrap();
        assert_eq!(sb.block_size, 4096);
        assert_eq!(sb.data_blocks_per_group(), 32_768 - 2 - 509);
    }

    #[test]
    fn flex_bg_groups_are_all_data() {
        let sb = ExtSuperblock::parse(&superblock(8192, 256, 2, INCOMPAT_FLEX_BG)).unwrap();
        assert_eq!(sb.data_blocks_per_group(), 32_768);
    }

    #[test]
    fn bad_magic_is_refused() {
        let mut sb = superblock(1, 128, 2, 0);
        sb[0x38] = 0;
        assert!(ExtSuperblock::parse(&sb).is_err());
    }
}
