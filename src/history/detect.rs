//! Where one series of values changed: the change-point detector behind
//! `fslab history`, with no store or run in it.
//!
//! - **An exact figure** changes wherever its value does: each run whose
//!   value differs from the run before is a change point. A figure that
//!   moves more often than [`UNSTEADY`] of its runs is said to vary, not
//!   listed change by change.
//! - **A timing** is read in logarithms (a step is a ratio). The series is
//!   split where a two-level fit explains it best (the largest
//!   t-statistic over every split that leaves [`MIN_SIDE`] runs a side),
//!   its noise measured around three levels (so a second step is not
//!   taken for noise) and discounted for the residuals' lag-one
//!   autocorrelation (a machine's noise is not independent run to run).
//!   The split is a change when the statistic passes the critical value
//!   for a series of its length, simulated: the same statistic over
//!   [`SIMS`] series of independent noise, its 1 − [`ALPHA`] quantile.
//!   Each side is then searched again the same way (binary segmentation),
//!   so a level shift is one change, said once.
//! - **The step it can see.** From the noise around the levels found (its
//!   spread and autocorrelation) comes the smallest step the series would
//!   find nine times in ten; each split is weighed by the step it can see
//!   between its neighbours (its spread alone, and fewer runs a side see
//!   less). Where that is larger than the threshold, the
//!   series cannot answer the question asked: a step smaller than that is
//!   not called a change but a possible one, and the series is `can't
//!   tell`, with the noise and the runs that would decide. So correlated
//!   noise, which a short series cannot measure well, wanders without
//!   being called a change; a series quiet enough calls every step it
//!   finds.
//! - **Drift**: before any split, a straight line through the series is
//!   weighed against the best split; a line that fits better (and tests
//!   stronger, when the split is significant too), significant by its own
//!   simulated critical value and moving by at least the threshold (and
//!   the step the series can see) over the series, is drift, said once.
//! - **Small**: a significant step whose 99% interval lies wholly below
//!   the threshold is said as a small change, not as a change.
//! - **Steady**: no change found where a step of the threshold would have
//!   been.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::compare::stats::SplitMix64;

/// The rate at which pure noise may be called a change (or drift).
pub const ALPHA: f64 = 0.005;

/// The fewest runs on each side of a split.
pub const MIN_SIDE: usize = 3;

/// Noise series simulated for the critical values of one length.
pub const SIMS: usize = 4000;

/// An exact figure that moves at more than this share of its runs varies.
pub const UNSTEADY: f64 = 0.25;

/// The fewest timing series of one machine a correlation is pooled over.
pub const POOL_MIN: usize = 5;

/// The power a series must have to call the absence of a change steady.
const POWER_Z: f64 = 1.2816; // one-sided z of 0.9

/// What a series says.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The change points, in order.
    pub changes: Vec<Step>,
    /// Significant steps smaller than the threshold.
    pub small: Vec<Step>,
    /// Significant steps smaller than the step the noise lets the series
    /// see: possible changes it cannot confirm.
    pub possible: Vec<Step>,
    /// A straight-line drift, when that is what the series does.
    pub drift: Option<Drift>,
    /// The noise measured (relative, as a coefficient of variation), and
    /// the lag-one autocorrelation of the residuals; `None` for an exact
    /// figure.
    pub noise: Option<Noise>,
    /// What the series is, in one word.
    pub verdict: Verdict,
}

/// The one word for a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// At least one change of the threshold or more.
    Changed,
    /// Drifts by the threshold or more.
    Drift,
    /// Could have shown a change of the threshold and did not.
    Steady,
    /// Too noisy (or too short) to say.
    CantTell,
    /// An exact figure that moves at many runs.
    Varies,
}

impl Verdict {
    /// The word tables and `--json` use.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Changed => "changed",
            Verdict::Drift => "drift",
            Verdict::Steady => "steady",
            Verdict::CantTell => "can't tell",
            Verdict::Varies => "varies",
        }
    }
}

/// A change point.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The index of the first value after the change.
    pub at: usize,
    /// The level before: a timing's mean since the change before (a
    /// geometric mean, as it is read in logarithms); an exact figure's
    /// value at the run before.
    pub before: f64,
    /// The level after.
    pub after: f64,
    /// The relative step (`after / before − 1`), and its 95% interval;
    /// an exact figure's interval is the step itself. Unbounded where the
    /// level before is none (said `from none`, `null` in JSON).
    pub relative: f64,
    /// The interval's ends.
    pub interval: (f64, f64),
    /// The test that decided it, in words (`t = 9.1 past 4.3 (p < 0.005)`).
    pub test: String,
}

