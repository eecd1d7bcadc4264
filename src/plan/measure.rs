//! Measuring a scenario plan's cases in a started run, in the plan's
//! order: each case's work built once, what ages ahead started, then
//! the cases one by one until the user interrupts. `fslab run` and
//! `fslab bisect` both measure this way.

use crate::harness::{CaseStart, Run};
use crate::record::Verdict;

use super::RunPlan;

/// Measure every case of `plan` in `run`; the verdicts drawn from the
/// cases measured (none unless the plan ends with verdicts). A case whose
/// work cannot be built stops the run there, and its error comes back
/// beside the verdicts so the run is still finished and stored.
pub fn measure(plan: &RunPlan, run: &mut Run) -> (Vec<Verdict>, Option<crate::error::Error>) {
    // Each case's work, built once: what ages ahead reads, then what runs.
    let works: Vec<_> = plan.cases.iter().map(|case| plan.work(case)).collect();
    run.set_limits(works.iter().map(|work| work.as_ref().ok().and_then(|w| w.time_limit())));
    let starts: Vec<CaseStart> = plan
        .cases
        .iter()
        .zip(&works)
        .filter_map(|(case, work)| {
            let work = work.as_ref().ok()?;
            Some(CaseStart { spec: plan.target(case), condition: plan.condition(case), work: work.as_ref(), repeat: case.repeat })
        })
        .collect();
    run.age_ahead(&starts);
    drop(starts);
    let mut failed = None;
    for (case, work) in plan.cases.iter().zip(works) {
        if run.interrupted() {
            break;
        }
        let mut work: Box<dyn crate::scenario::Work> = match work {
            Ok(work) => work,
            Err(e) => {
                // The plan built every case's work once already.
                failed = Some(e);
                break;
            }
        };
        let (spec, condition) = (plan.target(case), plan.condition(case));
        let what = format!("{} on {}", case.scenario, condition.place(&spec.label()));
        run.key_next(&case.key);
        run.measure(spec, &case.work_spec(), condition, case.repeat, &what, work.as_mut());
    }
    (plan.verdicts(run.cases()), failed)
}
