//! `fslab compare BASE NEW`: did anything get worse, or better, between two
//! sets of runs — and can the repeats measured actually tell?
//!
//! Cases are matched by [`Case::key`](crate::record::Case::key) (scenario, target label,
//! parameters), so repeats pool and mount options or sysctls, which are
//! what a comparison varies, do not split them. Per matched case and
//! figure, the values of every ok repeat of every run on a side are
//! pooled and judged (see `judge`): exact figures as values, timings with
//! a bootstrap interval and a rank-sum test. A figure is only a regression
//! or an improvement when the evidence clears both the threshold and the
//! significance level; when the repeats are too few for the test to ever
//! be significant, the comparison says so and how many are needed. A
//! figure whose medians moved past the threshold for the worse with too
//! few repeats to test is *undecided*, and so is the comparison when such
//! a figure gates it (`gate`): it says how many repeats a side would
//! decide each one.
//!
//! A case ok on every base repeat that fails in the new side is a
//! regression by itself (`failed`); runs that did not finish are named,
//! since only the cases they stored take part.
//!
//! Significance is decided on Benjamini–Hochberg q-values over all the
//! figures tested, not on each p alone: two runs of one setup compare
//! hundreds of timings, and a few p under 0.05 among them are chance.
//!
//! Too few repeats do not hide an effect that cannot be missed: when the
//! two sides' ranges lie apart by a wide gap, the figure is a *likely*
//! regression or improvement, with the ranges as the reason; only decided
//! regressions fail the comparison. `backing_*` figures count the whole
//! disk under the target, other users included, and `host_*` ones the
//! rest of the machine: they are shown as host-wide and kept out of the
//! verdict unless asked for (`host_figures`); cases measured on a busy
//! machine are named once in the notes. Timings of cases run in a guest
//! under software emulation (TCG) are shown, not judged, on either side
//! (`emulated`); their exact figures are judged as usual. What differs
//! between the sides' setups (kernel,
//! mount options, sysctls, ...) is said first (`differs`).

mod deferred;
mod differs;
mod emulated;
mod failed;
pub mod format;
pub mod gate;
mod judge;
pub mod plans;
pub mod render;
pub mod stats;

use std::collections::HashMap;

use serde::Serialize;

use crate::record::busy::BusyCases;
use crate::record::{Better, Figure, Kind};
use crate::record::{Case, RunRecord, Status};

pub use differs::{Difference, differences};
pub use emulated::EmulatedCases;
pub use failed::{FailedCase, case_labels, summarise_cases};
pub use gate::{Decision, Gate};

/// How a comparison judges.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Smallest relative change that counts: the slowdown must exceed
    /// 1 + threshold (or fall below 1 − threshold).
    pub threshold: f64,
    /// Significance level of the rank-sum test; the bootstrap interval is
    /// the 1 − alpha one.
    pub alpha: f64,
    /// Bootstrap resamples per figure.
    pub resamples: usize,
    /// Seed of the bootstrap, mixed with each figure's key so a figure's
    /// interval does not depend on which other cases are compared.
    pub seed: u64,
    /// Judge host-wide figures (`backing_*`, the whole disk under the
    /// target) like the others; by default they are shown, not judged,
    /// since whatever else uses that disk moves them.
    pub host_figures: bool,
    /// The figures that gate the comparison, with their own thresholds;
    /// empty: every judged figure gates at `threshold`. A gated host-wide
    /// figure is judged.
    pub gates: Vec<Gate>,
}

impl Default for CompareOptions {
    /// 5% threshold, alpha 0.05, 10 000 resamples, a fixed seed (so the
    /// same runs always compare the same).
    fn default() -> Self {
        CompareOptions { threshold: 0.05, alpha: 0.05, resamples: 10_000, seed: 0x00F5_1AB0, host_figures: false, gates: Vec::new() }
    }
}

