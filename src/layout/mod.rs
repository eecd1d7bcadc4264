//! Where did the blocks go: extent maps of files (FIEMAP), fragmentation of
//! trees, and fragmentation of free space (GETFSMAP).
//!
//! Everything here streams: a file's records go through a
//! [`LayoutAccumulator`] and, if the caller wants them, a visitor, but are
//! never collected, so memory does not grow with the number of extents.

pub mod ext_super;
pub mod extent;
pub mod extent_map;
pub mod figures;
pub mod freespace;
pub mod fsinfo;
pub mod modelled;
pub mod mounts;
pub mod tar_order;
pub mod tree;
pub mod xfs_ag;

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use serde::Serialize;

pub use extent::{Extent, FlagCounts};
pub use extent_map::{allocated_bytes, ExtentStream};
pub use figures::{LayoutAccumulator, LayoutFigures, RecordStep};
pub use fsinfo::{FsInfo, PerfectionRule};
pub use xfs_ag::AgGeometry;

use crate::error::{Error, Result};
use crate::sys::fiemap::FiemapBuffer;

/// The layout of one file: its identity, its perfection and its figures.
/// Serialises as one entry of `map --json`'s `files` (without the extent
/// list, which is streamed beside it).
#[derive(Debug, Clone, Serialize)]
pub struct FileMap {
    /// The path as given.
    pub path: String,
    /// Size in bytes (`st_size`).
    pub size: u64,
    /// File-system block size in bytes.
    pub block_size: u32,
    /// File-system type name.
    pub fs_type: String,
    /// The fewest extents the file could have here, when known.
    pub perfection: Option<u64>,
    /// How `perfection` was decided.
    pub perfection_rule: String,
    /// Everything counted from the records.
    #[serde(flatten)]
    pub figures: LayoutFigures,
    /// Its read on a modelled drive (`--disk`).
    #[serde(flatten)]
    pub modelled: Option<modelled::ModelledFigures>,
}

/// Open `path` for mapping: it must be a regular file. Devices, FIFOs and
/// sockets are refused before they are opened, so that mapping never blocks
/// on a FIFO or disturbs a device. Returns the open file's own metadata.
pub fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata)> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat", e))?;
    let kind = meta.file_type();
    let refuse = |what: &str| {
        Err(Error::usage(format!("{}: is {what}, not a regular file; fslab maps regular files", crate::text::path(path))))
    };
    if kind.is_dir() {
        return Err(Error::usage(format!(
            "{}: is a directory; `fslab map` takes regular files, `fslab frag` walks a tree",
            crate::text::path(path)
        )));
    } else if kind.is_block_device() {
        return refuse("a block device");
    } else if kind.is_char_device() {
        return refuse("a character device");
    } else if kind.is_fifo() {
        return refuse("a FIFO");
    } else if kind.is_socket() {
        return refuse("a socket");
    }
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| Error::io(path, "open", e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
    if !meta.file_type().is_file() {
        return refuse("no longer a regular file (it changed while being opened)");
    }
    Ok((file, meta))
}

/// Stream the records of the open file `fd` through the figures, calling
/// `visit` on each record with what it meant. The file's size is read
/// (`fstat`) just before the first FIEMAP call, as filefrag does, so that
/// blocks past EOF are known as such. The caller finishes the accumulator
/// with the file's size and picks the perfection rule
/// ([`FsInfo::rule_for`]).
pub fn map_open_file(
    fd: impl AsFd,
    block_size: u32,
    buffer: &mut FiemapBuffer,
    sync: bool,
    visit: impl FnMut(&Extent, RecordStep) -> io::Result<()>,
) -> io::Result<LayoutAccumulator> {
    let size = rustix::fs::fstat(fd.as_fd())?.st_size.max(0) as u64;
    map_open_file_sized(fd, block_size, size, buffer, sync, visit)
}

/// As [`map_open_file`], for a caller that has just read the file's size
/// itself (a tree walk's one `fstat` a file), so it is not read twice.
pub fn map_open_file_sized(
    fd: impl AsFd,
    block_size: u32,
    size: u64,
    buffer: &mut FiemapBuffer,
    sync: bool,
    mut visit: impl FnMut(&Extent, RecordStep) -> io::Result<()>,
) -> io::Result<LayoutAccumulator> {
    let mut acc = LayoutAccumulator::new(block_size, size);
    for record in ExtentStream::new(fd.as_fd(), buffer, sync) {
        let record = record?;
        let step = acc.push(&record);
        visit(&record, step)?;
    }
    Ok(acc)
}
