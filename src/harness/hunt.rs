//! `fslab hunt`'s search, with no measuring in it: given one axis (a
//! memory limit, a sysctl, a scenario parameter) from LO to HI and an
//! [`Oracle`] that measures and judges a value, find the two neighbouring
//! values where the seed's claim flips.
//!
//! The rules, stated once (the command says them too):
//! - The cheap end first ([`Start`]): on a memory axis the high end runs
//!   without reclaim and answers in seconds while the low end may reclaim
//!   for minutes, so the hunt descends from HI by bisection and measures
//!   LO only when no point on the way judged otherwise (when the next
//!   midpoint would be within the tolerance of LO, or one step of the
//!   budget is left). A size parameter climbs from LO the same way; other
//!   keys measure both ends first, HI before LO. Ends that agree stop the
//!   hunt: there is no bracket to narrow.
//! - Then bisection: the midpoint is the geometric mean on a size axis
//!   (the claim turns on ratios such as limit / file size) and the
//!   arithmetic mean on a linear one, rounded to the axis's grain (1 MiB
//!   for sizes of 16 MiB and more, 4 KiB below, 1 for counts and plain
//!   sysctls). The bracket is always the two neighbouring measured values
//!   whose claims differ.
//! - It stops when the bracket is narrow ([`Axis::narrow`]: within 1/8 of
//!   its low end on a size axis, 1/16 of the range on a linear one, or
//!   one grain apart), when the step budget (points measured, ends
//!   included) is spent, when a point cannot be judged, when a case fails
//!   (a failure is said as one: the hunt ends there, since a bracket
//!   narrowed around a value that cannot be measured would hide it), or
//!   when the user interrupts (said as such, with the bracket so far).
//! - Repeats: each point is measured `repeats` times and judged on all of
//!   them (the scenario's predicate takes medians). A point is measured
//!   `repeats` times more, once, whatever the reason ([`Again`]): its
//!   repeats judged differently on their own (`mixed`: all of them
//!   decide); a case of it ran on a busy machine (the quiet repeats then
//!   decide, and the busy ones only when no quiet one was measured); it
//!   breaks a single flip; or its deciding figure runs against the flip.
//!   The extra repeats do not count as steps.
//! - One flip: after every point, the judged points in value order must
//!   change claim at most once. Bisection alone never measures outside its
//!   bracket, so a contradiction comes from a point judged anew, and the
//!   deciding figure is the early warning: walking from the end where the
//!   claim shows to the end where it is gone, a figure that grows more than
//!   twice its neighbour's towards the showing side (2,236 then 12,885
//!   extents as memory rises) has both neighbours measured again. Points
//!   between the first and the last change of claim are measured again;
//!   if the claims still change more than once, the hunt ends
//!   `not_monotonic` with no bracket, naming them. A figure still against
//!   the flip once measured again is said beside the bracket.

/// How the midpoint of two values is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Geometric mean: sizes and counts, where ratios matter.
    Geometric,
    /// Arithmetic mean: percentages and other small plain numbers.
    Linear,
}

/// The axis searched: its ends, how it is split and its grain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// The low end.
    pub lo: u64,
    /// The high end.
    pub hi: u64,
    /// How midpoints are taken.
    pub scale: Scale,
    /// Every measured value is a multiple of this (ends excepted).
    pub grain: u64,
}

/// The grain of a size axis from LO to HI: 1 MiB when the low end is at
/// least 16 MiB (a limit or file of hundreds of MiB need not be known to
/// the page), else 4 KiB (a page).
pub fn size_grain(lo: u64) -> u64 {
    if lo >= 16 << 20 { 1 << 20 } else { 4096 }
}

impl Axis {
    /// The value between `a` and `b` (a < b) to measure next, on a grain,
    /// or `None` when no multiple of the grain lies strictly between.
    pub fn between(&self, a: u64, b: u64) -> Option<u64> {
        let mid = match self.scale {
            Scale::Geometric => ((a.max(1) as f64) * (b as f64)).sqrt(),
            Scale::Linear => (a as f64 + b as f64) / 2.0,
        };
        let grain = self.grain.max(1);
        let rounded = ((mid / grain as f64).round() as u64) * grain;
        let floor = (a / grain + 1) * grain;
        let ceil = if b % grain == 0 { b - grain } else { b / grain * grain };
        if floor > ceil {
            return None;
        }
        Some(rounded.clamp(floor, ceil))
    }

