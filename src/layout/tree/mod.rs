//! Fragmentation of every regular file under a tree, walked in parallel.
//!
//! The walk is syscall-bound (openat, fstat, FIEMAP, close per file), so it
//! runs on a rayon pool: a task reads one directory with getdents on its
//! own descriptor and hands its regular files out in batches, in directory
//! order; subdirectories become tasks of their own, opened relative to
//! their parent. Nothing per file is kept beyond the `--top` list and the
//! first few errors, and a directory reader maps batches itself once enough
//! are queued, so memory stays bounded however wide the tree.
//!
//! Contiguity "between consecutive files in directory order" — seed 001's
//! "seek after every block" — is exact across batches: each batch reports
//! the device offsets of its first and last file with data, and a
//! per-directory chain joins them in order as batches finish.
//!
//! This file holds the public face (`scan`, its options and report); the
//! work is split along its seams: `walk` reads directories and schedules
//! tasks, `batch` maps one batch of files, `chain` orders batches'
//! results within a directory, and `totals` sums everything.

mod batch;
mod chain;
mod modelled;
mod totals;
mod walk;

pub use modelled::TreeModelled;

use std::path::PathBuf;

use serde::Serialize;

/// Errors kept with their paths; the rest are only counted.
pub const LISTED_ERRORS: usize = 100;

/// How to walk.
#[derive(Debug, Clone)]
pub struct TreeOptions {
    /// Worker threads.
    pub threads: usize,
    /// Length of the worst-files list.
    pub top: usize,
    /// Length of the largest-files list (0: none kept).
    pub largest: usize,
    /// Descend into other file systems.
    pub cross_mounts: bool,
    /// Read the tree on this modelled drive (`--disk`): each directory's
    /// files one after another in directory order.
    pub disk: Option<crate::model::Profile>,
}

/// Totals over the tree (`frag --json`'s `summary`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TreeSummary {
    /// Regular files mapped.
    pub files: u64,
    /// Their sizes, summed.
    pub bytes: u64,
    /// Extents by filefrag's rule, summed.
    pub extents: u64,
    /// FIEMAP records, summed.
    pub records: u64,
    /// Files with more extents than their perfection.
    pub fragmented_files: u64,
    /// Files whose perfection could not be known (not counted above).
    pub perfection_unknown_files: u64,
    /// Extents the files would have at perfection, summed over the files
    /// whose perfection is known.
    pub perfection_extents: u64,
    /// Mean layout score over files with data.
    pub layout_score_files: Option<f64>,
    /// Layout score weighted by each file's mapped bytes.
    pub layout_score_bytes: Option<f64>,
    /// Of consecutive data files in a directory (directory order), the
    /// share whose first block sits right after the previous file's last.
    pub next_file_contiguous: Option<f64>,
    /// How many such consecutive pairs there were.
    pub next_file_pairs: u64,
    /// Total device distance between a file's end and the next file's
    /// start, in bytes, over those pairs (a sum of seeks, kept for
    /// comparison; not a distance anything travels).
    pub next_file_seek_bytes: u64,
    /// Of those pairs, how many are not contiguous: a reader's seeks.
    pub next_file_seeks: u64,
    /// The median of those seeks' distances, in bytes.
    pub next_file_seek_median_bytes: Option<u64>,
    /// Entries that could not be mapped (vanished, permission, ...).
    pub errors: u64,
    /// The tree read on a modelled drive (`--disk`).
    #[serde(flatten)]
    pub modelled: Option<TreeModelled>,
}

/// Files whose extent count falls in `[extents_min, extents_max]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistogramBucket {
    /// Lowest extent count of the bucket.
    pub extents_min: u64,
    /// Highest extent count of the bucket.
    pub extents_max: u64,
    /// Files in it.
    pub files: u64,
}

/// One of the most fragmented files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstFile {
    /// Path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Extents by filefrag's rule.
    pub extents: u64,
    /// The fewest it could have.
    pub perfection: Option<u64>,
    /// Its layout score.
    pub layout_score: Option<f64>,
    /// Its own modelled read on a fresh drive (`--disk`).
    #[serde(flatten)]
    pub modelled: Option<crate::layout::modelled::ModelledFigures>,
}

/// One of the largest files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LargeFile {
    /// Path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// An entry that could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalkError {
    /// Path.
    pub path: String,
    /// What went wrong.
    pub error: String,
    /// The file system cannot map files at all (no FIEMAP), as opposed to
    /// this one entry failing.
    #[serde(skip)]
    pub unsupported: bool,
}

/// The walk's result.
#[derive(Debug, Clone, Serialize)]
pub struct TreeReport {
    /// Totals.
    pub summary: TreeSummary,
    /// Files by extent count, power-of-two buckets, empty ones left out.
    pub histogram: Vec<HistogramBucket>,
    /// The most fragmented files, most extents first.
    pub worst: Vec<WorstFile>,
    /// The largest files, fragmented or not, largest first (ties by path);
    /// only asked for by the run harness, which keeps their maps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub largest: Vec<LargeFile>,
    /// The first [`LISTED_ERRORS`] errors (all are counted in `summary`).
    pub errors: Vec<WalkError>,
}

/// Walk every path and report. Paths that cannot be walked at all are
/// reported as errors in the result, like any other entry.
pub fn scan(paths: &[PathBuf], options: &TreeOptions) -> std::io::Result<TreeReport> {
    let open_batches = walk::raise_open_file_limit(options.threads.max(1));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .thread_name(|i| format!("fslab-walk-{i}"))
        .build()
        .map_err(std::io::Error::other)?;
    let shared = walk::Shared::new(options, open_batches);
    pool.scope(|scope| {
        for path in paths {
            shared.start(scope, path);
        }
    });
    Ok(shared.into_totals().report())
}
