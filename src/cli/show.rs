//! `fslab show RUN`: print a stored run again, as `fslab run` printed it
//! (or its JSON); and the tables every run prints.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::{ShowArgs, table};
use crate::error::Result;
use crate::record::{Case, RunRecord};

/// Figures every scenario table shows after its own headline figures.
const COMMON: [&str; 7] =
    ["written_bytes", "flushes", "journal_commits", "files", "extents", "perfection", "layout_score"];

/// The columns of `exec`'s table, in order.
const EXEC_COLUMNS: [&str; 15] = [
    "wall_s",
    "user_s",
    "sys_s",
    "written_bytes",
    "write_ios",
    "read_ios",
    "flushes",
    "journal_commits",
    "files",
    "extents",
    "perfection",
    "layout_score",
    "seeks",
    "cold_read_mbps",
    "cold_read_ios_per_mib",
];

/// Run `fslab show`.
pub fn run(args: &ShowArgs) -> Result<ExitCode> {
    let selection = crate::store::resolve(&args.store.location, &args.run)?;
    let mut rendered = Vec::new();
    for record in &selection.runs {
        if args.json {
            rendered.extend(super::exec::render_json(record));
        } else {
            if !rendered.is_empty() {
                rendered.push(b'\n');
            }
            rendered.extend(render_text(record).into_bytes());
        }
    }
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// A run's tables: one per scenario, in the order the run took them, with
/// the parameters, the seed's figures, then the common ones; `exec` cases
/// get exec's columns; the verdicts last.
pub(super) fn render_text(record: &RunRecord) -> String {
    let mut s = String::new();
    let _ = write!(s, "run {}  (kernel {})", record.id, record.environment.kernel);
    if !record.tags.is_empty() {
        let _ = write!(s, "  tags: {}", record.tags.join(", "));
    }
    if !record.complete {
        s.push_str("  INCOMPLETE: interrupted or killed; its finished cases follow");
    }
    s.push('\n');
    let mut names: Vec<&str> = Vec::new();
    for case in &record.cases {
        if !names.contains(&case.scenario.as_str()) {
            names.push(&case.scenario);
        }
    }
    for name in names {
        let cases: Vec<&Case> = record.cases.iter().filter(|c| c.scenario == name).collect();
        match crate::scenario::find(name) {
            Ok(scenario) => {
                let _ = writeln!(s, "\n{} (seed {}): {}", scenario.name(), scenario.seed(), scenario.about());
                let params: Vec<&str> = scenario.params().iter().map(|p| p.name).collect();
                let headline = scenario.headline();
                let mut figures: Vec<&str> = headline.to_vec();
                figures.extend(COMMON.iter().filter(|f| !headline.contains(f)));
                s.push_str(&table::render_cases(&cases, &params, &figures));
            }
            // `exec`, or a scenario this fslab does not know (a store
            // written by another version).
            Err(_) => {
                if name != "exec" {
                    let _ = writeln!(s, "\n{name}:");
                }
                s.push_str(&table::render_cases(&cases, &[], &EXEC_COLUMNS));
            }
        }
        s.push_str(&table::failures(&cases));
        s.push_str(&table::missing(&cases));
    }
    if !record.verdicts.is_empty() {
        let _ = writeln!(s, "\nverdicts: does this kernel still show what each seed reported?");
        for v in &record.verdicts {
            let _ = writeln!(s, "  seed {} {:<14} {:<8} {}", v.seed, v.scenario, v.word(), v.evidence);
        }
    }
    s
}
