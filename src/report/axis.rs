//! Axes for the report's charts: round tick steps over a range of values,
//! and values written for people in their figure's unit.
//!
//! The one design decision: data keeps its base unit (bytes, seconds,
//! MB/s) everywhere; only the axis picks a display scale (a binary unit
//! for bytes, from the largest value on the chart), and ticks fall on 1,
//! 2 or 5 times a power of ten *in that scale*, so a bytes axis reads
//! 0, 4, 8, 12 MiB rather than 0, 4194304, ...
//!
//! A chart whose positive values span more than [`LOG_SPAN`] times takes a
//! logarithmic axis ([`LogTicks`]): on a linear one, btrfs's 31,483
//! extents leave ext3's 16 a hairline. Its ticks fall on powers of ten
//! (powers of two for bytes, so they read 4 KiB, 1 MiB), and zero, which
//! a log axis cannot place, sits at the axis floor.

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

/// Positive values spanning more than this many times take a log axis.
pub const LOG_SPAN: f64 = 100.0;

/// Whether `values` want a log axis: no negative value (a log axis has no
/// place for one), and the largest positive value more than [`LOG_SPAN`]
/// times the smallest. Zeros do not count: they go to the axis floor.
pub fn wants_log(values: impl IntoIterator<Item = f64>) -> bool {
    let mut smallest = f64::INFINITY;
    let mut largest = 0.0f64;
    for value in values {
        if value < 0.0 || !value.is_finite() {
            return false;
        }
        if value > 0.0 {
            smallest = smallest.min(value);
            largest = largest.max(value);
        }
    }
    largest > 0.0 && largest / smallest > LOG_SPAN
}

/// A logarithmic axis from `base^lo` to `base^hi`, a tick every `step`
/// powers: base 10, or base 2 for bytes (ticks on 1, 4, 16 KiB ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogTicks {
    /// The power of the floor (the first tick).
    pub lo: i32,
    /// The power of the last tick.
    pub hi: i32,
    /// Powers between ticks.
    pub step: i32,
    /// 10, or 2 for bytes.
    pub base: f64,
}

impl LogTicks {
    /// At most about `wanted` ticks on powers of `base` (10, or 2) around
    /// the positive values `smallest..=largest`.
    pub fn over(smallest: f64, largest: f64, base: f64, wanted: usize) -> LogTicks {
        let power = |v: f64| v.ln() / base.ln();
        // The floor strictly below the smallest value, so its bar has a
        // length (1 extent on a 1..10k axis would be none); the top at or
        // above the largest. A little slack, as log10(1000) may come out
        // as 2.9999999999999996.
        let lo = (power(smallest) - 1e-9).ceil() as i32 - 1;
        let hi = ((power(largest) - 1e-9).ceil() as i32).max(lo + 1);
        let wanted = wanted.max(1) as i32;
        let steps: &[i32] = if base == 2.0 { &[1, 2, 3, 4, 5, 10, 20, 30] } else { &[1, 2, 3, 5, 10] };
        let step = steps
            .iter()
            .copied()
            .find(|s| hi.div_euclid(*s) + i32::from(hi.rem_euclid(*s) != 0) - lo.div_euclid(*s) <= wanted)
            .unwrap_or(*steps.last().expect("steps"));
        let lo = lo.div_euclid(step) * step;
        let hi = (hi + step - 1).div_euclid(step) * step;
        LogTicks { lo, hi, step, base }
    }

    /// The floor: where zeros are drawn.
    pub fn floor(&self) -> f64 {
        self.base.powi(self.lo)
    }

    /// The tick values, floor to top.
    pub fn values(&self) -> Vec<f64> {
        (self.lo..=self.hi).step_by(self.step as usize).map(|p| self.base.powi(p)).collect()
    }

