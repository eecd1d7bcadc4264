//! `fslab report`'s page: one or more runs as a single self-contained HTML5
//! file. It opens with the verdict matrix (every seed judged, at every
//! place); with `--compare`, what differs between base and new right
//! under it; when the cases ran under several kernels, each deciding
//! figure against the kernel release ("Across kernels"); then the runs
//! and what they ran on; then, per scenario (in
//! the [`Catalog`]'s order, then `exec`), a bar chart per headline figure,
//! the extent maps the cases kept, and each case's timeline; last, the
//! comparison table when one is given. The answers first, the evidence
//! after: a reader who stops after the first screen has the verdicts and
//! knows what the comparison changed.
//!
//! The one design decision: every chart carries its numbers in `data-`
//! attributes (a bar its median, min, max and repeats; a strip its path
//! and extent count; a timeline its point count), so the page is tested
//! as data, in a real browser, rather than by looking at pixels. It needs
//! nothing from outside: CSS inline, pictures as inline SVG, no script, no
//! font file, no image, no link off the page.
//!
//! This file writes the page around the sections and its header; `matrix`
//! the verdict matrix; `across` the survey across kernels, when the runs'
//! cases ran under several; `runs` the runs and the machines they ran on; `section` one scenario's
//! section, with its bar charts from `figures` and its extent strips from
//! `maps`, its timelines from `timelines` and its block requests from
//! `requests`; `style.css` is the style sheet, inlined.

mod across;
mod crash;
mod figures;
mod maps;
mod matrix;
mod numbers;
mod regressed;
mod requests;
mod runs;
mod start;
mod section;
mod timelines;
mod verdicts;

use std::fmt::{self, Write as _};

pub use regressed::Regressed;

use super::markup::escape_xml as escape;
use crate::record::{Catalog, RunRecord};
use crate::report::survey::Survey;

/// Extent-map strips drawn on one page at most: each is bounded (about
/// 100 KB at worst), and so must their number be.
const MAX_STRIPS: usize = 48;

/// The page's size past which no further section draws extent maps (they
/// are listed instead, "the page's picture budget is spent"): a preset's
/// page should stay under about a megabyte, and maps are the part that can
/// be left to `fslab map` without losing a figure. The sections before
/// keep theirs; bar charts, timelines and tables are never dropped. The
/// preset's five sections reach about 720 KiB before the last one's maps
/// (each seed's printed figures charted: mmap-fill's alone take 200 KiB),
/// so every section keeps its pictures.
const PICTURES_UNTIL: usize = 768 * 1024;

/// What `fslab report --compare BASE` adds to the page: the base's runs,
/// so charts can draw base and new side by side, and the comparison's
/// HTML fragments (made by `compare::render`, embedded as they are).
pub struct Compared<'a> {
    /// The base side's label (`tag before`, a run id, ...).
    pub base_label: &'a str,
    /// The base side's runs.
    pub base_runs: &'a [RunRecord],
    /// The new side's label; its runs are the page's runs.
    pub new_label: &'a str,
    /// What differs between the sides and the notes said once: near the
    /// top of the page, under the verdicts.
    pub summary_html: String,
    /// The comparison table, in a section of its own.
    pub table_html: String,
    /// The figures it found worse, charted right under the verdict matrix.
    pub regressed: Vec<Regressed>,
}

/// The page for `runs`, titled `title`, with what `compared` adds when
/// given; `catalog` orders the scenarios and describes them and their
/// figures. UTF-8 bytes of a complete HTML5 document.
pub fn render(catalog: &Catalog, runs: &[RunRecord], title: &str, compared: Option<&Compared>) -> Vec<u8> {
    let mut page = String::with_capacity(256 * 1024);
    Page::new(catalog, runs, compared).write(&mut page, title).expect("fmt::Write for String never fails");
    page.into_bytes()
}

/// The page being written: the runs and what is shared across sections.
struct Page<'a> {
    catalog: &'a Catalog,
    runs: &'a [RunRecord],
    /// The base side and the comparison, with `--compare`.
    compared: Option<&'a Compared<'a>>,
    /// Target labels in order of first appearance: their bar colour.
    colours: Vec<&'a str>,
    /// Strips still allowed on the page.
    strips_left: usize,
}

