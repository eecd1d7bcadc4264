//! `fslab hunt`'s search, with no measuring in it: given one axis (a
//! memory limit, a sysctl, a scenario parameter) from LO to HI and an
//! [`Oracle`] that measures and judges a value, find the two neighbouring
//! values where the seed's claim flips.
//!
//! The rules, stated once (the command says them too):
//! - Both ends first, HI before LO: on a memory axis the high end runs
//!   without reclaim and answers in seconds, so a usage mistake shows
//!   early. If the ends agree (or one cannot be judged) the hunt stops
//!   there: there is no bracket to narrow.
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

/// Hunt along `axis` with at most `steps` points (at least 2: the ends),
/// `repeats` measurements each, by the rules of this module.
pub fn hunt(axis: &Axis, steps: u32, repeats: u32, oracle: &mut dyn Oracle) -> Hunt {
    let mut points = Vec::new();
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
    if oracle.stopped() {
        return Hunt { points, outcome: Outcome::Stopped };
    }
    let at_hi = visit(axis.hi, oracle, &mut points);
    let Some(at_hi) = at_hi else { return Hunt { points, outcome: Outcome::Unjudged(axis.hi) } };
    if oracle.stopped() {
        return Hunt { points, outcome: Outcome::Stopped };
    }
    let Some(at_lo) = visit(axis.lo, oracle, &mut points) else {
        return Hunt { points, outcome: Outcome::Unjudged(axis.lo) };
    };
    if at_lo == at_hi {
        return Hunt { points, outcome: Outcome::Agree(at_lo) };
    }
    let (mut lo, mut hi) = (axis.lo, axis.hi);
    let bracket = |lo: u64, hi: u64| {
        let narrow = axis.narrow(lo, hi);
        if at_lo { Outcome::Bracket { shows_at: lo, gone_at: hi, narrow } } else { Outcome::Bracket { shows_at: hi, gone_at: lo, narrow } }
    };
    while (points.len() as u32) < steps.max(2) && !axis.narrow(lo, hi) && !oracle.stopped() {
        let Some(mid) = axis.between(lo, hi) else { break };
        match visit(mid, oracle, &mut points) {
            None => return Hunt { points, outcome: Outcome::Unjudged(mid) },
            Some(shows) if shows == at_lo => lo = mid,
            Some(_) => hi = mid,
        }
    }
    Hunt { points, outcome: bracket(lo, hi) }
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
        let found = hunt(&memory_axis(), 8, 1, &mut oracle);
        let values: Vec<u64> = found.points.iter().map(|p| p.value / MIB).collect();
        // 1024 and 128 first, then geometric means rounded to MiB.
        assert_eq!(values, [1024, 128, 362, 215, 279, 318, 298]);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 298 * MIB, gone_at: 318 * MIB, narrow: true });
    }

    #[test]
    fn the_step_budget_stops_it_and_says_not_narrow() {
        let mut oracle = Crafted { flip: 300 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 4, 1, &mut oracle);
        assert_eq!(found.points.len(), 4);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 215 * MIB, gone_at: 362 * MIB, narrow: false });
    }

    #[test]
    fn ends_that_agree_stop_it_at_two_points() {
        let mut oracle = Crafted { flip: 2048 * MIB, noisy: vec![], measured: vec![] };
        let found = hunt(&memory_axis(), 8, 2, &mut oracle);
        assert_eq!(found.points.len(), 2);
        assert_eq!(found.outcome, Outcome::Agree(true));
        assert_eq!(oracle.measured, [(1024 * MIB, 2), (128 * MIB, 2)]);
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
        let found = hunt(&axis, 20, 1, &mut Above);
        let values: Vec<u64> = found.points.iter().map(|p| p.value).collect();
        assert_eq!(values, [100, 0, 50, 25, 38, 32]);
        assert_eq!(found.outcome, Outcome::Bracket { shows_at: 38, gone_at: 32, narrow: true });
    }

    #[test]
    fn repeats_that_disagree_are_measured_once_more() {
        let mut oracle = Crafted { flip: 300 * MIB, noisy: vec![362 * MIB], measured: vec![] };
        let found = hunt(&memory_axis(), 3, 2, &mut oracle);
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
        let found = hunt(&memory_axis(), 8, 1, &mut Blind);
        assert_eq!(found.outcome, Outcome::Unjudged(1024 * MIB));
        assert_eq!(found.points.len(), 1);
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
