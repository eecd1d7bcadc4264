//! The search itself, with no measuring in it: an ordered axis of points
//! whose first is the good end and last the bad end, the samples measured
//! so far, and what to measure next.
//!
//! The order of work: both ends until they differ as the rule needs
//! ([`judge::ends_differ`]); then bisection, the point nearest the middle
//! of the bracket (the last good point and the first bad one) measured
//! until it reads good or bad; a point that cannot be judged (its build
//! or case failed) is skipped and its nearest neighbour taken, as `git
//! bisect skip` does.
//!
//! A timing drifts with the machine (a warmer CPU, another job), so values
//! measured minutes apart are not compared: a point is judged against the
//! ends measured again beside it (point, good end, bad end, one after the
//! other, a repeat each round), and the final bracket's two sides are
//! measured afresh, interleaved, and told apart against each other by the
//! same test, by at least the change asked for, before the answer is
//! given. One unlucky reading or a drift between steps cannot name a
//! wrong point: it ends `can't tell`.
//!
//! It stops with the first bad point and the last good one; with a window
//! when skipped points lie between them; `can't tell` when a point stays
//! undecided at the ceiling of repeats; `not one step` when a point lies
//! between the ends or the readings go good after bad; and with the
//! reason when the ends do not differ.

use super::judge::{self, Change, Reading, Samples};
use crate::compare::stats::mann_whitney;
use crate::record::Kind;

/// One point of the axis: a kernel or a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// What identifies it for good (a kernel's name, a commit's full id):
    /// the store's tag and the resume key.
    pub key: String,
    /// How people read it (`6.1.0-50`, `3f2a9c1`).
    pub label: String,
    /// A line more, when there is one (a commit's subject).
    pub detail: Option<String>,
}

/// What the search wants next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Measure this point (an index of the axis) again.
    Measure(usize),
    /// The search is over.
    Done(Outcome),
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The change first appears at `first_bad`; `last_good` is the point
    /// before it that does not have it. `skipped` lie between them when
    /// they could not be judged (then the change is somewhere in there).
    Found {
        /// The last good point.
        last_good: usize,
        /// The first bad point.
        first_bad: usize,
        /// Skipped points between them.
        skipped: Vec<usize>,
        /// Something the reader should know (a later change at the bad
        /// end), when there is.
        note: Option<String>,
    },
    /// The ends do not differ as the rule needs (or cannot be measured).
    Ends(String),
    /// A point stayed undecided at the ceiling of repeats.
    CantTell {
        /// The point.
        point: usize,
        /// Its figures and why.
        why: String,
    },
    /// The change is not one step: a point between the ends, or good
    /// after bad.
    NotOneStep {
        /// The points that show it.
        points: Vec<usize>,
        /// Their figures.
        why: String,
    },
}

/// Why the search asked for its last measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// An end, until the ends differ.
    End,
    /// A point of the bisection.
    Point,
    /// An end measured again beside point `.0`, to judge that point
    /// against values of the same minutes.
    Beside(usize),
    /// A side of the final bracket measured afresh beside the other.
    Confirm,
}

/// A bisect's state: the axis, what each point measured, and how it read.
#[derive(Debug, Clone)]
pub struct Search {
    points: Vec<Point>,
    samples: Vec<Samples>,
    readings: Vec<Option<Reading>>,
    change: Change,
    first: usize,
    ceiling: usize,
    asked: Option<(usize, Ask)>,
    /// A timing's ends measured beside each point: `[good, bad]`.
    beside: Vec<[Samples; 2]>,
    /// The final bracket of a timing, and its sides measured afresh.
    confirm: Option<((usize, usize), [Samples; 2])>,
}

impl Search {
    /// A search over `points` (good end first, bad end last, at least two)
    /// for `change`, measuring a timing's point `first` times at first and
    /// at most `ceiling` times.
    pub fn new(points: Vec<Point>, change: Change, first: usize, ceiling: usize) -> Search {
        let n = points.len();
        Search {
            points,
            samples: vec![Samples::default(); n],
            readings: vec![None; n],
            change,
            first: first.max(1),
            ceiling: ceiling.max(first).max(2),
            asked: None,
            beside: vec![Default::default(); n],
            confirm: None,
        }
    }

    /// The axis.
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// What `point` measured so far.
    pub fn samples(&self, point: usize) -> &Samples {
        &self.samples[point]
    }

