//! One scenario's section of the page: what the scenario is, its
//! parameters, verdicts and failures, then its bar charts (`figures`), its
//! crash states (`crash`), its extent strips (`maps`), each case's timeline and its block requests
//! (`requests`).
//!
//! The design decision: the section's cases are grouped by run, target and
//! the parameters that vary within the scenario. A group is what one bar
//! summarises (its repeats), and captions, strips, failures and timelines
//! are all labelled by it, so the same label names the same cases
//! everywhere in the section; the parameters every case shares are said
//! once, above.
//!
//! With `--compare BASE`, the base's cases are grouped the same way (each
//! side on its own, so a run in both is drawn on both) and the bar charts
//! draw each base group right before the new group of the same place and
//! parameters. Strips, timelines and failures stay the new side's: the
//! page is NEW's report, and the base's pictures are in its own.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::requests::write_requests;
use super::timelines::write_timelines;
use super::{Page, escape, figures, plural, section_id, unique};
use crate::record::{Case, RunRecord, Status};
use crate::report::bars::{Side, Sides};
use crate::report::markup::param_value;

/// The cases of one scenario on one target with one parameter set (in one
/// run): the repeats a bar summarises.
pub(super) struct Group<'a> {
    /// Where the cases ran: the target's label and its conditions
    /// (`xfs@192M`), so a memory limit is a group of its own.
    pub(super) place: String,
    /// The parameters that vary within the scenario, `k=v, ...`.
    pub(super) params: String,
    /// The run's label when the page shows several runs, else empty.
    pub(super) run: String,
    /// The side of a comparison, with `--compare`; `None` without.
    pub(super) side: Option<Side>,
    pub(super) colour: usize,
    pub(super) cases: Vec<&'a Case>,
}

impl Group<'_> {
    /// Target, parameters and run, for captions (the side is the
    /// caller's to say).
    pub(super) fn label(&self) -> String {
        [self.place.as_str(), self.params.as_str(), self.run.as_str()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" · ")
    }
}

