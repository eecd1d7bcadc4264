//! Text tables of cases: one row per case, figures scaled by their unit,
//! `-` for a missing figure; then failures and missing-figure reasons, so
//! no `-` is a mystery.

use std::fmt::Write as _;

use crate::record::Figures;
use crate::record::{Case, Catalog, Status};

/// A figure for a table cell, scaled by its unit.
pub fn cell(figures: &Figures, name: &str) -> String {
    let Some(figure) = figures.get(name) else { return "-".into() };
    let Some(v) = figure.value else { return "-".into() };
    match figure.unit.as_ref() {
        "s" | "ratio" => format!("{v:.3}"),
        "bytes" => format!("{:.1}", v / 1e6),
        "count" => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

/// The figures a memory limit adds to a table, when some case has them
/// measured: why a layout changed under the limit.
const MEMORY_TABLE: &[&str] =
    &["memory_peak_bytes", "memory_limit_hits", "memory_scanned_pages", "memory_reclaimed_pages", "memory_dirty_bytes", "memory_writeback_bytes"];

/// The table: where each case ran (the fs, or its place `xfs@256M` when a
/// run varies conditions), the given parameters, repeat (if any case
/// repeats), status, then the figures (and the memory cgroup's, when some
/// case ran under a limit).
pub fn render_cases(catalog: &Catalog, cases: &[&Case], params: &[&str], figures: &[&str]) -> String {
    let repeats = cases.iter().any(|c| c.repeat > 1);
    let places = cases.iter().any(|c| !c.conditions.is_empty());
    let mut figures = figures.to_vec();
    for name in MEMORY_TABLE {
        if !figures.contains(name) && cases.iter().any(|c| c.figures.value(name).is_some()) {
            figures.push(name);
        }
    }
    let mut head: Vec<String> = vec![if places { "place" } else { "fs" }.into()];
    head.extend(params.iter().map(|p| p.to_string()));
    if repeats {
        head.push("#".into());
    }
    head.push("status".into());
    let left = head.len();
    head.extend(figures.iter().map(|f| catalog.heading(f).to_string()));
    let mut rows = vec![head];
    for case in cases {
        let mut row = vec![case.place()];
        for p in params {
            row.push(match case.params.get(*p) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Number(n)) => n.as_u64().map_or_else(|| n.to_string(), crate::units::bytes_or_count(p)),
                _ => "-".into(),
            });
        }
        if repeats {
            row.push(case.repeat.to_string());
        }
        row.push(if case.status == Status::Ok { "ok" } else { "FAILED" }.into());
        row.extend(figures.iter().map(|f| cell(&case.figures, f)));
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut s = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, text) in row.iter().enumerate() {
            if i < left {
                let _ = write!(line, "{text:<w$}  ", w = widths[i]);
            } else {
                let _ = write!(line, "{text:>w$}  ", w = widths[i]);
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}

/// Each failed case with its error and the last lines its command wrote
/// to stderr.
pub fn failures(cases: &[&Case]) -> String {
    let mut s = String::new();
    for case in cases.iter().filter(|c| c.status == Status::Failed) {
        let _ = writeln!(s, "\n{}: {}", case.place(), case.error.as_deref().unwrap_or("failed"));
        if let Some(command) = &case.command {
            let tail: Vec<&str> = command.stderr.lines().rev().take(10).collect();
            for line in tail.iter().rev() {
                let _ = writeln!(s, "  | {line}");
            }
        }
    }
    s
}

/// Missing figures of successful cases, grouped by reason (each fs once
/// per reason).
pub fn missing(cases: &[&Case]) -> String {
    let mut seen: Vec<(String, String, Vec<String>)> = Vec::new();
    for case in cases.iter().filter(|c| c.status == Status::Ok) {
        for (name, figure) in case.figures.iter().filter(|(_, f)| f.value.is_none()) {
            let why = figure.missing.clone().unwrap_or_default();
            let place = case.place();
            match seen.iter_mut().find(|(fs, w, _)| *fs == place && *w == why) {
                Some((_, _, names)) if !names.iter().any(|n| n == name) => names.push(name.to_string()),
                Some(_) => {}
                None => seen.push((place, why, vec![name.to_string()])),
            }
        }
    }
    let mut s = String::new();
    for (fs, why, names) in seen {
        let _ = writeln!(s, "{fs}: not measured: {} ({why})", names.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Kind};

    #[test]
    fn cells_scale_by_unit_and_missing_is_a_dash() {
        let mut f = Figures::new();
        f.set("extents", 3.0, "count", Better::Lower, Kind::Exact);
        f.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "needs root");
        f.set("written_bytes", 67_108_864.0, "bytes", Better::Lower, Kind::Exact);
        f.set("wall_s", 0.5, "s", Better::Lower, Kind::Timing);
        assert_eq!(cell(&f, "extents"), "3");
        assert_eq!(cell(&f, "journal_commits"), "-");
        assert_eq!(cell(&f, "nothing"), "-");
        assert_eq!(cell(&f, "written_bytes"), "67.1");
        assert_eq!(cell(&f, "wall_s"), "0.500");
    }
}
