//! `fslab run SCENARIO...`: the matrix of file systems × parameter values
//! × repeats, each case measured on a fresh target; one table per
//! scenario with the seed's own figures first. `--preset seeds` runs each
//! seed's own comparison and ends with a verdict per seed.

use std::process::ExitCode;
use std::sync::Arc;

use super::RunArgs;
use crate::error::{Error, Result};
use crate::harness::{Condition, Run};
use crate::record::{Case, Verdict};
use crate::runner::WorkSpec;
use crate::scenario::params::{self, Params, Setting};
use crate::scenario::{self, PresetCondition, SCENARIOS, Scenario};
use crate::site::{Scratch, TargetSpec};

/// One scenario's share of the run: its parameter sets and targets.
struct Job {
    scenario: &'static dyn Scenario,
    param_sets: Vec<Params>,
    targets: Vec<TargetSpec>,
    /// The run's conditions, then (with `--preset`) the seed's own.
    conditions: Vec<Condition>,
}

/// Run `fslab run`.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let scenarios: Vec<&'static dyn Scenario> = if args.scenarios.is_empty() {
        SCENARIOS.to_vec()
    } else {
        args.scenarios.iter().map(|name| scenario::find(name)).collect::<Result<_>>()?
    };
    check_settings(&scenarios, &args.set)?;
    if args.preset.is_some() && !args.target.vm.kernel.is_empty() {
        // A preset's own conditions age and fill, which guests do not do yet.
        return Err(Error::usage("--preset with --kernel: run the seeds' scenarios by name with --kernel instead"));
    }
    let request = args.target.request();
    let mut plan = crate::plan::harness_plan(&request, false)?;
    crate::plan::check_images_repeated(&request, args.repeat)?;
    // Every value is parsed, and every scenario refuses what it cannot do,
    // before anything is made.
    let mut jobs = Vec::new();
    for s in &scenarios {
        let settings = settings_for(*s, args)?;
        let param_sets = params::expand(s.params(), &settings, args.scale).map_err(Error::usage)?;
        let targets = if args.preset.is_some() { with_variants(&plan.targets, *s) } else { plan.targets.clone() };
        let mut conditions = plan.conditions.clone();
        if args.preset.is_some() {
            for extra in preset_conditions(*s, args)? {
                if !conditions.contains(&extra) {
                    conditions.push(extra);
                }
            }
        }
        for p in &param_sets {
            s.check(p).map_err(|why| Error::usage(format!("{}: {why}", s.name())))?;
            let work = s.work(p);
            for target in &targets {
                crate::harness::check_room(target, &plan.target_options, work.as_ref())
                    .map_err(|e| Error::usage(format!("{} on {}: {}", s.name(), target.label(), e.message)))?;
            }
            for condition in &conditions {
                let start = crate::harness::StartPlan::for_condition(plan.start.as_ref(), condition)?;
                if let Some(start) = &start {
                    crate::harness::check_start_room(&plan.target_options, start.level(), work.as_ref())
                        .map_err(|e| Error::usage(format!("{}: {}", s.name(), e.message)))?;
                }
                let level = start.as_ref().map_or(0.0, crate::harness::StartPlan::level);
                for target in &targets {
                    crate::harness::check_disk(target, &plan.target_options, work.as_ref(), level)
                        .map_err(|e| Error::usage(format!("{}: {}", s.name(), e.message)))?;
                }
            }
        }
        jobs.push(Job { scenario: *s, param_sets, targets, conditions });
    }
    // The run checks, locks and makes what any job's conditions need.
    for job in &jobs {
        for c in &job.conditions {
            if !plan.conditions.contains(c) {
                plan.conditions.push(c.clone());
            }
        }
    }

    let total: usize = jobs.iter().map(|j| j.param_sets.len() * j.targets.len() * j.conditions.len()).sum::<usize>()
        * args.repeat as usize;
    let mut run = Run::start(plan, super::exec::store(&args.target), &args.target.tag, total, args.target.progress)?;
    'all: for job in &jobs {
        for params in &job.param_sets {
            let spec = WorkSpec { scenario: job.scenario.name().into(), params: params.to_json() };
            for target in &job.targets {
                for condition in &job.conditions {
                    for repeat in 1..=args.repeat {
                        if run.interrupted() {
                            break 'all;
                        }
                        let what = format!("{} on {}", job.scenario.name(), condition.place(&target.label()));
                        let mut work = job.scenario.work(params);
                        run.measure(target, &spec, condition, repeat, &what, work.as_mut());
                    }
                }
            }
        }
    }
    let verdicts: Vec<Verdict> = if args.preset.is_some() {
        jobs.iter()
            .filter_map(|job| {
                let seeded = job.scenario.seeded()?;
                let mine: Vec<&Case> = run.cases().iter().filter(|c| c.scenario == job.scenario.name()).collect();
                Some(seeded.verdict(&mine))
            })
            .collect()
    } else {
        Vec::new()
    };
    super::exec::print_run(run.finish(verdicts)?, &args.target, args.wide)
}

