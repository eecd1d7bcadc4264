//! What the model says a request stream cost.

use serde::Serialize;

/// The modelled cost of a request stream on one drive: the same stream on
/// the same profile always gives the same figures, to the bit.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Modelled {
    /// Seconds from the first request's issue to the last completion.
    pub seconds: f64,
    /// Requests served (reads, writes and flushes).
    pub requests: u64,
    /// Reads served.
    pub reads: u64,
    /// Writes served.
    pub writes: u64,
    /// Flushes served.
    pub flushes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub written_bytes: u64,
    /// Media accesses that moved the arm to another cylinder (destaging
    /// included).
    pub seeks: u64,
    /// Bytes between where the arm was and where it went, over those seeks.
    pub seek_distance_bytes: u64,
    /// Seconds spent seeking and waiting for the platter to turn (an SSD:
    /// its command latency), summed over requests.
    pub positioning_s: f64,
    /// Seconds the media spent moving data, summed over requests.
    pub transfer_s: f64,
    /// Reads served from the drive's buffer or write cache, no media.
    pub buffer_hits: u64,
    /// Bytes the write cache wrote to the media (at a flush, or to make
    /// room).
    pub destaged_bytes: u64,
    /// Bytes still only in a volatile write cache when the stream ended.
    pub dirty_left_bytes: u64,
}

impl Modelled {
    /// Mean bytes a seek moved the arm; `None` without seeks.
    pub fn mean_seek_distance_bytes(&self) -> Option<f64> {
        (self.seeks > 0).then(|| self.seek_distance_bytes as f64 / self.seeks as f64)
    }

    /// Bytes read and written over the modelled time, MiB/s; `None` when
    /// no time passed.
    pub fn mib_per_s(&self) -> Option<f64> {
        crate::units::mib_per_s((self.read_bytes + self.written_bytes) as f64, self.seconds)
    }
}
