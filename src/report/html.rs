//! `fslab report`'s page: one or more runs as a single self-contained HTML5
//! file. A header says what the runs ran on; then, per scenario (in the
//! [`Catalog`]'s order, then `exec`), a bar chart per headline figure, the
//! extent maps the cases kept, and each case's timeline; last, the
//! comparison table when one is given.
//!
//! The one design decision: every chart carries its numbers in `data-`
//! attributes (a bar its median, min, max and repeats; a strip its path
//! and extent count; a timeline its point count), so the page is tested
//! as data, in a real browser, rather than by looking at pixels. It needs
//! nothing from outside: CSS inline, pictures as inline SVG, no script, no
//! font file, no image, no link off the page.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::bars::{Bar, BarChart};
use super::markup::{escape_xml as escape, shorten};
use super::strip::StripBuilder;
use super::timeline::{DropMark, TimelineChart};
use crate::record::extent::continues_filefrag;
use crate::record::catalog::{CHART_COMMON, EXEC_CHART};
use crate::record::{Case, Catalog, Figure, KeptMap, RunRecord, Status};
use crate::units::{bytes, bytes_or_count};

/// Extent-map strips drawn on one page at most: each is bounded (about
/// 100 KB at worst), and so must their number be.
const MAX_STRIPS: usize = 48;

/// The page for `runs`, titled `title`, with `compare_html` (an HTML
/// fragment made elsewhere, embedded as it is) in a section of its own;
/// `catalog` orders the scenarios and describes them and their figures.
/// UTF-8 bytes of a complete HTML5 document.
pub fn render(catalog: &Catalog, runs: &[RunRecord], title: &str, compare_html: Option<&str>) -> Vec<u8> {
    let mut page = String::with_capacity(256 * 1024);
    Page::new(catalog, runs).write(&mut page, title, compare_html).expect("fmt::Write for String never fails");
    page.into_bytes()
}

/// The cases of one scenario on one target with one parameter set (in one
/// run): the repeats a bar summarises.
struct Group<'a> {
    fs: &'a str,
    /// The parameters that vary within the scenario, `k=v, ...`.
    params: String,
    /// The run's label when the page shows several runs, else empty.
    run: String,
    colour: usize,
    cases: Vec<&'a Case>,
}

impl Group<'_> {
    /// Target, parameters and run, for captions.
    fn label(&self) -> String {
        [self.fs, self.params.as_str(), self.run.as_str()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" · ")
    }
}

/// The page being written: the runs and what is shared across sections.
struct Page<'a> {
    catalog: &'a Catalog,
    runs: &'a [RunRecord],
    /// Target labels in order of first appearance: their bar colour.
    colours: Vec<&'a str>,
    /// Strips still allowed on the page.
    strips_left: usize,
}