/// A drift.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// The relative change over the whole series.
    pub total: f64,
    /// The test that decided it.
    pub test: String,
}

/// The noise of a timing series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// The residuals' spread, relative.
    pub cv: f64,
    /// Their lag-one autocorrelation (0 when negative).
    pub rho: f64,
    /// The smallest step (relative) this series would find nine times in
    /// ten at a split in its middle.
    pub detectable: f64,
    /// The runs that would find a step of the threshold nine times in ten.
    pub runs_needed: usize,
    /// The correlation pooled over the machine's series, when the series
    /// was judged with one.
    pub pooled: Option<Pooled>,
}

/// A lag-one autocorrelation pooled over one machine's timing series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pooled {
    /// The correlation the series is judged with: the median, less two
    /// of its standard errors (not below 0).
    pub rho: f64,
    /// The median of the series' own.
    pub median: f64,
    /// The series it is the median of.
    pub series: usize,
}

/// Find where `values` changed: `exact` for an exact figure, else a
/// timing; `threshold` the least relative change that counts.
pub fn detect(values: &[f64], exact: bool, threshold: f64) -> Finding {
    detect_with(values, exact, threshold, None)
}

/// As [`detect`], a timing's noise known to be at least as correlated run
/// to run as `pooled` (the median of its machine's series, which one
/// short series cannot measure for itself): its splits are discounted
/// and its gate widened for that correlation or its own, the larger.
pub fn detect_with(values: &[f64], exact: bool, threshold: f64, pooled: Option<Pooled>) -> Finding {
    if exact {
        return detect_exact(values);
    }
    let positive = values.iter().all(|v| *v > 0.0 && v.is_finite());
    let y: Vec<f64> = if positive { values.iter().map(|v| v.ln()).collect() } else { values.to_vec() };
    let mut finding = Finding {
        changes: Vec::new(),
        small: Vec::new(),
        possible: Vec::new(),
        drift: None,
        noise: None,
        verdict: Verdict::CantTell,
    };
    if y.len() < 2 * MIN_SIDE {
        return finding;
    }
    let floor = pooled.map_or(0.0, |p| p.rho);
    let whole = scan(&y, floor);
    let line = slope(&y, floor);
    let relative = |d: f64| if positive { d.exp() - 1.0 } else { d / mean(values).abs().max(f64::MIN_POSITIVE) };
    let (c, line_c) = critical(y.len());
    let step_found = whole.t > c;
    let total = relative(line.b * (y.len() - 1) as f64);
    if line.rss < whole.rss && (!step_found || line.t > whole.t) && line.t > line_c && total.abs() >= threshold {
        let noise = noise_of(line.sigma, line.rho, y.len(), threshold, positive, pooled);
        if noise.detectable <= threshold || total.abs() >= noise.detectable {
            finding.drift = Some(Drift { total, test: format!("slope t = {:.1} past {line_c:.1} (p < {ALPHA})", line.t) });
            finding.noise = Some(noise);
            finding.verdict = Verdict::Drift;
            return finding;
        }
    }
    let mut found = Vec::new();
    segment(&y, 0, &whole, floor, &mut |at, s: &Scan, c: f64| found.push((at, *s, c)));
    found.sort_by_key(|f| f.0);
    // The noise around the levels found, and the step it lets the series see.
    let cuts: Vec<usize> = found.iter().map(|f| f.0).collect();
    let (sigma, rho) = residual_noise(&y, &cuts);
    let noise = noise_of(sigma, rho.max(floor), y.len(), threshold, positive, pooled);
    finding.noise = Some(noise);
    // The gate weighs the spread, and the correlation pooled over the
    // machine's series when there is one: the correlation one short
    // series gives is too unsure to cost every quiet series its power. It
    // is the step this split can see, between the changes either side of
    // it: a split near an end, with few runs on one side, sees less.
    let gate_sigma = sigma * inflation(floor);
    let bounds: Vec<usize> = std::iter::once(0).chain(cuts.iter().copied()).chain(std::iter::once(y.len())).collect();
    for (i, (at, s, c)) in found.into_iter().enumerate() {
        let (left, right) = ((at - bounds[i]) as f64, (bounds[i + 2] - at) as f64);
        let sees = visible(gate_sigma, y.len(), 1.0 / left + 1.0 / right, positive);
        // The interval said is 95%; a step is small only when its 99%
        // interval lies below the threshold.
        let (lo, hi) = (s.delta - 1.96 * s.se, s.delta + 1.96 * s.se);
        let (lo99, hi99) = (s.delta - 2.576 * s.se, s.delta + 2.576 * s.se);
        // The step is said against its own level before it: a series that
        // holds a zero is judged on its mean's scale, but a step from a
        // level of none has no finite relative size.
        let said = |d: f64| if positive { d.exp() - 1.0 } else { from_level(s.left_level, d) };
        let mut step = Step {
            at,
            before: s.left_level,
            after: s.right_level,
            relative: said(s.delta),
            interval: (said(lo), said(hi)),
            test: format!("t = {:.1} past {c:.1} (p < {ALPHA})", s.t),
        };
        if positive {
            (step.before, step.after) = (step.before.exp(), step.after.exp());
        }
        if relative(lo99).abs().max(relative(hi99).abs()) < threshold && lo99.signum() == hi99.signum() {
            finding.small.push(step);
        } else if sees > threshold && step.relative.abs() < sees {
            finding.possible.push(step);
        } else {
            finding.changes.push(step);
        }
    }
    finding.verdict = if !finding.changes.is_empty() {
        Verdict::Changed
    } else if noise.detectable <= threshold && finding.possible.is_empty() {
        Verdict::Steady
    } else {
        Verdict::CantTell
    };
    finding
}