/// Every setting must belong to some chosen scenario.
fn check_settings(scenarios: &[&'static dyn Scenario], settings: &[Setting]) -> Result<()> {
    for setting in settings {
        if !scenarios.iter().any(|s| s.params().iter().any(|p| p.name == setting.key)) {
            let names: Vec<&str> = scenarios.iter().map(|s| s.name()).collect();
            let keys: Vec<&str> = scenarios.iter().flat_map(|s| s.params().iter().map(|p| p.name)).collect();
            return Err(Error::usage(format!(
                "--set {}: no parameter `{}` in {}{} (see `fslab list`)",
                setting.key,
                setting.key,
                names.join(", "),
                crate::error::did_you_mean(&setting.key, &keys)
            )));
        }
    }
    Ok(())
}

/// The settings for one scenario: the preset's comparison (with
/// `--preset`), then the user's `--set`, which wins for the same key.
fn settings_for(scenario: &dyn Scenario, args: &RunArgs) -> Result<Vec<Setting>> {
    let mut settings: Vec<Setting> = Vec::new();
    if let (Some(_), Some(seeded)) = (&args.preset, scenario.seeded()) {
        for (key, values) in seeded.preset().settings {
            // Read with the `--set` parser, so a preset means what the same
            // words would mean on the command line.
            let setting = format!("{key}={values}")
                .parse()
                .map_err(|e| Error::failed(format!("the seeds preset of {}: {e}", scenario.name())))?;
            settings.push(setting);
        }
        let free = scratch_free_bytes(&args.target.scratch);
        for (key, value) in seeded.preset_sized(free) {
            let setting = format!("{key}={value}")
                .parse()
                .map_err(|e| Error::failed(format!("the seeds preset of {}: {e}", scenario.name())))?;
            settings.push(setting);
        }
    }
    settings.extend(args.set.iter().cloned());
    Ok(settings)
}

/// The bytes free on the file system that will hold the scratch folder
/// (its nearest existing folder's), or 0 when none can be read.
fn scratch_free_bytes(scratch: &std::path::Path) -> u64 {
    scratch
        .ancestors()
        .find_map(|at| rustix::fs::statvfs(at).ok())
        .map_or(0, |v| v.f_bavail.saturating_mul(v.f_frsize))
}

/// The seed's own conditions for one scenario (with `--preset`), read as
/// `--memory` and `--sysctl` read theirs. The user's word wins, as `--set`
/// does: with `--memory` given the preset adds no memory limit, and a
/// preset condition setting a sysctl the user set is left out. Where the
/// machine has no memory controller the preset's limits are left out,
/// said on stderr, rather than the whole preset refused.
fn preset_conditions(scenario: &dyn Scenario, args: &RunArgs) -> Result<Vec<Condition>> {
    let Some(seeded) = scenario.seeded() else { return Ok(Vec::new()) };
    let user_keys: Vec<&str> = args.target.sysctl.iter().flat_map(|l| l.0.iter().map(|s| s.setting.key.as_str())).collect();
    let conditions = seeded.preset().conditions;
    let mut limits = args.target.memory.is_empty();
    if limits && conditions.iter().any(|c| c.memory.is_some()) {
        if let Err(e) = crate::ledger::cgroup::memory_controller() {
            eprintln!("fslab: the seeds preset runs {} without its memory limits: {}", scenario.name(), e.message);
            limits = false;
        }
    }
    read_preset_conditions(conditions, limits, &user_keys)
        .map_err(|e| Error::failed(format!("the seeds preset of {}: {e}", scenario.name())))
}

/// A preset's conditions as the run's: memory limits only if `limits`,
/// none that sets one of `user_keys`.
fn read_preset_conditions(
    conditions: &[PresetCondition],
    limits: bool,
    user_keys: &[&str],
) -> std::result::Result<Vec<Condition>, String> {
    let mut out = Vec::new();
    for preset in conditions {
        if (preset.memory.is_some() && !limits) || preset.sysctls.iter().any(|(key, _)| user_keys.contains(key)) {
            continue;
        }
        let memory = preset.memory.map(crate::plan::parse_memory).transpose()?;
        if let Some(fill) = preset.fill {
            crate::units::parse_fill(fill)?;
        }
        if let Some(age) = preset.age {
            age.parse::<crate::age::AgeSpec>()?;
        }
        let mut sysctls = Vec::new();
        for (key, value) in preset.sysctls {
            sysctls.extend(crate::plan::parse_sysctl_list(&format!("{key}={value}"))?.0);
        }
        let (age, fill) = (preset.age.map(str::to_string), preset.fill.map(str::to_string));
        out.push(Condition { memory, sysctls, age, fill, ..Condition::default() });
    }
    Ok(out)
}

/// The run's targets with the preset's variants of a file system placed
/// right after it (only for file systems the run makes scratch).
fn with_variants(targets: &[TargetSpec], scenario: &dyn Scenario) -> Vec<TargetSpec> {
    let variants = scenario.seeded().map(|s| s.preset().variants).unwrap_or(&[]);
    let mut out = Vec::new();
    for spec in targets {
        out.push(spec.clone());
        if let Some(fs) = spec.scratch_fs() {
            for v in variants.iter().filter(|v| v.fs == fs) {
                out.push(Arc::new(Scratch {
                    fs: v.fs,
                    label: Some(v.label.to_string()),
                    mkfs_args: v.mkfs_args.iter().map(|a| a.to_string()).collect(),
                    mount_opts: v.mount_opts.map(String::from),
                }));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(conditions: &[Condition]) -> Vec<String> {
        conditions.iter().map(|c| c.place("xfs")).collect()
    }

    #[test]
    fn presets_add_memory_around_mmap_fill_s_file_early_writeback_and_an_aged_start_for_create_file() {
        let mmap_fill = scenario::find("mmap-fill").unwrap().seeded().unwrap().preset().conditions;
        let all = read_preset_conditions(mmap_fill, true, &[]).unwrap();
        assert_eq!(places(&all), ["xfs@120M", "xfs@160M", "xfs@vm.dirty_background_bytes=32M"]);
        assert_eq!(all[2].sysctls[0].setting.value, (32u64 << 20).to_string());
        // The user's --memory, or the same sysctl, wins.
        let user = read_preset_conditions(mmap_fill, false, &["vm.dirty_background_bytes"]).unwrap();
        assert!(user.is_empty(), "{:?}", places(&user));
        // create-file's seed adds an aged, 80%-full start; the others none.
        let create_file = scenario::find("create-file").unwrap().seeded().unwrap().preset().conditions;
        let aged = read_preset_conditions(create_file, true, &[]).unwrap();
        assert_eq!(places(&aged), ["xfs@age=churn,fill=80%"]);
        for s in SCENARIOS.iter().filter(|s| !["mmap-fill", "create-file"].contains(&s.name())) {
            let conditions = s.seeded().map(|seeded| seeded.preset().conditions).unwrap_or(&[]);
            assert!(conditions.is_empty(), "{}", s.name());
        }
    }
}
