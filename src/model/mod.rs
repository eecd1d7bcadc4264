//! A deterministic disk model: exact layouts and request streams turned
//! into the seconds they would take on a named drive.
//!
//! fslab counts extents exactly, but its timings come from a virtual disk
//! with no seek cost, shared with other work. This module is the other
//! half: given a drive's [`Profile`] and a stream of [`Request`]s (or a
//! file's extents, [`reader`]), it says how long the drive takes, always
//! the same, on any machine. The rotating disk is modelled in the style of
//! Ruemmler & Wilkes ("An introduction to disk drive modeling", IEEE
//! Computer 27(3), 1994) and DiskSim: a seek curve by distance
//! ([`seek`]), zoned media ([`geometry`]), rotational position from the
//! sector and the time, a segmented track buffer with read-ahead
//! ([`track_buffer`]), a volatile write cache destaged by a flush
//! ([`write_cache`]) and shortest-positioning-time-first queueing
//! ([`queue`]); an SSD is latency, bandwidth, parallel units and a flush
//! cost ([`ssd`]). `docs/DESIGN.md` ("The disk model") writes out the
//! equations and each constant's source.
//!
//! Determinism: no clock, no randomness, no file system; the only input
//! read is a profile file ([`profile_file`]). Times are f64 seconds summed
//! in request order, and the arithmetic on every request is `+ - * /` and
//! `sqrt`, which IEEE 754 rounds exactly, so a result is bit-identical on
//! every machine, in a guest or not.

pub mod builtin;
mod disk;
pub mod geometry;
mod modelled;
pub mod profile;
pub mod profile_file;
pub mod queue;
pub mod reader;
pub mod seek;
mod ssd;
mod track_buffer;
mod write_cache;

#[cfg(test)]
mod calibration_tests;
#[cfg(test)]
mod engine_tests;

pub use modelled::Modelled;
pub use queue::{Replay, Served};
pub use profile::{DiskSpec, Drive, Profile, SsdSpec};
pub use reader::{LayoutCost, LayoutReader, Span, check_span, read_layout};

use crate::error::{Error, Result};

/// What a request asks of the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read `length` bytes at `offset`.
    Read,
    /// Write `length` bytes at `offset`.
    Write,
    /// Make everything written so far durable (ATA FLUSH CACHE, SCSI
    /// SYNCHRONIZE CACHE, a Linux `REQ_PREFLUSH`). It is not queued: the
    /// requests before it finish first, and none after it starts until it
    /// is done, as ATA's non-queued FLUSH CACHE EXT makes the host drain
    /// the queue.
    Flush,
}

/// One block request, in bytes from the start of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Read, write or flush.
    pub op: Op,
    /// First byte (ignored for a flush).
    pub offset: u64,
    /// Bytes (ignored for a flush).
    pub length: u64,
    /// Force unit access: a write that goes to the media before it
    /// completes, whatever the write cache holds (Linux `REQ_FUA`). A
    /// `REQ_PREFLUSH | REQ_FUA` write is a [`Op::Flush`] then this.
    pub fua: bool,
}

impl Request {
    /// A read of `length` bytes at `offset`.
    pub fn read(offset: u64, length: u64) -> Self {
        Request { op: Op::Read, offset, length, fua: false }
    }

    /// A write of `length` bytes at `offset`.
    pub fn write(offset: u64, length: u64) -> Self {
        Request { op: Op::Write, offset, length, fua: false }
    }

    /// A cache flush.
    pub fn flush() -> Self {
        Request { op: Op::Flush, offset: 0, length: 0, fua: false }
    }

    /// The same request with force unit access.
    pub fn with_fua(self) -> Self {
        Request { fua: true, ..self }
    }

    /// One past the last byte.
    fn end(&self) -> u64 {
        self.offset.saturating_add(self.length)
    }
}

/// A drive being modelled: its state, and how it serves one request at a
/// time. The queue ([`queue::replay`]) decides which request it serves next
/// and when; the drive says what each costs. A drive is plain data, so a
/// replay can run on another thread than the one that made it.
pub trait Device: Send {
    /// The earliest time it can start another request.
    fn ready_at(&self) -> f64;
    /// How long from `now` until `request` would start moving data (0 for
    /// one served from a cache): the key shortest-positioning-time-first
    /// queueing picks by.
    fn positioning(&self, now: f64, request: &Request) -> f64;
    /// Serve `request`, starting at `now` (at or after [`Self::ready_at`]):
    /// its completion time. What it costs is added to `tally`.
    fn serve(&mut self, now: f64, request: &Request, tally: &mut Modelled) -> f64;
    /// Rest the head over byte `at` at time 0, the platter turned so that
    /// `at` is under it (as if a read had just ended there).
    fn park(&mut self, at: u64);
    /// Bytes written into a volatile cache and not yet on the media.
    fn dirty_bytes(&self) -> u64;
}

/// A fresh drive for `profile`: head at byte 0, caches empty.
pub fn device(profile: &Profile) -> Box<dyn Device + Send> {
    match &profile.drive {
        Drive::Disk(spec) => Box::new(disk::Disk::new(spec)),
        Drive::Ssd(spec) => Box::new(ssd::Ssd::new(spec)),
    }
}

/// Replay `requests` in issue order on a fresh drive of `profile`, at most
/// `queue_depth` outstanding (and at most the drive's own queue depth): the
/// modelled result. A request past the drive's end is bad input (exit 2),
/// naming the profile; a read or write of no bytes is skipped.
pub fn replay(profile: &Profile, requests: impl IntoIterator<Item = Request>, queue_depth: u32) -> Result<Modelled> {
    let mut drive = device(profile);
    let depth = queue_depth.clamp(1, profile.queue_depth());
    queue::replay(drive.as_mut(), profile, requests, depth)
}

/// Refuse a request that reaches past the profile's capacity.
fn check_within(profile: &Profile, request: &Request) -> Result<()> {
    let capacity = profile.capacity_bytes();
    if request.op != Op::Flush && (request.end() > capacity || request.offset.checked_add(request.length).is_none()) {
        return Err(Error::usage(format!(
            "a {} of {} bytes at byte {} lies beyond the {} profile's {} bytes; choose a profile whose disk holds it",
            if request.op == Op::Read { "read" } else { "write" },
            request.length,
            request.offset,
            profile.name,
            capacity
        )));
    }
    Ok(())
}
