//! Judging one figure of one case: the pooled values of each side in, an
//! outcome with its evidence out.
//!
//! Exact figures that repeat exactly on each side are compared as values;
//! timings, and exact figures that drift between runs, need statistics:
//! the bootstrap interval of the slowdown must clear the threshold and the
//! rank-sum test must be significant, both, before anything is called a
//! regression or an improvement.

use super::stats::{self, SplitMix64};
use super::{CompareOptions, Outcome, format};
use crate::record::{Better, Figure, Kind};

/// What [`judge`] found; the figure's identity is added by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// Median of the base values.
    pub base_median: f64,
    /// Median of the new values.
    pub new_median: f64,
    /// The worse factor of the medians; `None` for negative values.
    pub slowdown: Option<f64>,
    /// The bootstrap interval of the slowdown (statistics only).
    pub ci: Option<[f64; 2]>,
    /// The rank-sum test's two-sided p (statistics only).
    pub p_value: Option<f64>,
    /// The verdict.
    pub outcome: Outcome,
    /// For an effect too few repeats cannot decide (undecided, or a
    /// likely regression or improvement): the values a side that would,
    /// if the separation seen holds.
    pub repeats_needed: Option<usize>,
    /// What a reader needs to know about it; may be empty.
    pub note: String,
}

/// Judge `base` against `new` (each non-empty) as values of `figure`
/// (its unit, direction and kind; its value is not read). `seed` drives
/// the bootstrap, so the same values always give the same interval.
pub fn judge(base: &[f64], new: &[f64], figure: &Figure, options: &CompareOptions, seed: u64) -> Judgement {
    let (better, kind, unit) = (figure.better, figure.kind, figure.unit.as_ref());
    let base_median = stats::median(base).unwrap_or(0.0);
    let new_median = stats::median(new).unwrap_or(0.0);
    let mut judgement = Judgement {
        base_median,
        new_median,
        slowdown: None,
        ci: None,
        p_value: None,
        outcome: Outcome::Unchanged,
        repeats_needed: None,
        note: String::new(),
    };
    let stable = |values: &[f64]| values.iter().all(|&v| v == values[0]);
    let exact = kind == Kind::Exact && stable(base) && stable(new);
    if base.iter().chain(new).any(|&v| v < 0.0) {
        // A ratio of signed values means nothing; say whether they moved.
        let moved = if exact { base[0] != new[0] } else { base_median != new_median };
        judgement.outcome = if moved { Outcome::Changed } else { Outcome::Unchanged };
        judgement.note = "values below zero have no ratio, so the size of the change is not judged".into();
        return judgement;
    }
    let slowdown = oriented(stats::ratio(new_median, base_median), better);
    judgement.slowdown = Some(slowdown);
    if slowdown.is_infinite() {
        let side = if base_median == 0.0 { "base" } else { "new" };
        judgement.note = format!("no finite factor: the {side} median is 0");
    }
    if exact {
        judgement.outcome = judge_exact(base[0], new[0], slowdown, options.threshold);
        if base[0] != new[0] && (base.len() == 1 || new.len() == 1) {
            let why = "one value on a side, so whether it repeats is not known (--repeat 2 or more tells)";
            super::add_note(&mut judgement.note, why);
        }
        return judgement;
    }
    let mut notes = Vec::new();
    if kind == Kind::Exact {
        notes.push(format!(
            "varies within a side ({}; {}), so judged as a timing",
            spread("base", base, unit),
            spread("new", new, unit)
        ));
    }
    if !judgement.note.is_empty() {
        notes.push(std::mem::take(&mut judgement.note));
    }
    judge_timing(base, new, figure, options, seed, &mut judgement, &mut notes);
    judgement.note = notes.join("; ");
    judgement
}

