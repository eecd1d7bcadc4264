//! Free-space fragmentation of a mounted file system, from GETFSMAP's free
//! records: how many free extents, the largest, a power-of-two histogram as
//! e2freefrag and `xfs_db freesp` print it, the share in extents of 1 MiB
//! or more, 1 - largest/free, and the same per allocation or block group.
//!
//! The headline is `fragmented_share`: the share of free bytes in free
//! extents shorter than a stated reference length (1 MiB unless asked
//! otherwise). It does not grow with the size of the file system, which
//! `1 - largest/free` (`outside_largest`) does: a 256 GiB file system whose
//! free space lies in 64-128 MiB extents has `outside_largest` 0.999 and
//! `fragmented_share` 0.0. The reference is what makes it a measure of
//! fragmentation: free space in pieces too short for the writes one cares
//! about.
//!
//! The one design decision: **a free extent is a maximal run of physically
//! adjacent free blocks**, and a run that only a block-group boundary cuts
//! is one extent. That is how e2freefrag counts offline (its
//! `scan_block_bitmap` walks the whole bitmap and never breaks a run at a
//! group edge) and online (it counts GETFSMAP's free records as they come,
//! and ext4's GETFSMAP keeps the free extent that ends a group,
//! `gfi_lastfree`, and lengthens it with one that starts the next). fslab
//! merges adjacent free records itself as well, so its count does not rest
//! on the kernel doing so. XFS free extents cannot cross an allocation group
//! (every AG starts with its headers), so nothing changes there. Only the
//! `--groups` view splits extents at group edges, because there each group
//! is its own allocator.
//!
//! Everything streams: records go through a [`FreeSpaceAccumulator`] as the
//! kernel returns them; memory is one GETFSMAP buffer plus one entry per
//! group when groups are asked for.
//!
//! What "free" means, and where other tools differ (measured on Linux 6.18,
//! e2fsprogs 1.47, xfsprogs 6.1):
//! - GETFSMAP reports the allocator's view, which can run ahead of the
//!   disk. On a mounted ext4, a locality-group preallocation (the 512 blocks,
//!   `mb_group_prealloc`, that small files are carved from) counts as used
//!   as a whole until unmount: three 8 KiB files took 512 blocks while
//!   mounted, 6 after a remount. On the 256 MiB test fs: 46,282 free blocks
//!   mounted, 46,753 after a remount; e2freefrag online and offline print the
//!   same two numbers. On XFS, the blocks of just-deleted files come back
//!   when background inode inactivation (inodegc) gets to them: 173 free
//!   extents right after `rm`, 203 after `sync` (once only 181, and 203
//!   after a remount). An unmount settles both.
//! - `xfs_db freesp` also counts each block on the AG free list (AGFL) as a
//!   one-block free extent; GETFSMAP does not call them free (they are
//!   reserved for the free-space btrees), and neither does fslab.
//! - Root-reserved blocks (ext4 `-m`) are free here, as in e2freefrag.

mod getfsmap;

use serde::Serialize;

pub use getfsmap::{measure, measure_with_reference};

/// Free extents of at least this many bytes count towards `share_1mib`.
pub const SHARE_THRESHOLD_BYTES: u64 = 1 << 20;

/// The reference length `fragmented_share` is taken against unless the
/// caller says otherwise (`free --reference`): the same 1 MiB as
/// `share_1mib`, so by default the two add up to 1.
pub const DEFAULT_REFERENCE_BYTES: u64 = SHARE_THRESHOLD_BYTES;

