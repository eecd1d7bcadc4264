//! A scenario's bar charts, a bar per group at the median of its
//! repeats, and the reasons for missing bars in words below; under them,
//! the same numbers as a table to copy (`numbers`).
//!
//! Which figures get a chart, in order:
//!
//! 1. the figures the seed's author printed (`ScenarioInfo::printed`),
//! 2. the figures the seed's verdicts weighed,
//! 3. the rest of the headline, then the common ones ([`CHART_COMMON`]),
//!    while the section's [`SECTION_BARS`] last (never fewer than
//!    [`MIN_CHARTS`] charts); those left out are named once, pointing to
//!    `show --wide` and `export --csv`, which have every figure.
//!
//! The first two are always charted: they are what a reader came for,
//! and a preset's section has 40 to 60 places and parameter sets, so a
//! budget that counted them would leave room for two. Never a chart:
//! a figure measured nowhere (its reason is in the list under the
//! charts), one with the same value on every bar (a constant, or a
//! detector's 0 — said in one line), or a reference that belongs on
//! another figure's bars ([`CHART_MARKS`]: perfection is a tick on each
//! extents bar).
//!
//! The design decision: a figure some case lacks is never drawn as zero.
//! Its group gets a "missing" mark with the reason (the probe's, or the
//! case's failure), and because a chart has room for a few words only,
//! the reasons are listed again under the charts, one line per reason.

use std::fmt::{self, Write as _};

use super::numbers::{self, Charted};
use super::section::Group;
use super::{escape, unique};
use crate::record::catalog::{CHART_COMMON, CHART_MARKS, EXEC_CHART};
use crate::record::{Case, Catalog, Figure, Status};
use crate::report::axis::Display;
use crate::report::bars::{Bar, BarChart, Side, Sides};

/// Bars one scenario's section draws at most over the charts past the
/// seed's own and the deciding ones, which are always drawn.
pub(super) const SECTION_BARS: usize = 80;

/// Charts a section draws however many bars each has (when it has that
/// many figures worth a chart).
const MIN_CHARTS: usize = 2;

/// What becomes of a figure some case has.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    /// A chart of its own.
    Chart,
    /// The same value on every bar that measured it (two bars or more,
    /// or 0 on one): said in a line.
    Same(f64),
    /// No bar measured it: its reasons are listed.
    Unmeasured,
}

/// What `bars` deserve: see [`Fate`].
fn fate(bars: &[Bar]) -> Fate {
    let mut values = bars.iter().flat_map(|b| b.values.iter().copied());
    let Some(first) = values.next() else { return Fate::Unmeasured };
    let measured = bars.iter().filter(|b| !b.values.is_empty()).count();
    if values.all(|v| v == first) && (first == 0.0 || measured > 1) { Fate::Same(first) } else { Fate::Chart }
}

/// One figure a section considers: its name, a measured (or else first)
/// copy for its unit and direction, its bars, and whether it is one of
/// the seed's own or a deciding figure (always charted).
struct Candidate<'c> {
    name: &'c str,
    model: &'c Figure,
    bars: Vec<Bar>,
    must: bool,
}

/// The figures a section sorted: charted, in order; the same on every
/// bar; measured nowhere; left out for room.
struct Choice<'c> {
    charted: Vec<Candidate<'c>>,
    same: Vec<(Candidate<'c>, f64)>,
    unmeasured: Vec<Candidate<'c>>,
    left_out: Vec<&'c str>,
}

/// The figures of a section in the order they are considered (see the
/// module's list), each when some case has it; marks left out.
fn candidates<'c>(catalog: &'c Catalog, name: &str, weighed: &[&'c str], cases: &[(usize, &'c Case)], groups: &[&Group]) -> Vec<Candidate<'c>> {
    let info = catalog.scenario(name);
    let (printed, headline) = info.map_or((&[][..], EXEC_CHART), |s| (s.printed, s.headline));
    let must: Vec<&str> = printed.iter().copied().chain(weighed.iter().copied()).collect();
    let order = unique(must.iter().copied().chain(headline.iter().copied()).chain(CHART_COMMON.iter().copied()));
    order
        .into_iter()
        .filter(|figure| !CHART_MARKS.iter().any(|(mark, _)| mark == figure))
        .filter_map(|figure| {
            let copies = || cases.iter().filter_map(|(_, c)| c.figures.get(figure));
            let model = copies().find(|f| f.value.is_some()).or_else(|| copies().next())?;
            let bars = groups.iter().map(|g| bar(g, figure, mark_of(figure))).collect();
            Some(Candidate { name: figure, model, bars, must: must.contains(&figure) })
        })
        .collect()
}

/// The figure whose median `figure`'s bars carry as a tick (perfection
/// on extents), if any.
pub(super) fn mark_of(figure: &str) -> Option<&'static str> {
    CHART_MARKS.iter().find(|(_, on)| *on == figure).map(|(mark, _)| *mark)
}

