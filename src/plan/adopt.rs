//! A written plan's cases taken up by the machine that runs them (`run
//! --plan`): each case as the file has it, on this machine's target and
//! condition of the same name, checked before anything is made as the
//! command line checks its own cases. A plan file is the planner's word,
//! not this machine's, and could be edited by hand and sealed again, so
//! nothing in it is taken on trust: a case its flags do not plan (repeat
//! 0), parameters a scenario refuses, or a work larger than its target
//! is refused (exit 2); one this machine cannot hold (its scratch disk
//! too small for the image, as a preset's stream sized by the planning
//! machine's free disk may be) or whose condition it cannot make is exit 3.

use super::run::check_room;
use super::{FileCase, Machine, PlanFile, PlannedCase, RunPlan};
use crate::error::{Error, Result};
use crate::scenario::{self, params::Params};

impl RunPlan {
    /// This plan (made here, on `machine`, of a plan file's `run_args`)
    /// measuring only `chosen`, the file's cases: each case as the file
    /// has it (its parameters the file's, so every machine runs the same
    /// cases even where a preset sizes one by the planning machine's free
    /// disk), on this plan's target and condition of the same name, each
    /// checked as the command line checks its cases (see the module).
    pub fn adopt(mut self, chosen: &[&FileCase], machine: &dyn Machine) -> Result<RunPlan> {
        let mut cases = Vec::with_capacity(chosen.len());
        for c in chosen {
            let c = &c.case;
            let place = PlanFile::place(c);
            let target = self.targets.iter().position(|t| t.label() == c.target);
            let condition = self.harness.conditions.iter().position(|k| k.as_map() == c.conditions);
            let (Some(target), Some(condition)) = (target, condition) else {
                return Err(Error::environment(format!(
                    "case {} ({} on {place}, repeat {}) is not in the plan this machine makes of the same flags \
                     (a memory limit needs a memory controller; a target, its tools): run this shard where it is",
                    c.key, c.scenario, c.repeat
                )));
            };
            // The case's scenario, target, condition and repeat are one its
            // flags plan; only its parameters may be the planning machine's.
            if !self.cases.iter().any(|p| p.scenario == c.scenario && p.target == c.target && p.conditions == c.conditions && p.repeat == c.repeat)
            {
                return Err(Error::usage(format!(
                    "case {} ({} on {place}, repeat {}) is not a case the plan's flags make (those run {} on {place} \
                     with repeats from 1): the plan was edited; plan again",
                    c.key, c.scenario, c.repeat, c.scenario
                )));
            }
            let adopted = PlannedCase { target_index: target, condition_index: condition, ..c.clone() };
            self.check_case(&adopted, machine)?;
            cases.push(adopted);
        }
        self.cases = cases;
        Ok(self)
    }

    /// Refuse `case` as the command line refuses its own cases: parameters
    /// its scenario does not take or refuses, a work its target's
    /// `--size` or start cannot hold (exit 2), an image larger than this
    /// machine's scratch disk has free (exit 3).
    fn check_case(&self, case: &PlannedCase, machine: &dyn Machine) -> Result<()> {
        let s = scenario::find(&case.scenario)?;
        let place = PlanFile::place(case);
        let said = |why: String| format!("case {} ({} on {place}, repeat {}): {why}", case.key, case.scenario, case.repeat);
        let params = Params::from_json(s.params(), &case.params).map_err(|why| Error::usage(said(why)))?;
        s.check(&params).map_err(|why| Error::usage(said(why)))?;
        let work = s.work(&params);
        let on = (std::slice::from_ref(self.target(case)), std::slice::from_ref(self.condition(case)));
        let key = &case.key;
        check_room(s, work.as_ref(), on, &self.harness, machine, |why| {
            Error::environment(format!(
                "case {key}: {why}. The plan's parameters are the planning machine's: run this case where the \
                 scratch disk has room, give --scratch on a larger disk, or plan again on a machine like this one"
            ))
        })
        .map_err(|e| if e.kind == crate::error::ErrorKind::Usage { Error::usage(format!("case {key}: {}", e.message)) } else { e })
    }
}
