//! A trace's block requests replayed through the disk model as they are
//! read, and a bounded sample of them kept for the report: the same
//! requests placed at the time they were issued and at the time the model
//! completed them.
//!
//! The design decisions:
//! - Depth 1 ([`QUEUE_DEPTH`]): `block_rq_issue` gives the order requests
//!   were issued in, not how many the device held at once (that would take
//!   `block_rq_complete` too, a second event per request), so the model
//!   serves them one at a time in that order, never reordering: what the
//!   stream costs on the drive without its queue.
//! - The drive starts with its head over the stream's first request with
//!   data, as the layout reader starts over the first byte it reads: a
//!   seek from wherever a fresh model's head happens to be is no cost of
//!   the stream.
//! - Memory is bounded: the replay holds at most two requests
//!   ([`model::Replay`](crate::model::Replay)), the sample
//!   [`KEPT_REQUESTS`] and [`KEPT_FLUSHES`] (see
//!   [`crate::record::requests`]).

use crate::model::{Modelled, Op, Profile, Replay, Request, Served};
use crate::record::requests::{KEPT_FLUSHES, KEPT_REQUESTS, RequestOp, RequestPoint, RequestStream};

/// Requests outstanding in a trace's replay.
pub const QUEUE_DEPTH: u32 = 1;

/// A stream's modelled cost and its sample.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceModel {
    /// What the model says the stream cost, or why it could not replay it
    /// (a request beyond the drive's end).
    pub modelled: Result<Modelled, String>,
    /// The sampled requests.
    pub stream: RequestStream,
}

/// What one issued request asks of the model, by its `rwbs` (the kernel's
/// `blk_fill_rwbs`: `F` first for a flush before the data, then the
/// operation — `R`, `W`, `F` a flush, `D` a discard, `N` none — then `F`
/// for force unit access, and `A`, `S`, `M` the model ignores): a flush
/// before, and the request itself. `None` for the request when the model
/// has no operation for it (a discard).
fn ops(rwbs: &str, offset: u64, length: u64) -> (bool, Option<Request>) {
    let b = rwbs.as_bytes();
    let preflush = b.len() >= 2 && b[0] == b'F' && matches!(b[1], b'R' | b'W' | b'F' | b'D' | b'N');
    let at = usize::from(preflush);
    let fua = b.get(at + 1) == Some(&b'F');
    let request = match b.get(at) {
        Some(b'R') => Some(Request::read(offset, length)),
        Some(b'W') if fua => Some(Request::write(offset, length).with_fua()),
        Some(b'W') => Some(Request::write(offset, length)),
        Some(b'F') => return (true, None),
        _ => None,
    };
    (preflush, request)
}

/// A kept request, with its place in the stream while the sample grows.
#[derive(Debug)]
struct Kept {
    /// Its number among the stream's requests of its kind (with data, or
    /// flushes), from 0.
    index: u64,
    /// Its number among all the stream's requests, from 0.
    order: u64,
    /// Its issue number in the replay; `None` once the replay failed.
    seq: Option<u64>,
    point: RequestPoint,
}

/// Every `every`-th request of one kind, at most `cap` of them: when full,
/// every other one kept goes and the step doubles.
#[derive(Debug)]
struct Sample {
    cap: usize,
    every: u64,
    seen: u64,
    kept: Vec<Kept>,
}

impl Sample {
    fn new(cap: usize) -> Sample {
        Sample { cap, every: 1, seen: 0, kept: Vec::new() }
    }

    /// The next request of its kind: kept when its turn comes.
    fn offer(&mut self, order: u64, seq: Option<u64>, point: RequestPoint) {
        let index = self.seen;
        self.seen += 1;
        if index % self.every != 0 {
            return;
        }
        if self.kept.len() == self.cap {
            self.every *= 2;
            let every = self.every;
            self.kept.retain(|k| k.index % every == 0);
            if index % every != 0 {
                return;
            }
        }
        self.kept.push(Kept { index, order, seq, point });
    }

    /// Put a served request's completion on its point, if it was kept.
    fn place(&mut self, served: &Served) {
        if let Ok(at) = self.kept.binary_search_by_key(&Some(served.seq), |k| k.seq) {
            self.kept[at].point.modelled_s = Some(micro(served.done));
        }
    }
}

/// The replay of one trace's requests, running as they are read.
#[derive(Debug)]
pub struct Modelling {
    /// `None` once it failed (then `error` says why).
    replay: Option<Replay>,
    error: Option<String>,
    disk: String,
    phase: &'static str,
    first_ts: Option<f64>,
    last_ts: f64,
    /// Requests given to the replay, flushes included.
    given: u64,
    not_modelled: u64,
    /// Reads and writes, kept at most [`KEPT_REQUESTS`].
    data: Sample,
    /// Flushes, kept apart (at most [`KEPT_FLUSHES`]): there are few, and
    /// a drive with a write cache spends its time in them.
    flushes: Sample,
}

