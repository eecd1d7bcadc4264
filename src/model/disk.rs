//! The rotating disk: where the head is, what the buffer holds, and what
//! serving a request costs.
//!
//! A media access from byte `arm` at time `now` to `start..end` costs
//!
//! ```text
//! seek     = t(|cyl(start) − cyl(arm)|)                       (seek.rs)
//! wait     = P · frac((u(start) − u₀) − (now + seek − t₀) / P)  (the platter turns)
//! transfer = P · (u(end) − u(start))                           (geometry.rs)
//! ```
//!
//! where (u₀, t₀) says which sector was under the head when: the end of
//! the last media access, since the platter turns at a constant rate. A
//! request that starts where the last one ended, the moment it ended,
//! has seek 0 and wait 0: no positioning cost.
//!
//! After a read the drive reads ahead into the read's buffer segment, up to
//! a segment's worth past the read, until another command needs the head.
//! A later read the segment holds is served at once; one the read-ahead is
//! still reaching completes when the media passes its end, unless moving
//! the head there afresh would be sooner. With the write cache on, a write
//! completes once in the cache; when the cache is full, or at a flush, the
//! drive destages it (writes it to the media) in elevator order.

use super::geometry::Geometry;
use super::profile::DiskSpec;
use super::seek::SeekCurve;
use super::track_buffer::TrackBuffer;
use super::write_cache::WriteCache;
use super::{Device, Modelled, Op, Request};

/// Revolutions closer than this to a whole number are that number: a
/// sector reached within a nanosecond or so of a turn is under the head,
/// so rounding never turns "just there" into "a whole turn later".
const SAME_PLACE: f64 = 1e-9;

/// Seconds closer than this are the same time (a read-ahead that reaches a
/// request as soon as moving the head would is taken).
const SAME_TIME: f64 = 1e-12;

/// The part of a turn the platter must still make to bring a sector
/// `phase` revolutions ahead under the head: frac(phase), 0 when `phase`
/// is a whole number within [`SAME_PLACE`].
fn turn_to(phase: f64) -> f64 {
    let nearest = phase.round();
    if (phase - nearest).abs() < SAME_PLACE { 0.0 } else { phase - phase.floor() }
}

/// Reading ahead into segment `segment`: the head read `from` at the
/// disk's phase time and reads on up to `limit`.
#[derive(Debug, Clone, Copy)]
struct ReadAhead {
    segment: usize,
    from: u64,
    limit: u64,
}

/// One media access, priced.
#[derive(Debug, Clone, Copy)]
struct Access {
    seek: f64,
    wait: f64,
    transfer: f64,
    distance: u64,
    moved: bool,
}

impl Access {
    fn seconds(&self) -> f64 {
        self.seek + self.wait + self.transfer
    }
}

/// How a request will be served.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// From the buffer (the segment) or the write cache (none): at once.
    Hit(Option<usize>),
    /// By the read-ahead: its first byte passes the head at `first`, its
    /// last at `done`.
    Stream { first: f64, done: f64 },
    /// Through the media.
    Media(Access),
    /// Into the write cache.
    Cache,
    /// Destage everything dirty.
    Flush,
}

/// A rotating disk being modelled.
pub struct Disk {
    geometry: Geometry,
    seek: SeekCurve,
    revolution: f64,
    phase_track: f64,
    phase_time: f64,
    arm: u64,
    busy_until: f64,
    buffer: TrackBuffer,
    ahead: Option<ReadAhead>,
    cache: Option<WriteCache>,
}