impl<'a> Page<'a> {
    fn new(catalog: &'a Catalog, runs: &'a [RunRecord]) -> Page<'a> {
        let mut colours: Vec<&str> = Vec::new();
        for case in runs.iter().flat_map(|r| &r.cases) {
            if !colours.contains(&case.fs.as_str()) {
                colours.push(&case.fs);
            }
        }
        Page { catalog, runs, colours, strips_left: MAX_STRIPS }
    }

    fn write(mut self, out: &mut String, title: &str, compare_html: Option<&str>) -> fmt::Result {
        let scenarios = scenario_order(self.catalog, self.runs);
        writeln!(out, "<!DOCTYPE html>")?;
        writeln!(out, r#"<html lang="en">"#)?;
        writeln!(out, "<head>")?;
        writeln!(out, r#"<meta charset="utf-8">"#)?;
        writeln!(out, r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#)?;
        writeln!(out, r#"<meta name="generator" content="fslab {}">"#, env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "<title>{}</title>", escape(title))?;
        writeln!(out, "<style>{STYLE}</style>")?;
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
        write_nav(out, &scenarios, compare_html.is_some())?;
        writeln!(out, "</header>")?;
        writeln!(out, "<main>")?;
        if self.runs.is_empty() {
            writeln!(out, r#"<p class="note">No runs to show.</p>"#)?;
        } else {
            write_runs(out, self.runs)?;
        }
        for scenario in &scenarios {
            self.write_scenario(out, scenario)?;
        }
        if let Some(fragment) = compare_html {
            writeln!(out, r#"<section class="compare" id="compare"><h2>Comparison</h2>"#)?;
            writeln!(out, "{fragment}")?;
            writeln!(out, "</section>")?;
        }
        writeln!(out, "</main>")?;
        writeln!(out, "</body>")?;
        writeln!(out, "</html>")
    }

    /// One scenario's section: what it is, its charts, maps and timelines.
    fn write_scenario(&mut self, out: &mut String, name: &str) -> fmt::Result {
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
            escape(&unique(groups.iter().map(|g| g.fs.to_string())).join(", ")),
            if repeats > 1 { format!("up to {repeats} repeats each") } else { "one repeat each".to_string() }
        )?;
        self.write_verdicts(out, name)?;
        write_failures(out, &groups)?;

        write_figures(out, self.catalog, name, &cases, &groups)?;
        self.write_maps(out, &groups)?;
        write_timelines(out, name, &groups)?;
        writeln!(out, "</section>")
    }

    /// The cases grouped by run, target and varying parameters, in order
    /// of first appearance; bars name their run only when the scenario's
    /// cases come from several.
    fn groups<'c>(&self, cases: &[(usize, &'c Case)], varying: &[String]) -> Vec<Group<'c>> {
        let several_runs = unique(cases.iter().map(|(run, _)| *run)).len() > 1;
        let mut keyed: Vec<((usize, &str, String), Group<'c>)> = Vec::new();
        for &(run, case) in cases {
            let params = param_label(case, varying);
            let key = (run, case.fs.as_str(), params.clone());
            match keyed.iter_mut().find(|(k, _)| *k == key) {
                Some((_, group)) => group.cases.push(case),
                None => {
                    let group = Group {
                        fs: &case.fs,
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
            for verdict in run.verdicts.iter().filter(|v| v.scenario == name) {
                let class = match verdict.shows {
                    Some(true) => "shows",
                    Some(false) => "gone",
                    None => "unknown",
                };
                writeln!(
                    out,
                    r#"<p class="verdict {class}" data-verdict="{class}"><b>seed {}: {}</b> — {}</p>"#,
                    escape(&verdict.seed),
                    escape(verdict.word()),
                    escape(&verdict.evidence)
                )?;
            }
        }
        Ok(())
    }

    /// The kept extent maps: every map of each group's first repeat that
    /// kept any (other repeats listed by path and extent count), while
    /// the page's strip budget lasts.
    fn write_maps(&mut self, out: &mut String, groups: &[Group]) -> fmt::Result {
        writeln!(out, "<h3>Extent maps</h3>")?;
        if groups.iter().all(|g| g.cases.iter().all(|c| c.maps.is_empty())) {
            writeln!(
                out,
                r#"<p class="note">No case left a file in more than one extent, so no map was kept.</p>"#
            )?;
            return Ok(());
        }
        writeln!(
            out,
            r#"<p class="note">The most fragmented files each case left. File offset runs left to right; colour is the place on the device; marks above the strip are jumps between extents.</p>"#
        )?;
        for group in groups {
            let Some(first) = group.cases.iter().position(|c| !c.maps.is_empty()) else { continue };
            for map in &group.cases[first].maps {
                if self.strips_left == 0 {
                    write_map_row(out, group, group.cases[first], map, "not drawn: the page's strip budget is spent")?;
                    continue;
                }
                self.strips_left -= 1;
                write_strip(out, group, group.cases[first], map)?;
            }
            let others: Vec<(&Case, &KeptMap)> =
                group.cases[first + 1..].iter().flat_map(|c| c.maps.iter().map(move |m| (*c, m))).collect();
            if !others.is_empty() {
                writeln!(out, r#"<ul class="maps-not-drawn">"#)?;
                for (case, map) in others {
                    write_map_row(out, group, case, map, "")?;
                }
                writeln!(out, "</ul>")?;
            }
        }
        Ok(())
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

/// The anchor of a scenario's section.
fn section_id(name: &str) -> String {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("scenario-{safe}")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
        fs: group.fs.to_string(),
        params: group.params.clone(),
        run: group.run.clone(),
        colour: group.colour,
        values,
        repeats: group.cases.len(),
        missing: unique(missing),
    }
}

/// The bar charts of a scenario's headline (and common) figures, then
/// the reasons of their missing marks in words.
fn write_figures(out: &mut String, catalog: &Catalog, name: &str, cases: &[(usize, &Case)], groups: &[Group]) -> fmt::Result {
    writeln!(out, "<h3>Figures</h3>")?;
    let charted = chart_figures(catalog.scenario(name).map_or(EXEC_CHART, |s| s.headline), cases);
    if charted.is_empty() {
        return writeln!(out, r#"<p class="note">No figures to chart.</p>"#);
    }
    writeln!(out, r#"<div class="grid">"#)?;
    let mut missing = Vec::new();
    for (figure, model) in &charted {
        let about = catalog.about(figure);
        let chart = BarChart {
            scenario: name,
            figure,
            unit: &model.unit,
            better: model.better,
            kind: model.kind,
            about,
            bars: groups.iter().map(|g| bar(g, figure)).collect(),
        };
        for (bar, group) in chart.bars.iter().zip(groups) {
            for reason in &bar.missing {
                note_missing(&mut missing, reason, figure, &group.label());
            }
        }
        writeln!(out, r#"<div class="card">{}</div>"#, chart.render())?;
    }
    writeln!(out, "</div>")?;
    write_missing(out, &missing)
}

/// Figures missing for one reason, and on which targets.
struct Missing {
    reason: String,
    figures: Vec<String>,
    targets: Vec<String>,
}

/// Add `figure` on `target` to the list of figures missing for `reason`.
fn note_missing(missing: &mut Vec<Missing>, reason: &str, figure: &str, target: &str) {
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
    if !entry.targets.iter().any(|t| t == target) {
        entry.targets.push(target.to_string());
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
            escape(&m.targets.join(", ")),
            escape(&m.reason)
        )?;
    }
    writeln!(out, "</ul>")
}

/// Links to the sections.
fn write_nav(out: &mut String, scenarios: &[String], compare: bool) -> fmt::Result {
    write!(out, r##"<nav><a href="#runs">runs</a>"##)?;
    for name in scenarios {
        write!(out, r##"<a href="#{}">{}</a>"##, section_id(name), escape(name))?;
    }
    if compare {
        write!(out, r##"<a href="#compare">comparison</a>"##)?;
    }
    writeln!(out, "</nav>")
}

/// The runs, one row each, then what they ran on: once when they share
/// a machine and software, else per run.
fn write_runs(out: &mut String, runs: &[RunRecord]) -> fmt::Result {
    writeln!(out, r#"<section class="runs" id="runs">"#)?;
    writeln!(out, "<h2>{}</h2>", if runs.len() == 1 { "Run" } else { "Runs" })?;
    writeln!(out, r#"<table class="runs"><thead><tr><th>run</th><th>started</th><th>tags</th><th>status</th><th>command line</th></tr></thead><tbody>"#)?;
    for run in runs {
        let (badge, word) = if run.complete { ("ok", "complete") } else { ("bad", "incomplete") };
        let tip = if run.complete { "every planned case ran" } else { "interrupted or killed: only its finished cases are shown" };
        writeln!(
            out,
            r#"<tr class="run" data-run="{id}" data-complete="{complete}"><td><code>{id}</code></td><td>{started}</td><td>{tags}</td><td><span class="badge {badge}" title="{tip}">{word}</span></td><td><code>{command}</code></td></tr>"#,
            id = escape(&run.id),
            complete = run.complete,
            started = escape(&run.started_at),
            tags = escape(&run.tags.join(", ")),
            command = escape(&shell_words::join(&run.command)),
        )?;
    }
    writeln!(out, "</tbody></table>")?;
    let shared = runs.windows(2).all(|w| same_environment(&w[0], &w[1]));
    if shared {
        writeln!(out, r#"<h3>Machine</h3>"#)?;
        write_environment(out, &runs[0])?;
    } else {
        for run in runs {
            writeln!(out, r#"<h3>Machine of run <code>{}</code></h3>"#, escape(&run.id))?;
            write_environment(out, run)?;
        }
    }
    writeln!(out, "</section>")
}

/// Whether two runs ran on the same machine and software, sysctls
/// included.
fn same_environment(a: &RunRecord, b: &RunRecord) -> bool {
    let environment = |r: &RunRecord| serde_json::to_value(&r.environment).ok();
    environment(a) == environment(b) && a.sysctls == b.sysctls
}

/// What one run ran on: kernel, CPU, memory, disk, tool versions, sysctls.
fn write_environment(out: &mut String, run: &RunRecord) -> fmt::Result {
    let env = &run.environment;
    writeln!(out, r#"<dl class="env">"#)?;
    let mut row = |key: &str, value: &str| writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(key), escape(value));
    row("kernel", &format!("Linux {} ({})", env.kernel, env.machine))?;
    let cpu = env.cpu.as_deref().unwrap_or("unknown model");
    row("CPU", &format!("{cpu} · {}", plural(env.cpus, "CPU online", "CPUs online")))?;
    row("memory", &env.memory_bytes.map_or_else(|| "unknown".to_string(), bytes))?;
    if let Some(disk) = &env.disk {
        let mut text = disk.name.clone();
        if let Some(model) = &disk.model {
            let _ = write!(text, " ({model})");
        }
        match disk.rotational {
            Some(true) => text.push_str(" · rotational"),
            Some(false) => text.push_str(" · non-rotational"),
            None => {}
        }
        if let Some(scheduler) = &disk.scheduler {
            let _ = write!(text, " · scheduler {scheduler}");
        }
        row("disk under scratch", &text)?;
    }
    let tools: Vec<String> =
        env.tools.values().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect();
    if !tools.is_empty() {
        row("fs tools", &tools.join(" · "))?;
    }
    row("fslab", &env.fslab_version)?;
    let sysctls: Vec<String> = run.sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect();
    row("sysctls", &if sysctls.is_empty() { "none set: the machine's own".to_string() } else { sysctls.join(", ") })?;
    writeln!(out, "</dl>")
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
            escape(group.fs),
            case.repeat,
            escape(&group.label()),
            case.repeat,
            escape(case.error.as_deref().unwrap_or("no reason recorded"))
        )?;
    }
    writeln!(out, "</ul>")
}

/// One kept map as an extent strip, inlined, with its numbers on the
/// wrapping `<figure>`.
fn write_strip(out: &mut String, group: &Group, case: &Case, map: &KeptMap) -> fmt::Result {
    let mut title = format!("{} — {}, {}", map.path, group.label(), plural(map.extents as usize, "extent", "extents"));
    if map.truncated {
        let _ = write!(title, " (first {} records kept)", map.extent_list.len());
    }
    let mut strip = StripBuilder::new(map.size, map.device_bytes, title);
    let mut previous = None;
    for extent in &map.extent_list {
        // The first record always starts an extent; the builder knows.
        let starts = previous.is_none() || !continues_filefrag(previous, extent);
        strip.add(extent, starts);
        previous = Some(extent);
    }
    writeln!(
        out,
        r#"<figure class="strip" data-scenario="{}" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}" data-records="{}" data-truncated="{}">"#,
        escape(&case.scenario),
        escape(&case.fs),
        case.repeat,
        escape(&map.path),
        map.extents,
        map.extent_list.len(),
        map.truncated
    )?;
    writeln!(
        out,
        "<figcaption><b>{}</b> · repeat {} · <code>{}</code> · {} · {}</figcaption>",
        escape(&group.label()),
        case.repeat,
        escape(&shorten(&map.path, 120)),
        escape(&bytes(map.size)),
        escape(&plural(map.extents as usize, "extent", "extents")),
    )?;
    writeln!(out, "{}", inline_svg(&strip.finish()))?;
    writeln!(out, "</figure>")
}

/// A kept map listed, not drawn.
fn write_map_row(out: &mut String, group: &Group, case: &Case, map: &KeptMap, why: &str) -> fmt::Result {
    let why = if why.is_empty() { String::new() } else { format!(" — {why}") };
    writeln!(
        out,
        r#"<li class="map" data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}">{} · repeat {} · <code>{}</code> · {}{}</li>"#,
        escape(&case.fs),
        case.repeat,
        escape(&map.path),
        map.extents,
        escape(&group.label()),
        case.repeat,
        escape(&shorten(&map.path, 120)),
        escape(&plural(map.extents as usize, "extent", "extents")),
        escape(&why)
    )
}

/// A standalone SVG document made fit to sit in HTML: no XML prolog or
/// doctype, and no namespace declarations (the HTML parser puts `<svg>`
/// in the SVG namespace itself, and the page must name no URL).
fn inline_svg(document: &[u8]) -> String {
    let text = String::from_utf8_lossy(document);
    let mut rest: &str = &text;
    while let Some(start) = rest.find('<') {
        let tail = &rest[start..];
        if tail.starts_with("<?") || tail.starts_with("<!") {
            rest = tail.find('>').map_or("", |end| &tail[end + 1..]);
        } else {
            rest = tail;
            break;
        }
    }
    let Some(tag_end) = rest.find('>') else { return String::new() };
    let (open, body) = rest.split_at(tag_end);
    let mut kept = String::with_capacity(open.len());
    let mut attrs = open;
    // Drop every ` xmlns="..."` and ` xmlns:x="..."` of the root tag.
    while let Some(at) = attrs.find(" xmlns") {
        kept.push_str(&attrs[..at]);
        let after = &attrs[at + 1..];
        let skip = after.find('"').and_then(|q| after[q + 1..].find('"').map(|e| q + e + 2)).unwrap_or(after.len());
        attrs = &after[skip..];
    }
    kept.push_str(attrs);
    format!("{kept}{}", body.trim_end())
}

/// Each case's timeline with at least two points.
fn write_timelines(out: &mut String, scenario: &str, groups: &[Group]) -> fmt::Result {
    writeln!(out, "<h3>Timelines</h3>")?;
    let drawn: Vec<(&Group, &Case)> =
        groups.iter().flat_map(|g| g.cases.iter().filter(|c| c.timeline.len() >= 2).map(move |c| (g, *c))).collect();
    if drawn.is_empty() {
        writeln!(
            out,
            r#"<p class="note">No case has two timeline samples or more (the work was shorter than the sampling interval): nothing to draw.</p>"#
        )?;
        return Ok(());
    }
    let skipped = groups.iter().map(|g| g.cases.len()).sum::<usize>() - drawn.len();
    if skipped > 0 {
        writeln!(out, r#"<p class="note">{} with fewer than two samples not drawn.</p>"#, plural(skipped, "case", "cases"))?;
    }
    for (group, case) in drawn {
        let label = format!("{} · repeat {}", group.label(), case.repeat);
        let chart = TimelineChart {
            scenario,
            fs: &case.fs,
            repeat: case.repeat,
            label: &label,
            points: &case.timeline,
            drop: DropMark::from_figures(&case.figures),
        };
        writeln!(out, r#"<div class="card timeline">{}</div>"#, chart.render())?;
    }
    Ok(())
}

/// The page's whole style sheet: system fonts only, nothing loaded.
const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: #1b1f24;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px;
  background: #eef0f3; padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }
header.page { background: #1f2a37; color: #f5f7fa; padding: 18px 32px 12px; }
header.page h1 { margin: 0; font-size: 24px; font-weight: 650; }
header.page .sub { margin: 4px 0 10px; color: #b8c2cf; }
nav a { color: #cfe3ff; margin-right: 16px; text-decoration: none; font-size: 13px; }
nav a:hover { text-decoration: underline; }
main { max-width: 1320px; margin: 0 auto; padding: 8px 32px 48px; }
section { background: #ffffff; border: 1px solid #dde1e6; border-radius: 8px; padding: 14px 20px 18px; margin: 18px 0; }
h2 { font-size: 19px; margin: 2px 0 6px; }
h2 .seed { font-size: 13px; font-weight: 500; color: #5b6470; margin-left: 6px; }
h3 { font-size: 15px; margin: 18px 0 8px; color: #2c3440; border-bottom: 1px solid #eceef1; padding-bottom: 4px; }
p { margin: 4px 0; }
.about { font-size: 15px; }
.params, .note { color: #4a525d; font-size: 13px; }
.note { font-style: italic; }
dl.env { display: grid; grid-template-columns: max-content 1fr; gap: 3px 18px; margin: 8px 0; font-size: 13px; }
dl.env dt { color: #5b6470; }
dl.env dd { margin: 0; }
.badge { font-size: 12px; font-weight: 600; padding: 2px 8px; border-radius: 10px; vertical-align: middle; margin-left: 6px; }
.badge.ok { background: #e1f3e6; color: #1d6b35; }
.badge.bad { background: #fde8e4; color: #a8321d; }
.verdict { padding: 6px 10px; border-radius: 6px; margin: 8px 0; font-size: 13px; }
.verdict.shows { background: #e8f1fb; }
.verdict.gone { background: #eef0f3; }
.verdict.unknown { background: #fff6df; }
ul.failures { color: #a8321d; font-size: 13px; }
ul.missing-list { color: #4a525d; font-size: 13px; margin: 10px 0 0; padding-left: 20px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 12px; }
.card { border: 1px solid #e4e7eb; border-radius: 6px; padding: 6px 8px; background: #ffffff; }
.card.timeline { margin: 10px 0; }
svg.chart { display: block; width: 100%; height: auto; font-family: inherit; }
figure.strip { margin: 10px 0 16px; }
figure.strip figcaption { font-size: 13px; margin-bottom: 4px; }
figure.strip svg { display: block; width: 100%; height: auto; border: 1px solid #e4e7eb; border-radius: 6px; }
ul.maps-not-drawn { font-size: 13px; color: #4a525d; margin: 0 0 12px; }
table.runs { border-collapse: collapse; font-size: 13px; width: 100%; }
table.runs th { text-align: left; color: #5b6470; font-weight: 600; padding: 4px 12px 4px 0; border-bottom: 1px solid #e4e7eb; }
table.runs td { padding: 5px 12px 5px 0; vertical-align: top; border-bottom: 1px solid #f0f1f3; }
table.runs td:nth-child(-n+4) { white-space: nowrap; }
section.compare table { border-collapse: collapse; font-size: 13px; }
section.compare th, section.compare td { border-bottom: 1px solid #e4e7eb; padding: 4px 10px; text-align: left; vertical-align: top; }
section.compare caption { text-align: left; font-weight: 600; padding: 2px 0 8px; }
section.compare tr.regression td { background: #fde8e4; }
section.compare tr.improvement td { background: #e1f3e6; }
section.compare tr.changed td { background: #fff6df; }
section.compare tr.too_few_repeats td, section.compare tr.only td { color: #5b6470; }
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Environment, Extent, FigureSpec, Kind, ScenarioInfo, TimelinePoint};

    fn environment() -> Environment {
        serde_json::from_value(serde_json::json!({
            "fslab_version": "0.1.0", "kernel": "6.18.0", "machine": "x86_64", "cpu": "Test CPU", "cpus": 2,
            "memory_bytes": 1u64 << 34, "tools": {"mke2fs": "mke2fs 1.47.0"}, "disk": null
        }))
        .expect("environment")
    }

    fn run(cases: Vec<Case>) -> RunRecord {
        RunRecord {
            id: "20260101T000000Z-1-00000000".to_string(),
            tag: Some("base".to_string()),
            tags: vec!["base".to_string()],
            started_at: "2026-01-01T00:00:00Z".to_string(),
            command: vec!["fslab".into(), "run".into()],
            complete: true,
            environment: environment(),
            sysctls: Vec::new(),
            cases,
            verdicts: Vec::new(),
        }
    }

    fn case(scenario: &str, fs: &str, repeat: u32, wall_s: f64) -> Case {
        let mut params = serde_json::Map::new();
        params.insert("size".into(), serde_json::json!(16u64 << 20));
        let mut c = Case::new(scenario, fs, params, repeat);
        c.figures.set("wall_s", wall_s, "s", Better::Lower, Kind::Timing);
        c.figures.set("extents", 1.0, "count", Better::Lower, Kind::Exact);
        c
    }

    /// A catalog of three scenarios, written out here so the page's tests
    /// do not depend on the scenario registry the report must not read.
    fn catalog() -> Catalog {
        let info = |name, seed, headline| ScenarioInfo {
            name,
            seed: Some(seed),
            about: "what it shows",
            params: vec!["size"],
            headline,
            figures: &[],
        };
        Catalog {
            scenarios: vec![
                info("mmap-fill", "000", &["touch_s", "msync_s"]),
                info("replace-files", "002", &["wall_s", "user_s", "sys_s", "journal_commits", "flushes"]),
                info("direct-stream", "004", &["stream_mbps", "sys_s", "drop_detected"]),
            ],
            figures: vec![FigureSpec::new("touch_s", "s", Better::Lower, Kind::Timing).about("seconds of the stores")],
        }
    }

    fn page(runs: &[RunRecord], compare: Option<&str>) -> String {
        String::from_utf8(render(&catalog(), runs, "fslab report", compare)).expect("UTF-8")
    }

    /// Values of attribute `name` on elements whose tag has `marker`.
    fn attrs<'a>(html: &'a str, marker: &str, name: &str) -> Vec<&'a str> {
        html.split('<')
            .filter(|tag| tag.contains(marker))
            .filter_map(|tag| tag.split(&format!(r#" {name}=""#)).nth(1)?.split('"').next())
            .collect()
    }

    /// The `<svg class="chart bars" ...>` element of `figure`, up to its end.
    fn chart<'a>(html: &'a str, scenario: &str, figure: &str) -> &'a str {
        let start = html
            .find(&format!(r#"class="chart bars" data-scenario="{scenario}" data-figure="{figure}""#))
            .unwrap_or_else(|| panic!("no chart of {figure}"));
        let end = html[start..].find("</svg>").expect("chart ends") + start;
        &html[start..end]
    }

    /// Tags nest and close: `<svg>`, and the page's own block elements.
    fn assert_balanced(html: &str) {
        for tag in ["svg", "section", "figure", "div", "g", "ul", "dl", "p", "text", "title", "main", "header", "nav"] {
            let opened = html.matches(&format!("<{tag} ")).count() + html.matches(&format!("<{tag}>")).count();
            let closed = html.matches(&format!("</{tag}>")).count();
            assert_eq!(opened, closed, "<{tag}> opened {opened} times, closed {closed}");
        }
        let mut depth = 0i32;
        for (i, _) in html.match_indices("svg") {
            if html[..i].ends_with('<') {
                depth += 1;
                assert!(depth == 1, "an <svg> inside an <svg>");
            } else if html[..i].ends_with("</") {
                depth -= 1;
                assert!(depth == 0);
            }
        }
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(html.trim_end().ends_with("</html>"));
    }

    #[test]
    fn two_targets_of_three_repeats_chart_medians_and_ranges() {
        let cases = vec![
            case("mmap-fill", "ext4", 1, 0.3),
            case("mmap-fill", "ext4", 2, 0.1),
            case("mmap-fill", "ext4", 3, 0.2),
            case("mmap-fill", "xfs", 1, 5.0),
            case("mmap-fill", "xfs", 2, 7.0),
            case("mmap-fill", "xfs", 3, 6.0),
        ];
        let html = page(&[run(cases)], None);
        assert_balanced(&html);
        let wall = chart(&html, "mmap-fill", "wall_s");
        assert_eq!(attrs(wall, r#"class="bar""#, "data-fs"), ["ext4", "xfs"]);
        assert_eq!(attrs(wall, r#"class="bar""#, "data-value"), ["0.2", "6"]);
        assert_eq!(attrs(wall, r#"class="bar""#, "data-min"), ["0.1", "5"]);
        assert_eq!(attrs(wall, r#"class="bar""#, "data-max"), ["0.3", "7"]);
        assert_eq!(wall.matches(r#"class="whisker""#).count(), 2);
        assert!(html.contains("parameters: size=16 MiB"), "one parameter set is said once, not on every bar");
        assert!(html.contains(r#"id="scenario-mmap-fill""#));
        assert!(html.contains("seed 000"));
        // extents and wall_s are charted; journal_commits is in no case.
        assert!(html.contains(r#"data-figure="extents""#));
        assert!(!html.contains(r#"data-figure="journal_commits""#));
    }

    #[test]
    fn missing_figures_say_missing_with_their_reason() {
        let mut ext4 = case("replace-files", "ext4", 1, 1.0);
        ext4.figures.set("journal_commits", 12.0, "count", Better::Lower, Kind::Exact);
        let mut dir = case("replace-files", "dir", 1, 1.0);
        dir.figures.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "tracepoints need root");
        let mut failed = Case::new("replace-files", "btrfs", dir.params.clone(), 1);
        failed.status = Status::Failed;
        failed.error = Some("mkfs.btrfs: not found".into());
        let html = page(&[run(vec![ext4, dir, failed])], None);
        assert_balanced(&html);
        let commits = chart(&html, "replace-files", "journal_commits");
        assert_eq!(attrs(commits, r#"class="bar""#, "data-fs"), ["ext4"]);
        assert_eq!(attrs(commits, r#"class="missing""#, "data-fs"), ["dir", "btrfs"]);
        assert_eq!(
            attrs(commits, r#"class="missing""#, "data-missing"),
            ["tracepoints need root", "the case failed: mkfs.btrfs: not found"]
        );
        assert!(commits.contains("<title>dir: missing: tracepoints need root</title>"), "{commits}");
        assert!(html.contains(r#"<li class="failed" data-fs="btrfs""#));
        assert!(html.contains("<li><b>journal_commits</b> missing on dir: tracepoints need root</li>"), "in words too");
        assert!(html.contains("<li><b>wall_s, journal_commits, extents</b> missing on btrfs: the case failed: mkfs.btrfs: not found</li>"));
    }

    #[test]
    fn everything_inserted_is_escaped() {
        let mut c = case("exec", "d<i>r&\"", 1, 1.0);
        c.error = Some("<script>alert(1)</script>".into());
        c.status = Status::Failed;
        c.maps.push(KeptMap {
            path: "a<b>&\"c\".dat".into(),
            size: 8192,
            block_size: 4096,
            device_bytes: 1 << 30,
            extents: 2,
            truncated: false,
            extent_list: vec![
                Extent { logical: 0, physical: 1 << 20, length: 4096, flags: 0 },
                Extent { logical: 4096, physical: 8 << 20, length: 4096, flags: 0 },
            ],
        });
        let mut r = run(vec![c]);
        r.tags = vec!["<tag>&".into()];
        let html = page(&[r], Some("<table><tr><td>kept as is</td></tr></table>"));
        assert_balanced(&html);
        assert!(!html.contains("<script"), "nothing inserted becomes markup");
        assert!(!html.contains("a<b>") && !html.contains("<i>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains(r#"data-path="a&lt;b&gt;&amp;&quot;c&quot;.dat""#));
        assert!(html.contains("&lt;tag&gt;&amp;"));
        assert!(html.contains(r#"data-fs="d&lt;i&gt;r&amp;&quot;""#));
        let title = page(&[], None);
        assert!(title.contains("<title>fslab report</title>"));
        assert!(String::from_utf8(render(&catalog(), &[], "a<b", None)).unwrap().contains("<title>a&lt;b</title>"));
        assert!(html.contains("<table><tr><td>kept as is</td></tr></table>"), "the compare fragment is embedded as it is");
    }

    #[test]
    fn the_page_names_no_url_and_loads_nothing() {
        let mut c = case("direct-stream", "ext4", 1, 3.0);
        c.maps.push(KeptMap {
            path: "stream".into(),
            size: 3 << 20,
            block_size: 4096,
            device_bytes: 1 << 30,
            extents: 2,
            truncated: false,
            extent_list: vec![
                Extent { logical: 0, physical: 1 << 20, length: 1 << 20, flags: 0 },
                // Contiguous with the first: the same extent.
                Extent { logical: 1 << 20, physical: 2 << 20, length: 1 << 20, flags: 0 },
                Extent { logical: 2 << 20, physical: 64 << 20, length: 1 << 20, flags: 0 },
            ],
        });
        c.timeline = (1..=3)
            .map(|i| TimelinePoint {
                t_s: f64::from(i),
                read_bytes_per_s: Some(0.0),
                write_bytes_per_s: Some(5e8),
                user_pct: 1.0,
                system_pct: 20.0,
                iowait_pct: 3.0,
                idle_pct: 76.0,
                dirty_bytes: 0,
                writeback_bytes: 0,
            })
            .collect();
        c.figures.set_missing("drop_detected", "count", Better::Lower, Kind::Timing, "too short");
        let html = page(&[run(vec![c])], None);
        assert_balanced(&html);
        assert!(!html.contains("http://") && !html.contains("https://"), "no URL at all");
        for attr in ["src=", "<link", "<script", "@import"] {
            assert!(!html.contains(attr), "{attr}");
        }
        assert!(html.match_indices("url(").all(|(i, _)| html[i..].starts_with("url(#")), "only references inside the page");
        // The strip: inlined without prolog or namespace, numbers on its figure.
        assert!(html.contains(r#"<figure class="strip" data-scenario="direct-stream" data-fs="ext4" data-repeat="1" data-path="stream" data-extents="2" data-records="3""#));
        assert!(html.contains("<svg width=\"1080\""), "the strip's root tag, namespace removed");
        assert!(html.contains("3 records · 2 extents"), "the strip counted extents by filefrag's rule");
        assert!(!html.contains("<?xml"));
        // The timeline.
        assert!(html.contains(r#"class="chart timeline" data-scenario="direct-stream" data-fs="ext4" data-repeat="1" data-points="3""#));
        assert!(html.contains(r#"data-drop="undecided""#));
    }

    #[test]
    fn scenarios_come_in_seed_order_then_exec_and_runs_are_told_apart() {
        let first = run(vec![case("exec", "ext4", 1, 1.0), case("direct-stream", "ext4", 1, 1.0), case("mmap-fill", "ext4", 1, 1.0)]);
        let mut second = run(vec![case("mmap-fill", "ext4", 1, 2.0)]);
        second.id = "second".into();
        second.tags = vec!["tuned".into()];
        let html = page(&[first, second], None);
        assert_balanced(&html);
        let at = |s: &str| html.find(&format!(r#"<section class="scenario" id="scenario-{s}""#)).unwrap_or_else(|| panic!("{s}"));
        assert!(at("mmap-fill") < at("direct-stream") && at("direct-stream") < at("exec"));
        let wall = chart(&html, "mmap-fill", "wall_s");
        assert_eq!(attrs(wall, r#"class="bar""#, "data-run"), ["base", "tuned"], "one bar per run");
        assert_eq!(html.matches(r#"<tr class="run""#).count(), 2);
        assert_eq!(html.matches("<dl class=\"env\">").count(), 1, "one machine, described once");
    }

    #[test]
    fn the_catalog_orders_names_and_describes() {
        let mut mmap = case("mmap-fill", "ext4", 1, 1.0);
        mmap.figures.set("touch_s", 0.5, "s", Better::Lower, Kind::Timing);
        let cases = vec![case("newer", "ext4", 1, 1.0), mmap, case("replace-files", "ext4", 1, 1.0)];
        let html = page(&[run(cases.clone())], None);
        assert!(chart(&html, "mmap-fill", "touch_s").contains("<title>touch_s: seconds of the stores</title>"));
        assert!(html.contains(r#"<h2>newer</h2>"#), "a scenario the catalog lacks has no seed");
        assert_eq!(html.matches(r#"<p class="about">what it shows</p>"#).count(), 2, "nor a description");
        let mut unseeded = catalog();
        unseeded.scenarios[1].seed = None;
        let html = String::from_utf8(render(&unseeded, &[run(cases)], "t", None)).expect("UTF-8");
        assert!(html.contains("<h2>replace-files</h2>\n<p class=\"about\">what it shows</p>"), "described, with no seed");
        let at = |s: &str| html.find(&format!(r#"<section class="scenario" id="scenario-{s}""#)).unwrap_or_else(|| panic!("{s}"));
        assert!(at("mmap-fill") < at("replace-files") && at("replace-files") < at("newer"), "catalog order, then others");
    }

    #[test]
    fn varying_parameters_label_the_bars() {
        let mut a = case("mmap-fill", "ext4", 1, 1.0);
        a.params.insert("order".into(), "seed".into());
        let mut b = case("mmap-fill", "ext4", 1, 2.0);
        b.params.insert("order".into(), "sequential".into());
        let html = page(&[run(vec![a, b])], None);
        let wall = chart(&html, "mmap-fill", "wall_s");
        assert_eq!(attrs(wall, r#"class="bar""#, "data-params"), ["order=seed", "order=sequential"]);
        assert!(html.contains("varied: order"));
    }

    #[test]
    fn svg_documents_lose_prolog_and_namespaces() {
        let inlined = inline_svg(b"<?xml version=\"1.0\"?>\n<!-- c -->\n<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"2\"><rect/></svg>\n");
        assert_eq!(inlined, "<svg width=\"2\"><rect/></svg>");
    }
}
