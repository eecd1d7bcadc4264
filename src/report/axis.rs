//! Axes for the report's charts: round tick steps over a range of values,
//! and values written for people in their figure's unit.
//!
//! The one design decision: data keeps its base unit (bytes, seconds,
//! MB/s) everywhere; only the axis picks a display scale (a binary unit
//! for bytes, from the largest value on the chart), and ticks fall on 1,
//! 2 or 5 times a power of ten *in that scale*, so a bytes axis reads
//! 0, 4, 8, 12 MiB rather than 0, 4194304, ...

pub use crate::units::short_number;
use crate::units::{bytes_short, group_digits};

/// A value range widened to round tick steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks {
    /// First tick (at or below the smallest value).
    pub lo: f64,
    /// Last tick (at or above the largest value).
    pub hi: f64,
    /// Distance between ticks.
    pub step: f64,
}

impl Ticks {
    /// About `wanted` round steps covering `lo..=hi` (0 included when the
    /// caller puts it in the range). An empty or non-finite range becomes
    /// 0..1.
    pub fn over(lo: f64, hi: f64, wanted: usize) -> Ticks {
        let (lo, hi) = if lo.is_finite() && hi.is_finite() { (lo.min(hi), lo.max(hi)) } else { (0.0, 1.0) };
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else if lo == 0.0 {
            (0.0, 1.0)
        } else {
            // One value: a range around it that keeps 0 in sight.
            (lo.min(0.0), hi.max(0.0))
        };
        let wanted = wanted.max(1);
        let raw = (hi - lo) / wanted as f64;
        let power = 10f64.powf(raw.log10().floor());
        // The finest round step that needs at most one tick more than
        // wanted once the ends are rounded out.
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * power)
            .find(|s| (hi / s).ceil() - (lo / s).floor() <= (wanted + 1) as f64)
            .unwrap_or(10.0 * power);
        Ticks { lo: (lo / step).floor() * step, hi: (hi / step).ceil() * step, step }
    }

    /// The tick values, `lo` to `hi`.
    pub fn values(&self) -> Vec<f64> {
        let count = ((self.hi - self.lo) / self.step).round() as usize;
        // Multiplying (not adding) keeps rounding error from piling up.
        (0..=count).map(|i| self.lo + i as f64 * self.step).collect()
    }

    /// Where `value` lies, 0.0 at `lo` to 1.0 at `hi`.
    pub fn fraction(&self, value: f64) -> f64 {
        (value - self.lo) / (self.hi - self.lo)
    }

    /// A tick value written with just the decimals its step needs.
    pub fn label(&self, value: f64) -> String {
        let decimals = (-self.step.log10().floor()).max(0.0) as usize;
        group_digits(&format!("{value:.decimals$}"))
    }
}

/// How a figure's unit is shown on one chart: values are divided by
/// `divisor` and followed by `suffix`.
#[derive(Debug, Clone, PartialEq)]
pub struct Display {
    /// What a value in base units is divided by.
    pub divisor: f64,
    /// The unit shown on the axis and after values (may be empty).
    pub suffix: String,
    bytes: bool,
}

impl Display {
    /// The display of `unit` for a chart whose largest magnitude is
    /// `largest` (bytes take the binary unit of it).
    pub fn for_unit(unit: &str, largest: f64) -> Display {
        if unit == "bytes" {
            let (divisor, suffix) = binary_unit(largest);
            return Display { divisor, suffix: suffix.to_string(), bytes: true };
        }
        if unit == "s" {
            // close(2) takes microseconds, a copy minutes: the axis reads
            // 0, 5, 10 µs rather than 0.000005.
            let (divisor, suffix) = match largest.abs() {
                l if l > 0.0 && l < 1e-3 => (1e-6, "µs"),
                l if l > 0.0 && l < 1.0 => (1e-3, "ms"),
                _ => (1.0, "s"),
            };
            return Display { divisor, suffix: suffix.to_string(), bytes: false };
        }
        let suffix = if unit == "count" { "" } else { unit };
        Display { divisor: 1.0, suffix: suffix.to_string(), bytes: false }
    }

    /// The axis title: the unit shown, or `count`.
    pub fn axis_title(&self) -> String {
        if self.suffix.is_empty() { "count".to_string() } else { self.suffix.clone() }
    }

    /// `value` (base units) scaled for the axis.
    pub fn scaled(&self, value: f64) -> f64 {
        value / self.divisor
    }

    /// `value` (base units) written for a label: bytes in their own best
    /// unit, anything else with about three significant digits.
    pub fn format(&self, value: f64) -> String {
        if self.bytes && value >= 0.0 && value < u64::MAX as f64 {
            // A median of two repeats can hold half a byte.
            return bytes_short(value.round() as u64);
        }
        let number = short_number(self.scaled(value));
        if self.suffix.is_empty() {
            number
        } else if self.suffix == "%" {
            format!("{number}%")
        } else {
            format!("{number} {}", self.suffix)
        }
    }
}

/// The binary unit to show bytes up to `largest` in, and its size.
fn binary_unit(largest: f64) -> (f64, &'static str) {
    let mut divisor = 1.0;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"] {
        if largest.abs() < divisor * 1024.0 || unit == "TiB" {
            return (divisor, unit);
        }
        divisor *= 1024.0;
    }
    unreachable!("the loop returns at TiB")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let t = Ticks::over(0.0, 883.8, 4);
        assert_eq!((t.lo, t.hi, t.step), (0.0, 1000.0, 200.0));
        assert_eq!(t.values(), [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        let t = Ticks::over(0.0, 0.149, 4);
        assert_eq!(t.step, 0.05);
        assert_eq!(t.label(0.1 + 0.05), "0.15");
        assert_eq!(Ticks::over(0.0, 0.0, 4), Ticks { lo: 0.0, hi: 1.0, step: 0.2 });
        let t = Ticks::over(-3.0, 7.0, 5);
        assert!(t.lo <= -3.0 && t.hi >= 7.0, "{t:?}");
        assert_eq!(Ticks::over(f64::NAN, 1.0, 4), Ticks::over(0.0, 1.0, 4));
    }

    #[test]
    fn bytes_take_the_unit_of_the_largest_value() {
        let d = Display::for_unit("bytes", 12.0 * 1024.0 * 1024.0);
        assert_eq!(d.axis_title(), "MiB");
        assert_eq!(d.scaled(8.0 * 1024.0 * 1024.0), 8.0);
        assert_eq!(d.format(16_777_216.0), "16 MiB");
        assert_eq!(d.format(1.5), "2 B", "a median between two byte counts is rounded");
        let count = Display::for_unit("count", 3.0);
        assert_eq!((count.axis_title(), count.format(16384.0)), ("count".to_string(), "16,384".to_string()));
        assert_eq!(Display::for_unit("MB/s", 1.0).format(883.79), "884 MB/s");
        assert_eq!(Display::for_unit("%", 1.0).format(12.345), "12.3%");
        let micro = Display::for_unit("s", 0.000_012_8);
        assert_eq!((micro.axis_title(), micro.format(0.000_011_7)), ("µs".to_string(), "11.7 µs".to_string()));
        assert_eq!(Display::for_unit("s", 0.149).format(0.0443), "44.3 ms");
        assert_eq!(Display::for_unit("s", 3.0).format(3.0), "3 s");
    }
}
