//! `fslab history SERIES`: where a series of stored runs changed, per
//! machine, case and figure, one line a change, the changes first; then
//! how many series are steady, drift, or cannot tell, with their noise.
//!
//! Exit codes: 0; with `--gate`, 1 when a change for the worse (or a
//! drift) was found and 5 when none was but a series cannot tell; 2 for
//! bad flags or a series of fewer than two runs.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::StoreArgs;
use crate::error::{Error, Result};
use crate::history::detect::{Step, Verdict, percent};
use crate::history::{Series, series, window};
use crate::record::{Kind, RunRecord};

/// Arguments of `fslab history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The runs, oldest first: a tag, a plan id (its repeated runs), or a
    /// file (a store).
    #[arg(value_name = "SERIES")]
    pub series: String,
    /// Only runs started at or after this time (`2026-11-01`, or a whole
    /// UTC time `2026-11-01T12:00:00Z`).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only runs started before this time.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Only these figures (repeatable, or a comma list).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub figure: Vec<String>,
    /// The least relative change that counts (`5%`).
    #[arg(long, value_name = "PCT%", default_value = "5%", value_parser = threshold)]
    pub threshold: f64,
    /// Exit 1 when a change for the worse was found, 5 when none was but a
    /// series cannot tell.
    #[arg(long)]
    pub gate: bool,
    /// Judge host-wide figures too (backing_*: the whole disk under the
    /// target; host_*: the machine's load); by default they are left out,
    /// as `compare` shows them without judging.
    #[arg(long)]
    pub host_figures: bool,
    /// Every series, steady ones too, a line each.
    #[arg(long)]
    pub all: bool,
    /// The answer as JSON (schema fslab/1).
    #[arg(long)]
    pub json: bool,
    /// Write the history as one HTML page too.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Can't-tell series listed a line each before the rest are counted.
const MAX_LISTED: usize = 12;

/// `5%` as 0.05.
pub(super) fn threshold(text: &str) -> std::result::Result<f64, String> {
    match crate::bisect::Threshold::parse(text)? {
        crate::bisect::Threshold::Relative(r) => Ok(r),
        crate::bisect::Threshold::Value(_) => Err(format!("{text}: give a percentage (as in 5%)")),
    }
}

/// Run `fslab history`.
pub fn run(args: &HistoryArgs) -> Result<ExitCode> {
    let (label, runs) = runs_of(&args.store, &args.series, args.since.as_deref(), args.until.as_deref())?;
    let (all, host_wide) = series_of(&label, &runs, &args.figure, args.threshold, args.host_figures)?;
    let said = Said::of(&runs, &all);
    if let Some(path) = &args.report {
        let page = crate::report::history::page(&label, &runs, &all);
        super::output::write_whole(path, page.as_bytes(), "write")?;
    }
    let rendered = if args.json {
        json(&label, &runs, &all, &said, host_wide)
    } else {
        text(&label, &runs, &all, &said, args, host_wide).into_bytes()
    };
    super::print(&rendered)?;
    let worse = all.iter().any(|s| s.finding.drift.is_some() || s.finding.changes.iter().any(|c| s.worse(c.relative)));
    let unsure = all.iter().any(|s| s.finding.verdict == Verdict::CantTell);
    Ok(match (args.gate, worse, unsure) {
        (true, true, _) => ExitCode::from(1),
        (true, false, true) => ExitCode::from(super::compare::UNDECIDED_EXIT),
        _ => ExitCode::SUCCESS,
    })
}

/// The runs of `series` started in `since..until`, oldest first, with
/// the series' label; two at least.
pub(super) fn runs_of(
    store: &StoreArgs,
    series: &str,
    since: Option<&str>,
    until: Option<&str>,
) -> Result<(String, Vec<RunRecord>)> {
    let selection = store.resolve(series)?;
    let runs: Vec<RunRecord> = selection
        .runs
        .into_iter()
        .filter(|r| since.is_none_or(|s| r.started_at.as_str() >= s))
        .filter(|r| until.is_none_or(|u| r.started_at.as_str() < u))
        .collect();
    if runs.len() < 2 {
        return Err(Error::usage(format!(
            "{}: {} run{} in the window, and a history needs two at least (tag each night's run the same, \
             or widen --since/--until)",
            selection.label,
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        )));
    }
    Ok((selection.label, runs))
}

/// The series of `runs` (only `figures`, when named; host-wide ones only
/// with `host_figures` or named), judged against `threshold`, with the
/// host-wide figures left out; an error when no case measured a figure.
pub(super) fn series_of(
    label: &str,
    runs: &[RunRecord],
    figures: &[String],
    threshold: f64,
    host_figures: bool,
) -> Result<(Vec<Series>, usize)> {
    let (all, host_wide) = series::of(runs, figures, threshold, host_figures);
    if all.is_empty() {
        let hint = if figures.is_empty() { String::new() } else { format!(" named {}", figures.join(", ")) };
        return Err(Error::usage(format!("{label}: no ok case measured a figure{hint}")));
    }
    Ok((all, host_wide))
}