/// One scenario's cases on both sides of the page, and their groups.
pub(super) struct ScenarioCases<'a> {
    /// The new side's cases (the page's runs), with their run's index.
    pub(super) cases: Vec<(usize, &'a Case)>,
    /// The base side's, with `--compare`.
    pub(super) base_cases: Vec<(usize, &'a Case)>,
    /// The parameters whose values differ between the cases.
    pub(super) varying: Vec<String>,
    /// `k=v` of those every case shares.
    pub(super) constant: Vec<String>,
    /// The new side's groups.
    pub(super) groups: Vec<Group<'a>>,
    /// The base side's.
    pub(super) base_groups: Vec<Group<'a>>,
}

impl<'a> Page<'a> {
    /// The cases of scenario `name` on each side, grouped (see [`Group`]).
    pub(super) fn scenario_cases(&self, name: &str) -> ScenarioCases<'a> {
        let of = |runs: &'a [RunRecord]| -> Vec<(usize, &'a Case)> {
            runs.iter().enumerate().flat_map(|(i, r)| r.cases.iter().filter(|c| c.scenario == name).map(move |c| (i, c))).collect()
        };
        let base_runs = self.compared.map_or(&[][..], |c| c.base_runs);
        let (cases, base_cases) = (of(self.runs), of(base_runs));
        let (varying, constant) = split_params(cases.iter().chain(&base_cases).map(|(_, c)| *c));
        let side = self.compared.map(|_| Side::New);
        let groups = self.groups(&cases, &varying, self.runs, side);
        let base_groups = self.groups(&base_cases, &varying, base_runs, Some(Side::Base));
        ScenarioCases { cases, base_cases, varying, constant, groups, base_groups }
    }

    /// One scenario's section: what it is, its charts, maps and timelines.
    pub(super) fn write_scenario(&mut self, out: &mut String, name: &str) -> fmt::Result {
        let scenario = self.catalog.scenario(name);
        let ScenarioCases { cases, base_cases, varying, constant, groups, base_groups } = self.scenario_cases(name);
        // The legend, when there is a base side to tell apart.
        let sides = self.compared.filter(|_| !base_cases.is_empty()).map(|c| Sides::compared(c.base_label, c.new_label));

        writeln!(out, r#"<section class="scenario" id="{}" data-scenario="{}">"#, section_id(name), escape(name))?;
        match scenario.and_then(|s| s.seed) {
            Some(seed) => writeln!(out, r#"<h2>{} <span class="seed">seed {}</span></h2>"#, escape(name), escape(seed))?,
            None => writeln!(out, "<h2>{}</h2>", escape(name))?,
        }
        if let Some(s) = scenario {
            writeln!(out, r#"<p class="about">{}</p>"#, escape(s.about))?;
        }
        let commands: Vec<String> = unique(cases.iter().filter_map(|(_, c)| c.command.as_ref()).map(|c| shell_words::join(&c.argv)));
        for command in commands {
            writeln!(out, r#"<p class="params">command: <code>{}</code></p>"#, escape(&command))?;
        }
        if !constant.is_empty() {
            writeln!(out, r#"<p class="params">parameters: {}</p>"#, escape(&constant.join(", ")))?;
        }
        if !varying.is_empty() {
            writeln!(out, r#"<p class="params">varied: {}</p>"#, escape(&varying.join(", ")))?;
        }
        let repeats = groups.iter().map(|g| g.cases.len()).max().unwrap_or(0);
        writeln!(
            out,
            r#"<p class="params">{} on {} · {}</p>"#,
            plural(cases.len(), "case", "cases"),
            escape(&unique(groups.iter().map(|g| g.place.clone())).join(", ")),
            if repeats > 1 { format!("up to {repeats} repeats each") } else { "one repeat each".to_string() }
        )?;
        match (self.compared, &sides) {
            (Some(_), Some(sides)) => writeln!(
                out,
                r#"<p class="params">base {}: {}, drawn pale beside the new side's</p>"#,
                escape(sides.base),
                plural(base_cases.len(), "case", "cases")
            )?,
            (Some(compared), None) => writeln!(out, r#"<p class="params">base {}: no cases of {}</p>"#, escape(compared.base_label), escape(name))?,
            (None, _) => {}
        }
        self.write_verdicts(out, name)?;
        write_failures(out, &groups)?;

        let all_cases: Vec<(usize, &Case)> = cases.iter().chain(&base_cases).copied().collect();
        // The figures the seed's verdicts weighed: charted first when the
        // section has room for a few charts only.
        let weighed: Vec<&str> =
            unique(self.runs.iter().flat_map(|r| &r.verdicts).filter(|v| v.scenario == name).flat_map(|v| &v.places).map(|p| p.figure.as_str()));
        figures::write_figures(out, self.catalog, name, &all_cases, &chart_order(&groups, &base_groups), sides, &weighed)?;
        super::crash::write_crash_states(out, &groups)?;
        self.write_maps(out, &groups)?;
        write_timelines(out, name, &groups)?;
        write_requests(out, name, &groups)?;
        writeln!(out, "</section>")
    }

    /// The cases (of `runs`, one side) grouped by run, target and varying
    /// parameters, in order of first appearance; bars name their run only
    /// when the scenario's cases on the side come from several.
    fn groups<'c>(&self, cases: &[(usize, &'c Case)], varying: &[String], runs: &[RunRecord], side: Option<Side>) -> Vec<Group<'c>> {
        let several_runs = unique(cases.iter().map(|(run, _)| *run)).len() > 1;
        let mut keyed: Vec<((usize, String, String), Group<'c>)> = Vec::new();
        for &(run, case) in cases {
            let params = param_label(case, varying);
            let key = (run, case.place(), params.clone());
            match keyed.iter_mut().find(|(k, _)| *k == key) {
                Some((_, group)) => group.cases.push(case),
                None => {
                    let group = Group {
                        place: case.place(),
                        params,
                        run: if several_runs { run_label(&runs[run]) } else { String::new() },
                        side,
                        colour: self.colour(&case.fs),
                        cases: vec![case],
                    };
                    keyed.push((key, group));
                }
            }
        }
        // A parameter set's groups together, so its bars make one block
        // under one heading; otherwise in order of first appearance.
        let sets = unique(keyed.iter().map(|(_, g)| g.params.clone()));
        keyed.sort_by_key(|(_, g)| sets.iter().position(|p| *p == g.params));
        keyed.into_iter().map(|(_, g)| g).collect()
    }

    /// A target's bar colour: its place among the page's targets, then
    /// among those only the base has.
    fn colour(&self, fs: &str) -> usize {
        if let Some(at) = self.colours.iter().position(|c| *c == fs) {
            return at;
        }
        let base_only = unique(
            self.compared
                .into_iter()
                .flat_map(|c| c.base_runs.iter().flat_map(|r| &r.cases))
                .map(|c| c.fs.as_str())
                .filter(|f| !self.colours.contains(f)),
        );
        self.colours.len() + base_only.iter().position(|f| *f == fs).unwrap_or(0)
    }

    fn write_verdicts(&self, out: &mut String, name: &str) -> fmt::Result {
        for run in self.runs {
            // A hunt's verdict has its steps for places: its last line and
            // the figure against the varied condition come first.
            let hunt = run.command.get(1).is_some_and(|c| c == "hunt");
            for verdict in run.verdicts.iter().filter(|v| v.scenario == name) {
                if let Some(svg) = hunt.then(|| crate::report::hunt::chart(verdict)).flatten() {
                    writeln!(out, r#"<div class="hunt"><p class="hunt-summary"><b>hunt</b> {}</p>"#, super::escape(&verdict.evidence))?;
                    writeln!(out, "{svg}</div>")?;
                }
                super::verdicts::write_verdict(out, verdict)?;
            }
        }
        Ok(())
    }
}

/// The groups in the bar charts' order: the new side's, each preceded by
/// the base groups of its place and parameters; then the base groups no
/// new group matches.
pub(super) fn chart_order<'g, 'c>(new: &'g [Group<'c>], base: &'g [Group<'c>]) -> Vec<&'g Group<'c>> {
    let mut placed = vec![false; base.len()];
    let mut order = Vec::with_capacity(new.len() + base.len());
    for group in new {
        for (b, done) in base.iter().zip(placed.iter_mut()) {
            if !*done && b.place == group.place && b.params == group.params {
                *done = true;
                order.push(b);
            }
        }
        order.push(group);
    }
    order.extend(base.iter().zip(placed).filter(|(_, done)| !done).map(|(b, _)| b));
    order
}

/// The parameter names whose values differ between `cases`, and the
/// `k=v` of those that do not.
fn split_params<'c>(cases: impl Iterator<Item = &'c Case> + Clone) -> (Vec<String>, Vec<String>) {
    // Per key: the distinct values, and how many cases have it.
    let mut values: BTreeMap<&str, (Vec<&serde_json::Value>, usize)> = BTreeMap::new();
    let mut count = 0;
    for case in cases {
        count += 1;
        for (key, value) in &case.params {
            let (seen, cases) = values.entry(key.as_str()).or_default();
            *cases += 1;
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
    }
    let mut varying = Vec::new();
    let mut constant = Vec::new();
    for (key, (seen, cases)) in values {
        // A key some cases lack varies too.
        if seen.len() == 1 && cases == count {
            constant.push(format!("{key}={}", param_value(key, seen[0])));
        } else {
            varying.push(key.to_string());
        }
    }
    (varying, constant)
}

/// `k=v, ...` of `case`'s values of the `varying` parameters.
fn param_label(case: &Case, varying: &[String]) -> String {
    varying
        .iter()
        .map(|key| match case.params.get(key) {
            Some(value) => format!("{key}={}", param_value(key, value)),
            None => format!("{key}=—"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A run's short name: its first tag, else its id.
fn run_label(run: &RunRecord) -> String {
    run.tags.first().or(run.tag.as_ref()).cloned().unwrap_or_else(|| run.id.clone())
}

/// The cases that failed, and why.
fn write_failures(out: &mut String, groups: &[Group]) -> fmt::Result {
    let failed: Vec<(&Group, &Case)> = groups
        .iter()
        .flat_map(|g| g.cases.iter().filter(|c| c.status == Status::Failed).map(move |c| (g, *c)))
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    writeln!(out, r#"<ul class="failures">"#)?;
    for (group, case) in failed {
        writeln!(
            out,
            r#"<li class="failed" data-fs="{}" data-repeat="{}"><b>{} · repeat {} failed</b>: {}</li>"#,
            escape(&group.place),
            case.repeat,
            escape(&group.label()),
            case.repeat,
            escape(case.error.as_deref().unwrap_or("no reason recorded"))
        )?;
    }
    writeln!(out, "</ul>")
}

#[cfg(test)]
mod tests {
    use crate::record::{Better, Case, Catalog, Kind, RunRecord};
    use crate::report::html::{Compared, render};

    /// A run of `exec` cases, one per `(fs, wall_s)`, read from the JSON a
    /// store would hand back.
    fn exec_run(id: &str, walls: &[(&str, f64)]) -> RunRecord {
        let mut run: RunRecord = serde_json::from_value(serde_json::json!({
            "id": id, "tag": id, "tags": [id], "sysctls": [], "cases": [],
            "environment": {"fslab_version": "0", "kernel": "6", "machine": "x86_64", "cpu": null,
                            "cpus": 1, "memory_bytes": null, "tools": {}, "disk": null}
        }))
        .expect("a run record");
        for (fs, wall) in walls {
            let mut case = Case::new("exec", fs, serde_json::Map::new(), 1);
            case.figures.set("wall_s", *wall, "s", Better::Lower, Kind::Timing);
            if *fs == "btrfs" || *fs == "xfs" {
                case.figures.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "no jbd2 here");
            }
            run.cases.push(case);
        }
        run
    }

    fn page(new: &[RunRecord], base: Option<&[RunRecord]>) -> String {
        let compared = base.map(|base_runs| Compared {
            base_label: "tag before",
            base_runs,
            new_label: "tag after",
            summary_html: String::new(),
            table_html: String::new(),
            regressed: Vec::new(),
        });
        let catalog = Catalog { scenarios: Vec::new(), figures: Vec::new() };
        String::from_utf8(render(&catalog, new, "t", compared.as_ref())).expect("UTF-8")
    }

    /// `(class, data-fs, data-side)` of the wall_s chart's bars, in order.
    fn bars(html: &str) -> Vec<(String, String, String)> {
        let chart = html.split(r#"data-figure="wall_s""#).nth(1).expect("a wall_s chart").split("</svg>").next().unwrap();
        let attr = |tag: &str, name: &str| tag.split(&format!(r#" {name}=""#)).nth(1).and_then(|v| v.split('"').next()).unwrap_or("").to_string();
        chart
            .split("<rect class=\"")
            .skip(1)
            .map(|tag| (tag.split('"').next().unwrap().to_string(), attr(tag, "data-fs"), attr(tag, "data-side")))
            .collect()
    }

    #[test]
    fn the_base_is_drawn_right_before_the_new_side_of_each_target() {
        let before = exec_run("before", &[("ext4", 1.0), ("xfs", 2.0), ("btrfs", 5.0)]);
        let after = exec_run("after", &[("ext4", 3.0), ("xfs", 4.0)]);
        let html = page(std::slice::from_ref(&after), Some(std::slice::from_ref(&before)));
        let side = |class: &str, fs: &str, side: &str| (class.to_string(), fs.to_string(), side.to_string());
        assert_eq!(
            bars(&html),
            [
                side("bar base", "ext4", "base"),
                side("bar", "ext4", "new"),
                side("bar base", "xfs", "base"),
                side("bar", "xfs", "new"),
                side("bar base", "btrfs", "base"),
            ],
            "pairs in the new side's order, then the base's other targets"
        );
        assert!(html.contains(">base: tag before</text>") && html.contains(">new: tag after</text>"));
        assert!(html.contains("base tag before: 3 cases, drawn pale beside the new side's"));
        // btrfs, only in the base, takes a colour of its own, not ext4's.
        let btrfs = html.split(r#"data-fs="btrfs""#).nth(1).unwrap();
        assert!(btrfs.split("</rect>").next().unwrap().contains(r##"fill="#009e73""##), "{btrfs}");
        // Missing marks in words: each target once, with its sides.
        assert!(html.contains("<li><b>journal_commits</b> missing on xfs (base and new), btrfs (base): no jbd2 here</li>"), "{html}");
        // The numbers: a row per bar, the sides named.
        let wall = html.split(r#"<tbody data-figure="wall_s""#).nth(1).unwrap().split("</tbody>").next().unwrap();
        assert_eq!(wall.matches("<tr data-fs=").count(), 5);
        assert!(html.contains("5 rows; base = tag before, new = tag after"), "wall_s: journal_commits is measured nowhere");
        assert!(!html.contains(r#"data-figure="journal_commits""#), "and has no chart");
    }

    #[test]
    fn a_run_on_both_sides_is_drawn_on_both_and_no_compare_changes_nothing() {
        let run = exec_run("same", &[("ext4", 1.0), ("xfs", 2.0)]);
        let html = page(std::slice::from_ref(&run), Some(std::slice::from_ref(&run)));
        assert_eq!(bars(&html).len(), 4);
        assert_eq!(html.matches(r#"data-value="1""#).count(), 2, "the same median on both sides");
        let other = exec_run("other", &[]);
        let unmatched = page(std::slice::from_ref(&run), Some(std::slice::from_ref(&other)));
        assert!(unmatched.contains("base tag before: no cases of exec") && !unmatched.contains(r#"<g class="legend">"#));
        assert!(unmatched.contains(r#"data-side="new""#), "the bars still say their side");
        let alone = page(std::slice::from_ref(&run), None);
        let plain = |fs: &str| ("bar".to_string(), fs.to_string(), String::new());
        assert_eq!(bars(&alone), [plain("ext4"), plain("xfs")]);
        assert!(!alone.contains(" data-side=") && !alone.contains(r#"<g class="legend">"#) && !alone.contains("drawn pale"));
    }
}