    /// Whether the bracket `a`..`b` is narrow enough to stop.
    pub fn narrow(&self, a: u64, b: u64) -> bool {
        if self.between(a, b).is_none() {
            return true;
        }
        match self.scale {
            Scale::Geometric => (b - a) * 8 <= a,
            Scale::Linear => (b - a) * 16 <= self.hi - self.lo,
        }
    }

    /// The tolerance in words, for the command's output.
    pub fn tolerance(&self) -> &'static str {
        match self.scale {
            Scale::Geometric => "within 1/8 of the lower value",
            Scale::Linear => "within 1/16 of the range",
        }
    }
}

/// Why a point is measured a second time (at most once, whatever the
/// reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Again {
    /// Its first repeats judged differently on their own.
    Mixed,
    /// A case of its first repeats ran on a busy machine.
    Busy,
    /// With the other points it breaks a single flip.
    Flip,
    /// Its deciding figure runs against the flip, more than twice its
    /// neighbour's the wrong way.
    Figure,
}

impl Again {
    /// The reason as `--json` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Again::Mixed => "mixed",
            Again::Busy => "busy",
            Again::Flip => "flip",
            Again::Figure => "figure",
        }
    }

    /// The reason in words: "its repeats disagreed".
    pub fn said(self) -> &'static str {
        match self {
            Again::Mixed => "its repeats disagreed",
            Again::Busy => "it ran busy",
            Again::Flip => "it breaks a single flip",
            Again::Figure => "its figure runs against the flip",
        }
    }
}

/// One repeat measured at a value, judged on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    /// The claim on this repeat's cases alone (`None`: not judged).
    pub shows: Option<bool>,
    /// Whether a case of it ran on a busy machine.
    pub busy: bool,
}

/// What the oracle says about one value after measuring it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The claim judged on the repeats that count: the quiet ones when
    /// any was measured at this value, else all (`None`: it could not be
    /// judged).
    pub shows: Option<bool>,
    /// The deciding figure on the same repeats, when measured.
    pub figure: Option<f64>,
    /// Every repeat measured at this value so far, in order.
    pub repeats: Vec<Repeat>,
    /// The error of a case that failed at this value: measuring stops at
    /// the first.
    pub failed: Option<String>,
}

/// Measures values and judges the seed's claim on them.
pub trait Oracle {
    /// Measure `value` `repeats` more times, stopping at a failed case
    /// (`again`: why it is measured a second time), then judge the repeats
    /// measured at it so far as [`Judgement`] says.
    fn measure(&mut self, value: u64, repeats: u32, again: Option<Again>) -> Judgement;
    /// Whether to stop now (the user interrupted): a value measured while
    /// it became true is set aside.
    fn stopped(&self) -> bool {
        false
    }
}

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The value.
    pub value: u64,
    /// The claim there.
    pub shows: Option<bool>,
    /// The deciding figure there.
    pub figure: Option<f64>,
    /// Whether its first repeats disagreed.
    pub mixed: bool,
    /// Whether a case of its first repeats ran busy.
    pub ran_busy: bool,
    /// Whether its claim rests on busy repeats alone (it ran busy and was
    /// busy again).
    pub busy: bool,
    /// Why it was measured a second time, if it was.
    pub again: Option<Again>,
}

/// Where the claim flips: the neighbouring measured values that judged
/// differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flip {
    /// The value nearest the flip where it shows.
    pub shows_at: u64,
    /// The value nearest the flip where it is gone.
    pub gone_at: u64,
}

/// How the hunt ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The claim flips between these neighbouring values.
    Bracket {
        /// The value nearest the flip where it shows.
        shows_at: u64,
        /// The value nearest the flip where it is gone.
        gone_at: u64,
        /// Whether the bracket is within the tolerance (else the step
        /// budget ran out first).
        narrow: bool,
    },
    /// Every point judged alike, both ends included (`true`: it shows).
    Agree(bool),
    /// This value could not be judged, so nothing was bracketed.
    Unjudged(u64),
    /// A case failed at `value`: the hunt ended there.
    Failed {
        /// The value.
        value: u64,
        /// The case's error.
        error: String,
        /// The flip bracketed before it, if any (not narrowed further).
        so_far: Option<Flip>,
    },
    /// The claims change more than once along the axis, also after these
    /// points (in value order, from the first change to the last) were
    /// measured again: no bracket.
    NotMonotonic(Vec<u64>),
    /// The user interrupted; the flip bracketed so far, if any.
    Interrupted(Option<Flip>),
}

