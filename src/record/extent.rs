//! One extent record of a file, in bytes, with its flags: the data an
//! extent map is made of, how it reads and writes as JSON, and filefrag's
//! rule for when two records are one extent.
//!
//! The flag bits are the kernel's `FIEMAP_EXTENT_*` values
//! (`<linux/fiemap.h>`); they are repeated here, as data, so that what
//! reads results never depends on the code that calls the ioctl. A test in
//! `layout::extent` holds the two lists equal.

use serde::{Deserialize, Serialize};

/// The `FIEMAP_EXTENT_*` flag bits an [`Extent`] can carry.
pub mod flag {
    /// The last extent of the file.
    pub const LAST: u32 = 0x0000_0001;
    /// The location is not known yet.
    pub const UNKNOWN: u32 = 0x0000_0002;
    /// Delayed allocation, no blocks yet (sets UNKNOWN too).
    pub const DELALLOC: u32 = 0x0000_0004;
    /// The data is encoded (compressed) on disk.
    pub const ENCODED: u32 = 0x0000_0008;
    /// The data is encrypted.
    pub const DATA_ENCRYPTED: u32 = 0x0000_0080;
    /// Offsets are not block aligned.
    pub const NOT_ALIGNED: u32 = 0x0000_0100;
    /// The data lives in metadata (inline data).
    pub const DATA_INLINE: u32 = 0x0000_0200;
    /// Tail-packed data.
    pub const DATA_TAIL: u32 = 0x0000_0400;
    /// Allocated but unwritten (preallocated).
    pub const UNWRITTEN: u32 = 0x0000_0800;
    /// Merged by the file system from block mappings.
    pub const MERGED: u32 = 0x0000_1000;
    /// Blocks shared with other files (reflink, snapshots).
    pub const SHARED: u32 = 0x0000_2000;
}

use flag as fm;

/// One FIEMAP record: `length` bytes of the file at `logical` live on the
/// device at `physical`. Holes are never records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extent {
    /// Offset in the file, bytes.
    pub logical: u64,
    /// Offset on the device, bytes (0 and meaningless when the location is
    /// unknown, e.g. delayed allocation).
    pub physical: u64,
    /// Length in bytes.
    pub length: u64,
    /// `FIEMAP_EXTENT_*` bits.
    pub flags: u32,
}

/// Flag bits and the names fslab prints and counts them under.
pub const FLAG_NAMES: [(u32, &str); 11] = [
    (fm::LAST, "last"),
    (fm::UNKNOWN, "unknown"),
    (fm::DELALLOC, "delalloc"),
    (fm::ENCODED, "encoded"),
    (fm::DATA_ENCRYPTED, "encrypted"),
    (fm::NOT_ALIGNED, "not_aligned"),
    (fm::DATA_INLINE, "inline"),
    (fm::DATA_TAIL, "tail"),
    (fm::UNWRITTEN, "unwritten"),
    (fm::MERGED, "merged"),
    (fm::SHARED, "shared"),
];

impl Extent {
    /// First byte after the extent in the file.
    pub fn logical_end(&self) -> u64 {
        self.logical.saturating_add(self.length)
    }

    /// First byte after the extent on the device.
    pub fn physical_end(&self) -> u64 {
        self.physical.saturating_add(self.length)
    }

    /// Whether the data is encoded (compressed, btrfs): FIEMAP then gives
    /// the record's *logical* length, and how much it takes on the device
    /// is not known.
    pub fn encoded(&self) -> bool {
        self.flags & fm::ENCODED != 0
    }

    /// The least the record can end at on the device: its physical end, or
    /// for an encoded record one block past its start (it takes at least
    /// one block, and its logical length is only an upper bound).
    pub fn least_physical_end(&self, block_size: u64) -> u64 {
        if self.encoded() { self.physical.saturating_add(block_size.min(self.length).max(1)) } else { self.physical_end() }
    }

    /// How far `next` starts on the device from where this record ends, in
    /// bytes; negative when it starts before. Both must be
    /// [`on_device`](Self::on_device).
    ///
    /// The design decision for encoded (compressed) records, whose length on
    /// the device is unknown: it is at least one block and at most the
    /// logical length (compressed data is never stored larger than it
    /// reads). A next record starting inside that window — after this
    /// one's first block, no further than the logical length on — is
    /// taken to follow it directly (0: btrfs writes compressed extents
    /// back to back), so it is neither a jump nor head travel. Anywhere
    /// else it is a jump of the least distance it can be: forward from the
    /// far end of the window, backward from the end of the first block.
    /// FIEMAP cannot tell more; `filefrag` still counts each such record
    /// as an extent, and so does fslab.
    pub fn gap_to(&self, next: &Extent, block_size: u64) -> i128 {
        let start = i128::from(next.physical);
        if !self.encoded() {
            return start - i128::from(self.physical_end());
        }
        let least_end = i128::from(self.least_physical_end(block_size));
        let most_end = i128::from(self.physical_end());
        if start < least_end {
            start - least_end
        } else if start <= most_end {
            0
        } else {
            start - most_end
        }
    }

    /// Whether the record has a real device location (not delalloc, not
    /// otherwise unknown).
    pub fn location_known(&self) -> bool {
        self.flags & fm::UNKNOWN == 0
    }