/// One side of a comparison: its name for people, and its runs (pooled).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// How to call it (a tag, a run id).
    pub label: &'a str,
    /// The runs whose cases are pooled.
    pub runs: &'a [RunRecord],
}

/// What a comparison concluded about one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Worse beyond the threshold (and, for timings, significantly).
    Regression,
    /// Better beyond the threshold (and, for timings, significantly).
    Improvement,
    /// An exact figure that moved, but by no more than the threshold.
    Changed,
    /// No change the evidence supports.
    Unchanged,
    /// The repeats are too few for the test ever to be significant.
    TooFewRepeats,
    /// Too few repeats for a test, and the medians moved past the
    /// threshold for the worse: the comparison cannot tell a regression
    /// from noise, and says how many repeats would.
    Undecided,
    /// Too few repeats for a test, but the sides' ranges lie far apart
    /// for the worse: shown with the reason, not counted as a regression
    /// (it does not fail the comparison, but leaves it undecided when it
    /// gates).
    LikelyRegression,
    /// The same for the better.
    LikelyImprovement,
    /// A host-wide figure (the whole disk under the target), shown but
    /// not judged (`--host-figures` judges it).
    HostWide,
    /// A timing of a case that ran in a guest under software emulation
    /// (TCG) on either side: it measures the emulator, so it is shown but
    /// not judged.
    Emulated,
    /// Better in the window, but not once what the window left for later
    /// (up to the unmount) is counted: the work was moved, not saved. Not
    /// an improvement.
    Deferred,
}

impl Outcome {
    /// The name JSON and HTML classes use: `too_few_repeats`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Regression => "regression",
            Outcome::Improvement => "improvement",
            Outcome::Changed => "changed",
            Outcome::Unchanged => "unchanged",
            Outcome::TooFewRepeats => "too_few_repeats",
            Outcome::Undecided => "undecided",
            Outcome::LikelyRegression => "likely_regression",
            Outcome::LikelyImprovement => "likely_improvement",
            Outcome::HostWide => "host_wide",
            Outcome::Emulated => "emulated",
            Outcome::Deferred => "deferred",
        }
    }

    /// The words people read: `too few repeats`.
    pub fn words(self) -> &'static str {
        match self {
            Outcome::TooFewRepeats => "too few repeats",
            Outcome::LikelyRegression => "likely regression",
            Outcome::LikelyImprovement => "likely improvement",
            Outcome::HostWide => "host-wide, not judged",
            Outcome::Emulated => "emulated, not judged",
            Outcome::Deferred => "better only in the window",
            other => other.name(),
        }
    }
}

/// One figure of one matched case, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureComparison {
    /// Scenario name.
    pub scenario: String,
    /// Target label.
    pub fs: String,
    /// Parameters (as the first base case has them).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// Figure name.
    pub figure: String,
    /// Its base unit.
    pub unit: String,
    /// Which direction is better.
    pub better: Better,
    /// Exact or timing.
    pub kind: Kind,
    /// Every base value pooled, in run and repeat order.
    pub base: Vec<f64>,
    /// Every new value pooled.
    pub new: Vec<f64>,
    /// Median of `base`.
    pub base_median: f64,
    /// Median of `new`.
    pub new_median: f64,
    /// The worse factor: new/base medians when lower is better, base/new
    /// when higher is; above 1 is worse. Infinite (JSON `null`) when worse
    /// from or to 0; `None` for negative values, which have no ratio.
    pub slowdown: Option<f64>,
    /// The 1 − alpha bootstrap interval of the slowdown (statistics only;
    /// an infinite bound is JSON `null`).
    pub ci: Option<[f64; 2]>,
    /// Two-sided Mann–Whitney p (statistics only).
    pub p_value: Option<f64>,
    /// `p_value` adjusted for the number of figures the comparison tested
    /// (Benjamini–Hochberg); what significance is decided on.
    pub q_value: Option<f64>,
    /// The verdict.
    pub outcome: Outcome,
    /// The threshold it was judged at: `--threshold`, or its gate's.
    pub threshold: f64,
    /// Whether it gates the comparison (every judged figure does without
    /// `--gate`): a regression fails it, an undecided one leaves it
    /// undecided. Figures not gated are judged and shown the same.
    pub gated: bool,
    /// For an undecided row (and a likely regression): how many values a
    /// side would decide it if the separation seen holds
    /// ([`stats::values_to_decide`]); `None` otherwise, or when no number
    /// up to 10 000 would.
    pub repeats_needed: Option<usize>,
    /// What a reader needs to know about the verdict; may be empty.
    pub note: String,
    /// Whether the figure counts the whole disk under the target or the
    /// whole machine (a `backing_*` or `host_*` figure): every user of
    /// them moves it.
    pub host_wide: bool,
    /// Which side's cases ran in a guest under software emulation:
    /// `base`, `new` or `both`; `None` when neither. Its timings are then
    /// [`Outcome::Emulated`]; its exact figures are judged as usual.
    pub emulated: Option<&'static str>,
}

