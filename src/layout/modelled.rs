//! What a reader of a file makes the drive read, record by record, for
//! the disk model ([`crate::model`]): `map --disk`, `frag --disk` and a
//! case's modelled read time.
//!
//! The rule: a reader reads a record's bytes up to the block that holds
//! EOF, where FIEMAP says they lie. Nothing is read for a record past EOF,
//! for inline data (it came with the inode, which the model does not
//! read: metadata is left out) or for an unwritten extent (it reads as
//! zeros without touching the device). A record whose place is not known
//! yet (delayed allocation) or whose length on the device is not
//! (compressed data) cannot be modelled, and neither can its file.

use serde::Serialize;

use super::{Extent, RecordStep};
use crate::error::Result;
use crate::model::{LayoutCost, LayoutReader, Profile, Span};
use crate::record::extent::flag;

/// Why a file's data has no place the model can read it from yet: data
/// not yet placed (delayed allocation).
pub const NOT_PLACED: &str = "data not yet placed (delayed allocation; map with --sync)";

/// Why a file's data cannot be read by the model: compressed records.
pub const COMPRESSED: &str = "compressed data, whose length on the device is unknown";

/// What reading one record asks of the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readable {
    /// These bytes, where they lie.
    Read(Span),
    /// Nothing: past EOF, inline or unwritten.
    Nothing,
    /// The record cannot be modelled, for this reason.
    Unplaced(&'static str),
}

/// What reading record `e` asks of the drive, `step` being what it meant
/// for the file's figures.
pub fn readable(e: &Extent, step: &RecordStep) -> Readable {
    if step.file_bytes == 0 || e.flags & (flag::DATA_INLINE | flag::UNWRITTEN) != 0 {
        Readable::Nothing
    } else if !e.location_known() {
        Readable::Unplaced(NOT_PLACED)
    } else if e.encoded() {
        Readable::Unplaced(COMPRESSED)
    } else {
        Readable::Read(Span { physical: e.physical, length: step.file_bytes })
    }
}

/// One file's (or a tree's) modelled read time, the same bytes' in one
/// piece and their ratio, as `map --json` and `frag --json` give them:
/// `null` with the reason where the data could not be modelled.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelledFigures {
    /// Seconds to read it front to back as it lies.
    pub modelled_read_s: Option<f64>,
    /// Seconds to read the same bytes laid out in one piece.
    pub modelled_ideal_s: Option<f64>,
    /// The first over the second: 1 for data in one piece.
    pub modelled_read_ratio: Option<f64>,
    /// Why the figures are missing, when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modelled_missing: Option<String>,
}

impl ModelledFigures {
    /// The figures of `read` seconds beside `ideal` ones; the ratio is
    /// missing when nothing was read.
    pub fn of(read: f64, ideal: f64) -> ModelledFigures {
        let ratio = (ideal > 0.0).then(|| read / ideal);
        ModelledFigures { modelled_read_s: Some(read), modelled_ideal_s: Some(ideal), modelled_read_ratio: ratio, modelled_missing: None }
    }

    /// The figures of a modelled read, or missing for the reason given.
    pub fn from_cost(cost: std::result::Result<LayoutCost, String>) -> ModelledFigures {
        match cost {
            Ok(cost) => ModelledFigures::of(cost.read.seconds, cost.ideal.seconds),
            Err(why) => ModelledFigures { modelled_missing: Some(why), ..ModelledFigures::default() },
        }
    }
}

/// Files read front to back one after another on a modelled drive, fed
/// their records as they are mapped.
pub struct ModelledRead {
    reader: LayoutReader,
    /// The first reason a file could not be modelled, or the model's own
    /// error (data past the profile's disk).
    failed: Option<String>,
}

impl ModelledRead {
    /// Nothing read yet, on a fresh drive of `profile`.
    pub fn new(profile: &Profile) -> ModelledRead {
        ModelledRead { reader: LayoutReader::new(profile), failed: None }
    }

    /// Take the next record of the current file.
    pub fn record(&mut self, e: &Extent, step: &RecordStep) {
        if self.failed.is_some() {
            return;
        }
        match readable(e, step) {
            Readable::Read(span) => self.check(|r| r.push(span)),
            Readable::Nothing => {}
            Readable::Unplaced(why) => self.failed = Some(why.to_string()),
        }
    }

