//! A scenario's bar charts: one per headline figure (then the common
//! ones), a bar per group at the median of its repeats, and the reasons
//! for missing bars in words below.
//!
//! The design decision: a figure some case lacks is never drawn as zero.
//! Its group gets a "missing" mark with the reason (the probe's, or the
//! case's failure), and because a chart has room for a few words only,
//! the reasons are listed again under the charts, one line per reason.
//! Under them, the same numbers as a table to copy (`numbers`).
//!
//! A section draws [`SECTION_BARS`] bars at most: a preset's section has
//! 40 to 60 places and parameter sets, and a chart of each of its dozen
//! figures would make the page megabytes long and no easier to read. Such
//! a section charts its first headline figures (the ones the seed
//! printed) and names the others once, pointing to `show --wide` and
//! `export --csv`, which have every figure.

use std::fmt::{self, Write as _};

use super::numbers::{self, Charted};
use super::section::Group;
use super::{escape, unique};
use crate::record::catalog::{CHART_COMMON, EXEC_CHART};
use crate::record::{Case, Catalog, Figure, Status};
use crate::report::bars::{Bar, BarChart, Side, Sides};

/// Bars one scenario's section draws at most, over all its charts; past
/// it, only the first figures that fit are charted, but never fewer than
/// [`MIN_CHARTS`]: a seed's first two figures are what a reader came for.
pub(super) const SECTION_BARS: usize = 80;

/// Charts a section draws however many bars each has (when it has that
/// many figures).
const MIN_CHARTS: usize = 2;

/// How many of `figures` charts to draw for `groups` bars each: all when
/// they fit [`SECTION_BARS`], else as many as fit, at least [`MIN_CHARTS`].
fn charts_that_fit(figures: usize, groups: usize) -> usize {
    figures.min((SECTION_BARS / groups.max(1)).max(MIN_CHARTS))
}

/// The figures to chart, with the first measured (or else first) copy of
/// each for its unit and direction: `headline` then [`CHART_COMMON`],
/// each when some case has it.
fn chart_figures<'c>(headline: &[&str], cases: &[(usize, &'c Case)]) -> Vec<(String, &'c Figure)> {
    let mut charted: Vec<(String, &Figure)> = Vec::new();
    for name in headline.iter().chain(CHART_COMMON) {
        if charted.iter().any(|(n, _)| n == name) {
            continue;
        }
        let copies = || cases.iter().filter_map(|(_, c)| c.figures.get(name));
        if let Some(model) = copies().find(|f| f.value.is_some()).or_else(|| copies().next()) {
            charted.push((name.to_string(), model));
        }
    }
    charted
}

/// The bar of `figure` for `group`: its measured repeats, and why the
/// others are missing.
fn bar(group: &Group, figure: &str) -> Bar {
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for case in &group.cases {
        match case.figures.get(figure) {
            Some(Figure { value: Some(v), .. }) => values.push(*v),
            Some(f) => missing.push(f.missing.clone().unwrap_or_else(|| "not measured".to_string())),
            None => missing.push(match (&case.status, &case.error) {
                (Status::Failed, Some(e)) => format!("the case failed: {e}"),
                (Status::Failed, None) => "the case failed".to_string(),
                _ => "not measured".to_string(),
            }),
        }
    }
    Bar {
        fs: group.place.clone(),
        params: group.params.clone(),
        run: group.run.clone(),
        side: group.side,
        colour: group.colour,
        values,
        repeats: group.cases.len(),
        missing: unique(missing),
        emulated: group.cases.iter().any(|c| c.timings_emulated()),
    }
}

