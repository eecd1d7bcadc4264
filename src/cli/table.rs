//! Text tables of cases: a row per place and parameter set, the repeats of
//! one folded into `median [min–max]` with their count `n`, parameters
//! every row shares said once above them; figures scaled
//! to the units of docs/guide.md (sizes in MiB, rates in MiB/s); columns fitted to
//! [`WIDTH`] in order of importance, every figure with `--wide`; then the
//! missing-figure reasons once per table, so no `-` is a mystery.

mod busy;
mod cell;
mod emulated;
mod notes;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use super::verdicts::{WIDTH, wrap};
use crate::record::catalog::DEFERRED_TWINS;
use crate::record::{Case, Catalog, Status};
pub(super) use cell::{heading, marked_if_emulated, scaled};
use cell::{summary, summary_and_unit};
use notes::missing;
pub use busy::busy;
pub use emulated::emulated;
pub use notes::failures;

/// What a table may show, most important first.
#[derive(Debug, Clone, Default)]
pub struct Columns<'a> {
    /// The parameters, each a column left of the figures.
    pub params: &'a [&'a str],
    /// The figures shown while they fit [`WIDTH`] (all with `wide`).
    pub figures: Vec<String>,
    /// Whether `--wide` shows every other figure the cases hold too (a
    /// run's tables; not the starting state's).
    pub more: bool,
    /// Whether to show every figure, however wide (`--wide`).
    pub wide: bool,
}

/// The cases of one place and parameter set: one row however many
/// repeats.
struct Row<'c> {
    place: String,
    params: &'c serde_json::Map<String, serde_json::Value>,
    cases: Vec<&'c Case>,
}

/// The cases grouped into rows, in the order their first case came.
fn rows<'c>(cases: &[&'c Case]) -> Vec<Row<'c>> {
    let mut rows: Vec<Row<'c>> = Vec::new();
    for case in cases {
        let place = case.place();
        match rows.iter_mut().find(|r| r.place == place && *r.params == case.params) {
            Some(row) => row.cases.push(case),
            None => rows.push(Row { place, params: &case.params, cases: vec![case] }),
        }
    }
    rows
}

/// A parameter's value for a cell: sizes as sizes, `-` when unset.
fn param_cell(params: &serde_json::Map<String, serde_json::Value>, name: &str) -> String {
    match params.get(name) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.as_u64().map_or_else(|| n.to_string(), crate::units::bytes_or_count(name)),
        _ => "-".into(),
    }
}

/// `ok` when every repeat succeeded, `FAILED` when none did, else how
/// many did (`2/3 ok`).
fn status_cell(cases: &[&Case]) -> String {
    let ok = cases.iter().filter(|c| c.status == Status::Ok).count();
    match ok {
        n if n == cases.len() => "ok".into(),
        0 => "FAILED".into(),
        n => format!("{n}/{} ok", cases.len()),
    }
}

/// The figures a table could show that some case holds: `first` as the
/// table lists them (so the memory cgroup's appear only for cases run
/// under a limit), each with its deferred twin right after it, then, when
/// `more`, every other figure but the starting state's, which has a table
/// of its own (`--wide` only).
fn candidates(cases: &[&Case], first: &[String], more: bool) -> (Vec<String>, Vec<String>) {
    let held = |name: &str| cases.iter().any(|c| c.figures.get(name).is_some());
    let mut listed: Vec<String> = Vec::new();
    for name in first {
        if held(name) && !listed.contains(name) {
            listed.push(name.clone());
            // What the window left for later, beside it.
            let twin = DEFERRED_TWINS.iter().find(|t| t.in_tables && t.window == name);
            if let Some(later) = twin.map(|t| t.deferred.to_string()).filter(|n| held(n) && !listed.contains(n)) {
                listed.push(later);
            }
        }
    }
    let mut rest: Vec<String> = Vec::new();
    for case in cases.iter().filter(|_| more) {
        for (name, _) in case.figures.iter() {
            if !name.starts_with("start_") && !listed.iter().chain(&rest).any(|n| n == name) {
                rest.push(name.to_string());
            }
        }
    }
    (listed, rest)
}

/// A column: its heading, its cells, whether it is left-aligned.
struct Column {
    heading: String,
    cells: Vec<String>,
    left: bool,
}

impl Column {
    fn width(&self) -> usize {
        self.cells.iter().chain(std::iter::once(&self.heading)).map(|c| c.chars().count()).max().unwrap_or(0)
    }
}