impl FigureComparison {
    /// `tree-copy read_mbps on ext4 (size=64 MiB)`.
    pub fn label(&self) -> String {
        format::label(&self.scenario, Some(&self.figure), &self.fs, &self.params)
    }
}

/// Two sets of runs compared, figure by figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Name of the base side.
    pub base_label: String,
    /// Name of the new side.
    pub new_label: String,
    /// Run ids pooled as base.
    pub base_runs: Vec<String>,
    /// Run ids pooled as new.
    pub new_runs: Vec<String>,
    /// The threshold used.
    pub threshold: f64,
    /// The significance level used.
    pub alpha: f64,
    /// Bootstrap resamples per figure.
    pub resamples: usize,
    /// The bootstrap seed (with the runs, it reproduces every interval).
    pub seed: u64,
    /// Whether host-wide figures were judged (`--host-figures`).
    pub host_figures: bool,
    /// The figures that gate it, as given; empty: every judged figure.
    pub gates: Vec<Gate>,
    /// Gated figures that no case measured on both sides.
    pub gates_unmeasured: Vec<String>,
    /// What it decided: `regression` (a gated figure regressed or a case
    /// newly failed), `undecided` (else a gated figure the repeats cannot
    /// decide), or `pass`.
    pub decision: Decision,
    /// Gated rows left undecided: undecided ones and likely regressions.
    pub undecided: usize,
    /// The most values a side any of them needs to be decided; `None`
    /// when none is undecided or none could be.
    pub repeats_needed: Option<usize>,
    /// What differs between the two sides' setups (kernel, fslab, tools,
    /// per target mkfs arguments, mount options, conditions, start and the
    /// drive modelled on, sysctls): empty when they are the same.
    pub differs: Vec<Difference>,
    /// The sample sizes the statistics met, with the smallest p each
    /// allows: said once per comparison, not on every row.
    pub sample_sizes: Vec<SampleSizes>,
    /// Every figure measured on both sides, sorted by effect: regressions
    /// (largest first), improvements (largest first), changes, the rest.
    pub rows: Vec<FigureComparison>,
    /// What only the base measured: whole cases (`tree-copy on ext4
    /// (size=64 MiB)`) and figures of matched cases the new side has no
    /// value for, with why when known.
    pub only_base: Vec<String>,
    /// What only the new side measured, likewise.
    pub only_new: Vec<String>,
    /// Cases ok on every base repeat that failed in the new side: each is
    /// a regression.
    pub newly_failed: Vec<FailedCase>,
    /// Base runs that did not finish (killed or interrupted): only the
    /// cases they stored are compared.
    pub base_incomplete: Vec<String>,
    /// New runs that did not finish, likewise; both lists name too, by
    /// its id, a plan not all of whose cases the side holds (its shards
    /// not all run, or killed), though every run of it finished.
    pub new_incomplete: Vec<String>,
    /// The plans the base runs ran shares of: each with how many of its
    /// cases the side holds (`stored` of `cases`).
    pub base_plans: Vec<plans::PlanShare>,
    /// The new side's, likewise.
    pub new_plans: Vec<plans::PlanShare>,
    /// Cases (by key) that both sides ran, ok or failed; 0 means the sides
    /// have nothing to compare.
    pub cases_in_common: usize,
    /// The base side's cases measured on a busy machine (timings there
    /// are less reliable), said once in the notes.
    pub base_busy: BusyCases,
    /// The new side's, likewise.
    pub new_busy: BusyCases,
    /// The base side's cases that ran in a guest under software emulation
    /// (their timings are not judged), said once in the notes.
    pub base_emulated: EmulatedCases,
    /// The new side's, likewise.
    pub new_emulated: EmulatedCases,
}