/// The lag-one autocorrelation of one machine's timing series, pooled:
/// the median of `rhos` (each series' own, measured alone) less two of
/// its standard errors (1.25 s/√k), so a machine whose noise is
/// independent is not given a correlation by the few series that measured
/// one by chance; `None` for fewer than [`POOL_MIN`] series.
pub fn pool(rhos: &[f64]) -> Option<Pooled> {
    let k = rhos.len();
    if k < POOL_MIN {
        return None;
    }
    let mut sorted = rhos.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if k % 2 == 1 { sorted[k / 2] } else { (sorted[k / 2 - 1] + sorted[k / 2]) / 2.0 };
    let m = mean(rhos);
    let sd = (rhos.iter().map(|r| (r - m) * (r - m)).sum::<f64>() / (k - 1) as f64).sqrt();
    let rho = (median - 2.0 * 1.2533 * sd / (k as f64).sqrt()).max(0.0);
    Some(Pooled { rho, median, series: k })
}

/// A relative step in words: `+8.3%`, or `from none` where the level
/// before it was none.
pub fn percent(relative: f64) -> String {
    if relative.is_finite() { format!("{:+.1}%", relative * 100.0) } else { "from none".into() }
}

/// `delta` as a fraction of the level `before`; unbounded (signed as
/// `delta`) when that level is none.
fn from_level(before: f64, delta: f64) -> f64 {
    if before.abs() > f64::EPSILON * delta.abs().max(1.0) {
        delta / before.abs()
    } else if delta == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(delta)
    }
}

/// An exact figure: a change wherever the value moves.
fn detect_exact(values: &[f64]) -> Finding {
    let changes: Vec<Step> = (1..values.len())
        .filter(|&i| values[i] != values[i - 1])
        .map(|i| {
            let (before, after) = (values[i - 1], values[i]);
            let relative = from_level(before, after - before);
            Step { at: i, before, after, relative, interval: (relative, relative), test: "exact: the value moved".into() }
        })
        .collect();
    let verdict = match changes.len() {
        0 if values.len() < 2 => Verdict::CantTell,
        0 => Verdict::Steady,
        n if n as f64 > UNSTEADY * values.len() as f64 && n > 2 => Verdict::Varies,
        _ => Verdict::Changed,
    };
    let changes = if verdict == Verdict::Varies { Vec::new() } else { changes };
    Finding { changes, small: Vec::new(), possible: Vec::new(), drift: None, noise: None, verdict }
}

/// Binary segmentation of `y` (offset `base` in the whole series), `s`
/// its best split: each significant split is handed to `found`, then both
/// sides are searched.
fn segment(y: &[f64], base: usize, s: &Scan, floor: f64, found: &mut dyn FnMut(usize, &Scan, f64)) {
    let c = critical(y.len()).0;
    if s.t <= c {
        return;
    }
    found(base + s.at, s, c);
    for (side, from) in [(&y[..s.at], base), (&y[s.at..], base + s.at)] {
        if side.len() >= 2 * MIN_SIDE {
            segment(side, from, &scan(side, floor), floor, found);
        }
    }
}

