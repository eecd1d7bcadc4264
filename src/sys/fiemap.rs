//! `FS_IOC_FIEMAP`: the file's extent records, as the file system reports
//! them.
//!
//! The caller owns a [`FiemapBuffer`] and asks for records from a logical
//! offset on; one call fills the buffer at most, so a file of any number of
//! extents is read in bounded memory by calling again from where the last
//! record ended.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd};

/// `struct fiemap_extent` from `<linux/fiemap.h>`, 56 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct RawFiemapExtent {
    /// Logical offset in bytes from the start of the file.
    pub fe_logical: u64,
    /// Physical offset in bytes from the start of the device.
    pub fe_physical: u64,
    /// Length in bytes.
    pub fe_length: u64,
    fe_reserved64: [u64; 2],
    /// `FIEMAP_EXTENT_*` flags.
    pub fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// `struct fiemap` from `<linux/fiemap.h>`, 32 bytes, followed in memory by
/// `fm_extent_count` extents.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct RawFiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// `FS_IOC_FIEMAP` = `_IOWR('f', 11, struct fiemap)`.
pub const FS_IOC_FIEMAP: libc::c_ulong = ioc_readwrite(b'f', 11, size_of::<RawFiemap>());

/// Request flag: sync the file before mapping it (filefrag -s).
pub const FIEMAP_FLAG_SYNC: u32 = 0x0000_0001;

/// Extent flag: the last extent of the file.
pub const FIEMAP_EXTENT_LAST: u32 = 0x0000_0001;
/// Extent flag: the location is not known yet.
pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x0000_0002;
/// Extent flag: delayed allocation, no blocks yet (sets UNKNOWN too).
pub const FIEMAP_EXTENT_DELALLOC: u32 = 0x0000_0004;
/// Extent flag: the data is encoded (compressed) on disk.
pub const FIEMAP_EXTENT_ENCODED: u32 = 0x0000_0008;
/// Extent flag: the data is encrypted.
pub const FIEMAP_EXTENT_DATA_ENCRYPTED: u32 = 0x0000_0080;
/// Extent flag: offsets are not block aligned.
pub const FIEMAP_EXTENT_NOT_ALIGNED: u32 = 0x0000_0100;
/// Extent flag: the data lives in the inode (inline data).
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x0000_0200;
/// Extent flag: the data is packed into a block with other files' tails.
pub const FIEMAP_EXTENT_DATA_TAIL: u32 = 0x0000_0400;
/// Extent flag: allocated but not written (fallocate); reads as zeros.
pub const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x0000_0800;
/// Extent flag: the file system merged block-mapped records into this one.
pub const FIEMAP_EXTENT_MERGED: u32 = 0x0000_1000;
/// Extent flag: the blocks are shared with another file (reflink, snapshot).
pub const FIEMAP_EXTENT_SHARED: u32 = 0x0000_2000;

/// `_IOWR(ty, nr, size)` as the kernel's asm-generic ioctl.h computes it.
const fn ioc_readwrite(ty: u8, nr: u8, size: usize) -> libc::c_ulong {
    const READ_WRITE: libc::c_ulong = 3;
    (READ_WRITE << 30) | ((size as libc::c_ulong) << 16) | ((ty as libc::c_ulong) << 8) | nr as libc::c_ulong
}

/// A reusable FIEMAP request buffer: the 32-byte header and room for
/// `capacity` records, allocated once.
pub struct FiemapBuffer {
    // u64 words keep the header and records 8-byte aligned.
    words: Vec<u64>,
    capacity: usize,
    /// Records the last successful call filled in.
    mapped: usize,
}

const HEADER_WORDS: usize = size_of::<RawFiemap>() / 8;
const EXTENT_WORDS: usize = size_of::<RawFiemapExtent>() / 8;

impl FiemapBuffer {
    /// A buffer that takes up to `capacity` records per call.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        FiemapBuffer { words: vec![0; HEADER_WORDS + capacity * EXTENT_WORDS], capacity, mapped: 0 }
    }

    /// How many records one call can return.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `FS_IOC_FIEMAP` on `fd` for the logical range `[start, end of file
    /// system's range)`, with `flags` (`FIEMAP_FLAG_*`). Returns the records
    /// the kernel filled in, at most [`capacity`](Self::capacity).
    pub fn map(&mut self, fd: impl AsFd, start: u64, flags: u32) -> io::Result<&[RawFiemapExtent]> {
        // The records are not cleared between calls: only the `mapped`
        // ones the kernel just wrote are ever read, and clearing 28 KiB per
        // call would cost more than the ioctl for a small file.
        self.mapped = 0;
        let header = RawFiemap {
            fm_start: start,
            fm_length: u64::MAX - start,
            fm_flags: flags,
            fm_mapped_extents: 0,
            fm_extent_count: u32::try_from(self.capacity).unwrap_or(u32::MAX),
            fm_reserved: 0,
        };
        let base = self.words.as_mut_ptr();
        // SAFETY: `words` holds at least HEADER_WORDS u64s, so a RawFiemap
        // (repr(C), 32 bytes, align 8) fits at its start; the write is aligned.
        unsafe { base.cast::<RawFiemap>().write(header) };
        // SAFETY: FS_IOC_FIEMAP reads the header and writes at most
        // fm_extent_count records right after it; the buffer was sized for
        // exactly that many, and stays borrowed mutably for the call.
        let rc = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), FS_IOC_FIEMAP as _, base) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the header is initialised (written above, updated by the
        // kernel) and aligned.
        let mapped = unsafe { base.cast::<RawFiemap>().read() }.fm_mapped_extents as usize;
        self.mapped = mapped.min(self.capacity);
        Ok(self.records())
    }

    /// The records the last call returned (none after a failed call):
    /// read in place, so a caller walking them one by one copies nothing.
    pub fn records(&self) -> &[RawFiemapExtent] {
        let base = self.words.as_ptr();
        // SAFETY: records start HEADER_WORDS words in, are 8-aligned, lie
        // inside the buffer for `capacity` entries (`mapped` never exceeds
        // it); the buffer was initialised at allocation, and the first
        // `mapped` records were written by the last call.
        unsafe { std::slice::from_raw_parts(base.add(HEADER_WORDS).cast::<RawFiemapExtent>(), self.mapped) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_and_opcode_match_the_kernel() {
        assert_eq!(size_of::<RawFiemap>(), 32);
        assert_eq!(size_of::<RawFiemapExtent>(), 56);
        // From <linux/fs.h>: FS_IOC_FIEMAP _IOWR('f', 11, struct fiemap).
        assert_eq!(FS_IOC_FIEMAP, 0xC020_660B);
    }
}
