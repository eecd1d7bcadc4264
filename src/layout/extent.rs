//! Counting the flags of FIEMAP records, and turning the kernel's raw
//! record into an [`Extent`].

use serde::Serialize;

pub use crate::record::extent::{Extent, FLAG_NAMES};
use crate::sys::fiemap::{self as fm, RawFiemapExtent};

impl From<&RawFiemapExtent> for Extent {
    fn from(raw: &RawFiemapExtent) -> Self {
        Extent { logical: raw.fe_logical, physical: raw.fe_physical, length: raw.fe_length, flags: raw.fe_flags }
    }
}

/// How many records carried each flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FlagCounts {
    /// Records flagged last (0 or 1).
    pub last: u64,
    /// Records with an unknown location.
    pub unknown: u64,
    /// Delayed-allocation records.
    pub delalloc: u64,
    /// Encoded (compressed) records.
    pub encoded: u64,
    /// Encrypted records.
    pub encrypted: u64,
    /// Records not block aligned.
    pub not_aligned: u64,
    /// Inline-data records.
    pub inline: u64,
    /// Tail-packed records.
    pub tail: u64,
    /// Unwritten (preallocated) records.
    pub unwritten: u64,
    /// Records the file system merged from block mappings.
    pub merged: u64,
    /// Records whose blocks other files share (reflink, snapshots).
    pub shared: u64,
}

impl FlagCounts {
    /// Count the flags of one record.
    pub fn add(&mut self, flags: u32) {
        let slots: [(u32, &mut u64); 11] = [
            (fm::FIEMAP_EXTENT_LAST, &mut self.last),
            (fm::FIEMAP_EXTENT_UNKNOWN, &mut self.unknown),
            (fm::FIEMAP_EXTENT_DELALLOC, &mut self.delalloc),
            (fm::FIEMAP_EXTENT_ENCODED, &mut self.encoded),
            (fm::FIEMAP_EXTENT_DATA_ENCRYPTED, &mut self.encrypted),
            (fm::FIEMAP_EXTENT_NOT_ALIGNED, &mut self.not_aligned),
            (fm::FIEMAP_EXTENT_DATA_INLINE, &mut self.inline),
            (fm::FIEMAP_EXTENT_DATA_TAIL, &mut self.tail),
            (fm::FIEMAP_EXTENT_UNWRITTEN, &mut self.unwritten),
            (fm::FIEMAP_EXTENT_MERGED, &mut self.merged),
            (fm::FIEMAP_EXTENT_SHARED, &mut self.shared),
        ];
        for (bit, slot) in slots {
            if flags & bit != 0 {
                *slot += 1;
            }
        }
    }

    /// Sum two counts (for trees).
    pub fn merge(&mut self, other: &FlagCounts) {
        self.last += other.last;
        self.unknown += other.unknown;
        self.delalloc += other.delalloc;
        self.encoded += other.encoded;
        self.encrypted += other.encrypted;
        self.not_aligned += other.not_aligned;
        self.inline += other.inline;
        self.tail += other.tail;
        self.unwritten += other.unwritten;
        self.merged += other.merged;
        self.shared += other.shared;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::extent::flag;

    #[test]
    fn flags_are_counted() {
        let mut c = FlagCounts::default();
        c.add(fm::FIEMAP_EXTENT_UNWRITTEN | fm::FIEMAP_EXTENT_LAST);
        c.add(fm::FIEMAP_EXTENT_SHARED);
        assert_eq!((c.last, c.unwritten, c.shared, c.delalloc), (1, 1, 1, 0));
    }

    #[test]
    fn the_results_model_names_the_kernels_flag_bits() {
        let pairs = [
            (flag::LAST, fm::FIEMAP_EXTENT_LAST),
            (flag::UNKNOWN, fm::FIEMAP_EXTENT_UNKNOWN),
            (flag::DELALLOC, fm::FIEMAP_EXTENT_DELALLOC),
            (flag::ENCODED, fm::FIEMAP_EXTENT_ENCODED),
            (flag::DATA_ENCRYPTED, fm::FIEMAP_EXTENT_DATA_ENCRYPTED),
            (flag::NOT_ALIGNED, fm::FIEMAP_EXTENT_NOT_ALIGNED),
            (flag::DATA_INLINE, fm::FIEMAP_EXTENT_DATA_INLINE),
            (flag::DATA_TAIL, fm::FIEMAP_EXTENT_DATA_TAIL),
            (flag::UNWRITTEN, fm::FIEMAP_EXTENT_UNWRITTEN),
            (flag::MERGED, fm::FIEMAP_EXTENT_MERGED),
            (flag::SHARED, fm::FIEMAP_EXTENT_SHARED),
        ];
        for (model, kernel) in pairs {
            assert_eq!(model, kernel);
        }
        assert_eq!(FLAG_NAMES.len(), pairs.len());
    }
}