impl Comparison {
    /// How many rows have `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.rows.iter().filter(|r| r.outcome == outcome).count()
    }

    /// How many regressions: figures that got worse, and cases that newly
    /// failed.
    pub fn regressions(&self) -> usize {
        self.count(Outcome::Regression) + self.newly_failed.len()
    }

    /// Rows of figures not gated with `outcome`.
    pub fn not_gated(&self, outcome: Outcome) -> usize {
        self.rows.iter().filter(|r| !r.gated && r.outcome == outcome).count()
    }

    /// How many figures improved.
    pub fn improvements(&self) -> usize {
        self.count(Outcome::Improvement)
    }
}

/// How many figures were judged by statistics on `base` against `new`
/// values, and the smallest two-sided p those sizes allow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleSizes {
    /// Values on the base side.
    pub base: usize,
    /// Values on the new side.
    pub new: usize,
    /// Figures with these sizes.
    pub figures: usize,
    /// The smallest p the rank-sum test can give for them.
    pub least_p: f64,
}

/// The sample sizes of the rows judged by statistics, the most common
/// first.
fn sample_sizes(rows: &[FigureComparison]) -> Vec<SampleSizes> {
    let mut sizes: Vec<SampleSizes> = Vec::new();
    for row in rows.iter().filter(|r| r.p_value.is_some()) {
        let (base, new) = (row.base.len(), row.new.len());
        match sizes.iter_mut().find(|s| (s.base, s.new) == (base, new)) {
            Some(s) => s.figures += 1,
            None => sizes.push(SampleSizes { base, new, figures: 1, least_p: stats::min_two_sided_p(base, new) }),
        }
    }
    sizes.sort_by_key(|s| std::cmp::Reverse(s.figures));
    sizes
}

