//! `fslab runs`: the runs a store holds, a line each, oldest first.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::RunsArgs;
use crate::error::Result;
use crate::store::{RunSummary, Store};

/// Run `fslab runs`.
pub fn run(args: &RunsArgs) -> Result<ExitCode> {
    let mut store: Store = crate::store::open_for_reading(&args.store.location)?;
    let runs = store.runs(args.tag.as_deref())?;
    let rendered = if args.json { render_json(&runs) } else { render_text(&runs, store.location()).into_bytes() };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn render_text(runs: &[RunSummary], location: &str) -> String {
    let mut s = String::new();
    if runs.is_empty() {
        let _ = writeln!(s, "no runs in {location}");
        return s;
    }
    let _ = writeln!(s, "{:<36}  {:<20}  {:>5}  {:<10}  {:<16}  {:<24}  scenarios", "run", "started", "cases", "state", "tags", "targets");
    for r in runs {
        let state = if !r.complete {
            "incomplete"
        } else if r.failed > 0 {
            "failures"
        } else {
            "complete"
        };
        let cases = if r.failed > 0 { format!("{}/{}", r.cases - r.failed, r.cases) } else { r.cases.to_string() };
        let _ = writeln!(
            s,
            "{:<36}  {:<20}  {:>5}  {:<10}  {:<16}  {:<24}  {}",
            r.id,
            r.started_at,
            cases,
            state,
            r.tags.join(","),
            r.targets.join(","),
            r.scenarios.join(",")
        );
    }
    s
}

fn render_json(runs: &[RunSummary]) -> Vec<u8> {
    crate::json_document("runs", runs)
}
