//! With `--compare`, the figures the comparison found worse, charted right
//! under the verdict matrix: one chart per scenario and figure, the base's
//! bar (pale) right before the new one, at each place and parameter set
//! where the figure got worse.
//!
//! The design decision: a regression is drawn here whatever its section
//! does with the figure. A section charts the seed's figures and what its
//! room allows; a comparison's answer is the figures that moved for the
//! worse, and a reader must not have to find them (or miss them) among
//! dozens of charts further down. Only the places that regressed are
//! drawn, so a chart is a handful of bar pairs, not a section's forty.

use std::fmt::{self, Write as _};

use super::section::{Group, chart_order};
use super::{Page, escape, figures, plural, section_id, unique};
use crate::compare::{FigureComparison, Outcome};
use crate::report::bars::Sides;

/// A figure the comparison found worse at one place and parameter set.
#[derive(Debug, Clone, PartialEq)]
pub struct Regressed {
    /// The scenario.
    pub scenario: String,
    /// The place: target label and conditions (`xfs@120M`).
    pub place: String,
    /// The case's parameters, all of them.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The figure.
    pub figure: String,
    /// `regression`, or `likely regression` (ranges apart, too few
    /// repeats for the test).
    pub outcome: &'static str,
}

impl Regressed {
    /// The rows of a comparison that got worse: regressions and likely
    /// regressions, in the comparison's order.
    pub fn of(rows: &[FigureComparison]) -> Vec<Regressed> {
        rows.iter()
            .filter(|r| matches!(r.outcome, Outcome::Regression | Outcome::LikelyRegression))
            .map(|r| Regressed {
                scenario: r.scenario.clone(),
                place: r.fs.clone(),
                params: r.params.clone(),
                figure: r.figure.clone(),
                outcome: r.outcome.words(),
            })
            .collect()
    }

    /// Whether `group` holds this row's cases: its place and parameters.
    fn holds(&self, group: &Group) -> bool {
        group.place == self.place && group.cases.first().is_some_and(|c| c.scenario == self.scenario && c.params == self.params)
    }
}

impl Page<'_> {
    /// The `<section class="regressed">` with a chart per regressed
    /// scenario and figure; nothing without a comparison or regressions.
    pub(super) fn write_regressed(&self, out: &mut String) -> fmt::Result {
        let Some(compared) = self.compared.filter(|c| !c.regressed.is_empty()) else { return Ok(()) };
        let charts: Vec<(&str, &str)> = unique(compared.regressed.iter().map(|r| (r.scenario.as_str(), r.figure.as_str())));
        let places = unique(compared.regressed.iter().map(|r| (r.scenario.as_str(), r.place.as_str(), &r.params))).len();
        writeln!(out, r#"<section class="regressed" id="regressed">"#)?;
        writeln!(
            out,
            r#"<h2>Regressed <span class="seed">{} at {}</span></h2>"#,
            plural(charts.len(), "figure", "figures"),
            plural(places, "place", "places")
        )?;
        writeln!(
            out,
            r#"<p class="about">What the comparison found worse, {} (pale) right before {}, at each place where it got worse.</p>"#,
            escape(compared.base_label),
            escape(compared.new_label)
        )?;
        writeln!(out, r#"<div class="grid">"#)?;
        let sides = Some(Sides::compared(compared.base_label, compared.new_label));
        for (scenario, figure) in charts {
            let rows: Vec<&Regressed> = compared.regressed.iter().filter(|r| r.scenario == scenario && r.figure == figure).collect();
            let cases = self.scenario_cases(scenario);
            let drawn: Vec<&Group> =
                chart_order(&cases.groups, &cases.base_groups).into_iter().filter(|g| rows.iter().any(|r| r.holds(g))).collect();
            let model = drawn.iter().flat_map(|g| &g.cases).filter_map(|c| c.figures.get(figure));
            let Some(model) = model.clone().find(|f| f.value.is_some()).or_else(|| model.clone().next()) else { continue };
            let bars = drawn.iter().map(|g| figures::bar(g, figure, figures::mark_of(figure))).collect();
            let chart = figures::chart(self.catalog, scenario, figure, model, bars, sides);
            let said: Vec<String> = rows.iter().map(|r| format!("{} at {}", r.outcome, place_words(r, &drawn))).collect();
            writeln!(
                out,
                r##"<div class="card" data-scenario="{}" data-figure="{}" data-places="{}"><p class="params"><a href="#{}">{}</a>: {}</p>{}</div>"##,
                escape(scenario),
                escape(figure),
                rows.len(),
                section_id(scenario),
                escape(scenario),
                escape(&said.join("; ")),
                chart.render()
            )?;
        }
        writeln!(out, "</div>")?;
        writeln!(out, "</section>")
    }
}

/// A regressed row's place as its bars name it: the place, and the
/// parameters that vary in its section when there are any.
fn place_words(row: &Regressed, drawn: &[&Group]) -> String {
    match drawn.iter().find(|g| row.holds(g)) {
        Some(group) if !group.params.is_empty() => format!("{} ({})", group.place, group.params),
        _ => row.place.clone(),
    }
}
