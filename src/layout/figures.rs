//! The layout figures of one file, accumulated record by record so that no
//! extent list is ever held.
//!
//! `extents` follows filefrag's rule exactly (e2fsprogs `misc/filefrag.c`):
//! a record continues the previous extent when it starts physically right
//! after it, or — across a hole — at the previous start plus the logical
//! gap; the first record always counts one. Holes, unknown locations and
//! record boundaries are all fed through the same rule, so the count is
//! the one `filefrag` prints for the same file.
//!
//! Blocks past EOF (xfs's speculative preallocation, `fallocate` with
//! KEEP_SIZE) are records too, so they count in `extents` and `records`
//! exactly as filefrag counts them; but no reader of the file ever goes
//! there, so they are left out of the reading figures: layout score, seek
//! distance, backward jumps, holes. They are counted apart
//! (`past_eof_records`, `past_eof_bytes`).

use serde::Serialize;

use super::extent::{Extent, FlagCounts};
// filefrag's rule lives with the extent records, so the report, which
// must not depend on layout, applies the very same one.
pub use crate::record::extent::continues_filefrag;

/// What one record meant for the figures; the text map prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordStep {
    /// Whether this record starts a new extent by filefrag's rule.
    pub starts_extent: bool,
    /// For a record that breaks the run (not the first): how far, in
    /// bytes, it starts from where the previous record ended on the device.
    /// `None` when either location is unknown.
    pub jump: Option<i64>,
    /// filefrag's `eof`: the record reaches or passes the end of the file
    /// (`logical + length >= st_size`), so it holds EOF or lies beyond it.
    pub eof: bool,
    /// The record starts at or past the end of the file: none of its
    /// bytes are the file's data (preallocation beyond EOF).
    pub past_eof: bool,
    /// Bytes of the record a reader of the file reads: all of it, or up to
    /// the end of the block that holds EOF; 0 past EOF.
    pub file_bytes: u64,
}

/// Accumulates the figures of one file from its records in logical order.
#[derive(Debug, Clone)]
pub struct LayoutAccumulator {
    block_size: u64,
    /// `st_size` when mapping began: where EOF is.
    size: u64,
    previous: Option<Extent>,
    extents: u64,
    records: u64,
    mapped_bytes: u64,
    mapped_blocks: u64,
    contiguous_blocks: u64,
    backward_jumps: u64,
    seek_distance: u64,
    holes: u64,
    hole_bytes: u64,
    flags: FlagCounts,
    past_eof_records: u64,
    past_eof_bytes: u64,
    first_physical: Option<u64>,
    last_physical_end: Option<u64>,
}

/// The figures of one file (`docs/DESIGN.md` "Layout figures").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutFigures {
    /// Extents as filefrag counts them.
    pub extents: u64,
    /// Raw FIEMAP records, holes excluded.
    pub records: u64,
    /// Record boundaries that break the physical run (`extents - 1` once
    /// there is data).
    pub discontinuities: u64,
    /// Breaks that go backwards on the device.
    pub backward_jumps: u64,
    /// Sum of the distances, in bytes, from the end of one record to the
    /// start of the next at every break (a read's head travel). Encoded
    /// (compressed) records count as [`Extent::gap_to`] says: their length
    /// on the device is unknown, so one that the next follows within its
    /// logical length counts no travel, and no backward jump.
    pub seek_distance: u64,
    /// Fraction of the file's blocks after the first that sit physically
    /// right after their predecessor (Conway et al., FAST 2017); `None` for
    /// a file without data. Blocks past EOF are not the file's and are
    /// left out.
    pub layout_score: Option<f64>,
    /// Bytes covered by records.
    pub mapped_bytes: u64,
    /// Gaps in the logical space before and between records, up to EOF (a
    /// trailing gap up to EOF counts too; space past EOF is no hole).
    pub holes: u64,
    /// Bytes of those gaps.
    pub hole_bytes: u64,
    /// Records per flag.
    pub flags: FlagCounts,
    /// Records that start at or past EOF (filefrag counts them; they hold
    /// none of the file's data).
    pub past_eof_records: u64,
    /// Bytes mapped past the block that holds EOF: preallocation beyond the
    /// file's end (xfs's speculative preallocation, `fallocate -n`).
    pub past_eof_bytes: u64,
    /// Device offset of the first record with a known location.
    #[serde(skip)]
    pub first_physical: Option<u64>,
    /// Device offset just after the last record, when its location is
    /// known (for an encoded record, the least it can be: one block on).
    #[serde(skip)]
    pub last_physical_end: Option<u64>,
}

