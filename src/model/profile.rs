//! A drive's profile: what the model needs to know of one disk or SSD,
//! as data, in base units (bytes, seconds, bytes a second), with where
//! each figure came from. Built-in ones are in [`super::builtin`]; a
//! profile file adds one ([`super::profile_file`]).

use serde::{Deserialize, Serialize};

use super::geometry::Geometry;
use super::seek::SeekCurve;

/// One named drive the model can stand in for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// Short name, lowercase letters, digits and `-`/`.` (`desktop-2009`).
    pub name: String,
    /// One line: what drive this is.
    pub about: String,
    /// Where its figures come from: datasheets by name, and what was
    /// assumed where they say nothing.
    pub source: String,
    /// The drive's figures: `"disk": {...}` or `"ssd": {...}` beside the
    /// fields above in JSON, as a profile file gives them.
    #[serde(flatten)]
    pub drive: Drive,
}

/// A rotating disk or an SSD.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Drive {
    /// A rotating disk.
    Disk(DiskSpec),
    /// A solid-state drive.
    Ssd(SsdSpec),
}

/// A rotating disk's datasheet figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// Bytes the drive holds.
    pub capacity_bytes: u64,
    /// Spindle speed, revolutions a minute.
    pub rpm: u32,
    /// Recording surfaces (heads): tracks a cylinder.
    pub heads: u32,
    /// Single-track (track-to-track) read seek, seconds.
    pub track_to_track_s: f64,
    /// Average read seek, seconds: the datasheet's weighted average of all
    /// seek lengths.
    pub average_seek_s: f64,
    /// Full-stroke seek, seconds.
    pub full_stroke_s: f64,
    /// Sustained media rate at the outer diameter (LBA 0), bytes a second.
    pub outer_bytes_per_s: u64,
    /// Sustained media rate at the inner diameter (the last LBA).
    pub inner_bytes_per_s: u64,
    /// The drive's buffer (cache) memory, bytes.
    pub buffer_bytes: u64,
    /// Read segments the buffer is cut into: each holds one stretch read
    /// or read ahead.
    pub segments: u32,
    /// Whether the volatile write cache is on (writes complete when in the
    /// buffer; a flush destages them).
    pub write_cache: bool,
    /// Commands the drive queues and reorders (NCQ 32, SCSI TCQ more).
    pub queue_depth: u32,
}

/// An SSD's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdSpec {
    /// Bytes the drive holds.
    pub capacity_bytes: u64,
    /// Latency of a read command before its data moves, seconds.
    pub read_latency_s: f64,
    /// Latency of a write command before its data moves, seconds.
    pub write_latency_s: f64,
    /// Sustained read bandwidth, bytes a second.
    pub read_bytes_per_s: u64,
    /// Sustained write bandwidth, bytes a second.
    pub write_bytes_per_s: u64,
    /// Commands whose latencies overlap (flash channels and dies busy at
    /// once); data transfers take turns on one link.
    pub parallel: u32,
    /// What a flush costs after writes, seconds: a command round trip with
    /// power-loss protection, the programming of what is cached without.
    pub flush_s: f64,
    /// Whether the write cache survives a power loss (capacitors), so a
    /// flush has nothing to wait for.
    pub power_loss_protection: bool,
    /// Commands the drive queues.
    pub queue_depth: u32,
}

impl Profile {
    /// Bytes the drive holds.
    pub fn capacity_bytes(&self) -> u64 {
        match &self.drive {
            Drive::Disk(d) => d.capacity_bytes,
            Drive::Ssd(s) => s.capacity_bytes,
        }
    }

    /// Commands the drive queues.
    pub fn queue_depth(&self) -> u32 {
        match &self.drive {
            Drive::Disk(d) => d.queue_depth,
            Drive::Ssd(s) => s.queue_depth,
        }
    }