    /// Whether the data sits in data blocks of its own at `physical`:
    /// known, and not inline in metadata (btrfs reports inline data at
    /// offset 0, which is no place a reader's head goes for it).
    pub fn on_device(&self) -> bool {
        self.flags & (fm::UNKNOWN | fm::DATA_INLINE) == 0
    }

    /// The names of the flags set, in a fixed order.
    pub fn flag_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        FLAG_NAMES.iter().filter(move |(bit, _)| self.flags & bit != 0).map(|(_, name)| *name)
    }
}

/// An extent as JSON has it everywhere (`map --json`, stored runs): bytes,
/// and the flags by name.
#[derive(Serialize, Deserialize)]
struct ExtentJson {
    logical: u64,
    physical: u64,
    length: u64,
    #[serde(default)]
    flags: Vec<String>,
}

impl Serialize for Extent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let flags = self.flag_names().map(str::to_string).collect();
        ExtentJson { logical: self.logical, physical: self.physical, length: self.length, flags }.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Extent {
    /// Flag names fslab does not know are an error rather than dropped, so
    /// a record never reads back as something it was not.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = ExtentJson::deserialize(deserializer)?;
        let mut flags = 0;
        for name in &json.flags {
            let bit = FLAG_NAMES.iter().find(|(_, n)| n == name).map(|(bit, _)| *bit);
            flags |= bit.ok_or_else(|| serde::de::Error::custom(format!("unknown extent flag `{name}`")))?;
        }
        Ok(Extent { logical: json.logical, physical: json.physical, length: json.length, flags })
    }
}

/// filefrag's test (e2fsprogs `misc/filefrag.c`): does record `e` continue the extent `previous` ended?
/// Its expectations, from a zeroed record when there is none: densely
/// (`prev.physical + prev.length`) or across a hole (`prev.physical +
/// e.logical - prev.logical`). A record at logical 0 always continues.
pub fn continues_filefrag(previous: Option<&Extent>, e: &Extent) -> bool {
    let zero = Extent::default();
    let prev = previous.unwrap_or(&zero);
    let expected_dense = prev.physical.wrapping_add(prev.length);
    let expected = prev.physical.wrapping_add(e.logical).wrapping_sub(prev.logical);
    e.logical == 0 || e.physical == expected || e.physical == expected_dense
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoded_record_is_followed_anywhere_within_its_logical_length() {
        const BS: u64 = 4096;
        let compressed = |block: u64| Extent { logical: 0, physical: block * BS, length: 32 * BS, flags: fm::ENCODED };
        let plain = |block: u64| Extent { logical: 0, physical: block * BS, length: 32 * BS, flags: 0 };
        // Back to back 4 KiB apart, as btrfs lays 128 KiB of zstd down.
        assert_eq!(compressed(100).gap_to(&compressed(101), BS), 0);
        assert_eq!(compressed(100).gap_to(&plain(132), BS), 0, "as far as the logical length reaches");
        assert_eq!(compressed(100).gap_to(&plain(140), BS), 8 * BS as i128, "past it: from its far end");
        assert_eq!(compressed(100).gap_to(&plain(90), BS), -11 * BS as i128, "before it: from its first block's end");
        assert_eq!(compressed(100).gap_to(&plain(100), BS), -(BS as i128));
        assert_eq!(plain(100).gap_to(&plain(101), BS), -31 * BS as i128, "a plain record's length is on the device");
        assert_eq!(compressed(100).least_physical_end(BS), 101 * BS);
        assert_eq!(plain(100).least_physical_end(BS), 132 * BS);
    }

    #[test]
    fn flags_are_named() {
        let e = Extent { flags: fm::UNWRITTEN | fm::LAST, ..Default::default() };
        assert_eq!(e.flag_names().collect::<Vec<_>>(), vec!["last", "unwritten"]);
    }

    #[test]
    fn extents_read_back_from_json_as_they_were() {
        let e = Extent { logical: 4096, physical: 1 << 30, length: 8192, flags: fm::UNWRITTEN | fm::LAST };
        let json = serde_json::to_value(e).unwrap();
        assert_eq!(json, serde_json::json!({"logical": 4096, "physical": 1u64 << 30, "length": 8192, "flags": ["last", "unwritten"]}));
        assert_eq!(serde_json::from_value::<Extent>(json).unwrap(), e);
        let odd = serde_json::json!({"logical": 0, "physical": 0, "length": 1, "flags": ["sparkly"]});
        let err = serde_json::from_value::<Extent>(odd).unwrap_err().to_string();
        assert!(err.contains("unknown extent flag `sparkly`"), "{err}");
    }

    #[test]
    fn filefrag_continues_densely_across_a_stride_keeping_hole_and_at_zero() {
        let prev = Extent { logical: 0, physical: 100 << 12, length: 4 << 12, flags: 0 };
        let dense = Extent { logical: 4 << 12, physical: 104 << 12, length: 1 << 12, flags: 0 };
        let stride = Extent { logical: 6 << 12, physical: 106 << 12, length: 1 << 12, flags: 0 };
        let jump = Extent { logical: 4 << 12, physical: 50 << 12, length: 1 << 12, flags: 0 };
        assert!(continues_filefrag(Some(&prev), &dense));
        assert!(continues_filefrag(Some(&prev), &stride));
        assert!(!continues_filefrag(Some(&prev), &jump));
        assert!(continues_filefrag(None, &prev), "a record at logical 0 always continues");
        assert!(!continues_filefrag(None, &jump), "measured from a zeroed record when there is none");
    }
}