/// The bar charts of a scenario's headline (and common) figures, then
/// the reasons of their missing marks in words, then the numbers as a
/// table. `cases` are both sides' (to find the figures); `groups` are the
/// bars' groups in chart order, a base group right before its new one;
/// `sides` names the sides of a comparison; `weighed` are the figures the
/// seed's verdicts weighed, charted first when not every chart fits.
pub(super) fn write_figures(
    out: &mut String,
    catalog: &Catalog,
    name: &str,
    cases: &[(usize, &Case)],
    groups: &[&Group],
    sides: Option<Sides>,
    weighed: &[&str],
) -> fmt::Result {
    writeln!(out, "<h3>Figures</h3>")?;
    let mut charted = chart_figures(catalog.scenario(name).map_or(EXEC_CHART, |s| s.headline), cases);
    if charted.is_empty() {
        return writeln!(out, r#"<p class="note">No figures to chart.</p>"#);
    }
    let fit = charts_that_fit(charted.len(), groups.len());
    if fit < charted.len() {
        // Stable: the weighed figures first, each part in headline order.
        charted.sort_by_key(|(name, _)| !weighed.contains(&name.as_str()));
    }
    let left_out: Vec<String> = charted.split_off(fit).into_iter().map(|(n, _)| n).collect();
    writeln!(out, r#"<div class="grid">"#)?;
    let mut missing = Vec::new();
    let mut numbers = Vec::new();
    for (figure, model) in &charted {
        let about = catalog.about(figure);
        let chart = BarChart {
            scenario: name,
            figure,
            unit: &model.unit,
            better: model.better,
            kind: model.kind,
            about,
            sides,
            bars: groups.iter().map(|g| bar(g, figure)).collect(),
        };
        for (bar, group) in chart.bars.iter().zip(groups) {
            for reason in &bar.missing {
                note_missing(&mut missing, reason, figure, &group.label(), group.side);
            }
        }
        writeln!(out, r#"<div class="card">{}</div>"#, chart.render())?;
        numbers.push(Charted { figure, unit: &model.unit, bars: chart.bars });
    }
    writeln!(out, "</div>")?;
    if !left_out.is_empty() {
        writeln!(
            out,
            r#"<p class="note" data-not-charted="{}">Not charted, for room ({} bars a chart): {}. <code>fslab show RUN --wide</code> and <code>fslab export RUN --csv</code> have them.</p>"#,
            left_out.len(),
            groups.len(),
            escape(&left_out.join(", "))
        )?;
    }
    write_missing(out, &missing)?;
    numbers::write_numbers(out, name, &numbers, sides.as_ref())
}

/// Figures missing for one reason, and on which targets (and sides).
struct Missing {
    reason: String,
    figures: Vec<String>,
    targets: Vec<(String, Vec<Side>)>,
}

/// Add `figure` on `target` (on `side`) to the list of figures missing
/// for `reason`.
fn note_missing(missing: &mut Vec<Missing>, reason: &str, figure: &str, target: &str, side: Option<Side>) {
    let at = match missing.iter().position(|m| m.reason == reason) {
        Some(at) => at,
        None => {
            missing.push(Missing { reason: reason.to_string(), figures: Vec::new(), targets: Vec::new() });
            missing.len() - 1
        }
    };
    let entry = &mut missing[at];
    if !entry.figures.iter().any(|f| f == figure) {
        entry.figures.push(figure.to_string());
    }
    let sides = match entry.targets.iter_mut().find(|(t, _)| t == target) {
        Some((_, sides)) => sides,
        None => {
            entry.targets.push((target.to_string(), Vec::new()));
            &mut entry.targets.last_mut().expect("just pushed").1
        }
    };
    if let Some(side) = side.filter(|s| !sides.contains(s)) {
        sides.push(side);
    }
}

/// A target of a missing line: `btrfs`, or with a comparison the sides
/// it is missing on, `btrfs (base)`, `btrfs (base and new)`.
fn target_and_sides(target: &str, sides: &[Side]) -> String {
    match sides {
        [] => target.to_string(),
        [one] => format!("{target} ({})", one.as_str()),
        _ => format!("{target} (base and new)"),
    }
}

/// The charts' missing marks in words, one line per reason: a chart has
/// room for a few words of it only.
fn write_missing(out: &mut String, missing: &[Missing]) -> fmt::Result {
    if missing.is_empty() {
        return Ok(());
    }
    writeln!(out, r#"<ul class="missing-list">"#)?;
    for m in missing {
        writeln!(
            out,
            "<li><b>{}</b> missing on {}: {}</li>",
            escape(&m.figures.join(", ")),
            escape(&m.targets.iter().map(|(t, sides)| target_and_sides(t, sides)).collect::<Vec<_>>().join(", ")),
            escape(&m.reason)
        )?;
    }
    writeln!(out, "</ul>")
}