    /// Check every figure, naming the field at fault:
    /// `disk.average_seek_s = 0.02: ...`.
    pub fn check(&self) -> Result<(), String> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 40
            && self.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
        if !name_ok {
            return Err(format!(
                "name = {:?}: 1 to 40 lowercase letters, digits, `-` and `.`",
                crate::text::escape(&self.name)
            ));
        }
        for (field, text) in [("about", &self.about), ("source", &self.source)] {
            if text.trim().is_empty() {
                return Err(format!("{field} is empty: say what drive this is and where its figures come from"));
            }
        }
        match &self.drive {
            Drive::Disk(d) => d.check(),
            Drive::Ssd(s) => s.check(),
        }
    }
}

/// `field` must be a finite number in `lo..=hi`.
fn within(field: &str, value: f64, lo: f64, hi: f64, unit: &str) -> Result<(), String> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(format!("{field} = {value}: give {lo} to {hi} {unit}"))
    }
}

/// `field` must be a whole number in `lo..=hi`.
fn count(field: &str, value: u64, lo: u64, hi: u64) -> Result<(), String> {
    if (lo..=hi).contains(&value) { Ok(()) } else { Err(format!("{field} = {value}: give {lo} to {hi}")) }
}

/// The largest capacity a profile may state: 1 PiB (offsets stay exact in
/// an f64 far beyond).
const MAX_CAPACITY: u64 = 1 << 50;

/// The fastest rate a profile may state, bytes a second (100 GB/s).
const MAX_RATE: f64 = 1e11;

impl DiskSpec {
    /// Check every figure, and that a seek curve fits them.
    pub fn check(&self) -> Result<(), String> {
        count("disk.capacity_bytes", self.capacity_bytes, 1 << 20, MAX_CAPACITY)?;
        count("disk.rpm", u64::from(self.rpm), 3600, 20_000)?;
        count("disk.heads", u64::from(self.heads), 1, 64)?;
        within("disk.track_to_track_s", self.track_to_track_s, 1e-5, 0.1, "seconds")?;
        within("disk.average_seek_s", self.average_seek_s, 1e-5, 0.1, "seconds")?;
        within("disk.full_stroke_s", self.full_stroke_s, 1e-5, 0.2, "seconds")?;
        if self.average_seek_s <= self.track_to_track_s {
            return Err(format!(
                "disk.average_seek_s = {}: must exceed track_to_track_s ({})",
                self.average_seek_s, self.track_to_track_s
            ));
        }
        within("disk.outer_bytes_per_s", self.outer_bytes_per_s as f64, 1e5, MAX_RATE, "bytes a second")?;
        within("disk.inner_bytes_per_s", self.inner_bytes_per_s as f64, 1e5, self.outer_bytes_per_s as f64, "bytes a second (at most the outer rate)")?;
        count("disk.segments", u64::from(self.segments), 1, 256)?;
        count("disk.buffer_bytes", self.buffer_bytes, u64::from(self.segments) * 65_536, 1 << 34)
            .map_err(|e| format!("{e} (at least 64 KiB a segment)"))?;
        count("disk.queue_depth", u64::from(self.queue_depth), 1, 256)?;
        let geometry = Geometry::new(self);
        SeekCurve::fit(self.track_to_track_s, self.average_seek_s, self.full_stroke_s, geometry.cylinders())
            .map(|_| ())
            .map_err(|e| format!("disk.full_stroke_s = {}: {e}", self.full_stroke_s))
    }
}

impl SsdSpec {
    /// Check every figure.
    pub fn check(&self) -> Result<(), String> {
        count("ssd.capacity_bytes", self.capacity_bytes, 1 << 20, MAX_CAPACITY)?;
        within("ssd.read_latency_s", self.read_latency_s, 0.0, 0.1, "seconds")?;
        within("ssd.write_latency_s", self.write_latency_s, 0.0, 0.1, "seconds")?;
        within("ssd.read_bytes_per_s", self.read_bytes_per_s as f64, 1e5, MAX_RATE, "bytes a second")?;
        within("ssd.write_bytes_per_s", self.write_bytes_per_s as f64, 1e5, MAX_RATE, "bytes a second")?;
        count("ssd.parallel", u64::from(self.parallel), 1, 1024)?;
        within("ssd.flush_s", self.flush_s, 0.0, 1.0, "seconds")?;
        count("ssd.queue_depth", u64::from(self.queue_depth), 1, 65_536)
    }
}