/// Sort `candidates` by their fate and the section's room.
fn choose(candidates: Vec<Candidate>) -> Choice {
    let mut choice = Choice { charted: Vec::new(), same: Vec::new(), unmeasured: Vec::new(), left_out: Vec::new() };
    let mut bars = 0;
    for candidate in candidates {
        match fate(&candidate.bars) {
            Fate::Unmeasured => choice.unmeasured.push(candidate),
            Fate::Same(value) => choice.same.push((candidate, value)),
            Fate::Chart if candidate.must => choice.charted.push(candidate),
            Fate::Chart if choice.charted.len() < MIN_CHARTS || bars + candidate.bars.len() <= SECTION_BARS => {
                bars += candidate.bars.len();
                choice.charted.push(candidate);
            }
            Fate::Chart => choice.left_out.push(candidate.name),
        }
    }
    choice
}

/// The bar of `figure` for `group`: its measured repeats, and why the
/// others are missing; with `mark`, that figure's median as its tick.
pub(super) fn bar(group: &Group, figure: &str, mark: Option<&str>) -> Bar {
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
    let marks: Vec<f64> = mark.map_or_else(Vec::new, |m| group.cases.iter().filter_map(|c| c.figures.value(m)).collect());
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
        mark: crate::report::bars::spread(&marks).map(|s| s.median),
    }
}

/// The chart of `figure` (its copy `model` giving unit and direction)
/// over `bars`, with its mark's name when its bars carry one.
pub(super) fn chart<'a>(catalog: &'a Catalog, scenario: &'a str, figure: &'a str, model: &'a Figure, bars: Vec<Bar>, sides: Option<Sides<'a>>) -> BarChart<'a> {
    BarChart {
        scenario,
        figure,
        unit: &model.unit,
        better: model.better,
        kind: model.kind,
        about: catalog.about(figure),
        sides,
        bars,
        mark: mark_of(figure),
    }
}

/// The bar charts of a scenario (see the module's list of which), then
/// the figures left without one, the reasons of the missing marks, and
/// the numbers as a table. `cases` are both sides' (to find the
/// figures); `groups` are the bars' groups in chart order, a base group
/// right before its new one; `sides` names the sides of a comparison;
/// `weighed` are the figures the seed's verdicts weighed.
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
    let candidates = candidates(catalog, name, weighed, cases, groups);
    if candidates.is_empty() {
        return writeln!(out, r#"<p class="note">No figures to chart.</p>"#);
    }
    // Every missing mark's reason, charted or not, in the figures' order.
    let mut missing = Vec::new();
    for candidate in &candidates {
        for (bar, group) in candidate.bars.iter().zip(groups) {
            for reason in &bar.missing {
                note_missing(&mut missing, reason, candidate.name, &group.label(), group.side);
            }
        }
    }
    let choice = choose(candidates);
    let mut numbers = Vec::new();
    if !choice.charted.is_empty() {
        writeln!(out, r#"<div class="grid">"#)?;
    }
    for candidate in &choice.charted {
        let chart = chart(catalog, name, candidate.name, candidate.model, candidate.bars.clone(), sides);
        writeln!(out, r#"<div class="card">{}</div>"#, chart.render())?;
        let mark = chart.mark.filter(|_| chart.bars.iter().any(|b| b.mark.is_some()));
        numbers.push(Charted { figure: candidate.name, unit: &candidate.model.unit, bars: chart.bars });
        if let Some(mark) = mark {
            // The ticks' numbers, to copy beside the bars'.
            let unit = cases.iter().find_map(|(_, c)| c.figures.get(mark)).map_or("count", |f| &f.unit);
            numbers.push(Charted { figure: mark, unit, bars: groups.iter().map(|g| bar(g, mark, None)).collect() });
        }
    }
    if !choice.charted.is_empty() {
        writeln!(out, "</div>")?;
    }
    if !choice.same.is_empty() {
        let said: Vec<String> = choice
            .same
            .iter()
            .map(|(c, value)| format!("{} {}", c.name, Display::for_unit(&c.model.unit, value.abs()).format(*value)))
            .collect();
        let names: Vec<&str> = choice.same.iter().map(|(c, _)| c.name).collect();
        writeln!(
            out,
            r#"<p class="note" data-same="{}">The same on every bar, so not charted: {}.</p>"#,
            escape(&names.join(" ")),
            escape(&said.join("; "))
        )?;
    }
    if !choice.left_out.is_empty() {
        writeln!(
            out,
            r#"<p class="note" data-not-charted="{}">Not charted, for room ({} bars a chart): {}. <code>fslab show RUN --wide</code> and <code>fslab export RUN --csv</code> have them.</p>"#,
            choice.left_out.len(),
            groups.len(),
            escape(&choice.left_out.join(", "))
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