/// The worse factor from `new / base`: as it is when lower is better,
/// inverted when higher is (1/0 and 1/∞ are ∞ and 0, never NaN).
fn oriented(ratio: f64, better: Better) -> f64 {
    match better {
        Better::Lower => ratio,
        Better::Higher => 1.0 / ratio,
    }
}

/// Values that repeat exactly: a difference is a fact, and the threshold
/// only sorts it into regression, improvement or a change within it.
fn judge_exact(base: f64, new: f64, slowdown: f64, threshold: f64) -> Outcome {
    if base == new {
        Outcome::Unchanged
    } else if slowdown > 1.0 + threshold {
        Outcome::Regression
    } else if slowdown < 1.0 - threshold {
        Outcome::Improvement
    } else {
        Outcome::Changed
    }
}

fn judge_timing(
    base: &[f64],
    new: &[f64],
    figure: &Figure,
    options: &CompareOptions,
    seed: u64,
    judgement: &mut Judgement,
    notes: &mut Vec<String>,
) {
    let (alpha, better, unit) = (options.alpha, figure.better, figure.unit.as_ref());
    judgement.p_value = stats::mann_whitney(base, new).map(|r| r.p);
    let ci = stats::bootstrap_ratio_ci(base, new, options.resamples, alpha, &mut SplitMix64::new(seed));
    judgement.ci = ci.map(|[lo, hi]| match better {
        Better::Lower => [lo, hi],
        Better::Higher => [1.0 / hi, 1.0 / lo],
    });
    let (n, m) = (base.len(), new.len());
    let least_p = stats::min_two_sided_p(n, m);
    if n < 2 || m < 2 || least_p >= alpha {
        // The comparison states once what these sample sizes allow; a
        // row only says when its effect cannot be missed all the same,
        // and an effect past the threshold for the worse is undecided.
        judgement.outcome = match likely(base, new, better, options.threshold, unit) {
            Some((outcome, why)) => {
                notes.push(why);
                outcome
            }
            None if judgement.slowdown.is_some_and(|s| s > 1.0 + options.threshold) => Outcome::Undecided,
            None => Outcome::TooFewRepeats,
        };
        if judgement.outcome != Outcome::TooFewRepeats {
            judgement.repeats_needed = stats::values_to_decide(base, new, alpha);
        }
        return;
    }
    let (Some([lo, hi]), Some(p)) = (judgement.ci, judgement.p_value) else {
        notes.push("no bootstrap interval (0 resamples), so not judged".into());
        return;
    };
    let significant = p < alpha;
    let above = lo > 1.0 + options.threshold;
    let below = hi < 1.0 - options.threshold;
    judgement.outcome = match (significant, above, below) {
        (true, true, _) => Outcome::Regression,
        (true, _, true) => Outcome::Improvement,
        (true, false, false) => {
            notes.push(format!("a significant shift, but its interval reaches within {}", format::percent(options.threshold)));
            Outcome::Unchanged
        }
        (false, true, _) | (false, _, true) => {
            notes.push(format!("the interval clears {} but p ≥ {alpha}", format::percent(options.threshold)));
            Outcome::Unchanged
        }
        (false, false, false) => Outcome::Unchanged,
    };
}

/// The least gap, as a factor between the nearest ends of the two sides'
/// ranges, that makes an effect "likely" without a test: 25%, or the
/// threshold when that is larger.
pub const LIKELY_GAP: f64 = 0.25;

