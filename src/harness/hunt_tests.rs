//! The search driven by crafted oracles: what it measures, in which
//! order, and how it ends.

use super::*;

const MIB: u64 = 1 << 20;

/// One round of repeats at a value, as a crafted oracle makes it.
#[derive(Clone)]
struct Round {
    shows: bool,
    figure: f64,
    /// A repeat of this round judges the other way on its own.
    split: bool,
    busy: bool,
    failed: Option<&'static str>,
}

/// A crafted claim: `answer(value, round)` (round 1, 2) gives each round;
/// it records what was measured and why, and stops after `stop_after`
/// measurings (the last of them set aside by the search).
struct Crafted<F: Fn(u64, usize) -> Round> {
    answer: F,
    measured: Vec<(u64, u32, Option<Again>)>,
    rounds: Vec<(u64, Round)>,
    stop_after: Option<usize>,
}

fn crafted<F: Fn(u64, usize) -> Round>(answer: F) -> Crafted<F> {
    Crafted { answer, measured: Vec::new(), rounds: Vec::new(), stop_after: None }
}

/// Shows below `flip` (65,536 extents), gone above (1), quiet.
fn below(flip: u64) -> impl Fn(u64, usize) -> Round {
    move |value, _| plain(value < flip)
}

fn plain(shows: bool) -> Round {
    Round { shows, figure: if shows { 65536.0 } else { 1.0 }, split: false, busy: false, failed: None }
}

impl<F: Fn(u64, usize) -> Round> Oracle for Crafted<F> {
    fn measure(&mut self, value: u64, repeats: u32, again: Option<Again>) -> Judgement {
        self.measured.push((value, repeats, again));
        let n = self.rounds.iter().filter(|(v, _)| *v == value).count() + 1;
        let round = (self.answer)(value, n);
        self.rounds.push((value, round));
        let mine: Vec<&Round> = self.rounds.iter().filter(|(v, _)| *v == value).map(|(_, r)| r).collect();
        let mut each = Vec::new();
        for r in &mine {
            for i in 0..repeats {
                let shows = if r.split && i == 1 { !r.shows } else { r.shows };
                each.push(Repeat { shows: Some(shows), busy: r.busy });
            }
        }
        // The latest quiet round decides, else the latest.
        let deciding = mine.iter().rev().find(|r| !r.busy).unwrap_or(mine.last().unwrap());
        let failed = mine.iter().find_map(|r| r.failed).map(str::to_string);
        Judgement { shows: Some(deciding.shows), figure: Some(deciding.figure), repeats: each, failed }
    }

    fn stopped(&self) -> bool {
        self.stop_after.is_some_and(|n| self.measured.len() >= n)
    }
}

fn memory_axis() -> Axis {
    Axis { lo: 128 * MIB, hi: 1024 * MIB, scale: Scale::Geometric, grain: MIB }
}

fn values(found: &Hunt) -> Vec<u64> {
    found.points.iter().map(|p| p.value / MIB).collect()
}

#[test]
fn a_memory_flip_is_bracketed_geometrically_to_an_eighth() {
    let mut oracle = crafted(below(300 * MIB));
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    // Down from 1024 by geometric means rounded to MiB; 128 is never needed.
    assert_eq!(values(&found), [1024, 362, 215, 279, 318, 298]);
    assert_eq!(found.outcome, Outcome::Bracket { shows_at: 298 * MIB, gone_at: 318 * MIB, narrow: true });
    assert!(found.against.is_empty() && found.points.iter().all(|p| p.again.is_none()));
}

#[test]
fn the_step_budget_stops_it_and_says_not_narrow() {
    let mut oracle = crafted(below(300 * MIB));
    let found = hunt(&memory_axis(), 4, 1, Start::FromHigh, &mut oracle);
    assert_eq!(found.points.len(), 4);
    assert_eq!(found.outcome, Outcome::Bracket { shows_at: 279 * MIB, gone_at: 362 * MIB, narrow: false });
}

#[test]
fn ends_that_agree_stop_it_at_two_points() {
    let mut oracle = crafted(below(2048 * MIB));
    let found = hunt(&memory_axis(), 8, 2, Start::BothEnds, &mut oracle);
    assert_eq!(found.points.len(), 2);
    assert_eq!(found.outcome, Outcome::Agree(true));
    assert_eq!(oracle.measured, [(1024 * MIB, 2, None), (128 * MIB, 2, None)]);
    // Descending, the low end is measured once the next midpoint is
    // within an eighth of it, or with the last step of the budget.
    let mut oracle = crafted(below(2048 * MIB));
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    assert_eq!((values(&found), found.outcome), (vec![1024, 362, 215, 166, 146, 137, 128], Outcome::Agree(true)));
    let mut oracle = crafted(below(2048 * MIB));
    let found = hunt(&memory_axis(), 3, 1, Start::FromHigh, &mut oracle);
    assert_eq!(values(&found), [1024, 362, 128]);
}