impl Disk {
    /// A fresh disk of checked figures ([`DiskSpec::check`]): head over
    /// byte 0 at time 0, buffer and cache empty.
    pub fn new(spec: &DiskSpec) -> Disk {
        let geometry = Geometry::new(spec);
        let seek = SeekCurve::fit(spec.track_to_track_s, spec.average_seek_s, spec.full_stroke_s, geometry.cylinders())
            .expect("a checked profile fits its seek curve");
        let segment_bytes = spec.buffer_bytes / u64::from(spec.segments);
        Disk {
            revolution: geometry.revolution(),
            geometry,
            seek,
            phase_track: 0.0,
            phase_time: 0.0,
            arm: 0,
            busy_until: 0.0,
            buffer: TrackBuffer::new(spec.segments, segment_bytes),
            ahead: None,
            cache: spec.write_cache.then(|| WriteCache::new(spec.buffer_bytes)),
        }
    }

    /// How far the read-ahead has read by `now` (sector-aligned, at most
    /// its limit).
    fn streamed(&self, ahead: &ReadAhead, now: f64) -> u64 {
        let turned = (now - self.phase_time).max(0.0) / self.revolution;
        let bytes = self.geometry.bytes_before(self.phase_track + turned) - self.geometry.bytes_before(self.phase_track);
        let sectors = (bytes.max(0.0) / 512.0) as u64;
        ahead.from.saturating_add(sectors * 512).min(ahead.limit)
    }

    /// The byte the arm is over at `now`.
    fn arm_at(&self, now: f64) -> u64 {
        self.ahead.as_ref().map_or(self.arm, |a| self.streamed(a, now))
    }

    /// When the media passes byte `p`, on the current phase.
    fn passes(&self, p: u64) -> f64 {
        self.phase_time + (self.geometry.track(p) - self.phase_track) * self.revolution
    }

    /// Price a media access to `start..end` beginning at `now`.
    fn access(&self, now: f64, start: u64, end: u64) -> Access {
        let arm = self.arm_at(now);
        let cylinders = self.geometry.cylinder(start).abs_diff(self.geometry.cylinder(arm));
        let seek = self.seek.time(cylinders);
        let at = self.geometry.track(start);
        let phase = (at - self.phase_track) - (now + seek - self.phase_time) / self.revolution;
        let wait = turn_to(phase) * self.revolution;
        let transfer = (self.geometry.track(end) - at) * self.revolution;
        Access { seek, wait, transfer, distance: start.abs_diff(arm), moved: cylinders > 0 }
    }

    /// How `request` would be served if started at `now`.
    fn plan(&self, now: f64, request: &Request) -> Plan {
        let (start, end) = (request.offset, request.end());
        match request.op {
            Op::Flush => Plan::Flush,
            Op::Write => match &self.cache {
                Some(cache) if !request.fua && request.length <= cache.capacity() => Plan::Cache,
                _ => Plan::Media(self.access(now, start, end)),
            },
            Op::Read => {
                let streaming = self.ahead.as_ref().map(|a| (a.segment, self.streamed(a, now)));
                if let Some(i) = self.buffer.holding(start, end, streaming) {
                    return Plan::Hit(Some(i));
                }
                if self.cache.as_ref().is_some_and(|c| c.holds(start, end)) {
                    return Plan::Hit(None);
                }
                let media = self.access(now, start, end);
                if let (Some(ahead), Some((_, streamed))) = (&self.ahead, streaming) {
                    let held_from = self.buffer.segment(ahead.segment).start.max(streamed.saturating_sub(self.buffer.segment_bytes()));
                    let reaches = start >= held_from && start <= ahead.limit && (end <= ahead.limit || streamed < ahead.limit);
                    let done = self.passes(end).max(now);
                    if reaches && done <= now + media.seconds() + SAME_TIME {
                        let first = self.passes(start);
                        return Plan::Stream { first: if first - now < SAME_TIME { now } else { first }, done };
                    }
                }
                Plan::Media(media)
            }
        }
    }

    /// Stop reading ahead at `now`: the segment keeps what was read, the
    /// arm stays where the read-ahead got to.
    fn settle(&mut self, now: f64) {
        if let Some(ahead) = self.ahead.take() {
            let streamed = self.streamed(&ahead, now);
            self.buffer.extend(ahead.segment, streamed);
            self.arm = streamed;
        }
    }