/// Compare `new` against `base`.
pub fn compare(base: Side<'_>, new: Side<'_>, options: &CompareOptions) -> Comparison {
    let base_pool = Pool::of(base.runs);
    let new_pool = Pool::of(new.runs);
    let mut rows = Vec::new();
    let mut only_base = Vec::new();
    let mut only_new = Vec::new();
    let mut newly_failed = Vec::new();
    for (key, b) in &base_pool.cases {
        let failed_anew = match new_pool.failed.get(key) {
            Some(f) if !base_pool.failed.contains_key(key) => {
                newly_failed.push(FailedCase::new(f.first, f.count, f.count + new_pool.ok_repeats(key)));
                true
            }
            _ => false,
        };
        let Some(n) = new_pool.get(key) else {
            if !failed_anew {
                only_base.push(one_sided_case(b.case, new_pool.failed.contains_key(key), new.label));
            }
            continue;
        };
        for bf in &b.figures {
            let nf = n.figure(bf.name);
            // A one-sided figure cites why the other side has no value.
            match (bf.values.is_empty(), nf.filter(|nf| !nf.values.is_empty())) {
                (false, Some(nf)) => rows.push(row(key, b.case, bf, nf, emulated::side(b.emulated, n.emulated), options)),
                (true, Some(_)) => only_new.push(one_sided_figure(b.case, bf.name, Some(bf), base.label)),
                (false, None) => only_base.push(one_sided_figure(b.case, bf.name, nf, new.label)),
                (true, None) => {} // measured on neither side
            }
        }
        for nf in n.figures.iter().filter(|nf| b.figure(nf.name).is_none() && !nf.values.is_empty()) {
            only_new.push(one_sided_figure(n.case, nf.name, None, base.label));
        }
    }
    for (key, n) in new_pool.cases.iter().filter(|(key, _)| base_pool.get(key).is_none()) {
        only_new.push(one_sided_case(n.case, base_pool.failed.contains_key(key), base.label));
    }
    let cases_in_common = base_pool.keys().filter(|key| new_pool.has(key)).count();
    let (base_plans, new_plans) = (plans::of(base.runs), plans::of(new.runs));
    let incomplete = |runs: &[RunRecord], shares: &[plans::PlanShare]| -> Vec<String> {
        let runs = runs.iter().filter(|r| !r.complete).map(|r| r.id.clone());
        runs.chain(shares.iter().filter(|s| s.incomplete()).map(|s| s.id.clone())).collect()
    };
    control_false_discoveries(&mut rows, options.alpha);
    deferred::no_credit_for_deferring(&mut rows);
    rows.sort_by(by_effect);
    let sample_sizes = sample_sizes(&rows);
    let undecided: Vec<&FigureComparison> = rows.iter().filter(|r| r.gated && gate::is_undecided(r.outcome)).collect();
    let repeats_needed = undecided.iter().filter_map(|r| r.repeats_needed).max();
    let undecided = undecided.len();
    let gated_regressions = rows.iter().filter(|r| r.gated && r.outcome == Outcome::Regression).count() + newly_failed.len();
    let decision = match (gated_regressions, undecided) {
        (0, 0) => Decision::Pass,
        (0, _) => Decision::Undecided,
        _ => Decision::Regression,
    };
    let gates_unmeasured =
        options.gates.iter().filter(|g| !rows.iter().any(|r| r.figure == g.figure)).map(|g| g.figure.clone()).collect();
    Comparison {
        base_label: base.label.to_string(),
        new_label: new.label.to_string(),
        base_runs: base.runs.iter().map(|r| r.id.clone()).collect(),
        new_runs: new.runs.iter().map(|r| r.id.clone()).collect(),
        threshold: options.threshold,
        alpha: options.alpha,
        resamples: options.resamples,
        seed: options.seed,
        host_figures: options.host_figures,
        gates: options.gates.clone(),
        gates_unmeasured,
        decision,
        undecided,
        repeats_needed,
        differs: differences(base.runs, new.runs),
        sample_sizes,
        rows,
        only_base,
        only_new,
        newly_failed,
        base_incomplete: incomplete(base.runs, &base_plans),
        new_incomplete: incomplete(new.runs, &new_plans),
        base_plans,
        new_plans,
        cases_in_common,
        base_busy: busy_cases(base.runs),
        new_busy: busy_cases(new.runs),
        base_emulated: EmulatedCases::of(base.runs),
        new_emulated: EmulatedCases::of(new.runs),
    }
}