    /// Where `value` lies, 0.0 at the floor to 1.0 at the top; zero (and
    /// anything below the floor) at 0.0.
    pub fn fraction(&self, value: f64) -> f64 {
        if value <= 0.0 {
            return 0.0;
        }
        let power = value.ln() / self.base.ln();
        ((power - f64::from(self.lo)) / f64::from(self.hi - self.lo)).max(0.0)
    }

    /// A base-10 tick written short: 1, 10, 100, 1k, 10k, 1M; 0.1, 0.01.
    pub fn label(&self, value: f64) -> String {
        power_of_ten_label(value)
    }
}

/// A power of ten written as people write round numbers on an axis.
fn power_of_ten_label(value: f64) -> String {
    let power = value.log10().round() as i32;
    match power {
        p if p < -3 => format!("1e{p}"),
        p if p < 0 => format!("{:.*}", (-p) as usize, value),
        p => {
            let (unit, rest) = match p {
                0..=2 => ("", p),
                3..=5 => ("k", p - 3),
                6..=8 => ("M", p - 6),
                9..=11 => ("G", p - 9),
                12..=14 => ("T", p - 12),
                _ => return format!("1e{p}"),
            };
            format!("{}{unit}", 10u64.pow(rest as u32))
        }
    }
}

/// A chart's value axis: linear round steps from zero, or logarithmic
/// when the values span more than [`LOG_SPAN`] times. Works on values
/// already scaled for display ([`Display::scaled`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Round steps, zero included.
    Linear(Ticks),
    /// Powers of ten (of two for bytes).
    Log(LogTicks),
}

impl Scale {
    /// The scale for scaled values `values` (bars' medians, minima and
    /// maxima), with about `wanted` ticks; `bytes` puts log ticks on
    /// powers of two.
    pub fn over(values: &[f64], bytes: bool, wanted: usize) -> Scale {
        if wants_log(values.iter().copied()) {
            let positive = values.iter().copied().filter(|v| *v > 0.0);
            let smallest = positive.clone().fold(f64::INFINITY, f64::min);
            let largest = positive.fold(0.0, f64::max);
            // Power-of-ten labels are short (1k, 10k): a few more fit
            // than of bytes (256 KiB).
            return Scale::Log(if bytes {
                LogTicks::over(smallest, largest, 2.0, wanted + 1)
            } else {
                LogTicks::over(smallest, largest, 10.0, wanted + 2)
            });
        }
        let lo = values.iter().copied().fold(0.0, f64::min);
        let hi = values.iter().copied().fold(0.0, f64::max);
        Scale::Linear(Ticks::over(lo, hi, wanted))
    }

    /// `log` or `linear`, for `data-scale`.
    pub fn name(&self) -> &'static str {
        match self {
            Scale::Linear(_) => "linear",
            Scale::Log(_) => "log",
        }
    }

    /// Where a bar starts: zero, or a log axis's floor.
    pub fn origin(&self) -> f64 {
        match self {
            Scale::Linear(_) => 0.0,
            Scale::Log(t) => t.floor(),
        }
    }

    /// The tick values.
    pub fn values(&self) -> Vec<f64> {
        match self {
            Scale::Linear(t) => t.values(),
            Scale::Log(t) => t.values(),
        }
    }

    /// Where `value` lies, 0.0 to 1.0 (may leave that range on a linear
    /// scale only through rounding).
    pub fn fraction(&self, value: f64) -> f64 {
        match self {
            Scale::Linear(t) => t.fraction(value),
            Scale::Log(t) => t.fraction(value),
        }
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
    seconds: bool,
}

