//! One scenario's section of the page: what the scenario is, its
//! parameters, verdicts and failures, then its bar charts (`figures`), its
//! extent strips (`maps`) and each case's timeline.
//!
//! The design decision: the section's cases are grouped by run, target and
//! the parameters that vary within the scenario. A group is what one bar
//! summarises (its repeats), and captions, strips, failures and timelines
//! are all labelled by it, so the same label names the same cases
//! everywhere in the section; the parameters every case shares are said
//! once, above.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::timelines::write_timelines;
use super::{Page, escape, figures, plural, section_id, unique};
use crate::record::{Case, RunRecord, Status};
use crate::units::bytes_or_count;

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
    pub(super) colour: usize,
    pub(super) cases: Vec<&'a Case>,
}

impl Group<'_> {
    /// Target, parameters and run, for captions.
    pub(super) fn label(&self) -> String {
        [self.place.as_str(), self.params.as_str(), self.run.as_str()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" · ")
    }
}

impl Page<'_> {
    /// One scenario's section: what it is, its charts, maps and timelines.
    pub(super) fn write_scenario(&mut self, out: &mut String, name: &str) -> fmt::Result {
        let scenario = self.catalog.scenario(name);
        let cases: Vec<(usize, &Case)> = self
            .runs
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.cases.iter().filter(|c| c.scenario == name).map(move |c| (i, c)))
            .collect();
        let (varying, constant) = split_params(cases.iter().map(|(_, c)| *c));
        let groups = self.groups(&cases, &varying);

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
        self.write_verdicts(out, name)?;
        write_failures(out, &groups)?;

        figures::write_figures(out, self.catalog, name, &cases, &groups)?;
        self.write_maps(out, &groups)?;
        write_timelines(out, name, &groups)?;
        writeln!(out, "</section>")
    }

    /// The cases grouped by run, target and varying parameters, in order
    /// of first appearance; bars name their run only when the scenario's
    /// cases come from several.
    fn groups<'c>(&self, cases: &[(usize, &'c Case)], varying: &[String]) -> Vec<Group<'c>> {
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
                        run: if several_runs { run_label(&self.runs[run]) } else { String::new() },
                        colour: self.colours.iter().position(|c| *c == case.fs).unwrap_or(0),
                        cases: vec![case],
                    };
                    keyed.push((key, group));
                }
            }
        }
        keyed.into_iter().map(|(_, g)| g).collect()
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

/// A parameter value as people write it: sizes in binary units.
fn param_value(key: &str, value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.as_u64().map_or_else(|| n.to_string(), bytes_or_count(key)),
        other => other.to_string(),
    }
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
