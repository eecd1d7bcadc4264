//! One extent record as FIEMAP reports it, in bytes, and its flags.

use serde::{Deserialize, Serialize};

use crate::sys::fiemap::{self as fm, RawFiemapExtent};

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

impl From<&RawFiemapExtent> for Extent {
    fn from(raw: &RawFiemapExtent) -> Self {
        Extent { logical: raw.fe_logical, physical: raw.fe_physical, length: raw.fe_length, flags: raw.fe_flags }
    }
}

/// Flag bits and the names fslab prints and counts them under.
pub const FLAG_NAMES: [(u32, &str); 11] = [
    (fm::FIEMAP_EXTENT_LAST, "last"),
    (fm::FIEMAP_EXTENT_UNKNOWN, "unknown"),
    (fm::FIEMAP_EXTENT_DELALLOC, "delalloc"),
    (fm::FIEMAP_EXTENT_ENCODED, "encoded"),
    (fm::FIEMAP_EXTENT_DATA_ENCRYPTED, "encrypted"),
    (fm::FIEMAP_EXTENT_NOT_ALIGNED, "not_aligned"),
    (fm::FIEMAP_EXTENT_DATA_INLINE, "inline"),
    (fm::FIEMAP_EXTENT_DATA_TAIL, "tail"),
    (fm::FIEMAP_EXTENT_UNWRITTEN, "unwritten"),
    (fm::FIEMAP_EXTENT_MERGED, "merged"),
    (fm::FIEMAP_EXTENT_SHARED, "shared"),
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

    /// Whether the record has a real device location (not delalloc, not
    /// otherwise unknown).
    pub fn location_known(&self) -> bool {
        self.flags & fm::FIEMAP_EXTENT_UNKNOWN == 0
    }

    /// Whether the data sits in data blocks of its own at `physical`:
    /// known, and not inline in metadata (btrfs reports inline data at
    /// offset 0, which is no place a reader's head goes for it).
    pub fn on_device(&self) -> bool {
        self.flags & (fm::FIEMAP_EXTENT_UNKNOWN | fm::FIEMAP_EXTENT_DATA_INLINE) == 0
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

    #[test]
    fn flags_are_named_and_counted() {
        let e = Extent { flags: fm::FIEMAP_EXTENT_UNWRITTEN | fm::FIEMAP_EXTENT_LAST, ..Default::default() };
        assert_eq!(e.flag_names().collect::<Vec<_>>(), vec!["last", "unwritten"]);
        let mut c = FlagCounts::default();
        c.add(e.flags);
        c.add(fm::FIEMAP_EXTENT_SHARED);
        assert_eq!((c.last, c.unwritten, c.shared, c.delalloc), (1, 1, 1, 0));
    }

    #[test]
    fn extents_read_back_from_json_as_they_were() {
        let e = Extent { logical: 4096, physical: 1 << 30, length: 8192, flags: fm::FIEMAP_EXTENT_UNWRITTEN | fm::FIEMAP_EXTENT_LAST };
        let json = serde_json::to_value(e).unwrap();
        assert_eq!(json, serde_json::json!({"logical": 4096, "physical": 1u64 << 30, "length": 8192, "flags": ["last", "unwritten"]}));
        assert_eq!(serde_json::from_value::<Extent>(json).unwrap(), e);
        let odd = serde_json::json!({"logical": 0, "physical": 0, "length": 1, "flags": ["sparkly"]});
        let err = serde_json::from_value::<Extent>(odd).unwrap_err().to_string();
        assert!(err.contains("unknown extent flag `sparkly`"), "{err}");
    }
}
