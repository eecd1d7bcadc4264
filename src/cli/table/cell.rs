//! A table's cells and headings: one convention of units for every table
//! (sizes in MiB, rates in MiB/s, seconds and ratios to the millisecond),
//! and the repeats of a row summed up as `median [min–max]`.

use crate::record::{Case, Catalog, EMULATED_MARK, Kind, Status};
use crate::units::MIB;

/// What a table prints a figure of base `unit` in, when it scales it:
/// `MiB` for sizes, `MiB/s` for rates (`MB/s` and `bytes/s` alike).
fn shown_unit(unit: &str) -> Option<&'static str> {
    match unit {
        "bytes" => Some("MiB"),
        "MB/s" | "MiB/s" | "bytes/s" => Some("MiB/s"),
        _ => None,
    }
}

/// Below this many seconds, three decimals of a second say too little (a
/// fio latency of 18 µs printed `0.000`): a table cell says such a time
/// in ms or µs, with its unit.
const SMALL_SECONDS: f64 = 0.01;

/// A value in base `unit` as a table prints it: sizes in MiB and rates in
/// MiB/s (one decimal), seconds and ratios with three decimals (a time
/// under 10 ms in ms or µs with its unit said: `18.3 µs`), counts and
/// exit statuses whole.
pub fn scaled(value: f64, unit: &str) -> String {
    match unit {
        "ratio" => crate::units::ratio(value),
        "s" if value != 0.0 && value.abs() < SMALL_SECONDS => crate::compare::format::value(value, "s"),
        "s" => format!("{value:.3}"),
        "bytes" | "bytes/s" => format!("{:.1}", value / MIB),
        "MB/s" => format!("{:.1}", value * 1e6 / MIB),
        "count" | "status" => format!("{value:.0}"),
        _ => format!("{value:.1}"),
    }
}

/// A column heading for figure `name` of base `unit`: its declared
/// heading (which names the table's unit: `MiB wr`, `cold MiB/s`); for a
/// figure without one, its name as words with a scaled unit said
/// (`seek distance MiB`, `proc sys % after`), a figure named at run time
/// as named (`fio_w_write_bw MiB/s`, `fio_w_write_clat_p50 s`).
pub fn heading(catalog: &Catalog, name: &str, unit: Option<&str>) -> String {
    let declared = catalog.heading(name);
    if declared != name {
        return declared.to_string();
    }
    let shown = unit.and_then(shown_unit).or(unit.filter(|u| *u == "s"));
    let stem = match shown {
        Some("s") => name.strip_suffix("_s"),
        Some(_) => name.strip_suffix("_bytes").or_else(|| name.strip_suffix("_mbps")),
        None => None,
    }
    .unwrap_or(name);
    // A figure the catalog declares reads as words (`fragmented files`,
    // `drop detected`); one named at run time (fio's `fio_w_write_iops`,
    // after its job) keeps the name its parts are told apart by.
    let stem = if catalog.figure(name).is_some() { stem.replace('_', " ").replace(" pct", " %") } else { stem.to_string() };
    match shown {
        Some(shown) => format!("{stem} {shown}"),
        None => stem,
    }
}

/// The median of sorted `values` (the mean of the middle two when even).
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

/// Figure `name`'s base unit and sorted values over a row's repeats (the
/// successful ones, when any succeeded); `None` when no repeat holds it.
fn values(cases: &[&Case], name: &str) -> Option<(String, Vec<f64>)> {
    let ok: Vec<&Case> = cases.iter().copied().filter(|c| c.status == Status::Ok).collect();
    let from = if ok.is_empty() { cases.to_vec() } else { ok };
    let figures: Vec<_> = from.iter().filter_map(|c| c.figures.get(name)).collect();
    let mut unit = figures.first().map(|f| f.unit.to_string())?;
    if name == "total_mbps" {
        // Always alloctest's MiB/s, though recorded as `MB/s` before the
        // units were put right: read by its name, old runs print true.
        unit = "MiB/s".into();
    }
    let mut values: Vec<f64> = figures.iter().filter_map(|f| f.value).collect();
    values.sort_by(f64::total_cmp);
    Some((unit, values))
}

/// Sorted `values` as `print` says them: the value when all print alike,
/// else `median [min–max]`; `-` when there are none.
fn fold(values: &[f64], print: impl Fn(f64) -> String) -> String {
    let (Some(lo), Some(hi)) = (values.first(), values.last()) else { return "-".into() };
    let (lo, hi) = (print(*lo), print(*hi));
    if lo == hi { lo } else { format!("{} [{lo}–{hi}]", print(median(values))) }
}

/// Figure `name` over a row's repeats (the successful ones, when any
/// succeeded): the value when they print alike, else `median
/// [min–max]`; `-` when none measured it.
pub fn summary(cases: &[&Case], name: &str) -> String {
    match values(cases, name) {
        Some((unit, values)) => fold(&values, |v| scaled(v, &unit)),
        None => "-".into(),
    }
}

/// Figure `name` over a row's repeats as a block of `show --wide` says
/// it: the [`summary`] and its unit apart, times in the one of s, ms and
/// µs that suits their median (`18.3`, `µs`).
pub fn summary_and_unit(cases: &[&Case], name: &str) -> (String, String) {
    let Some((unit, values)) = values(cases, name) else { return ("-".into(), String::new()) };
    if unit == "s" && !values.is_empty() {
        let said = crate::compare::format::value(median(&values), "s");
        let (scale, shown) = match said.rsplit_once(' ') {
            Some((_, "µs")) => (1e6, "µs"),
            Some((_, "ms")) => (1e3, "ms"),
            _ => (1.0, "s"),
        };
        return (fold(&values, |v| crate::compare::format::number(v * scale)), shown.into());
    }
    // A count, ratio or exit status is a plain number.
    let shown = match unit.as_str() {
        "count" | "ratio" | "status" => "",
        other => shown_unit(other).unwrap_or(other),
    };
    (fold(&values, |v| scaled(v, &unit)), shown.to_string())
}

/// `cell` of timing `name` marked [`EMULATED_MARK`] when a repeat of its
/// row ran in a guest under software emulation (its seconds are the
/// emulator's); exact figures and cells with no value stay as they are.
pub fn marked_if_emulated(cell: String, cases: &[&Case], name: &str) -> String {
    let timing = cases.iter().any(|c| c.figures.get(name).is_some_and(|f| f.kind == Kind::Timing));
    if timing && cell != "-" && cases.iter().any(|c| c.timings_emulated()) { format!("{cell}{EMULATED_MARK}") } else { cell }
}