    /// How `point` read, once it did (good, bad or skipped).
    pub fn reading(&self, point: usize) -> Option<&Reading> {
        self.readings[point].as_ref()
    }

    /// The rule.
    pub fn change(&self) -> &Change {
        &self.change
    }

    /// Why the last measure was asked for, and of which point.
    pub fn asked(&self) -> Option<(usize, Ask)> {
        self.asked
    }

    /// How many repeats the measure [`Search::next_step`] asked for takes:
    /// a timing's first measure of a point (or of an end beside it, or of
    /// a side of the final bracket) takes `first`, every later one a single
    /// repeat.
    pub fn repeats(&self) -> usize {
        let Some((point, ask)) = self.asked else { return 1 };
        if !self.is_timing() {
            return 1;
        }
        let so_far = match ask {
            Ask::End | Ask::Point => self.samples[point].measured(),
            Ask::Beside(x) => self.beside[x][self.side(point)].measured(),
            Ask::Confirm => self.confirm.as_ref().map_or(0, |(_, fresh)| fresh[self.side(point)].measured()),
        };
        if so_far == 0 { self.first } else { 1 }
    }

    /// The good end's or the bad end's slot (`0`, `1`) for `point`: the
    /// good end and a bracket's lower side are `0`.
    fn side(&self, point: usize) -> usize {
        match self.confirm {
            Some(((_, hi), _)) if matches!(self.asked, Some((_, Ask::Confirm))) => usize::from(point == hi),
            _ => usize::from(point != 0),
        }
    }

    /// Add what one measurement of `point` gave (the one asked for last,
    /// or, when resuming, whatever was stored).
    pub fn add(&mut self, point: usize, measured: Samples) {
        let side = self.side(point);
        match self.asked {
            Some((p, Ask::Beside(x))) if p == point => merge(&mut self.beside[x][side], &measured),
            Some((p, Ask::Confirm)) if p == point => {
                if let Some((_, fresh)) = &mut self.confirm {
                    merge(&mut fresh[side], &measured);
                }
            }
            _ => self.readings[point] = None,
        }
        merge(&mut self.samples[point], &measured);
    }

    /// Points measured between the ends: the steps of the bisection.
    pub fn steps(&self) -> usize {
        let last = self.points.len() - 1;
        (1..last).filter(|&i| self.samples[i].measured() > 0 || self.samples[i].failed.is_some()).count()
    }

    /// How many steps are left at most, if every point reads at once:
    /// log2 of the points strictly inside the bracket, rounded up.
    pub fn steps_left(&self) -> usize {
        let (lo, hi) = self.bracket();
        let inside = (lo + 1..hi).filter(|&i| !matches!(self.readings[i], Some(Reading::Skip(_)))).count();
        (usize::BITS - inside.leading_zeros()) as usize
    }

    /// The bracket: the last good point before the first bad one.
    pub fn bracket(&self) -> (usize, usize) {
        let last = self.points.len() - 1;
        let hi = (0..=last).find(|&i| self.readings[i] == Some(Reading::Bad)).unwrap_or(last);
        let lo = (0..hi).rev().find(|&i| self.readings[i] == Some(Reading::Good)).unwrap_or(0);
        (lo, hi)
    }

    /// What to do next.
    pub fn next_step(&mut self) -> Next {
        let next = self.choose();
        self.asked = match next {
            Next::Measure(i) => Some((i, self.asked_now(i))),
            Next::Done(_) => None,
        };
        next
    }

    /// Why `i` is measured, as [`Search::choose`] left it.
    fn asked_now(&self, i: usize) -> Ask {
        match self.asked {
            Some((p, ask @ (Ask::Beside(_) | Ask::Confirm))) if p == i => ask,
            _ if i == 0 || i == self.points.len() - 1 => Ask::End,
            _ => Ask::Point,
        }
    }

