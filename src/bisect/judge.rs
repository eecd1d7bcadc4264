//! How one point of a bisect is judged against the two ends: the rule the
//! user named (`--figure NAME [--threshold T]` or `--verdict WORD`) and the
//! samples measured there, with no measuring in it.
//!
//! - **An exact figure or a count** (a layout figure; journal commits,
//!   which the machine's timing can move by one or two) is judged from
//!   one run: its value against the threshold. Without `--threshold` the
//!   threshold is midway between the two ends' values. A value within
//!   [`NEAR`] of the ends' distance from the threshold, or one measured on
//!   a busy machine, is measured again; repeats on both sides of the
//!   threshold make the point `can't tell`.
//! - **A timing** is judged with the Mann–Whitney U test against each end's
//!   samples: `bad` when the point differs from the good end (p < α) and
//!   not from the bad end, with its median on the bad end's side of the
//!   midpoint; `good` the other way round. Otherwise one more repeat is
//!   measured, up to the ceiling, and then the point is `can't tell`, or
//!   `between` when it differs from both ends (not one step). The ends
//!   themselves must differ (p < α and a change of at least the threshold,
//!   5% by default) before any point is judged.
//! - **A verdict's word** (`shows`, `gone`…) decides as it reads at the
//!   point; `mixed`, `marginal` or `unknown` is measured again once.
//!
//! Busy cases (measured while others used the machine) are set aside when
//! quiet ones exist, and a point that has only busy ones is measured again.

use crate::compare::stats::{mann_whitney, median};
use crate::record::Kind;

/// The significance level of every test a bisect makes.
pub const ALPHA: f64 = 0.01;

/// A value closer to the threshold than this share of the ends' distance
/// is near it: measured again (three values in all) before it decides.
pub const NEAR: f64 = 0.1;

/// An exact figure's ends whose repeats spread over more than this share
/// of their distance make it judged as a timing.
pub const NOISY: f64 = 0.25;

/// The least relative change of a timing that counts, when the user
/// names none.
pub const DEFAULT_TIMING_CHANGE: f64 = 0.05;

/// What counts as the change being looked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A figure, and the value or relative change that separates good
    /// from bad.
    Figure {
        /// The figure's name (`journal_commits`, `wall_s`).
        name: String,
        /// The threshold, when given.
        threshold: Option<Threshold>,
    },
    /// A scenario's verdict reading this word (`shows`) is bad.
    Verdict {
        /// The word.
        word: String,
    },
}

/// A `--threshold`: a value for an exact figure, a least relative change
/// for a timing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// The value between good and bad, in the figure's base unit.
    Value(f64),
    /// The least relative change that counts (0.05 for `5%`).
    Relative(f64),
}

impl Threshold {
    /// Read `12`, `0.5`, `5%` or `-5%` (a relative change is a size: its
    /// sign is ignored).
    pub fn parse(text: &str) -> Result<Threshold, String> {
        let text = text.trim();
        if let Some(pct) = text.strip_suffix('%') {
            let value: f64 = pct.trim().parse().map_err(|_| format!("{text}: not a percentage (as in 5%)"))?;
            if !value.is_finite() || value == 0.0 {
                return Err(format!("{text}: a change of 0% cannot be told from noise; give at least 1%"));
            }
            return Ok(Threshold::Relative(value.abs() / 100.0));
        }
        let value: f64 = text.parse().map_err(|_| format!("{text}: not a number or a percentage (as in 40 or 5%)"))?;
        if !value.is_finite() {
            return Err(format!("{text}: not a finite number"));
        }
        Ok(Threshold::Value(value))
    }
}

/// What was measured at one point, for the rule to judge.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// The figure's values from quiet cases.
    pub quiet: Vec<f64>,
    /// Its values from cases measured on a busy machine.
    pub busy: Vec<f64>,
    /// The figure's kind, once a case has reported it.
    pub kind: Option<Kind>,
    /// The verdict words read at the point, a case's run each.
    pub words: Vec<String>,
    /// Why the point cannot be judged at all (a build or a case failed),
    /// when it cannot.
    pub failed: Option<String>,
}