/// An effect too few repeats cannot test but that cannot be missed: at
/// least 2 values a side, every value of one side beyond every value of
/// the other, and the nearest ends apart by more than
/// 1 + max(threshold, [`LIKELY_GAP`]). The outcome is a likely regression
/// or improvement (by `better`), with the reason:
/// `ranges apart: 40–44 vs 750–770`.
fn likely(base: &[f64], new: &[f64], better: Better, threshold: f64, unit: &str) -> Option<(Outcome, String)> {
    if base.len() < 2 || new.len() < 2 {
        return None;
    }
    let (b_lo, b_hi) = range(base);
    let (n_lo, n_hi) = range(new);
    let (gap, up) = if b_hi < n_lo {
        (stats::ratio(n_lo, b_hi), true)
    } else if n_hi < b_lo {
        (stats::ratio(b_lo, n_hi), false)
    } else {
        return None;
    };
    if gap <= 1.0 + threshold.max(LIKELY_GAP) {
        return None;
    }
    let worse = up == (better == Better::Lower);
    let outcome = if worse { Outcome::LikelyRegression } else { Outcome::LikelyImprovement };
    let (base, new) = (format::range(b_lo, b_hi, unit), format::range(n_lo, n_hi, unit));
    Some((outcome, format!("ranges apart: {base} vs {new}")))
}