    /// The next measure, or the end.
    fn choose(&mut self) -> Next {
        let last = self.points.len() - 1;
        self.asked = None;
        if let Some(next) = self.ends(last) {
            return next;
        }
        self.readings[0] = Some(Reading::Good);
        self.readings[last] = Some(Reading::Bad);
        // Read what was measured but not read yet (a resumed search).
        for i in 1..last {
            if self.readings[i].is_none() && (self.samples[i].measured() > 0 || self.samples[i].failed.is_some()) {
                if let Some(end) = self.beside_wanted(i) {
                    return self.ask(end, Ask::Beside(i));
                }
                match self.read(i) {
                    Reading::More => return Next::Measure(i),
                    other => {
                        if let Some(done) = self.settle(i, other) {
                            return Next::Done(done);
                        }
                    }
                }
            }
        }
        if let Some(done) = self.good_after_bad() {
            return Next::Done(done);
        }
        let (lo, hi) = self.bracket();
        let inside: Vec<usize> = (lo + 1..hi).filter(|&i| self.readings[i].is_none()).collect();
        if let Some(&mid) = inside.iter().min_by_key(|&&i| (2 * i).abs_diff(lo + hi)) {
            return Next::Measure(mid);
        }
        self.confirm(lo, hi)
    }

    /// The ends first: `None` once they differ as the rule needs.
    fn ends(&self, last: usize) -> Option<Next> {
        let (good, bad) = (&self.samples[0], &self.samples[last]);
        for (end, s) in [(0, good), (last, bad)] {
            // An exact figure or a count decides a point from one run, so
            // each end is measured twice: a count the machine's timing
            // moves across the threshold at an end cannot place a step.
            let once = s.measured() == 1 && s.failed.is_none();
            if s.measured() == 0 && s.failed.is_none() || once && self.is_exact() {
                return Some(Next::Measure(end));
            }
        }
        match judge::ends_differ(&self.change, good, bad, self.ceiling) {
            Ok(()) => None,
            Err(Reading::More) => Some(Next::Measure(if good.measured() <= bad.measured() { 0 } else { last })),
            Err(Reading::CantTell(why)) => Some(Next::Done(Outcome::Ends(why))),
            Err(other) => Some(Next::Done(Outcome::Ends(format!("{other:?}")))),
        }
    }

    /// How point `i` reads now (a timing against the ends measured beside it).
    fn read(&self, i: usize) -> Reading {
        self.read_up_to(i, self.ceiling)
    }

    /// How point `i` reads now, with no ceiling of repeats: for the line
    /// said after a step.
    pub fn read_now(&self, i: usize) -> Reading {
        self.read_up_to(i, usize::MAX)
    }

    fn read_up_to(&self, i: usize, ceiling: usize) -> Reading {
        let last = self.points.len() - 1;
        let [good, bad] = if self.is_timing() { [&self.beside[i][0], &self.beside[i][1]] } else { [&self.samples[0], &self.samples[last]] };
        judge::read(&self.change, good, bad, &self.samples[i], ceiling)
    }

    /// The end a timing's point `i` wants measured beside it before it is
    /// read: each end as often as the point, the good end first.
    fn beside_wanted(&self, i: usize) -> Option<usize> {
        if !self.is_timing() || self.samples[i].failed.is_some() {
            return None;
        }
        let n = self.samples[i].measured();
        let last = self.points.len() - 1;
        [0, last].into_iter().zip(&self.beside[i]).find(|(_, s)| s.measured() < n && s.failed.is_none()).map(|(end, _)| end)
    }

    /// Ask for `point` to be measured, for `why`.
    fn ask(&mut self, point: usize, why: Ask) -> Next {
        self.asked = Some((point, why));
        Next::Measure(point)
    }

    /// Keep a final reading of point `i`; the outcome when it ends the search.
    fn settle(&mut self, i: usize, reading: Reading) -> Option<Outcome> {
        match reading {
            Reading::CantTell(why) => Some(Outcome::CantTell { point: i, why }),
            Reading::Between(why) => Some(Outcome::NotOneStep {
                points: vec![i],
                why: format!("{} lies between the ends: {why}", self.points[i].label),
            }),
            settled => {
                self.readings[i] = Some(settled);
                None
            }
        }
    }

    /// A good reading after a bad one: the change is not one step.
    fn good_after_bad(&self) -> Option<Outcome> {
        let first_bad = (0..self.points.len()).find(|&i| self.readings[i] == Some(Reading::Bad))?;
        let good_after = (first_bad + 1..self.points.len()).find(|&i| self.readings[i] == Some(Reading::Good))?;
        let (a, b) = (&self.points[first_bad].label, &self.points[good_after].label);
        Some(Outcome::NotOneStep {
            points: vec![first_bad, good_after],
            why: format!("{a} reads bad and the later {b} good again: the change comes and goes"),
        })
    }

