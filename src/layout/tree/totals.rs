//! Summing the walk: totals, the extent-count histogram, and the worst and
//! largest files, one `Totals` per batch merged into the walk's.
//!
//! The design decision: everything here is order-independent, because
//! batches merge in whatever order threads finish them. Layout scores are
//! summed in fixed point (integers add associatively, floats do not), and
//! the worst and largest lists break ties by path, so the same tree gives
//! the same report, bit for bit, on every run and thread count.

use std::path::{Path, PathBuf};

use super::chain::PairCounts;
use super::modelled::{DirCost, ModelTotals};
use super::{HistogramBucket, LISTED_ERRORS, LargeFile, TreeOptions, TreeReport, TreeSummary, WalkError, WorstFile};
use crate::layout::LayoutFigures;
use crate::layout::modelled::ModelledFigures;

/// 1.0 in the fixed point layout scores are summed in: 2^48, finer than
/// any score (a ratio of block counts below 2^40) needs.
const SCORE_ONE: u64 = 1 << 48;

/// Running totals; one per batch, merged into one for the walk.
pub(super) struct Totals {
    summary: TreeSummary,
    // Scores are summed in fixed point (units of 2^-SCORE_BITS) so that the
    // totals, being integers, do not depend on the order batches merge in:
    // the same tree gives the same figures, bit for bit, on every run.
    score_sum: u128,
    score_files: u64,
    weighted_score_sum: u128,
    score_weight: u128,
    /// Consecutive-file pairs, counted by the batches' chains.
    pub(super) pairs: PairCounts,
    histogram: [u64; 66],
    top: usize,
    worst: Vec<WorstFile>,
    largest_top: usize,
    largest: Vec<LargeFile>,
    errors: Vec<WalkError>,
    /// Directories' modelled reads (`--disk`).
    modelled: Option<ModelTotals>,
}

impl Totals {
    pub(super) fn new(options: &TreeOptions) -> Self {
        Totals {
            summary: TreeSummary::default(),
            score_sum: 0,
            score_files: 0,
            weighted_score_sum: 0,
            score_weight: 0,
            pairs: PairCounts::default(),
            histogram: [0; 66],
            top: options.top,
            worst: Vec::new(),
            largest_top: options.largest,
            largest: Vec::new(),
            errors: Vec::new(),
            modelled: options.disk.as_ref().map(|_| ModelTotals::default()),
        }
    }

    /// Add a directory's modelled read.
    pub(super) fn directory(&mut self, dir: DirCost) {
        if let Some(m) = self.modelled.as_mut() {
            m.directory(dir);
        }
    }

    pub(super) fn error(&mut self, path: &Path, what: &str, unsupported: bool) {
        self.summary.errors += 1;
        if self.errors.len() < LISTED_ERRORS {
            self.errors.push(WalkError { path: path.to_string_lossy().into_owned(), error: what.to_string(), unsupported });
        }
    }

    /// Count a file; `path` and its own `modelled` read are asked for only
    /// when it enters a list.
    pub(super) fn file(
        &mut self,
        size: u64,
        f: &LayoutFigures,
        perfection: Option<u64>,
        path: impl FnOnce() -> PathBuf,
        modelled: impl FnOnce() -> Option<ModelledFigures>,
    ) {
        let s = &mut self.summary;
        s.files += 1;
        s.bytes += size;
        s.extents += f.extents;
        s.records += f.records;
        match perfection {
            Some(p) => {
                s.perfection_extents += p;
                if f.extents > p {
                    s.fragmented_files += 1;
                }
            }
            None => s.perfection_unknown_files += 1,
        }
        if let Some(score) = f.layout_score {
            let fixed = (score * SCORE_ONE as f64).round() as u128;
            self.score_sum += fixed;
            self.score_files += 1;
            self.weighted_score_sum += fixed * u128::from(f.mapped_bytes);
            self.score_weight += u128::from(f.mapped_bytes);
        }
        self.histogram[bucket(f.extents)] += 1;
        // Only files in more than one extent can be "worst", and the path
        // is only built for a file that beats the current last entry of a
        // list: with most files in one extent, building it for every file
        // cost more than mapping them.
        let worst = self.top > 0 && f.extents > 1 && could_enter(&self.worst, self.top, f.extents, f.layout_score);
        let large = self.largest_top > 0 && could_be_largest(&self.largest, self.largest_top, size);
        if !worst && !large {
            return;
        }
        let path = path().to_string_lossy().into_owned();
        if large {
            self.offer_large(LargeFile { path: path.clone(), size });
        }
        if worst {
            self.offer(WorstFile { path, size, extents: f.extents, perfection, layout_score: f.layout_score, modelled: modelled() });
        }
    }

