//! The statistics `compare` judges timings with, as small pure functions:
//! the median, a ratio that survives zeros, a seeded generator, a
//! percentile bootstrap of a ratio of medians, and the Mann–Whitney U
//! (Wilcoxon rank-sum) test.
//!
//! Nothing here knows about runs or figures; every function takes plain
//! samples and says what it does with degenerate ones.

/// Samples up to this many values in all (both sides together) get the
/// exact U distribution when they have no ties; beyond it the normal
/// approximation is close enough and the exact table grows as (n·m)².
pub const EXACT_LIMIT: usize = 50;

/// The median: the middle value, or the mean of the two middle values
/// for an even count; `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    median_in_place(&mut sorted)
}

/// [`median`] reordering `values` instead of copying them (the bootstrap
/// calls it tens of thousands of times).
fn median_in_place(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

/// `num / den` for non-negative values, defined at zero the way a
/// comparison needs: nothing to nothing is no change (1), something from
/// nothing is infinitely more (+∞). Never NaN for non-negative input.
pub fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else if num == 0.0 {
        1.0
    } else {
        f64::INFINITY
    }
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): 64 bits of state, good enough to draw
/// bootstrap indices, and the same sequence for the same seed everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by Lemire's multiply-shift; its bias,
    /// below n/2⁶⁴, is far under anything a bootstrap could notice.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Percentile bootstrap (Efron and Tibshirani, "An Introduction to the
/// Bootstrap", 1993, ch. 13) of `median(new) / median(base)`, with
/// [`ratio`]'s rule at zero: `resamples` times, draw each side with
/// replacement at its own size and take the ratio of the medians; the
/// interval runs from the k-th smallest to the k-th largest of those
/// ratios, k = ⌊resamples · alpha / 2⌋ (at least 1). Taking order
/// statistics rather than interpolating keeps an infinite ratio from
/// turning into NaN. `None` when a side is empty or `resamples` is 0.
/// Values must be non-negative.
pub fn bootstrap_ratio_ci(
    base: &[f64],
    new: &[f64],
    resamples: usize,
    alpha: f64,
    rng: &mut SplitMix64,
) -> Option<[f64; 2]> {
    if base.is_empty() || new.is_empty() || resamples == 0 {
        return None;
    }
    let mut draw_base = vec![0.0; base.len()];
    let mut draw_new = vec![0.0; new.len()];
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in &mut draw_base {
            *slot = base[rng.below(base.len())];
        }
        for slot in &mut draw_new {
            *slot = new[rng.below(new.len())];
        }
        let b = median_in_place(&mut draw_base)?;
        let n = median_in_place(&mut draw_new)?;
        ratios.push(ratio(n, b));
    }
    ratios.sort_unstable_by(f64::total_cmp);
    let k = ((resamples as f64 * alpha / 2.0).floor() as usize).clamp(1, resamples);
    Some([ratios[k - 1], ratios[resamples - k]])
}

/// Benjamini–Hochberg adjusted p-values ("q-values"; Benjamini and
/// Hochberg, J. R. Statist. Soc. B 57, 1995) of `p`, in the same order:
/// q_(i) = min over j >= i of p_(j) · m / j for the p-values sorted
/// ascending, capped at 1. Calling a test significant when q < alpha keeps
/// the expected share of false discoveries among the significant ones at
/// alpha, however many figures a comparison tests: a comparison of two
/// runs of the same setup tests hundreds, and some p under 0.05 among
/// them is to be expected by chance alone.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut q = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64).min(1.0);
        q[i] = running;
    }
    q
}

/// The outcome of a Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankSum {
    /// U of the first sample: the pairs (x, y) with x > y, ties counting
    /// half.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` is exact (from the U distribution) or from the normal
    /// approximation.
    pub exact: bool,
}

