//! What the window left for later: the probes that count on past the work
//! and its syncfs ([`Later`]) run until the target's first unmount after
//! it — the cold read-back's remount, else the one before the release —
//! and what they count is the case's `deferred_*` figures.
//!
//! The design decision: the end is an unmount because an unmount leaves
//! nothing of the work behind (ext4 checkpoints its journal, xfs quiesces
//! its log, btrfs commits), so everything the work's writes still cost is
//! counted, however long the file system would have waited. What comes
//! after that first unmount (the remount's own writes, a read-back's
//! atimes) is fslab's doing, not the work's, and is not counted.

use crate::error::Result;
use crate::probe::{Later, PROBES};
use crate::record::Figures;
use crate::site::Made;

/// Why the deferred figures of a target fslab does not unmount are missing.
pub const NOT_UNMOUNTED: &str =
    "the target is not unmounted (a --dir), so what its file system left for later cannot be told apart";

/// The probes still counting after the window.
pub(super) struct Deferred<'a> {
    laters: Vec<Box<dyn Later + 'a>>,
}

impl<'a> Deferred<'a> {
    /// The parts of the window's probes that count on, in the order they
    /// were handed over.
    pub(super) fn new(laters: Vec<Box<dyn Later + 'a>>) -> Deferred<'a> {
        Deferred { laters }
    }

    /// Unmount `target` (its device stays attached), stop counting, and
    /// put the deferred figures into `figures`: measured, or missing with
    /// why; every one missing for [`NOT_UNMOUNTED`] when the target is
    /// not unmounted. A failed unmount is the case's error.
    pub(super) fn settle(self, target: &mut dyn Made, figures: &mut Figures) -> Result<()> {
        let unmounted = target.unmount()?;
        for later in self.laters.into_iter().rev() {
            let counted = later.stop();
            if unmounted {
                figures.extend(counted);
            }
        }
        if !unmounted {
            for spec in PROBES.iter().flat_map(|p| p.deferred_figures()) {
                figures.put(spec, None, NOT_UNMOUNTED);
            }
        }
        Ok(())
    }
}
