//! Which XFS allocation group an extent lies in, and where in it: the AG
//! and AG-OFFSET columns of `xfs_bmap -v`.
//!
//! FIEMAP gives a byte offset on the data device, and XFS lays its
//! allocation groups end to end there, `agblocks` blocks each (the last may
//! be shorter). So the group is that offset divided by the group's size in
//! bytes, and the offset in it the remainder. (XFS's internal block numbers
//! pack the group into the high bits, `agno << agblklog`, and are *not*
//! linear; FIEMAP has already turned them into device addresses, so that
//! packing never appears here.) Files on a realtime device are not in any
//! allocation group; fslab does not tell them apart (see DESIGN).

use crate::sys::xfs::XfsGeometry;

/// The size of an XFS allocation group, enough to place any device offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgGeometry {
    /// Blocks per allocation group (`agblocks`, `xfs_info`'s `agsize`).
    pub ag_blocks: u32,
    /// Number of allocation groups.
    pub ag_count: u32,
    /// Block size in bytes.
    pub block_size: u32,
}

impl From<XfsGeometry> for AgGeometry {
    fn from(g: XfsGeometry) -> Self {
        AgGeometry { ag_blocks: g.ag_blocks, ag_count: g.ag_count, block_size: g.block_size }
    }
}

impl AgGeometry {
    /// Bytes per allocation group.
    pub fn ag_bytes(&self) -> u64 {
        u64::from(self.ag_blocks) * u64::from(self.block_size)
    }

    /// The allocation group holding device byte `physical`, and the byte
    /// offset of `physical` inside that group. `None` for a degenerate
    /// geometry (no blocks per group).
    pub fn locate(&self, physical: u64) -> Option<(u64, u64)> {
        let ag_bytes = self.ag_bytes();
        (ag_bytes > 0).then(|| (physical / ag_bytes, physical % ag_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(ag_blocks: u32) -> AgGeometry {
        AgGeometry { ag_blocks, ag_count: 4, block_size: 4096 }
    }

    #[test]
    fn the_first_group_starts_at_the_device_start() {
        // xfs_bmap -v on a fresh 512 MiB file system: block range 192..2239
        // (512-byte units) is AG 0 at AG-OFFSET 192..2239.
        let g = geometry(32_768);
        assert_eq!(g.locate(192 * 512), Some((0, 192 * 512)));
    }

    #[test]
    fn groups_follow_each_other_at_agblocks() {
        let g = geometry(32_768);
        let ag_bytes = 32_768 * 4096;
        assert_eq!(g.locate(ag_bytes - 4096), Some((0, ag_bytes - 4096)));
        assert_eq!(g.locate(ag_bytes), Some((1, 0)));
        assert_eq!(g.locate(3 * ag_bytes + 5 * 4096), Some((3, 5 * 4096)));
    }

    #[test]
    fn agblocks_that_are_no_power_of_two_stay_linear() {
        // mkfs picks agblocks freely (here 30,517 blocks); the packed
        // fsblock numbering rounds it up to 2^15, the device does not.
        let g = geometry(30_517);
        let ag_bytes = 30_517u64 * 4096;
        assert_eq!(g.locate(2 * ag_bytes + 8192), Some((2, 8192)));
        assert_eq!(g.locate(ag_bytes - 1), Some((0, ag_bytes - 1)));
    }

    #[test]
    fn no_blocks_per_group_places_nothing() {
        assert_eq!(geometry(0).locate(4096), None);
    }
}