/// The points in the order measured, and the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunt {
    /// Every point measured, in the order first measured.
    pub points: Vec<Point>,
    /// How it ended.
    pub outcome: Outcome,
    /// Neighbouring values (in value order) whose deciding figures still
    /// run against the flip after each was measured again.
    pub against: Vec<(u64, u64)>,
}

/// Which end is measured first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Both ends before anything else, HI first.
    BothEnds,
    /// HI is cheap (a memory limit well above the work needs no reclaim),
    /// LO dear: descend from HI, and measure LO only when needed.
    FromHigh,
    /// LO is cheap (a small file), HI dear: climb from LO.
    FromLow,
}

/// Hunt along `axis` with at most `steps` points (at least 2), `repeats`
/// measurements each, starting at `start`'s end, by the rules of this
/// module.
pub fn hunt(axis: &Axis, steps: u32, repeats: u32, start: Start, oracle: &mut dyn Oracle) -> Hunt {
    let steps = steps.max(2) as usize;
    let (near, far) = if start == Start::FromLow { (axis.lo, axis.hi) } else { (axis.hi, axis.lo) };
    let mut search = Search { repeats, oracle, points: Vec::new() };
    let mut next = near;
    let outcome = loop {
        if search.oracle.stopped() {
            break Outcome::Interrupted(search.flip());
        }
        if let Err(end) = search.visit(next).and_then(|()| search.settle()) {
            break search.ended(end);
        }
        let measured = search.points.len();
        match search.flip() {
            // Every point judged alike (settled: never more than one flip).
            None => {
                let order = search.in_order();
                let Some(&nearest) = (if far < near { order.first() } else { order.last() }) else {
                    break Outcome::Unjudged(next);
                };
                let reached = search.points[nearest].value;
                if reached == far {
                    break Outcome::Agree(search.points[nearest].shows == Some(true));
                }
                let (a, b) = span(reached, far);
                let last_step = measured + 1 >= steps;
                next = if start == Start::BothEnds || last_step || axis.narrow(a, b) { far } else { axis.between(a, b).unwrap_or(far) };
            }
            Some(flip) => {
                let (a, b) = span(flip.shows_at, flip.gone_at);
                let narrow = axis.narrow(a, b);
                match axis.between(a, b) {
                    Some(mid) if measured < steps && !narrow => next = mid,
                    _ => break Outcome::Bracket { shows_at: flip.shows_at, gone_at: flip.gone_at, narrow },
                }
            }
        }
    };
    let against = search.against();
    Hunt { points: search.points, outcome, against }
}

fn span(a: u64, b: u64) -> (u64, u64) {
    (a.min(b), a.max(b))
}

/// Why a search ended before its bracket.
enum End {
    Stopped,
    Failed(u64, String),
    Unjudged(u64),
    NotMonotonic(Vec<u64>),
}

/// The points measured so far and what measures more.
struct Search<'a> {
    repeats: u32,
    oracle: &'a mut dyn Oracle,
    points: Vec<Point>,
}

