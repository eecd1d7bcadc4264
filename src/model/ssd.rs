//! The SSD: no head, so no positioning; a command waits for a free
//! parallel unit, pays its latency there, then moves its data over the one
//! link at the drive's bandwidth:
//!
//! ```text
//! start = max(now, unit free)
//! done  = max(start + latency, link free) + bytes / bandwidth
//! ```
//!
//! A flush waits for every unit and the link, then costs `flush_s` if
//! anything was written since the last one: tens of µs with power-loss
//! protection (the cache is safe, there is nothing to wait for), the
//! programming of what is cached without it (milliseconds). Without it,
//! what was written since the last flush is volatile ([`Device::dirty_bytes`]).

use super::profile::SsdSpec;
use super::{Device, Modelled, Op, Request};

/// An SSD being modelled.
pub struct Ssd {
    spec: SsdSpec,
    units: Vec<f64>,
    link_free: f64,
    written: bool,
    volatile: u64,
}

impl Ssd {
    /// A fresh, idle SSD.
    pub fn new(spec: &SsdSpec) -> Ssd {
        Ssd { spec: spec.clone(), units: vec![0.0; spec.parallel as usize], link_free: 0.0, written: false, volatile: 0 }
    }

    /// The unit free soonest (the lowest-numbered on a tie).
    fn free_unit(&self) -> usize {
        let mut best = 0;
        for (i, &free) in self.units.iter().enumerate() {
            if free < self.units[best] {
                best = i;
            }
        }
        best
    }
}

impl Device for Ssd {
    fn ready_at(&self) -> f64 {
        self.units[self.free_unit()]
    }

    fn positioning(&self, _now: f64, _request: &Request) -> f64 {
        0.0
    }

    fn serve(&mut self, now: f64, request: &Request, tally: &mut Modelled) -> f64 {
        let (latency, rate) = match request.op {
            Op::Read => (self.spec.read_latency_s, self.spec.read_bytes_per_s),
            Op::Write => (self.spec.write_latency_s, self.spec.write_bytes_per_s),
            Op::Flush => {
                let start = self.units.iter().fold(now.max(self.link_free), |t, &u| t.max(u));
                let done = start + if self.written { self.spec.flush_s } else { 0.0 };
                tally.positioning_s += done - start;
                self.written = false;
                self.volatile = 0;
                self.units.iter_mut().for_each(|u| *u = done);
                self.link_free = done;
                return done;
            }
        };
        let unit = self.free_unit();
        let start = now.max(self.units[unit]);
        let moving = (start + latency).max(self.link_free);
        let transfer = request.length as f64 / rate as f64;
        let done = moving + transfer;
        tally.positioning_s += latency;
        tally.transfer_s += transfer;
        self.units[unit] = done;
        self.link_free = done;
        if request.op == Op::Write {
            self.written = true;
            if !self.spec.power_loss_protection {
                self.volatile += request.length;
            }
        }
        done
    }

    fn park(&mut self, _at: u64) {}

    fn dirty_bytes(&self) -> u64 {
        self.volatile
    }
}
