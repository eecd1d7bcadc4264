//! Where a case that starts from an aged image gets its image: a reflink in
//! the run's pool ([`crate::site::pool`]) when the scratch folder cannot
//! share blocks itself, made once per run when the first such case needs
//! it.

use std::sync::Arc;

use super::Lab;
use crate::age_cache::CacheEntry;
use crate::error::Result;
use crate::site::pool::{self, Pool, Pooled};
use crate::site::TargetOptions;

impl Lab {
    /// The copy of `base` in the run's pool for a case made with
    /// `options`, the pool made first when the run has none; `None` when
    /// the case starts fresh, records its writes (a recorded target copies
    /// its image on its own), or the scratch folder is btrfs. A pool that
    /// cannot be made (no mkfs.btrfs) is said once, and every case then
    /// copies its image as before.
    pub(super) fn pooled_for(&self, base: Option<&CacheEntry>, options: &TargetOptions) -> Result<Option<Arc<Pooled>>> {
        let Some(base) = base else { return Ok(None) };
        if options.record.is_some() || options.host_log.is_some() || !pool::wanted(&options.scratch) {
            return Ok(None);
        }
        let mut slot = self.pool.borrow_mut();
        let pool = match &mut *slot {
            Some(Ok(pool)) => pool,
            Some(Err(_)) => return Ok(None),
            None => {
                crate::interrupt::check()?;
                match Pool::make(self.ledger(), &self.id) {
                    Ok(pool) => slot.insert(Ok(pool)).as_mut().expect("just made"),
                    Err(e) => {
                        eprintln!(
                            "fslab: note: no reflink pool for the aged cases ({e}); each copies its image whole"
                        );
                        *slot = Some(Err(e.message));
                        return Ok(None);
                    }
                }
            }
        };
        pool.copy_of(self.ledger(), base).map(Some)
    }
}
