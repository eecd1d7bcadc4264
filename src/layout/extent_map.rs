//! A file's extent records streamed by repeated FIEMAP calls, so that a
//! file of a million extents is read in the memory of one buffer.
//!
//! The loop is filefrag's: ask from offset 0, then from the end of the last
//! record returned, until a record carries the LAST flag or the kernel
//! returns fewer records than asked for (the range is exhausted).

use std::io;
use std::os::fd::BorrowedFd;

use super::extent::Extent;
use crate::sys::fiemap::{FIEMAP_EXTENT_LAST, FIEMAP_FLAG_SYNC, FiemapBuffer};

/// Records asked for per FIEMAP call: 56 bytes each, so 28 KiB a call.
pub const DEFAULT_BATCH: usize = 512;

/// An iterator over the extent records of one open file.
pub struct ExtentStream<'a> {
    fd: BorrowedFd<'a>,
    buffer: &'a mut FiemapBuffer,
    flags: u32,
    pending: Vec<Extent>,
    position: usize,
    next_start: u64,
    finished: bool,
}

impl<'a> ExtentStream<'a> {
    /// Stream the records of `fd`, using `buffer` for the ioctl. With `sync`
    /// the kernel flushes the file first (filefrag -s), so delayed
    /// allocations get real locations.
    pub fn new(fd: BorrowedFd<'a>, buffer: &'a mut FiemapBuffer, sync: bool) -> Self {
        ExtentStream {
            fd,
            flags: if sync { FIEMAP_FLAG_SYNC } else { 0 },
            pending: Vec::with_capacity(buffer.capacity()),
            buffer,
            position: 0,
            next_start: 0,
            finished: false,
        }
    }

    fn refill(&mut self) -> io::Result<()> {
        self.pending.clear();
        self.position = 0;
        let asked = self.buffer.capacity();
        let records = self.buffer.map(self.fd, self.next_start, self.flags)?;
        // The kernel cannot hand back more than were asked for; fewer means
        // it reached the end of the range.
        if records.len() < asked {
            self.finished = true;
        }
        self.pending.extend(records.iter().map(Extent::from));
        if let Some(last) = self.pending.last() {
            if last.flags & FIEMAP_EXTENT_LAST != 0 {
                self.finished = true;
            }
            let end = last.logical_end();
            if end <= self.next_start && !self.finished {
                return Err(io::Error::other(format!(
                    "FIEMAP made no progress at offset {} (a file-system bug?)",
                    self.next_start
                )));
            }
            self.next_start = end;
        }
        Ok(())
    }
}

impl Iterator for ExtentStream<'_> {
    type Item = io::Result<Extent>;

    fn next(&mut self) -> Option<io::Result<Extent>> {
        loop {
            if let Some(extent) = self.pending.get(self.position) {
                self.position += 1;
                return Some(Ok(*extent));
            }
            if self.finished {
                return None;
            }
            if let Err(e) = self.refill() {
                self.finished = true;
                return Some(Err(e));
            }
            if self.pending.is_empty() {
                self.finished = true;
            }
        }
    }
}
