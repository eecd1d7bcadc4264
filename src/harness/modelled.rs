//! What reading a case's files would take on a modelled drive: every
//! regular file the work left, read front to back one after another in
//! tar order — the order tree-copy and the cold read-back read a tree —
//! on the case's disk (`--disk`, the seeds preset's own), beside the same
//! bytes in one piece (`src/model/`, `layout::modelled`).
//!
//! The design decision on kinds: a modelled figure is computed from where
//! the blocks lie, so it is exact exactly when the case's placement
//! figures (`extents`) are ([`super::layout::placement_kind`]): the same
//! layout always models to the same bits, on any machine, in a guest or
//! not, but a layout writeback placed moves from run to run.

use std::path::Path;

use super::layout::{Decided, placement_kind};
use crate::layout::modelled::ModelledRead;
use crate::layout::{map_open_file, tar_order};
use crate::model::Profile;
use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::sys::fiemap::FiemapBuffer;

/// The modelled figures, declared once (timings; a case whose layout is
/// exact puts them in as exact).
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("modelled_read_s", "s", Better::Lower, Kind::Timing)
        .about("seconds the files take to read front to back in tar order on the case's modelled drive (target.disk)"),
    FigureSpec::new("modelled_ideal_s", "s", Better::Lower, Kind::Timing)
        .about("seconds the same bytes take to read laid out in one piece, on the same drive"),
    FigureSpec::new("modelled_read_ratio", "ratio", Better::Lower, Kind::Timing)
        .about("modelled_read_s over modelled_ideal_s: 1 is one piece"),
];

/// Add the modelled figures of everything under `dir`, read on `disk`;
/// `decided` says whether they are exact. What cannot be modelled (data
/// not yet placed or compressed, a layout past the drive's end, a file
/// that could not be mapped) leaves them missing with the reason.
pub(super) fn add_figures(dir: &Path, decided: Decided, disk: &Profile, figures: &mut Figures) {
    let kind = placement_kind(decided);
    let (read, ideal, ratio) = match read_tree(dir, disk) {
        Ok(cost) => (Some(cost.read.seconds), Some(cost.ideal.seconds), cost.ratio()),
        Err(why) => {
            for spec in FIGURES {
                figures.put(&spec.with_kind(kind), None, &why);
            }
            return;
        }
    };
    figures.put(&FIGURES[0].with_kind(kind), read, "");
    figures.put(&FIGURES[1].with_kind(kind), ideal, "");
    figures.put(&FIGURES[2].with_kind(kind), ratio, "nothing to read: no file with data");
}

/// Every regular file under `dir` read in tar order on `disk`.
fn read_tree(dir: &Path, disk: &Profile) -> Result<crate::model::LayoutCost, String> {
    let stat = rustix::fs::statvfs(dir).map_err(|e| format!("{}: statvfs: {e}", dir.display()))?;
    let dev = std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?);
    let block_size = stat.f_bsize as u32;
    let mut buffer = FiemapBuffer::new(crate::layout::extent_map::DEFAULT_BATCH);
    let mut read = ModelledRead::new(disk);
    tar_order::walk::<std::io::Error>(dir, dev, &mut |entry| {
        if !entry.meta.is_file() {
            return Ok(());
        }
        let file = tar_order::open(entry.path)?;
        map_open_file(&file, block_size, &mut buffer, false, |e, step| {
            read.record(e, &step);
            Ok(())
        })
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: FIEMAP: {e}", entry.path.display())))?;
        read.end_file();
        Ok(())
    })
    .map_err(|e| format!("mapping the files in tar order: {e}"))?;
    read.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::builtin::find;

    #[test]
    fn figures_are_exact_only_where_the_work_placed_its_blocks() {
        let dir = crate::test_temp::dir("");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a"), vec![1u8; 64 << 10]).unwrap();
        std::fs::write(dir.path().join("b"), vec![2u8; 200 << 10]).unwrap();
        rustix::fs::sync();
        let disk = find("hdd-7200").unwrap();
        for (by_the_work, kind) in [(true, Kind::Exact), (false, Kind::Timing)] {
            let mut figures = Figures::new();
            add_figures(dir.path(), Decided { by_the_work, amount_timed: false }, &disk, &mut figures);
            for spec in FIGURES {
                let f = figures.get(spec.name).unwrap();
                assert_eq!(f.kind, kind, "{}", spec.name);
                // A file system without FIEMAP (tmpfs) leaves them missing, saying why.
                assert!(f.value.is_some() || f.missing.is_some(), "{}: {f:?}", spec.name);
            }
        }
        let mut figures = Figures::new();
        add_figures(Path::new("/nonexistent/fslab-work"), Decided { by_the_work: false, amount_timed: true }, &disk, &mut figures);
        let f = figures.get("modelled_read_s").unwrap();
        assert!(f.value.is_none() && f.missing.as_deref().is_some_and(|m| m.contains("/nonexistent/fslab-work")), "{f:?}");
    }
}
