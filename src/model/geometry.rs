//! Where a byte lies on the platters, and how fast the media moves there.
//!
//! Recording density along a track is about constant, so a track holds
//! bytes in proportion to its radius, and the radius falls linearly with
//! the track number from the outer edge (LBA 0) inwards. The model takes
//! that continuously: track u (0 at the outer edge, U at the inner) holds
//!
//! ```text
//! T(u) = T_o − k u         bytes,  T_o = R_o P,  T_i = R_i P,  P = 60 / rpm
//! B(u) = T_o u − k u²/2    bytes before track u,  k = (T_o − T_i) / U
//! U    = 2 C / (T_o + T_i)  tracks in all (B(U) = C, the capacity)
//! u(p) = 2 p / (T_o + √(T_o² − 2 k p))   the track coordinate of byte p
//! ```
//!
//! where R_o and R_i are the sustained media rates at the outer and inner
//! diameter. The fraction of u is the byte's angle on the platter; reading
//! from p to q takes (u(q) − u(p)) revolutions, so the media rate at p is
//! T(u(p)) / P. Cylinders are `heads` tracks. Real drives step their rate
//! in a few dozen zones (Hitachi's Deskstar 7K500: 30, 64.8 MB/s in zone 0
//! to 31.0 in zone 29); the straight line is the steps smoothed.

use super::profile::DiskSpec;

/// A disk's zoned geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    capacity: u64,
    revolution: f64,
    outer_track: f64,
    shrink: f64,
    heads: f64,
    cylinders: u64,
}

impl Geometry {
    /// The geometry of a disk's figures.
    pub fn new(spec: &DiskSpec) -> Geometry {
        let revolution = 60.0 / f64::from(spec.rpm);
        let outer_track = spec.outer_bytes_per_s as f64 * revolution;
        let inner_track = spec.inner_bytes_per_s as f64 * revolution;
        let capacity = spec.capacity_bytes as f64;
        let tracks = 2.0 * capacity / (outer_track + inner_track);
        let heads = f64::from(spec.heads);
        let cylinders = ((tracks / heads).ceil() as u64).max(2);
        Geometry {
            capacity: spec.capacity_bytes,
            revolution,
            outer_track,
            shrink: (outer_track - inner_track) / tracks,
            heads,
            cylinders,
        }
    }

    /// Seconds a revolution takes.
    pub fn revolution(&self) -> f64 {
        self.revolution
    }

    /// Cylinders in all.
    pub fn cylinders(&self) -> u64 {
        self.cylinders
    }

    /// Bytes the disk holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The track coordinate of byte `p`: whole tracks from the outer edge,
    /// and the fraction of a revolution past the track's start.
    pub fn track(&self, p: u64) -> f64 {
        let p = p as f64;
        let root = (self.outer_track * self.outer_track - 2.0 * self.shrink * p).max(0.0).sqrt();
        2.0 * p / (self.outer_track + root)
    }

    /// Bytes before track coordinate `u` (the inverse of [`Self::track`]).
    pub fn bytes_before(&self, u: f64) -> f64 {
        self.outer_track * u - self.shrink * u * u / 2.0
    }

    /// The cylinder byte `p` lies on.
    pub fn cylinder(&self, p: u64) -> u64 {
        ((self.track(p) / self.heads) as u64).min(self.cylinders - 1)
    }

    /// The sustained media rate at byte `p`, bytes a second.
    pub fn rate_at(&self, p: u64) -> f64 {
        (self.outer_track - self.shrink * self.track(p)) / self.revolution
    }

    /// Seconds the media takes to pass from byte `from` to byte `to`.
    pub fn transfer(&self, from: u64, to: u64) -> f64 {
        (self.track(to) - self.track(from)) * self.revolution
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::builtin;

    fn spec() -> DiskSpec {
        match builtin::find("hdd-7200-2009").unwrap().drive {
            crate::model::Drive::Disk(d) => d,
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_rate_runs_from_the_outer_to_the_inner_figure() {
        let s = spec();
        let g = Geometry::new(&s);
        assert!((g.rate_at(0) - s.outer_bytes_per_s as f64).abs() < 1e-3);
        assert!((g.rate_at(s.capacity_bytes) - s.inner_bytes_per_s as f64).abs() / (s.inner_bytes_per_s as f64) < 1e-9);
        assert!(g.rate_at(s.capacity_bytes / 2) < g.rate_at(s.capacity_bytes / 4));
    }

    #[test]
    fn track_and_bytes_before_are_inverses_and_reading_takes_revolutions() {
        let s = spec();
        let g = Geometry::new(&s);
        for p in [0, 4096, 1 << 30, s.capacity_bytes / 3, s.capacity_bytes] {
            let back = g.bytes_before(g.track(p));
            assert!((back - p as f64).abs() < 1e-3 * (1.0 + p as f64 / 1e9), "{p} -> {back}");
        }
        // One outer track's bytes take one revolution.
        let outer_track = (s.outer_bytes_per_s as f64 * 60.0 / f64::from(s.rpm)) as u64;
        assert!((g.transfer(0, outer_track) - g.revolution()).abs() < 1e-6);
        assert_eq!(g.cylinder(0), 0);
        assert_eq!(g.cylinder(s.capacity_bytes), g.cylinders() - 1);
    }
}