    /// The current file ends.
    pub fn end_file(&mut self) {
        if self.failed.is_none() {
            self.check(LayoutReader::end_file);
        }
    }

    /// What reading everything took beside the same bytes in one piece, or
    /// why it could not be modelled.
    pub fn finish(self) -> std::result::Result<LayoutCost, String> {
        match self.failed {
            Some(why) => Err(why),
            None => self.reader.finish().map_err(|e| e.message),
        }
    }

    fn check(&mut self, step: impl FnOnce(&mut LayoutReader) -> Result<()>) {
        if let Err(e) = step(&mut self.reader) {
            self.failed = Some(e.message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutAccumulator;
    use crate::model::builtin::find;

    const BS: u64 = 4096;

    fn ext(logical_blk: u64, physical_blk: u64, blocks: u64, flags: u32) -> Extent {
        Extent { logical: logical_blk * BS, physical: physical_blk * BS, length: blocks * BS, flags }
    }

    /// Each record of a file of `size` bytes and what a reader reads of it.
    fn read(records: &[Extent], size: u64) -> Vec<Readable> {
        let mut acc = LayoutAccumulator::new(BS as u32, size);
        records.iter().map(|e| readable(e, &acc.push(e))).collect()
    }

    #[test]
    fn a_reader_reads_to_the_block_holding_eof_and_nothing_it_need_not() {
        // 5.5 blocks of data in a 16-block record, then preallocation.
        let size = 5 * BS + BS / 2;
        let got = read(&[ext(0, 100, 16, 0), ext(16, 116, 16, flag::UNWRITTEN | flag::LAST)], size);
        assert_eq!(got, [Readable::Read(Span { physical: 100 * BS, length: 6 * BS }), Readable::Nothing]);
        // Unwritten extents read as zeros; inline data came with the inode.
        let got = read(&[ext(0, 50, 2, flag::UNWRITTEN), ext(2, 60, 2, 0)], 4 * BS);
        assert_eq!(got, [Readable::Nothing, Readable::Read(Span { physical: 60 * BS, length: 2 * BS })]);
        let inline = Extent { logical: 0, physical: 0, length: 300, flags: flag::DATA_INLINE | flag::NOT_ALIGNED };
        assert_eq!(read(&[inline], 300), [Readable::Nothing]);
        // Not yet placed, or compressed: no place to read from.
        assert_eq!(read(&[ext(0, 0, 1, flag::DELALLOC | flag::UNKNOWN)], BS), [Readable::Unplaced(NOT_PLACED)]);
        assert_eq!(read(&[ext(0, 9, 32, flag::ENCODED)], 32 * BS), [Readable::Unplaced(COMPRESSED)]);
    }

    #[test]
    fn a_file_that_cannot_be_modelled_says_why_and_one_past_the_disk_too() {
        let profile = find("laptop-5400").unwrap();
        let mut whole = ModelledRead::new(&profile);
        let mut acc = LayoutAccumulator::new(BS as u32, 8 * BS);
        for e in [ext(0, 100, 4, 0), ext(4, 300, 4, 0)] {
            whole.record(&e, &acc.push(&e));
        }
        whole.end_file();
        let cost = whole.finish().unwrap();
        assert_eq!(cost.read.read_bytes, 8 * BS);
        assert!(cost.ratio().unwrap() > 1.0);

        let mut unplaced = ModelledRead::new(&profile);
        let mut acc = LayoutAccumulator::new(BS as u32, BS);
        let e = ext(0, 0, 1, flag::DELALLOC | flag::UNKNOWN);
        unplaced.record(&e, &acc.push(&e));
        assert_eq!(unplaced.finish().unwrap_err(), NOT_PLACED);

        let mut beyond = ModelledRead::new(&profile);
        let far = profile.capacity_bytes() / BS;
        let mut acc = LayoutAccumulator::new(BS as u32, 64 * BS);
        let e = ext(0, far, 64, 0);
        beyond.record(&e, &acc.push(&e));
        beyond.end_file();
        let why = beyond.finish().unwrap_err();
        assert!(why.contains("laptop-5400") && why.contains("choose a profile"), "{why}");
    }
}
