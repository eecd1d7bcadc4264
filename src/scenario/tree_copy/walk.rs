//! Tree-copy's two uses of tar order — the order the seed's `tar cf` read
//! its source and its copy in: listing a source directory to copy, and
//! mapping where the copy's files landed relative to each other in that
//! order. The walk itself is [`crate::layout::tar_order`], the one fslab's
//! cold read-back uses too, so "tar order" means the same thing in both.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Entry, EntryKind};
use crate::layout::{map_open_file, tar_order};
use crate::sys::fiemap::{FIEMAP_EXTENT_DATA_INLINE, FiemapBuffer};

/// Call `visit` with every entry under `root` (not `root` itself), in tar
/// order, staying on `root`'s file system.
fn walk(root: &Path, visit: &mut dyn FnMut(&tar_order::Entry) -> io::Result<()>) -> io::Result<()> {
    let dev = fs::symlink_metadata(root)?.dev();
    tar_order::walk(root, dev, visit)
}

fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

fn c_path(rel: &Path) -> CString {
    CString::new(rel.as_os_str().as_bytes()).expect("a path from the kernel has no NUL")
}

/// What a source directory holds, in the order tar would archive it.
#[derive(Debug, Default)]
pub struct Listing {
    /// Directories, regular files and symlinks.
    pub entries: Vec<Entry>,
    /// Sockets, FIFOs and devices, which are left out (they hold no data).
    pub skipped: u64,
    /// Bytes of data the files hold: each file's size, but no more than
    /// the blocks it has (a sparse file's holes are no data to copy).
    pub data_bytes: u64,
}

/// List everything under `root` to copy it.
pub fn list(root: &Path) -> io::Result<Listing> {
    let mut listing = Listing::default();
    walk(root, &mut |&tar_order::Entry { path, rel, meta }| {
        let kind = if meta.is_dir() {
            EntryKind::Dir
        } else if meta.is_file() {
            listing.data_bytes += meta.len().min(meta.blocks().saturating_mul(512));
            EntryKind::File { len: meta.len(), offset: 0 }
        } else if meta.file_type().is_symlink() {
            let target = fs::read_link(path).map_err(|e| with_path(path, e))?;
            EntryKind::Symlink(c_path(&target))
        } else {
            listing.skipped += 1;
            return Ok(());
        };
        listing.entries.push(Entry { path: c_path(rel), kind });
        Ok(())
    })?;
    Ok(listing)
}

/// Where consecutive files sit on the device, in tar order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOrder {
    /// Consecutive pairs of files whose data have device locations.
    pub pairs: u64,
    /// Of those, the pairs where the next file starts right where the
    /// previous one ended.
    pub contiguous: u64,
    /// Device distance from each file's end to the next one's start,
    /// summed over the pairs.
    pub gap_bytes: u64,
    /// Device distance a reader in tar order travels in all: the gaps,
    /// plus every jump inside a file.
    pub seek_bytes: u64,
    /// Files whose data is stored inside metadata (btrfs inline extents)
    /// and so has no place in the chain.
    pub inline_files: u64,
}

/// Map every regular file under `root` in tar order and chain them.
pub fn read_order(root: &Path) -> io::Result<ReadOrder> {
    let block_size = rustix::fs::statvfs(root).map_err(io::Error::from)?.f_bsize as u32;
    let mut buffer = FiemapBuffer::new(crate::layout::extent_map::DEFAULT_BATCH);
    let mut order = ReadOrder::default();
    let mut previous_end: Option<u64> = None;
    walk(root, &mut |&tar_order::Entry { path, meta, .. }| {
        if !meta.is_file() {
            return Ok(());
        }
        let file = tar_order::open(path).map_err(|e| with_path(path, e))?;
        let mut inline = false;
        let acc = map_open_file(&file, block_size, &mut buffer, false, |e, _| {
            inline |= e.flags & FIEMAP_EXTENT_DATA_INLINE != 0;
            Ok(())
        })
        .map_err(|e| with_path(path, e))?;
        let figures = acc.finish(meta.len());
        if inline {
            order.inline_files += 1;
            return Ok(());
        }
        let (Some(start), Some(end)) = (figures.first_physical, figures.last_physical_end) else {
            return Ok(()); // no data, or no known place for it
        };
        if let Some(previous) = previous_end {
            order.pairs += 1;
            order.contiguous += u64::from(previous == start);
            order.gap_bytes += previous.abs_diff(start);
            order.seek_bytes += previous.abs_diff(start);
        }
        order.seek_bytes += figures.seek_distance;
        previous_end = Some(end);
        Ok(())
    })?;
    Ok(order)
}
