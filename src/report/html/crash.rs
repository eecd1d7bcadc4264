//! One scenario's crash states on the page (`--crash MODEL`): a table with
//! a row per group, its cost beside its safety, then per group one strip
//! along the write log: the states coloured by outcome, and on the same
//! axis the flushes and the marks (the work's start, each durability
//! point, the work's end).
//!
//! The design decisions:
//! - The axis is the log's entry count, not time: a state, a flush and a
//!   mark are all places in the log ("the first N entries"), so a state
//!   that went bad reads against the durability points before it. A
//!   state sits at the entries it holds up to its last one; a mark at the
//!   entries the log counted when its sync returned.
//! - One strip per group (its first repeat that kept its states), at most
//!   [`SECTION_STRIPS`] a section; the rest are counted in the table.
//! - Each strip carries its numbers (`data-states`, `data-bad`,
//!   `data-flushes`, `data-marks`; each state its `data-outcome`), so the
//!   page is tested as data.

use std::fmt::{self, Write as _};

use super::section::Group;
use super::{escape, plural};
use crate::record::{BadOutcome, Case, CrashRecord, CrashStates};
use crate::report::axis::Ticks;
use crate::report::markup::num;
use crate::units::short_number;

/// Strips one section draws at most.
const SECTION_STRIPS: usize = 12;

/// Each outcome's colour and words, in the legend's order.
const OUTCOMES: [(&str, &str, &str); 8] = [
    ("good", "#3f9a5c", "good"),
    ("empty", "#d0392f", "a file empty"),
    ("torn", "#ec8a2f", "a file torn"),
    ("missing", "#8a4fb0", "a file missing"),
    ("durability", "#c2185b", "durability violation"),
    ("unmountable", "#1f2a37", "would not mount"),
    ("fsck_failed", "#7a5230", "fsck found damage"),
    ("other", "#8c949e", "other (checker unreadable, failed)"),
];

fn colour(outcome: &str) -> &'static str {
    OUTCOMES.iter().find(|(o, _, _)| *o == outcome).unwrap_or(&OUTCOMES[OUTCOMES.len() - 1]).1
}

