//! The seek curve: how long the arm takes to move a distance.
//!
//! Ruemmler & Wilkes (1994) fit their HP 97560 with a square root of the
//! distance for short seeks (the arm accelerates, then decelerates) and a
//! straight line for long ones (it coasts): 3.24 + 0.400 √d ms below 383
//! cylinders of 1962, 8.00 + 0.008 d ms beyond. The model keeps that shape
//! on the normalised distance x = d / (cylinders − 1), with the knee where
//! theirs is (x_k = 383/1962), and fits it to three datasheet figures:
//!
//! ```text
//! t(0) = 0
//! t(x) = t_t + a (√x − √x₁)                       x ≤ x_k   (x₁ = one cylinder)
//! t(x) = t_k + (t_f − t_k) (x − x_k) / (1 − x_k)    x > x_k   (t_k = t(x_k))
//! ```
//!
//! t_t is the track-to-track seek, t_f the full stroke, and a is chosen so
//! that the mean over all seek lengths weighted as datasheets weight them
//! (Hitachi and IBM specifications: a seek of n cylinders counts max + 1 −
//! n times, i.e. the distance between two tracks drawn at random, density
//! 2(1 − x)) is the datasheet's average t_a. The mean is linear in a:
//!
//! ```text
//! mean = t_t + (t_f − t_t) L²/3 + a K,   L = 1 − x_k
//! K    = (4/3) x_k^{3/2} − (4/5) x_k^{5/2} − √x₁ (2 x_k − x_k²) + (2/3) L² (√x_k − √x₁)
//! a    = (t_a − t_t − (t_f − t_t) L²/3) / K
//! ```
//!
//! so a comes in closed form. The curve rises as it should (a > 0, t_k ≤
//! t_f) only for a full stroke within a range of the other two;
//! [`SeekCurve::fit`] refuses one outside it, saying the range.

/// The normalised distance where the curve turns from square root to
/// straight: Ruemmler & Wilkes's HP 97560, 383 of 1962 cylinders.
pub const KNEE: f64 = 383.0 / 1962.0;

/// A fitted seek curve.
#[derive(Debug, Clone, PartialEq)]
pub struct SeekCurve {
    track_to_track: f64,
    coefficient: f64,
    root_one: f64,
    at_knee: f64,
    slope: f64,
    farthest: f64,
}

/// The parts of the mean that do not depend on the figures: `(L²/3, K)`.
fn mean_terms(root_one: f64) -> (f64, f64) {
    let knee = KNEE;
    let root_knee = knee.sqrt();
    let tail = (1.0 - knee) * (1.0 - knee);
    let head = 4.0 / 3.0 * knee * root_knee - 4.0 / 5.0 * knee * knee * root_knee;
    let k = head - root_one * (2.0 * knee - knee * knee) + 2.0 / 3.0 * tail * (root_knee - root_one);
    (tail / 3.0, k)
}

impl SeekCurve {
    /// Fit the curve to the track-to-track, average and full-stroke seeks
    /// (seconds) of a disk with `cylinders` cylinders. Err says which full
    /// strokes the other two allow.
    pub fn fit(track_to_track: f64, average: f64, full_stroke: f64, cylinders: u64) -> Result<SeekCurve, String> {
        let farthest = cylinders.saturating_sub(1).max(1) as f64;
        let root_one = (1.0 / farthest).sqrt();
        let (tail_third, k) = mean_terms(root_one);
        let rise = average - track_to_track;
        let coefficient = (rise - (full_stroke - track_to_track) * tail_third) / k;
        let at_knee = track_to_track + coefficient * (KNEE.sqrt() - root_one);
        if !(coefficient > 0.0 && at_knee <= full_stroke) {
            // a > 0 needs t_f − t_t < 3 (t_a − t_t) / L²; t_k ≤ t_f needs
            // t_f − t_t ≥ s (t_a − t_t) / (K + s L²/3), s = √x_k − √x₁.
            let s = KNEE.sqrt() - root_one;
            let least = track_to_track + s * rise / (k + s * tail_third);
            let most = track_to_track + rise / tail_third;
            return Err(format!(
                "with a {} ms track-to-track and {} ms average seek, the model's curve (a square root to {:.1}% of the stroke, straight beyond) needs a full stroke from {} to {} ms",
                crate::units::short_number(track_to_track * 1e3),
                crate::units::short_number(average * 1e3),
                KNEE * 100.0,
                crate::units::short_number(least * 1e3),
                crate::units::short_number(most * 1e3)
            ));
        }
        let slope = (full_stroke - at_knee) / (1.0 - KNEE);
        Ok(SeekCurve { track_to_track, coefficient, root_one, at_knee, slope, farthest })
    }