#[test]
fn a_claim_that_shows_above_is_bracketed_the_other_way() {
    let axis = Axis { lo: 0, hi: 100, scale: Scale::Linear, grain: 1 };
    let found = hunt(&axis, 20, 1, Start::BothEnds, &mut crafted(|value, _| plain(value >= 37)));
    let values: Vec<u64> = found.points.iter().map(|p| p.value).collect();
    assert_eq!(values, [100, 0, 50, 25, 38, 32]);
    assert_eq!(found.outcome, Outcome::Bracket { shows_at: 38, gone_at: 32, narrow: true });
}

#[test]
fn repeats_that_disagree_are_measured_once_more() {
    let mut oracle = crafted(|value, round| Round { split: value == 362 * MIB && round == 1, ..plain(value < 300 * MIB) });
    let found = hunt(&memory_axis(), 3, 2, Start::BothEnds, &mut oracle);
    let again = Some(Again::Mixed);
    assert_eq!(oracle.measured, [(1024 * MIB, 2, None), (128 * MIB, 2, None), (362 * MIB, 2, None), (362 * MIB, 2, again)]);
    assert!(found.points[2].mixed && !found.points[0].mixed);
    assert_eq!((found.points[2].again, found.points.len()), (again, 3));
}

#[test]
fn an_unjudged_point_ends_it() {
    struct Blind;
    impl Oracle for Blind {
        fn measure(&mut self, _: u64, _: u32, _: Option<Again>) -> Judgement {
            Judgement { shows: None, figure: None, repeats: vec![Repeat { shows: None, busy: false }], failed: None }
        }
    }
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut Blind);
    assert_eq!(found.outcome, Outcome::Unjudged(1024 * MIB));
    assert_eq!(found.points.len(), 1);
}

