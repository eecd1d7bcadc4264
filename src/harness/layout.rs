//! The layout a case's work left: the `frag` walk's totals over the work
//! folder as figures, and the extent maps of its most fragmented files to
//! keep with the case.

use std::path::Path;

use crate::error::{Error, Result};
use crate::layout::tree::{self, TreeOptions};
use crate::record::{Better, FigureSpec, Figures, KEPT_MAPS, KEPT_RECORDS, KeptMap, Kind};

/// The layout figures, declared once.
///
/// What the files are (how many, their bytes, the fewest extents they
/// could have) is the work's own: exact. Where their blocks went is
/// exact only when the work allocated every block itself (O_DIRECT
/// writes, fallocate: [`Work::allocates_itself`](crate::scenario::Work::allocates_itself));
/// otherwise writeback allocated them, when it happened to run (another
/// writer's dirty pages, a memory limit, the flusher's timer), and the
/// same work leaves other extents: 200 or 201 for replace-files' 200
/// files on xfs, 2 to 22 for one 256 MiB buffered file on btrfs. So
/// those four are declared timings, and a case whose work allocated
/// itself puts them in as exact, except on btrfs ([`placed_by_the_work`]).
/// A work whose time limit decided how much it wrote
/// ([`Work::amount_timed`](crate::scenario::Work::amount_timed)) makes
/// all but the file count timings: direct-stream's 20 s stream left
/// 9.4 and 8.9 GB, 81 and 78 extents, on ext2 in two runs.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("files", "count", Better::Lower, Kind::Exact)
        .heading("files left")
        .about("regular files the work left"),
    FigureSpec::new("bytes", "bytes", Better::Lower, Kind::Exact).about("their bytes"),
    FigureSpec::new("extents", "count", Better::Lower, Kind::Timing)
        .about("extents as filefrag counts them, summed over the files"),
    FigureSpec::new("records", "count", Better::Lower, Kind::Timing).about("FIEMAP records (xfs_bmap's rows)"),
    FigureSpec::new("perfection", "count", Better::Lower, Kind::Exact)
        .heading("perfect")
        .about("the fewest extents the files could have on this file system"),
    FigureSpec::new("fragmented_files", "count", Better::Lower, Kind::Timing)
        .about("files with more extents than perfection"),
    FigureSpec::new("layout_score", "ratio", Better::Higher, Kind::Timing)
        .heading("score")
        .about("share of blocks right after their logical predecessor, by bytes (1 is perfect)"),
    // Where one file lands after another depends on which CPU wrote it
    // (ext4's and xfs's per-CPU allocation groups), so the gaps between
    // files are timings, not exact figures: they vary run to run.
    FigureSpec::new("next_file_contiguous", "ratio", Better::Higher, Kind::Timing)
        .about("share of files that start right where the previous file in their directory ended"),
    FigureSpec::new("next_file_seek_bytes", "bytes", Better::Lower, Kind::Timing)
        .about("distance from each file's end to the next file's start, summed"),
];

/// Whether the blocks a work allocates itself land where the work alone
/// decides on a file system of `fs_type`: not on btrfs, where one
/// O_DIRECT stream of 256 MiB left 17, 20 and 53 extents in three
/// repeats beside other writers (ext4 and xfs left 3 and 1 every time).
pub(super) fn placed_by_the_work(fs_type: &str) -> bool {
    fs_type != "btrfs"
}

/// The figures where blocks went: timings unless the work allocated them.
const PLACED: [&str; 4] = ["extents", "records", "fragmented_files", "layout_score"];

/// What decided a case's layout, and so which of its figures are exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decided {
    /// The work allocated every block itself, on a file system that puts
    /// them where it asked: where they went is exact.
    pub by_the_work: bool,
    /// A clock decided how much the work wrote: only the file count is exact.
    pub amount_timed: bool,
}

/// The kind of the figures where a case's blocks went (`extents`): exact
/// when the work placed them, and a clock did not decide how much it wrote.
pub(super) fn placement_kind(decided: Decided) -> Kind {
    spec("extents", decided).kind
}

/// Figure `name` as this case measures it: [`PLACED`] ones exact when the
/// work placed its blocks; all but `files` timings when a clock decided
/// the amount.
fn spec(name: &str, decided: Decided) -> FigureSpec {
    let spec = *FIGURES.iter().find(|f| f.name == name).expect("declared above");
    if decided.amount_timed && name != "files" {
        spec.with_kind(Kind::Timing)
    } else if decided.by_the_work && PLACED.contains(&name) {
        spec.with_kind(Kind::Exact)
    } else {
        spec
    }
}

