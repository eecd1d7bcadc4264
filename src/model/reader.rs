//! The layout reader: a file's extents turned into the reads a program
//! reading it front to back makes the kernel issue, and what they cost
//! beside the same bytes laid out in one piece.
//!
//! The rule, stated once: the file's data is taken in windows of
//! [`READ_WINDOW_BYTES`] (128 KiB, Linux's default `read_ahead_kb`), in file
//! order, holes skipped (they cost no I/O). A window's pieces are the
//! extents' parts it covers; they are sorted by disk offset and pieces
//! that touch are merged, as the block layer sorts and merges a plugged
//! batch, and each becomes one read. Reads go at queue depth 1, a window
//! after the one before, so a piece's position on the disk, not the
//! kernel's, decides what the drive does. Files of a tree are read one
//! after another, in the order given, on the same drive. The drive starts
//! with its head over the first byte read, as if it had just read up to
//! it, so a file in one extent costs exactly its bytes at the media rate
//! and its ratio to the ideal is 1.

use super::{Modelled, Profile, Request, device, queue};
use crate::error::{Error, Result};

/// The bytes of file data a read window covers: Linux's default
/// readahead window (`/sys/block/*/queue/read_ahead_kb` = 128).
pub const READ_WINDOW_BYTES: u64 = 128 << 10;

/// A stretch of a file's data on the device: `length` bytes at byte
/// `physical`, in file order (an extent, or part of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte on the device.
    pub physical: u64,
    /// Bytes.
    pub length: u64,
}

/// The reads of one file, window by window.
pub struct FileReads<'a> {
    spans: &'a [Span],
    index: usize,
    within: u64,
    window: Vec<Span>,
    reads: Vec<Request>,
    next: usize,
}

impl<'a> FileReads<'a> {
    /// The reads of a file whose data lies in `spans`, in file order.
    pub fn new(spans: &'a [Span]) -> Self {
        FileReads { spans, index: 0, within: 0, window: Vec::new(), reads: Vec::new(), next: 0 }
    }

    /// Cut the next window's reads.
    fn fill(&mut self) {
        self.window.clear();
        self.reads.clear();
        self.next = 0;
        let mut room = READ_WINDOW_BYTES;
        while room > 0 && self.index < self.spans.len() {
            let span = self.spans[self.index];
            let take = (span.length - self.within).min(room);
            if take > 0 {
                self.window.push(Span { physical: span.physical.saturating_add(self.within), length: take });
            }
            self.within += take;
            room -= take;
            if self.within == span.length {
                self.index += 1;
                self.within = 0;
            }
        }
        self.window.sort_by_key(|s| s.physical);
        for piece in &self.window {
            match self.reads.last_mut() {
                Some(last) if last.offset.checked_add(last.length) == Some(piece.physical) => last.length += piece.length,
                _ => self.reads.push(Request::read(piece.physical, piece.length)),
            }
        }
    }
}

impl Iterator for FileReads<'_> {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.next == self.reads.len() {
            self.fill();
        }
        let read = self.reads.get(self.next).copied()?;
        self.next += 1;
        Some(read)
    }
}

/// A layout's modelled read time beside the same bytes in one piece.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayoutCost {
    /// Reading the files as they lie (`modelled_read_s` is its seconds).
    pub read: Modelled,
    /// Reading the same bytes laid out in one piece from where the first
    /// file starts (`modelled_ideal_s`).
    pub ideal: Modelled,
}

impl LayoutCost {
    /// How many times the ideal's time the layout takes; `None` when
    /// nothing was read.
    pub fn ratio(&self) -> Option<f64> {
        (self.ideal.seconds > 0.0).then(|| self.read.seconds / self.ideal.seconds)
    }
}

/// Model reading `files` (each its spans in file order), one after another,
/// on a fresh drive of `profile`, and the same bytes in one piece starting
/// where the first file's data does (moved back only if it would run off
/// the disk's end). Data past the disk's end is bad input (exit 2).
pub fn read_layout<F: AsRef<[Span]>>(profile: &Profile, files: &[F]) -> Result<LayoutCost> {
    let spans = || files.iter().flat_map(|f| f.as_ref().iter()).filter(|s| s.length > 0);
    let Some(first) = spans().next().map(|s| s.physical) else {
        return Ok(LayoutCost::default());
    };
    let capacity = profile.capacity_bytes();
    let total = spans().try_fold(0u64, |sum, s| sum.checked_add(s.length)).filter(|&t| t <= capacity).ok_or_else(|| {
        Error::usage(format!(
            "the files hold more data than the {} profile's {} bytes; choose a profile whose disk holds them",
            profile.name, capacity
        ))
    })?;
    let read = read_from(profile, first, files.iter().flat_map(|f| FileReads::new(f.as_ref())))?;
    let start = first.min(capacity - total);
    let whole = [Span { physical: start, length: total }];
    let ideal = read_from(profile, start, FileReads::new(&whole))?;
    Ok(LayoutCost { read, ideal })
}

/// Replay `reads` at depth 1 on a fresh drive parked over `at`.
fn read_from(profile: &Profile, at: u64, reads: impl Iterator<Item = Request>) -> Result<Modelled> {
    let mut drive = device(profile);
    drive.park(at);
    queue::replay(drive.as_mut(), profile, reads, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_sort_and_merge_their_pieces_and_never_cross_128_kib_of_data() {
        let k = 1024;
        // 4 KiB pieces laid out backwards, then one long extent.
        let spans = [
            Span { physical: 1000 * k, length: 4 * k },
            Span { physical: 996 * k, length: 4 * k },
            Span { physical: 992 * k, length: 4 * k },
            Span { physical: 5000 * k, length: 300 * k },
        ];
        let reads: Vec<Request> = FileReads::new(&spans).collect();
        assert_eq!(
            reads,
            [
                // First window: the three pieces merged into one read, then
                // the long extent's first 116 KiB.
                Request::read(992 * k, 12 * k),
                Request::read(5000 * k, 116 * k),
                Request::read(5116 * k, 128 * k),
                Request::read(5244 * k, 56 * k),
            ]
        );
        assert_eq!(reads.iter().map(|r| r.length).sum::<u64>(), 312 * k);
        assert_eq!(FileReads::new(&[]).count(), 0);
        assert_eq!(FileReads::new(&[Span { physical: 7, length: 0 }]).count(), 0);
    }
}
