//! The run's reflink pool: a btrfs in a sparse file of the scratch folder,
//! where cases that start from an aged image get their image as a reflink
//! instead of a copy of its gigabytes.
//!
//! The design decision: a scratch folder on ext4 cannot share blocks, and
//! one on xfs can but then raises the file's direct-I/O alignment to 4096
//! (so the loop device gets 4096-byte sectors, on which a 512-byte-sector
//! xfs or a 1 KiB-block ext4 does not mount). A btrfs keeps a reflinked
//! file's loop device at 512-byte sectors with direct I/O, so the pool is
//! a btrfs. It lives as long as the run: made when the first aged case
//! needs it, every step in the run's ledger first (folder, image, loop
//! device, mount), each cache entry copied into it once, and released with
//! the rest of the run's ledger at its end (or by the next start, after a
//! kill). An entry is copied in read direct from the disk
//! ([`image_copy::copy_from_disk`]). No run shares it, so no lock is needed and none can remove it
//! under another. Mounted `nodatacow`: no checksum on a case's writes, and
//! a shared block is still copied before it is written.
//!
//! What the stacking costs: a case's loop device is over a file of the
//! pool, which is over a loop device of its own (direct I/O both), so a
//! case's reads and writes pass two loop devices; what btrfs cannot do
//! direct (I/O not aligned to its 4 KiB sectors, such as xfs's 512-byte
//! log writes) it does through its page cache.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use super::held::Held;
use super::mounted::{self, Format, MountedFs};
use super::scratch;
use super::FsType;
use crate::age_cache::image_copy;
use crate::age_cache::CacheEntry;
use crate::error::{Error, Result};
use crate::ledger::folder::OwnedDir;
use crate::ledger::{Ledger, Resource};

/// The pool's image: sparse, so its length is only a ceiling on what cases
/// and copies may hold at once; the disk holds what was written.
pub const POOL_BYTES: u64 = 1 << 40;

/// The run's reflink pool: its root folder, through its mount, and the
/// copies of cache entries made in it.
#[derive(Debug)]
pub struct Pool {
    dir: Arc<OwnedDir>,
    rotational: bool,
    copies: HashMap<String, Arc<Pooled>>,
}

/// A cache entry's copy in the pool, and the pool's folder, where a case
/// starting from it makes its image as a reflink of it.
#[derive(Debug)]
pub struct Pooled {
    dir: Arc<OwnedDir>,
    rotational: bool,
    copy: File,
}

impl Pooled {
    /// The pool's root folder, through its mount.
    pub(super) fn dir(&self) -> &OwnedDir {
        &self.dir
    }

    /// The entry's copy, open.
    pub(super) fn copy(&self) -> &File {
        &self.copy
    }

    /// Whether a loop device over a file of the scratch folder says it is
    /// rotational (the pool's own does): what a case's loop device in the
    /// pool is made to say, as it would outside it. Over a file of the
    /// btrfs it would say "not rotational", and ext4's allocator (ext2's
    /// and ext3's too, through the ext4 driver) then places the same work
    /// on the same aged image otherwise: 33 of the preset's 405 exact
    /// figures of aged cases changed so, none while the flag was matched.
    pub(super) fn rotational(&self) -> bool {
        self.rotational
    }
}

/// Whether cases whose image is a copy of a cache entry want a pool to be
/// reflinks in: yes unless the scratch folder is on btrfs itself (where
/// the copy is a reflink already). A folder that cannot be asked is
/// treated as not btrfs.
#[allow(clippy::unnecessary_cast)] // `f_type`'s width is the platform's long
pub fn wanted(scratch: &Path) -> bool {
    rustix::fs::statfs(scratch).map_or(true, |st| st.f_type as i64 != crate::layout::fsinfo::magic::BTRFS)
}

impl Pool {
    /// Make the run's pool: `RUN-pool/pool.img` in the scratch folder,
    /// a btrfs on a loop device over it (direct I/O), mounted on
    /// `RUN-pool/mnt`; everything in `ledger` before it is made, and left
    /// there for the run's end to release.
    pub fn make(ledger: &Ledger, run_id: &str) -> Result<Pool> {
        FsType::Btrfs.check_available()?;
        let mut held = Held::new(ledger);
        let folder = mounted::make_folder(&mut held, run_id, "pool")?;
        let (image, file, id) = scratch::make_file(&mut held, &folder, "pool.img", POOL_BYTES, Resource::Image)?;
        let (device, open, _) = scratch::attach(&mut held, &image, &file, id, true)?;
        held.keep_open(open);
        let rotational = crate::sys::loop_dev::rotational(&device).map_err(|e| Error::io(&device, "read whether it is rotational", e))?;
        // No discard at mkfs: the image is all holes already.
        let extra = ["-K".to_string()];
        let format = Format {
            fs: FsType::Btrfs,
            mkfs_extra: &extra,
            mount_opts: Some("nodatacow".into()),
            image_copy: None,
            formatted: false,
        };
        let mut fs = MountedFs::make(held, &device, Some((image, id)), &folder, format)?;
        let work = crate::site::Made::work_dir(&fs).to_path_buf();
        let scratch_dir = ledger.scratch()?;
        let relative = scratch_dir
            .relative(&work)
            .ok_or_else(|| Error::failed(format!("{}: the pool's mount is not in the scratch folder", work.display())))?;
        let dir = scratch_dir.open_dir(&relative).map_err(|e| Error::io(&work, "open the pool's mount", e))?;
        if dir.id().dev == folder.id().dev {
            return Err(Error::failed(format!("{}: the pool is not mounted there", work.display())));
        }
        // From here the ledger alone holds what was made: the run's end
        // releases it, after every case made in the pool.
        fs.held().hand_over();
        Ok(Pool { dir: Arc::new(dir), rotational, copies: HashMap::new() })
    }

    /// `entry`'s copy in the pool, made (and synced) the first time it is
    /// asked for: recorded in `ledger` first, and left there as the pool is.
    pub fn copy_of(&mut self, ledger: &Ledger, entry: &CacheEntry) -> Result<Arc<Pooled>> {
        if let Some(pooled) = self.copies.get(&entry.meta.key) {
            return Ok(pooled.clone());
        }
        let mut held = Held::new(ledger);
        let name = format!("{}.img", entry.meta.key);
        let (path, file, _) = scratch::make_file(&mut held, &self.dir, &name, 0, Resource::Image)?;
        let what = format!("copy cache entry {} into the run's pool", entry.path().display());
        image_copy::copy_from_disk(entry.file(), &file).map_err(|e| Error::io(&path, &what, e))?;
        file.sync_all().map_err(|e| Error::io(&path, "sync the pool's copy", e))?;
        held.hand_over();
        let pooled = Arc::new(Pooled { dir: self.dir.clone(), rotational: self.rotational, copy: file });
        self.copies.insert(entry.meta.key.clone(), pooled.clone());
        Ok(pooled)
    }
}
