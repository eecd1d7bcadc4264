//! `show`'s table across kernels, for a run whose cases ran under two
//! kernels or more (`run --kernel A,B,host`): per scenario a row per
//! place (without its kernel) and deciding figure, a column per kernel in
//! version order, each cell the median of its repeats in the tables' units
//! (`report::survey` groups and judges them, as the report's charts do).
//!
//! The design decision: a reader scans a row for what a kernel changed, so
//! a cell whose repeats lie apart from the first kernel's (a single repeat
//! each: whose value differs) is marked `*`, and the figures that differ
//! somewhere come first. The table fits [`WIDTH`]: release names lose
//! their flavour (`-amd64`) when that is needed, then kernels are left to
//! `--wide`, named: those with no cell marked first (they add nothing to
//! the first kernel's column), never the first nor the host's.

use std::fmt::Write as _;

use super::table::{heading, marked_if_emulated, scaled};
use super::verdicts::{WIDTH, wrap};
use crate::record::release::short_release;
use crate::record::{Catalog, RunRecord};
use crate::report::survey::{Cell, Change, Kernel, ScenarioAcross, Survey};

/// The mark of a cell that differs from the first kernel's.
const DIFFERS: &str = "*";

/// The table across kernels of `record`, or nothing when its cases ran
/// under one kernel; every kernel however wide with `wide`.
pub(super) fn render(catalog: &Catalog, record: &RunRecord, wide: bool) -> String {
    let Some(survey) = Survey::of(catalog, std::slice::from_ref(record)) else { return String::new() };
    let first = survey.kernels[0].label();
    let mut s = String::new();
    s.push('\n');
    s.push_str(&wrap(
        &format!(
            "across kernels (version order): the median under each kernel; {DIFFERS} where its repeats lie apart from {first}'s"
        ),
        2,
    ));
    for (i, scenario) in survey.scenarios.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&scenario_table(catalog, &survey.kernels, scenario, wide));
    }
    s
}

/// A table's text columns and its kernels' columns.
struct Table {
    place: Vec<String>,
    figure: Vec<String>,
    /// Per kernel: its heading, then its cells.
    kernels: Vec<(String, Vec<String>)>,
}

impl Table {
    fn width_of(column: &[String], heading: &str) -> usize {
        column.iter().map(|c| c.chars().count()).chain([heading.chars().count()]).max().unwrap_or(0)
    }

    /// Its width with the kernel columns `shown`.
    fn width(&self, shown: &[usize]) -> usize {
        let fixed = 2 + Self::width_of(&self.place, "place") + 2 + Self::width_of(&self.figure, "figure");
        fixed + shown.iter().map(|k| &self.kernels[*k]).map(|(h, cells)| 2 + Self::width_of(cells, h)).sum::<usize>()
    }

    /// The lines, with the kernel columns `shown`.
    fn lines(&self, shown: &[usize]) -> String {
        let (pw, fw) = (Self::width_of(&self.place, "place"), Self::width_of(&self.figure, "figure"));
        let columns: Vec<&(String, Vec<String>)> = shown.iter().map(|k| &self.kernels[*k]).collect();
        let widths: Vec<usize> = columns.iter().map(|(h, cells)| Self::width_of(cells, h)).collect();
        let mut s = String::new();
        let mut line = format!("  {:<pw$}  {:<fw$}", "place", "figure");
        for ((h, _), w) in columns.iter().zip(&widths) {
            let _ = write!(line, "  {h:>w$}");
        }
        let _ = writeln!(s, "{}", line.trim_end());
        for r in 0..self.place.len() {
            let mut line = format!("  {:<pw$}  {:<fw$}", self.place[r], self.figure[r]);
            for ((_, cells), w) in columns.iter().zip(&widths) {
                let _ = write!(line, "  {:>w$}", cells[r]);
            }
            let _ = writeln!(s, "{}", line.trim_end());
        }
        s
    }
}

/// A kernel's column heading: its release (without its flavour when
/// `short`), `(host)` after the host's.
fn kernel_heading(kernel: &Kernel, short: bool) -> String {
    let release = if short { short_release(&kernel.release) } else { &kernel.release };
    if kernel.host { format!("{release} (host)") } else { release.to_string() }
}