impl<'a> Page<'a> {
    fn new(catalog: &'a Catalog, runs: &'a [RunRecord], compared: Option<&'a Compared<'a>>) -> Page<'a> {
        let mut colours: Vec<&str> = Vec::new();
        for case in runs.iter().flat_map(|r| &r.cases) {
            if !colours.contains(&case.fs.as_str()) {
                colours.push(&case.fs);
            }
        }
        Page { catalog, runs, compared, colours, strips_left: MAX_STRIPS }
    }

    fn write(mut self, out: &mut String, title: &str) -> fmt::Result {
        let compared = self.compared;
        let scenarios = scenario_order(self.catalog, self.runs);
        let survey = Survey::of(self.catalog, self.runs);
        writeln!(out, "<!DOCTYPE html>")?;
        writeln!(out, r#"<html lang="en">"#)?;
        writeln!(out, "<head>")?;
        writeln!(out, r#"<meta charset="utf-8">"#)?;
        writeln!(out, r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#)?;
        writeln!(out, r#"<meta name="generator" content="fslab {}">"#, env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "<title>{}</title>", escape(title))?;
        writeln!(out, "<style>\n{}</style>", style())?;
        writeln!(out, "</head>")?;
        writeln!(out, "<body>")?;
        writeln!(out, r#"<header class="page"><h1>{}</h1>"#, escape(title))?;
        let cases: usize = self.runs.iter().map(|r| r.cases.len()).sum();
        writeln!(
            out,
            r#"<p class="sub">{} · {} · fslab {}</p>"#,
            plural(self.runs.len(), "run", "runs"),
            plural(cases, "case", "cases"),
            escape(env!("CARGO_PKG_VERSION"))
        )?;
        write_nav(out, &scenarios, compared, survey.is_some())?;
        writeln!(out, "</header>")?;
        writeln!(out, "<main>")?;
        matrix::write_matrix(out, self.runs, compared.map(|c| (c.base_label, c.base_runs)))?;
        self.write_regressed(out)?;
        if let Some(compared) = compared {
            writeln!(out, r#"<section class="differs" id="differs"><h2>Compared with {}</h2>"#, escape(compared.base_label))?;
            write!(out, "{}", compared.summary_html)?;
            writeln!(out, r##"<p class="params">The figures that moved, base against new: <a href="#compare">the comparison table</a> at the end of the page.</p>"##)?;
            writeln!(out, "</section>")?;
        }
        if let Some(survey) = &survey {
            across::write_across(out, self.catalog, survey)?;
        }
        if self.runs.is_empty() {
            writeln!(out, r#"<p class="note">No runs to show.</p>"#)?;
        } else {
            runs::write_runs(out, self.runs)?;
        }
        for scenario in &scenarios {
            if out.len() >= PICTURES_UNTIL {
                self.strips_left = 0;
            }
            self.write_scenario(out, scenario)?;
        }
        if let Some(compared) = compared {
            writeln!(out, r#"<section class="compare" id="compare"><h2>Comparison</h2>"#)?;
            writeln!(out, "{}", compared.table_html)?;
            writeln!(out, "</section>")?;
        }
        writeln!(out, "</main>")?;
        writeln!(out, "</body>")?;
        writeln!(out, "</html>")
    }
}

/// Scenario names with cases, in the catalog's order, then `exec`, then
/// any other name (a newer fslab's) alphabetically.
fn scenario_order(catalog: &Catalog, runs: &[RunRecord]) -> Vec<String> {
    let present: Vec<&str> = unique(runs.iter().flat_map(|r| r.cases.iter().map(|c| c.scenario.as_str())));
    let mut order: Vec<String> =
        catalog.scenarios.iter().map(|s| s.name).filter(|n| present.contains(n)).map(str::to_string).collect();
    if present.contains(&"exec") {
        order.push("exec".to_string());
    }
    let mut others: Vec<String> = present.iter().filter(|n| !order.iter().any(|o| o == *n)).map(|n| n.to_string()).collect();
    others.sort();
    order.extend(others);
    order
}

/// Items in order of first appearance, each once.
fn unique<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// The anchor of a scenario's section.
fn section_id(name: &str) -> String {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("scenario-{safe}")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Links to the sections.
fn write_nav(out: &mut String, scenarios: &[String], compared: Option<&Compared>, across: bool) -> fmt::Result {
    let compare = compared.is_some();
    write!(out, r##"<nav><a href="#verdicts">verdicts</a>"##)?;
    if compared.is_some_and(|c| !c.regressed.is_empty()) {
        write!(out, r##"<a href="#regressed">regressed</a>"##)?;
    }
    if compare {
        write!(out, r##"<a href="#differs">what differs</a>"##)?;
    }
    if across {
        write!(out, r##"<a href="#{}">across kernels</a>"##, across::ID)?;
    }
    write!(out, r##"<a href="#runs">runs</a>"##)?;
    for name in scenarios {
        write!(out, r##"<a href="#{}">{}</a>"##, section_id(name), escape(name))?;
    }
    if compare {
        write!(out, r##"<a href="#compare">comparison</a>"##)?;
    }
    writeln!(out, "</nav>")
}

/// The page's whole style sheet: system fonts only, nothing loaded.
const STYLE_SHEET: &str = include_str!("style.css");

/// The style sheet as the page carries it: without the file's opening
/// comment, which is for whoever edits the file, not for every page.
fn style() -> &'static str {
    STYLE_SHEET.strip_prefix("/*").and_then(|s| s.split_once("*/\n")).map_or(STYLE_SHEET, |(_, sheet)| sheet)
}

#[cfg(test)]
mod tests;