/// The best split of a series.
#[derive(Debug, Clone, Copy)]
struct Scan {
    at: usize,
    t: f64,
    delta: f64,
    se: f64,
    left_level: f64,
    right_level: f64,
    rss: f64,
}

/// The split of `y` with the largest t-statistic, discounted for the
/// residuals' lag-one autocorrelation (at least `floor`). The noise is
/// measured around three levels (the best split, and the best further
/// split of either side), so a second step the one split leaves unfit is
/// not taken for noise.
fn scan(y: &[f64], floor: f64) -> Scan {
    let n = y.len();
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    for v in y {
        prefix.push(prefix.last().unwrap() + v);
    }
    let (best, best_gain) = best_cut(&prefix, 0, n).unwrap_or((n / 2, 0.0));
    let (nl, nr) = (best as f64, (n - best) as f64);
    let (ml, mr) = (prefix[best] / nl, (prefix[n] - prefix[best]) / nr);
    let m = prefix[n] / n as f64;
    let ss: f64 = y.iter().map(|v| (v - m) * (v - m)).sum();
    let rss = (ss - best_gain).max(0.0);
    // A second cut, on whichever side it explains more.
    let second =
        [best_cut(&prefix, 0, best), best_cut(&prefix, best, n)].into_iter().flatten().max_by(|a, b| a.1.total_cmp(&b.1));
    let cuts: Vec<usize> = std::iter::once(best).chain(second.map(|(at, _)| at)).collect();
    let (sigma, rho) = residual_noise(y, &cuts);
    let se = sigma * inflation(rho.max(floor)) * (1.0 / nl + 1.0 / nr).sqrt();
    let t = if se > 0.0 {
        (mr - ml).abs() / se
    } else if mr != ml {
        f64::INFINITY
    } else {
        0.0
    };
    Scan { at: best, t, delta: mr - ml, se, left_level: ml, right_level: mr, rss }
}

/// The cut of `y[from..to]` (given its prefix sums) that explains most of
/// its spread, with that share (`None` when too short to cut).
fn best_cut(prefix: &[f64], from: usize, to: usize) -> Option<(usize, f64)> {
    let n = to - from;
    if n < 2 * MIN_SIDE {
        return None;
    }
    let total = prefix[to] - prefix[from];
    let mut best = None::<(usize, f64)>;
    for at in from + MIN_SIDE..=to - MIN_SIDE {
        let (nl, nr) = ((at - from) as f64, (to - at) as f64);
        let d = (total - (prefix[at] - prefix[from])) / nr - (prefix[at] - prefix[from]) / nl;
        let gain = nl * nr / n as f64 * d * d;
        if best.is_none_or(|(_, g)| gain > g) {
            best = Some((at, gain));
        }
    }
    best
}

/// A straight line through a series.
#[derive(Debug, Clone, Copy)]
struct Line {
    b: f64,
    t: f64,
    sigma: f64,
    rho: f64,
    rss: f64,
}