    /// Do the media access `access`, ending at byte `end`, from `now`: the
    /// time it ends.
    fn media(&mut self, now: f64, end: u64, access: Access, tally: &mut Modelled) -> f64 {
        tally.positioning_s += access.seek + access.wait;
        tally.transfer_s += access.transfer;
        if access.moved {
            tally.seeks += 1;
            tally.seek_distance_bytes += access.distance;
        }
        let done = now + access.seconds();
        self.phase_track = self.geometry.track(end);
        self.phase_time = done;
        self.arm = end;
        done
    }

    /// Destage the next dirty range from `now`: its end.
    fn destage_one(&mut self, now: f64, tally: &mut Modelled) -> Option<f64> {
        let (start, end) = self.cache.as_mut()?.next_from(self.arm)?;
        let access = self.access(now, start, end);
        tally.destaged_bytes += end - start;
        Some(self.media(now, end, access, tally))
    }

    /// A segment's worth past `end`, within the disk.
    fn ahead_limit(&self, end: u64) -> u64 {
        end.saturating_add(self.buffer.segment_bytes()).min(self.geometry.capacity())
    }
}

impl Device for Disk {
    fn ready_at(&self) -> f64 {
        self.busy_until
    }

    fn positioning(&self, now: f64, request: &Request) -> f64 {
        match self.plan(now, request) {
            Plan::Hit(_) | Plan::Cache | Plan::Flush => 0.0,
            Plan::Stream { first, .. } => first - now,
            Plan::Media(access) => access.seek + access.wait,
        }
    }

    fn serve(&mut self, now: f64, request: &Request, tally: &mut Modelled) -> f64 {
        let (start, end) = (request.offset, request.end());
        let done = match self.plan(now, request) {
            Plan::Hit(segment) => {
                tally.buffer_hits += 1;
                if let Some(i) = segment {
                    self.buffer.touch(i);
                    let limit = self.ahead_limit(end);
                    if let Some(ahead) = self.ahead.as_mut().filter(|a| a.segment == i) {
                        ahead.limit = ahead.limit.max(limit);
                    }
                }
                now
            }
            Plan::Stream { first, done } => {
                tally.positioning_s += first - now;
                tally.transfer_s += done - first;
                let limit = self.ahead_limit(end);
                let ahead = self.ahead.as_mut().expect("streaming reads ahead");
                ahead.limit = ahead.limit.max(limit);
                self.buffer.touch(ahead.segment);
                done
            }
            Plan::Media(access) => {
                self.settle(now);
                if request.op == Op::Write {
                    self.buffer.forget(start, end);
                }
                let done = self.media(now, end, access, tally);
                if request.op == Op::Read {
                    let segment = self.buffer.insert(start, end);
                    self.ahead = Some(ReadAhead { segment, from: end, limit: self.ahead_limit(end) });
                } else if let Some(cache) = &mut self.cache {
                    cache.remove(start, end);
                }
                done
            }
            Plan::Cache => {
                self.settle(now);
                self.buffer.forget(start, end);
                let mut t = now;
                while self.cache.as_ref().is_some_and(|c| c.bytes() + request.length > c.capacity()) {
                    t = self.destage_one(t, tally).expect("a full cache holds a range");
                }
                self.cache.as_mut().expect("a cached write has a cache").insert(start, end);
                t
            }
            Plan::Flush => {
                self.settle(now);
                let mut t = now;
                while let Some(done) = self.destage_one(t, tally) {
                    t = done;
                }
                t
            }
        };
        self.busy_until = done;
        done
    }

    fn park(&mut self, at: u64) {
        self.arm = at;
        self.phase_track = self.geometry.track(at);
        self.phase_time = 0.0;
        self.ahead = None;
    }

    fn dirty_bytes(&self) -> u64 {
        self.cache.as_ref().map_or(0, WriteCache::bytes)
    }
}