/// Figure `b` (base) against `n` (new) of the case `key`; `emulated`
/// names the side(s) whose cases ran under software emulation.
fn row(
    key: &str,
    case: &Case,
    b: &PooledFigure<'_>,
    n: &PooledFigure<'_>,
    emulated: Option<&'static str>,
    options: &CompareOptions,
) -> FigureComparison {
    // A timing on either side, in any repeat, makes the row a timing: a
    // run stored before a figure was found to depend on timing says
    // `exact`, and this fslab's runs may say `timing` case by case
    // (layout figures when writeback placed the blocks).
    let kind = if b.timing || n.timing { Kind::Timing } else { Kind::Exact };
    let figure = Figure { kind, ..b.figure.clone() };
    let better = figure.better;
    let seed = options.seed ^ fnv1a([key.as_bytes(), &[0], b.name.as_bytes()]);
    let (gated, threshold) = gate::threshold_for(&options.gates, b.name, kind, options.threshold);
    let judging = CompareOptions { threshold, gates: Vec::new(), ..*options };
    let j = judge::judge(&b.values, &n.values, &figure, &judging, seed);
    let host_wide = is_host_wide(b.name);
    // A host-wide figure named in a gate is asked for: it is judged.
    let judged_here = options.host_figures || gate::find(&options.gates, b.name).is_some();
    let mut outcome = if host_wide && !judged_here { Outcome::HostWide } else { j.outcome };
    let (mut ci, mut p_value, mut note) = (j.ci, j.p_value, j.note);
    if kind == Kind::Timing && emulated.is_some() {
        // The emulator's seconds: shown with their medians, no test, no
        // interval, and left out of the false-discovery control.
        (outcome, ci, p_value) = (Outcome::Emulated, None, None);
        note = crate::record::guest::EMULATED_NOT_JUDGED.to_string();
    }
    let mut gated = gated;
    if let Some(why) = newly_unsafe(b.name, b.figure, &b.values, &n.values) {
        // A safety count: no statistics, no threshold, no emulation.
        (outcome, ci, p_value, gated) = (Outcome::Regression, None, None, true);
        add_note(&mut note, &why);
    }
    let repeats_needed = j.repeats_needed.filter(|_| gate::is_undecided(outcome));
    FigureComparison {
        scenario: case.scenario.clone(),
        fs: case.place(),
        params: case.params.clone(),
        figure: b.name.to_string(),
        unit: b.figure.unit.to_string(),
        better,
        kind,
        base: b.values.clone(),
        new: n.values.clone(),
        base_median: j.base_median,
        new_median: j.new_median,
        slowdown: j.slowdown,
        ci,
        p_value,
        q_value: None,
        outcome,
        threshold,
        gated,
        repeats_needed,
        note,
        host_wide,
        emulated,
    }
}

/// Why figure `name` is a regression on its own: a safety count (see
/// [`crate::record::must_be_zero`]: crash states bad, durability
/// violations) that was 0 in every base repeat and is not in some new
/// one. A state that newly goes bad is a fact, not a drift, so it gates
/// whatever the statistics and the `--gate` list say; `None` otherwise.
fn newly_unsafe(name: &str, figure: &Figure, base: &[f64], new: &[f64]) -> Option<String> {
    if !crate::record::must_be_zero(name, &figure.unit, figure.better) || base.iter().any(|&v| v != 0.0) {
        return None;
    }
    let worst = new.iter().copied().fold(0.0, f64::max);
    (worst > 0.0).then(|| {
        let repeats = new.iter().filter(|&&v| v > 0.0).count();
        format!(
            "a safety count that must stay 0: 0 in every base repeat, up to {} in {repeats} of {} new",
            format::number(worst),
            new.len()
        )
    })
}

/// Whether a figure counts the whole disk or machine rather than the
/// target alone: the block probe's `backing_*` figures and the load
/// probe's `host_*` (others' CPU and I/O, the load average).
pub fn is_host_wide(figure: &str) -> bool {
    figure.starts_with("backing_") || figure.starts_with("host_")
}

/// Every case of `runs` counted, the busy ones named.
fn busy_cases(runs: &[RunRecord]) -> BusyCases {
    BusyCases::of(&runs.iter().flat_map(|r| &r.cases).collect::<Vec<_>>())
}

