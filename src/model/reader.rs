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
//!
//! The design decision: a [`LayoutReader`] takes the data a stretch at a
//! time and serves each window's reads as soon as the window is full
//! ([`Replay`] at depth 1), so what it holds is one window, never a file's or a
//! tree's extents: a walk can feed it as it maps.

use super::queue::Replay;
use super::{Modelled, Profile, Request};
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

/// One file's data cut into read windows as it comes.
#[derive(Debug, Clone)]
struct Windows {
    window: Vec<Span>,
    room: u64,
}

impl Windows {
    fn new() -> Windows {
        Windows { window: Vec::new(), room: READ_WINDOW_BYTES }
    }

    /// Take the next stretch of the file's data, handing `read` the reads
    /// of every window it fills.
    fn push(&mut self, span: Span, read: &mut dyn FnMut(Request) -> Result<()>) -> Result<()> {
        let mut taken = 0;
        while taken < span.length {
            let take = (span.length - taken).min(self.room);
            self.window.push(Span { physical: span.physical.saturating_add(taken), length: take });
            taken += take;
            self.room -= take;
            if self.room == 0 {
                self.close(read)?;
            }
        }
        Ok(())
    }

    /// The window so far (the file's last, when it ends): its pieces
    /// sorted by disk offset, those that touch merged, each one read.
    fn close(&mut self, read: &mut dyn FnMut(Request) -> Result<()>) -> Result<()> {
        self.window.sort_by_key(|s| s.physical);
        let mut pending: Option<Request> = None;
        for piece in self.window.drain(..) {
            match pending.as_mut() {
                Some(last) if last.offset.checked_add(last.length) == Some(piece.physical) => last.length += piece.length,
                _ => {
                    if let Some(done) = pending.replace(Request::read(piece.physical, piece.length)) {
                        read(done)?;
                    }
                }
            }
        }
        self.room = READ_WINDOW_BYTES;
        pending.map_or(Ok(()), read)
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

/// Files read front to back, one after another, on one drive at depth 1,
/// modelled as their data comes: [`push`](Self::push) each file's stretches
/// in file order, [`end_file`](Self::end_file) after each file, then
/// [`finish`](Self::finish).
pub struct LayoutReader {
    profile: Profile,
    serial: Option<Replay>,
    windows: Windows,
    first: Option<u64>,
    bytes: u64,
}

impl LayoutReader {
    /// A reader on a fresh drive of `profile`, nothing read yet.
    pub fn new(profile: &Profile) -> LayoutReader {
        LayoutReader { profile: profile.clone(), serial: None, windows: Windows::new(), first: None, bytes: 0 }
    }

    /// Take the next stretch of the current file's data. The drive starts
    /// over the first byte of the first stretch. Data past the drive's end
    /// is bad input (exit 2).
    pub fn push(&mut self, span: Span) -> Result<()> {
        if span.length == 0 {
            return Ok(());
        }
        self.bytes = self.bytes.checked_add(span.length).ok_or_else(|| too_much(&self.profile))?;
        let LayoutReader { profile, serial, windows, first, .. } = self;
        let serial = serial.get_or_insert_with(|| {
            *first = Some(span.physical);
            parked(profile, span.physical)
        });
        windows.push(span, &mut |read| serial.push(read, &mut |_| {}).map(drop))
    }

    /// The current file ends: its last window is read.
    pub fn end_file(&mut self) -> Result<()> {
        let LayoutReader { serial, windows, .. } = self;
        match serial {
            Some(serial) => windows.close(&mut |read| serial.push(read, &mut |_| {}).map(drop)),
            None => Ok(()),
        }
    }

    /// Bytes taken so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// What reading it all took (the current file's last window read
    /// first), beside the same bytes in one piece starting where the first
    /// byte read lies (moved back only if it would run off the disk's end).
    pub fn finish(mut self) -> Result<LayoutCost> {
        self.end_file()?;
        let (Some(first), Some(serial)) = (self.first, self.serial) else {
            return Ok(LayoutCost::default());
        };
        let capacity = self.profile.capacity_bytes();
        if self.bytes > capacity {
            return Err(too_much(&self.profile));
        }
        let start = first.min(capacity - self.bytes);
        let mut whole = parked(&self.profile, start);
        let mut windows = Windows::new();
        let mut read = |r| whole.push(r, &mut |_| {}).map(drop);
        windows.push(Span { physical: start, length: self.bytes }, &mut read)?;
        windows.close(&mut read)?;
        Ok(LayoutCost { read: serial.finish(&mut |_| {})?, ideal: whole.finish(&mut |_| {})? })
    }
}

/// A replay on a fresh drive of `profile` parked over byte `at`.
fn parked(profile: &Profile, at: u64) -> Replay {
    let mut replay = Replay::new(profile, 1);
    replay.park(at);
    replay
}

/// More data than the drive holds.
fn too_much(profile: &Profile) -> Error {
    Error::usage(format!(
        "the files hold more data than the {} profile's {} bytes; choose a profile whose disk holds them",
        profile.name,
        profile.capacity_bytes()
    ))
}

/// Whether a drive of `profile` holds `span`: data past its end is bad
/// input (exit 2), said as a replay says it.
pub fn check_span(profile: &Profile, span: Span) -> Result<()> {
    super::check_within(profile, &Request::read(span.physical, span.length))
}

/// Model reading `files` (each its spans in file order), one after another,
/// on a fresh drive of `profile`, and the same bytes in one piece starting
/// where the first file's data does (moved back only if it would run off
/// the disk's end). Data past the disk's end is bad input (exit 2).
pub fn read_layout<F: AsRef<[Span]>>(profile: &Profile, files: &[F]) -> Result<LayoutCost> {
    let mut reader = LayoutReader::new(profile);
    for file in files {
        for &span in file.as_ref() {
            reader.push(span)?;
        }
        reader.end_file()?;
    }
    reader.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::builtin::find;
    use crate::model::calibration_tests::Seeded;
    use crate::model::queue;

    /// The reads `spans` make, window by window.
    fn reads_of(spans: &[Span]) -> Vec<Request> {
        let mut reads = Vec::new();
        let mut windows = Windows::new();
        let mut keep = |r| {
            reads.push(r);
            Ok(())
        };
        for &s in spans {
            windows.push(s, &mut keep).unwrap();
        }
        windows.close(&mut keep).unwrap();
        reads
    }

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
        let reads = reads_of(&spans);
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
        assert_eq!(reads_of(&[]).len(), 0);
        assert_eq!(reads_of(&[Span { physical: 7, length: 0 }]).len(), 0);
    }

    #[test]
    fn a_replay_fed_a_request_at_a_time_is_the_whole_queue_at_depth_1_to_the_bit() {
        for name in ["hdd-7200-2009", "scsi-15k-2004", "ssd-no-plp"] {
            let profile = find(name).unwrap();
            let mut rng = Seeded::new(3);
            let stream: Vec<Request> = (0..3000)
                .map(|k| match k % 9 {
                    0 => Request::flush(),
                    1 => Request::write(rng.block(profile.capacity_bytes()), 4096 * (1 + rng.next() % 8)),
                    2 => Request::read(rng.block(profile.capacity_bytes()), 0),
                    3..=5 => Request::read((k / 9) * (64 << 10), 64 << 10),
                    _ => Request::read(rng.block(profile.capacity_bytes()), 4096 * (1 + rng.next() % 32)),
                })
                .collect();
            let queued = queue::replay(crate::model::device(&profile).as_mut(), &profile, stream.iter().copied(), 1).unwrap();
            let mut fed = Replay::new(&profile, 1);
            for r in &stream {
                fed.push(*r, &mut |_| {}).unwrap();
            }
            assert_eq!(fed.finish(&mut |_| {}).unwrap(), queued, "{name}");
        }
    }

    #[test]
    fn a_tree_fed_a_stretch_at_a_time_costs_what_it_costs_whole() {
        // Three files, their windows cut across stretches of every size:
        // the reader's result is the same however the data comes.
        let profile = find("hdd-7200").unwrap();
        let mut rng = Seeded::new(8);
        let files: Vec<Vec<Span>> = (0..3)
            .map(|_| (0..40).map(|_| Span { physical: rng.block(1 << 40), length: 4096 * (1 + rng.next() % 64) }).collect())
            .collect();
        let whole = read_layout(&profile, &files).unwrap();
        let mut reader = LayoutReader::new(&profile);
        for file in &files {
            for span in file {
                // Each stretch in two pieces: the reads do not change.
                let half = span.length / 8192 * 4096;
                reader.push(Span { physical: span.physical, length: half }).unwrap();
                reader.push(Span { physical: span.physical + half, length: span.length - half }).unwrap();
            }
            reader.end_file().unwrap();
        }
        let bytes: u64 = files.iter().flatten().map(|s| s.length).sum();
        assert_eq!(reader.bytes(), bytes);
        let pieces = reader.finish().unwrap();
        assert_eq!(pieces, whole);
        assert_eq!(pieces.read.read_bytes, bytes);
        assert!(pieces.ratio().unwrap() > 10.0, "{:?}", pieces.ratio());
        assert_eq!(LayoutReader::new(&profile).finish().unwrap(), LayoutCost::default());
    }
}