impl Samples {
    /// The values that decide: the quiet ones when they are at least half
    /// of those measured, else all of them (a machine busy most of the
    /// time leaves too few quiet values to test, and its busy ones are as
    /// good as any it gives).
    pub fn deciding(&self) -> Vec<f64> {
        if self.busy_decide() { self.quiet.iter().chain(&self.busy).copied().collect() } else { self.quiet.clone() }
    }

    /// Whether the busy values decide too ([`crate::record::busy::busy_ones_decide`]).
    fn busy_decide(&self) -> bool {
        crate::record::busy::busy_ones_decide(self.quiet.len(), self.busy.len())
    }

    /// How the deciding values were chosen, for messages: `` or `, busy
    /// ones included`.
    fn which(&self) -> &'static str {
        if self.busy_decide() { ", busy ones included" } else { "" }
    }

    /// How many values were measured, busy ones included.
    pub fn measured(&self) -> usize {
        self.quiet.len() + self.busy.len()
    }

    /// The median of the deciding values.
    pub fn median(&self) -> Option<f64> {
        median(&self.deciding())
    }
}

/// How a point reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    /// Like the good end.
    Good,
    /// Like the bad end: the change is there.
    Bad,
    /// Needs another repeat before it can be read.
    More,
    /// Measured as often as allowed, and still not told apart.
    CantTell(String),
    /// Differs from both ends: the change is not one step.
    Between(String),
    /// Cannot be judged (build or case failed): skipped, as `git bisect
    /// skip` does.
    Skip(String),
}

impl Reading {
    /// The word for a reading people and `--json` see: `good`, `bad`,
    /// `skip`, or `undecided` for the rest.
    pub fn word(&self) -> &'static str {
        match self {
            Reading::Good => "good",
            Reading::Bad => "bad",
            Reading::Skip(_) => "skip",
            _ => "undecided",
        }
    }
}

/// The threshold an exact figure is judged against: the one given, else
/// midway between the ends' medians.
pub fn exact_threshold(threshold: Option<Threshold>, good: f64, bad: f64) -> f64 {
    match threshold {
        Some(Threshold::Value(v)) => v,
        _ => (good + bad) / 2.0,
    }
}