/// Decide significance on Benjamini–Hochberg q-values over every figure
/// that was tested (judged by statistics, with enough repeats), so that a
/// comparison of hundreds of figures does not find regressions by chance:
/// a regression or improvement whose q is not under `alpha` is unchanged,
/// with the reason in its note.
fn control_false_discoveries(rows: &mut [FigureComparison], alpha: f64) {
    let decidable = |o: Outcome| matches!(o, Outcome::Regression | Outcome::Improvement | Outcome::Unchanged);
    let tested: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].ci.is_some() && decidable(rows[i].outcome))
        .filter(|&i| rows[i].p_value.is_some())
        .collect();
    let p: Vec<f64> = tested.iter().map(|&i| rows[i].p_value.unwrap_or(1.0)).collect();
    let q = stats::benjamini_hochberg(&p);
    for (&i, q) in tested.iter().zip(q) {
        let row = &mut rows[i];
        row.q_value = Some(q);
        if matches!(row.outcome, Outcome::Regression | Outcome::Improvement) && q >= alpha {
            let why = format!(
                "p={} but q={} over the {} figures tested, not under {alpha}",
                format::p_value(row.p_value.unwrap_or(1.0)),
                format::p_value(q),
                p.len()
            );
            add_note(&mut row.note, &why);
            row.outcome = Outcome::Unchanged;
        }
    }
}

/// Add `more` to a note, after what it says already.
fn add_note(note: &mut String, more: &str) {
    if !note.is_empty() {
        note.push_str("; ");
    }
    note.push_str(more);
}

/// Regressions by slowdown, largest first; improvements by slowdown,
/// smallest (the largest gain) first; changes by the size of the change;
/// the rest as they came (the sort is stable).
fn by_effect(a: &FigureComparison, b: &FigureComparison) -> std::cmp::Ordering {
    let group = |r: &FigureComparison| match r.outcome {
        Outcome::Regression => 0,
        Outcome::Improvement => 1,
        Outcome::LikelyRegression => 2,
        Outcome::Undecided => 3,
        Outcome::LikelyImprovement => 4,
        Outcome::Deferred => 5,
        Outcome::Changed => 5,
        Outcome::Unchanged => 6,
        Outcome::TooFewRepeats => 7,
        Outcome::HostWide => 8,
        Outcome::Emulated => 9,
    };
    let s = |r: &FigureComparison| r.slowdown.unwrap_or(1.0);
    group(a).cmp(&group(b)).then_with(|| match a.outcome {
        Outcome::Regression | Outcome::LikelyRegression | Outcome::Undecided => s(b).total_cmp(&s(a)),
        Outcome::Improvement | Outcome::LikelyImprovement | Outcome::Deferred => s(a).total_cmp(&s(b)),
        Outcome::Changed | Outcome::HostWide => s(b).ln().abs().total_cmp(&s(a).ln().abs()),
        Outcome::Unchanged | Outcome::TooFewRepeats | Outcome::Emulated => std::cmp::Ordering::Equal,
    })
}

/// FNV-1a (Fowler, Noll, Vo) of the parts: a stable 64-bit name for a
/// figure, to derive its own bootstrap seed from.
fn fnv1a<const N: usize>(parts: [&[u8]; N]) -> u64 {
    parts.iter().flat_map(|p| p.iter()).fold(0xCBF2_9CE4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3))
}

/// `case`'s key, which the side called `other` has no ok case of.
fn one_sided_case(case: &Case, failed_there: bool, other: &str) -> String {
    let label = format::label(&case.scenario, None, &case.place(), &case.params);
    if failed_there { format!("{label} (failed in {other})") } else { label }
}

/// `name` of `case`, which the side called `other` has no value for;
/// `there` is that side's pooled figure, if it has one, for the reason.
fn one_sided_figure(case: &Case, name: &str, there: Option<&PooledFigure<'_>>, other: &str) -> String {
    let label = format::label(&case.scenario, Some(name), &case.place(), &case.params);
    match there.and_then(|f| f.missing) {
        Some(why) => format!("{label} (no value in {other}: {why})"),
        None => format!("{label} (no value in {other})"),
    }
}

/// One side's ok cases, pooled by case key, in the order first seen, and
/// its failed ones counted.
struct Pool<'a> {
    cases: Vec<(String, Pooled<'a>)>,
    index: HashMap<String, usize>,
    /// Keys with a failed case, ok ones or not.
    failed: HashMap<String, Failures<'a>>,
}

