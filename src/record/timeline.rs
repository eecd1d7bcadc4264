//! One point of a case's timeline: what the sampler saw in one interval.

use serde::{Deserialize, Serialize};

/// One interval of the timeline, stamped at its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds from the sampler's start to the end of this interval.
    pub t_s: f64,
    /// Bytes read from the device per second; `None` without a device.
    pub read_bytes_per_s: Option<f64>,
    /// Bytes written to the device per second; `None` without a device.
    pub write_bytes_per_s: Option<f64>,
    /// User time (user + nice), percent of all CPUs' time.
    pub user_pct: f64,
    /// System time (system + irq + softirq), percent.
    pub system_pct: f64,
    /// Idle with I/O outstanding, percent.
    pub iowait_pct: f64,
    /// Idle, percent.
    pub idle_pct: f64,
    /// Dirty page cache at the end of the interval.
    pub dirty_bytes: u64,
    /// Page cache under writeback at the end of the interval.
    pub writeback_bytes: u64,
}