/// Whether the ends differ as the rule needs before any point is judged:
/// `Ok(())`, or why not (`Err(More)` asks for another repeat of each end).
pub fn ends_differ(change: &Change, good: &Samples, bad: &Samples, ceiling: usize) -> Result<(), Reading> {
    for (end, samples) in [("good", good), ("bad", bad)] {
        if let Some(why) = &samples.failed {
            return Err(Reading::CantTell(format!("the {end} end cannot be measured: {why}")));
        }
    }
    match change {
        Change::Verdict { word } => {
            let (g, b) = (read_word(good, word), read_word(bad, word));
            match (g, b) {
                (Reading::Good, Reading::Bad) => Ok(()),
                (Reading::More, _) | (_, Reading::More) => Err(Reading::More),
                _ => Err(Reading::CantTell(format!(
                    "the ends do not differ as asked: the good end reads {}, the bad end {} (bad is `{word}`)",
                    words(good),
                    words(bad)
                ))),
            }
        }
        Change::Figure { threshold, .. } => match kind(good, bad) {
            Kind::Exact => {
                let (Some(g), Some(b)) = (good.median(), bad.median()) else {
                    return Err(Reading::More);
                };
                let t = exact_threshold(*threshold, g, b);
                if g == b || (g - t).signum() == (b - t).signum() || g == t || b == t {
                    return Err(Reading::CantTell(format!(
                        "the ends do not differ across the threshold: good {}, bad {}, threshold {}",
                        shown(g),
                        shown(b),
                        shown(t)
                    )));
                }
                for (end, s, median) in [("good", good, g), ("bad", bad, b)] {
                    let across = s.deciding().iter().any(|v| (v - t).signum() != (median - t).signum());
                    if across {
                        return Err(Reading::CantTell(format!(
                            "the {end} end's own repeats fall on both sides of the threshold {} ({}): \
                             the figure moves with the machine's timing there, not by a step",
                            shown(t),
                            list(&s.deciding())
                        )));
                    }
                }
                Ok(())
            }
            Kind::Timing => {
                let (g, b) = (&good.deciding(), &bad.deciding());
                let least = match threshold {
                    Some(Threshold::Relative(r)) => *r,
                    _ => DEFAULT_TIMING_CHANGE,
                };
                let (Some(mg), Some(mb)) = (median(g), median(b)) else {
                    return Err(Reading::More);
                };
                let p = mann_whitney(g, b).map_or(1.0, |t| t.p);
                let change = if mg != 0.0 { (mb - mg).abs() / mg.abs() } else { f64::INFINITY };
                if p < ALPHA && change >= least {
                    return Ok(());
                }
                if good.measured().min(bad.measured()) < ceiling {
                    return Err(Reading::More);
                }
                Err(Reading::CantTell(format!(
                    "the ends are not told apart after {} repeats each ({} and {} deciding{}): medians {} and {} \
                     ({:+.1}%, p = {}), the change asked for is at least {:.0}% at p < {ALPHA}",
                    good.measured().min(bad.measured()),
                    g.len(),
                    b.len(),
                    if good.which().is_empty() { bad.which() } else { good.which() },
                    shown(mg),
                    shown(mb),
                    (mb / mg - 1.0) * 100.0,
                    p_shown(p),
                    least * 100.0
                )))
            }
        },
    }
}

/// How `point` reads between `good` and `bad` (ends that differ), with
/// `ceiling` values the most a point is measured.
pub fn read(change: &Change, good: &Samples, bad: &Samples, point: &Samples, ceiling: usize) -> Reading {
    if let Some(why) = &point.failed {
        return Reading::Skip(why.clone());
    }
    match change {
        Change::Verdict { word } => match read_word(point, word) {
            Reading::More if point.words.len() >= 2 => {
                Reading::CantTell(format!("its verdict reads {} however often it is measured", words(point)))
            }
            other => other,
        },
        Change::Figure { threshold, .. } => match kind(good, bad) {
            Kind::Exact => read_exact(*threshold, good, bad, point),
            Kind::Timing => read_timing(good, bad, point, ceiling),
        },
    }
}

/// An exact figure: every deciding value on one side of the threshold.
fn read_exact(threshold: Option<Threshold>, good: &Samples, bad: &Samples, point: &Samples) -> Reading {
    let (Some(g), Some(b)) = (good.median(), bad.median()) else {
        return Reading::More;
    };
    let t = exact_threshold(threshold, g, b);
    let values = &point.deciding();
    if values.is_empty() || point.quiet.is_empty() && point.measured() < 2 {
        // Nothing yet, or one busy value only: measure again (once).
        return Reading::More;
    }
    let near = values.iter().any(|&v| (v - t).abs() < NEAR * (b - g).abs());
    if near && point.measured() < 3 {
        // Within the margin of the threshold: one run does not decide.
        return Reading::More;
    }
    let bad_side = |v: f64| (v - t).signum() == (b - t).signum();
    let on_bad = values.iter().filter(|&&v| bad_side(v)).count();
    if on_bad == values.len() {
        Reading::Bad
    } else if on_bad == 0 {
        Reading::Good
    } else if point.measured() < 4 {
        Reading::More
    } else {
        Reading::CantTell(format!("its repeats fall on both sides of the threshold {}: {}", shown(t), list(values)))
    }
}