    /// Keep `candidate` if it is among the `largest_top` largest.
    fn offer_large(&mut self, candidate: LargeFile) {
        let at = self.largest.partition_point(|l| by_size(l, &candidate) != std::cmp::Ordering::Greater);
        if at < self.largest_top {
            self.largest.insert(at, candidate);
            self.largest.truncate(self.largest_top);
        }
    }

    /// Keep `candidate` if it is among the `top` worst, sorted worst first.
    fn offer(&mut self, candidate: WorstFile) {
        let at = self.worst.partition_point(|w| rank(w, &candidate) != std::cmp::Ordering::Greater);
        if at < self.top {
            self.worst.insert(at, candidate);
            self.worst.truncate(self.top);
        }
    }

    pub(super) fn merge(&mut self, other: Totals) {
        let (a, b) = (&mut self.summary, &other.summary);
        a.files += b.files;
        a.bytes += b.bytes;
        a.extents += b.extents;
        a.records += b.records;
        a.fragmented_files += b.fragmented_files;
        a.perfection_unknown_files += b.perfection_unknown_files;
        a.perfection_extents += b.perfection_extents;
        self.score_sum += other.score_sum;
        self.score_files += other.score_files;
        self.weighted_score_sum += other.weighted_score_sum;
        self.score_weight += other.score_weight;
        self.pairs.add(&other.pairs);
        for (x, y) in self.histogram.iter_mut().zip(other.histogram) {
            *x += y;
        }
        for w in other.worst {
            self.offer(w);
        }
        for l in other.largest {
            self.offer_large(l);
        }
        let room = LISTED_ERRORS.saturating_sub(self.errors.len());
        self.errors.extend(other.errors.into_iter().take(room));
        self.summary.errors += other.summary.errors;
        if let (Some(m), Some(o)) = (self.modelled.as_mut(), other.modelled) {
            m.merge(o);
        }
    }

    pub(super) fn report(mut self) -> TreeReport {
        let s = &mut self.summary;
        let one = SCORE_ONE as f64;
        s.layout_score_files = (self.score_files > 0).then(|| self.score_sum as f64 / one / self.score_files as f64);
        s.layout_score_bytes =
            (self.score_weight > 0).then(|| self.weighted_score_sum as f64 / one / self.score_weight as f64);
        s.next_file_pairs = self.pairs.pairs;
        s.next_file_seek_bytes = self.pairs.seek_bytes;
        s.next_file_seeks = self.pairs.seeks.len() as u64;
        s.next_file_seek_median_bytes = self.pairs.median_seek();
        s.next_file_contiguous =
            (self.pairs.pairs > 0).then(|| self.pairs.contiguous as f64 / self.pairs.pairs as f64);
        s.modelled = self.modelled.take().map(ModelTotals::report);
        let histogram = self
            .histogram
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| {
                let (extents_min, extents_max) = bucket_range(i);
                HistogramBucket { extents_min, extents_max, files: *n }
            })
            .collect();
        TreeReport { summary: self.summary, histogram, worst: self.worst, largest: self.largest, errors: self.errors }
    }
}

