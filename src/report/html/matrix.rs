//! The page's opening: the verdict matrix, every seed the page's runs
//! judged, at every place (target × conditions), in one table a reader
//! takes in before anything else.
//!
//! The design decision: a row is a seed under one set of conditions and a
//! column is a target, not a column per target × conditions. The seeds'
//! conditions are their own (mmap-fill's memory limits, create-file's
//! aged start), so a column per place would be some twenty-five columns,
//! each filled for one seed alone, and would not fit a window; a row per
//! seed and conditions keeps every cell that exists and nothing else. A
//! hunt's steps are its places, so a hunt reads as one row per step, in
//! the order of the value it varied, with its summary under them.
//!
//! Each cell says shows, gone or unknown, with the deciding figure in a
//! few words (here vs what it was weighed against), the place's full
//! evidence as its tooltip, and links to its scenario's section. With
//! `--compare`, a cell whose place the base judged too says the base's
//! word beside its own (`gone → shows`).

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::{escape, plural, section_id};
use crate::record::guest::EMULATED_FOOTNOTE;
use crate::record::{EMULATED_MARK, Kind, PlaceVerdict, RunRecord, Verdict};
use crate::units::short_number;

/// The longest reason an unjudged cell shows in full; a longer one is cut
/// at a word and left whole in the cell's tooltip.
const SHORT_REASON: usize = 64;

/// One row of the matrix: a run's verdict on one seed, under one set of
/// conditions, with its places by column.
struct Row<'a> {
    run: &'a RunRecord,
    verdict: &'a Verdict,
    /// The conditions every place of the row ran under (empty: the
    /// machine's own).
    conditions: &'a BTreeMap<String, String>,
    /// A hunt's step number (1, 2, ...), else `None`.
    step: Option<usize>,
    /// The row's places, each under its column's target.
    places: Vec<(usize, &'a PlaceVerdict)>,
}