/// Free space of one file system, as `free --json` prints it under `free`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreeSpace {
    /// The mount point, from mountinfo (else the path as given).
    pub mount_point: String,
    /// File-system type name (`ext4`, `xfs`, ...).
    pub fs_type: String,
    /// What is mounted there (the device), when mountinfo says.
    pub device: Option<String>,
    /// File-system block size in bytes; histogram buckets are in blocks.
    pub block_size: u32,
    /// Size of the file system (its data device) in bytes.
    pub total_bytes: u64,
    /// Free bytes: the sum of all free extents.
    pub free_bytes: u64,
    /// Free extents, adjacent free records merged.
    pub free_extents: u64,
    /// The largest free extent in bytes (0 when nothing is free).
    pub largest_bytes: u64,
    /// The length `fragmented_share` is taken against, bytes: a whole
    /// number of blocks (1 MiB unless asked otherwise).
    pub reference_bytes: u64,
    /// The headline: fraction of free bytes in free extents shorter than
    /// `reference_bytes`, so it reads the same on a small and a large file
    /// system whose free space is cut alike; `null` when nothing is free.
    pub fragmented_share: Option<f64>,
    /// Free bytes per free extent (rounded down), shown beside the
    /// headline; `null` when nothing is free.
    pub mean_free_bytes: Option<u64>,
    /// Fraction of free bytes in free extents of 1 MiB or more; `null` when
    /// nothing is free.
    pub share_1mib: Option<f64>,
    /// Share of free space outside the largest free extent, 1 - largest/free
    /// (the figure fsperf tracks). It grows with the size of the file
    /// system, so it is not the headline; `null` when nothing is free.
    pub outside_largest: Option<f64>,
    /// The same value as `outside_largest` under its fslab/1 name, kept for
    /// readers of that schema; deprecated.
    pub fragmentation: Option<f64>,
    /// Non-empty power-of-two buckets, smallest first.
    pub histogram: Vec<FreeBucket>,
    /// Per allocation group (xfs) or block group (ext4), with `--groups`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<GroupFree>>,
    /// What `groups` are (for printing), when there are groups.
    #[serde(skip)]
    pub group_kind: Option<GroupKind>,
}

/// One histogram bucket: free extents of `2^k` to `2^(k+1) - 1` blocks
/// (e2freefrag's rows; `xfs_db freesp`'s `from`/`to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FreeBucket {
    /// Smallest extent size in the bucket, bytes (`2^k` blocks).
    pub min_bytes: u64,
    /// Largest extent size in the bucket, bytes, inclusive
    /// (`2^(k+1) - 1` blocks).
    pub max_bytes: u64,
    /// Free extents in the bucket.
    pub extents: u64,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// Free space of one group, extents split at the group's edges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GroupFree {
    /// Group number.
    pub group: u64,
    /// Where the group starts on the device, bytes.
    pub start_bytes: u64,
    /// Group length in bytes (the last group may be shorter).
    pub length_bytes: u64,
    /// Free bytes in the group.
    pub free_bytes: u64,
    /// Free extents in the group.
    pub free_extents: u64,
    /// Largest free extent inside the group, bytes.
    pub largest_bytes: u64,
    /// Fraction of the group's free bytes in pieces shorter than the
    /// reference, pieces cut at the group's edges (each group allocates on
    /// its own); `null` when nothing in it is free.
    pub fragmented_share: Option<f64>,
}

/// How a file system's data device is cut into groups, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupGeometry {
    /// What the file system calls a group, for printing.
    pub kind: GroupKind,
    /// Where group 0 starts (ext: `s_first_data_block` blocks in).
    pub first_bytes: u64,
    /// Length of every group but possibly the last.
    pub group_bytes: u64,
    /// End of the last group: the size of the data device.
    pub end_bytes: u64,
}

/// Allocation groups (xfs) or block groups (ext2/3/4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// XFS allocation groups.
    AllocationGroup,
    /// ext2/3/4 block groups.
    BlockGroup,
}

impl GroupKind {
    /// The name for a column header.
    pub fn name(self) -> &'static str {
        match self {
            GroupKind::AllocationGroup => "allocation group",
            GroupKind::BlockGroup => "block group",
        }
    }
}

impl GroupGeometry {
    /// Number of groups.
    pub fn count(&self) -> u64 {
        if self.group_bytes == 0 {
            return 0;
        }
        self.end_bytes.saturating_sub(self.first_bytes).div_ceil(self.group_bytes)
    }

    /// The group holding byte `offset`, if any.
    fn group_of(&self, offset: u64) -> Option<u64> {
        if offset < self.first_bytes || offset >= self.end_bytes || self.group_bytes == 0 {
            return None;
        }
        Some((offset - self.first_bytes) / self.group_bytes)
    }

    /// `[start, end)` of group `g`.
    fn bounds(&self, g: u64) -> (u64, u64) {
        let start = self.first_bytes + g * self.group_bytes;
        (start, (start + self.group_bytes).min(self.end_bytes))
    }
}