/// Layout of everything under `dir`: the `frag` walk's totals as figures,
/// and the maps of its most fragmented files to keep; `decided` says which
/// figures are exact.
pub(super) fn add_layout_figures(dir: &Path, decided: Decided, figures: &mut Figures) -> Result<Vec<KeptMap>> {
    let options = TreeOptions { threads: 2, top: KEPT_MAPS, largest: KEPT_MAPS, cross_mounts: false, disk: None };
    let report = tree::scan(&[dir.to_path_buf()], &options).map_err(|e| Error::io(dir, "map the layout", e))?;
    let s = &report.summary;
    let mut put = |name: &str, value: Option<f64>, why: &str| figures.put(&spec(name, decided), value, why);
    put("files", Some(s.files as f64), "");
    put("bytes", Some(s.bytes as f64), "");
    put("extents", Some(s.extents as f64), "");
    put("records", Some(s.records as f64), "");
    let perfection = (s.perfection_unknown_files == 0).then_some(s.perfection_extents as f64);
    put("perfection", perfection, "perfection unknown for some files");
    put("fragmented_files", Some(s.fragmented_files as f64), "");
    put("layout_score", s.layout_score_bytes, "no file with data");
    let why = "no two files with data in one directory";
    put("next_file_contiguous", s.next_file_contiguous, why);
    let seek = (s.next_file_pairs > 0).then_some(s.next_file_seek_bytes as f64);
    put("next_file_seek_bytes", seek, why);
    if s.errors > 0 {
        let first = report.errors.first().map(|e| format!("{}: {}", e.path, e.error)).unwrap_or_default();
        return Err(Error::failed(format!("{} files could not be mapped; first: {first}", s.errors)));
    }
    // The most fragmented files first; when fewer are fragmented, the
    // largest of the rest, so a run that left one contiguous file still
    // shows where it went.
    let mut keep: Vec<&str> = report.worst.iter().map(|w| w.path.as_str()).collect();
    for large in &report.largest {
        if keep.len() < KEPT_MAPS && !keep.contains(&large.path.as_str()) {
            keep.push(&large.path);
        }
    }
    keep.iter().map(|path| keep_map(dir, Path::new(path))).collect()
}

/// Read the extent map of `path` (one of the files under `dir`) to keep.
fn keep_map(dir: &Path, path: &Path) -> Result<KeptMap> {
    let (file, meta) = crate::layout::open_regular(path)?;
    let fs = crate::layout::FsInfo::probe(&file).map_err(|e| Error::io(path, "statfs", e))?;
    let mut buffer = crate::sys::fiemap::FiemapBuffer::new(crate::layout::extent_map::DEFAULT_BATCH);
    let mut extent_list = Vec::new();
    let mut truncated = false;
    let acc = crate::layout::map_open_file(&file, fs.block_size, &mut buffer, false, |e, _| {
        if extent_list.len() < KEPT_RECORDS {
            extent_list.push(*e);
        } else {
            truncated = true;
        }
        Ok(())
    })
    .map_err(|e| Error::io(path, "FIEMAP", e))?;
    let figures = acc.finish(meta.len());
    Ok(KeptMap {
        path: path.strip_prefix(dir).unwrap_or(path).display().to_string(),
        size: meta.len(),
        block_size: fs.block_size,
        device_bytes: fs.total_bytes,
        extents: figures.extents,
        truncated,
        extent_list,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_deciding_the_amount_makes_all_but_the_file_count_timings() {
        let timed = Decided { by_the_work: true, amount_timed: true };
        for f in FIGURES {
            let want = if f.name == "files" { Kind::Exact } else { Kind::Timing };
            assert_eq!(spec(f.name, timed).kind, want, "{}", f.name);
        }
        let placed = Decided { by_the_work: true, amount_timed: false };
        assert_eq!((spec("bytes", placed).kind, spec("extents", placed).kind), (Kind::Exact, Kind::Exact));
        let buffered = Decided { by_the_work: false, amount_timed: false };
        assert_eq!((spec("bytes", buffered).kind, spec("extents", buffered).kind), (Kind::Exact, Kind::Timing));
    }
}
