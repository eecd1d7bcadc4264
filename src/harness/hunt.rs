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
//!   sysctls). The measured point replaces the end that judged the same.
//! - It stops when the bracket is narrow ([`Axis::narrow`]: within 1/8 of
//!   its low end on a size axis, 1/16 of the range on a linear one, or
//!   one grain apart), when the step budget (points measured, ends
//!   included) is spent, or when a point cannot be judged.
//! - Repeats: each point is measured `repeats` times and judged on all of
//!   them (the scenario's predicate takes medians). When the repeats judge
//!   differently on their own, the point is measured `repeats` times more,
//!   once, and all of them decide; it is marked `mixed`. The extra
//!   repeats do not count as steps.

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

/// What the oracle says about one value after measuring it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The claim judged on every repeat so far at this value (`None`: it
    /// could not be judged).
    pub shows: Option<bool>,
    /// Each repeat judged on its own, in order.
    pub each: Vec<Option<bool>>,
}

/// Measures values and judges the seed's claim on them.
pub trait Oracle {
    /// Measure `value` `repeats` more times, then judge all the repeats
    /// measured at it so far.
    fn measure(&mut self, value: u64, repeats: u32) -> Judgement;
    /// Whether to stop now (the user interrupted).
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
    /// Whether its first repeats disagreed (and it was measured again).
    pub mixed: bool,
}

/// How the hunt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Both ends judged the same (`true`: it shows at both).
    Agree(bool),
    /// This value could not be judged, so nothing was bracketed.
    Unjudged(u64),
    /// Interrupted before the ends were both measured.
    Stopped,
}