/// The verdict matrix as a `<section class="matrix" id="verdicts">`: the
/// table and its legend, or one line saying no seed was judged. `base`
/// is the comparison's base side (label and runs), whose verdicts on the
/// same places are said beside the page's.
pub(super) fn write_matrix(out: &mut String, runs: &[RunRecord], base: Option<(&str, &[RunRecord])>) -> fmt::Result {
    writeln!(out, r#"<section class="matrix" id="verdicts">"#)?;
    let judged: Vec<&RunRecord> = runs.iter().filter(|r| !r.verdicts.is_empty()).collect();
    if judged.is_empty() {
        writeln!(
            out,
            r#"<p class="no-verdicts">No seed was judged: verdicts come from <code>fslab run --preset seeds</code> and <code>fslab hunt</code>.</p>"#
        )?;
        return writeln!(out, "</section>");
    }
    let verdicts: Vec<&Verdict> = judged.iter().flat_map(|r| &r.verdicts).collect();
    let count = |shows: Option<bool>| verdicts.iter().filter(|v| v.shows == shows).count();
    let (shows, gone, unknown) = (count(Some(true)), count(Some(false)), count(None));
    let counts: Vec<String> = [(shows, if shows == 1 { "still shows" } else { "still show" }), (gone, "gone"), (unknown, "unknown")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, words)| format!("{n} {words}"))
        .collect();
    writeln!(
        out,
        r#"<h2>Verdicts <span class="seed">{} judged: {}</span></h2>"#,
        plural(verdicts.len(), "seed", "seeds"),
        counts.join(", ")
    )?;
    writeln!(out, r#"<p class="about">Does this kernel still show what each seed reported, and where?</p>"#)?;
    let columns = columns(&verdicts);
    let rows = rows(&judged, &columns);
    let several_runs = judged.len() > 1;
    write!(out, r#"<table class="matrix"><thead><tr><th>seed</th><th>conditions</th>"#)?;
    for column in &columns {
        write!(out, r#"<th class="target">{}</th>"#, escape(column))?;
    }
    writeln!(out, "</tr></thead>")?;
    let mut at = 0;
    while at < rows.len() {
        // A seed's rows (one per set of conditions) share its heading cell.
        let (run, verdict) = (rows[at].run, rows[at].verdict);
        let span = rows[at..].iter().take_while(|r| std::ptr::eq(r.verdict, verdict)).count();
        // A hunt's summary (`gone at files ≤ 8, shows at ≥ 9`) closes its rows.
        let hunt = rows[at].step.is_some() && !verdict.evidence.is_empty();
        writeln!(out, r#"<tbody class="seed" data-scenario="{}" data-seed="{}">"#, escape(&verdict.scenario), escape(&verdict.seed))?;
        for (n, row) in rows[at..at + span].iter().enumerate() {
            write!(out, r#"<tr data-conditions="{}">"#, escape(&conditions_key(row.conditions)))?;
            if n == 0 {
                write_seed_cell(out, run, verdict, span + usize::from(hunt), several_runs)?;
            }
            write_conditions_cell(out, row)?;
            if row.verdict.places.is_empty() {
                // A verdict stored before places: its word and sentence.
                let word = verdict.word();
                write!(
                    out,
                    r##"<td class="v {word}" colspan="{}" data-verdict="{word}"><a href="#{}"><b>{word}</b> <span class="fig">{}</span></a></td>"##,
                    columns.len(),
                    section_id(&verdict.scenario),
                    escape(&verdict.evidence)
                )?;
            } else {
                for column in 0..columns.len() {
                    match row.places.iter().find(|(c, _)| *c == column) {
                        Some((_, place)) => {
                            let was = base.and_then(|(_, runs)| base_word(runs, verdict, place));
                            let emulated = emulated_timing(run, verdict, place);
                            write_cell(out, verdict, place, was, emulated)?;
                        }
                        None => write!(out, r#"<td class="v none"></td>"#)?,
                    }
                }
            }
            writeln!(out, "</tr>")?;
        }
        if hunt {
            let summary = escape(&verdict.evidence);
            writeln!(out, r#"<tr class="hunt-summary"><td colspan="{}"><b>hunt</b> {summary}</td></tr>"#, columns.len() + 1)?;
        }
        writeln!(out, "</tbody>")?;
        at += span;
    }
    writeln!(out, "</table>")?;
    write_legend(out, base.map(|(label, _)| label))?;
    writeln!(out, "</section>")
}

/// The targets the places name, in order of first appearance.
fn columns(verdicts: &[&Verdict]) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for place in verdicts.iter().flat_map(|v| &v.places) {
        let fs = fs_of(place);
        if !columns.iter().any(|c| c == fs) {
            columns.push(fs.to_string());
        }
    }
    columns
}

/// A place's target (`PlaceVerdict::fs_label`).
fn fs_of(place: &PlaceVerdict) -> &str {
    place.fs_label()
}

/// The rows of every judged run: per verdict, one per set of conditions in
/// the order its places first name them (a hunt: one per step).
fn rows<'a>(runs: &[&'a RunRecord], columns: &[String]) -> Vec<Row<'a>> {
    static NONE: BTreeMap<String, String> = BTreeMap::new();
    let mut rows = Vec::new();
    for &run in runs {
        let hunt = run.command.get(1).is_some_and(|c| c == "hunt");
        for verdict in &run.verdicts {
            let first = rows.len();
            if verdict.places.is_empty() {
                rows.push(Row { run, verdict, conditions: &NONE, step: None, places: Vec::new() });
                continue;
            }
            for (n, place) in verdict.places.iter().enumerate() {
                let column = columns.iter().position(|c| c == fs_of(place)).expect("columns come from the places");
                let row = if hunt {
                    None
                } else {
                    rows[first..].iter().position(|r: &Row| *r.conditions == place.conditions && !r.places.iter().any(|(c, _)| *c == column))
                };
                match row {
                    Some(i) => rows[first + i].places.push((column, place)),
                    None => rows.push(Row {
                        run,
                        verdict,
                        conditions: &place.conditions,
                        step: hunt.then_some(n + 1),
                        places: vec![(column, place)],
                    }),
                }
            }
            if hunt {
                sort_steps(&mut rows[first..]);
            }
        }
    }
    rows
}

/// A hunt's steps in the order of the value it varied (`files 1, 6, 7,
/// 8, 9, 15, 40`), so the bracket reads top to bottom; in the order taken
/// when some value is not a number or size.
fn sort_steps(rows: &mut [Row]) {
    let value = |row: &Row| -> Option<f64> {
        let mut values = row.conditions.values();
        let text = values.next()?;
        if values.next().is_some() {
            return None;
        }
        text.parse::<f64>().ok().or_else(|| crate::units::parse_bytes(text).ok().map(|b| b as f64))
    };
    if rows.iter().all(|r| value(r).is_some()) {
        rows.sort_by(|a, b| value(a).partial_cmp(&value(b)).unwrap_or(std::cmp::Ordering::Equal));
    }
}

/// `memory=120M, vm.dirty_background_bytes=32M`: what `data-conditions`
/// carries, empty for the machine's own.
fn conditions_key(conditions: &BTreeMap<String, String>) -> String {
    conditions.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

/// The seed's heading cell, spanning its rows: seed and scenario linked
/// to the section, its overall word, and the run when several judged.
fn write_seed_cell(out: &mut String, run: &RunRecord, verdict: &Verdict, span: usize, several_runs: bool) -> fmt::Result {
    let word = verdict.word();
    write!(
        out,
        r##"<th class="seed" scope="rowgroup" rowspan="{span}"><a href="#{}"><span class="num">{}</span> {}</a> <span class="v-word {word}">{word}</span>"##,
        section_id(&verdict.scenario),
        escape(&verdict.seed),
        escape(&verdict.scenario)
    )?;
    if several_runs {
        let name = run.tags.first().map_or(run.id.as_str(), String::as_str);
        write!(out, r#"<span class="run">run {}</span>"#, escape(name))?;
    }
    write!(out, "</th>")
}

/// The row's conditions, one per line, long names breakable at their
/// dots; a hunt's step number first.
fn write_conditions_cell(out: &mut String, row: &Row) -> fmt::Result {
    write!(out, r#"<th class="conditions" scope="row">"#)?;
    if let Some(step) = row.step {
        write!(out, r#"<span class="step">step {step}</span> "#)?;
    }
    if row.conditions.is_empty() {
        write!(out, r#"<span class="own">{}</span>"#, if row.places.is_empty() { "" } else { "machine's own" })?;
    }
    let lines: Vec<String> = row
        .conditions
        .iter()
        .map(|(k, v)| {
            let key = escape(k).replace('.', ".<wbr>").replace('_', "_<wbr>");
            format!("{key} <b>{}</b>", escape(v))
        })
        .collect();
    write!(out, "{}</th>", lines.join("<br>"))
}

/// One place's cell: its word, the deciding figure in a few words, its
/// evidence as the tooltip, and the base's word when it differs (when it
/// is the same, only `data-base` says so: a page compared with a like
/// base would otherwise repeat "same" in every cell).
fn write_cell(out: &mut String, verdict: &Verdict, place: &PlaceVerdict, was: Option<&'static str>, emulated: bool) -> fmt::Result {
    let word = place.word();
    let mut tip = tooltip(place);
    if emulated {
        tip.push_str(&format!(" ({EMULATED_MARK} {EMULATED_FOOTNOTE})"));
    }
    let changed = was.is_some_and(|w| w != word);
    write!(
        out,
        r#"<td class="v {word}{}" data-place="{}" data-verdict="{word}"{} title="{}">"#,
        if changed { " changed" } else { "" },
        escape(&place.target),
        was.map_or_else(String::new, |w| format!(r#" data-base="{w}""#)),
        escape(&tip)
    )?;
    write!(out, r##"<a href="#{}">"##, section_id(&verdict.scenario))?;
    match was {
        Some(was) if changed => write!(out, r#"<b><span class="was">{was}</span> → {word}</b>"#)?,
        _ => write!(out, "<b>{word}</b>")?,
    }
    let mut figure = deciding_figure(place);
    if emulated && !figure.is_empty() {
        figure.push_str(EMULATED_MARK);
    }
    if !figure.is_empty() {
        // A long figure name breaks at its underscores, not inside words.
        write!(out, r#"<span class="fig">{}</span>"#, escape(&figure).replace('_', "_<wbr>"))?;
    }
    write!(out, "</a></td>")
}

/// Whether the figure that decided `place` is a timing `run` measured in
/// a guest under software emulation: the cell then carries the mark.
fn emulated_timing(run: &RunRecord, verdict: &Verdict, place: &PlaceVerdict) -> bool {
    run.cases.iter().any(|c| {
        c.scenario == verdict.scenario
            && c.place() == place.target
            && c.timings_emulated()
            && c.figures.get(&place.figure).is_some_and(|f| f.kind == Kind::Timing)
    })
}

/// `extents 31,483 vs 1`, `journal_commits 21 vs 2`; with nothing to
/// weigh against (a threshold, a detector), the place's evidence cut
/// short (`no sustained drop, 90 MB/s`), as for an unjudged place its
/// reason; the figure alone when there are no words.
fn deciding_figure(place: &PlaceVerdict) -> String {
    if let Some(rule) = &place.rule {
        return rule.shown.replace(" (shows at ", " (needs ");
    }
    match (place.value, place.against) {
        (Some(value), Some(against)) => format!("{} {} vs {}", place.figure, short_number(value), short_number(against)),
        (Some(value), None) if place.evidence.is_empty() => format!("{} {}", place.figure, short_number(value)),
        _ => short_reason(&place.evidence),
    }
}

/// `reason`, or its first words up to [`SHORT_REASON`] characters and `…`.
fn short_reason(reason: &str) -> String {
    if reason.chars().count() <= SHORT_REASON {
        return reason.to_string();
    }
    let mut short = String::new();
    for word in reason.split(' ') {
        if short.chars().count() + word.chars().count() + 1 > SHORT_REASON - 1 {
            break;
        }
        if !short.is_empty() {
            short.push(' ');
        }
        short.push_str(word);
    }
    short.push('…');
    short
}

/// The cell's tooltip: the place and its evidence in full.
fn tooltip(place: &PlaceVerdict) -> String {
    let text = place.details();
    if text.is_empty() { place.target.clone() } else { format!("{}: {text}", place.target) }
}

/// The base side's word on the same seed at the same place, when one of
/// its runs judged it.
fn base_word(runs: &[RunRecord], verdict: &Verdict, place: &PlaceVerdict) -> Option<&'static str> {
    runs.iter()
        .flat_map(|r| &r.verdicts)
        .filter(|v| v.scenario == verdict.scenario && v.seed == verdict.seed)
        .flat_map(|v| &v.places)
        .find(|p| fs_of(p) == fs_of(place) && p.conditions == place.conditions)
        .map(|p| crate::record::verdict_word(p.word()))
}

/// What the colours and the figures mean.
fn write_legend(out: &mut String, base: Option<&str>) -> fmt::Result {
    write!(
        out,
        r#"<p class="legend"><span class="v shows">shows</span> the seed's effect is still there · <span class="v gone">gone</span> it is not · <span class="v marginal">marginal</span> its deciding value lies within 20% of the rule's threshold · <span class="v mixed">mixed</span> its repeats or aged images disagree · <span class="v unknown">unknown</span> not judged (a case or figure it needs is missing) · under the word, the test that decided it beside its threshold · hover a cell for its evidence, click for its section"#
    )?;
    if let Some(base) = base {
        write!(out, r#" · <span class="v changed"><b>gone → shows</b></span> {}'s verdict → this one's (other cells: the same in both, or not judged there)"#, escape(base))?;
    }
    writeln!(out, "</p>")
}