/// One cell: the median in the tables' units, `†` for an emulator's
/// timing, [`DIFFERS`] when apart from the first kernel's; `-` when the
/// place ran there without measuring it, empty when it did not run there.
fn cell_text(cell: &Cell, first: &Cell, figure: &str, unit: &str) -> String {
    let Some(spread) = cell.spread() else { return if cell.cases.is_empty() { String::new() } else { "-".into() } };
    let said = marked_if_emulated(scaled(spread.median, unit), &cell.cases, figure);
    let printed_apart = first.spread().is_none_or(|f| scaled(f.median, unit) != scaled(spread.median, unit));
    if cell.apart_from(first) && printed_apart { format!("{said}{DIFFERS}") } else { said }
}

/// The cells of a column padded on the right to as many marks as the
/// most marked one has, so their digits stay in line when right-aligned.
fn hang_marks(column: &mut [String]) {
    let marks =
        |c: &str| c.chars().rev().take_while(|m| DIFFERS.contains(*m) || crate::record::EMULATED_MARK.contains(*m)).count();
    let most = column.iter().map(|c| marks(c)).max().unwrap_or(0);
    for cell in column.iter_mut().filter(|c| !c.is_empty()) {
        let pad = most - marks(cell);
        cell.push_str(&" ".repeat(pad));
    }
}

fn scenario_table(catalog: &Catalog, kernels: &[Kernel], scenario: &ScenarioAcross, wide: bool) -> String {
    let figures: Vec<_> = scenario.figures.iter().filter(|f| f.change != Change::Unmeasured).collect();
    let mut s = String::new();
    let seed = catalog.scenario(&scenario.name).and_then(|i| i.seed).map(|seed| format!(" (seed {seed})")).unwrap_or_default();
    let _ = writeln!(s, "{}{seed}:", scenario.name);
    if figures.is_empty() {
        s.push_str("  no deciding figure measured under any kernel\n");
        return s;
    }
    let mut table = Table { place: Vec::new(), figure: Vec::new(), kernels: Vec::new() };
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); kernels.len()];
    for (at, series) in scenario.series.iter().enumerate() {
        for (i, figure) in figures.iter().enumerate() {
            table.place.push(if i == 0 { series.clone() } else { String::new() });
            table.figure.push(heading(catalog, &figure.name, Some(&figure.unit)));
            let row = &figure.cells[at];
            for (k, cell) in row.iter().enumerate() {
                cells[k].push(cell_text(cell, &row[0], &figure.name, &figure.unit));
            }
        }
    }
    for column in &mut cells {
        hang_marks(column);
    }
    let columns = |short: bool| kernels.iter().zip(&cells).map(|(k, c)| (kernel_heading(k, short), c.clone())).collect();
    let mut shown: Vec<usize> = (0..kernels.len()).collect();
    table.kernels = columns(false);
    if !wide && table.width(&shown) > WIDTH {
        table.kernels = columns(true);
    }
    // Too wide still: kernels go, last first, those with no cell marked
    // before those with one; the first (what the marks compare with) and
    // the host's stay.
    let marked = |k: usize| table.kernels[k].1.iter().any(|c| c.contains(DIFFERS));
    let mut left_out = Vec::new();
    for keep_marked in [false, true] {
        while !wide && table.width(&shown) > WIDTH {
            let Some(at) = shown.iter().rposition(|k| *k > 0 && !kernels[*k].host && (keep_marked || !marked(*k))) else { break };
            left_out.push(shown.remove(at));
        }
    }
    s.push_str(&table.lines(&shown));
    if !left_out.is_empty() {
        left_out.sort_unstable();
        let named = |k: usize| short_release(&kernels[k].release).to_string();
        let like_first =
            if left_out.iter().all(|k| !marked(*k)) { format!("; none apart from {}", named(0)) } else { String::new() };
        let said = format!("({} more kernels with --wide: {}{like_first})", left_out.len(), ranges(&left_out, named));
        s.push_str(&wrap(&said, 2));
    }
    s
}

