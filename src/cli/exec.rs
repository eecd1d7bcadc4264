//! `fslab exec -- COMMAND`: run any command on fresh scratch file systems
//! (or in a directory) with every probe around it, and print one row per
//! target.
//!
//! The table is rendered to bytes after all targets ran; progress goes to
//! stderr while they run (`--progress`: a bar on a terminal, a line per
//! case elsewhere).

use std::io::Write as _;
use std::process::ExitCode;

use super::{ExecArgs, TargetArgs};
use crate::error::{ErrorKind, Result};
use crate::harness::{Finished, Run};
use crate::plan::{self, Host};
use crate::record::{RunRecord, Status};

/// Run `fslab exec`: per target and condition, the warmups (measured
/// and dropped), then the repeats (stored); a case in a guest is warmed
/// in its guest.
pub fn run(args: &ExecArgs) -> Result<ExitCode> {
    let request = args.request();
    let plan = plan::exec::plan(&request, &Host)?;
    let mut work = request.work;
    let target = &args.target;
    let mut run = Run::start(plan.harness.clone(), store(target), &target.tag, plan.cases.len(), target.progress, None)?;
    'all: for case in &plan.cases {
        let (spec, condition, job) = (plan.target(case), plan.condition(case), case.work_spec());
        let place = condition.place(&spec.label());
        // Warmups come before a target and condition's first repeat; a
        // guest's are its own fslab's, in the guest the case boots.
        for warmup in (1..=args.warmup).filter(|_| case.repeat == 1 && !condition.in_guest()) {
            if run.interrupted() {
                break 'all;
            }
            let case = run.lab().measure(spec, &job, condition, 0, &|_| {}, &mut work);
            if case.status == Status::Failed {
                let why = case.error.as_deref().unwrap_or("no reason given");
                run.say(&format!("warmup {warmup} on {place} failed (not recorded): {why}"), true);
            }
        }
        if run.interrupted() {
            break;
        }
        run.measure(spec, &job, condition, case.repeat, &format!("exec on {place}"), &mut work);
    }
    print_run(run.finish(Vec::new())?, target, args.wide)
}

/// The store the arguments name: none with `--no-store`.
pub(super) fn store(args: &TargetArgs) -> Option<&str> {
    (!args.no_store).then_some(args.store.location.as_str())
}

/// Print a finished run (JSON, or its tables) and where it was stored,
/// then what could not be released; exit 4 if any case failed, the store
/// could not keep it or something could not be released.
pub(super) fn print_run(done: Finished, args: &TargetArgs, wide: bool) -> Result<ExitCode> {
    let Finished { record, stored, released } = done;
    let mut rendered = if args.json { render_json(&record) } else { super::show::render_text(&record, wide, false).into_bytes() };
    if let (false, Ok(Some(location))) = (args.json, &stored) {
        let _ = writeln!(rendered, "\nstored as run {} in {location}", record.id);
    }
    let printed = super::print(&rendered);
    // What is left behind is said even when stdout is gone.
    if let Err(e) = &released {
        eprintln!("fslab: {e}");
    }
    printed?;
    if let Err(e) = stored {
        eprintln!("fslab: {e}");
        return Ok(e.exit_code());
    }
    // A write log past its cap is a size to give, and a checker that
    // could not start is bad input: neither is a failure of the work.
    let crash = record.cases.iter().filter_map(|c| c.crash.as_ref());
    let refused = crash.filter_map(|r| r.needed_bytes.map(|_| ErrorKind::Usage.exit_code()).or(r.refused_exit)).min();
    if let Some(code) = refused {
        return Ok(ExitCode::from(code));
    }
    let failed = record.cases.iter().any(|c| c.status == Status::Failed);
    Ok(if failed || released.is_err() { ExitCode::from(ErrorKind::Failed.exit_code()) } else { ExitCode::SUCCESS })
}

/// `{"schema":"fslab/1","run":{...}}`, pretty, with a final newline.
pub(super) fn render_json(record: &RunRecord) -> Vec<u8> {
    crate::json_document("run", record)
}
