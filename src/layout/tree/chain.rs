//! Contiguity between consecutive files in directory order, kept exact
//! although a directory's files are mapped in batches on several threads.
//!
//! The design decision: a batch reports only its edges (where its first
//! data file starts, where its last one ends), and a per-directory chain
//! joins batches strictly by index as they finish, whatever order that
//! is; so the pairs counted are those a single reader in directory order
//! would see, and no per-file state outlives its batch. With `--disk`, a
//! batch's data is read on the directory's modelled drive in the same
//! order (`modelled`), and kept only until its turn comes.

use std::collections::BTreeMap;

use super::modelled::{BatchData, DirCost, DirRead};
use crate::model::Profile;

/// Joins per-batch edges in directory order.
#[derive(Default)]
pub(super) struct Chain {
    next: u64,
    ready: BTreeMap<u64, (Option<Edges>, BatchData)>,
    carry_end: Option<u64>,
    /// The directory's files read so far on the model's drive.
    read: DirRead,
    /// How many batches the directory has, once its reader has counted.
    batches: Option<u64>,
    finished: bool,
}

/// The first data file's start and the last data file's end in a batch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Edges {
    first_start: Option<u64>,
    last_end: Option<u64>,
}

/// What the next file's start is compared with.
#[derive(Debug, Default, Clone)]
pub(super) struct PairCounts {
    pub(super) pairs: u64,
    pub(super) contiguous: u64,
    pub(super) seek_bytes: u64,
    /// Each seek's distance (a pair not contiguous), for their median:
    /// 8 bytes a pair, 0.8 MB for 100,000 files.
    pub(super) seeks: Vec<u64>,
}

impl PairCounts {
    fn pair(&mut self, previous_end: Option<u64>, next_start: Option<u64>) {
        if let (Some(end), Some(start)) = (previous_end, next_start) {
            self.pairs += 1;
            if end == start {
                self.contiguous += 1;
            } else {
                self.seeks.push(end.abs_diff(start));
            }
            self.seek_bytes = self.seek_bytes.saturating_add(end.abs_diff(start));
        }
    }

    /// Add another's counts (a batch's into its walk's).
    pub(super) fn add(&mut self, other: &PairCounts) {
        self.pairs += other.pairs;
        self.contiguous += other.contiguous;
        self.seek_bytes = self.seek_bytes.saturating_add(other.seek_bytes);
        self.seeks.extend_from_slice(&other.seeks);
    }

    /// The median seek's distance (the lower middle one of an even count),
    /// `None` without a seek.
    pub(super) fn median_seek(&mut self) -> Option<u64> {
        if self.seeks.is_empty() {
            return None;
        }
        let middle = (self.seeks.len() - 1) / 2;
        Some(*self.seeks.select_nth_unstable(middle).1)
    }
}

impl Edges {
    /// Take the next data file of a batch (`first_start`..`last_end` on
    /// the device), pairing it with the file before it in the batch; the
    /// batch's first data file starts its edges and has no pair yet (the
    /// chain pairs it with the previous batch).
    pub(super) fn add_file(
        edges: &mut Option<Edges>,
        first_start: Option<u64>,
        last_end: Option<u64>,
        counts: &mut PairCounts,
    ) {
        match edges.as_mut() {
            Some(e) => {
                counts.pair(e.last_end, first_start);
                e.last_end = last_end;
            }
            None => *edges = Some(Edges { first_start, last_end }),
        }
    }
}

impl Chain {
    /// Record batch `index`'s edges (None: no file with data) and its
    /// data for the model, and fold all batches now in order into
    /// `counts`, reading their data on `profile`'s drive when given. The
    /// directory's modelled read once its last batch is in.
    pub(super) fn finish_batch(
        &mut self,
        index: u64,
        edges: Option<Edges>,
        data: BatchData,
        counts: &mut PairCounts,
        profile: Option<&Profile>,
    ) -> Option<DirCost> {
        self.ready.insert(index, (edges, data));
        while let Some((edges, data)) = self.ready.remove(&self.next) {
            if let Some(edges) = edges {
                counts.pair(self.carry_end, edges.first_start);
                self.carry_end = edges.last_end;
            }
            if let Some(profile) = profile {
                self.read.read(data, profile);
            }
            self.next += 1;
        }
        self.done(profile)
    }

    /// The directory has `batches` batches in all: its modelled read, if
    /// they are all in.
    pub(super) fn close(&mut self, batches: u64, profile: Option<&Profile>) -> Option<DirCost> {
        self.batches = Some(batches);
        self.done(profile)
    }

    fn done(&mut self, profile: Option<&Profile>) -> Option<DirCost> {
        if profile.is_none() || self.finished || self.batches != Some(self.next) {
            return None;
        }
        self.finished = true;
        Some(std::mem::take(&mut self.read).finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_joins_batches_in_order_whatever_order_they_finish() {
        let mut chain = Chain::default();
        let mut counts = PairCounts::default();
        let e = |s, l| Some(Edges { first_start: Some(s), last_end: Some(l) });
        // Batch 2 finishes first; nothing can be joined yet.
        chain.finish_batch(2, e(300, 400), BatchData::default(), &mut counts, None);
        assert_eq!(counts.pairs, 0);
        chain.finish_batch(0, e(0, 100), BatchData::default(), &mut counts, None);
        assert_eq!(counts.pairs, 0, "batch 0 has no predecessor");
        // Batch 1 has no data: 0's end meets 2's start (100 vs 300).
        chain.finish_batch(1, None, BatchData::default(), &mut counts, None);
        assert_eq!((counts.pairs, counts.contiguous, counts.seek_bytes), (1, 0, 200));
        chain.finish_batch(3, e(400, 500), BatchData::default(), &mut counts, None);
        assert_eq!((counts.pairs, counts.contiguous), (2, 1));
    }

    #[test]
    fn seeks_are_counted_with_their_median_and_the_sum_kept() {
        let mut counts = PairCounts::default();
        assert_eq!(counts.median_seek(), None);
        let mut other = PairCounts::default();
        for (end, start) in [(100, 100), (100, 4196), (9000, 1000), (0, 1 << 40)] {
            other.pair(Some(end), Some(start));
        }
        counts.add(&other);
        counts.pair(Some(10), Some(20));
        assert_eq!((counts.pairs, counts.contiguous, counts.seeks.len()), (5, 1, 4));
        // 10, 4096, 8000, 2^40: the lower middle, not the sum's 1 TiB.
        assert_eq!(counts.median_seek(), Some(4096));
        assert_eq!(counts.seek_bytes, 10 + 4096 + 8000 + (1 << 40));
    }

    #[test]
    fn a_batch_pairs_its_own_files_and_keeps_its_outer_edges() {
        let mut edges = None;
        let mut counts = PairCounts::default();
        Edges::add_file(&mut edges, Some(0), Some(100), &mut counts);
        assert_eq!(counts.pairs, 0, "the first file is paired by the chain, not the batch");
        Edges::add_file(&mut edges, Some(100), Some(200), &mut counts);
        Edges::add_file(&mut edges, Some(500), Some(600), &mut counts);
        assert_eq!((counts.pairs, counts.contiguous, counts.seek_bytes), (2, 1, 300));
        let edges = edges.unwrap();
        assert_eq!((edges.first_start, edges.last_end), (Some(0), Some(600)));
    }
}
