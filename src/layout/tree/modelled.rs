//! `frag --disk`: the tree read on a modelled drive as the walk reads it,
//! each directory's files one after another in directory order.
//!
//! The design decision: the order is the one the walk can keep exact with
//! bounded memory, the order its `next_file_*` figures pair files in. A
//! batch keeps its files' stretches of data (one window's worth of state
//! and a few spans a file), the directory's chain replays batches in
//! index order on the directory's own drive as they become due, and a
//! directory's drive starts over its first file's first byte: the seek
//! from one directory to the next is not counted, as the next-file
//! figures count no pair across directories. Directories finish in
//! whatever order threads get to them, so their seconds are summed in
//! fixed point, and the same tree gives the same figures to the bit on
//! every run and thread count.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::layout::modelled::ModelledFigures;
use crate::model::{LayoutCost, LayoutReader, Profile, Span, check_span, read_layout};

/// 1 second in the fixed point directories' seconds are summed in: 2^64,
/// so a read of a millisecond or more keeps every bit (a directory alone
/// sums to its own seconds exactly), and 10^19 s still fit.
const SECOND: f64 = 18_446_744_073_709_551_616.0;

/// The data of one batch's files that the model reads, in directory order.
#[derive(Debug, Default)]
pub(super) struct BatchData {
    spans: Vec<Span>,
    /// Where each modelled file's spans end in `spans`.
    ends: Vec<usize>,
    /// Files with data the model cannot read, and why.
    unmodelled: Vec<String>,
}

impl BatchData {
    /// Where the next file's spans start.
    pub(super) fn mark(&self) -> usize {
        self.spans.len()
    }

    /// Take a stretch of the current file's data.
    pub(super) fn push(&mut self, span: Span) {
        self.spans.push(span);
    }

    /// The current file (its spans from `mark` on) is mapped; `unplaced`
    /// says why its data cannot be modelled, if so. A file with data past
    /// the end of `profile`'s disk cannot be either. Its spans (none for a
    /// file without data), or why it is not modelled.
    pub(super) fn end_file(&mut self, mark: usize, unplaced: Option<&str>, profile: &Profile) -> Result<&[Span], String> {
        let beyond = || self.spans[mark..].iter().find_map(|&s| check_span(profile, s).err()).map(|e| e.message);
        if let Some(why) = unplaced.map(str::to_string).or_else(beyond) {
            self.spans.truncate(mark);
            self.unmodelled.push(why.clone());
            return Err(why);
        }
        if self.spans.len() > mark {
            self.ends.push(self.spans.len());
        }
        Ok(&self.spans[mark..])
    }

    /// Drop the current file's spans: it could not be mapped.
    pub(super) fn forget(&mut self, mark: usize) {
        self.spans.truncate(mark);
    }

    /// Each modelled file's spans, in order.
    fn files(&self) -> impl Iterator<Item = &[Span]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(start, end)| &self.spans[start..end])
    }
}

/// One directory's files read one after another on its own drive.
#[derive(Default)]
pub(super) struct DirRead {
    reader: Option<LayoutReader>,
    files: u64,
    unmodelled: Vec<String>,
    failed: Option<String>,
}

impl DirRead {
    /// Read the modelled files of `batch`, the next one in directory order.
    pub(super) fn read(&mut self, batch: BatchData, profile: &Profile) {
        self.unmodelled.extend(batch.unmodelled.iter().cloned());
        for file in batch.files() {
            let reader = self.reader.get_or_insert_with(|| LayoutReader::new(profile));
            let read = file.iter().try_for_each(|&span| reader.push(span)).and_then(|()| reader.end_file());
            if let (Err(e), None) = (read, &self.failed) {
                self.failed = Some(e.message);
            }
            self.files += 1;
        }
    }

    /// What the directory's read cost.
    pub(super) fn finish(self) -> DirCost {
        let cost = match (self.failed, self.reader) {
            (Some(why), _) => Err(why),
            (None, Some(reader)) => reader.finish().map(Some).map_err(|e| e.message),
            (None, None) => Ok(None),
        };
        DirCost { cost, files: self.files, unmodelled: self.unmodelled }
    }
}

/// A directory's read, finished.
pub(super) struct DirCost {
    cost: Result<Option<LayoutCost>, String>,
    files: u64,
    unmodelled: Vec<String>,
}

/// One file's own modelled read, on a fresh drive over its first byte.
pub(super) fn file_figures(spans: &[Span], profile: &Profile) -> ModelledFigures {
    ModelledFigures::from_cost(read_layout(profile, &[spans]).map_err(|e| e.message))
}

/// The modelled read of a tree (`frag --json`'s `summary`, with `--disk`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TreeModelled {
    /// Reading it as the walk does and in one piece, and their ratio.
    #[serde(flatten)]
    pub figures: ModelledFigures,
    /// Files whose data was read (files without data are not counted).
    pub modelled_files: u64,
    /// Files with data that could not be modelled.
    pub unmodelled_files: u64,
    /// Why, each reason once.
    pub unmodelled_why: Vec<String>,
}

