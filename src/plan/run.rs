//! `run`'s plan: the matrix of scenarios × parameter values × targets ×
//! conditions × repeats, each combination a [`PlannedCase`], in the order
//! the run measures them (scenario, then parameters, target, condition,
//! repeat: the tables and the progress line follow it). Every value is
//! read, and every scenario refuses what it cannot do, before anything is
//! made; with `--preset seeds` each seed's comparison is added, and its
//! verdicts are drawn from the measured cases at the end.

use super::{Machine, PlannedCase, TargetRequest, preset};
use crate::error::{Error, Result};
use crate::harness::{ColdRead, Condition, Plan, StartPlan};
use crate::record::{Case, Verdict};
use crate::scenario::params::{self, Params, Scale, Setting};
use crate::scenario::{self, SCENARIOS, Scenario, Work, WorkSpec};
use crate::site::{TargetOptions, TargetSpec};

/// A named set of comparisons (`--preset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetName {
    /// Each seed's own comparison, ending with a verdict per seed.
    Seeds,
}

/// What `fslab run` was asked, its values read.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The scenarios named (none: all, in seed order).
    pub scenarios: Vec<String>,
    /// Targets and measurement.
    pub target: TargetRequest,
    /// `--set`: parameter values; several make a matrix.
    pub set: Vec<Setting>,
    /// `--repeat`: every case this many times (at least 1).
    pub repeat: u32,
    /// `--scale`: which defaults.
    pub scale: Scale,
    /// `--preset`.
    pub preset: Option<PresetName>,
}

/// A run's plan: what [`crate::harness::Run::start`] needs, and the cases
/// to measure, in order.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The harness's plan: its conditions are every case's.
    pub harness: Plan,
    /// Every target a case runs on (a preset's variants after the run's
    /// own); [`PlannedCase::target_index`] points here.
    pub targets: Vec<TargetSpec>,
    /// The cases, in the order they are measured.
    pub cases: Vec<PlannedCase>,
    /// The scenarios' names, in order.
    pub(super) scenarios: Vec<&'static str>,
    /// Whether a verdict per seed ends the run.
    pub(super) verdicts: bool,
}

impl RunPlan {
    /// The target of `case`.
    pub fn target(&self, case: &PlannedCase) -> &TargetSpec {
        &self.targets[case.target_index]
    }

    /// The condition of `case`.
    pub fn condition(&self, case: &PlannedCase) -> &Condition {
        &self.harness.conditions[case.condition_index]
    }

    /// The work of `case`, built from its scenario and parameters.
    pub fn work(&self, case: &PlannedCase) -> Result<Box<dyn Work>> {
        scenario::work_for(&case.work_spec())
    }

    /// The seeds' verdicts on the `measured` cases (with `--preset seeds`;
    /// none otherwise): each seeded scenario's claim judged on its cases.
    pub fn verdicts(&self, measured: &[Case]) -> Vec<Verdict> {
        if !self.verdicts {
            return Vec::new();
        }
        verdicts_of(&self.scenarios, measured)
    }
}

/// The verdicts of the seeds of `scenarios` (by name, in order) on the
/// `measured` cases: each seeded scenario's claim judged on its cases and
/// its programs' ([`scenario::Seeded::programs`]). A
/// plan run in shards is judged so once all its cases are stored.
pub fn verdicts_of(scenarios: &[impl AsRef<str>], measured: &[Case]) -> Vec<Verdict> {
    scenarios
        .iter()
        .filter_map(|name| {
            let name = name.as_ref();
            let seeded = scenario::find(name).ok()?.seeded()?;
            let programs = seeded.programs();
            let mine: Vec<&Case> =
                measured.iter().filter(|c| c.scenario == name || programs.iter().any(|(p, _)| c.scenario == *p)).collect();
            Some(seeded.verdict(&mine))
        })
        .collect()
}

/// One scenario's share of the run: its parameter sets, targets and
/// conditions.
#[derive(Clone)]
struct Job {
    scenario: &'static dyn Scenario,
    param_sets: Vec<Params>,
    targets: Vec<TargetSpec>,
    /// The run's conditions, then (with `--preset`) the seed's own.
    conditions: Vec<Condition>,
}

impl Job {
    /// Refuse (exit 2), before anything is made, a parameter set the
    /// scenario cannot do or cannot fit on a target.
    fn check(&self, harness: &Plan, machine: &dyn Machine) -> Result<()> {
        let s = self.scenario;
        for p in &self.param_sets {
            s.check(p).map_err(|why| Error::usage(format!("{}: {why}", s.name())))?;
            // Built from the parameters as a case records them, as the
            // run builds each case's work.
            let work = scenario::work_for(&WorkSpec { scenario: s.name().into(), params: p.to_json() })?;
            check_room(s, work.as_ref(), (&self.targets, &self.conditions), harness, machine, Error::usage)?;
        }
        Ok(())
    }
}

