//! The drop detector: did the stream's throughput fall to a lower level
//! and stay there, as seed 004's vmstat showed (about 49 MB/s for 15
//! seconds, then about 23 MB/s until the end, never recovering)?
//!
//! The design decision: the level before is the *median* of the intervals
//! before the candidate drop, and "stayed there" means every later
//! interval but one is below the cut, including the last. A median is not
//! moved by one slow second, and the one allowed outlier keeps a single
//! fast second after the drop from hiding it; together they keep the
//! ordinary jitter of a loop device on a busy machine (seen here: 184 to
//! 613 MB/s from one second to the next on ext3) from counting as a drop.

use crate::probe::timeline::TimelinePoint;

/// The knobs of the rule (see [`detect`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// How far below the level before an interval must be to count as
    /// down: 0.4 means under 60% of it.
    pub threshold: f64,
    /// Intervals needed before the drop to know the level.
    pub min_before: usize,
    /// Intervals the lower level must last, up to the end of the run.
    pub min_after: usize,
    /// Intervals after the drop allowed back at the old level.
    pub outliers: usize,
}

/// The rule the scenario uses: a fall of more than 40% (the seed's was
/// 54%: 49 to 23 MB/s), known from 3 intervals, lasting at least 4 to the
/// end, one outlier allowed.
pub const RULE: Rule = Rule { threshold: 0.4, min_before: 3, min_after: 4, outliers: 1 };

/// What the detector found.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// Too few intervals to tell.
    TooShort {
        /// Intervals there were.
        intervals: usize,
        /// Intervals the rule needs.
        needed: usize,
    },
    /// No sustained drop.
    NoDrop,
    /// A sustained drop.
    Drop(Drop),
}

/// Where a sustained drop began and how deep it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drop {
    /// Index of the first interval at the lower level.
    pub index: usize,
    /// Median throughput of the intervals before it.
    pub before: f64,
    /// Median throughput from it to the end.
    pub after: f64,
}

impl Drop {
    /// After over before: 0.46 for the seed's 49 to 23 MB/s.
    pub fn depth(&self) -> f64 {
        self.after / self.before
    }
}

/// Find a sustained drop in `series` (throughput per interval, in time
/// order). The rule, for a candidate first-low interval `k` of `n`:
///
/// 1. `k >= min_before` and `n - k >= min_after`;
/// 2. the level before, `L = median(series[..k])`, is above 0, and the cut
///    is `(1 - threshold) * L`;
/// 3. `series[k]` and the last interval are below the cut (the drop starts
///    at `k` and the run ends low);
/// 4. at most `outliers` intervals of `series[k..]` are at or above it.
///
/// The earliest such `k` is the drop; a series shorter than
/// `min_before + min_after` is [`Finding::TooShort`].
pub fn detect(series: &[f64], rule: &Rule) -> Finding {
    let n = series.len();
    let needed = rule.min_before + rule.min_after;
    if n < needed {
        return Finding::TooShort { intervals: n, needed };
    }
    let last = series[n - 1];
    for k in rule.min_before..=n - rule.min_after {
        let level = median(&series[..k]);
        let cut = (1.0 - rule.threshold) * level;
        if level <= 0.0 || series[k] >= cut || last >= cut {
            continue;
        }
        let back_up = series[k..].iter().filter(|&&x| x >= cut).count();
        if back_up <= rule.outliers {
            return Finding::Drop(Drop { index: k, before: level, after: median(&series[k..]) });
        }
    }
    Finding::NoDrop
}

/// The median of a non-empty slice (the mean of the middle two for an
/// even length).
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 }
}

/// One whole interval of the harness's timeline, as the detector uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Seconds from the start to the interval's start.
    pub start_s: f64,
    /// Seconds from the start to the interval's end.
    pub end_s: f64,
    /// Device write throughput, MiB/s (2^20 bytes).
    pub mbps: f64,
    /// System-wide system CPU, percent of all CPUs.
    pub sys_pct: f64,
    /// System-wide iowait, percent of all CPUs.
    pub iowait_pct: f64,
}

