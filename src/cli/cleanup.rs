//! `fslab cleanup`, and the same duty at the start of every command that
//! makes targets (`run`, `exec`): release what runs killed by SIGKILL (or
//! a crash) left behind. Live runs hold a lock on their ledger and are
//! never touched. Reading commands (`map`, `runs`, `compare`, ...) neither
//! release nor mention dead runs: they change nothing on the machine.

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
            for run in cleaned.iter().filter(|r| !r.is_empty()) {
                eprint!("fslab: a dead run left resources: {run}");
            }
        }
        Err(e) => eprintln!("fslab: could not check for dead runs: {e}"),
    }
}

fn render_text(cleaned: &[CleanedRun]) -> String {
    if cleaned.is_empty() {
        return "nothing to clean up\n".to_string();
    }
    cleaned.iter().map(CleanedRun::to_string).collect()
}
