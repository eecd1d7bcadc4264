//! One scenario's block requests on the page: per place, the seconds the
//! disk model gave the requests beside the seconds measured for the same
//! phase, then what seekwatcher draws of a few cases' streams (device
//! offset against time, measured and modelled).
//!
//! The design decisions:
//! - The modelled time of the work's window stands beside `wall_s +
//!   sync_s`, the window the trace covered; the cold read-back's beside
//!   `cold_read_s`. They share a chart and an axis, a pair under each
//!   place, measured pale and modelled solid, as a comparison's base and
//!   new are drawn: how far apart they are is the question.
//! - Streams are pictures: each group's first repeat that kept any, work
//!   before read-back, at most [`SECTION_STREAMS`] a section and none once
//!   the page's picture budget is spent; the rest are named, not drawn.

use std::fmt::{self, Write as _};

use super::section::Group;
use super::{PICTURES_UNTIL, escape, unique};
use crate::record::{Better, Case, Kind, RequestStream};
use crate::report::bars::{Bar, BarChart, Side, Sides};
use crate::report::seekwatch::SeekChart;

/// Streams one section draws at most: four charts, about 70 KB.
const SECTION_STREAMS: usize = 4;

/// A modelled figure, the measured ones (summed) it stands beside, and
/// what those are called.
struct Pair {
    modelled: &'static str,
    measured: &'static [&'static str],
    measured_words: &'static str,
}

const PAIRS: [Pair; 2] = [
    Pair { modelled: "modelled_work_s", measured: &["wall_s", "sync_s"], measured_words: "wall_s + sync_s" },
    Pair { modelled: "modelled_cold_read_s", measured: &["cold_read_s"], measured_words: "cold_read_s" },
];

/// What a stream's phase is called on the page.
fn phase_words(phase: &str) -> &str {
    match phase {
        "work" => "the work and its syncfs",
        "cold_read" => "the cold read-back",
        other => other,
    }
}

/// The block requests of `groups` (one scenario's, the page's side): the
/// modelled and measured times, then the streams. Nothing when no case
/// modelled any.
pub(super) fn write_requests(out: &mut String, scenario: &str, groups: &[Group]) -> fmt::Result {
    let cases: Vec<&Case> = groups.iter().flat_map(|g| g.cases.iter().copied()).collect();
    let traced = |c: &&Case| !c.requests.is_empty() || PAIRS.iter().any(|p| c.figures.get(p.modelled).is_some());
    if !cases.iter().any(traced) {
        return Ok(());
    }
    writeln!(out, "<h3>Block requests, modelled</h3>")?;
    let disks = unique(cases.iter().filter_map(|c| c.target.disk.as_deref()));
    writeln!(
        out,
        r#"<p class="note">The requests the trace saw on the scratch device, replayed by the disk model on {}: one at a time in the order issued (the trace sees issues, not how many the device held), the drive starting over the first. A timing: the requests follow when writeback ran.</p>"#,
        escape(&if disks.is_empty() { "the run's drive".to_string() } else { disks.join(", ") })
    )?;
    let mut charts = Vec::new();
    let mut unmodelled = Vec::new();
    for pair in &PAIRS {
        let measured_anywhere = cases.iter().any(|c| c.figures.value(pair.modelled).is_some());
        if measured_anywhere {
            charts.push(pair_chart(scenario, pair, groups, &disks.join(", ")));
        } else if let Some(why) = cases.iter().find_map(|c| c.figures.get(pair.modelled).and_then(|f| f.missing.clone())) {
            unmodelled.push(format!("{} missing: {why}", pair.modelled));
        }
    }
    if !charts.is_empty() {
        writeln!(out, r#"<div class="grid requests-time">"#)?;
        for chart in charts {
            writeln!(out, r#"<div class="card">{chart}</div>"#)?;
        }
        writeln!(out, "</div>")?;
    }
    for line in unique(unmodelled) {
        writeln!(out, r#"<p class="note">{}</p>"#, escape(&line))?;
    }
    write_streams(out, scenario, groups)
}

/// One chart: per group a pair of bars, the measured figures' sum (pale)
/// and the modelled one (solid).
fn pair_chart(scenario: &str, pair: &Pair, groups: &[Group], disks: &str) -> String {
    let mut bars = Vec::new();
    for group in groups {
        let bar = |side: Side, value: &dyn Fn(&Case) -> Result<f64, String>| {
            let (mut values, mut missing) = (Vec::new(), Vec::new());
            for case in &group.cases {
                match value(case) {
                    Ok(v) => values.push(v),
                    Err(why) if !missing.contains(&why) => missing.push(why),
                    Err(_) => {}
                }
            }
            Bar {
                fs: group.place.clone(),
                params: group.params.clone(),
                run: group.run.clone(),
                side: Some(side),
                colour: group.colour,
                values,
                repeats: group.cases.len(),
                missing,
                emulated: group.cases.iter().any(|c| c.guest.as_ref().is_some_and(|g| g.emulated)),
                mark: None,
            }
        };
        bars.push(bar(Side::Base, &|c| pair.measured.iter().map(|name| figure(c, name)).sum()));
        bars.push(bar(Side::New, &|c| figure(c, pair.modelled)));
    }
    let sides = Sides { base: pair.measured_words, new: disks, words: ["measured", "modelled"] };
    BarChart {
        scenario,
        figure: pair.modelled,
        unit: "s",
        better: Better::Lower,
        kind: Kind::Timing,
        about: Some("the disk model's seconds for the requests, beside the seconds measured for the same phase"),
        sides: Some(sides),
        bars,
        mark: None,
    }
    .render()
}

/// A figure's value, or why the case has none.
fn figure(case: &Case, name: &str) -> Result<f64, String> {
    match case.figures.get(name) {
        Some(f) => f.value.ok_or_else(|| f.missing.clone().unwrap_or_else(|| "not measured".to_string())),
        None => Err(format!("{name} not measured")),
    }
}

/// The streams of each group's first repeat that kept any, drawn while
/// the budgets last, the rest named.
fn write_streams(out: &mut String, scenario: &str, groups: &[Group]) -> fmt::Result {
    let mut streams: Vec<(String, &RequestStream)> = Vec::new();
    for group in groups {
        let Some(case) = group.cases.iter().filter(|c| !c.requests.is_empty()).min_by_key(|c| c.repeat) else { continue };
        for stream in &case.requests {
            streams.push((format!("{} · repeat {} · {}", group.label(), case.repeat, phase_words(&stream.phase)), stream));
        }
    }
    if streams.is_empty() {
        return Ok(());
    }
    let mut left = Vec::new();
    let mut drawn = 0;
    writeln!(out, r#"<div class="grid requests">"#)?;
    for (title, stream) in &streams {
        if drawn == SECTION_STREAMS || out.len() >= PICTURES_UNTIL {
            left.push(title.as_str());
            continue;
        }
        writeln!(out, r#"<div class="card">{}</div>"#, SeekChart { title, scenario, stream }.render())?;
        drawn += 1;
    }
    writeln!(out, "</div>")?;
    if !left.is_empty() {
        let why = if drawn < SECTION_STREAMS { "the page's picture budget is spent" } else { "a section draws four" };
        writeln!(out, r#"<p class="note">Streams not drawn ({why}): {}.</p>"#, escape(&left.join("; ")))?;
    }
    Ok(())
}
