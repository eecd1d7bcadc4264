//! `fslab show RUN`: print a stored run again, as `fslab run` printed it
//! (or its JSON); and the tables every run prints.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::{ShowArgs, table};
use crate::error::Result;
use crate::record::catalog::{EXEC_TABLE, TABLE_COMMON};
use crate::record::{Case, RunRecord};

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
    let catalog = crate::harness::catalog();
    let mut names: Vec<&str> = Vec::new();
    for case in &record.cases {
        if !names.contains(&case.scenario.as_str()) {
            names.push(&case.scenario);
        }
    }
    for name in names {
        let cases: Vec<&Case> = record.cases.iter().filter(|c| c.scenario == name).collect();
        match catalog.scenario(name) {
            Some(scenario) => {
                let seed = scenario.seed.map(|seed| format!(" (seed {seed})")).unwrap_or_default();
                let _ = writeln!(s, "\n{}{seed}: {}", scenario.name, scenario.about);
                let mut figures: Vec<&str> = scenario.headline.to_vec();
                figures.extend(TABLE_COMMON.iter().filter(|f| !scenario.headline.contains(f)));
                s.push_str(&table::render_cases(&catalog, &cases, &scenario.params, &figures));
            }
            // `exec`, or a scenario this fslab does not know (a store
            // written by another version).
            None => {
                if name != "exec" {
                    let _ = writeln!(s, "\n{name}:");
                }
                s.push_str(&table::render_cases(&catalog, &cases, &[], EXEC_TABLE));
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
