//! A file's extent records streamed by repeated FIEMAP calls, so that a
//! file of a million extents is read in the memory of one buffer.
//!
//! The loop is filefrag's: ask from offset 0, then from the end of the last
//! record returned, until a record carries the LAST flag or the kernel
//! returns fewer records than asked for (the range is exhausted).

use std::io;
use std::os::fd::BorrowedFd;

use super::extent::Extent;
use crate::sys::fiemap::{FIEMAP_EXTENT_DELALLOC, FIEMAP_EXTENT_LAST, FIEMAP_FLAG_SYNC, FiemapBuffer};

/// Records asked for per FIEMAP call: 56 bytes each, so 28 KiB a call.
pub const DEFAULT_BATCH: usize = 512;

/// An iterator over the extent records of one open file, read in place
/// from the caller's buffer: nothing is allocated or copied per file.
pub struct ExtentStream<'a> {
    fd: BorrowedFd<'a>,
    buffer: &'a mut FiemapBuffer,
    flags: u32,
    /// The next of the buffer's records to hand out.
    position: usize,
    next_start: u64,
    /// No call is left to make: the buffer's records are the last.
    finished: bool,
    /// The buffer holds this stream's records (none before the first call).
    filled: bool,
}

impl<'a> ExtentStream<'a> {
    /// Stream the records of `fd`, using `buffer` for the ioctl. With `sync`
    /// the kernel flushes the file first (filefrag -s), so delayed
    /// allocations get real locations.
    pub fn new(fd: BorrowedFd<'a>, buffer: &'a mut FiemapBuffer, sync: bool) -> Self {
        ExtentStream {
            fd,
            flags: if sync { FIEMAP_FLAG_SYNC } else { 0 },
            buffer,
            position: 0,
            next_start: 0,
            finished: false,
            filled: false,
        }
    }

    fn refill(&mut self) -> io::Result<()> {
        self.position = 0;
        self.filled = true;
        let asked = self.buffer.capacity();
        let records = self.buffer.map(self.fd, self.next_start, self.flags)?;
        // The kernel cannot hand back more than were asked for; fewer means
        // it reached the end of the range.
        if records.len() < asked {
            self.finished = true;
        }
        if let Some(last) = records.last().map(Extent::from) {
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
        } else {
            self.finished = true;
        }
        Ok(())
    }
}

impl Iterator for ExtentStream<'_> {
    type Item = io::Result<Extent>;

    fn next(&mut self) -> Option<io::Result<Extent>> {
        loop {
            if self.filled
                && let Some(raw) = self.buffer.records().get(self.position)
            {
                self.position += 1;
                return Some(Ok(Extent::from(raw)));
            }
            if self.finished {
                return None;
            }
            if let Err(e) = self.refill() {
                self.finished = true;
                return Some(Err(e));
            }
        }
    }
}

/// The bytes of the open file `fd` that have blocks now: every record but
/// the delayed-allocation ones, read by FIEMAP without a flush, so asking
/// does not itself allocate anything.
///
/// It makes no call but the ioctl and allocates no memory (its errors are
/// bare kinds or errnos), so a child forked from a multi-threaded process
/// may call it with a `buffer` made before the fork: mmap-fill reads it
/// there, between the stores and their msync.
pub fn allocated_bytes(fd: BorrowedFd<'_>, buffer: &mut FiemapBuffer) -> io::Result<u64> {
    let (mut start, mut allocated) = (0u64, 0u64);
    loop {
        let asked = buffer.capacity();
        let records = buffer.map(fd, start, 0)?;
        let Some(last) = records.last() else { return Ok(allocated) };
        allocated += records.iter().filter(|r| r.fe_flags & FIEMAP_EXTENT_DELALLOC == 0).map(|r| r.fe_length).sum::<u64>();
        let end = last.fe_logical.saturating_add(last.fe_length);
        if records.len() < asked || last.fe_flags & FIEMAP_EXTENT_LAST != 0 {
            return Ok(allocated);
        }
        if end <= start {
            return Err(io::ErrorKind::InvalidData.into());
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileExt;

    use super::*;

    /// Holes are not counted, and a one-record buffer walks the file
    /// record by record to the same sum.
    #[test]
    fn allocated_bytes_counts_the_written_ranges_not_the_holes() {
        let mut file = tempfile::tempfile_in("/var/tmp").unwrap();
        let chunk = vec![7u8; 64 << 10];
        file.write_all(&chunk).unwrap();
        file.write_all_at(&chunk, 1 << 20).unwrap();
        file.write_all_at(&chunk, 2 << 20).unwrap();
        file.sync_all().unwrap();
        for capacity in [1, 512] {
            let mut buffer = FiemapBuffer::new(capacity);
            assert_eq!(allocated_bytes(file.as_fd(), &mut buffer).unwrap(), 3 * (64 << 10), "{capacity} records a call");
        }
        let empty = tempfile::tempfile_in("/var/tmp").unwrap();
        empty.set_len(1 << 20).unwrap();
        assert_eq!(allocated_bytes(empty.as_fd(), &mut FiemapBuffer::new(4)).unwrap(), 0);
    }
}