/// Each change's window, in the order of the series and their changes.
struct Said {
    windows: Vec<Vec<window::Window>>,
}

impl Said {
    fn of(runs: &[RunRecord], all: &[Series]) -> Said {
        let windows = all
            .iter()
            .map(|s| {
                s.finding
                    .changes
                    .iter()
                    .map(|c| {
                        let (a, b) = (s.values[c.at - 1].run, s.values[c.at].run);
                        fn kernel<'r>(run: &'r RunRecord, key: &str) -> Option<&'r str> {
                            run.cases.iter().find(|k| k.key() == key).and_then(|k| k.conditions.get("kernel")).map(String::as_str)
                        }
                        window::between(&runs[a], &runs[b], &s.figure, (kernel(&runs[a], &s.key), kernel(&runs[b], &s.key)))
                    })
                    .collect()
            })
            .collect();
        Said { windows }
    }
}

/// The step in words: `12 → 13 (+8.3%)`, with a timing's interval.
fn step_words(s: &Series, c: &Step) -> String {
    let mut out = format!("{} ({}", crate::compare::format::change(c.before, c.after, &s.unit), percent(c.relative));
    if s.kind == Kind::Timing && c.interval.0.is_finite() && c.interval.1.is_finite() {
        let _ = write!(out, ", 95% {:+.1}..{:+.1}%", c.interval.0 * 100.0, c.interval.1 * 100.0);
    }
    out.push(')');
    out
}

/// The answer for people: the changes first, a line each, then the rest
/// counted.
fn text(label: &str, runs: &[RunRecord], all: &[Series], said: &Said, args: &HistoryArgs, host_wide: usize) -> String {
    let mut s = String::new();
    let machines: std::collections::BTreeSet<&str> = all.iter().map(|s| s.machine.as_str()).collect();
    let _ = writeln!(
        s,
        "history of {label}: {} runs ({} … {}), {} series on {} machine{}, threshold {:.0}%",
        runs.len(),
        runs[0].started_at,
        runs[runs.len() - 1].started_at,
        all.len(),
        machines.len(),
        if machines.len() == 1 { "" } else { "s" },
        args.threshold * 100.0
    );
    let run_no = |series: &Series, at: usize| series.values[at].run + 1;
    let mut changes = 0;
    for (series, windows) in all.iter().zip(&said.windows) {
        let what = format!("{} on {} {}", series.scenario, series.place, series.figure);
        let machine = if machines.len() > 1 { format!(" [{}]", series.machine) } else { String::new() };
        for (c, w) in series.finding.changes.iter().zip(windows) {
            changes += 1;
            let way = if series.worse(c.relative) { "worse" } else { "better" };
            let _ = writeln!(s, "  changed  {what}{machine}: at run {}, {}, {way}", run_no(series, c.at), step_words(series, c));
            let why = if series.kind == Kind::Exact { "exact".to_string() } else { c.test.clone() };
            let _ = writeln!(s, "           runs {} → {}; {why}", w.before, w.after);
            if !w.differs.is_empty() {
                let _ = writeln!(s, "           between them: {}", w.differs.join(", "));
            }
            if let Some(cmd) = &w.bisect {
                let _ = writeln!(s, "           bisect it: {cmd}");
            }
        }
        if let Some(d) = &series.finding.drift {
            changes += 1;
            let _ =
                writeln!(s, "  drift    {what}{machine}: {:+.1}% over {} runs; {}", d.total * 100.0, series.values.len(), d.test);
        }
    }
    if changes == 0 {
        let _ = writeln!(s, "  no change of {:.0}% or more in any series", args.threshold * 100.0);
    }
    let count = |v: Verdict| all.iter().filter(|s| s.finding.verdict == v).count();
    let _ = writeln!(
        s,
        "{} changed, {} drift, {} steady, {} varies, {} can't tell",
        count(Verdict::Changed),
        count(Verdict::Drift),
        count(Verdict::Steady),
        count(Verdict::Varies),
        count(Verdict::CantTell)
    );
    // Can't-tell series with a noise to say, a line each up to a screen's
    // share; too short ones counted in one line.
    let short = all.iter().filter(|s| s.finding.verdict == Verdict::CantTell && s.finding.noise.is_none()).count();
    if short > 0 && !args.all {
        let _ = writeln!(s, "  can't tell {short} series of fewer than {} runs", 2 * crate::history::detect::MIN_SIDE);
    }
    let listed: Vec<&Series> =
        all.iter().filter(|s| args.all || s.finding.verdict == Verdict::CantTell && s.finding.noise.is_some()).collect();
    let room = if args.all { listed.len() } else { MAX_LISTED };
    for series in listed.iter().take(room) {
        let what = format!("{} on {} {}", series.scenario, series.place, series.figure);
        let line = match (&series.finding.noise, series.finding.verdict) {
            (Some(n), Verdict::CantTell) => format!(
                "  can't tell {what}: noise {:.1}% (rho {:.2}) hides a {:.0}% step; about {} runs would show one{}",
                n.cv * 100.0,
                n.rho,
                args.threshold * 100.0,
                n.runs_needed,
                possible(series)
            ),
            (_, Verdict::CantTell) => format!("  can't tell {what}: {} runs are too few", series.values.len()),
            (_, v) => format!("  {:<10} {what}", v.word()),
        };
        let _ = writeln!(s, "{line}");
    }
    if listed.len() > room {
        let _ = writeln!(s, "  … and {} more that can't tell (--all lists every series)", listed.len() - room);
    }
    // The correlation each machine's timings were judged with, once.
    let mut pooled: Vec<(&str, crate::history::detect::Pooled)> = Vec::new();
    for series in all {
        if let Some(p) = series.finding.noise.and_then(|n| n.pooled)
            && !pooled.iter().any(|(m, _)| *m == series.machine)
        {
            pooled.push((&series.machine, p));
        }
    }
    for (machine, p) in &pooled {
        let judged = if p.rho > 0.0 {
            format!("as correlated run to run as rho {:.2} at least", p.rho)
        } else {
            "as independent run to run".to_string()
        };
        let _ = writeln!(s, "note: {machine}'s timings judged {judged} (median rho {:.2} of its {} series)", p.median, p.series);
    }
    if host_wide > 0 {
        let _ = writeln!(
            s,
            "note: {host_wide} host-wide figures not judged (backing_*, host_*: the machine, not the case; --host-figures)"
        );
    }
    let set_aside: usize = all.iter().map(|s| s.set_aside).sum();
    if set_aside > 0 {
        let _ = writeln!(s, "note: {set_aside} busy values set aside from timings (measured while others used the machine)");
    }
    s
}