/// The least-squares line through `y`, its slope's t discounted as a
/// split's is (for at least `floor`).
fn slope(y: &[f64], floor: f64) -> Line {
    let n = y.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = mean(y);
    let sxx: f64 = (0..y.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    let sxy: f64 = y.iter().enumerate().map(|(i, v)| (i as f64 - mx) * (v - my)).sum();
    let b = sxy / sxx;
    let residual = |i: usize| y[i] - my - b * (i as f64 - mx);
    let rss: f64 = (0..y.len()).map(|i| residual(i).powi(2)).sum();
    let sigma = (rss / (n - 2.0)).sqrt();
    let rho = lag_one(y.len(), residual, rss, 2).max(floor);
    let se = sigma * inflation(rho) / sxx.sqrt();
    let t = if se > 0.0 {
        b.abs() / se
    } else if b != 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    Line { b, t, sigma, rho, rss }
}

/// The lag-one autocorrelation of `n` residuals around `fitted`
/// parameters, corrected for the bias a short series gives it (about
/// −(1 + 3ρ + fitted)/n), clamped to 0..0.8.
fn lag_one(n: usize, residual: impl Fn(usize) -> f64, rss: f64, fitted: usize) -> f64 {
    if rss <= 0.0 {
        return 0.0;
    }
    let raw = (1..n).map(|i| residual(i) * residual(i - 1)).sum::<f64>() / rss;
    let corrected = raw + (1.0 + 3.0 * raw.max(0.0) + fitted as f64) / n as f64;
    corrected.clamp(0.0, 0.8)
}

/// The residuals' spread and autocorrelation around the levels between
/// `cuts`.
fn residual_noise(y: &[f64], cuts: &[usize]) -> (f64, f64) {
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(0);
    bounds.push(y.len());
    bounds.sort_unstable();
    bounds.dedup();
    let mut residuals = Vec::with_capacity(y.len());
    for w in bounds.windows(2) {
        let m = mean(&y[w[0]..w[1]]);
        residuals.extend(y[w[0]..w[1]].iter().map(|v| v - m));
    }
    let rss: f64 = residuals.iter().map(|r| r * r).sum();
    let df = (y.len() as f64 - (bounds.len() - 1) as f64).max(1.0);
    (((rss / df).sqrt()), lag_one(residuals.len(), |i| residuals[i], rss, bounds.len() - 1))
}

/// The smallest step (relative when `relative`) found nine times in ten
/// at a split whose sides' runs are `nl` and `nr` (`spread` = 1/nl +
/// 1/nr), in a series of `n` whose independent noise is `sigma`.
fn visible(sigma: f64, n: usize, spread: f64, relative: bool) -> f64 {
    let c = critical(n.max(2 * MIN_SIDE)).0;
    let d = (c + POWER_Z) * sigma * spread.sqrt();
    if relative { d.exp() - 1.0 } else { d }
}

/// How much a mean's spread grows under lag-one autocorrelation `rho`
/// over independent noise's: √((1 + ρ)/(1 − ρ)).
fn inflation(rho: f64) -> f64 {
    ((1.0 + rho) / (1.0 - rho)).sqrt()
}

/// The noise in people's terms, with the step it could find.
fn noise_of(sigma: f64, rho: f64, n: usize, threshold: f64, relative: bool, pooled: Option<Pooled>) -> Noise {
    let c = critical(n.max(2 * MIN_SIDE)).0;
    let inflate = inflation(rho);
    // A split in the middle: 1/(n/2) + 1/(n/2) = 4/n.
    let detectable = visible(sigma * inflate, n, 4.0 / n as f64, relative);
    let want = if relative { (1.0 + threshold).ln() } else { threshold };
    let runs_needed = (4.0 * ((c + POWER_Z) * sigma * inflate / want).powi(2)).ceil() as usize;
    let cv = if relative { sigma.exp() - 1.0 } else { sigma };
    Noise { cv, rho, detectable, runs_needed: runs_needed.max(2 * MIN_SIDE), pooled }
}

/// The critical values (split, slope) for a series of `n` values: the
/// larger of those simulated at the two grid lengths around it (every
/// length to 24, then about an eighth apart), each simulated once.
pub fn critical(n: usize) -> (f64, f64) {
    let (below, above) = grid_around(n);
    let (a, b) = (simulated(below), simulated(above));
    (a.0.max(b.0), a.1.max(b.1))
}

/// The grid lengths at or around `n`.
fn grid_around(n: usize) -> (usize, usize) {
    if n <= 24 {
        return (n, n);
    }
    let mut below = 24;
    loop {
        let next = below + (below / 8).max(1);
        if next > n {
            return (below, next);
        }
        if next == n {
            return (n, n);
        }
        below = next;
    }
}

/// The critical values simulated at length `n`, once per process
/// however many series of that length are judged at once.
fn simulated(n: usize) -> (f64, f64) {
    type Once = std::sync::Arc<OnceLock<(f64, f64)>>;
    static TABLE: OnceLock<Mutex<HashMap<usize, Once>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mutex::new(HashMap::new()));
    let once = table.lock().unwrap_or_else(|e| e.into_inner()).entry(n).or_default().clone();
    *once.get_or_init(|| simulate(n))
}