impl LayoutAccumulator {
    /// A fresh accumulator for a file of `size` bytes (`st_size`, where EOF
    /// is) on a file system of `block_size`-byte blocks.
    pub fn new(block_size: u32, size: u64) -> Self {
        LayoutAccumulator {
            block_size: u64::from(block_size.max(1)),
            size,
            previous: None,
            extents: 0,
            records: 0,
            mapped_bytes: 0,
            mapped_blocks: 0,
            contiguous_blocks: 0,
            backward_jumps: 0,
            seek_distance: 0,
            holes: 0,
            hole_bytes: 0,
            flags: FlagCounts::default(),
            past_eof_records: 0,
            past_eof_bytes: 0,
            first_physical: None,
            last_physical_end: None,
        }
    }

    /// Take the next record (in logical order).
    pub fn push(&mut self, e: &Extent) -> RecordStep {
        let starts_extent = !continues_filefrag(self.previous.as_ref(), e);
        if self.extents == 0 {
            // filefrag: the first record always makes the count one.
            self.extents = 1;
        } else if starts_extent {
            self.extents += 1;
        }
        let bs = self.block_size;
        // The file's blocks end with the block that holds EOF; beyond it
        // lies preallocation only.
        let file_end = self.size.div_ceil(bs).saturating_mul(bs);
        let past_eof = e.logical >= self.size;
        let eof = e.logical_end() >= self.size;
        let gap_start = self.previous.map_or(0, |p| p.logical_end());
        let gap_end = e.logical.min(self.size);
        if gap_end > gap_start {
            self.holes += 1;
            self.hole_bytes += gap_end - gap_start;
        }

        let blocks = e.length.div_ceil(bs);
        // Blocks of this record inside the file: all, some (the record
        // holds EOF and runs on), or none.
        let in_file_bytes = file_end.saturating_sub(e.logical).min(e.length);
        let in_file_blocks = if in_file_bytes == e.length { blocks } else { in_file_bytes.div_ceil(bs) };
        self.mapped_bytes += e.length;
        if past_eof {
            self.past_eof_records += 1;
        }
        self.past_eof_bytes += e.length - in_file_bytes;

        let mut jump = None;
        if in_file_blocks > 0 {
            self.mapped_blocks += in_file_blocks;
            if e.on_device() {
                self.contiguous_blocks += in_file_blocks - 1;
                self.first_physical.get_or_insert(e.physical);
            }
        }
        if let Some(prev) = self.previous
            && prev.on_device()
            && e.on_device()
        {
            // An encoded (compressed) record's length on the device is
            // unknown: `gap_to` says how that is judged.
            let gap = prev.gap_to(e, bs);
            if starts_extent {
                jump = Some(gap.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            }
            // Records come in logical order, so one with blocks inside the
            // file follows only such records: the reading figures see the
            // file's own blocks alone.
            if in_file_blocks > 0 {
                if gap == 0 {
                    self.contiguous_blocks += 1;
                }
                if starts_extent {
                    if gap < 0 {
                        self.backward_jumps += 1;
                    }
                    self.seek_distance = self.seek_distance.saturating_add(gap.unsigned_abs() as u64);
                }
            }
        }
        if in_file_blocks > 0 {
            self.last_physical_end = e.on_device().then(|| {
                if in_file_blocks == blocks {
                    e.least_physical_end(bs)
                } else {
                    e.physical.saturating_add(in_file_blocks * bs)
                }
            });
        }
        self.records += 1;
        self.flags.add(e.flags);
        self.previous = Some(*e);
        RecordStep { starts_extent: starts_extent && self.records > 1, jump, eof, past_eof, file_bytes: in_file_bytes }
    }

    /// The figures. `size` is the file's size now; the trailing hole runs
    /// to the smaller of it and the size mapping began with.
    pub fn finish(mut self, size: u64) -> LayoutFigures {
        let end = self.previous.map_or(0, |p| p.logical_end());
        let size = size.min(self.size);
        if size > end {
            self.holes += 1;
            self.hole_bytes += size - end;
        }
        let layout_score = match self.mapped_blocks {
            0 => None,
            1 => Some(1.0),
            n => Some(self.contiguous_blocks as f64 / (n - 1) as f64),
        };
        LayoutFigures {
            extents: self.extents,
            records: self.records,
            discontinuities: self.extents.saturating_sub(1),
            backward_jumps: self.backward_jumps,
            seek_distance: self.seek_distance,
            layout_score,
            mapped_bytes: self.mapped_bytes,
            holes: self.holes,
            hole_bytes: self.hole_bytes,
            flags: self.flags,
            past_eof_records: self.past_eof_records,
            past_eof_bytes: self.past_eof_bytes,
            first_physical: self.first_physical,
            last_physical_end: self.last_physical_end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::fiemap::{FIEMAP_EXTENT_DATA_INLINE, FIEMAP_EXTENT_DELALLOC, FIEMAP_EXTENT_NOT_ALIGNED, FIEMAP_EXTENT_UNKNOWN};

    const BS: u64 = 4096;

    fn ext(logical_blk: u64, physical_blk: u64, blocks: u64) -> Extent {
        Extent { logical: logical_blk * BS, physical: physical_blk * BS, length: blocks * BS, flags: 0 }
    }

    fn figures(records: &[Extent], size: u64) -> LayoutFigures {
        let mut acc = LayoutAccumulator::new(BS as u32, size);
        for r in records {
            acc.push(r);
        }
        acc.finish(size)
    }

    #[test]
    fn an_empty_file_has_no_extents_and_no_score() {
        let f = figures(&[], 0);
        assert_eq!((f.extents, f.records, f.layout_score), (0, 0, None));
    }

    #[test]
    fn physically_adjacent_records_are_one_extent() {
        // Two records (an ext3 request-size cut, say) back to back.
        let f = figures(&[ext(0, 100, 8), ext(8, 108, 8)], 16 * BS);
        assert_eq!((f.extents, f.records, f.discontinuities), (1, 2, 0));
        assert_eq!(f.layout_score, Some(1.0));
    }

    #[test]
    fn a_hole_that_keeps_the_stride_continues_the_extent() {
        // fallocate then punch every other block: blocks 0,2,4 at 100,102,104.
        let f = figures(&[ext(0, 100, 1), ext(2, 102, 1), ext(4, 104, 1)], 5 * BS);
        assert_eq!(f.extents, 1, "filefrag's logical-gap rule");
        assert_eq!(f.records, 3);
        assert_eq!((f.holes, f.hole_bytes), (2, 2 * BS));
        // Layout score: no block sits right after its mapped predecessor.
        assert_eq!(f.layout_score, Some(0.0));
    }

    #[test]
    fn breaks_count_jumps_and_seek_distance() {
        // 4 blocks at 100, then 4 at 50 (backwards), then 4 at 54 (dense).
        let f = figures(&[ext(0, 100, 4), ext(4, 50, 4), ext(8, 54, 4)], 12 * BS);
        assert_eq!((f.extents, f.records, f.backward_jumps), (2, 3, 1));
        assert_eq!(f.seek_distance, 54 * BS);
        // 11 successor blocks; contiguous: 3 + 3 + 3 within, +1 at 50->54.
        assert_eq!(f.layout_score, Some(10.0 / 11.0));
    }

    #[test]
    fn inline_data_has_no_place_on_the_device() {
        // btrfs: a small file's data inline in metadata, reported at 0.
        let flags = FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED;
        let f = figures(&[Extent { logical: 0, physical: 0, length: 300, flags }], 300);
        assert_eq!((f.extents, f.records), (1, 1));
        assert_eq!((f.first_physical, f.last_physical_end), (None, None), "no head travel to offset 0");
    }

    #[test]
    fn the_first_record_counts_one_even_after_a_leading_hole() {
        let f = figures(&[ext(10, 500, 2)], 12 * BS);
        assert_eq!((f.extents, f.holes, f.hole_bytes), (1, 1, 10 * BS));
    }

    #[test]
    fn delalloc_records_follow_the_rule_on_their_raw_offsets() {
        let flags = FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN;
        let d = |l| Extent { logical: l * BS, physical: 0, length: BS, flags };
        // filefrag sees physical 0 twice: the second is "expected" neither
        // densely (0+4096) nor across the gap, so it is a new extent.
        let f = figures(&[d(0), d(2)], 3 * BS);
        assert_eq!(f.extents, 2);
        assert_eq!(f.flags.delalloc, 2);
        assert_eq!(f.seek_distance, 0, "unknown locations make no seek figure");
        assert_eq!(f.layout_score, Some(0.0));
    }

    #[test]
    fn compressed_records_back_to_back_are_no_jumps() {
        // btrfs compress=zstd: 128 KiB records, each in one 4 KiB block,
        // 4 KiB apart. FIEMAP gives the logical length, 32 blocks.
        let flags = crate::sys::fiemap::FIEMAP_EXTENT_ENCODED;
        let records: Vec<Extent> =
            (0..1024).map(|i| Extent { logical: i * 32 * BS, physical: (3328 + i) * BS, length: 32 * BS, flags }).collect();
        let f = figures(&records, 1024 * 32 * BS);
        assert_eq!(f.extents, 1024, "filefrag counts every record");
        assert_eq!((f.backward_jumps, f.seek_distance), (0, 0));
        assert_eq!(f.layout_score, Some(1.0));
        assert_eq!(f.last_physical_end, Some((3328 + 1024) * BS));
        // One compressed record far behind the rest is still a jump.
        let mut moved = records.clone();
        moved[512].physical = 100 * BS;
        let f = figures(&moved, 1024 * 32 * BS);
        assert_eq!(f.backward_jumps, 1);
        // Back from block 3840 (the least end of 511) to 100, then on
        // from 132 (the most end of 512) to 3841.
        assert_eq!(f.seek_distance, (3740 + 3709) * BS);
    }

    #[test]
    fn the_seed_000_discontinuity_pattern() {
        // From seed 000's filefrag -v: block 0 at 59605576, block 1 at
        // 59563360, blocks 1-2 contiguous, block 3 at 59563365.
        let f = figures(
            &[ext(0, 59_605_576, 1), ext(1, 59_563_360, 2), ext(3, 59_563_365, 5)],
            8 * BS,
        );
        assert_eq!(f.extents, 3);
    }

    fn steps(records: &[Extent], size: u64) -> Vec<RecordStep> {
        let mut acc = LayoutAccumulator::new(BS as u32, size);
        records.iter().map(|r| acc.push(r)).collect()
    }

    #[test]
    fn eof_is_filefrags_and_past_eof_starts_beyond_it() {
        // xfs after 1 MiB of 4 KiB appends, file still open: the data, then
        // its speculative preallocation as unwritten,last right after it.
        let prealloc = Extent { flags: crate::sys::fiemap::FIEMAP_EXTENT_UNWRITTEN | crate::sys::fiemap::FIEMAP_EXTENT_LAST, ..ext(256, 280, 240) };
        let s = steps(&[ext(0, 24, 256), prealloc], 256 * BS);
        // filefrag -v: both rows say eof (the first ends at EOF exactly).
        assert_eq!((s[0].eof, s[0].past_eof), (true, false));
        assert_eq!((s[1].eof, s[1].past_eof), (true, true));
        // A record ending before EOF is neither; one holding EOF inside is eof.
        let s = steps(&[ext(0, 100, 4), ext(4, 200, 4)], 6 * BS + 10);
        assert_eq!((s[0].eof, s[0].past_eof), (false, false));
        assert_eq!((s[1].eof, s[1].past_eof), (true, false));
    }

    #[test]
    fn blocks_past_eof_count_as_extents_but_not_in_the_score() {
        // 4 data blocks at 100, then 8 preallocated blocks far behind.
        let f = figures(&[ext(0, 100, 4), ext(4, 10, 8)], 4 * BS);
        assert_eq!((f.extents, f.records), (2, 2), "filefrag counts the preallocation");
        assert_eq!((f.past_eof_records, f.past_eof_bytes), (1, 8 * BS));
        assert_eq!(f.layout_score, Some(1.0), "only the 4 blocks of the file");
        assert_eq!((f.backward_jumps, f.seek_distance), (0, 0), "no reader goes there");
        assert_eq!(f.mapped_bytes, 12 * BS);
        assert_eq!(f.last_physical_end, Some(104 * BS));
        // The same layout with the size covering both is scored as before.
        let whole = figures(&[ext(0, 100, 4), ext(4, 10, 8)], 12 * BS);
        assert_eq!(whole.layout_score, Some(10.0 / 11.0));
        assert_eq!(whole.backward_jumps, 1);
        assert_eq!((whole.past_eof_records, whole.past_eof_bytes), (0, 0));
    }

    #[test]
    fn a_record_holding_eof_is_scored_up_to_the_block_that_holds_it() {
        // One 16-block record, EOF inside block 5 (5.5 blocks of data);
        // the next preallocated record continues physically.
        let size = 5 * BS + BS / 2;
        let f = figures(&[ext(0, 100, 16), ext(16, 116, 16)], size);
        assert_eq!(f.extents, 1);
        assert_eq!(f.past_eof_bytes, 26 * BS, "blocks 6..31");
        assert_eq!(f.past_eof_records, 1);
        assert_eq!(f.layout_score, Some(1.0));
        assert_eq!(f.last_physical_end, Some(106 * BS));
        assert_eq!(f.holes, 0);
    }

    #[test]
    fn space_past_eof_is_no_hole() {
        // A size-0 file with blocks kept past EOF (fallocate KEEP_SIZE).
        let f = figures(&[ext(8, 500, 4)], 0);
        assert_eq!((f.holes, f.hole_bytes), (0, 0));
        assert_eq!((f.extents, f.past_eof_records, f.past_eof_bytes), (1, 1, 4 * BS));
        assert_eq!(f.layout_score, None, "no block of the file");
        assert_eq!((f.first_physical, f.last_physical_end), (None, None));
        // Data, a gap running past EOF, then preallocation: the hole stops at EOF.
        let f = figures(&[ext(0, 100, 2), ext(10, 300, 2)], 4 * BS);
        assert_eq!((f.holes, f.hole_bytes), (1, 2 * BS));
    }
}