/// The two-sided Mann–Whitney U test (Mann and Whitney, Ann. Math. Statist.
/// 18, 1947) of `x` against `y`. Without ties and with at most
/// [`EXACT_LIMIT`] values in all, p is exact: twice the smaller tail of the
/// U distribution, counted by [`u_counts`]. Otherwise p comes from the
/// normal approximation with the tie-corrected variance
/// σ² = n·m/12 · (N + 1 − Σ(t³ − t) / (N(N − 1))) (Lehmann,
/// "Nonparametrics", 1975, §1.4) and a continuity correction of ½; when
/// every value ties (σ = 0) p is 1. `None` when a sample is empty.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<RankSum> {
    let (n, m) = (x.len(), y.len());
    if n == 0 || m == 0 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = x.iter().map(|&v| (v, true)).chain(y.iter().map(|&v| (v, false))).collect();
    all.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Midranks: a run of t equal values shares the mean of its ranks.
    let total = all.len();
    let mut rank_sum_x = 0.0;
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < total {
        let end = start + all[start..].iter().take_while(|v| v.0 == all[start].0).count();
        let t = (end - start) as f64;
        let midrank = (start + 1 + end) as f64 / 2.0;
        rank_sum_x += midrank * all[start..end].iter().filter(|v| v.1).count() as f64;
        tie_term += t * t * t - t;
        start = end;
    }
    let u = rank_sum_x - (n * (n + 1)) as f64 / 2.0;
    let nm = (n * m) as f64;
    if tie_term == 0.0 && total <= EXACT_LIMIT {
        let tail = (u.min(nm - u)).round() as usize;
        let counts = u_counts(n, m);
        let all_ways: u64 = counts.iter().sum();
        let ways: u64 = counts[..=tail].iter().sum();
        let p = (2.0 * ways as f64 / all_ways as f64).min(1.0);
        return Some(RankSum { u, p, exact: true });
    }
    let big_n = total as f64;
    let variance = nm / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    let p = if variance > 0.0 {
        let z = ((u - nm / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
        normal_two_sided(z)
    } else {
        1.0
    };
    Some(RankSum { u, p, exact: false })
}

/// How many of the C(n+m, n) orderings of two untied samples of sizes n
/// and m give each U = 0..=n·m, by Mann and Whitney's recurrence: the
/// largest value belongs to x (beating all m of y) or to y, so
/// count(n, m, u) = count(n−1, m, u−m) + count(n, m−1, u).
pub fn u_counts(n: usize, m: usize) -> Vec<u64> {
    // table[i][j] holds the counts for sizes i and j; row 0 and column 0
    // have the single ordering with U = 0.
    let mut table: Vec<Vec<Vec<u64>>> = vec![vec![vec![1]; m + 1]; n + 1];
    for i in 1..=n {
        for j in 1..=m {
            let mut counts = vec![0u64; i * j + 1];
            for (u, c) in table[i - 1][j].iter().enumerate() {
                counts[u + j] += c;
            }
            for (u, c) in table[i][j - 1].iter().enumerate() {
                counts[u] += c;
            }
            table[i][j] = counts;
        }
    }
    std::mem::take(&mut table[n][m])
}

/// The smallest two-sided p [`mann_whitney`] can give for samples of
/// sizes n and m, whatever the values: the exact 2 / C(n+m, n) where the
/// exact test applies, else the normal approximation at U = 0 without
/// ties. 1 when a sample is empty.
pub fn min_two_sided_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    if n + m <= EXACT_LIMIT {
        // C(n+m, n) built up as a product of exact integer steps.
        let ways = (1..=n as u64).fold(1u64, |c, i| c * (m as u64 + i) / i);
        return (2.0 / ways as f64).min(1.0);
    }
    let nm = (n * m) as f64;
    let sigma = (nm * (n + m + 1) as f64 / 12.0).sqrt();
    normal_two_sided((nm / 2.0 - 0.5) / sigma)
}

/// The fewest values per side (equal sides, at least 2) with which
/// [`mann_whitney`] can reach p < `alpha`; `None` when no size up to
/// 10 000 can (alpha ≤ 0, or absurdly small).
pub fn values_needed(alpha: f64) -> Option<usize> {
    (2..=10_000).find(|&k| min_two_sided_p(k, k) < alpha)
}