/// A timing: the point's samples against each end's by the rank-sum test.
fn read_timing(good: &Samples, bad: &Samples, point: &Samples, ceiling: usize) -> Reading {
    let (g, b, x) = (&good.deciding(), &bad.deciding(), &point.deciding());
    let (Some(mg), Some(mb), Some(mx)) = (median(g), median(b), median(x)) else {
        return Reading::More;
    };
    let p_good = mann_whitney(x, g).map_or(1.0, |t| t.p);
    let p_bad = mann_whitney(x, b).map_or(1.0, |t| t.p);
    let bad_side = (mx - (mg + mb) / 2.0).signum() == (mb - mg).signum();
    let enough = x.len() >= 2;
    match (p_good < ALPHA, p_bad < ALPHA) {
        (true, false) if bad_side && enough => return Reading::Bad,
        (false, true) if !bad_side && enough => return Reading::Good,
        _ => {}
    }
    if point.measured() < ceiling {
        return Reading::More;
    }
    let figures = format!(
        "median {} against {} (good) and {} (bad) after {} repeats; p = {} against the good end, {} against the bad",
        shown(mx),
        shown(mg),
        shown(mb),
        point.measured(),
        p_shown(p_good),
        p_shown(p_bad)
    );
    if p_good < ALPHA && p_bad < ALPHA { Reading::Between(figures) } else { Reading::CantTell(figures) }
}

/// A verdict's word at a point: bad when it reads `word`, good when it
/// reads the other definite word, else another measure.
fn read_word(samples: &Samples, word: &str) -> Reading {
    let Some(last) = samples.words.last() else {
        return Reading::More;
    };
    let definite = ["shows", "gone"];
    if last == word {
        Reading::Bad
    } else if definite.contains(&last.as_str()) {
        Reading::Good
    } else {
        Reading::More
    }
}

/// How the figure is judged: as the ends report its kind (exact when
/// neither says), except that an exact figure or count whose ends' own
/// repeats spread over more than [`NOISY`] of the distance between them
/// is judged as a timing (repeats and the rank-sum test): one run of it
/// is not far enough from the threshold to decide a point.
pub fn kind(good: &Samples, bad: &Samples) -> Kind {
    let reported = good.kind.or(bad.kind).unwrap_or(Kind::Exact);
    let (Some(g), Some(b)) = (good.median(), bad.median()) else { return reported };
    let spread = |s: &Samples| {
        let v = s.deciding();
        v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
    };
    let noisy = spread(good).max(spread(bad)) > NOISY * (b - g).abs();
    if reported == Kind::Exact && noisy && good.measured().min(bad.measured()) >= 2 { Kind::Timing } else { reported }
}

/// The words a point read, joined.
fn words(samples: &Samples) -> String {
    if samples.words.is_empty() { "nothing".into() } else { samples.words.join(", ") }
}

/// Values as a short list.
fn list(values: &[f64]) -> String {
    values.iter().map(|v| shown(*v)).collect::<Vec<_>>().join(", ")
}

/// A value with as many digits as it needs (4 significant).
pub fn shown(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{v:.digits$}")
}

