//! Replaying a request stream: a closed loop of `depth` outstanding
//! requests. The first `depth` requests are issued at time 0 and each
//! completion issues the next, with no time between (the host's own time
//! is not the drive's). When the drive is free it starts, of the requests
//! issued by then, the one it can start moving data for soonest
//! (shortest positioning time first, as NCQ and SCSI drives reorder; the
//! earlier issued on a tie), so at depth 1 requests go in issue order. A
//! flush is issued only once every earlier request has completed, and
//! nothing after it until it has.
//!
//! A stream can be replayed as it arrives ([`Replay`]): the queue holds at
//! most `depth + 1` requests not yet issued, the most one step of the loop
//! can issue plus the one it may look at, so it serves each request exactly
//! when a replay of the whole stream would, in bounded memory.

use std::collections::VecDeque;

use super::{Device, Modelled, Op, Profile, Request, check_within, device};
use crate::error::Result;

/// An issued request waiting for the drive, with its issue number.
struct Waiting {
    seq: u64,
    request: Request,
}

/// One request the drive served, on the replay's clock (seconds from the
/// first issue).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    /// Its place in issue order, from 0, among the requests that reach the
    /// drive (a read or write of no bytes does not).
    pub seq: u64,
    /// The request.
    pub request: Request,
    /// When the drive started it.
    pub start: f64,
    /// When it completed.
    pub done: f64,
}

/// The loop's state between two requests given to it.
struct Queue {
    depth: usize,
    /// Given and not yet issued, in order.
    pending: VecDeque<Request>,
    /// No more will be given.
    ended: bool,
    waiting: Vec<Waiting>,
    running: Vec<f64>,
    flushing: bool,
    issued: u64,
    now: f64,
    end: f64,
    tally: Modelled,
}

impl Queue {
    fn new(depth: u32) -> Queue {
        Queue {
            depth: depth.max(1) as usize,
            pending: VecDeque::new(),
            ended: false,
            waiting: Vec::new(),
            running: Vec::new(),
            flushing: false,
            issued: 0,
            now: 0.0,
            end: 0.0,
            tally: Modelled::default(),
        }
    }

    /// The issue number the next request given will carry.
    fn next_seq(&self) -> u64 {
        self.issued + self.pending.len() as u64
    }

    /// Take `request` in, after those given before; a read or write of no
    /// bytes is dropped (`false`).
    fn give(&mut self, request: Request) -> bool {
        if request.op != Op::Flush && request.length == 0 {
            return false;
        }
        self.pending.push_back(request);
        true
    }

