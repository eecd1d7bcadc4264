//! `fslab cleanup`, and the same duty at the start of every command that
//! makes targets (`run`, `exec`): release what runs killed by SIGKILL (or
//! a crash) left behind. Live runs hold a lock on their ledger and are
//! never touched. Reading commands (`map`, `runs`, `compare`, ...) neither
//! release nor mention dead runs: they change nothing on the machine.

use std::fmt::Write as _;
use std::process::ExitCode;


use super::CleanupArgs;
use crate::error::Result;
use crate::harness::cleanup_dead_runs;
use crate::target::ledger::CleanedRun;

/// Run `fslab cleanup`.
pub fn run(args: &CleanupArgs) -> Result<ExitCode> {
    let cleaned = cleanup_dead_runs()?;
    let rendered = if args.json {
        crate::json_document("cleaned", &cleaned)
    } else {
        render_text(&cleaned).into_bytes()
    };
    super::print(&rendered)?;
    let failed = cleaned.iter().any(|c| !c.failed.is_empty());
    Ok(if failed { ExitCode::from(crate::error::ErrorKind::Failed.exit_code()) } else { ExitCode::SUCCESS })
}

/// Before `run` or `exec` make anything: release dead runs' leftovers,
/// saying so on stderr. A failure here must not stop the command the user
/// asked for.
pub fn on_start() {
    match cleanup_dead_runs() {
        Ok(cleaned) => {
            for run in cleaned.iter().filter(|r| !r.released.is_empty() || !r.failed.is_empty() || !r.refused.is_empty()) {
                eprint!("fslab: a dead run left resources: {}", render_text(std::slice::from_ref(run)));
            }
        }
        Err(e) => eprintln!("fslab: could not check for dead runs: {e}"),
    }
}

fn render_text(cleaned: &[CleanedRun]) -> String {
    let mut s = String::new();
    if cleaned.is_empty() {
        s.push_str("nothing to clean up\n");
    }
    for run in cleaned {
        let _ = writeln!(s, "{}", run.ledger.display());
        for r in &run.released {
            let _ = writeln!(s, "  released {r}");
        }
        for r in &run.failed {
            let _ = writeln!(s, "  FAILED   {r}");
        }
        for r in &run.refused {
            let _ = writeln!(s, "  refused  {r}");
        }
    }
    s
}