    /// The bracket is as narrow as it gets: for a timing its two sides,
    /// measured afresh one after the other, must differ by the test and by
    /// the change asked for, the right way round, before it is the answer.
    fn confirm(&mut self, lo: usize, hi: usize) -> Next {
        let skipped: Vec<usize> = (lo + 1..hi).collect();
        if self.is_timing() {
            if self.confirm.as_ref().is_none_or(|(pair, _)| *pair != (lo, hi)) {
                self.confirm = Some(((lo, hi), Default::default()));
            }
            let Some((_, [a, b])) = &self.confirm else { unreachable!("set above") };
            let (na, nb) = (a.measured(), b.measured());
            if na == 0 || na < nb {
                return self.ask(lo, Ask::Confirm);
            }
            if nb < na {
                return self.ask(hi, Ask::Confirm);
            }
            let told = self.told_apart(a, b);
            if let Err(why) = told {
                if na < self.ceiling {
                    return self.ask(lo, Ask::Confirm);
                }
                let why = format!(
                    "{} and {}, measured again one after the other {na} times each, are not told apart: {why}",
                    self.points[lo].label, self.points[hi].label
                );
                return Next::Done(Outcome::CantTell { point: hi, why });
            }
        }
        Next::Done(Outcome::Found { last_good: lo, first_bad: hi, skipped, note: self.later_change(hi) })
    }

    /// Whether a bracket's fresh sides `a` (good) and `b` (bad) differ as
    /// the ends do: by the rank-sum test, by at least the change asked for,
    /// the same way; `Err` with the figures when not.
    fn told_apart(&self, a: &Samples, b: &Samples) -> Result<(), String> {
        let last = self.points.len() - 1;
        let (va, vb) = (a.deciding(), b.deciding());
        let (Some(ma), Some(mb), Some(g), Some(bad)) = (a.median(), b.median(), self.samples[0].median(), self.samples[last].median())
        else {
            return Err("nothing measured".into());
        };
        let p = mann_whitney(&va, &vb).map_or(1.0, |t| t.p);
        let least = match &self.change {
            Change::Figure { threshold: Some(judge::Threshold::Relative(r)), .. } => *r,
            _ => judge::DEFAULT_TIMING_CHANGE,
        };
        let change = if ma != 0.0 { (mb - ma) / ma.abs() } else { f64::INFINITY };
        let way = (mb - ma).signum() == (bad - g).signum();
        if p < judge::ALPHA && change.abs() >= least && way {
            return Ok(());
        }
        Err(format!(
            "medians {} and {} ({:+.1}%, p = {}); the ends differ by {:+.1}%, the change asked for is at least {:.0}% at p < {}",
            judge::shown(ma),
            judge::shown(mb),
            change * 100.0,
            judge::p_shown(p),
            (bad / g - 1.0) * 100.0,
            least * 100.0,
            judge::ALPHA
        ))
    }

    /// The final bracket of a timing measured afresh: its two sides'
    /// samples, once measured.
    pub fn confirmed(&self) -> Option<((usize, usize), &[Samples; 2])> {
        self.confirm.as_ref().map(|(pair, fresh)| (*pair, fresh))
    }

    /// The final bracket's fresh sides in words: medians, change, p and
    /// repeats, once both were measured.
    pub fn confirmation(&self) -> Option<String> {
        let ((lo, hi), [a, b]) = self.confirmed()?;
        let (ma, mb) = (a.median()?, b.median()?);
        let p = mann_whitney(&a.deciding(), &b.deciding()).map_or(1.0, |t| t.p);
        Some(format!(
            "{} {} against {} {} ({:+.1}%, p = {}), measured again one after the other, {} and {} repeats",
            self.points[lo].label,
            judge::shown(ma),
            self.points[hi].label,
            judge::shown(mb),
            (mb / ma - 1.0) * 100.0,
            judge::p_shown(p),
            a.measured(),
            b.measured()
        ))
    }

    /// The ends' values measured beside point `i` (a timing's): `[good, bad]`.
    pub fn beside(&self, i: usize) -> &[Samples; 2] {
        &self.beside[i]
    }

