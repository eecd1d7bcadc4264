//! Probes: what every scenario is measured with — CPU time, block-layer
//! counters, tracepoints, a timeline sampler, and a cold cache before a
//! read-back.
//!
//! Each probe returns typed counts of its own (a `BlockStat`, a
//! `TraceCounts`, ...) and has an `add_figures` that turns them into named
//! [`Figures`](crate::record::Figures) with units. The one rule they all
//! keep: a figure that could not be measured (not root, no tracefs, no
//! block device, events lost) is put in as missing with the reason, never
//! as 0.

pub mod blockstat;
pub mod cold;
pub mod cpu;
pub mod timeline;
pub mod trace;

#[cfg(test)]
mod testutil;

pub use blockstat::{BlockDevice, BlockStat};
pub use cold::{ColdMethod, ReadBack};
pub use cpu::{CpuClock, CpuSpan};
pub use timeline::{Sampler, TimelinePoint};
pub use trace::{TraceCounts, TraceRequest, TraceSession};
