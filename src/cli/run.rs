//! `fslab run SCENARIO...`: the matrix of file systems × parameter values
//! × repeats, each case measured on a fresh target; one table per
//! scenario with the seed's own figures first. `--preset seeds` runs each
//! seed's own comparison and ends with a verdict per seed. `--plan PLAN`
//! runs a plan's cases instead (`--shard K/N`: its share of them), each
//! stored under the plan's id and its key.
//!
//! The plan ([`crate::plan::run`]) decides the cases and their order; this
//! file measures them one by one and prints.

use std::process::ExitCode;

use clap::ArgMatches;

use super::{RunArgs, RunCommandArgs};
use crate::error::{Error, Result};
use crate::harness::Run;
use crate::plan::{self, Host, RunPlan};
use crate::record::PlanRef;

/// Run `fslab run`; `given` says which flags the command line gave.
pub fn run(command: &RunCommandArgs, given: &ArgMatches) -> Result<ExitCode> {
    let (args, plan, reference) = match &command.plan {
        None => {
            check_named(&command.run)?;
            (None, plan::run::plan(&command.run.request(), &Host)?, None)
        }
        Some(path) => {
            let file = super::plan::read(path)?;
            let args = super::plan::planned_args(&file, path, &command.run, given)?;
            let shown = crate::text::path(path);
            if args.scenarios.is_empty() && args.preset.is_none() {
                return Err(Error::usage(format!("{shown}: its flags name no scenario and no preset; plan again")));
            }
            if let Some(device) = &args.target.device {
                file.check_device(device, &shown)?;
            }
            let shard = command.shard.as_ref().map(|s| s.resolve(|name| std::env::var(name).ok())).transpose()?;
            let chosen: Vec<&plan::FileCase> = file.cases.iter().filter(|c| shard.is_none_or(|s| s.holds(&c.shard_key))).collect();
            let planned = plan::run::plan(&args.request(), &Host)?.adopt(&chosen, &Host)?;
            let document = String::from_utf8(crate::json_document("plan", &file)).expect("JSON is UTF-8");
            let reference =
                PlanRef { id: file.id.clone(), shard: shard.map(|s| s.to_string()), document, cases: file.cases.len(), ..PlanRef::default() };
            (Some(args), planned, Some(reference))
        }
    };
    let args = args.as_ref().unwrap_or(&command.run);
    measure(args, &plan, reference)
}

/// Refuse (exit 2) a run that names no scenario, no preset and no plan.
pub(super) fn check_named(args: &RunArgs) -> Result<()> {
    if args.scenarios.is_empty() && args.preset.is_none() {
        return Err(Error::usage("name the scenarios to run (`fslab list`), or give --preset seeds (or `run --plan PLAN`)"));
    }
    Ok(())
}

/// Measure `plan`'s cases and print them; `reference` is the plan file's
/// they come from.
fn measure(args: &RunArgs, plan: &RunPlan, reference: Option<PlanRef>) -> Result<ExitCode> {
    let target = &args.target;
    let mut run = Run::start(plan.harness.clone(), super::exec::store(target), &target.tag, plan.cases.len(), target.progress, reference)?;
    let (verdicts, failed) = plan::measure::measure(plan, &mut run);
    let done = run.finish(verdicts)?;
    if let Some(e) = failed {
        return Err(e);
    }
    super::exec::print_run(done, target, args.wide)
}