    /// An exact figure at the first bad point far from the bad end's: a
    /// later change moved it again.
    fn later_change(&self, first_bad: usize) -> Option<String> {
        let last = self.points.len() - 1;
        if !self.is_exact() || first_bad == last || matches!(self.change, Change::Verdict { .. }) {
            return None;
        }
        let (g, b, x) = (self.samples[0].median()?, self.samples[last].median()?, self.samples[first_bad].median()?);
        ((x - b).abs() > 0.1 * (b - g).abs()).then(|| {
            format!(
                "{} reads {} where the bad end reads {}: a later change moved the figure again",
                self.points[first_bad].label,
                judge::shown(x),
                judge::shown(b)
            )
        })
    }

    /// Whether the rule weighs an exact figure.
    fn is_exact(&self) -> bool {
        self.judged() == Some(Kind::Exact)
    }

    /// Whether the rule weighs a timing.
    fn is_timing(&self) -> bool {
        self.judged() == Some(Kind::Timing)
    }

    /// How the rule's figure is judged, by what the ends measured
    /// ([`judge::kind`]); `None` for a verdict's word.
    pub fn judged(&self) -> Option<Kind> {
        let last = self.points.len() - 1;
        matches!(self.change, Change::Figure { .. }).then(|| judge::kind(&self.samples[0], &self.samples[last]))
    }
}

