//! One point of a case's timeline: what the sampler saw in one interval.
//!
//! The CPU split and the dirty and writeback totals are the whole
//! machine's; the `work_*` fields, added later (absent in older records,
//! and where they cannot be measured), are the work's own: its thread's
//! and its processes' CPU, and its memory cgroup's page cache.

use serde::{Deserialize, Serialize};

/// One interval of the timeline, stamped at its end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// The work's own user time (its thread, the processes it waited for
    /// and those still running), percent of one CPU: above 100 when its
    /// processes use several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_user_pct: Option<f64>,
    /// The work's own system time, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_system_pct: Option<f64>,
    /// Dirty page cache of the work's memory cgroup (`--memory`) at the
    /// end of the interval; `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dirty_bytes: Option<u64>,
    /// Its page cache under writeback, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_writeback_bytes: Option<u64>,
}

