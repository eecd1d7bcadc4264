//! `fslab run SCENARIO...`: the matrix of file systems × parameter values
//! × repeats, each case measured on a fresh target; one table per
//! scenario with the seed's own figures first. `--preset seeds` runs each
//! seed's own comparison and ends with a verdict per seed.
//!
//! The plan ([`crate::plan::run`]) decides the cases and their order; this
//! file measures them one by one and prints.

use std::process::ExitCode;

use super::RunArgs;
use crate::error::Result;
use crate::harness::Run;
use crate::plan::{self, Host};

/// Run `fslab run`.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let plan = plan::run::plan(&args.request(), &Host)?;
    let target = &args.target;
    let mut run = Run::start(plan.harness.clone(), super::exec::store(target), &target.tag, plan.cases.len(), target.progress)?;
    let mut failed = None;
    for case in &plan.cases {
        if run.interrupted() {
            break;
        }
        let mut work = match plan.work(case) {
            Ok(work) => work,
            Err(e) => {
                // The plan built every case's work once already.
                failed = Some(e);
                break;
            }
        };
        let (spec, condition) = (plan.target(case), plan.condition(case));
        let what = format!("{} on {}", case.scenario, condition.place(&spec.label()));
        run.measure(spec, &case.work_spec(), condition, case.repeat, &what, work.as_mut());
    }
    let verdicts = plan.verdicts(run.cases());
    let done = run.finish(verdicts)?;
    if let Some(e) = failed {
        return Err(e);
    }
    super::exec::print_run(done, target, args.wide)
}
