//! A bounded sample of the block requests one phase of a case issued to
//! its device, each placed at the time it was issued and at the time the
//! disk model completed it: what the report draws as seekwatcher does
//! (request offset against time, measured and modelled).
//!
//! The sample is every [`RequestStream::every`]-th request with data, in
//! issue order, at most [`KEPT_REQUESTS`]: when the sample is full, every
//! other request kept goes and the step doubles, so however long the
//! stream the sample spans it whole, evenly, and is the same for the same
//! stream. Flushes are sampled so apart, at most [`KEPT_FLUSHES`]: there
//! are few, and a drive with a write cache spends its time in them.

use serde::{Deserialize, Serialize};

/// Requests with data a stream keeps at most.
pub const KEPT_REQUESTS: usize = 1024;

/// Flushes a stream keeps at most.
pub const KEPT_FLUSHES: usize = 256;

/// The requests of one phase of a case, sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestStream {
    /// `work` (the work and the syncfs after it) or `cold_read` (the
    /// read-back with a cold cache).
    pub phase: String,
    /// The drive the model replayed the stream on (`--disk`).
    pub disk: String,
    /// Requests outstanding in the replay (1: one at a time, in issue
    /// order).
    pub queue_depth: u32,
    /// Requests with data the stream had (reads and writes).
    pub requests: u64,
    /// Flushes, and writes with a flush before them.
    pub flushes: u64,
    /// Requests the model has no operation for (discards), left out.
    pub not_modelled: u64,
    /// Every how many requests with data one was kept: 1, 2, 4, ...
    pub every: u64,
    /// Every how many flushes one was kept.
    #[serde(default = "one")]
    pub flushes_every: u64,
    /// Seconds from the first request's issue to the last's.
    pub measured_s: f64,
    /// The model's seconds for the whole stream, when it could replay it.
    pub modelled_s: Option<f64>,
    /// The kept requests, in issue order.
    pub points: Vec<RequestPoint>,
}

fn one() -> u64 {
    1
}

/// What a kept request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestOp {
    /// A read (`R`).
    Read,
    /// A write (`W`).
    Write,
    /// A flush of the drive's write cache (`F`; no offset or length).
    Flush,
}

/// One kept request: `[t_s, modelled_s, offset, length, "R"|"W"|"F"]` in
/// JSON.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "(f64, Option<f64>, u64, u64, char)", into = "(f64, Option<f64>, u64, u64, char)")]
pub struct RequestPoint {
    /// Seconds from the stream's first issue to this one's, measured.
    pub t_s: f64,
    /// Seconds from the first issue to its completion in the model; `None`
    /// when the model could not replay it.
    pub modelled_s: Option<f64>,
    /// Its first byte on the device (0 for a flush).
    pub offset: u64,
    /// Its bytes (0 for a flush).
    pub length: u64,
    /// Read, write or flush.
    pub op: RequestOp,
}

impl From<(f64, Option<f64>, u64, u64, char)> for RequestPoint {
    fn from((t_s, modelled_s, offset, length, op): (f64, Option<f64>, u64, u64, char)) -> Self {
        let op = match op {
            'W' => RequestOp::Write,
            'F' => RequestOp::Flush,
            _ => RequestOp::Read,
        };
        RequestPoint { t_s, modelled_s, offset, length, op }
    }
}

impl From<RequestPoint> for (f64, Option<f64>, u64, u64, char) {
    fn from(p: RequestPoint) -> Self {
        let op = match p.op {
            RequestOp::Read => 'R',
            RequestOp::Write => 'W',
            RequestOp::Flush => 'F',
        };
        (p.t_s, p.modelled_s, p.offset, p.length, op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_a_short_array() {
        let p = RequestPoint { t_s: 0.5, modelled_s: Some(1.25), offset: 4096, length: 8192, op: RequestOp::Write };
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(text, r#"[0.5,1.25,4096,8192,"W"]"#);
        assert_eq!(serde_json::from_str::<RequestPoint>(&text).unwrap(), p);
        let read: RequestPoint = serde_json::from_str(r#"[0.0,null,0,512,"R"]"#).unwrap();
        assert_eq!((read.op, read.modelled_s), (RequestOp::Read, None));
        let flush = RequestPoint { t_s: 1.0, modelled_s: Some(2.0), offset: 0, length: 0, op: RequestOp::Flush };
        assert_eq!(serde_json::to_string(&flush).unwrap(), r#"[1.0,2.0,0,0,"F"]"#);
    }
}