impl Display {
    /// The display of `unit` for a chart whose largest magnitude is
    /// `largest` (bytes take the binary unit of it).
    pub fn for_unit(unit: &str, largest: f64) -> Display {
        if unit == "bytes" {
            let (divisor, suffix) = binary_unit(largest);
            return Display { divisor, suffix: suffix.to_string(), bytes: true, seconds: false };
        }
        if unit == "s" {
            // close(2) takes microseconds, a copy minutes: the axis reads
            // 0, 5, 10 µs rather than 0.000005.
            let (divisor, suffix) = match largest.abs() {
                l if l > 0.0 && l < 1e-3 => (1e-6, "µs"),
                l if l > 0.0 && l < 1.0 => (1e-3, "ms"),
                _ => (1.0, "s"),
            };
            return Display { divisor, suffix: suffix.to_string(), bytes: false, seconds: true };
        }
        let suffix = if unit == "count" { "" } else { unit };
        Display { divisor: 1.0, suffix: suffix.to_string(), bytes: false, seconds: false }
    }

    /// The axis title: the unit shown, or `count`.
    pub fn axis_title(&self) -> String {
        if self.suffix.is_empty() { "count".to_string() } else { self.suffix.clone() }
    }

    /// What a chart's unit line and axis title say of the unit on `scale`:
    /// the axis's unit (`MiB`, `ms`, `count`), or on a log axis, whose
    /// ticks of bytes and seconds carry their own unit, `bytes, log scale`.
    pub fn axis_unit(&self, scale: &Scale) -> String {
        match scale {
            Scale::Log(_) if self.units_on_log_ticks() => format!("{}, log scale", if self.bytes { "bytes" } else { "s" }),
            Scale::Log(_) => format!("{}, log scale", self.axis_title()),
            Scale::Linear(_) => self.axis_title(),
        }
    }

    /// `value` (base units) scaled for the axis.
    pub fn scaled(&self, value: f64) -> f64 {
        value / self.divisor
    }

    /// Whether the unit is bytes (log ticks then fall on powers of two).
    pub fn is_bytes(&self) -> bool {
        self.bytes
    }

    /// Whether a log axis's ticks carry their own unit (4 KiB, 1 ms), as
    /// one unit for the whole axis would read 0.001 or 1e-5.
    pub fn units_on_log_ticks(&self) -> bool {
        self.bytes || self.seconds
    }