/// The power-of-two bucket of an extent of `blocks` blocks: k with
/// `2^k <= blocks < 2^(k+1)` — e2freefrag's `ul_log2(size)` (its row k+1,
/// row 0 holding sub-block extents that cannot occur) and the default bins of
/// `xfs_db freesp` (`-b`, from 1 doubling). A zero-block extent goes to 0.
pub fn bucket_of(blocks: u64) -> usize {
    blocks.max(1).ilog2() as usize
}

/// 1 - largest/free (fsperf's free-space fragmentation, here the share of
/// free space outside the largest free extent): 0 when all free space is
/// one extent, towards 1 when it is dust — or merely when the file system
/// is large. `None` when nothing is free, where the ratio means nothing.
pub fn outside_largest(largest_bytes: u64, free_bytes: u64) -> Option<f64> {
    (free_bytes > 0).then(|| 1.0 - largest_bytes as f64 / free_bytes as f64)
}

/// `part / whole` as a fraction, `None` when `whole` is 0.
pub fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    extents: u64,
    bytes: u64,
    largest: u64,
    /// Bytes in extents shorter than the reference.
    below_reference: u64,
}

impl Tally {
    fn add(&mut self, bytes: u64, reference: u64) {
        self.extents += 1;
        self.bytes += bytes;
        self.largest = self.largest.max(bytes);
        if bytes < reference {
            self.below_reference += bytes;
        }
    }
}

/// Turns free records, in ascending physical order on one device, into
/// [`FreeSpace`] figures: adjacent records merge into one extent (see the
/// module doc); memory does not grow with the number of records.
#[derive(Debug, Clone)]
pub struct FreeSpaceAccumulator {
    block_size: u64,
    /// Extents shorter than this are fragmented: a whole number of blocks.
    reference: u64,
    /// The free run being built: `[start, end)`.
    pending: Option<(u64, u64)>,
    total: Tally,
    at_least_1mib: u64,
    /// (extents, bytes) per bucket k.
    buckets: Vec<(u64, u64)>,
    groups: Option<(GroupGeometry, Vec<Tally>)>,
}

impl FreeSpaceAccumulator {
    /// An empty accumulator for a file system with `block_size`-byte blocks,
    /// also splitting per group when `groups` is given; the reference is
    /// [`DEFAULT_REFERENCE_BYTES`].
    pub fn new(block_size: u32, groups: Option<GroupGeometry>) -> Self {
        let block_size = u64::from(block_size.max(1));
        FreeSpaceAccumulator {
            block_size,
            reference: DEFAULT_REFERENCE_BYTES.div_ceil(block_size) * block_size,
            pending: None,
            total: Tally::default(),
            at_least_1mib: 0,
            buckets: Vec::new(),
            groups: groups.map(|g| (g, vec![Tally::default(); g.count() as usize])),
        }
    }

    /// Take `fragmented_share` against `reference_bytes`, rounded up to a
    /// whole block (at least one). Free extents are whole blocks, so the
    /// rounding changes no figure; it only makes the stated reference a
    /// length an extent can have.
    pub fn with_reference(mut self, reference_bytes: u64) -> Self {
        self.reference = reference_bytes.div_ceil(self.block_size).max(1).saturating_mul(self.block_size);
        self
    }

    /// Add one free record of `length` bytes at byte `physical`. A record
    /// that starts where the pending run ends extends it.
    pub fn push(&mut self, physical: u64, length: u64) {
        if length == 0 {
            return;
        }
        let end = physical.saturating_add(length);
        match &mut self.pending {
            Some((_, pending_end)) if *pending_end == physical => *pending_end = end,
            _ => {
                self.flush();
                self.pending = Some((physical, end));
            }
        }
    }