/// Plan `fslab run` on `machine`.
pub fn plan(request: &RunRequest, machine: &dyn Machine) -> Result<RunPlan> {
    // None named: the seeds' scenarios (the programs are run by name).
    let scenarios: Vec<&'static dyn Scenario> = if request.scenarios.is_empty() {
        SCENARIOS.iter().copied().filter(|s| s.seeded().is_some()).collect()
    } else {
        request.scenarios.iter().map(|name| scenario::find(name)).collect::<Result<_>>()?
    };
    preset::check_settings(&preset::with_programs(&scenarios, request), &request.set)?;
    if request.preset.is_some() && !request.target.vm.kernel.is_empty() {
        // A preset's own conditions age and fill, which guests do not do yet.
        return Err(Error::usage("--preset with --kernel: run the seeds' scenarios by name with --kernel instead"));
    }
    let mut harness = super::harness_plan(&request.target, ColdRead::AsAsked)?;
    super::check_images_repeated(&request.target, request.repeat)?;
    let mut jobs = Vec::new();
    for s in &scenarios {
        let settings = preset::settings_for(*s, request, machine)?;
        let param_sets = params::expand(s.params(), &settings, request.scale).map_err(Error::usage)?;
        let targets = if request.preset.is_some() { preset::with_variants(&harness.targets, *s) } else { harness.targets.clone() };
        let mut conditions = harness.conditions.clone();
        if request.preset.is_some() && !preset::judges_crash_states(*s) {
            for c in &mut conditions {
                c.crash = None;
            }
            conditions.dedup();
        }
        if request.preset.is_some() {
            for extra in preset::preset_conditions(*s, request, machine)? {
                if !conditions.contains(&extra) {
                    conditions.push(extra);
                }
            }
        }
        let job = Job { scenario: *s, param_sets, targets, conditions };
        job.check(&harness, machine)?;
        // The seed's programs, on its places and under its conditions.
        let programs: Vec<Job> = preset::programs_of(*s, request, &scenarios)?
            .into_iter()
            .map(|(scenario, param_sets)| Job { scenario, param_sets, ..job.clone() })
            .collect();
        jobs.push(job);
        for program in programs {
            program.check(&harness, machine)?;
            jobs.push(program);
        }
    }
    // The run checks, locks and makes what any job's conditions need.
    for job in &jobs {
        for c in &job.conditions {
            if !harness.conditions.contains(c) {
                harness.conditions.push(c.clone());
            }
        }
    }
    if request.preset.is_some() {
        harness.scenario_disks = preset::seed_disks(&scenarios, &request.target);
    }
    let mut targets = harness.targets.clone();
    let mut cases = Vec::new();
    for job in &jobs {
        for params in &job.param_sets {
            let params = params.to_json();
            for target in &job.targets {
                let t = match targets.iter().position(|known| std::sync::Arc::ptr_eq(known, target)) {
                    Some(at) => at,
                    None => {
                        targets.push(target.clone());
                        targets.len() - 1
                    }
                };
                for condition in &job.conditions {
                    let c = harness.conditions.iter().position(|known| known == condition).unwrap_or_default();
                    for repeat in 1..=request.repeat {
                        cases.push(PlannedCase::new(job.scenario.name(), &params, (t, target.label()), (c, condition), repeat));
                    }
                }
            }
        }
    }
    let scenarios = scenarios.iter().map(|s| s.name()).collect();
    Ok(RunPlan { harness, targets, cases, scenarios, verdicts: request.preset == Some(PresetName::Seeds) })
}

/// Refuse (exit 2), before anything is made, `work` of `scenario` on any
/// of `on`'s targets under any of its conditions when the target cannot
/// hold it: its `--size` too small for the work, or for the work after
/// the start's fill; and an image larger than the scratch disk has free,
/// the error `disk` makes of why (the command line's is exit 2, a plan's
/// case run on a smaller machine exit 3).
pub(super) fn check_room(
    scenario: &dyn Scenario,
    work: &dyn Work,
    on: (&[TargetSpec], &[Condition]),
    plan: &Plan,
    machine: &dyn Machine,
    disk: impl Fn(String) -> Error,
) -> Result<()> {
    let (targets, conditions) = on;
    let options: &TargetOptions = &plan.target_options;
    let named = |e: Error| Error::usage(format!("{}: {}", scenario.name(), e.message));
    for target in targets {
        crate::harness::check_room(target, options, work)
            .map_err(|e| Error::usage(format!("{} on {}: {}", scenario.name(), target.label(), e.message)))?;
    }
    for condition in conditions {
        let start = StartPlan::for_condition(plan.start.as_ref(), condition)?;
        if let Some(start) = &start {
            crate::harness::check_start_room(options, start.level(), work).map_err(named)?;
        }
        let level = start.as_ref().map_or(0.0, StartPlan::level);
        for target in targets {
            machine.check_disk(target, options, work, level).map_err(|e| match e.kind {
                crate::error::ErrorKind::Usage => disk(format!("{}: {}", scenario.name(), e.message)),
                _ => e,
            })?;
        }
    }
    Ok(())
}
