//! A scenario's numbers as a table to copy: per charted figure and bar
//! (target, parameters, side, run), the median, min, max and n the bar
//! is drawn from, in the figure's base unit.
//!
//! The design decisions: the table sits closed in a `<details>` under the
//! charts, which already show these numbers; opened, it is a plain table
//! that pastes into a spreadsheet cell for cell. So cells hold plain
//! numbers: no thousands separator, a `.` for decimals, no unit (the unit
//! has its own column), whole numbers exact and others to six significant
//! digits. Rows carry `data-` attributes naming their bar (the figure and
//! unit on their `<tbody>`), the numbers are in the cells: a preset's
//! page has hundreds of rows, and each byte is paid for. A value not measured
//! is "—", and why is said once, in a numbered note under the table; the
//! row's `note` column holds that number.

use std::fmt::{self, Write as _};

use super::{escape, plural};
use crate::report::bars::{Bar, Sides, spread};

/// One charted figure: its name, base unit and bars.
pub(super) struct Charted<'a> {
    /// The figure's name.
    pub(super) figure: &'a str,
    /// Its base unit (`s`, `bytes`, `count`, `MiB/s`).
    pub(super) unit: &'a str,
    /// The bars of its chart, in the chart's order.
    pub(super) bars: Vec<Bar>,
}