/// Worst first: more extents, then lower layout score, then path.
fn rank(a: &WorstFile, b: &WorstFile) -> std::cmp::Ordering {
    b.extents
        .cmp(&a.extents)
        .then_with(|| a.layout_score.unwrap_or(1.0).total_cmp(&b.layout_score.unwrap_or(1.0)))
        .then_with(|| a.path.cmp(&b.path))
}

/// Whether a file of `extents` and `score` could rank into a list of
/// `top`: the list has room, or it is at least as bad as the last entry
/// (a tie is then settled by path, so the answer is the same whichever
/// thread saw which file first).
fn could_enter(worst: &[WorstFile], top: usize, extents: u64, score: Option<f64>) -> bool {
    match worst.last() {
        Some(last) if worst.len() >= top => {
            extents > last.extents
                || (extents == last.extents
                    && score.unwrap_or(1.0).total_cmp(&last.layout_score.unwrap_or(1.0)).is_le())
        }
        _ => true,
    }
}

/// Largest first, then path.
fn by_size(a: &LargeFile, b: &LargeFile) -> std::cmp::Ordering {
    b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path))
}

/// Whether a file of `size` could rank into a largest list of `top` (a tie
/// with the last entry is settled by path, as for the worst list).
fn could_be_largest(largest: &[LargeFile], top: usize, size: u64) -> bool {
    match largest.last() {
        Some(last) if largest.len() >= top => size >= last.size,
        _ => true,
    }
}

/// Histogram bucket of an extent count: 0 alone, then [2^k, 2^(k+1)-1].
fn bucket(extents: u64) -> usize {
    if extents == 0 { 0 } else { 64 - extents.leading_zeros() as usize }
}

fn bucket_range(index: usize) -> (u64, u64) {
    match index {
        0 => (0, 0),
        i => {
            let low = 1u64 << (i - 1);
            (low, low.checked_mul(2).map_or(u64::MAX, |h| h - 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_powers_of_two() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 1);
        assert_eq!((bucket(2), bucket(3)), (2, 2));
        assert_eq!((bucket(4), bucket(7), bucket(8)), (3, 3, 4));
        assert_eq!(bucket_range(0), (0, 0));
        assert_eq!(bucket_range(1), (1, 1));
        assert_eq!(bucket_range(3), (4, 7));
        assert_eq!(bucket_range(64), (1 << 63, u64::MAX));
        assert_eq!(bucket(u64::MAX), 64);
    }

    #[test]
    fn the_worst_list_keeps_the_top_n_in_order() {
        let mut t = Totals::new(&TreeOptions { threads: 1, top: 2, largest: 2, cross_mounts: false, disk: None });
        let fig = |extents| LayoutFigures {
            extents,
            records: extents,
            discontinuities: 0,
            backward_jumps: 0,
            seek_distance: 0,
            layout_score: Some(0.5),
            mapped_bytes: 4096,
            holes: 0,
            hole_bytes: 0,
            flags: Default::default(),
            past_eof_records: 0,
            past_eof_bytes: 0,
            first_physical: None,
            last_physical_end: None,
        };
        for (name, n, size) in [("a", 3, 4096), ("b", 9, 4096), ("c", 1, 8192), ("d", 9, 4096), ("e", 5, 8192), ("f", 9, 4096)] {
            t.file(size, &fig(n), Some(1), || PathBuf::from(name), || None);
        }
        let names: Vec<_> = t.worst.iter().map(|w| (w.path.as_str(), w.extents)).collect();
        assert_eq!(names, vec![("b", 9), ("d", 9)]);
        // The largest list takes unfragmented files too, ties by path.
        let largest: Vec<_> = t.largest.iter().map(|l| (l.path.as_str(), l.size)).collect();
        assert_eq!(largest, vec![("c", 8192), ("e", 8192)]);
        let r = t.report();
        assert_eq!(r.summary.fragmented_files, 5);
        assert_eq!(r.summary.files, 6);
    }
}