/// The 1 − ALPHA quantiles of the split and slope statistics over series
/// of independent noise.
fn simulate(n: usize) -> (f64, f64) {
    use rayon::prelude::*;
    // In chunks of their own seeds, so the cores share the work and the
    // values stay the same however many there are.
    const CHUNKS: usize = 16;
    let (mut ts, mut ls): (Vec<f64>, Vec<f64>) = (0..CHUNKS)
        .into_par_iter()
        .flat_map_iter(|chunk| {
            let mut rng = SplitMix64::new(0x5eed_0000 + (n as u64) * 64 + chunk as u64);
            let mut y = vec![0.0; n];
            (0..SIMS / CHUNKS)
                .map(|_| {
                    for v in y.iter_mut() {
                        *v = normal(&mut rng);
                    }
                    (scan(&y, 0.0).t, slope(&y, 0.0).t)
                })
                .collect::<Vec<_>>()
        })
        .unzip();
    (quantile(&mut ts, 1.0 - ALPHA), quantile(&mut ls, 1.0 - ALPHA))
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The `q` quantile of `values` (sorted in place).
fn quantile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let i = ((values.len() as f64 - 1.0) * q).round() as usize;
    values[i.min(values.len() - 1)]
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// A seeded synthetic series for tests and the benchmark: `n` values of
/// level 1 with relative noise `cv` (AR(1) with `rho`), a relative step
/// of `step` from index `at`.
pub fn synthetic(n: usize, at: usize, step: f64, cv: f64, rho: f64, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    let innovation = (1.0 - rho * rho).sqrt();
    let mut e = normal(&mut rng);
    (0..n)
        .map(|i| {
            let v = (1.0 + if i >= at { step } else { 0.0 }) * (1.0 + cv * e);
            e = rho * e + innovation * normal(&mut rng);
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_figure_changes_where_its_value_moves() {
        let f = detect(&[12.0, 12.0, 12.0, 12.0, 12.0, 12.0, 13.0, 13.0, 13.0, 13.0], true, 0.05);
        assert_eq!(f.verdict, Verdict::Changed);
        assert_eq!(f.changes.len(), 1);
        assert_eq!((f.changes[0].at, f.changes[0].before, f.changes[0].after), (6, 12.0, 13.0));
        assert_eq!(detect(&[5.0; 8], true, 0.05).verdict, Verdict::Steady);
        let flapping = detect(&[5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0, 6.0], true, 0.05);
        assert_eq!(flapping.verdict, Verdict::Varies);
        assert!(flapping.changes.is_empty());
    }

    #[test]
    fn a_step_from_none_is_said_from_none_not_as_a_share_of_the_mean() {
        // A timing that read 0 for six runs, then about 0.068: its relative
        // step has no finite size (a share of the series' mean said +133%).
        let mut y = vec![0.0; 6];
        y.extend([0.068, 0.0681, 0.0679, 0.068, 0.0682, 0.0678]);
        let f = detect(&y, false, 0.05);
        assert_eq!(f.changes.len(), 1, "{f:?}");
        assert_eq!(f.changes[0].at, 6);
        assert!(f.changes[0].relative.is_infinite() && f.changes[0].relative > 0.0, "{:?}", f.changes[0]);
        assert_eq!(percent(f.changes[0].relative), "from none");
        let exact = detect(&[0.0, 0.0, 0.0, 3.0, 3.0, 3.0], true, 0.05);
        assert_eq!(percent(exact.changes[0].relative), "from none");
        assert_eq!(percent(detect(&[4.0, 4.0, 5.0], true, 0.05).changes[0].relative), "+25.0%");
    }

    #[test]
    fn a_level_shift_is_one_change_at_its_run() {
        let y = synthetic(30, 15, 0.10, 0.01, 0.0, 1);
        let f = detect(&y, false, 0.05);
        assert_eq!(f.verdict, Verdict::Changed, "{f:?}");
        assert_eq!(f.changes.len(), 1, "{f:?}");
        assert!(f.changes[0].at.abs_diff(15) <= 2, "{f:?}");
        let (lo, hi) = f.changes[0].interval;
        assert!(lo < 0.10 && 0.10 < hi, "{f:?}");
    }

    #[test]
    fn noise_alone_is_steady_or_cant_tell_never_a_change() {
        for seed in 0..50 {
            let quiet = detect(&synthetic(30, 30, 0.0, 0.01, 0.0, seed), false, 0.05);
            assert!(quiet.changes.is_empty() || seed == u64::MAX, "seed {seed}: {quiet:?}");
        }
        let quiet = detect(&synthetic(30, 30, 0.0, 0.005, 0.0, 3), false, 0.05);
        assert_eq!(quiet.verdict, Verdict::Steady, "{quiet:?}");
        let noisy = detect(&synthetic(30, 30, 0.0, 0.10, 0.0, 3), false, 0.05);
        assert_eq!(noisy.verdict, Verdict::CantTell, "{noisy:?}");
        let n = noisy.noise.unwrap();
        assert!(n.runs_needed > 30 && n.detectable > 0.05, "{n:?}");
    }

    #[test]
    fn a_drift_is_said_once_as_drift() {
        let y: Vec<f64> =
            synthetic(30, 30, 0.0, 0.005, 0.0, 9).iter().enumerate().map(|(i, v)| v * (1.0 + 0.005 * i as f64)).collect();
        let f = detect(&y, false, 0.05);
        assert_eq!(f.verdict, Verdict::Drift, "{f:?}");
        assert!(f.changes.is_empty());
        assert!((f.drift.unwrap().total - 0.145).abs() < 0.03);
    }

    #[test]
    fn a_step_below_the_threshold_is_small_not_a_change() {
        let y = synthetic(30, 15, 0.02, 0.002, 0.0, 4);
        let f = detect(&y, false, 0.05);
        assert!(f.changes.is_empty(), "{f:?}");
        assert_eq!(f.small.len(), 1, "{f:?}");
        assert_eq!(f.verdict, Verdict::Steady, "{f:?}");
    }

    #[test]
    fn two_shifts_are_two_changes() {
        let mut y = synthetic(40, 12, 0.2, 0.01, 0.0, 5);
        for v in &mut y[28..] {
            *v *= 0.7;
        }
        let f = detect(&y, false, 0.05);
        let at: Vec<usize> = f.changes.iter().map(|s| s.at).collect();
        assert_eq!(at.len(), 2, "{f:?}");
        assert!(at[0].abs_diff(12) <= 1 && at[1].abs_diff(28) <= 1, "{at:?}");
    }

    #[test]
    fn a_machine_s_pooled_correlation_keeps_its_correlated_noise_from_being_called_a_change() {
        let machine = |rho: f64, salt: u64| -> Vec<Vec<f64>> {
            (0..200).map(|seed| synthetic(30, 30, 0.0, 0.02, rho, seed * 7 + salt)).collect()
        };
        let own_rhos =
            |ys: &[Vec<f64>]| -> Vec<f64> { ys.iter().filter_map(|y| detect(y, false, 0.05).noise.map(|n| n.rho)).collect() };
        // Independent noise: the bound under the median is 0, nothing lost.
        let quiet = machine(0.0, 1);
        let p = pool(&own_rhos(&quiet)[..20]).unwrap();
        assert_eq!(p.rho, 0.0, "{p:?}");
        // A floor of 0 judges as each series alone does (history then
        // only notes the pool).
        for y in &quiet {
            let mut with = detect_with(y, false, 0.05, Some(p));
            with.noise.as_mut().unwrap().pooled = None;
            assert_eq!(with, detect(y, false, 0.05));
        }
        assert!(pool(&[0.5; POOL_MIN - 1]).is_none());
        // AR(1) noise of 0.5: measured by twenty series, and the changes
        // each series alone would call fall to at most one in a hundred.
        let correlated = machine(0.5, 2);
        let p = pool(&own_rhos(&correlated)[..20]).unwrap();
        assert!(p.rho > 0.25 && p.median > p.rho && p.median < 0.7, "{p:?}");
        let changed = |f: Finding| usize::from(f.verdict == Verdict::Changed);
        let alone: usize = correlated.iter().map(|y| changed(detect(y, false, 0.05))).sum();
        let pooled: usize = correlated.iter().map(|y| changed(detect_with(y, false, 0.05, Some(p)))).sum();
        assert!(pooled <= 2 && pooled < alone, "changed: {alone} alone, {pooled} pooled, of 200");
        // A real step still shows through it.
        let stepped = detect_with(&synthetic(30, 15, 0.15, 0.02, 0.5, 3), false, 0.05, Some(p));
        assert_eq!(stepped.verdict, Verdict::Changed, "{stepped:?}");
        assert_eq!(stepped.noise.unwrap().pooled, Some(p));
    }

    #[test]
    fn critical_values_are_computed_once_and_grow_with_length() {
        let (a, _) = critical(12);
        let (b, _) = critical(60);
        assert!(a > 2.0 && b > 2.0 && a > b, "{a} {b}");
        assert_eq!(critical(12).0, a);
    }
}