    fn flush(&mut self) {
        let Some((start, end)) = self.pending.take() else { return };
        let bytes = end - start;
        self.total.add(bytes, self.reference);
        if bytes >= SHARE_THRESHOLD_BYTES {
            self.at_least_1mib += bytes;
        }
        let k = bucket_of(bytes / self.block_size);
        if self.buckets.len() <= k {
            self.buckets.resize(k + 1, (0, 0));
        }
        self.buckets[k].0 += 1;
        self.buckets[k].1 += bytes;
        if let Some((geometry, tallies)) = &mut self.groups {
            let mut at = start;
            while at < end {
                let Some(g) = geometry.group_of(at) else { break };
                let (_, group_end) = geometry.bounds(g);
                let piece_end = end.min(group_end);
                if let Some(tally) = tallies.get_mut(g as usize) {
                    tally.add(piece_end - at, self.reference);
                }
                at = piece_end;
            }
        }
    }

    /// The figures, for a file system of `total_bytes`.
    pub fn finish(mut self, identity: FsIdentity, total_bytes: u64) -> FreeSpace {
        self.flush();
        let bs = self.block_size;
        let histogram = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, (extents, _))| *extents > 0)
            .map(|(k, &(extents, bytes))| FreeBucket {
                min_bytes: (1u64 << k) * bs,
                max_bytes: ((1u64 << (k + 1)) - 1) * bs,
                extents,
                bytes,
            })
            .collect();
        let group_kind = self.groups.as_ref().map(|(geometry, _)| geometry.kind);
        let groups = self.groups.map(|(geometry, tallies)| {
            tallies
                .iter()
                .enumerate()
                .map(|(g, t)| {
                    let (start, end) = geometry.bounds(g as u64);
                    GroupFree {
                        group: g as u64,
                        start_bytes: start,
                        length_bytes: end - start,
                        free_bytes: t.bytes,
                        free_extents: t.extents,
                        largest_bytes: t.largest,
                        fragmented_share: share(t.below_reference, t.bytes),
                    }
                })
                .collect()
        });
        FreeSpace {
            mount_point: identity.mount_point,
            fs_type: identity.fs_type,
            device: identity.device,
            block_size: bs as u32,
            total_bytes,
            free_bytes: self.total.bytes,
            free_extents: self.total.extents,
            largest_bytes: self.total.largest,
            reference_bytes: self.reference,
            fragmented_share: share(self.total.below_reference, self.total.bytes),
            mean_free_bytes: self.total.bytes.checked_div(self.total.extents),
            share_1mib: share(self.at_least_1mib, self.total.bytes),
            outside_largest: outside_largest(self.total.largest, self.total.bytes),
            fragmentation: outside_largest(self.total.largest, self.total.bytes),
            histogram,
            groups,
            group_kind,
        }
    }
}