/// The numbers of `charted`, one row per bar, in a closed `<details>`;
/// `sides` names the sides of a comparison.
pub(super) fn write_numbers(out: &mut String, scenario: &str, charted: &[Charted], sides: Option<&Sides>) -> fmt::Result {
    let bars = || charted.iter().flat_map(|c| &c.bars);
    let rows = bars().count();
    if rows == 0 {
        return Ok(());
    }
    let with_params = bars().any(|b| !b.params.is_empty());
    let with_runs = bars().any(|b| !b.run.is_empty());
    let with_sides = sides.is_some();
    let mut notes: Vec<String> = Vec::new();

    let named = sides.map(|s| format!("; base = {}, new = {}", s.base, s.new)).unwrap_or_default();
    writeln!(
        out,
        r#"<details class="numbers"><summary>The numbers: median, min, max and n of each figure per target ({}{}), to copy</summary>"#,
        plural(rows, "row", "rows"),
        escape(&named)
    )?;
    writeln!(out, r#"<table class="numbers" data-scenario="{}">"#, escape(scenario))?;
    write!(out, "<thead><tr><th>figure</th><th>unit</th><th>target</th>")?;
    for (shown, heading) in [(with_params, "parameters"), (with_sides, "side"), (with_runs, "run")] {
        if shown {
            write!(out, "<th>{heading}</th>")?;
        }
    }
    writeln!(out, r#"<th>median</th><th>min</th><th>max</th><th>n</th><th>note</th></tr></thead>"#)?;
    for chart in charted {
        // The figure and unit once per figure for a test to read; each row
        // repeats them in cells, for whoever pastes rows elsewhere.
        writeln!(out, r#"<tbody data-figure="{}" data-unit="{}">"#, escape(chart.figure), escape(chart.unit))?;
        for bar in &chart.bars {
            let spread = spread(&bar.values);
            let note = (bar.values.len() < bar.repeats).then(|| note_number(&mut notes, bar));
            write!(out, r#"<tr data-fs="{}""#, escape(&bar.fs))?;
            for (name, value) in [("params", &bar.params), ("run", &bar.run)] {
                if !value.is_empty() {
                    write!(out, r#" data-{name}="{}""#, escape(value))?;
                }
            }
            if let Some(side) = bar.side {
                write!(out, r#" data-side="{}""#, side.as_str())?;
            }
            write!(out, "><td>{}</td><td>{}</td><td>{}</td>", escape(chart.figure), escape(chart.unit), escape(&bar.fs))?;
            if with_params {
                write!(out, "<td>{}</td>", escape(&bar.params))?;
            }
            if with_sides {
                write!(out, "<td>{}</td>", bar.side.map_or("", |s| s.as_str()))?;
            }
            if with_runs {
                write!(out, "<td>{}</td>", escape(&bar.run))?;
            }
            let cell = |v: Option<f64>| v.map_or_else(|| "—".to_string(), plain);
            write!(
                out,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                cell(spread.map(|s| s.median)),
                cell(spread.map(|s| s.min)),
                cell(spread.map(|s| s.max)),
                bar.values.len()
            )?;
            writeln!(out, "<td>{}</td></tr>", note.map(|n| n.to_string()).unwrap_or_default())?;
        }
        writeln!(out, "</tbody>")?;
    }
    writeln!(out, "</table>")?;
    if !notes.is_empty() {
        writeln!(out, r#"<p class="note">Notes: why a figure is "—" (no repeat measured it) or n is below the repeats.</p>"#)?;
        writeln!(out, r#"<ol class="numbers-notes">"#)?;
        for note in &notes {
            writeln!(out, "<li>{}</li>", escape(note))?;
        }
        writeln!(out, "</ol>")?;
    }
    writeln!(out, "</details>")
}

/// The number of the note saying why `bar` lacks values (each reason
/// once, numbered from 1 in order of first use).
fn note_number(notes: &mut Vec<String>, bar: &Bar) -> usize {
    let reason = if bar.missing.is_empty() { "not measured".to_string() } else { bar.missing.join("; ") };
    match notes.iter().position(|n| *n == reason) {
        Some(at) => at + 1,
        None => {
            notes.push(reason);
            notes.len()
        }
    }
}

/// A number as a spreadsheet reads it: whole numbers exact, others to six
/// significant digits; no thousands separator, no exponent.
pub(super) fn plain(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{}", value as i64);
    }
    // Rounding through the exponent form keeps six significant digits at
    // any magnitude; Display then writes it without an exponent.
    let rounded: f64 = format!("{value:.5e}").parse().unwrap_or(value);
    format!("{rounded}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::bars::Side;

    fn bar(fs: &str, side: Option<Side>, values: &[f64], repeats: usize) -> Bar {
        Bar {
            fs: fs.to_string(),
            params: String::new(),
            run: String::new(),
            side,
            colour: 0,
            values: values.to_vec(),
            repeats,
            missing: if values.len() < repeats { vec!["tracepoints need root".to_string()] } else { Vec::new() },
            emulated: false,
            mark: None,
        }
    }

    fn table(charted: &[Charted], sides: Option<&Sides>) -> String {
        let mut out = String::new();
        write_numbers(&mut out, "mmap-fill", charted, sides).unwrap();
        out
    }

    #[test]
    fn numbers_are_plain_for_spreadsheets() {
        assert_eq!(plain(31483.0), "31483", "no thousands separator");
        assert_eq!(plain(16777216.0), "16777216", "bytes exact");
        assert_eq!(plain(0.437_712_345_6), "0.437712");
        assert_eq!(plain(584.901_234_56), "584.901");
        assert_eq!(plain(0.000_012_345_67), "0.0000123457", "no exponent");
        assert_eq!(plain(-2.5), "-2.5");
        assert_eq!(plain(0.0), "0");
    }

    #[test]
    fn one_row_per_bar_with_its_median_range_and_n() {
        let charted = [
            Charted {
                figure: "wall_s",
                unit: "s",
                bars: vec![bar("ext4", Some(Side::Base), &[0.3, 0.1, 0.2], 3), bar("ext4", Some(Side::New), &[5.0, 7.0], 2)],
            },
            Charted {
                figure: "journal_commits",
                unit: "count",
                bars: vec![bar("dir", Some(Side::Base), &[], 1), bar("dir", Some(Side::New), &[12.0], 2)],
            },
        ];
        let sides = Sides::compared("tag a", "tag b");
        let html = table(&charted, Some(&sides));
        assert!(html.starts_with(r#"<details class="numbers"><summary>"#) && html.trim_end().ends_with("</details>"));
        assert!(html.contains("4 rows; base = tag a, new = tag b"));
        assert!(html.contains("<th>side</th>") && !html.contains("<th>parameters</th>") && !html.contains("<th>run</th>"));
        assert!(html.contains(r#"<tbody data-figure="wall_s" data-unit="s">"#), "{html}");
        assert!(html.contains(r#"<tr data-fs="ext4" data-side="base"><td>wall_s</td><td>s</td><td>ext4</td><td>base</td><td>0.2</td><td>0.1</td><td>0.3</td><td>3</td><td></td></tr>"#), "{html}");
        assert!(html.contains("<td>6</td><td>5</td><td>7</td><td>2</td><td></td></tr>"));
        // Missing: dashes and a note, the reason said once for two rows.
        assert!(html.contains(r#"<td>dir</td><td>base</td><td>—</td><td>—</td><td>—</td><td>0</td><td>1</td></tr>"#), "{html}");
        assert!(html.contains("<td>12</td><td>12</td><td>12</td><td>1</td><td>1</td></tr>"), "{html}");
        assert_eq!(html.matches("tracepoints need root").count(), 1, "{html}");
        assert!(html.contains("<li>tracepoints need root</li>"));
    }

    #[test]
    fn without_sides_no_side_column_and_nothing_for_no_bars() {
        let charted = [Charted { figure: "f<", unit: "count", bars: vec![bar("a&b", None, &[1.0], 1)] }];
        let html = table(&charted, None);
        assert!(!html.contains("side") && !html.contains("numbers-notes"));
        assert!(html.contains("<td>f&lt;</td>") && html.contains("<td>a&amp;b</td>"));
        assert_eq!(table(&[], None), "");
    }
}
