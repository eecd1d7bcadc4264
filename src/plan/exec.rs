//! `exec`'s plan: the command on every target under every condition,
//! `--repeat` times, in that order (target, then condition, then repeat).
//! Warmups are not cases: they are neither stored nor counted, so the
//! run does them before a target and condition's first repeat, and a
//! guest's fslab (`--kernel IMAGE`) before its one case, in the guest.

use super::{Machine, PlannedCase, RunPlan, TargetRequest};
use crate::error::{Error, Result};
use crate::harness::{ColdRead, StartPlan};
use crate::scenario::exec::{self, CommandWork};

/// What `fslab exec` was asked, its values read.
#[derive(Debug)]
pub struct ExecRequest {
    /// Targets and measurement.
    pub target: TargetRequest,
    /// `--repeat`: stored runs of the command per target and condition.
    pub repeat: u32,
    /// `--warmup`: unrecorded runs before the first repeat.
    pub warmup: u32,
    /// The command, with `--cold-read` and `--parse`.
    pub work: CommandWork,
}

/// Plan `fslab exec` on `machine`.
pub fn plan(request: &ExecRequest, machine: &dyn Machine) -> Result<RunPlan> {
    let work = &request.work;
    if work.argv.first().is_none_or(|program| program.is_empty()) {
        return Err(Error::usage(
            "exec -- \"\": the command is empty; give the program to run after --, as in `fslab exec --fs ext4 -- dd if=/dev/zero of=f bs=1M count=64`",
        ));
    }
    if let Some(check) = &work.check {
        exec::CommandChecker::validate(check)?;
    }
    if super::guest::names_guests(&request.target) {
        refuse_in_guests(request)?;
    }
    let mut harness = super::harness_plan(&request.target, if work.cold_read { ColdRead::Always } else { ColdRead::AsAsked })?;
    if let Some(guest) = harness.guest.as_mut().filter(|_| request.warmup > 0) {
        // Each guest boots cold: its own fslab warms it before the case.
        guest.forward.push(format!("--warmup={}", request.warmup));
    }
    super::check_images_repeated(&request.target, request.repeat)?;
    for spec in &harness.targets {
        for condition in &harness.conditions {
            let start = StartPlan::for_condition(harness.start.as_ref(), condition)?;
            let level = start.as_ref().map_or(0.0, StartPlan::level);
            machine.check_disk(spec, &harness.target_options, work, level)?;
        }
    }
    let params = work.params();
    let mut cases = Vec::new();
    for (t, spec) in harness.targets.iter().enumerate() {
        for (c, condition) in harness.conditions.iter().enumerate() {
            for repeat in 1..=request.repeat {
                cases.push(PlannedCase::new(exec::NAME, &params, (t, spec.label()), (c, condition), repeat));
            }
        }
    }
    Ok(RunPlan { targets: harness.targets.clone(), harness, cases, scenarios: Vec::new(), verdicts: false })
}

/// What a command cannot do in a guest, refused (exit 2) before anything
/// is made; the target flags a guest refuses are refused with `run`'s.
fn refuse_in_guests(request: &ExecRequest) -> Result<()> {
    if let Some(word) = request.work.argv.iter().find(|w| w.to_str().is_none()) {
        return Err(Error::usage(format!(
            "--kernel IMAGE: the command's word {} is not UTF-8, which a guest's job cannot carry as given",
            word.to_string_lossy()
        )));
    }
    if request.warmup > 0 && request.target.crash.is_some() {
        return Err(Error::usage(
            "--warmup with --crash and --kernel IMAGE: a guest's disk is logged from its boot, so the warmups' writes \
             would be in the log its crash states are rebuilt from; leave --warmup out",
        ));
    }
    Ok(())
}