/// Which file system the figures are about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsIdentity {
    /// Mount point.
    pub mount_point: String,
    /// Type name.
    pub fs_type: String,
    /// Mounted device.
    pub device: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: u64 = 4096;

    fn identity() -> FsIdentity {
        FsIdentity { mount_point: "/m".into(), fs_type: "ext4".into(), device: None }
    }

    fn blocks(start: u64, len: u64) -> (u64, u64) {
        (start * BS, len * BS)
    }

    #[test]
    fn buckets_are_powers_of_two_in_blocks() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 1);
        assert_eq!(bucket_of(3), 1);
        assert_eq!(bucket_of(4), 2);
        assert_eq!(bucket_of(7), 2);
        assert_eq!(bucket_of(32_768), 15);
        assert_eq!(bucket_of(u64::MAX), 63);
    }

    #[test]
    fn outside_largest_and_share_handle_nothing_free() {
        assert_eq!(outside_largest(0, 0), None);
        assert_eq!(outside_largest(10, 10), Some(0.0));
        assert_eq!(outside_largest(1, 4), Some(0.75));
        assert_eq!(share(0, 0), None);
        assert_eq!(share(1, 4), Some(0.25));
    }

    #[test]
    fn adjacent_records_merge_and_figures_add_up() {
        // Free: 1 block at 10; 3 + 2 blocks adjacent at 20 (one extent of
        // 5); 300 blocks (1.17 MiB) at 1000.
        let mut acc = FreeSpaceAccumulator::new(BS as u32, None);
        for (p, l) in [blocks(10, 1), blocks(20, 3), blocks(23, 2), blocks(1000, 300)] {
            acc.push(p, l);
        }
        let f = acc.finish(identity(), 2048 * BS);
        assert_eq!(f.free_extents, 3);
        assert_eq!(f.free_bytes, 306 * BS);
        assert_eq!(f.largest_bytes, 300 * BS);
        assert_eq!(f.share_1mib, Some(300.0 / 306.0));
        assert_eq!(f.outside_largest, Some(1.0 - 300.0 / 306.0));
        assert_eq!(f.fragmentation, f.outside_largest);
        assert_eq!(f.reference_bytes, 1 << 20);
        assert_eq!(f.fragmented_share, Some(6.0 / 306.0));
        assert_eq!(f.mean_free_bytes, Some(102 * BS));
        assert_eq!(
            f.histogram,
            vec![
                FreeBucket { min_bytes: BS, max_bytes: BS, extents: 1, bytes: BS },
                FreeBucket { min_bytes: 4 * BS, max_bytes: 7 * BS, extents: 1, bytes: 5 * BS },
                FreeBucket { min_bytes: 256 * BS, max_bytes: 511 * BS, extents: 1, bytes: 300 * BS },
            ]
        );
        assert!(f.groups.is_none());
    }

    #[test]
    fn nothing_free_is_null_not_zero() {
        let f = FreeSpaceAccumulator::new(4096, None).finish(identity(), 1 << 20);
        assert_eq!((f.free_extents, f.free_bytes, f.largest_bytes), (0, 0, 0));
        assert_eq!((f.share_1mib, f.fragmentation, f.outside_largest), (None, None, None));
        assert_eq!((f.fragmented_share, f.mean_free_bytes), (None, None));
        assert!(f.histogram.is_empty());
        let json = serde_json::to_value(&f).unwrap();
        for key in ["fragmentation", "outside_largest", "share_1mib", "fragmented_share", "mean_free_bytes"] {
            assert!(json[key].is_null(), "{key} is null when nothing is free");
        }
        assert!(json.get("groups").is_none());
    }

    #[test]
    fn groups_split_extents_at_their_edges_only_in_their_view() {
        // 1 KiB blocks, first data block 1, 8 blocks per group, 25 blocks:
        // groups [1,9) [9,17) [17,25). A free run 5..20 crosses two edges.
        let bs = 1024;
        let geometry =
            GroupGeometry { kind: GroupKind::BlockGroup, first_bytes: bs, group_bytes: 8 * bs, end_bytes: 25 * bs };
        assert_eq!(geometry.count(), 3);
        let mut acc = FreeSpaceAccumulator::new(bs as u32, Some(geometry)).with_reference(4 * bs);
        acc.push(5 * bs, 4 * bs); // 5..9, as ext4 may report it per group
        acc.push(9 * bs, 11 * bs); // 9..20
        acc.push(22 * bs, 3 * bs); // 22..25
        let f = acc.finish(identity(), 25 * bs);
        assert_eq!(f.free_extents, 2, "the run 5..20 is one extent overall");
        assert_eq!(f.largest_bytes, 15 * bs);
        let groups = f.groups.unwrap();
        let rows: Vec<_> = groups
            .iter()
            .map(|g| (g.start_bytes / bs, g.length_bytes / bs, g.free_bytes / bs, g.free_extents, g.largest_bytes / bs))
            .collect();
        assert_eq!(rows, vec![(1, 8, 4, 1, 4), (9, 8, 8, 1, 8), (17, 8, 6, 2, 3)]);
        // Against a 4-block reference, per piece: group 0's 4-block piece is
        // not short, group 2's 3-block and 3-block pieces are.
        let shares: Vec<_> = groups.iter().map(|g| g.fragmented_share).collect();
        assert_eq!(shares, vec![Some(0.0), Some(0.0), Some(1.0)]);
        assert_eq!(groups.iter().map(|g| g.free_bytes).sum::<u64>(), f.free_bytes);
    }

    #[test]
    fn a_short_last_group_is_counted() {
        let g = GroupGeometry { kind: GroupKind::AllocationGroup, first_bytes: 0, group_bytes: 100, end_bytes: 250 };
        assert_eq!(g.count(), 3);
        assert_eq!(g.bounds(2), (200, 250));
        assert_eq!(g.group_of(249), Some(2));
        assert_eq!(g.group_of(250), None);
    }

    /// Free extents of 1, 2, 3, 5, 8, ... 1024 blocks (Fibonacci-like plus
    /// powers of two), far apart.
    fn crafted() -> Vec<u64> {
        vec![1, 1, 2, 3, 5, 8, 13, 21, 64, 100, 255, 256, 257, 511, 512, 1024, 4000]
    }

    fn measure_crafted(reference: Option<u64>) -> FreeSpace {
        let mut acc = FreeSpaceAccumulator::new(BS as u32, None);
        if let Some(r) = reference {
            acc = acc.with_reference(r);
        }
        for (i, len) in crafted().into_iter().enumerate() {
            acc.push((i as u64 * 10_000) * BS, len * BS);
        }
        acc.finish(identity(), 200_000 * BS)
    }

    #[test]
    fn fragmented_share_is_the_histogram_below_the_reference() {
        // Every power-of-two reference from one block to 4 MiB: the figure is
        // exactly the bytes of the buckets that end below it over free bytes.
        for k in 0..=10 {
            let reference = (1u64 << k) * BS;
            let f = measure_crafted(Some(reference));
            let below: u64 = f.histogram.iter().filter(|b| b.max_bytes < reference).map(|b| b.bytes).sum();
            assert_eq!(f.reference_bytes, reference);
            assert_eq!(f.fragmented_share, Some(below as f64 / f.free_bytes as f64), "reference {k}");
        }
        // The default is 1 MiB, and then it and share_1mib add up to 1.
        let f = measure_crafted(None);
        assert_eq!(f.reference_bytes, 1 << 20);
        let short: u64 = crafted().iter().filter(|&&b| b < 256).sum::<u64>() * BS;
        assert_eq!(f.fragmented_share, Some(short as f64 / f.free_bytes as f64));
        assert_eq!(f.fragmented_share.unwrap() + f.share_1mib.unwrap(), 1.0);
        assert_eq!(f.mean_free_bytes, Some(f.free_bytes / crafted().len() as u64));
    }

    #[test]
    fn a_smaller_reference_never_raises_the_figure() {
        let shares: Vec<f64> = [1u64, 4, 16, 64, 256, 1024, 4096]
            .iter()
            .map(|&blocks| measure_crafted(Some(blocks * BS)).fragmented_share.unwrap())
            .collect();
        assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{shares:?}");
        assert_eq!(shares[0], 0.0, "nothing is shorter than one block");
        assert!(shares[6] > shares[3]);
    }

    #[test]
    fn the_reference_rounds_up_to_a_block_and_changes_nothing() {
        // 1000 bytes is under one block: nothing free is shorter.
        let f = measure_crafted(Some(1000));
        assert_eq!((f.reference_bytes, f.fragmented_share), (BS, Some(0.0)));
        // 100 KiB + 1 byte rounds to 26 blocks, the same cut as 101 KiB.
        let odd = measure_crafted(Some(100 * 1024 + 1));
        assert_eq!(odd.reference_bytes, 26 * BS);
        assert_eq!(odd.fragmented_share, measure_crafted(Some(26 * BS)).fragmented_share);
        assert_eq!(measure_crafted(Some(0)).reference_bytes, BS, "0 means one block here; the CLI refuses it");
    }

    #[test]
    fn a_large_file_system_with_long_free_extents_is_not_fragmented() {
        // The case: 256 GiB, 92% free in 64-128 MiB extents, a few
        // small pieces beside. 1 - largest/free says 0.999; the headline
        // says what a writer meets: almost nothing is short.
        let (mib, free_target) = (1u64 << 20, 235u64 << 30);
        let mut acc = FreeSpaceAccumulator::new(BS as u32, None);
        let (mut at, mut free) = (0u64, 0u64);
        let mut i = 0u64;
        while free < free_target {
            let len = (64 + (i * 37) % 64) * mib;
            acc.push(at, len);
            free += len;
            at += len + 4 * mib;
            i += 1;
        }
        for _ in 0..10 {
            acc.push(at, 16 * BS);
            at += 2 * mib;
        }
        let f = acc.finish(identity(), 256 << 30);
        assert!(f.outside_largest.unwrap() > 0.999, "{:?}", f.outside_largest);
        assert!(f.fragmented_share.unwrap() < 0.0001, "{:?}", f.fragmented_share);
        assert!(f.mean_free_bytes.unwrap() > 64 * mib);
    }
}