/// Add `measured` to `into`.
fn merge(into: &mut Samples, measured: &Samples) {
    into.quiet.extend(&measured.quiet);
    into.busy.extend(&measured.busy);
    into.words.extend(measured.words.iter().cloned());
    into.kind = into.kind.or(measured.kind);
    if measured.failed.is_some() {
        into.failed.clone_from(&measured.failed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(n: usize) -> Vec<Point> {
        (1..=n).map(|i| Point { key: format!("c{i}"), label: format!("c{i}"), detail: None }).collect()
    }

    fn exact(v: f64) -> Samples {
        Samples { quiet: vec![v], kind: Some(Kind::Exact), ..Samples::default() }
    }

    /// Run a search to its end, `measure` giving each point's samples;
    /// returns the outcome and the points measured, in order.
    fn drive(search: &mut Search, measure: &mut dyn FnMut(usize) -> Samples) -> (Outcome, Vec<usize>) {
        drive_asked(search, &mut |i, _, _| measure(i))
    }

    /// [`drive`], `measure` told why each point is measured and how often.
    fn drive_asked(search: &mut Search, measure: &mut dyn FnMut(usize, Ask, usize) -> Samples) -> (Outcome, Vec<usize>) {
        let mut order = Vec::new();
        for _ in 0..1000 {
            match search.next_step() {
                Next::Measure(i) => {
                    order.push(i);
                    let (_, ask) = search.asked().expect("a measure is asked for a reason");
                    let s = measure(i, ask, search.repeats());
                    search.add(i, s);
                }
                Next::Done(outcome) => return (outcome, order),
            }
        }
        panic!("the search never ended: {order:?}");
    }

    fn figure() -> Change {
        Change::Figure { name: "journal_commits".into(), threshold: None }
    }

    #[test]
    fn sixteen_commits_with_the_change_at_the_seventh_take_four_steps() {
        let mut search = Search::new(axis(16), figure(), 1, 12);
        let (outcome, order) = drive(&mut search, &mut |i| exact(if i >= 6 { 40.0 } else { 2.0 }));
        assert_eq!(outcome, Outcome::Found { last_good: 5, first_bad: 6, skipped: vec![], note: None });
        assert_eq!(order[..4], [0, 0, 15, 15], "the ends first, twice each");
        assert_eq!(search.steps(), 4, "{order:?}");
        assert!(order.len() <= 8);
    }

    #[test]
    fn every_position_of_the_change_is_found() {
        for at in 1..16 {
            let mut search = Search::new(axis(16), figure(), 1, 12);
            let (outcome, _) = drive(&mut search, &mut |i| exact(if i >= at { 40.0 } else { 2.0 }));
            assert_eq!(outcome, Outcome::Found { last_good: at - 1, first_bad: at, skipped: vec![], note: None }, "at {at}");
            assert!(search.steps() <= 4, "at {at}: {} steps", search.steps());
        }
    }

    #[test]
    fn a_skipped_point_is_passed_over_and_named_when_it_hides_the_answer() {
        let mut search = Search::new(axis(8), figure(), 1, 12);
        let mut measure = |i: usize| {
            if i == 4 {
                Samples { failed: Some("the build exited 2".into()), ..Samples::default() }
            } else {
                exact(if i >= 4 { 40.0 } else { 2.0 })
            }
        };
        let (outcome, _) = drive(&mut search, &mut measure);
        assert_eq!(outcome, Outcome::Found { last_good: 3, first_bad: 5, skipped: vec![4], note: None });
    }

    #[test]
    fn ends_that_agree_stop_at_once() {
        let mut search = Search::new(axis(8), figure(), 1, 12);
        let (outcome, order) = drive(&mut search, &mut |_| exact(40.0));
        assert!(matches!(outcome, Outcome::Ends(ref why) if why.contains("do not differ")), "{outcome:?}");
        assert_eq!(order, [0, 0, 7, 7]);
    }

    #[test]
    fn a_later_second_change_is_said_beside_the_answer() {
        let mut search = Search::new(axis(8), figure(), 1, 12);
        let (outcome, _) = drive(&mut search, &mut |i| {
            exact(match i {
                0..=2 => 2.0,
                3..=5 => 60.0,
                _ => 80.0,
            })
        });
        let Outcome::Found { first_bad: 3, note: Some(note), .. } = outcome else { panic!("{outcome:?}") };
        assert!(note.contains("reads 60 where the bad end reads 80"), "{note}");
    }

    #[test]
    fn a_timing_change_is_found_and_its_sides_confirmed_against_each_other() {
        let mut search = Search::new(axis(16), figure(), 1, 12);
        let mut rng = crate::compare::stats::SplitMix64::new(7);
        let mut noise = move || (rng.next_u64() % 1000) as f64 / 1000.0 * 0.04;
        let mut measure = |i: usize| {
            let base = if i >= 10 { 1.25 } else { 1.0 };
            Samples { quiet: (0..5).map(|_| base + noise()).collect(), kind: Some(Kind::Timing), ..Samples::default() }
        };
        let (outcome, _) = drive(&mut search, &mut measure);
        assert_eq!(outcome, Outcome::Found { last_good: 9, first_bad: 10, skipped: vec![], note: None });
    }

    #[test]
    fn a_timing_lost_in_noise_is_cant_tell_never_a_point() {
        // Every point from one distribution, except that the bad end is
        // measured once far off: the ends differ, no point can be placed.
        let mut rng = crate::compare::stats::SplitMix64::new(11);
        let mut search = Search::new(axis(8), figure(), 1, 8);
        let mut measure = |i: usize| {
            let v = 1.0 + (rng.next_u64() % 1000) as f64 / 1000.0 * 0.5;
            let v = if i == 7 { v + 2.0 } else { v + if i >= 4 { 1.0 } else { 0.0 } };
            Samples { quiet: vec![v], kind: Some(Kind::Timing), ..Samples::default() }
        };
        let (outcome, _) = drive(&mut search, &mut measure);
        assert!(matches!(outcome, Outcome::NotOneStep { .. } | Outcome::CantTell { .. }), "{outcome:?}");
    }

    #[test]
    fn good_after_bad_is_not_one_step() {
        let mut search = Search::new(axis(8), figure(), 1, 12);
        for _ in 0..2 {
            search.add(0, exact(2.0));
            search.add(7, exact(40.0));
        }
        search.add(2, exact(40.0));
        search.add(5, exact(2.0));
        let Next::Done(Outcome::NotOneStep { points, why }) = search.next_step() else { panic!() };
        assert_eq!(points, [2, 5]);
        assert!(why.contains("comes and goes"), "{why}");
    }

    #[test]
    fn a_resumed_search_reads_what_was_stored_and_goes_on_from_there() {
        let mut first = Search::new(axis(16), figure(), 1, 12);
        let truth = |i: usize| exact(if i >= 6 { 40.0 } else { 2.0 });
        let mut measured = Vec::new();
        for _ in 0..4 {
            let Next::Measure(i) = first.next_step() else { panic!() };
            first.add(i, truth(i));
            measured.push(i);
        }
        // Started again: the stored samples, then the rest.
        let mut again = Search::new(axis(16), figure(), 1, 12);
        for &i in &measured {
            again.add(i, truth(i));
        }
        let (outcome, order) = drive(&mut again, &mut |i| truth(i));
        assert!(order.iter().all(|i| !measured.contains(i)), "measured again: {order:?} after {measured:?}");
        assert_eq!(outcome, Outcome::Found { last_good: 5, first_bad: 6, skipped: vec![], note: None });
    }

    /// Timing values of a program whose points from `at` on are 25% slower,
    /// on a machine that drifts `drift` per measure (slower, or faster when
    /// negative), with 1% noise: `repeats` values a measure.
    fn drifting(at: usize, drift: f64, seed: u64) -> impl FnMut(usize, Ask, usize) -> Samples {
        let mut rng = crate::compare::stats::SplitMix64::new(seed);
        let mut clock = 0.0;
        move |i, _, repeats| {
            clock += 1.0;
            let base = if i >= at { 1.25 } else { 1.0 };
            let quiet = (0..repeats).map(|_| base * (1.0 + drift * clock) * (1.0 + (rng.next_u64() % 1000) as f64 / 100_000.0)).collect();
            Samples { quiet, kind: Some(Kind::Timing), ..Samples::default() }
        }
    }

    #[test]
    fn a_timing_is_judged_against_ends_measured_beside_it_so_drift_names_no_wrong_point() {
        // A machine 1% slower (or faster) each measure: over a bisect of
        // some forty measures that is more than the change itself, so
        // values measured minutes apart would place it wrongly.
        for (seed, drift) in (0..12).flat_map(|seed| [(seed, 0.01), (seed, -0.008)]) {
            let mut search = Search::new(axis(16), figure(), 5, 12);
            let (outcome, order) = drive_asked(&mut search, &mut drifting(10, drift, seed));
            match outcome {
                Outcome::Found { last_good: 9, first_bad: 10, .. } | Outcome::CantTell { .. } => {}
                other => panic!("seed {seed}, drift {drift}: {other:?} after {order:?}"),
            }
        }
        // Without drift it is found, each point's ends measured beside it.
        let mut search = Search::new(axis(16), figure(), 5, 12);
        let (outcome, order) = drive_asked(&mut search, &mut drifting(10, 0.0, 3));
        assert_eq!(outcome, Outcome::Found { last_good: 9, first_bad: 10, skipped: vec![], note: None }, "{order:?}");
        let probed: Vec<usize> = (1..15).filter(|&i| search.samples(i).measured() > 0).collect();
        for &i in probed.iter().filter(|&&i| i != 9 && i != 10) {
            assert_eq!(search.beside(i).iter().map(Samples::measured).collect::<Vec<_>>(), [search.samples(i).measured(); 2]);
        }
        let Some(((9, 10), [a, b])) = search.confirmed() else { panic!("{:?}", search.confirmed()) };
        assert!(a.measured() >= 5 && a.measured() == b.measured());
    }

    #[test]
    fn a_bracket_whose_sides_do_not_differ_when_measured_again_is_cant_tell() {
        // Point 10 reads like the good end while it is bisected (a fluke),
        // but measured again beside point 11 it is as slow as that.
        let mut truth = drifting(10, 0.0, 5);
        let mut measure = |i: usize, ask: Ask, repeats: usize| {
            let fluke = i == 10 && ask == Ask::Point;
            truth(if fluke { 0 } else { i }, ask, repeats)
        };
        let mut search = Search::new(axis(16), figure(), 5, 8);
        let (outcome, _) = drive_asked(&mut search, &mut measure);
        let Outcome::CantTell { point: 11, why } = outcome else { panic!("{outcome:?}") };
        assert!(why.contains("c11 and c12, measured again one after the other 8 times each, are not told apart"), "{why}");
    }

    #[test]
    fn a_timing_asks_for_its_first_repeats_once_a_measure_then_one_at_a_time() {
        let mut search = Search::new(axis(8), figure(), 5, 12);
        let mut asks = Vec::new();
        let mut truth = drifting(4, 0.0, 1);
        drive_asked(&mut search, &mut |i, ask, repeats| {
            asks.push((i, ask, repeats));
            truth(i, ask, repeats)
        });
        // The good end once before its kind is known, then five at a time.
        assert_eq!(asks[..2], [(0, Ask::End, 1), (7, Ask::End, 5)]);
        let first_point = asks.iter().position(|a| a.1 == Ask::Point).unwrap();
        let (x, _, n) = asks[first_point];
        assert_eq!(n, 5);
        assert_eq!(asks[first_point + 1..first_point + 3], [(0, Ask::Beside(x), 5), (7, Ask::Beside(x), 5)]);
    }
}