impl Search<'_> {
    /// Measure a new value, and again at once when its repeats disagreed
    /// or it ran busy.
    fn visit(&mut self, value: u64) -> Result<(), End> {
        let judged = self.measure(value, None)?;
        let first = judged.repeats.first().and_then(|r| r.shows);
        let mixed = judged.repeats.iter().any(|r| r.shows.is_some() && r.shows != first);
        let ran_busy = judged.repeats.iter().any(|r| r.busy);
        self.points.push(Point { value, shows: judged.shows, figure: judged.figure, mixed, ran_busy, busy: ran_busy, again: None });
        match (mixed, ran_busy) {
            (true, _) => self.again(value, Again::Mixed),
            (false, true) => self.again(value, Again::Busy),
            _ if judged.shows.is_none() => Err(End::Unjudged(value)),
            _ => Ok(()),
        }
    }

    /// Measure a point a second time.
    fn again(&mut self, value: u64, why: Again) -> Result<(), End> {
        let judged = self.measure(value, Some(why))?;
        let Some(point) = self.points.iter_mut().find(|p| p.value == value) else { return Ok(()) };
        point.again = Some(why);
        point.shows = judged.shows;
        point.figure = judged.figure;
        point.busy = judged.repeats.iter().all(|r| r.busy);
        if judged.shows.is_none() { Err(End::Unjudged(value)) } else { Ok(()) }
    }

    /// The oracle's judgement, or why the search ends: interrupted
    /// meanwhile (what it measured is set aside), or a case failed.
    fn measure(&mut self, value: u64, again: Option<Again>) -> Result<Judgement, End> {
        let judged = self.oracle.measure(value, self.repeats, again);
        if self.oracle.stopped() {
            return Err(End::Stopped);
        }
        match judged.failed {
            Some(error) => Err(End::Failed(value, error)),
            None => Ok(judged),
        }
    }

    /// Measure again, once each, the points that break a single flip or
    /// whose figure runs against it, until none is left to measure; then
    /// end if the claims still change more than once.
    fn settle(&mut self) -> Result<(), End> {
        loop {
            let order = self.in_order();
            let changes = self.changes(&order);
            let (doubted, why) = match changes[..] {
                [] => return Ok(()),
                [_] => (self.inverted(&order).into_iter().flat_map(|(a, b)| [a, b]).collect(), Again::Figure),
                [first, .., last] => ((first..=last + 1).map(|i| self.points[order[i]].value).collect::<Vec<u64>>(), Again::Flip),
            };
            let todo: Vec<u64> = self.points.iter().filter(|p| p.again.is_none() && doubted.contains(&p.value)).map(|p| p.value).collect();
            if todo.is_empty() {
                return if changes.len() > 1 { Err(End::NotMonotonic(doubted)) } else { Ok(()) };
            }
            for value in todo {
                self.again(value, why)?;
            }
        }
    }

    /// The outcome for a search that ended early.
    fn ended(&self, end: End) -> Outcome {
        match end {
            End::Stopped => Outcome::Interrupted(self.flip()),
            End::Failed(value, error) => Outcome::Failed { value, error, so_far: self.flip() },
            End::Unjudged(value) => Outcome::Unjudged(value),
            End::NotMonotonic(values) => Outcome::NotMonotonic(values),
        }
    }

    /// The judged points' indices in value order.
    fn in_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.points.len()).filter(|&i| self.points[i].shows.is_some()).collect();
        order.sort_by_key(|&i| self.points[i].value);
        order
    }

    /// Where the claim changes along `order`: `i` for a change between
    /// `order[i]` and `order[i + 1]`.
    fn changes(&self, order: &[usize]) -> Vec<usize> {
        (0..order.len().saturating_sub(1)).filter(|&i| self.points[order[i]].shows != self.points[order[i + 1]].shows).collect()
    }

    /// The single flip, when the claims change exactly once.
    fn flip(&self) -> Option<Flip> {
        let order = self.in_order();
        let [at] = self.changes(&order)[..] else { return None };
        let (low, high) = (&self.points[order[at]], &self.points[order[at + 1]]);
        Some(if low.shows == Some(true) { Flip { shows_at: low.value, gone_at: high.value } } else { Flip { shows_at: high.value, gone_at: low.value } })
    }

    /// Neighbouring values (in value order) whose deciding figures run
    /// against the single flip: walking from where the claim shows to where
    /// it is gone, the next figure is more than twice as far towards the
    /// showing side as the one before. Which side that is the two points
    /// of the flip say; none when they do not differ or there is no flip.
    fn inverted(&self, order: &[usize]) -> Vec<(u64, u64)> {
        let Some(flip) = self.flip() else { return Vec::new() };
        let figure = |value: u64| self.points.iter().find(|p| p.value == value).and_then(|p| p.figure);
        let (Some(showing), Some(gone)) = (figure(flip.shows_at), figure(flip.gone_at)) else { return Vec::new() };
        if showing == gone {
            return Vec::new();
        }
        // Towards the showing side means larger when the showing figure is.
        let larger = showing > gone;
        let mut out = Vec::new();
        for pair in order.windows(2) {
            let (low, high) = (&self.points[pair[0]], &self.points[pair[1]]);
            let (Some(a), Some(b)) = (low.figure, high.figure) else { continue };
            if a < 0.0 || b < 0.0 {
                continue;
            }
            // `before` is nearer the showing end than `after`.
            let (before, after) = if flip.shows_at < flip.gone_at { (a, b) } else { (b, a) };
            let wrong_way = if larger { after > 2.0 * before } else { before > 2.0 * after };
            if wrong_way {
                out.push((low.value, high.value));
            }
        }
        out
    }

    /// What [`Search::inverted`] finds among the points as they ended.
    fn against(&self) -> Vec<(u64, u64)> {
        self.inverted(&self.in_order())
    }
}

#[cfg(test)]
#[path = "hunt_tests.rs"]
mod tests;