/// The timeline's intervals with a write rate, in order; `None` when the
/// timeline has no device throughput. The last, partial interval (cut
/// short when the work ended, and holding the final syncfs) is left out
/// when it is under half the usual length: a fraction of a second says
/// little about a level.
pub fn intervals(timeline: &[TimelinePoint]) -> Option<Vec<Interval>> {
    let mut out = Vec::with_capacity(timeline.len());
    let mut start_s = 0.0;
    for p in timeline {
        out.push(Interval {
            start_s,
            end_s: p.t_s,
            mbps: p.write_bytes_per_s? / crate::units::MIB,
            sys_pct: p.system_pct,
            iowait_pct: p.iowait_pct,
        });
        start_s = p.t_s;
    }
    if out.len() > 1 {
        let spans: Vec<f64> = out.iter().map(|i| i.end_s - i.start_s).collect();
        let usual = median(&spans);
        if spans[spans.len() - 1] < usual / 2.0 {
            out.pop();
        }
    }
    Some(out)
}

/// The mean of `f` over `intervals`, weighted by their lengths; `None`
/// for an empty slice.
pub fn mean_over(intervals: &[Interval], f: impl Fn(&Interval) -> f64) -> Option<f64> {
    let total: f64 = intervals.iter().map(|i| i.end_s - i.start_s).sum();
    (total > 0.0).then(|| intervals.iter().map(|i| f(i) * (i.end_s - i.start_s)).sum::<f64>() / total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `bo` column of the seed's vmstat (KiB/s), as MiB/s.
    fn seed_vmstat() -> Vec<f64> {
        [
            49664, 49024, 48768, 48412, 49664, 49664, 49664, 49664, 48924, 48640, 50176, 49152, 48128, 48928, 49856,
            25408, 21120, 21696, 22852, 23296, 22784, 21616, 23248, 24752, 23424, 22784, 22976, 22016, 23128, 23360,
            24576, 24768,
        ]
        .iter()
        .map(|&kib| kib as f64 / 1024.0)
        .collect()
    }

    fn drop_of(series: &[f64]) -> Drop {
        match detect(series, &RULE) {
            Finding::Drop(d) => d,
            other => panic!("expected a drop in {series:?}, got {other:?}"),
        }
    }

    #[test]
    fn the_seeds_vmstat_drops_at_its_sixteenth_second_to_under_half() {
        let d = drop_of(&seed_vmstat());
        assert_eq!(d.index, 15);
        assert!((d.before - 48.0).abs() < 0.5, "{d:?}");
        assert!((d.after - 22.4).abs() < 0.5, "{d:?}");
        assert!((0.45..0.48).contains(&d.depth()), "{}", d.depth());
    }

    #[test]
    fn a_flat_or_jittery_stream_has_no_drop() {
        assert_eq!(detect(&[50.0; 12], &RULE), Finding::NoDrop);
        // ext3 on this kernel with other work on the machine: MB/s per second.
        let ext3 = [380.8, 541.5, 417.3, 477.7, 184.7, 338.1, 599.5, 613.6, 311.3, 497.2, 499.7, 233.7, 276.1, 494.0, 313.0];
        assert_eq!(detect(&ext3, &RULE), Finding::NoDrop);
        // One slow second is not a level.
        assert_eq!(detect(&[50.0, 50.0, 50.0, 50.0, 10.0, 50.0, 50.0, 50.0, 50.0], &RULE), Finding::NoDrop);
    }

    #[test]
    fn a_drop_must_last_to_the_end() {
        let recovers = [50.0, 50.0, 50.0, 20.0, 20.0, 20.0, 20.0, 20.0, 50.0];
        assert_eq!(detect(&recovers, &RULE), Finding::NoDrop);
        // Only three low intervals at the end: too brief.
        let brief = [50.0, 50.0, 50.0, 50.0, 50.0, 20.0, 20.0, 20.0];
        assert_eq!(detect(&brief, &RULE), Finding::NoDrop);
        let four = [50.0, 50.0, 50.0, 50.0, 20.0, 20.0, 20.0, 20.0];
        assert_eq!(drop_of(&four).index, 4);
    }

    #[test]
    fn one_outlier_after_the_drop_is_allowed_two_are_not() {
        let one = [50.0, 50.0, 50.0, 20.0, 20.0, 48.0, 20.0, 20.0, 20.0];
        let d = drop_of(&one);
        assert_eq!((d.index, d.before, d.after), (3, 50.0, 20.0));
        let two = [50.0, 50.0, 50.0, 50.0, 20.0, 48.0, 20.0, 48.0, 20.0];
        assert_eq!(detect(&two, &RULE), Finding::NoDrop);
        // With room after the second, the drop is found there instead: a
        // dip, then a level with one outlier.
        let later = [50.0, 50.0, 50.0, 20.0, 48.0, 20.0, 48.0, 20.0, 20.0];
        assert_eq!(drop_of(&later).index, 5);
    }

    #[test]
    fn the_cut_is_the_threshold_below_the_median_before() {
        // 60% of 50 is 30: 31 is not down, 29 is.
        assert_eq!(detect(&[50.0, 50.0, 50.0, 31.0, 31.0, 31.0, 31.0], &RULE), Finding::NoDrop);
        assert_eq!(drop_of(&[50.0, 50.0, 50.0, 29.0, 29.0, 29.0, 29.0]).index, 3);
        // A slow first second does not lower the level (the median holds).
        let d = drop_of(&[5.0, 50.0, 50.0, 50.0, 20.0, 20.0, 20.0, 20.0]);
        assert_eq!((d.index, d.before), (4, 50.0));
        // Nothing before: no level to fall from.
        assert_eq!(detect(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], &RULE), Finding::NoDrop);
    }

    #[test]
    fn short_series_are_too_short_to_judge() {
        assert_eq!(detect(&[50.0; 6], &RULE), Finding::TooShort { intervals: 6, needed: 7 });
        assert_eq!(detect(&[], &RULE), Finding::TooShort { intervals: 0, needed: 7 });
    }

    fn point(t_s: f64, mbps: Option<f64>, sys: f64) -> TimelinePoint {
        TimelinePoint {
            t_s,
            read_bytes_per_s: mbps.map(|_| 0.0),
            write_bytes_per_s: mbps.map(|m| m * crate::units::MIB),
            user_pct: 0.0,
            system_pct: sys,
            iowait_pct: 50.0 - sys,
            idle_pct: 50.0,
            dirty_bytes: 0,
            writeback_bytes: 0,
            ..Default::default()
        }
    }

    #[test]
    fn intervals_leave_out_a_short_last_one_and_need_throughput() {
        let timeline = [point(1.0, Some(50.0), 5.0), point(2.0, Some(40.0), 10.0), point(3.0, Some(30.0), 20.0), point(3.2, Some(1.0), 40.0)];
        let got = intervals(&timeline).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!((got[1].start_s, got[1].end_s, got[1].mbps, got[1].sys_pct), (1.0, 2.0, 40.0, 10.0));
        let long_last = [point(1.0, Some(50.0), 5.0), point(1.7, Some(40.0), 10.0)];
        assert_eq!(intervals(&long_last).unwrap().len(), 2);
        assert_eq!(intervals(&[point(1.0, None, 5.0)]), None);
        assert_eq!(intervals(&[]), Some(Vec::new()));
        // Weighted by length: 5% for 1 s and 10% for 1 s, 20% for 1 s.
        assert_eq!(mean_over(&got, |i| i.sys_pct), Some(35.0 / 3.0));
        assert_eq!(mean_over(&[], |i| i.sys_pct), None);
    }
}
