//! Replaying a request stream: a closed loop of `depth` outstanding
//! requests. The first `depth` requests are issued at time 0 and each
//! completion issues the next, with no time between (the host's own time
//! is not the drive's). When the drive is free it starts, of the requests
//! issued by then, the one it can start moving data for soonest
//! (shortest positioning time first, as NCQ and SCSI drives reorder; the
//! earlier issued on a tie), so at depth 1 requests go in issue order. A
//! flush is issued only once every earlier request has completed, and
//! nothing after it until it has.

use super::{Device, Modelled, Op, Profile, Request, check_within};
use crate::error::Result;

/// An issued request waiting for the drive, with its issue number.
struct Waiting {
    seq: u64,
    request: Request,
}

/// The requests issued and not yet completed.
struct Outstanding<'a, I: Iterator<Item = Request>> {
    trace: std::iter::Peekable<I>,
    profile: &'a Profile,
    depth: usize,
    waiting: Vec<Waiting>,
    running: Vec<f64>,
    flushing: bool,
    issued: u64,
}

impl<I: Iterator<Item = Request>> Outstanding<'_, I> {
    /// Issue requests while there is room: none past a flush until it is
    /// done, and a flush only alone.
    fn issue(&mut self) -> Result<()> {
        while !self.flushing && self.waiting.len() + self.running.len() < self.depth {
            let Some(next) = self.trace.peek() else { return Ok(()) };
            if next.op != Op::Flush && next.length == 0 {
                self.trace.next();
                continue;
            }
            if next.op == Op::Flush {
                if !(self.waiting.is_empty() && self.running.is_empty()) {
                    return Ok(());
                }
                self.flushing = true;
            }
            let request = self.trace.next().expect("peeked");
            check_within(self.profile, &request)?;
            self.waiting.push(Waiting { seq: self.issued, request });
            self.issued += 1;
        }
        Ok(())
    }

    /// The earliest completion still running, and where it is.
    fn first_done(&self) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for (i, &done) in self.running.iter().enumerate() {
            if best.is_none_or(|(_, b)| done < b) {
                best = Some((i, done));
            }
        }
        best
    }

    /// Retire the completion at `i`, then issue what it makes room for.
    fn retire(&mut self, i: usize) -> Result<()> {
        self.running.swap_remove(i);
        if self.running.is_empty() {
            self.flushing = false;
        }
        self.issue()
    }
}

/// Replay `requests` on `drive` (of `profile`) at `depth` outstanding.
pub fn replay(drive: &mut dyn Device, profile: &Profile, requests: impl IntoIterator<Item = Request>, depth: u32) -> Result<Modelled> {
    let mut tally = Modelled::default();
    let mut q = Outstanding {
        trace: requests.into_iter().peekable(),
        profile,
        depth: depth.max(1) as usize,
        waiting: Vec::new(),
        running: Vec::new(),
        flushing: false,
        issued: 0,
    };
    let mut now = 0.0_f64;
    let mut end = 0.0_f64;
    q.issue()?;
    loop {
        if q.waiting.is_empty() {
            let Some((i, done)) = q.first_done() else { break };
            now = now.max(done);
            q.retire(i)?;
            continue;
        }
        let start = now.max(drive.ready_at());
        while let Some((i, _)) = q.first_done().filter(|&(_, done)| done <= start) {
            q.retire(i)?;
        }
        let mut best = 0;
        let mut best_key = (f64::INFINITY, u64::MAX);
        for (i, w) in q.waiting.iter().enumerate() {
            let key = (drive.positioning(start, &w.request), w.seq);
            if key.0 < best_key.0 || (key.0 == best_key.0 && key.1 < best_key.1) {
                best = i;
                best_key = key;
            }
        }
        let Waiting { request, .. } = q.waiting.swap_remove(best);
        let done = drive.serve(start, &request, &mut tally);
        count(&mut tally, &request);
        q.running.push(done);
        end = end.max(done);
        now = start;
    }
    tally.seconds = end;
    tally.dirty_left_bytes = drive.dirty_bytes();
    Ok(tally)
}

/// A replay at depth 1 fed one request at a time, so a stream too long to
/// hold (a tree's reads, file after file) is modelled as it comes: each
/// request starts when the one before completes, or when the drive is
/// free, as [`replay`] at depth 1 starts it, so the two give the same
/// figures to the bit.
pub struct Serial {
    drive: Box<dyn Device + Send>,
    done: f64,
    end: f64,
    tally: Modelled,
}

impl Serial {
    /// A replay on `drive`, nothing served yet.
    pub fn new(drive: Box<dyn Device + Send>) -> Serial {
        Serial { drive, done: 0.0, end: 0.0, tally: Modelled::default() }
    }

    /// Serve `request` (of a drive of `profile`) once the one before it
    /// has completed. A request past the drive's end is bad input; a read
    /// or write of no bytes is skipped.
    pub fn serve(&mut self, profile: &Profile, request: Request) -> Result<()> {
        if request.op != Op::Flush && request.length == 0 {
            return Ok(());
        }
        check_within(profile, &request)?;
        let start = self.done.max(self.drive.ready_at());
        let done = self.drive.serve(start, &request, &mut self.tally);
        count(&mut self.tally, &request);
        self.end = self.end.max(done);
        self.done = done;
        Ok(())
    }

    /// Seconds from the first issue to the last completion so far.
    pub fn seconds(&self) -> f64 {
        self.end
    }

    /// What the requests served cost.
    pub fn finish(self) -> Modelled {
        Modelled { seconds: self.end, dirty_left_bytes: self.drive.dirty_bytes(), ..self.tally }
    }
}

/// Count a served request.
fn count(tally: &mut Modelled, request: &Request) {
    tally.requests += 1;
    match request.op {
        Op::Read => {
            tally.reads += 1;
            tally.read_bytes += request.length;
        }
        Op::Write => {
            tally.writes += 1;
            tally.written_bytes += request.length;
        }
        Op::Flush => tally.flushes += 1,
    }
}