/// The fewest values per side (equal sides, at least 2) with which the
/// rank-sum test would decide an effect separated as `x` and `y` are: p <
/// `level` when the share of (x, y) pairs that [`mann_whitney`]'s U
/// counts, U/(n·m), stays what it was seen to be. At k values a side U
/// is that share of k², rounded, its p the exact two-sided one where
/// [`mann_whitney`] would be exact (2k ≤ [`EXACT_LIMIT`]), else the normal
/// approximation without ties. Samples wholly apart (a share of 0 or 1)
/// need the fewest k with [`min_two_sided_p`]`(k, k) < level`. `None`
/// when a sample is empty, when the share is ½ (nothing apart), or when
/// no size up to 10 000 gets there.
pub fn values_to_decide(x: &[f64], y: &[f64], level: f64) -> Option<usize> {
    let seen = mann_whitney(x, y)?;
    let (n, m) = (x.len() as f64, y.len() as f64);
    // How far the smaller tail lies from the middle, as a share of pairs.
    let tail_share = (seen.u / (n * m)).min(1.0 - seen.u / (n * m));
    if tail_share >= 0.5 {
        return None;
    }
    (2..=10_000usize).find(|&k| {
        let pairs = (k * k) as f64;
        let tail = (tail_share * pairs).round();
        let p = if 2 * k <= EXACT_LIMIT {
            let tails = equal_size_tails();
            tails[k][tail as usize]
        } else {
            let sigma = (pairs * (2 * k + 1) as f64 / 12.0).sqrt();
            normal_two_sided(((pairs / 2.0 - tail) - 0.5).max(0.0) / sigma)
        };
        p < level
    })
}

/// For k = 0..=[`EXACT_LIMIT`]/2 values a side, the exact two-sided p of
/// each U = 0..=k², no ties: twice the share of orderings with U at most
/// that, capped at 1. Counted once, by [`u_counts`]'s recurrence.
fn equal_size_tails() -> &'static [Vec<f64>] {
    static TAILS: std::sync::OnceLock<Vec<Vec<f64>>> = std::sync::OnceLock::new();
    TAILS.get_or_init(|| {
        (0..=EXACT_LIMIT / 2)
            .map(|k| {
                let counts = u_counts(k, k);
                let all: u64 = counts.iter().sum();
                let mut below = 0u64;
                counts
                    .iter()
                    .map(|c| {
                        below += c;
                        (2.0 * below as f64 / all as f64).min(1.0)
                    })
                    .collect()
            })
            .collect()
    })
}