/// The points in the order measured, and the outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunt {
    /// Every point measured, in order.
    pub points: Vec<Point>,
    /// How it ended.
    pub outcome: Outcome,
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
    let mut points = Vec::new();
    let steps = steps.max(2) as usize;
    let visit = |value: u64, oracle: &mut dyn Oracle, points: &mut Vec<Point>| -> Option<bool> {
        let mut judged = oracle.measure(value, repeats);
        let first = judged.each.first().copied().flatten();
        let mixed = judged.each.iter().any(|s| s.is_some() && *s != first);
        if mixed && !oracle.stopped() {
            judged = oracle.measure(value, repeats);
        }
        points.push(Point { value, shows: judged.shows, mixed });
        judged.shows
    };
    let (near, far) = if start == Start::FromLow { (axis.lo, axis.hi) } else { (axis.hi, axis.lo) };
    if oracle.stopped() {
        return Hunt { points, outcome: Outcome::Stopped };
    }
    let Some(at_near) = visit(near, oracle, &mut points) else {
        return Hunt { points, outcome: Outcome::Unjudged(near) };
    };
    // `reached`: the measured point nearest the far end that judged as the
    // near end did; `flip`: the nearest that judged otherwise, once seen.
    let mut reached = near;
    let mut flip = None;
    let span = |a: u64, b: u64| (a.min(b), a.max(b));
    while flip.is_none() {
        if oracle.stopped() {
            return Hunt { points, outcome: Outcome::Stopped };
        }
        let (a, b) = span(reached, far);
        let last_step = points.len() + 1 >= steps;
        let next = if start == Start::BothEnds || last_step || axis.narrow(a, b) { None } else { axis.between(a, b) };
        let value = next.unwrap_or(far);
        match visit(value, oracle, &mut points) {
            None => return Hunt { points, outcome: Outcome::Unjudged(value) },
            Some(shows) if shows == at_near && value == far => return Hunt { points, outcome: Outcome::Agree(shows) },
            Some(shows) if shows == at_near => reached = value,
            Some(_) => flip = Some(value),
        }
    }
    let mut other = flip.unwrap_or(far);
    let bracket = |same: u64, other: u64| {
        let (a, b) = span(same, other);
        let narrow = axis.narrow(a, b);
        if at_near { Outcome::Bracket { shows_at: same, gone_at: other, narrow } } else { Outcome::Bracket { shows_at: other, gone_at: same, narrow } }
    };
    loop {
        let (a, b) = span(reached, other);
        if points.len() >= steps || axis.narrow(a, b) || oracle.stopped() {
            break;
        }
        let Some(mid) = axis.between(a, b) else { break };
        match visit(mid, oracle, &mut points) {
            None => return Hunt { points, outcome: Outcome::Unjudged(mid) },
            Some(shows) if shows == at_near => reached = mid,
            Some(_) => other = mid,
        }
    }
    Hunt { points, outcome: bracket(reached, other) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crafted claim: shows below `flip`; repeats at values in `noisy`
    /// disagree on their first round.
    struct Crafted {
        flip: u64,
        noisy: Vec<u64>,
        measured: Vec<(u64, u32)>,
    }

    impl Oracle for Crafted {
        fn measure(&mut self, value: u64, repeats: u32) -> Judgement {
            self.measured.push((value, repeats));
            let shows = value < self.flip;
            let rounds = self.measured.iter().filter(|(v, _)| *v == value).count();
            let each = if self.noisy.contains(&value) && rounds == 1 {
                vec![Some(shows), Some(!shows)]
            } else {
                vec![Some(shows); repeats as usize]
            };
            Judgement { shows: Some(shows), each }
        }
    }

    const MIB: u64 = 1 << 20;

    fn memory_axis() -> Axis {
        Axis { lo: 128 * MIB, hi: 1024 * MIB, scale: Scale::Geometric, grain: MIB }
    }

    #[test]
    fn a_memory_flip_is_bracketed_geometrically_to_an_eighth() {
        let mut oracle = Crafted { flip: 300 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
        let values: Vec<u64> = found.points.iter().map(|p| p.value / MIB).collect();
        // Down from 1024 by geometric means rounded to MiB; 128 is never needed.
        assert_eq!(values, [1024, 362, 215, 279, 318, 298]);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 298 * MIB, gone_at: 318 * MIB, narrow: true });
    }

    #[test]
    fn the_step_budget_stops_it_and_says_not_narrow() {
        let mut oracle = Crafted { flip: 300 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 4, 1, Start::FromHigh, &mut oracle);
        assert_eq!(found.points.len(), 4);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 279 * MIB, gone_at: 362 * MIB, narrow: false });
    }

    #[test]
    fn ends_that_agree_stop_it_at_two_points() {
        let mut oracle = Crafted { flip: 2048 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 8, 2, Start::BothEnds, &mut oracle);
        assert_eq!(found.points.len(), 2);
        assert_eq!(found.outcome, Outcome::Agree(true));
        assert_eq!(oracle.measured, [(1024 * MIB, 2), (128 * MIB, 2)]);
        // Descending, the low end is measured once the next midpoint is
        // within an eighth of it, or with the last step of the budget.
        let mut oracle = Crafted { flip: 2048 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
        let values: Vec<u64> = found.points.iter().map(|p| p.value / MIB).collect();
        assert_eq!((values, found.outcome), (vec![1024, 362, 215, 166, 146, 137, 128], Outcome::Agree(true)));
        let mut oracle = Crafted { flip: 2048 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 3, 1, Start::FromHigh, &mut oracle);
        let values: Vec<u64> = found.points.iter().map(|p| p.value / MIB).collect();
        assert_eq!(values, [1024, 362, 128]);
    }

    #[test]
    fn a_claim_that_shows_above_is_bracketed_the_other_way() {
        struct Above;
        impl Oracle for Above {
            fn measure(&mut self, value: u64, repeats: u32) -> Judgement {
                Judgement { shows: Some(value >= 37), each: vec![Some(value >= 37); repeats as usize] }
            }
        }
        let axis = Axis { lo: 0, hi: 100, scale: Scale::Linear, grain: 1 };
        let found = hunt(&axis, 20, 1, Start::BothEnds, &mut Above);
        let values: Vec<u64> = found.points.iter().map(|p| p.value).collect();
        assert_eq!(values, [100, 0, 50, 25, 38, 32]);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 38, gone_at: 32, narrow: true });
    }

    #[test]
    fn repeats_that_disagree_are_measured_once_more() {
        let mut oracle = Crafted { flip: 300 * MIB, noisy: vec![362 * MIB], measured: vec![] };
        let found = hunt(&memory_axis(), 3, 2, Start::BothEnds, &mut oracle);
        assert_eq!(oracle.measured, [(1024 * MIB, 2), (128 * MIB, 2), (362 * MIB, 2), (362 * MIB, 2)]);
        assert!(found.points[2].mixed && !found.points[0].mixed);
        assert_eq!(found.points.len(), 3);
    }

    #[test]
    fn an_unjudged_point_ends_it() {
        struct Blind;
        impl Oracle for Blind {
            fn measure(&mut self, _: u64, _: u32) -> Judgement {
                Judgement { shows: None, each: vec![None] }
            }
        }
        let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut Blind);
        assert_eq!(found.outcome, Outcome::Unjudged(1024 * MIB));
        assert_eq!(found.points.len(), 1);
    }

    #[test]
    fn climbing_from_a_cheap_low_end_brackets_too() {
        let mut oracle = Crafted { flip: 300 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 8, 1, Start::FromLow, &mut oracle);
        let values: Vec<u64> = found.points.iter().map(|p| p.value / MIB).collect();
        assert_eq!(values, [128, 362, 215, 279, 318, 298]);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 298 * MIB, gone_at: 318 * MIB, narrow: true });
    }

    #[test]
    fn midpoints_stay_on_the_grain_and_inside() {
        let axis = Axis { lo: 4096, hi: 16384, scale: Scale::Geometric, grain: 4096 };
        assert_eq!(axis.between(4096, 16384), Some(8192));
        assert_eq!(axis.between(4096, 8192), None);
        assert!(axis.narrow(4096, 8192));
        assert_eq!(size_grain(128 * MIB), MIB);
        assert_eq!(size_grain(8 * MIB), 4096);
    }
}