/// The failed repeats of one case key.
struct Failures<'a> {
    /// The first of them (its labels and error).
    first: &'a Case,
    count: usize,
}

/// Every ok repeat of one case key.
struct Pooled<'a> {
    /// The first such case: its scenario, target label and parameters.
    case: &'a Case,
    figures: Vec<PooledFigure<'a>>,
    /// How many ok cases were pooled.
    repeats: usize,
    /// Whether any of them ran in a guest under software emulation.
    emulated: bool,
}

/// One figure's values over every repeat.
struct PooledFigure<'a> {
    name: &'a str,
    /// As first seen: unit, direction, kind.
    figure: &'a Figure,
    /// Whether any repeat declared it a timing.
    timing: bool,
    /// The finite values measured; missing ones are skipped.
    values: Vec<f64>,
    /// Why a value was missing, the first time one was.
    missing: Option<&'a str>,
}

impl<'a> Pool<'a> {
    fn of(runs: &'a [RunRecord]) -> Pool<'a> {
        let mut pool = Pool { cases: Vec::new(), index: HashMap::new(), failed: HashMap::new() };
        for case in runs.iter().flat_map(|r| &r.cases) {
            let key = case.key();
            if case.status != Status::Ok {
                pool.failed.entry(key).or_insert(Failures { first: case, count: 0 }).count += 1;
                continue;
            }
            let at = *pool.index.entry(key.clone()).or_insert_with(|| {
                pool.cases.push((key.clone(), Pooled { case, figures: Vec::new(), repeats: 0, emulated: false }));
                pool.cases.len() - 1
            });
            pool.cases[at].1.add(case);
        }
        pool
    }

    fn get(&self, key: &str) -> Option<&Pooled<'a>> {
        self.index.get(key).map(|&at| &self.cases[at].1)
    }

    /// Every case key this side ran, ok or failed.
    fn keys(&self) -> impl Iterator<Item = &String> {
        self.cases.iter().map(|(key, _)| key).chain(self.failed.keys().filter(|key| !self.index.contains_key(*key)))
    }

    /// Whether this side ran `key` at all, ok or failed.
    fn has(&self, key: &str) -> bool {
        self.index.contains_key(key) || self.failed.contains_key(key)
    }

    /// How many ok repeats of `key` this side has.
    fn ok_repeats(&self, key: &str) -> usize {
        self.get(key).map_or(0, |p| p.repeats)
    }
}

impl<'a> Pooled<'a> {
    fn add(&mut self, case: &'a Case) {
        self.repeats += 1;
        self.emulated |= case.timings_emulated();
        for (name, figure) in case.figures.iter() {
            let value = figure.value.filter(|v| v.is_finite()).ok_or(figure.missing.as_deref());
            self.slot(name, figure).add(figure.kind, value);
        }
        // What a window figure and what it deferred come to together.
        for (name, figure, sum) in deferred::totals(case) {
            self.slot(name, figure).add(figure.kind, sum);
        }
    }

    /// The pooled figure `name`, first seen as `figure`.
    fn slot(&mut self, name: &'a str, figure: &'a Figure) -> &mut PooledFigure<'a> {
        let at = match self.figures.iter().position(|f| f.name == name) {
            Some(at) => at,
            None => {
                self.figures.push(PooledFigure { name, figure, timing: false, values: Vec::new(), missing: None });
                self.figures.len() - 1
            }
        };
        &mut self.figures[at]
    }

    fn figure(&self, name: &str) -> Option<&PooledFigure<'a>> {
        self.figures.iter().find(|f| f.name == name)
    }
}

impl<'a> PooledFigure<'a> {
    /// One repeat's value as `kind`, or why it has none (the first reason
    /// is kept).
    fn add(&mut self, kind: Kind, value: Result<f64, Option<&'a str>>) {
        self.timing |= kind == Kind::Timing;
        match value {
            Ok(v) => self.values.push(v),
            Err(why) => self.missing = self.missing.or(why),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