/// Two-sided tail of the standard normal beyond |z|: erfc(|z|/√2).
fn normal_two_sided(z: f64) -> f64 {
    erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

/// The complementary error function by the Chebyshev fit of Press et al.,
/// "Numerical Recipes" (erfcc), with a relative error below 1.2·10⁻⁷
/// everywhere: ample for comparing a p-value with alpha.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let coefficients = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let poly = coefficients.iter().rev().fold(0.0, |acc, c| c + t * acc);
    let tail = t * (-z * z + poly).exp();
    if x >= 0.0 { tail } else { 2.0 - tail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benjamini_hochberg_matches_a_hand_computation() {
        // Sorted p: 0.01, 0.02, 0.03, 0.5 (m = 4): raw q = 0.04, 0.04, 0.04,
        // 0.5; the running minimum from the top keeps them.
        let q = benjamini_hochberg(&[0.03, 0.5, 0.01, 0.02]);
        let want = [0.04, 0.5, 0.04, 0.04];
        for (got, want) in q.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{q:?}");
        }
        // One small p among many large ones is not a discovery.
        let mut many = vec![0.9; 29];
        many.push(0.029);
        assert!(benjamini_hochberg(&many)[29] > 0.05);
        // Thirty small ones all are: a slowdown everywhere is believed.
        assert!(benjamini_hochberg(&[0.029; 30]).iter().all(|&q| (q - 0.029).abs() < 1e-12));
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[0.7]), [0.7]);
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn medians_of_odd_even_one_and_none() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn ratios_at_zero_are_one_or_infinite_never_nan() {
        assert_eq!(ratio(6.0, 3.0), 2.0);
        assert_eq!(ratio(0.0, 0.0), 1.0);
        assert_eq!(ratio(5.0, 0.0), f64::INFINITY);
        assert_eq!(ratio(0.0, 5.0), 0.0);
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // The reference C code's first outputs for a state of 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
        let mut rng = SplitMix64::new(7);
        assert!((0..1000).all(|_| rng.below(3) < 3));
    }

    #[test]
    fn exact_u_counts_are_the_hand_counted_ones() {
        // Sizes 3 and 3: C(6, 3) = 20 orderings.
        assert_eq!(u_counts(3, 3), [1, 1, 2, 3, 3, 3, 3, 2, 1, 1]);
        assert_eq!(u_counts(4, 4).iter().sum::<u64>(), 70);
        assert_eq!(u_counts(2, 0), [1]);
    }

    #[test]
    fn separated_samples_give_u_zero_and_p_two_in_seventy() {
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert_eq!(r.u, 0.0);
        assert!(r.exact);
        assert!(close(r.p, 2.0 / 70.0, 1e-12), "{}", r.p);
        // The other way round U is n·m and p the same.
        let r = mann_whitney(&[5.0, 6.0, 7.0, 8.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(r.u, 16.0);
        assert!(close(r.p, 2.0 / 70.0, 1e-12));
    }

    #[test]
    fn interleaved_samples_give_the_hand_counted_p() {
        // x = 1 3 5, y = 2 4 6: x beats y in (3,2), (5,2), (5,4), so U = 3;
        // P(U ≤ 3) = (1+1+2+3)/20, two-sided p = 14/20.
        let r = mann_whitney(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]).unwrap();
        assert_eq!(r.u, 3.0);
        assert!(close(r.p, 0.7, 1e-12));
        // The middle of the distribution caps at 1.
        let r = mann_whitney(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
        assert_eq!(r.u, 2.0);
        assert_eq!(r.p, 1.0);
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        // x = 1 2 2 3, y = 2 3 3 4. Ranks: 1→1, the three 2s share
        // (2+3+4)/3 = 3, the three 3s share (5+6+7)/3 = 6, 4→8.
        // R_x = 1+3+3+6 = 13, U = 13 − 4·5/2 = 3; mean n·m/2 = 8.
        // Ties: two runs of 3, Σ(t³−t) = 48; N = 8.
        // σ² = 16/12 · (9 − 48/56) = 10.857142…, σ = 3.295017…
        // z = (|3 − 8| − 0.5)/σ = 1.365698…; p = 2(1 − Φ(z)) = 0.172034…
        let r = mann_whitney(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0]).unwrap();
        assert_eq!(r.u, 3.0);
        assert!(!r.exact);
        assert!(close(r.p, 0.172_034, 1e-6), "{}", r.p);
    }

    #[test]
    fn all_tied_or_empty_samples() {
        let r = mann_whitney(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
        assert_eq!((r.u, r.p), (3.0, 1.0));
        assert_eq!(mann_whitney(&[], &[1.0]), None);
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        // 30 against 30, fully separated: U = 0, σ² = 900·61/12 = 4575,
        // z = (450 − 0.5)/67.6387… = 6.6456…, p ≈ 3.0e-11.
        let x: Vec<f64> = (0..30).map(f64::from).collect();
        let y: Vec<f64> = (100..130).map(f64::from).collect();
        let r = mann_whitney(&x, &y).unwrap();
        assert!(!r.exact);
        assert_eq!(r.u, 0.0);
        assert!(r.p > 2.9e-11 && r.p < 3.1e-11, "{}", r.p);
    }

    #[test]
    fn the_smallest_p_decides_how_many_values_are_needed() {
        assert!(close(min_two_sided_p(3, 3), 0.1, 1e-12));
        assert!(close(min_two_sided_p(4, 4), 2.0 / 70.0, 1e-12));
        assert_eq!(min_two_sided_p(1, 1), 1.0);
        assert_eq!(min_two_sided_p(0, 5), 1.0);
        assert_eq!(values_needed(0.05), Some(4));
        // 2/C(10,5) = 2/252 ≈ 0.0079 < 0.01; 2/C(8,4) = 0.029 is not.
        assert_eq!(values_needed(0.01), Some(5));
        assert_eq!(values_needed(0.0), None);
    }

    #[test]
    fn the_values_to_decide_an_effect_follow_its_separation() {
        // Wholly apart at 3 a side: 4 a side give p = 2/70 < 0.05, as
        // the smallest p says; at 0.01, 5 (2/252).
        let (low, high) = ([1.0, 1.1, 1.2], [2.0, 2.1, 2.2]);
        assert_eq!(values_to_decide(&low, &high, 0.05), Some(4));
        assert_eq!(values_to_decide(&high, &low, 0.05), Some(4), "either way round");
        assert_eq!(values_to_decide(&low, &high, 0.01), values_needed(0.01));
        assert_eq!(values_to_decide(&[1.0], &[2.0], 0.05), Some(4), "one value a side, apart");
        // One pair of nine crossed (U = 1): at 5 a side U = 3 gives
        // 2·(1+1+2+3)/252 = 0.056, at 6 U = 4 gives 2·24/924 = 0.026.
        assert_eq!(values_to_decide(&[1.0, 1.1, 2.05], &[2.0, 2.1, 2.2], 0.05), Some(6));
        // Interleaved 1 3 5 / 2 4 6 (U = 3 of 9): 24 a side, still exact
        // (U = 192 of 576); by 65 the normal approximation decides 0.4.
        assert_eq!(values_to_decide(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0], 0.05), Some(24));
        let (x, y): (Vec<f64>, Vec<f64>) = ((0..5).map(|i| f64::from(i) * 2.0 + 0.5).collect(), (0..5).map(|i| f64::from(i) * 2.0).collect());
        // x beats y in 15 of 25 pairs: a share of 0.4 from the other end.
        assert_eq!(mann_whitney(&x, &y).unwrap().u, 15.0);
        assert_eq!(values_to_decide(&x, &y, 0.05), Some(65));
        // Nothing apart, or nothing at all: no size decides it.
        assert_eq!(values_to_decide(&[1.0, 2.0], &[1.0, 2.0], 0.05), None);
        assert_eq!(values_to_decide(&[], &[1.0], 0.05), None);
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!(close(erfc(0.0), 1.0, 1e-7));
        assert!(close(erfc(1.0), 0.157_299_207, 1e-7));
        assert!(close(erfc(-1.0), 1.842_700_793, 1e-7));
        assert!(close(normal_two_sided(1.959_964), 0.05, 1e-6));
    }

    #[test]
    fn bootstrap_is_reproducible_and_covers_the_point_ratio() {
        let base = [10.0, 11.0, 9.5, 10.5, 10.2];
        let new = [20.0, 21.5, 19.0, 20.4, 22.0];
        let ci = bootstrap_ratio_ci(&base, &new, 2000, 0.05, &mut SplitMix64::new(42)).unwrap();
        let again = bootstrap_ratio_ci(&base, &new, 2000, 0.05, &mut SplitMix64::new(42)).unwrap();
        assert_eq!(ci, again);
        let point = median(&new).unwrap() / median(&base).unwrap();
        assert!(ci[0] <= point && point <= ci[1], "{ci:?} {point}");
        // Every resampled ratio lies between the extreme ones.
        assert!(ci[0] >= 19.0 / 11.0 && ci[1] <= 22.0 / 9.5, "{ci:?}");
    }

    #[test]
    fn bootstrap_of_identical_or_zero_samples() {
        let same = [3.0, 3.0, 3.0];
        assert_eq!(bootstrap_ratio_ci(&same, &same, 500, 0.05, &mut SplitMix64::new(1)), Some([1.0, 1.0]));
        let zero = [0.0, 0.0];
        let ci = bootstrap_ratio_ci(&zero, &[1.0, 2.0], 500, 0.05, &mut SplitMix64::new(1)).unwrap();
        assert_eq!(ci, [f64::INFINITY, f64::INFINITY]);
        assert_eq!(bootstrap_ratio_ci(&[], &same, 500, 0.05, &mut SplitMix64::new(1)), None);
        assert_eq!(bootstrap_ratio_ci(&same, &same, 0, 0.05, &mut SplitMix64::new(1)), None);
    }
}