    /// The label of `tick` (a scaled value) on `scale`: a linear tick
    /// with the decimals its step needs; a log tick short (1k, 10k), or
    /// for bytes and seconds in its own unit (4 KiB, 1 MiB; 10 µs, 1 s).
    pub fn tick_label(&self, scale: &Scale, tick: f64) -> String {
        match scale {
            Scale::Linear(t) => t.label(tick),
            Scale::Log(_) if self.bytes => bytes_short((tick * self.divisor).round() as u64),
            Scale::Log(t) if self.seconds => {
                let seconds = tick * self.divisor;
                let (divisor, suffix) = match seconds {
                    s if s < 1e-3 => (1e-6, "µs"),
                    s if s < 1.0 => (1e-3, "ms"),
                    _ => (1.0, "s"),
                };
                format!("{} {suffix}", t.label(seconds / divisor))
            }
            Scale::Log(t) => t.label(tick),
        }
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

    #[test]
    fn a_log_axis_only_past_a_hundredfold_span_of_positive_values() {
        assert!(wants_log([16.0, 31_483.0]), "btrfs's extents against ext3's");
        assert!(!wants_log([1.0, 100.0]), "exactly 100x stays linear");
        assert!(wants_log([0.0, 1.0, 101.0]), "zeros do not count");
        assert!(!wants_log([0.0, 0.0, 5.0]), "one positive value spans nothing");
        assert!(!wants_log([-1.0, 1.0, 1000.0]), "a negative value has no place on a log axis");
        assert!(!wants_log(std::iter::empty()));
        assert!(matches!(Scale::over(&[16.0, 31_483.0], false, 4), Scale::Log(_)));
        assert!(matches!(Scale::over(&[16.0, 31.0], false, 4), Scale::Linear(_)));
    }

    #[test]
    fn log_ticks_fall_on_powers_of_ten_with_short_labels() {
        let t = LogTicks::over(16.0, 31_483.0, 10.0, 6);
        assert_eq!((t.lo, t.hi, t.step), (1, 5, 1));
        assert_eq!(t.values(), [10.0, 100.0, 1000.0, 10_000.0, 100_000.0]);
        let labels: Vec<String> = t.values().into_iter().map(|v| t.label(v)).collect();
        assert_eq!(labels, ["10", "100", "1k", "10k", "100k"]);
        assert_eq!(t.floor(), 10.0);
        assert_eq!(t.fraction(10.0), 0.0);
        assert!((t.fraction(1000.0) - 0.5).abs() < 1e-12);
        assert_eq!(t.fraction(100_000.0), 1.0);
        assert_eq!(t.fraction(0.0), 0.0, "zero sits at the floor");
        // The top is an exact power's own; the floor is below the
        // smallest value, so a bar of 1 has a length.
        let t = LogTicks::over(1.0, 1000.0, 10.0, 6);
        assert_eq!((t.lo, t.hi), (-1, 3));
        assert!(t.fraction(1.0) > 0.2);
        // Many decades: a tick every few.
        let t = LogTicks::over(0.5, 3e9, 10.0, 6);
        assert!(t.values().len() <= 7 && t.step > 1, "{t:?}");
        assert!(t.floor() <= 0.5 && *t.values().last().unwrap() >= 3e9, "{t:?}");
        assert_eq!(power_of_ten_label(1.0), "1");
        assert_eq!(power_of_ten_label(1e6), "1M");
        assert_eq!(power_of_ten_label(1e10), "10G");
        assert_eq!(power_of_ten_label(0.01), "0.01");
        assert_eq!(power_of_ten_label(1e-5), "1e-5");
    }

    #[test]
    fn the_axis_unit_says_a_log_scale_and_whose_ticks_carry_their_unit() {
        let log = Scale::over(&[1.0, 1000.0], false, 4);
        let linear = Scale::over(&[1.0, 2.0], false, 4);
        assert_eq!(Display::for_unit("bytes", 64.0 * 1048576.0).axis_unit(&log), "bytes, log scale");
        assert_eq!(Display::for_unit("s", 0.5).axis_unit(&log), "s, log scale");
        assert_eq!(Display::for_unit("count", 1000.0).axis_unit(&log), "count, log scale");
        assert_eq!(Display::for_unit("bytes", 64.0 * 1048576.0).axis_unit(&linear), "MiB");
        assert_eq!(Display::for_unit("s", 0.5).axis_unit(&linear), "ms");
    }

    #[test]
    fn log_ticks_for_bytes_fall_on_powers_of_two_in_binary_units() {
        // 4 KiB to 64 MiB, shown in MiB: 2^-8 .. 2^6.
        let d = Display::for_unit("bytes", 64.0 * 1048576.0);
        let values = [d.scaled(4096.0), d.scaled(64.0 * 1048576.0)];
        let scale = Scale::over(&values, d.is_bytes(), 4);
        let Scale::Log(t) = scale else { panic!("{scale:?}") };
        assert_eq!(t.base, 2.0);
        let labels: Vec<String> = scale.values().into_iter().map(|v| d.tick_label(&scale, v)).collect();
        assert_eq!(labels, ["2 KiB", "16 KiB", "128 KiB", "1 MiB", "8 MiB", "64 MiB"]);
        assert_eq!(scale.name(), "log");
        // Seconds too carry their unit: 10 µs to 1 s, not 1e-5 to 1.
        let d = Display::for_unit("s", 0.9);
        let scale = Scale::over(&[d.scaled(0.000_012), d.scaled(0.9)], d.is_bytes(), 4);
        let labels: Vec<String> = scale.values().into_iter().map(|v| d.tick_label(&scale, v)).collect();
        assert_eq!(labels, ["10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s"]);
        assert_eq!(Scale::over(&[1.0, 2.0], false, 4).name(), "linear");
        assert_eq!(Scale::over(&[1.0, 2.0], false, 4).origin(), 0.0);
    }
}