/// The table: the parameters every row shares, said once above it; then
/// where each row ran (the fs, or its place `xfs@256M` when a run varies
/// conditions), the parameters that vary, `n` (when some row has
/// repeats), status, then as many figures as fit [`WIDTH`] (all with
/// `wide`), a line saying how many more `--wide` shows, and the reasons
/// for the shown figures that were not measured.
pub fn render_cases(catalog: &Catalog, cases: &[&Case], columns: &Columns) -> String {
    let rows = rows(cases);
    let places = cases.iter().any(|c| !c.conditions.is_empty());
    let mut table = vec![Column {
        heading: if places { "place" } else { "fs" }.into(),
        cells: rows.iter().map(|r| r.place.clone()).collect(),
        left: true,
    }];
    // A parameter every row shares is said once above the table, not
    // repeated down a column of its own.
    let mut shared = Vec::new();
    for p in columns.params {
        let cells: Vec<String> = rows.iter().map(|r| param_cell(r.params, p)).collect();
        if cells.iter().all(|c| *c == cells[0]) {
            shared.push(format!("{p} {}", cells[0]));
        } else {
            table.push(Column { heading: p.to_string(), cells, left: true });
        }
    }
    if rows.iter().any(|r| r.cases.len() > 1) {
        table.push(Column { heading: "n".into(), cells: rows.iter().map(|r| r.cases.len().to_string()).collect(), left: false });
    }
    table.push(Column { heading: "status".into(), cells: rows.iter().map(|r| status_cell(&r.cases)).collect(), left: true });
    let fixed = table.len();
    let mut width = table.iter().map(Column::width).sum::<usize>() + 2 * (table.len() - 1);
    let (listed, rest) = candidates(cases, &columns.figures, columns.more);
    let (mut shown, mut hidden) = (Vec::new(), if columns.wide { 0 } else { rest.len() });
    let every = if columns.wide { rest.as_slice() } else { &[] };
    for name in listed.iter().chain(every) {
        let unit = cases.iter().find_map(|c| c.figures.get(name)).map(|f| f.unit.to_string());
        let mut cells: Vec<String> = rows.iter().map(|r| marked_if_emulated(summary(&r.cases, name), &r.cases, name)).collect();
        if cells.iter().any(|c| c.ends_with(crate::record::EMULATED_MARK)) {
            // The unmarked cells' digits in line with the marked ones'.
            cells.iter_mut().filter(|c| !c.ends_with(crate::record::EMULATED_MARK)).for_each(|c| c.push(' '));
        }
        let column = Column { heading: unique_heading(&table, catalog, name, unit.as_deref()), cells, left: false };
        if columns.wide || width + 2 + column.width() <= WIDTH {
            width += 2 + column.width();
            table.push(column);
            shown.push(name.clone());
        } else {
            hidden += 1;
        }
    }
    let mut s = String::new();
    if !shared.is_empty() && !rows.is_empty() {
        s.push_str(&wrap(&format!("parameters: {}", shared.join(", ")), 2));
    }
    if width > WIDTH {
        // Too wide for a row (`--wide`): a block per row instead.
        s.push_str(&blocks(&table[..fixed], &rows, &shown));
    } else {
        s.push_str(&lines(&table));
    }
    if hidden > 0 {
        let _ = writeln!(s, "({hidden} more figures with --wide)");
    }
    s.push_str(&missing(cases, &shown));
    s
}

/// A figure's heading, told apart from every column before it: its
/// declared heading, else its name (replace-files' `files` parameter and
/// the `files left` figure never share one).
fn unique_heading(table: &[Column], catalog: &Catalog, name: &str, unit: Option<&str>) -> String {
    let taken = |h: &str| table.iter().any(|c| c.heading == h);
    let declared = heading(catalog, name, unit);
    if !taken(&declared) {
        return declared;
    }
    if !taken(name) {
        return name.to_string();
    }
    format!("figure {name}")
}

/// A block per row, for a table wider than [`WIDTH`]: a line saying the
/// row (its place, parameters, `n` and status, each after its heading),
/// then a line per figure shown (its name, its value, its unit), the
/// figures' columns aligned across the blocks.
fn blocks(fixed: &[Column], rows: &[Row], shown: &[String]) -> String {
    let mut table = vec![
        Column { heading: "figure".into(), cells: Vec::new(), left: true },
        Column { heading: "value".into(), cells: Vec::new(), left: false },
        Column { heading: "unit".into(), cells: Vec::new(), left: true },
    ];
    let mut starts = Vec::new();
    for row in rows {
        starts.push(table[0].cells.len());
        for name in shown {
            let (value, unit) = summary_and_unit(&row.cases, name);
            table[0].cells.push(name.clone());
            table[1].cells.push(marked_if_emulated(value, &row.cases, name));
            table[2].cells.push(unit);
        }
    }
    let text = lines(&table);
    let mut text = text.lines();
    let heading = text.next().unwrap_or_default().to_string();
    let body: Vec<&str> = text.collect();
    let mut s = String::new();
    for (r, start) in starts.iter().enumerate() {
        let said: Vec<String> = fixed.iter().map(|c| format!("{} {}", c.heading, c.cells[r])).collect();
        let _ = writeln!(s, "{}{}", if r > 0 { "\n" } else { "" }, said.join(", "));
        let _ = writeln!(s, "  {heading}");
        for line in &body[*start..*start + shown.len()] {
            let _ = writeln!(s, "  {line}");
        }
    }
    s
}

/// The columns as lines: text columns left-aligned, figures right-aligned,
/// two spaces between.
fn lines(table: &[Column]) -> String {
    let widths: Vec<usize> = table.iter().map(Column::width).collect();
    let mut s = String::new();
    let rows = table.first().map_or(0, |c| c.cells.len());
    for r in 0..=rows {
        let mut line = String::new();
        for (column, w) in table.iter().zip(&widths) {
            let text = if r == 0 { &column.heading } else { &column.cells[r - 1] };
            if column.left {
                let _ = write!(line, "{text:<w$}  ");
            } else {
                let _ = write!(line, "{text:>w$}  ");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}