/// The crash states of `groups` (one scenario's, the page's side): the
/// table, the legend and the strips. Nothing when no case judged any.
pub(super) fn write_crash_states(out: &mut String, groups: &[Group]) -> fmt::Result {
    let judged = |c: &&Case| c.crash.as_ref().and_then(|r| r.states.as_ref()).is_some();
    if !groups.iter().flat_map(|g| &g.cases).any(judged) {
        return Ok(());
    }
    writeln!(out, r#"<h3 id="crash">Crash states</h3>"#)?;
    writeln!(
        out,
        r#"<p class="note">Each state is the device as a crash could have left it, rebuilt from the write log, mounted (the file system's own recovery), looked at by the work's checker and checked by the file system's. Cost beside safety: how many states of those judged were bad, over the repeats.</p>"#
    )?;
    write_table(out, groups)?;
    write_legend(out)?;
    let mut drawn = 0;
    let mut left = 0;
    for group in groups {
        let Some((case, record, states)) = group.cases.iter().find_map(|c| {
            let record = c.crash.as_ref()?;
            let states = record.states.as_ref().filter(|s| !s.outcomes.is_empty())?;
            Some((*c, record, states))
        }) else {
            continue;
        };
        if drawn == SECTION_STRIPS {
            left += 1;
            continue;
        }
        drawn += 1;
        let title = format!("{} · r{}", group.label(), case.repeat);
        writeln!(out, r#"<figure class="crash-strip"><figcaption>{}</figcaption>"#, escape(&title))?;
        write_strip(out, record, states)?;
        writeln!(out, "</figure>")?;
    }
    if left > 0 {
        writeln!(out, r#"<p class="note">{} more not drawn (the table counts them).</p>"#, plural(left, "group's states", "groups' states"))?;
    }
    Ok(())
}

/// A row per group: cost (median journal commits, flushes, wall time) and
/// safety (states judged and bad, summed over repeats; by class;
/// durability violations; the distinct bad outcomes over the repeats).
fn write_table(out: &mut String, groups: &[Group]) -> fmt::Result {
    writeln!(
        out,
        r#"<table class="numbers crash-table"><tr><th>place · parameters</th><th>repeats</th><th>journal commits</th><th>flushes</th><th>wall s</th><th>states</th><th>bad</th><th>bad, by class</th><th>violations</th><th>bad outcomes (states, first entry)</th></tr>"#
    )?;
    for group in groups {
        let cases: Vec<&Case> = group.cases.iter().copied().filter(|c| c.figures.value("crash_states").is_some()).collect();
        if cases.is_empty() {
            continue;
        }
        let median = |name: &str| {
            let mut values: Vec<f64> = cases.iter().filter_map(|c| c.figures.value(name)).collect();
            values.sort_by(f64::total_cmp);
            values.get(values.len() / 2).copied()
        };
        let sum = |name: &str| cases.iter().filter_map(|c| c.figures.value(name)).sum::<f64>();
        let shown = |v: Option<f64>| v.map_or_else(|| "–".to_string(), short_number);
        let classes: Vec<String> = ["empty", "torn", "missing", "unmountable", "fsck_failed", "check_failed"]
            .iter()
            .filter_map(|class| {
                let n = sum(&format!("crash_{class}"));
                (n > 0.0).then(|| format!("{} {}", short_number(n), class.replace('_', " ")))
            })
            .collect();
        let outcomes = bad_outcomes(&cases);
        let bad = sum("crash_bad");
        writeln!(
            out,
            r#"<tr data-bad="{}" data-states="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="{}">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            num(bad),
            num(sum("crash_states")),
            escape(&group.label()),
            cases.len(),
            shown(median("journal_commits")),
            shown(median("flushes")),
            median("wall_s").map_or_else(|| "–".to_string(), |s| format!("{s:.3}")),
            short_number(sum("crash_states")),
            if bad > 0.0 { "bad" } else { "good" },
            short_number(bad),
            escape(&classes.join(", ")),
            short_number(sum("crash_durability_violations")),
            outcomes
        )?;
    }
    writeln!(out, "</table>")
}

/// The most distinct bad outcomes a row lists.
const OUTCOMES_LISTED: usize = 5;

/// A group's distinct bad outcomes over its repeats, most states first,
/// as HTML lines: `12× git cannot read the repository (entry 7)`; a record
/// from before they were kept gives its first bad state.
fn bad_outcomes(cases: &[&Case]) -> String {
    let mut merged: Vec<BadOutcome> = Vec::new();
    let mut left_out = 0;
    for states in cases.iter().filter_map(|c| c.crash.as_ref()?.states.as_ref()) {
        left_out += states.bad_outcomes_left_out;
        let first = states.first_bad.iter().map(|b| BadOutcome {
            detail: b.detail.clone(),
            classes: b.classes.clone(),
            states: 1,
            first_entry: b.entry,
        });
        let outcomes: Vec<BadOutcome> =
            if states.bad_outcomes.is_empty() { first.collect() } else { states.bad_outcomes.clone() };
        for o in outcomes {
            match merged.iter_mut().find(|m| m.detail == o.detail) {
                Some(m) => {
                    m.states += o.states;
                    m.first_entry = m.first_entry.min(o.first_entry);
                }
                None => merged.push(o),
            }
        }
    }
    merged.sort_by(|a, b| b.states.cmp(&a.states).then(a.first_entry.cmp(&b.first_entry)));
    let mut lines: Vec<String> = merged
        .iter()
        .take(OUTCOMES_LISTED)
        .map(|o| {
            // The checker's words, not the frame around them.
            let words = o.detail.split_once(":\n").map_or(o.detail.as_str(), |(_, output)| output).replace('\n', " · ");
            let words = crate::report::markup::shorten(&words, 80);
            format!("{}× {} (entry {})", o.states, escape(&words), o.first_entry)
        })
        .collect();
    let rest: u64 = merged.iter().skip(OUTCOMES_LISTED).map(|o| o.states).sum::<u64>() + left_out;
    if rest > 0 {
        lines.push(format!("and {rest} states of other outcomes"));
    }
    lines.join("<br>")
}

fn write_legend(out: &mut String) -> fmt::Result {
    write!(out, r#"<p class="crash-legend">"#)?;
    for (outcome, colour, words) in OUTCOMES {
        write!(out, r#"<span data-outcome="{outcome}"><i style="background:{colour}"></i>{}</span>"#, escape(words))?;
    }
    writeln!(
        out,
        r#"<span><i class="mark"></i>work start, end</span><span><i class="durable"></i>durability point</span><span><i class="flush"></i>flush</span></p>"#
    )
}

/// Width and rows of a strip, in its own units (the page scales it).
const WIDTH: f64 = 960.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 16.0;
const MARKS_Y: f64 = 20.0;
const FLUSH_Y: f64 = 44.0;
const STATES_Y: f64 = 62.0;
const STATES_H: f64 = 26.0;
const AXIS_Y: f64 = STATES_Y + STATES_H + 4.0;
const HEIGHT: f64 = AXIS_Y + 28.0;

/// One recording's states along its log.
fn write_strip(out: &mut String, record: &CrashRecord, states: &CrashStates) -> fmt::Result {
    let lo = states.from_entry as f64;
    let hi = (record.entries as f64).max(lo + 1.0);
    let ticks = Ticks::over(lo, hi, 8);
    let x = |entries: f64| LEFT + (entries.clamp(lo, hi) - lo) / (hi - lo) * (WIDTH - LEFT - RIGHT);
    let bad = states.outcomes.iter().filter(|o| o.outcome() != "good").count();
    let marks: Vec<_> = record.marks.iter().filter(|m| m.entries as f64 >= lo).collect();
    writeln!(
        out,
        r#"<svg class="chart crash" viewBox="0 0 {} {}" role="img" data-states="{}" data-bad="{bad}" data-flushes="{}" data-marks="{}" data-from="{}" data-entries="{}"><title>{} states of {} judged, {bad} bad{}</title>"#,
        num(WIDTH),
        num(HEIGHT),
        states.outcomes.len(),
        states.flush_entries.len(),
        marks.len(),
        states.from_entry,
        record.entries,
        states.judged,
        states.total,
        match record.marks_left_out {
            0 => String::new(),
            n => format!("; {n} durable marks past the first {} left out", crate::record::crash::MAX_DURABLE_NAMES),
        }
    )?;
    for (y, label) in [(MARKS_Y + 4.0, "marks"), (FLUSH_Y + 4.0, "flushes"), (STATES_Y + STATES_H / 2.0 + 4.0, "states")] {
        writeln!(out, r#"<text x="{}" y="{}" class="row">{label}</text>"#, num(LEFT - 8.0), num(y))?;
    }
    // Marks: the work's start and end named, durability points thin.
    for mark in &marks {
        let at = x(mark.entries as f64);
        let (class, top) = if mark.what.starts_with("durable:") { ("durable", MARKS_Y - 6.0) } else { ("mark", 4.0) };
        writeln!(
            out,
            r#"<line class="{class}" x1="{a}" x2="{a}" y1="{}" y2="{}"><title>{} at entry {}</title></line>"#,
            num(top),
            num(STATES_Y + STATES_H),
            escape(&mark.what),
            mark.entries,
            a = num(at)
        )?;
        if class == "mark" {
            let anchor = if mark.what == "work_end" { "end" } else { "start" };
            let dx = if anchor == "end" { -3.0 } else { 3.0 };
            writeln!(out, r#"<text class="mark" x="{}" y="13" text-anchor="{anchor}">{}</text>"#, num(at + dx), escape(&mark.what.replace('_', " ")))?;
        }
    }
    for &flush in &states.flush_entries {
        let at = num(x(flush as f64 + 1.0));
        writeln!(out, r#"<line class="flush" x1="{at}" x2="{at}" y1="{}" y2="{}"/>"#, num(FLUSH_Y - 6.0), num(FLUSH_Y + 6.0))?;
    }
    // States: a bar each, good ones first so a bad one is never hidden.
    let width = ((WIDTH - LEFT - RIGHT) / (hi - lo)).clamp(2.0, 8.0);
    let mut order: Vec<_> = states.outcomes.iter().collect();
    order.sort_by_key(|o| o.outcome() != "good");
    for o in order {
        let outcome = o.outcome();
        let shown = if OUTCOMES.iter().any(|(name, _, _)| *name == outcome) { outcome } else { "other" };
        let extra = if o.extra > 0 { format!(" + {} of its epoch", o.extra) } else { String::new() };
        let what = if o.classes.is_empty() { "good".to_string() } else { o.classes.join(", ") };
        writeln!(
            out,
            r#"<rect data-outcome="{shown}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>entries 0–{}{extra}: {}</title></rect>"#,
            num(x(o.entry as f64 + 1.0) - width / 2.0),
            num(STATES_Y),
            num(width),
            num(STATES_H),
            colour(shown),
            o.prefix,
            escape(&what)
        )?;
    }
    writeln!(out, r#"<line class="axis" x1="{}" x2="{}" y1="{a}" y2="{a}"/>"#, num(LEFT), num(WIDTH - RIGHT), a = num(AXIS_Y))?;
    for value in ticks.values().into_iter().filter(|v| *v >= lo && *v <= hi) {
        let at = num(x(value));
        writeln!(
            out,
            r#"<line class="axis" x1="{at}" x2="{at}" y1="{}" y2="{}"/><text class="tick" x="{at}" y="{}">{}</text>"#,
            num(AXIS_Y),
            num(AXIS_Y + 4.0),
            num(AXIS_Y + 16.0),
            escape(&ticks.label(value))
        )?;
    }
    writeln!(out, r#"<text class="row" x="{}" y="{}">log entry</text>"#, num(LEFT - 8.0), num(AXIS_Y + 16.0))?;
    writeln!(out, "</svg>")
}