/// The smallest and largest of `values`.
fn range(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// `base 20–22` or `new 21`: the range of a side's values.
fn spread(side: &str, values: &[f64], unit: &str) -> String {
    let (lo, hi) = range(values);
    format!("{side} {}", format::range(lo, hi, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> CompareOptions {
        CompareOptions { resamples: 2000, ..CompareOptions::default() }
    }

    fn figure(better: Better, kind: Kind) -> Figure {
        Figure { value: None, unit: "count".into(), better, kind, missing: None }
    }

    fn timing(base: &[f64], new: &[f64]) -> Judgement {
        judge(base, new, &figure(Better::Lower, Kind::Timing), &options(), 1)
    }

    #[test]
    fn a_clear_twofold_slowdown_is_a_regression() {
        let j = timing(&[1.0, 1.1, 0.9, 1.05, 0.95], &[2.0, 2.2, 1.8, 2.1, 1.9]);
        assert_eq!(j.outcome, Outcome::Regression);
        assert_eq!(j.slowdown, Some(2.0));
        let [lo, hi] = j.ci.unwrap();
        assert!(lo > 1.05 && lo <= 2.0 && hi >= 2.0, "{lo} {hi}");
        assert!((j.p_value.unwrap() - 2.0 / 252.0).abs() < 1e-12);
        assert_eq!(j.note, "");
    }

    #[test]
    fn a_faster_rate_is_an_improvement() {
        // MB/s, higher is better: the slowdown is base/new = 0.5.
        let (base, new) = ([100.0, 98.0, 102.0, 101.0, 99.0], [200.0, 196.0, 204.0, 202.0, 198.0]);
        let j = judge(&base, &new, &figure(Better::Higher, Kind::Timing), &options(), 1);
        assert_eq!(j.outcome, Outcome::Improvement);
        assert_eq!(j.slowdown, Some(0.5));
        let [lo, hi] = j.ci.unwrap();
        assert!(lo <= 0.5 && (0.5..0.95).contains(&hi), "{lo} {hi}");
    }

    #[test]
    fn the_same_data_on_both_sides_is_unchanged() {
        let values = [1.0, 1.2, 0.9, 1.1, 1.05];
        let j = timing(&values, &values);
        assert_eq!(j.outcome, Outcome::Unchanged);
        assert_eq!(j.slowdown, Some(1.0));
        assert!(j.p_value.unwrap() > 0.9);
    }

    #[test]
    fn three_repeats_a_side_are_too_few_and_the_row_does_not_repeat_why() {
        // Overlapping ranges and medians within 5%: nothing to see without a test.
        let j = timing(&[1.0, 1.5, 0.9], &[1.4, 1.02, 0.8]);
        assert_eq!((j.outcome, j.repeats_needed), (Outcome::TooFewRepeats, None));
        assert_eq!(j.note, "", "the comparison's header says what 3 and 3 values allow");
        // Better by far, but not apart: too few, and nothing to decide.
        assert_eq!(timing(&[1.4, 2.2, 1.8], &[1.0, 1.5, 0.9]).outcome, Outcome::TooFewRepeats);
    }

    #[test]
    fn a_slowdown_too_few_repeats_cannot_decide_is_undecided_with_the_repeats_that_would() {
        // Medians 1 → 1.8 s, one pair of nine crossed: at 6 a side p < 0.05.
        let j = timing(&[1.0, 1.5, 0.9], &[1.4, 2.2, 1.8]);
        assert_eq!((j.outcome, j.repeats_needed), (Outcome::Undecided, Some(6)));
        assert_eq!(j.note, "");
        // One value a side, twice as slow: apart, so 4 a side would do.
        let j = timing(&[1.0], &[2.0]);
        assert_eq!((j.outcome, j.repeats_needed), (Outcome::Undecided, Some(4)));
        // A real twofold slowdown at 3 a side, wholly apart: likely, and 4 would decide it.
        let j = timing(&[0.21, 0.22, 0.215], &[0.41, 0.42, 0.43]);
        assert_eq!((j.outcome, j.repeats_needed), (Outcome::LikelyRegression, Some(4)));
        // 4% slower is within the threshold: too few, not undecided.
        assert_eq!(timing(&[1.0, 1.1, 0.9], &[1.04, 1.2, 0.8]).outcome, Outcome::TooFewRepeats);
        // Past a threshold of 0 (a gated exact figure that varies), any slowdown is.
        let any = CompareOptions { threshold: 0.0, ..options() };
        let j = judge(&[3.0, 4.0, 3.0], &[4.0, 3.0, 4.0], &figure(Better::Lower, Kind::Exact), &any, 1);
        assert_eq!(j.outcome, Outcome::Undecided);
        assert!(j.note.starts_with("varies within a side"), "{}", j.note);
        // Enough repeats are never undecided: the test decides.
        let j = timing(&[1.0, 1.5, 0.9, 1.2, 1.1], &[1.4, 2.2, 1.8, 1.0, 1.3]);
        assert_ne!(j.outcome, Outcome::Undecided);
        assert_eq!(j.repeats_needed, None);
    }

    #[test]
    fn exact_figures_decide_from_one_value_a_side() {
        // One extent more is a fact: past a threshold of 0 it is a regression.
        let any = CompareOptions { threshold: 0.0, ..options() };
        let j = judge(&[21.0], &[22.0], &figure(Better::Lower, Kind::Exact), &any, 1);
        assert_eq!((j.outcome, j.repeats_needed, j.p_value), (Outcome::Regression, None, None));
        assert_eq!(judge(&[22.0], &[21.0], &figure(Better::Lower, Kind::Exact), &any, 1).outcome, Outcome::Improvement);
        assert_eq!(judge(&[21.0], &[21.0], &figure(Better::Lower, Kind::Exact), &any, 1).outcome, Outcome::Unchanged);
    }

    #[test]
    fn ranges_far_apart_are_likely_with_the_reason() {
        let j = timing(&[40.0, 42.0, 44.0], &[750.0, 761.0, 770.0]);
        assert_eq!(j.outcome, Outcome::LikelyRegression);
        assert_eq!(j.note, "ranges apart: 40–44 vs 750–770");
        // A rate that rose is a likely improvement; one that fell, a likely regression.
        let rate = |b: &[f64], n: &[f64]| judge(b, n, &figure(Better::Higher, Kind::Timing), &options(), 1).outcome;
        assert_eq!(rate(&[100.0, 110.0], &[300.0, 320.0]), Outcome::LikelyImprovement);
        assert_eq!(rate(&[300.0, 320.0], &[100.0, 110.0]), Outcome::LikelyRegression);
        // Apart, but the nearest ends only 10% apart: not beyond LIKELY_GAP
        // (undecided: the medians moved 19% for the worse).
        assert_eq!(timing(&[1.0, 1.05, 1.1], &[1.21, 1.25, 1.3]).outcome, Outcome::Undecided);
        // A single value a side shows no range.
        assert_eq!(timing(&[1.0], &[20.0]).outcome, Outcome::Undecided);
        assert_eq!(timing(&[20.0], &[1.0]).outcome, Outcome::TooFewRepeats);
        // From all zeros to something: apart by an infinite factor.
        let j = timing(&[0.0, 0.0], &[4096.0, 8192.0]);
        assert_eq!(j.outcome, Outcome::LikelyRegression);
        assert!(j.note.ends_with("ranges apart: 0 vs 4096–8192"), "{}", j.note);
        // A larger threshold raises the gap needed.
        let strict = CompareOptions { threshold: 0.9, ..options() };
        let j = judge(&[1.0, 1.1], &[1.9, 2.0], &figure(Better::Lower, Kind::Timing), &strict, 1);
        assert_eq!(j.outcome, Outcome::TooFewRepeats);
    }

    #[test]
    fn a_shift_inside_the_threshold_is_unchanged_with_a_note() {
        // 2% slower every time: significant, but not beyond 5%.
        let j = timing(&[1.0, 1.001, 1.002, 1.003, 1.004], &[1.02, 1.021, 1.022, 1.023, 1.024]);
        assert_eq!(j.outcome, Outcome::Unchanged);
        assert!(j.note.contains("reaches within 5%"), "{}", j.note);
    }

    #[test]
    fn exact_values_compare_as_values() {
        let exact = |b: &[f64], n: &[f64]| judge(b, n, &figure(Better::Lower, Kind::Exact), &options(), 1);
        let j = exact(&[21.0, 21.0], &[2.0, 2.0, 2.0]);
        assert_eq!(j.outcome, Outcome::Improvement);
        assert_eq!((j.ci, j.p_value), (None, None));
        assert_eq!(exact(&[2.0], &[21.0]).outcome, Outcome::Regression);
        // 22/21 = 1.048: a change, but within 5%.
        assert_eq!(exact(&[21.0], &[22.0]).outcome, Outcome::Changed);
        assert_eq!(exact(&[21.0], &[21.0]).outcome, Outcome::Unchanged);
    }

    #[test]
    fn exact_values_that_vary_fall_back_to_statistics() {
        let j = judge(&[20.0, 21.0, 22.0, 21.0], &[20.0, 22.0, 21.0, 21.0], &figure(Better::Lower, Kind::Exact), &options(), 1);
        assert_eq!(j.outcome, Outcome::Unchanged);
        assert!(j.p_value.is_some() && j.ci.is_some());
        assert!(j.note.starts_with("varies within a side (base 20–22; new 20–22)"), "{}", j.note);
    }

    #[test]
    fn zero_bases_never_give_nan() {
        let exact = |b: &[f64], n: &[f64], better| judge(b, n, &figure(better, Kind::Exact), &options(), 1);
        let j = exact(&[0.0], &[1.0], Better::Lower);
        assert_eq!(j.outcome, Outcome::Regression);
        assert_eq!(j.slowdown, Some(f64::INFINITY));
        assert!(j.note.contains("no finite factor"));
        let j = exact(&[0.0], &[0.0], Better::Lower);
        assert_eq!((j.outcome, j.slowdown), (Outcome::Unchanged, Some(1.0)));
        // A score from 0 to something, higher better: better, slowdown 0.
        let j = exact(&[0.0], &[0.5], Better::Higher);
        assert_eq!((j.outcome, j.slowdown), (Outcome::Improvement, Some(0.0)));
        let j = timing(&[0.0, 0.0, 0.0, 0.0], &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(j.outcome, Outcome::Regression);
        assert_eq!(j.ci, Some([f64::INFINITY, f64::INFINITY]));
    }

    #[test]
    fn negative_values_are_not_judged_by_size() {
        let j = judge(&[-1.0], &[1.0], &figure(Better::Lower, Kind::Exact), &options(), 1);
        assert_eq!((j.outcome, j.slowdown), (Outcome::Changed, None));
        assert!(j.note.contains("below zero"));
    }
}
