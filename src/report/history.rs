//! One self-contained HTML page of a history (`fslab history --report`):
//! a chart per series that changed, drifts or cannot tell (the steady ones
//! counted), the runs in order along the x axis, a dot per run (hollow
//! when measured busy and set aside), each level between changes drawn as
//! a line, each change marked and named with its run and its step.
//!
//! The numbers ride in `data-` attributes (a dot its run and value, a
//! change its run and relative step), and every mark has a tooltip.

use std::fmt::Write as _;

use crate::compare::format::value;
use crate::history::Series;
use crate::history::detect::{Verdict, percent};
use crate::record::RunRecord;
use crate::report::markup::escape_xml as escape;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 40.0;
const PLOT: f64 = 140.0;

/// The page for the history of `runs` (oldest first) named `label`.
pub fn page(label: &str, runs: &[RunRecord], all: &[Series]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>fslab history: {}</title>\
         <style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:{WIDTH}px}}h1{{font-size:1.3em}}\
         h2{{font-size:1em;margin:1.6em 0 .2em}}p{{margin:.2em 0}}.changed{{color:#b30000}}.drift{{color:#b36b00}}\
         .cant{{color:#555}}svg text{{font:11px system-ui,sans-serif}}</style></head><body>",
        escape(label)
    );
    // The changes first, then drift, then what varies or cannot tell.
    let mut shown: Vec<&Series> = all.iter().filter(|s| s.finding.verdict != Verdict::Steady).collect();
    shown.sort_by_key(|s| match s.finding.verdict {
        Verdict::Changed => 0,
        Verdict::Drift => 1,
        _ => 2,
    });
    let _ = write!(
        s,
        "<h1>History of {}</h1><p>{} runs, {} … {}; {} series, {} steady (not drawn). A dot is a run's \
         median; hollow, measured while others used the machine.</p>",
        escape(label),
        runs.len(),
        escape(&runs[0].started_at),
        escape(&runs[runs.len() - 1].started_at),
        all.len(),
        all.len() - shown.len()
    );
    for series in shown {
        chart(&mut s, runs, series);
    }
    s.push_str("</body></html>\n");
    s
}

/// One series' chart, with its heading.
fn chart(s: &mut String, runs: &[RunRecord], series: &Series) {
    let f = &series.finding;
    let (class, said) = match f.verdict {
        Verdict::Changed => {
            let steps: Vec<String> =
                f.changes.iter().map(|c| format!("{} at run {}", percent(c.relative), series.values[c.at].run + 1)).collect();
            ("changed", format!("changed: {}", steps.join(", ")))
        }
        Verdict::Drift => ("drift", format!("drift: {:+.1}% over the series", f.drift.as_ref().map_or(0.0, |d| d.total) * 100.0)),
        Verdict::Varies => ("changed", "varies from run to run".to_string()),
        _ => match f.noise {
            Some(n) => ("cant", format!("can't tell: noise {:.1}%, about {} runs would decide", n.cv * 100.0, n.runs_needed)),
            None => ("cant", "can't tell: too few runs".to_string()),
        },
    };
    let _ = write!(
        s,
        "<h2>{} on {} — {} ({})</h2><p class=\"{class}\">{}</p>",
        escape(&series.scenario),
        escape(&series.place),
        escape(&series.figure),
        escape(&series.unit),
        escape(&said)
    );
    let values: Vec<f64> = series.values.iter().map(|v| v.value).collect();
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let pad = ((hi - lo) * 0.1).max(hi.abs() * 0.01).max(f64::MIN_POSITIVE);
    // A figure that cannot go below zero is not drawn below it.
    let (lo, hi) = (if lo >= 0.0 { (lo - pad).max(0.0) } else { lo - pad }, hi + pad);
    // The axis says numbers; a long unit is in the heading already.
    let label = |v: f64| {
        let said = value(v, &series.unit);
        if said.chars().count() > 10 { value(v, "count") } else { said }
    };
    let x = |run: usize| LEFT + (WIDTH - LEFT - RIGHT) * (run as f64 + 0.5) / runs.len() as f64;
    let y = |v: f64| TOP + PLOT * (1.0 - (v - lo) / (hi - lo));
    let _ = write!(
        s,
        "<svg width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" data-figure=\"{}\">\
         <line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">run</text>\
         <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">1</text><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        escape(&series.figure),
        TOP + PLOT,
        WIDTH - RIGHT,
        TOP + PLOT,
        LEFT - 6.0,
        TOP + 4.0,
        escape(&label(hi)),
        LEFT - 6.0,
        TOP + PLOT,
        escape(&label(lo)),
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 8.0,
        x(0),
        TOP + PLOT + 14.0,
        x(runs.len() - 1),
        TOP + PLOT + 14.0,
        runs.len()
    );
    // The levels between changes.
    let mut cuts: Vec<usize> = f.changes.iter().map(|c| c.at).collect();
    cuts.insert(0, 0);
    cuts.push(values.len());
    for w in cuts.windows(2) {
        let seg = &values[w[0]..w[1]];
        let level = seg.iter().sum::<f64>() / seg.len().max(1) as f64;
        let (a, b) = (series.values[w[0]].run, series.values[w[1] - 1].run);
        let _ = write!(
            s,
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#1f77b4\" stroke-width=\"2\" opacity=\"0.6\"/>",
            x(a) - 4.0,
            y(level),
            x(b) + 4.0,
            y(level)
        );
    }
    for v in &series.values {
        let fill = if v.busy { "none" } else { "#1f77b4" };
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{fill}\" stroke=\"#1f77b4\" data-run=\"{}\" data-value=\"{}\">\
             <title>run {} ({}): {}</title></circle>",
            x(v.run),
            y(v.value),
            v.run + 1,
            v.value,
            v.run + 1,
            escape(&runs[v.run].id),
            escape(&value(v.value, &series.unit))
        );
    }
    for c in &f.changes {
        let run = series.values[c.at].run;
        let at = (x(series.values[c.at - 1].run) + x(run)) / 2.0;
        let _ = write!(
            s,
            "<line x1=\"{at:.1}\" y1=\"{TOP}\" x2=\"{at:.1}\" y2=\"{}\" stroke=\"#b30000\" stroke-dasharray=\"4 3\" \
             data-change-run=\"{}\" data-relative=\"{}\"><title>{}</title></line>\
             <text x=\"{at:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#b30000\">run {} {}</text>",
            TOP + PLOT,
            run + 1,
            c.relative,
            escape(&c.test),
            TOP - 8.0,
            run + 1,
            percent(c.relative)
        );
    }
    s.push_str("</svg>");
}
