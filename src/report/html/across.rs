//! The page's "Across kernels" section, for runs whose cases ran under
//! two kernels or more (`run --kernel A,B,host`): per scenario, a chart
//! per deciding figure against the kernel release (`report::survey`), the
//! figures that differ between kernels first; a line for each figure that
//! is the same under every kernel; and the medians as a table to copy.
//!
//! The design decision: the survey is read across the page's runs, pooled
//! (a kernel's cases may come from a run of their own), and judged once
//! (`survey::Change`), so the section, its charts and `fslab show`'s table
//! say the same figure differs, moves within its repeats, or does not
//! change. A scenario's series keep one colour through all its charts,
//! named once in a legend above them.

use std::fmt::{self, Write as _};

use super::numbers::plain;
use super::{escape, plural, section_id};
use crate::record::Catalog;
use crate::record::guest::EMULATED_FOOTNOTE;
use crate::record::release::short_release;
use crate::report::axis::Display;
use crate::report::survey::chart::{self, Chart};
use crate::report::survey::{Change, FigureAcross, Kernel, ScenarioAcross, Survey};

/// The anchor of the section.
pub(super) const ID: &str = "kernels";

/// The section for `survey`.
pub(super) fn write_across(out: &mut String, catalog: &Catalog, survey: &Survey) -> fmt::Result {
    writeln!(out, r#"<section class="across" id="{ID}" data-kernels="{}">"#, survey.kernels.len())?;
    writeln!(out, "<h2>Across kernels</h2>")?;
    let named: Vec<String> = survey.kernels.iter().map(kernel_words).collect();
    let debian = survey.kernels.iter().filter(|k| is_debian(k)).count();
    let debian = match debian {
        0 => String::new(),
        n if n == survey.kernels.len() => " All Debian's packaged kernels (<code>--kernel debian:NAME</code>).".to_string(),
        n => format!(" Debian's packaged kernels (<code>--kernel debian:NAME</code>): {n}."),
    };
    writeln!(
        out,
        r#"<p class="params">{}, in version order: {}.{debian}</p>"#,
        plural(survey.kernels.len(), "kernel", "kernels"),
        escape(&named.join(", "))
    )?;
    writeln!(
        out,
        r#"<p class="params">Each deciding figure against the kernel: a line per place through its medians, a dot per repeat, the host's kernel shaded. The figures that differ between kernels come first; one that is the same under every kernel is said in a line.</p>"#
    )?;
    if survey.kernels.iter().any(|k| k.emulated) {
        writeln!(out, r#"<p class="note">Hollow dots: {}.</p>"#, escape(EMULATED_FOOTNOTE))?;
    }
    for scenario in &survey.scenarios {
        write_scenario(out, catalog, survey, scenario)?;
    }
    writeln!(out, "</section>")
}

/// Whether `kernel` is a Debian kernel named as `--kernel` names it
/// (`debian:6.1.0-57` for `6.1.0-57-amd64`).
fn is_debian(kernel: &Kernel) -> bool {
    kernel.given.as_deref().and_then(|g| g.strip_prefix("debian:")).is_some_and(|name| name == short_release(&kernel.release))
}

/// A kernel in the section's list: its release, `(host)` after the
/// host's, the kernel as given after an image's (`6.12.0 (/boot/vmlinuz-6.12.0)`);
/// a Debian kernel's name says nothing its release does not.
fn kernel_words(kernel: &Kernel) -> String {
    match (&kernel.given, kernel.host) {
        (_, true) => kernel.label(),
        (Some(given), false) if !is_debian(kernel) => format!("{} ({given})", kernel.release),
        _ => kernel.release.clone(),
    }
}

fn write_scenario(out: &mut String, catalog: &Catalog, survey: &Survey, scenario: &ScenarioAcross) -> fmt::Result {
    let name = &scenario.name;
    writeln!(out, r#"<div class="across-scenario" data-scenario="{}">"#, escape(name))?;
    let seed = catalog
        .scenario(name)
        .and_then(|s| s.seed)
        .map(|s| format!(r#" <span class="seed">seed {}</span>"#, escape(s)))
        .unwrap_or_default();
    writeln!(out, r##"<h3><a href="#{}">{}</a>{seed}</h3>"##, section_id(name), escape(name))?;
    let charted: Vec<&FigureAcross> =
        scenario.figures.iter().filter(|f| matches!(f.change, Change::Differs | Change::WithinRepeats)).collect();
    if !charted.is_empty() {
        write!(out, r#"<p class="legend series">"#)?;
        for (s, series) in scenario.series.iter().enumerate() {
            write!(
                out,
                r#"<span data-series="{}"><i style="background:{}"></i>{}</span>"#,
                escape(series),
                chart::colour(s),
                escape(series)
            )?;
        }
        writeln!(out, "</p>")?;
        writeln!(out, r#"<div class="grid across">"#)?;
        for figure in &charted {
            let chart = Chart {
                scenario: name,
                kernels: &survey.kernels,
                series: &scenario.series,
                figure,
                about: catalog.about(&figure.name),
            };
            writeln!(out, r#"<div class="card">{}</div>"#, chart.render())?;
        }
        writeln!(out, "</div>")?;
    }
    for figure in scenario.figures.iter().filter(|f| f.change == Change::Same) {
        writeln!(
            out,
            r#"<p class="note same" data-same="{}"><b>{}</b> is the same under every kernel: {}.</p>"#,
            escape(&figure.name),
            escape(&figure.name),
            escape(&same_values(scenario, figure))
        )?;
    }
    let unmeasured: Vec<&str> =
        scenario.figures.iter().filter(|f| f.change == Change::Unmeasured).map(|f| f.name.as_str()).collect();
    if !unmeasured.is_empty() {
        writeln!(out, r#"<p class="note">Measured under no kernel: {}.</p>"#, escape(&unmeasured.join(", ")))?;
    }
    if charted.is_empty() && unmeasured.len() == scenario.figures.len() {
        writeln!(out, r#"<p class="note">No deciding figure to draw.</p>"#)?;
    }
    write_medians(out, survey, scenario)?;
    writeln!(out, "</div>")
}

/// A figure's one value per series, said once when every series has it:
/// `1 on every place`, `1 on ext4; 2 on xfs`.
fn same_values(scenario: &ScenarioAcross, figure: &FigureAcross) -> String {
    let per_series: Vec<(&str, f64)> = scenario
        .series
        .iter()
        .zip(&figure.cells)
        .filter_map(|(series, row)| row.iter().find_map(|c| c.repeats.first()).map(|r| (series.as_str(), r.value)))
        .collect();
    let said = |value: f64| Display::for_unit(&figure.unit, value.abs()).format(value);
    match per_series.first() {
        Some((_, first)) if per_series.len() == scenario.series.len() && per_series.iter().all(|(_, v)| v == first) => {
            let every = if scenario.series.len() > 1 { "every place" } else { per_series[0].0 };
            format!("{} on {every}", said(*first))
        }
        _ => per_series.iter().map(|(series, value)| format!("{} on {series}", said(*value))).collect::<Vec<_>>().join("; "),
    }
}

/// The medians of every measured figure as a table to copy: a row per
/// figure and series, a column per kernel, plain numbers in base units.
fn write_medians(out: &mut String, survey: &Survey, scenario: &ScenarioAcross) -> fmt::Result {
    let figures: Vec<&FigureAcross> = scenario.figures.iter().filter(|f| f.change != Change::Unmeasured).collect();
    let rows = figures.len() * scenario.series.len();
    if rows == 0 {
        return Ok(());
    }
    writeln!(
        out,
        r#"<details class="numbers"><summary>The medians under each kernel ({}), to copy</summary>"#,
        plural(rows, "row", "rows")
    )?;
    writeln!(out, r#"<table class="numbers across" data-scenario="{}">"#, escape(&scenario.name))?;
    write!(out, "<thead><tr><th>figure</th><th>unit</th><th>place</th>")?;
    for kernel in &survey.kernels {
        write!(out, r#"<th data-release="{}">{}</th>"#, escape(&kernel.release), escape(&kernel.label()))?;
    }
    writeln!(out, "</tr></thead><tbody>")?;
    for figure in figures {
        for (series, row) in scenario.series.iter().zip(&figure.cells) {
            write!(
                out,
                r#"<tr data-figure="{f}" data-series="{s}"><td>{f}</td><td>{}</td><td>{s}</td>"#,
                escape(&figure.unit),
                f = escape(&figure.name),
                s = escape(series)
            )?;
            for cell in row {
                let median = cell
                    .spread()
                    .map_or_else(|| if cell.cases.is_empty() { String::new() } else { "—".to_string() }, |s| plain(s.median));
                write!(out, "<td>{median}</td>")?;
            }
            writeln!(out, "</tr>")?;
        }
    }
    writeln!(out, "</tbody></table>")?;
    writeln!(
        out,
        r#"<p class="note">"—": the place ran under that kernel and did not measure the figure; empty: it did not run there.</p>"#
    )?;
    writeln!(out, "</details>")
}

#[cfg(test)]
mod tests {
    use crate::report::html::render;
    use crate::report::survey::tests::{KERNELS, case, catalog, replace_files_survey, run};

    fn page(runs: &[crate::record::RunRecord]) -> String {
        String::from_utf8(render(&catalog(), runs, "t", None)).expect("UTF-8")
    }

    #[test]
    fn a_survey_gets_a_section_with_a_chart_per_figure_that_moves_and_a_line_per_same_one() {
        let mut second: Vec<_> =
            KERNELS.iter().map(|(k, host)| case("mmap-fill", "xfs", "a", (*k, *host), 1, 2.0, 3.0)).collect();
        second.retain(|c| c.conditions["kernel"] != "6.1.0-47-amd64");
        let html = page(&[replace_files_survey(), run(second)]);
        let section = html
            .split(r#"<section class="across" id="kernels" data-kernels="4">"#)
            .nth(1)
            .expect("the section")
            .split("</section>")
            .next()
            .unwrap();
        assert!(html.contains(r##"<a href="#kernels">across kernels</a>"##));
        assert!(
            section.contains("4 kernels, in version order: 6.1.0-47-amd64, 6.1.0-57-amd64, 6.12.57+deb12-amd64, 6.18.44 (host). Debian's packaged kernels (<code>--kernel debian:NAME</code>): 3."),
            "{section}"
        );
        // The catalog's order: mmap-fill, then replace-files.
        let scenarios: Vec<&str> = section
            .split(r#"<div class="across-scenario" data-scenario=""#)
            .skip(1)
            .map(|s| s.split('"').next().unwrap())
            .collect();
        assert_eq!(scenarios, ["mmap-fill", "replace-files"]);
        let charts: Vec<(&str, &str)> = section
            .split(r#"<svg class="chart across" data-scenario=""#)
            .skip(1)
            .map(|s| (s.split('"').next().unwrap(), s.split(r#"data-figure=""#).nth(1).unwrap().split('"').next().unwrap()))
            .collect();
        assert_eq!(
            charts,
            [("replace-files", "extents"), ("replace-files", "wall_s")],
            "differing first; mmap-fill's are the same everywhere"
        );
        assert!(
            section.contains(
                r#"<p class="note same" data-same="extents"><b>extents</b> is the same under every kernel: 2 on xfs.</p>"#
            ),
            "{section}"
        );
        assert!(
            section.contains(r#"data-same="files"><b>files</b> is the same under every kernel: 20 on every place.</p>"#),
            "{section}"
        );
        assert!(section.contains(
            r#"<span data-series="ext4 strategy=in-place"><i style="background:#e69f00"></i>ext4 strategy=in-place</span>"#
        ));
        // The medians to copy: a column per kernel, empty where a place did not run.
        assert!(section.contains(r#"<tr data-figure="extents" data-series="xfs"><td>extents</td><td>count</td><td>xfs</td><td></td><td>2</td><td>2</td><td>2</td></tr>"#), "{section}");
        assert!(section.contains(r#"<tr data-figure="extents" data-series="ext4 strategy=fsync-each"><td>extents</td><td>count</td><td>ext4 strategy=fsync-each</td><td>3</td><td>3</td><td>6</td><td>3</td></tr>"#), "{section}");
        // The section comes before the runs and the scenarios' own.
        assert!(html.find(r#"id="kernels""#) < html.find(r#"id="runs""#));
    }

    #[test]
    fn an_image_is_named_as_given_a_debian_kernel_by_its_release_alone() {
        use crate::report::survey::Kernel;
        let kernel = |release: &str, given: Option<&str>, host| Kernel {
            release: release.into(),
            host,
            given: given.map(Into::into),
            emulated: false,
        };
        assert_eq!(super::kernel_words(&kernel("6.1.0-57-amd64", Some("debian:6.1.0-57"), false)), "6.1.0-57-amd64");
        assert_eq!(super::kernel_words(&kernel("6.12.0", Some("/boot/vmlinuz-6.12.0"), false)), "6.12.0 (/boot/vmlinuz-6.12.0)");
        assert_eq!(super::kernel_words(&kernel("6.18.44", None, true)), "6.18.44 (host)");
        assert!(!super::is_debian(&kernel("6.1.0-57-amd64", Some("debian:6.1.0-56"), false)));
    }

    #[test]
    fn no_section_without_two_kernels() {
        let one: Vec<_> = (1..=2).map(|r| case("mmap-fill", "xfs", "a", ("6.18.44", true), r, 1.0, 1.0)).collect();
        let html = page(&[run(one)]);
        assert!(!html.contains(r#"id="kernels""#) && !html.contains("across kernels"));
    }
}