impl Modelling {
    /// A replay on a fresh drive of `disk`, its stream called `phase`.
    pub fn new(disk: &Profile, phase: &'static str) -> Modelling {
        Modelling {
            replay: Some(Replay::new(disk, QUEUE_DEPTH)),
            error: None,
            disk: disk.name.clone(),
            phase,
            first_ts: None,
            last_ts: 0.0,
            given: 0,
            not_modelled: 0,
            data: Sample::new(KEPT_REQUESTS),
            flushes: Sample::new(KEPT_FLUSHES),
        }
    }

    /// One issued request: `rwbs`, `nr_sector` 512-byte sectors at
    /// `sector`, issued at `ts` seconds on the trace's clock (the last
    /// time seen when the line had none).
    pub fn request(&mut self, rwbs: &str, sector: u64, nr_sector: u64, ts: Option<f64>) {
        let ts = ts.unwrap_or(self.last_ts);
        self.first_ts.get_or_insert(ts);
        self.last_ts = ts;
        let (offset, length) = (sector.saturating_mul(512), nr_sector.saturating_mul(512));
        let (flush, request) = ops(rwbs, offset, length);
        if flush {
            self.give(Request::flush(), ts);
        }
        let Some(request) = request.filter(|r| r.length > 0) else {
            self.not_modelled += u64::from(request.is_none() && !flush);
            return;
        };
        if self.data.seen == 0 {
            if let Some(replay) = self.replay.as_mut() {
                replay.park(offset);
            }
        }
        self.give(request, ts);
    }

    /// Give `request`, issued at `ts`, to the replay, and offer it to its
    /// sample.
    fn give(&mut self, request: Request, ts: f64) {
        let order = self.given;
        self.given += 1;
        let seq = self.push(request);
        let op = match request.op {
            Op::Read => RequestOp::Read,
            Op::Write => RequestOp::Write,
            Op::Flush => RequestOp::Flush,
        };
        let t_s = micro(ts - self.first_ts.unwrap_or(ts));
        let point = RequestPoint { t_s, modelled_s: None, offset: request.offset, length: request.length, op };
        let sample = if op == RequestOp::Flush { &mut self.flushes } else { &mut self.data };
        sample.offer(order, seq, point);
    }

    /// Push `request` into the replay, placing what it serves; its issue
    /// number, or `None` once the replay has failed.
    fn push(&mut self, request: Request) -> Option<u64> {
        let replay = self.replay.as_mut()?;
        let (data, flushes) = (&mut self.data, &mut self.flushes);
        match replay.push(request, &mut |served| place(data, flushes, served)) {
            Ok(seq) => seq,
            Err(e) => {
                self.error = Some(e.message);
                self.replay = None;
                None
            }
        }
    }

    /// Serve what is left: the stream's cost and its sample.
    pub fn finish(mut self) -> TraceModel {
        let (data, flushes) = (&mut self.data, &mut self.flushes);
        let modelled = match (self.replay.take(), self.error.take()) {
            (Some(replay), _) => replay.finish(&mut |served| place(data, flushes, served)).map_err(|e| e.message),
            (None, Some(error)) => Err(error),
            (None, None) => Err("the model was not run".to_string()),
        };
        let mut kept: Vec<Kept> = self.data.kept.into_iter().chain(self.flushes.kept).collect();
        kept.sort_by_key(|k| k.order);
        let stream = RequestStream {
            phase: self.phase.to_string(),
            disk: self.disk,
            queue_depth: QUEUE_DEPTH,
            requests: self.data.seen,
            flushes: self.flushes.seen,
            not_modelled: self.not_modelled,
            every: self.data.every,
            flushes_every: self.flushes.every,
            measured_s: self.first_ts.map_or(0.0, |first| self.last_ts - first),
            modelled_s: modelled.as_ref().ok().map(|m| m.seconds),
            points: kept.into_iter().map(|k| k.point).collect(),
        };
        TraceModel { modelled, stream }
    }
}

/// Put a served request's completion on its kept point, if it was kept.
fn place(data: &mut Sample, flushes: &mut Sample, served: &Served) {
    match served.request.op {
        Op::Flush => flushes.place(served),
        _ => data.place(served),
    }
}