/// Directories' modelled reads summed, in any order, to the same bits.
#[derive(Debug, Default)]
pub(super) struct ModelTotals {
    read: u128,
    ideal: u128,
    files: u64,
    unmodelled: u64,
    why: BTreeSet<String>,
}

impl ModelTotals {
    /// Add a finished directory.
    pub(super) fn directory(&mut self, dir: DirCost) {
        self.unmodelled += dir.unmodelled.len() as u64;
        self.why.extend(dir.unmodelled);
        match dir.cost {
            Ok(Some(cost)) => {
                self.read += fixed(cost.read.seconds);
                self.ideal += fixed(cost.ideal.seconds);
                self.files += dir.files;
            }
            Ok(None) => {}
            Err(why) => {
                self.unmodelled += dir.files;
                self.why.insert(why);
            }
        }
    }

    /// Add another's sums.
    pub(super) fn merge(&mut self, other: ModelTotals) {
        self.read += other.read;
        self.ideal += other.ideal;
        self.files += other.files;
        self.unmodelled += other.unmodelled;
        self.why.extend(other.why);
    }

    /// The tree's figures.
    pub(super) fn report(self) -> TreeModelled {
        let figures = if self.files > 0 {
            ModelledFigures::of(self.read as f64 / SECOND, self.ideal as f64 / SECOND)
        } else {
            ModelledFigures { modelled_missing: Some("no file with data was modelled".into()), ..ModelledFigures::default() }
        };
        TreeModelled { figures, modelled_files: self.files, unmodelled_files: self.unmodelled, unmodelled_why: self.why.into_iter().collect() }
    }
}

/// Seconds in fixed point.
fn fixed(seconds: f64) -> u128 {
    (seconds * SECOND).round() as u128
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::builtin::find;

    fn span(block: u64, blocks: u64) -> Span {
        Span { physical: block * 4096, length: blocks * 4096 }
    }

    #[test]
    fn a_directory_is_read_file_after_file_in_batch_order_and_summed_in_any_order() {
        let profile = find("hdd-7200").unwrap();
        let files = [[span(100, 8)], [span(9000, 2)], [span(50, 4)], [span(1 << 20, 16)]];
        // Two batches of two files each.
        let batch = |part: &[[Span; 1]]| {
            let mut b = BatchData::default();
            for f in part {
                let mark = b.mark();
                b.push(f[0]);
                assert_eq!(b.end_file(mark, None, &profile), Ok(&f[..]));
            }
            b
        };
        let mut dir = DirRead::default();
        dir.read(batch(&files[..2]), &profile);
        dir.read(batch(&files[2..]), &profile);
        let DirCost { cost, files: n, .. } = dir.finish();
        let cost = cost.unwrap().unwrap();
        assert_eq!((cost.clone(), n), (read_layout(&profile, &files).unwrap(), 4));

        // Three directories summed in two orders: the same bits.
        let costs = |order: [usize; 3]| {
            let mut totals = ModelTotals::default();
            for i in order {
                let mut dir = DirRead::default();
                dir.read(batch(&files[i..i + 1]), &profile);
                totals.directory(dir.finish());
            }
            totals.report()
        };
        let (a, b) = (costs([0, 1, 2]), costs([2, 0, 1]));
        assert_eq!(a, b);
        assert_eq!(a.figures.modelled_read_s.unwrap().to_bits(), b.figures.modelled_read_s.unwrap().to_bits());
        assert_eq!(a.modelled_files, 3);
    }

    #[test]
    fn files_the_model_cannot_read_are_counted_with_their_reasons_once() {
        let profile = find("laptop-5400").unwrap();
        let mut b = BatchData::default();
        let mark = b.mark();
        b.push(span(10, 1));
        assert_eq!(b.end_file(mark, Some("not placed"), &profile), Err("not placed".to_string()));
        let mark = b.mark();
        b.push(Span { physical: profile.capacity_bytes(), length: 4096 });
        assert!(b.end_file(mark, None, &profile).unwrap_err().contains("laptop-5400"));
        let mark = b.mark();
        assert_eq!(b.end_file(mark, None, &profile), Ok(&[][..]), "no data: nothing to read, nothing to say");
        let mark = b.mark();
        b.push(span(20, 1));
        assert_eq!(b.end_file(mark, None, &profile), Ok(&[span(20, 1)][..]));
        assert_eq!(file_figures(&[], &profile).modelled_read_ratio, None);
        let mut dir = DirRead::default();
        dir.read(b, &profile);
        let mut totals = ModelTotals::default();
        totals.directory(dir.finish());
        let tree = totals.report();
        assert_eq!((tree.modelled_files, tree.unmodelled_files), (1, 2));
        assert_eq!(tree.unmodelled_why.len(), 2);
        assert!(tree.unmodelled_why.iter().any(|w| w.contains("laptop-5400")), "{:?}", tree.unmodelled_why);
        assert_eq!(tree.figures.modelled_read_ratio, Some(1.0));
        assert_eq!(ModelTotals::default().report().figures.modelled_read_s, None);
    }
}