    /// Seconds to move `distance` cylinders (0 for none).
    pub fn time(&self, distance: u64) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        let x = distance as f64 / self.farthest;
        if x <= KNEE {
            self.track_to_track + self.coefficient * (x.sqrt() - self.root_one)
        } else {
            self.at_knee + self.slope * (x - KNEE)
        }
    }

    /// The mean over seek lengths weighted as datasheets weight them, by
    /// the closed form: equals the average the curve was fitted to.
    pub fn weighted_mean(&self) -> f64 {
        let (tail_third, k) = mean_terms(self.root_one);
        let full = self.at_knee + self.slope * (1.0 - KNEE);
        self.track_to_track + (full - self.track_to_track) * tail_third + self.coefficient * k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The datasheet's own sum over every seek length n of `max`,
    /// weighted (max + 1 − n), computed directly.
    fn datasheet_average(curve: &SeekCurve, max: u64) -> f64 {
        let mut sum = 0.0;
        let mut weights = 0.0;
        for n in 1..=max {
            let w = (max + 1 - n) as f64;
            sum += w * curve.time(n);
            weights += w;
        }
        sum / weights
    }

    #[test]
    fn the_datasheet_sum_over_seek_lengths_gives_the_average_fitted() {
        for (t, a, f, cylinders) in [(0.6e-3, 8.0e-3, 13.6e-3, 20_001), (1.0e-3, 12e-3, 20e-3, 30_001), (0.2e-3, 3.5e-3, 6.0e-3, 50_001)] {
            let curve = SeekCurve::fit(t, a, f, cylinders).unwrap();
            let direct = datasheet_average(&curve, cylinders - 1);
            assert!((direct - a).abs() / a < 0.002, "{direct} vs {a}");
            assert!((curve.weighted_mean() - a).abs() < 1e-12);
            assert!((curve.time(1) - t).abs() < 1e-12, "one cylinder is the track-to-track seek");
            assert!((curve.time(cylinders - 1) - f).abs() < 1e-12, "the whole stroke is the full stroke");
            assert_eq!(curve.time(0), 0.0);
        }
    }

    #[test]
    fn the_curve_is_a_square_root_then_straight() {
        let curve = SeekCurve::fit(1e-3, 12e-3, 20e-3, 10_001).unwrap();
        // Below the knee, t - t(1) grows as the square root of the distance.
        let (d1, d4) = (400, 1600);
        let r = (curve.time(d4) - curve.time(1)) / (curve.time(d1) - curve.time(1));
        assert!((r - (40.0 - 1.0) / (20.0 - 1.0)).abs() < 1e-9, "{r}");
        // Beyond it, equal steps add equal time.
        let step = curve.time(6000) - curve.time(5000);
        assert!((curve.time(9000) - curve.time(8000) - step).abs() < 1e-12);
        // Longer is never faster.
        let mut last = 0.0;
        for d in (0..=10_000).step_by(7) {
            assert!(curve.time(d) >= last);
            last = curve.time(d);
        }
    }

    #[test]
    fn a_full_stroke_the_curve_cannot_reach_is_refused_with_the_range() {
        let e = SeekCurve::fit(1e-3, 12e-3, 12.5e-3, 10_001).unwrap_err();
        assert!(e.contains("needs a full stroke from"), "{e}");
        let e = SeekCurve::fit(1e-3, 12e-3, 90e-3, 10_001).unwrap_err();
        assert!(e.contains("needs a full stroke from"), "{e}");
    }
}