    /// Issue requests while there is room: none past a flush until it is
    /// done, and a flush only alone.
    fn issue(&mut self, profile: &Profile) -> Result<()> {
        while !self.flushing && self.waiting.len() + self.running.len() < self.depth {
            let Some(next) = self.pending.front() else { return Ok(()) };
            if next.op == Op::Flush {
                if !(self.waiting.is_empty() && self.running.is_empty()) {
                    return Ok(());
                }
                self.flushing = true;
            }
            let request = self.pending.pop_front().expect("looked at");
            check_within(profile, &request)?;
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
    fn retire(&mut self, i: usize, profile: &Profile) -> Result<()> {
        self.running.swap_remove(i);
        if self.running.is_empty() {
            self.flushing = false;
        }
        self.issue(profile)
    }

    /// Run the loop as far as what was given allows: to the end once
    /// [`ended`](Self::ended), else while more than `depth` wait to be
    /// issued. One step issues at most `depth` (the room the requests
    /// outstanding at its start leave, plus one for each it retires) and
    /// looks at one more, so it never finds the stream short where the
    /// whole stream would have had a request.
    fn run(&mut self, drive: &mut dyn Device, profile: &Profile, served: &mut dyn FnMut(&Served)) -> Result<()> {
        while self.ended || self.pending.len() > self.depth {
            if !self.step(drive, profile, served)? {
                break;
            }
        }
        Ok(())
    }

    /// One retirement, or one request started; `false` when nothing is
    /// left to do.
    fn step(&mut self, drive: &mut dyn Device, profile: &Profile, served: &mut dyn FnMut(&Served)) -> Result<bool> {
        self.issue(profile)?;
        if self.waiting.is_empty() {
            let Some((i, done)) = self.first_done() else { return Ok(false) };
            self.now = self.now.max(done);
            self.retire(i, profile)?;
            return Ok(true);
        }
        let start = self.now.max(drive.ready_at());
        while let Some((i, _)) = self.first_done().filter(|&(_, done)| done <= start) {
            self.retire(i, profile)?;
        }
        let mut best = 0;
        let mut best_key = (f64::INFINITY, u64::MAX);
        for (i, w) in self.waiting.iter().enumerate() {
            let key = (drive.positioning(start, &w.request), w.seq);
            if key.0 < best_key.0 || (key.0 == best_key.0 && key.1 < best_key.1) {
                best = i;
                best_key = key;
            }
        }
        let Waiting { seq, request } = self.waiting.swap_remove(best);
        let done = drive.serve(start, &request, &mut self.tally);
        count(&mut self.tally, &request);
        served(&Served { seq, request, start, done });
        self.running.push(done);
        self.end = self.end.max(done);
        self.now = start;
        Ok(true)
    }

    /// Serve what is left and say what it all cost.
    fn finish(mut self, drive: &mut dyn Device, profile: &Profile, served: &mut dyn FnMut(&Served)) -> Result<Modelled> {
        self.ended = true;
        self.run(drive, profile, served)?;
        self.tally.seconds = self.end;
        self.tally.dirty_left_bytes = drive.dirty_bytes();
        Ok(self.tally)
    }
}

/// Replay `requests` on `drive` (of `profile`) at `depth` outstanding.
pub fn replay(drive: &mut dyn Device, profile: &Profile, requests: impl IntoIterator<Item = Request>, depth: u32) -> Result<Modelled> {
    let mut queue = Queue::new(depth);
    let ignore = &mut |_: &Served| {};
    for request in requests {
        if queue.give(request) {
            queue.run(drive, profile, ignore)?;
        }
    }
    queue.finish(drive, profile, ignore)
}

/// A replay fed one request at a time, as a trace delivers them, on a
/// fresh drive of its own: what [`super::replay`] computes for the whole
/// stream, in memory bounded by the queue depth. Each request the drive
/// serves is handed to the caller's `served` as it is (its start and
/// completion); at depth 1 that is the request before the one just given.
pub struct Replay {
    profile: Profile,
    drive: Box<dyn Device>,
    queue: Queue,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").field("profile", &self.profile.name).field("issued", &self.queue.issued).finish_non_exhaustive()
    }
}

impl Replay {
    /// A replay on a fresh drive of `profile` (head over byte 0, caches
    /// empty), at most `queue_depth` outstanding and at most the drive's
    /// own queue depth.
    pub fn new(profile: &Profile, queue_depth: u32) -> Replay {
        let depth = queue_depth.clamp(1, profile.queue_depth());
        Replay { profile: profile.clone(), drive: device(profile), queue: Queue::new(depth) }
    }

    /// Rest the head over byte `at`, the platter turned so that `at` is
    /// under it (as if a read had just ended there): for before the first
    /// request, so that it costs no seek from an arbitrary place.
    pub fn park(&mut self, at: u64) {
        self.drive.park(at);
    }

    /// The drive replayed on.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Give the next request in issue order, and serve what can be served
    /// before the next one comes. Its issue number ([`Served::seq`]), or
    /// `None` for a read or write of no bytes, which is skipped. A request
    /// past the drive's end is bad input (exit 2), naming the profile; the
    /// replay is of no further use then.
    pub fn push(&mut self, request: Request, served: &mut dyn FnMut(&Served)) -> Result<Option<u64>> {
        let seq = self.queue.next_seq();
        if !self.queue.give(request) {
            return Ok(None);
        }
        self.queue.run(self.drive.as_mut(), &self.profile, served)?;
        Ok(Some(seq))
    }

    /// No more requests: serve the rest and say what the stream cost.
    pub fn finish(mut self, served: &mut dyn FnMut(&Served)) -> Result<Modelled> {
        self.queue.finish(self.drive.as_mut(), &self.profile, served)
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