/// Kernel indices `sorted` named in runs of neighbours: `a to c, e`.
fn ranges(sorted: &[usize], named: impl Fn(usize) -> String) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &k in sorted {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == k => *end = k,
            _ => runs.push((k, k)),
        }
    }
    let said: Vec<String> =
        runs.into_iter().map(|(a, b)| if a == b { named(a) } else { format!("{} to {}", named(a), named(b)) }).collect();
    said.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Kind};
    use crate::report::survey::tests::{KERNELS, case, catalog, replace_files_survey, run};

    #[test]
    fn a_row_per_place_and_figure_a_column_per_kernel_in_version_order() {
        let text = render(&catalog(), &replace_files_survey(), false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "across kernels (version order): the median under each kernel; * where its repeats lie apart from 6.1.0-47-amd64's"
        );
        assert_eq!(lines[2], "replace-files (seed 002):");
        assert_eq!(
            lines[3],
            "  place                     figure   6.1.0-47-amd64  6.1.0-57-amd64  6.12.57+deb12-amd64  6.18.44 (host)"
        );
        // The digits in line, the mark hanging right of them.
        assert_eq!(
            lines[4],
            "  ext4 strategy=fsync-each  extents               3               3                   6*               3"
        );
        assert_eq!(
            lines[5],
            "                            wall s            1.300           1.300               1.300            1.350"
        );
        assert_eq!(
            lines[6],
            "                            files                20              20                  20               20"
        );
        assert!(lines[7].starts_with("  ext4 strategy=in-place    extents") && !lines[7].contains('*'), "{text}");
        assert_eq!(lines.len(), 10, "{text}");
        assert_eq!(render(&catalog(), &run(vec![case("mmap-fill", "xfs", "a", ("6.18.44", true), 1, 1.0, 1.0)]), false), "");
    }

    #[test]
    fn a_wide_survey_drops_the_flavour_then_leaves_kernels_to_wide() {
        let mut cases = Vec::new();
        for abi in 40..=57 {
            let kernel = format!("6.1.0-{abi}-amd64");
            cases.push(case("mmap-fill", "xfs", "a", (&kernel, false), 1, f64::from(abi % 2 + 1), 1.0));
        }
        cases.push(case("mmap-fill", "xfs", "a", (KERNELS[0].0, true), 1, 1.0, 1.0));
        let mut record = run(cases);
        let text = render(&catalog(), &record, false);
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(text.contains("  6.1.0-40  6.1.0-41") && !text.contains("6.1.0-40-amd64  "), "{text}");
        // The first and the host's stay; the kernels with a cell marked
        // (odd ABIs: 2 extents where 6.1.0-40 has 1) before the others.
        assert!(
            text.contains("\n(10 more kernels with --wide: 6.1.0-42, 6.1.0-44, 6.1.0-46, 6.1.0-48, 6.1.0-50, 6.1.0-52, 6.1.0-54 to 6.1.0-57)\n"),
            "{text}"
        );
        let heading = text.lines().nth(3).unwrap();
        assert!(
            heading.ends_with("6.1.0-40  6.1.0-41  6.1.0-43  6.1.0-45  6.1.0-47  6.1.0-49  6.1.0-51  6.1.0-53  6.18.44 (host)"),
            "{text}"
        );
        let wide = render(&catalog(), &record, true);
        assert!(wide.contains("6.1.0-57-amd64") && wide.contains("6.18.44 (host)") && !wide.contains("--wide"), "{wide}");
        assert!(wide.lines().any(|l| l.chars().count() > WIDTH));
        let extents = text.lines().find(|l| l.contains("extents")).unwrap();
        assert_eq!(
            extents.split_whitespace().collect::<Vec<_>>(),
            ["xfs", "extents", "1", "2*", "2*", "2*", "2*", "2*", "2*", "2*", "1"]
        );
        // None of those left out marked: said.
        for case in record.cases.iter_mut() {
            case.figures.set("extents", 1.0, "count", Better::Lower, Kind::Exact);
        }
        let text = render(&catalog(), &record, false);
        assert!(text.contains("; none apart from 6.1.0-40)"), "{text}");
    }

    #[test]
    fn kernels_left_out_are_named_in_runs_of_neighbours() {
        let named = |k: usize| format!("k{k}");
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8], named), "k1 to k3, k5, k7 to k8");
        assert_eq!(ranges(&[4], named), "k4");
    }
}
