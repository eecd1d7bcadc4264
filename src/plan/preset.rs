//! What `--preset seeds` adds to a scenario's share of a run: the seed's
//! settings (before the user's `--set`), its own conditions (after the
//! run's) and its variants of a file system (right after it); and the
//! check that every `--set` names a parameter of some chosen scenario.

use std::sync::Arc;

use super::{Machine, RunRequest};
use crate::error::{Error, Result};
use crate::harness::Condition;
use crate::scenario::params::Setting;
use crate::scenario::{PresetCondition, Scenario};
use crate::site::{Scratch, TargetSpec};

/// Every setting must belong to some scenario of `scenarios`.
pub fn check_settings(scenarios: &[&'static dyn Scenario], settings: &[Setting]) -> Result<()> {
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

/// `scenarios` and, with `--preset`, the programs their seeds run beside
/// them ([`programs_of`]): the scenarios whose parameters `--set` may name.
pub(super) fn with_programs(scenarios: &[&'static dyn Scenario], request: &RunRequest) -> Vec<&'static dyn Scenario> {
    let mut out = scenarios.to_vec();
    if request.preset.is_some() {
        let programs = scenarios.iter().filter_map(|s| s.seeded()).flat_map(|s| s.programs().iter().map(|(name, _)| *name));
        for program in programs.filter_map(|name| crate::scenario::find(name).ok()) {
            if !out.iter().any(|s| s.name() == program.name()) {
                out.push(program);
            }
        }
    }
    out
}

/// The settings for one scenario: the preset's comparison (with
/// `--preset`), then the user's `--set`, which wins for the same key.
pub(super) fn settings_for(scenario: &dyn Scenario, request: &RunRequest, machine: &dyn Machine) -> Result<Vec<Setting>> {
    let mut settings: Vec<Setting> = Vec::new();
    if let (Some(_), Some(seeded)) = (&request.preset, scenario.seeded()) {
        // With --crash, the strategies the safety side of the trade is about.
        let crash: &[(&str, &str)] = if request.target.crash.is_some() { seeded.crash_settings() } else { &[] };
        for (key, values) in crash.iter().chain(seeded.preset().settings.iter().filter(|(key, _)| !crash.iter().any(|(k, _)| k == key))) {
            // Read with the `--set` parser, so a preset means what the same
            // words would mean on the command line.
            settings.push(preset_setting(scenario, key, values)?);
        }
        let free = machine.scratch_free_bytes(&request.target.scratch);
        for (key, value) in seeded.preset_sized(free) {
            settings.push(preset_setting(scenario, key, &value)?);
        }
    }
    settings.extend(request.set.iter().cloned());
    Ok(settings)
}

/// One setting of `scenario`'s preset, `key=values`, read as `--set`
/// reads it.
pub(super) fn preset_setting(scenario: &dyn Scenario, key: &str, values: &str) -> Result<Setting> {
    format!("{key}={values}").parse().map_err(|e| Error::failed(format!("the seeds preset of {}: {e}", scenario.name())))
}

/// The programs the preset runs beside `scenario`'s seed, each with its
/// parameter sets: the seed's settings for it, then the user's `--set`.
/// None without `--preset`, and none the user named as a scenario of the
/// run (it runs as they asked).
pub(super) fn programs_of(
    scenario: &dyn Scenario,
    request: &RunRequest,
    named: &[&'static dyn Scenario],
) -> Result<Vec<(&'static dyn Scenario, Vec<crate::scenario::params::Params>)>> {
    let (Some(_), Some(seeded)) = (&request.preset, scenario.seeded()) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (name, preset) in seeded.programs() {
        if named.iter().any(|s| s.name() == *name) {
            continue;
        }
        let program = crate::scenario::find(name)?;
        let mut settings = preset.iter().map(|(key, values)| preset_setting(program, key, values)).collect::<Result<Vec<_>>>()?;
        settings.extend(request.set.iter().cloned());
        let param_sets = crate::scenario::params::expand(program.params(), &settings, request.scale).map_err(Error::usage)?;
        out.push((program, param_sets));
    }
    Ok(out)
}

/// Whether `scenario`'s cases judge crash states under `--preset seeds
/// --crash MODEL`: only a seed about what survives a crash does (replace-
/// files); the others run as without `--crash`, so its cost stays the
/// preset's budget and a mount-heavy seed is not recorded for nothing.
pub(super) fn judges_crash_states(scenario: &dyn Scenario) -> bool {
    scenario.seeded().is_some_and(|s| !s.crash_settings().is_empty())
}

/// The seed's own conditions for one scenario (with `--preset`), read as
/// `--memory` and `--sysctl` read theirs. The user's word wins, as `--set`
/// does: with `--memory` given the preset adds no memory limit, and a
/// preset condition setting a sysctl the user set is left out. Where the
/// machine has no memory controller the preset's limits are left out,
/// said on stderr, rather than the whole preset refused.
pub(super) fn preset_conditions(scenario: &dyn Scenario, request: &RunRequest, machine: &dyn Machine) -> Result<Vec<Condition>> {
    let Some(seeded) = scenario.seeded() else { return Ok(Vec::new()) };
    let target = &request.target;
    let user_keys: Vec<&str> = target.sysctl.iter().flat_map(|l| l.0.iter().map(|s| s.setting.key.as_str())).collect();
    let conditions = seeded.preset().conditions;
    let mut limits = target.memory.is_empty();
    if limits && conditions.iter().any(|c| c.memory.is_some()) {
        if let Err(why) = machine.memory_limits() {
            eprintln!("fslab: the seeds preset runs {} without its memory limits: {why}", scenario.name());
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
        let memory = preset.memory.map(super::parse_memory).transpose()?;
        if let Some(fill) = preset.fill {
            crate::units::parse_fill(fill)?;
        }
        if let Some(age) = preset.age {
            age.parse::<crate::age::AgeSpec>()?;
        }
        let mut sysctls = Vec::new();
        for (key, value) in preset.sysctls {
            sysctls.extend(super::parse_sysctl_list(&format!("{key}={value}"))?.0);
        }
        let (age, fill) = (preset.age.map(str::to_string), preset.fill.map(str::to_string));
        out.push(Condition { memory, sysctls, age, fill, ..Condition::default() });
    }
    Ok(out)
}

/// The drives `scenarios` are modelled on instead of the run's: each
/// seed's own (where its report names one), for it and its programs,
/// unless the user named a drive (`--disk`, `--disk-profile`), whose word
/// wins as `--set`'s does.
pub(super) fn seed_disks(scenarios: &[&dyn Scenario], target: &super::TargetRequest) -> Vec<(String, crate::model::Profile)> {
    if target.disk.is_some() || target.disk_profile.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for s in scenarios {
        let Some((seeded, disk)) = s.seeded().and_then(|seeded| Some((seeded, seeded.preset().disk?))) else { continue };
        let profile = super::disk::seed_disk(disk);
        out.push((s.name().to_string(), profile.clone()));
        // Its programs run on the seed's drive too.
        out.extend(seeded.programs().iter().map(|(name, _)| (name.to_string(), profile.clone())));
    }
    out
}

/// The run's targets with the preset's variants of a file system placed
/// right after it (only for file systems the run makes scratch).
pub(super) fn with_variants(targets: &[TargetSpec], scenario: &dyn Scenario) -> Vec<TargetSpec> {
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
    use crate::scenario::{self, SCENARIOS};

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

    #[test]
    fn each_seed_is_modelled_on_the_disk_its_report_names_unless_the_run_names_one() {
        let all: Vec<&dyn Scenario> = SCENARIOS.to_vec();
        let mut target = crate::plan::tests::target(&[]);
        let disks: Vec<(String, String)> = seed_disks(&all, &target).into_iter().map(|(s, p)| (s, p.name)).collect();
        let named = |s: &str, d: &str| (s.to_string(), d.to_string());
        assert_eq!(
            disks,
            [
                named("mmap-fill", "hdd-7200-2009"),
                named("replace-files", "laptop-5400"),
                named("dpkg", "laptop-5400"),
                named("direct-stream", "scsi-15k-2004")
            ]
        );
        target.disk = Some("ssd-plp".into());
        assert!(seed_disks(&all, &target).is_empty(), "the run's --disk wins");
    }
}