/// A can't-tell series' possible step, when it has one.
fn possible(series: &Series) -> String {
    series
        .finding
        .possible
        .first()
        .map(|c| format!("; a possible {} at run {}", percent(c.relative), series.values[c.at].run + 1))
        .unwrap_or_default()
}

/// The history as `{"schema":"fslab/1","history":{...}}`.
fn json(label: &str, runs: &[RunRecord], all: &[Series], said: &Said, host_wide: usize) -> Vec<u8> {
    let series: Vec<serde_json::Value> = all
        .iter()
        .zip(&said.windows)
        .map(|(s, windows)| {
            let changes: Vec<serde_json::Value> = s
                .finding
                .changes
                .iter()
                .zip(windows)
                .map(|(c, w)| {
                    serde_json::json!({
                        "run": w.after, "last_before": w.before, "index": s.values[c.at].run,
                        "before": c.before, "after": c.after, "relative": c.relative,
                        "interval": [c.interval.0, c.interval.1], "test": c.test, "worse": s.worse(c.relative),
                        "differs": w.differs, "bisect": w.bisect,
                    })
                })
                .collect();
            let step = |c: &Step| serde_json::json!({"index": s.values[c.at].run, "relative": c.relative, "test": c.test});
            serde_json::json!({
                "machine": s.machine, "scenario": s.scenario, "place": s.place, "key": s.key, "figure": s.figure,
                "unit": s.unit, "kind": s.kind.as_str(), "verdict": s.finding.verdict.word(),
                "values": s.values.iter().map(|v| serde_json::json!({"index": v.run, "value": v.value, "busy": v.busy})).collect::<Vec<_>>(),
                "set_aside": s.set_aside,
                "changes": changes,
                "small": s.finding.small.iter().map(step).collect::<Vec<_>>(),
                "possible": s.finding.possible.iter().map(step).collect::<Vec<_>>(),
                "drift": s.finding.drift.as_ref().map(|d| serde_json::json!({"total": d.total, "test": d.test})),
                "noise": s.finding.noise.map(|n| serde_json::json!({
                    "cv": n.cv, "rho": n.rho, "detectable": n.detectable, "runs_needed": n.runs_needed,
                    "pooled": n.pooled.map(|p| serde_json::json!({"rho": p.rho, "median": p.median, "series": p.series})),
                })),
            })
        })
        .collect();
    let value = serde_json::json!({
        "label": label,
        "runs": runs.iter().map(|r| serde_json::json!({"id": r.id, "started_at": r.started_at})).collect::<Vec<_>>(),
        "series": series,
        "host_wide_left_out": host_wide,
    });
    crate::json_document("history", &value)
}