#[test]
fn climbing_from_a_cheap_low_end_brackets_too() {
    let mut oracle = crafted(below(300 * MIB));
    let found = hunt(&memory_axis(), 8, 1, Start::FromLow, &mut oracle);
    assert_eq!(values(&found), [128, 362, 215, 279, 318, 298]);
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

/// 279 MiB shows at first with 2,236 extents and is gone when measured
/// again; 318 MiB shows with 12,885 extents above it, every time: as
/// memory rose, 2,236 → 12,885 → 1 extents.
fn noisy(value: u64, round: usize) -> Round {
    match value / MIB {
        279 if round == 1 => Round { figure: 2236.0, ..plain(true) },
        279 => Round { figure: 2.0, ..plain(false) },
        318 => Round { figure: 12885.0, ..plain(true) },
        v => plain(v < 300),
    }
}

#[test]
fn points_that_break_a_single_flip_end_it_with_no_bracket() {
    let mut oracle = crafted(noisy);
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    // 318 MiB's 12,885 extents are more than twice 279 MiB's, against the
    // flip: both are measured again; then 279 MiB is gone between two
    // points that show, and 215 and 362 MiB, on either side, are measured
    // again too. The claims still change three times: no bracket.
    assert_eq!(found.outcome, Outcome::NotMonotonic(vec![215 * MIB, 279 * MIB, 318 * MIB, 362 * MIB]));
    let again: Vec<(u64, Option<Again>)> = oracle.measured.iter().filter(|m| m.2.is_some()).map(|m| (m.0 / MIB, m.2)).collect();
    let (figure, flip) = (Some(Again::Figure), Some(Again::Flip));
    assert_eq!(again, [(279, figure), (318, figure), (362, flip), (215, flip)]);
    // Each point measured at most twice.
    for p in &found.points {
        assert!(oracle.measured.iter().filter(|m| m.0 == p.value).count() <= 2, "{p:?}");
    }
}

#[test]
fn a_point_judged_anew_without_breaking_the_flip_moves_the_bracket() {
    // 318 MiB, which showed with 12,885 extents above 279 MiB's 2,236, is
    // gone with 1 extent when measured again: one flip still, lower down.
    let mut oracle = crafted(|value, round| match value / MIB {
        279 => Round { figure: 2236.0, ..plain(true) },
        318 if round == 1 => Round { figure: 12885.0, ..plain(true) },
        v => plain(v < 300),
    });
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    assert_eq!(values(&found), [1024, 362, 215, 279, 318, 298]);
    assert_eq!(found.outcome, Outcome::Bracket { shows_at: 298 * MIB, gone_at: 318 * MIB, narrow: true });
    assert_eq!(found.points[4].again, Some(Again::Figure));
}

#[test]
fn a_figure_still_against_the_flip_is_kept_beside_the_bracket() {
    let mut oracle = crafted(|value, _| match value / MIB {
        279 => Round { figure: 2236.0, ..plain(true) },
        318 => Round { figure: 12885.0, ..plain(true) },
        v => plain(v < 300),
    });
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    assert!(matches!(found.outcome, Outcome::Bracket { shows_at, .. } if shows_at == 318 * MIB), "{:?}", found.outcome);
    assert_eq!(found.against, [(279 * MIB, 318 * MIB)]);
    assert_eq!(oracle.measured.iter().filter(|m| m.2 == Some(Again::Figure)).count(), 2);
}

#[test]
fn a_failed_case_ends_it_as_failed_never_as_repeats_that_disagree() {
    // 362 MiB: the loop device ran out of space in the first repeat.
    let enospc = "writing: No space left on device (os error 28)";
    let mut oracle = crafted(move |value, _| Round { failed: (value == 362 * MIB).then_some(enospc), ..plain(value < 300 * MIB) });
    let found = hunt(&memory_axis(), 8, 3, Start::FromHigh, &mut oracle);
    assert_eq!(found.outcome, Outcome::Failed { value: 362 * MIB, error: enospc.into(), so_far: None });
    assert_eq!(oracle.measured.iter().filter(|m| m.0 == 362 * MIB).count(), 1, "measured again");
    assert_eq!(values(&found), [1024]);
    // After a flip: the bracket so far, not narrowed further.
    let mut oracle = crafted(move |value, _| Round { failed: (value == 279 * MIB).then_some(enospc), ..plain(value < 300 * MIB) });
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    let so_far = Some(Flip { shows_at: 215 * MIB, gone_at: 362 * MIB });
    assert_eq!(found.outcome, Outcome::Failed { value: 279 * MIB, error: enospc.into(), so_far });
}

#[test]
fn an_interrupted_hunt_says_interrupted_with_the_bracket_so_far() {
    // Stopped while the fourth point is measured: it is set aside.
    let mut oracle = Crafted { stop_after: Some(4), ..crafted(below(300 * MIB)) };
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    assert_eq!(found.outcome, Outcome::Interrupted(Some(Flip { shows_at: 215 * MIB, gone_at: 362 * MIB })));
    assert_eq!(values(&found), [1024, 362, 215]);
    // Before any flip, or before anything.
    let mut oracle = Crafted { stop_after: Some(2), ..crafted(below(300 * MIB)) };
    assert_eq!(hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle).outcome, Outcome::Interrupted(None));
    let mut oracle = Crafted { stop_after: Some(0), ..crafted(below(300 * MIB)) };
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    assert_eq!((found.outcome, oracle.measured.len()), (Outcome::Interrupted(None), 0));
}

#[test]
fn a_busy_point_is_measured_again_once_and_the_quiet_repeats_decide() {
    // 362 MiB ran busy and showed; measured again quiet, it is gone.
    // 1 GiB is busy both times.
    let mut oracle = crafted(|value, round| match value / MIB {
        362 if round == 1 => Round { busy: true, ..plain(true) },
        1024 => Round { busy: true, ..plain(false) },
        v => plain(v < 300),
    });
    let found = hunt(&memory_axis(), 8, 1, Start::FromHigh, &mut oracle);
    assert_eq!(values(&found), [1024, 362, 215, 279, 318, 298]);
    assert_eq!(found.outcome, Outcome::Bracket { shows_at: 298 * MIB, gone_at: 318 * MIB, narrow: true });
    let (top, next) = (&found.points[0], &found.points[1]);
    assert_eq!((top.ran_busy, top.busy, top.again), (true, true, Some(Again::Busy)));
    assert_eq!((next.ran_busy, next.busy, next.again, next.shows), (true, false, Some(Again::Busy), Some(false)));
    assert_eq!(oracle.measured.len(), 8);
    // Busy and mixed at once: measured again once.
    let mut oracle = crafted(|value, _| Round { busy: true, split: true, ..plain(value < 300 * MIB) });
    let found = hunt(&memory_axis(), 2, 2, Start::BothEnds, &mut oracle);
    assert_eq!(oracle.measured.len(), 4);
    assert!(found.points.iter().all(|p| p.mixed && p.busy && p.again == Some(Again::Mixed)));
}