/// `seconds` to the microsecond: the sample is drawn, not summed, and
/// shorter in JSON so.
fn micro(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{builtin, replay};

    #[test]
    fn rwbs_says_flush_before_fua_and_what_the_model_leaves_out() {
        let w = Request::write(4096, 512);
        assert_eq!(ops("W", 4096, 512), (false, Some(w)));
        assert_eq!(ops("WS", 4096, 512), (false, Some(w)));
        assert_eq!(ops("WFS", 4096, 512), (false, Some(w.with_fua())));
        assert_eq!(ops("FWFSM", 4096, 512), (true, Some(w.with_fua())));
        assert_eq!(ops("FWS", 4096, 512), (true, Some(w)));
        assert_eq!(ops("RA", 0, 8), (false, Some(Request::read(0, 8))));
        assert_eq!(ops("RM", 0, 8), (false, Some(Request::read(0, 8))));
        assert_eq!(ops("FF", 0, 0), (true, None));
        assert_eq!(ops("F", 0, 0), (true, None));
        assert_eq!(ops("D", 0, 8), (false, None));
        assert_eq!(ops("DE", 0, 8), (false, None));
        assert_eq!(ops("N", 0, 0), (false, None));
        assert_eq!(ops("", 0, 0), (false, None));
    }

    #[test]
    fn a_stream_costs_what_the_model_says_of_it_whole_and_its_sample_stays_bounded() {
        let disk = builtin::find("hdd-7200").unwrap();
        let mut m = Modelling::new(&disk, "work");
        let mut whole = Vec::new();
        // 3,000 writes of 8 sectors, every third far away, a flush every
        // hundred, a discard once; issued 1 ms apart.
        for k in 0..3000u64 {
            let sector = if k % 3 == 0 { 50_000_000 + k * 8 } else { 1_000 + k * 8 };
            let rwbs = if k % 100 == 99 { "FWS" } else { "W" };
            if rwbs == "FWS" {
                whole.push(Request::flush());
            }
            whole.push(Request::write(sector * 512, 4096));
            m.request(rwbs, sector, 8, Some(100.0 + k as f64 * 1e-3));
        }
        m.request("D", 0, 8, Some(103.5));
        m.request("FF", 0, 0, None);
        whole.push(Request::flush());
        let model = m.finish();
        let mut drive = crate::model::device(&disk);
        drive.park(50_000_000 * 512);
        let expected = crate::model::queue::replay(drive.as_mut(), &disk, whole.iter().copied(), 1).unwrap();
        assert_eq!(model.modelled.as_ref().unwrap(), &expected);
        let s = &model.stream;
        assert_eq!((s.requests, s.flushes, s.not_modelled), (3000, 31, 1));
        assert_eq!((s.phase.as_str(), s.disk.as_str(), s.queue_depth), ("work", "hdd-7200", 1));
        // 3,000 writes kept evenly: every 4th, 750 of them, the first at
        // 0; every flush kept, between the writes it came between (the
        // first after the 25th write kept, the 100th made).
        assert_eq!((s.every, s.flushes_every, s.points.len()), (4, 1, 750 + 31));
        let ops = |op| s.points.iter().filter(|p| p.op == op).count();
        assert_eq!((ops(RequestOp::Write), ops(RequestOp::Flush)), (750, 31));
        assert_eq!((s.points[0].t_s, s.points[1].t_s, s.points[1].offset), (0.0, 0.004, (1_000 + 4 * 8) * 512));
        assert_eq!((s.points[24].op, s.points[25].op, s.points[26].op), (RequestOp::Write, RequestOp::Flush, RequestOp::Write));
        assert_eq!((s.points[25].t_s, s.points[25].length, s.points[26].t_s), (0.099, 0, 0.1));
        assert_eq!(s.measured_s, 103.5 - 100.0);
        // Each at its modelled completion, in order, none past the end.
        let ends: Vec<f64> = s.points.iter().map(|p| p.modelled_s.unwrap()).collect();
        assert!(ends.windows(2).all(|w| w[0] <= w[1]) && *ends.last().unwrap() <= s.modelled_s.unwrap() + 1e-6);
    }

    #[test]
    fn the_first_request_costs_no_seek_from_where_a_fresh_drive_s_head_is() {
        let disk = builtin::find("hdd-7200").unwrap();
        let mut m = Modelling::new(&disk, "cold_read");
        m.request("R", 1 << 30, 256, Some(7.0));
        let parked = m.finish().modelled.unwrap();
        let fresh = replay(&disk, [Request::read(512 << 30, 128 << 10)], 1).unwrap();
        assert_eq!((parked.seeks, fresh.seeks), (0, 1));
        assert!(parked.seconds < fresh.seconds / 5.0, "{} vs {}", parked.seconds, fresh.seconds);
    }

    #[test]
    fn a_request_past_the_drive_stops_the_replay_and_says_why() {
        let disk = builtin::find("laptop-5400").unwrap();
        let mut m = Modelling::new(&disk, "cold_read");
        m.request("R", 0, 8, Some(1.0));
        m.request("R", disk.capacity_bytes() / 512, 8, Some(1.1));
        m.request("R", 8, 8, Some(1.2));
        let model = m.finish();
        assert!(model.modelled.as_ref().unwrap_err().contains("laptop-5400"), "{:?}", model.modelled);
        assert_eq!((model.stream.requests, model.stream.modelled_s), (3, None));
        assert!(model.stream.points[2].modelled_s.is_none());
    }
}