/// A p-value as people read it.
pub fn p_shown(p: f64) -> String {
    if p < 0.0001 { "< 0.0001".into() } else { format!("{p:.4}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(values: &[f64]) -> Samples {
        Samples { quiet: values.to_vec(), kind: Some(Kind::Exact), ..Samples::default() }
    }

    fn timing(values: &[f64]) -> Samples {
        Samples { quiet: values.to_vec(), kind: Some(Kind::Timing), ..Samples::default() }
    }

    fn figure(threshold: Option<Threshold>) -> Change {
        Change::Figure { name: "f".into(), threshold }
    }

    #[test]
    fn thresholds_read_as_values_or_changes() {
        assert_eq!(Threshold::parse("40"), Ok(Threshold::Value(40.0)));
        assert_eq!(Threshold::parse("5%"), Ok(Threshold::Relative(0.05)));
        assert_eq!(Threshold::parse("-10%"), Ok(Threshold::Relative(0.10)));
        assert!(Threshold::parse("0%").is_err());
        assert!(Threshold::parse("lots").unwrap_err().contains("not a number"));
    }

    #[test]
    fn an_exact_figure_reads_by_the_midpoint_of_the_ends_when_no_threshold_is_given() {
        let (good, bad) = (exact(&[2.0]), exact(&[41.0]));
        assert_eq!(ends_differ(&figure(None), &good, &bad, 10), Ok(()));
        assert_eq!(read(&figure(None), &good, &bad, &exact(&[40.0]), 10), Reading::Bad);
        assert_eq!(read(&figure(None), &good, &bad, &exact(&[3.0]), 10), Reading::Good);
        // Both sides once: measured again; still both: can't tell.
        assert_eq!(read(&figure(None), &good, &bad, &exact(&[3.0, 40.0]), 10), Reading::More);
        assert!(matches!(read(&figure(None), &good, &bad, &exact(&[3.0, 40.0, 2.0, 39.0]), 10), Reading::CantTell(_)));
        // A given threshold wins.
        assert_eq!(read(&figure(Some(Threshold::Value(10.0))), &good, &bad, &exact(&[15.0]), 10), Reading::Bad);
        // A value near the threshold is measured again before it decides.
        assert_eq!(read(&figure(None), &good, &bad, &exact(&[22.0]), 10), Reading::More);
        assert_eq!(read(&figure(None), &good, &bad, &exact(&[22.0, 23.0, 22.0]), 10), Reading::Bad);
    }

    #[test]
    fn ends_that_do_not_differ_say_so_with_their_figures() {
        let same = ends_differ(&figure(None), &exact(&[40.0]), &exact(&[40.0]), 10);
        let Err(Reading::CantTell(why)) = same else { panic!("{same:?}") };
        assert!(why.contains("good 40, bad 40"), "{why}");
        let t = ends_differ(&figure(Some(Threshold::Value(100.0))), &exact(&[2.0]), &exact(&[40.0]), 10);
        assert!(matches!(t, Err(Reading::CantTell(_))), "{t:?}");
        // An end whose repeats straddle a given threshold places no step.
        let near_good = figure(Some(Threshold::Value(35.0)));
        let Err(Reading::CantTell(why)) = ends_differ(&near_good, &exact(&[2.0, 2.0]), &exact(&[40.0, 34.0]), 10) else {
            panic!()
        };
        assert!(why.contains("the bad end's own repeats fall on both sides"), "{why}");
        // Repeats that spread across the midway threshold are a timing's:
        // more repeats, then not told apart.
        let (g, b) = (exact(&[3.0, 3.0]), exact(&[2.0, 3.0]));
        assert_eq!(ends_differ(&figure(None), &g, &b, 10), Err(Reading::More));
        assert!(matches!(ends_differ(&figure(None), &g, &b, 2), Err(Reading::CantTell(_))));
        // Ends whose repeats spread over a quarter of their distance: judged
        // as a timing (mmap-fill's extents in a guest: 10523 and 11019
        // against 9891 and 9385).
        let (g, b) = (exact(&[10523.0, 11019.0]), exact(&[9891.0, 9385.0]));
        assert_eq!(kind(&g, &b), Kind::Timing);
        assert_eq!(kind(&exact(&[1.0, 2.0]), &exact(&[40.0, 41.0])), Kind::Exact);
    }

    #[test]
    fn a_timing_point_is_read_by_the_rank_sum_test_against_both_ends() {
        let good = timing(&[1.00, 1.01, 0.99, 1.02, 0.98, 1.00]);
        let bad = timing(&[1.25, 1.26, 1.24, 1.27, 1.23, 1.25]);
        assert_eq!(ends_differ(&figure(None), &good, &bad, 12), Ok(()));
        let like_bad = timing(&[1.24, 1.26, 1.25, 1.27, 1.23]);
        assert_eq!(read(&figure(None), &good, &bad, &like_bad, 12), Reading::Bad);
        let like_good = timing(&[1.00, 0.99, 1.01, 1.02, 0.98]);
        assert_eq!(read(&figure(None), &good, &bad, &like_good, 12), Reading::Good);
        // Too few values to tell: another repeat.
        assert_eq!(read(&figure(None), &good, &bad, &timing(&[1.25, 1.24]), 12), Reading::More);
        // Halfway, at the ceiling: between the ends, said with its figures.
        let halfway = timing(&[1.12, 1.13, 1.11, 1.12, 1.13, 1.12, 1.11, 1.12, 1.13, 1.12, 1.11, 1.12]);
        let Reading::Between(why) = read(&figure(None), &good, &bad, &halfway, 12) else { panic!() };
        assert!(why.contains("after 12 repeats"), "{why}");
    }

    #[test]
    fn timing_ends_within_noise_ask_for_repeats_then_cannot_tell() {
        let good = timing(&[1.0, 1.2, 0.9, 1.1]);
        let bad = timing(&[1.1, 0.95, 1.15, 1.05]);
        assert_eq!(ends_differ(&figure(None), &good, &bad, 8), Err(Reading::More));
        let Err(Reading::CantTell(why)) = ends_differ(&figure(None), &good, &bad, 4) else { panic!() };
        assert!(why.contains("not told apart after 4 repeats"), "{why}");
        // Apart by the test but by less than the change asked for.
        let (g, b) = (timing(&[1.00, 1.001, 1.002, 1.003, 1.004, 1.005]), timing(&[1.02, 1.021, 1.022, 1.023, 1.024, 1.025]));
        assert!(matches!(ends_differ(&figure(None), &g, &b, 6), Err(Reading::CantTell(_))));
        assert_eq!(ends_differ(&figure(Some(Threshold::Relative(0.01))), &g, &b, 6), Ok(()));
    }

    #[test]
    fn busy_values_decide_only_without_quiet_ones() {
        let mut point = exact(&[]);
        point.busy = vec![40.0];
        assert_eq!(point.deciding(), [40.0]);
        point.quiet = vec![3.0];
        assert_eq!(point.deciding(), [3.0]);
        // Mostly busy: every value decides.
        point.busy = vec![40.0, 41.0];
        assert_eq!(point.deciding(), [3.0, 40.0, 41.0]);
        point.busy = vec![40.0];
        assert_eq!(read(&figure(None), &exact(&[2.0]), &exact(&[40.0]), &point, 10), Reading::Good);
    }

    #[test]
    fn a_verdict_word_decides_and_an_unsure_word_is_measured_again() {
        let change = Change::Verdict { word: "shows".into() };
        let said = |w: &[&str]| Samples { words: w.iter().map(|s| s.to_string()).collect(), ..Samples::default() };
        assert_eq!(ends_differ(&change, &said(&["gone"]), &said(&["shows"]), 3), Ok(()));
        assert_eq!(read(&change, &said(&["gone"]), &said(&["shows"]), &said(&["mixed"]), 3), Reading::More);
        assert!(matches!(
            read(&change, &said(&["gone"]), &said(&["shows"]), &said(&["mixed", "mixed"]), 3),
            Reading::CantTell(_)
        ));
        assert_eq!(read(&change, &said(&["gone"]), &said(&["shows"]), &said(&["shows"]), 3), Reading::Bad);
    }

    #[test]
    fn a_failed_point_is_skipped_with_its_reason() {
        let point = Samples { failed: Some("the build exited 2".into()), ..Samples::default() };
        assert_eq!(read(&figure(None), &exact(&[2.0]), &exact(&[40.0]), &point, 5), Reading::Skip("the build exited 2".into()));
    }
}
