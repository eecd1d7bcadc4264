//! `hunt`'s plan: one target under one condition, the axis `--vary`
//! names, and how each point of it is measured (its condition and the
//! seed's comparison as parameter sets). The points are not known in
//! advance — the search picks each from the answers so far — so a hunt
//! has no list of cases; both ends are checked before anything is made.

use super::hunt_axis::{self, Key, Vary};
use super::{Machine, TargetRequest, preset};
use crate::error::{Error, Result};
use crate::harness::{CaseSysctl, ColdRead, Condition, Plan};
use crate::scenario::params::{self, Params, Scale, Setting};
use crate::scenario::{self, Scenario, Seeded};
use crate::site::TargetSpec;

/// What `fslab hunt` was asked, its values read.
#[derive(Debug, Clone)]
pub struct HuntRequest {
    /// The scenario whose seed's claim is hunted.
    pub scenario: String,
    /// Targets and measurement: one target, one condition.
    pub target: TargetRequest,
    /// `--vary KEY=LO..HI`, as given.
    pub vary: String,
    /// `--set`: parameters held at one value.
    pub set: Vec<Setting>,
    /// `--repeat`: each point this many times.
    pub repeat: u32,
    /// `--steps`: the most points measured.
    pub steps: u32,
    /// `--scale`: which defaults.
    pub scale: Scale,
}

/// A hunt's plan.
pub struct HuntPlan {
    /// The harness's plan; its conditions are the axis's two ends, so the
    /// lab checks the machine for both.
    pub harness: Plan,
    /// The seed whose claim is hunted.
    pub seeded: &'static dyn Seeded,
    /// The one target.
    pub target: TargetSpec,
    /// How each point is made.
    pub points: Points,
    /// How many cases the step budget allows.
    pub planned: usize,
    /// Settings of the seed's comparison held at one value
    /// ([`Seeded::hunt_holds`]), in the preset's order.
    pub held: Vec<Held>,
}

/// A setting of the seed's comparison a hunt holds at the claim's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The parameter.
    pub key: &'static str,
    /// The value it is held at.
    pub value: &'static str,
    /// Why the others are left out.
    pub why: &'static str,
}

/// How each point's condition and parameters are made.
pub struct Points {
    /// The scenario.
    pub scenario: &'static dyn Scenario,
    /// What is varied, and its axis.
    pub vary: Vary,
    /// The run's one condition, which each point changes in `vary`'s key.
    pub base: Condition,
    /// The seed's comparison (its settings with several values, unless
    /// `--set`), then the user's `--set`.
    pub settings: Vec<Setting>,
    /// Which defaults.
    pub scale: Scale,
}

impl Points {
    /// The condition and parameters of the point at `value`.
    pub fn at(&self, value: u64) -> std::result::Result<(Condition, Vec<Params>), String> {
        let shown = self.vary.shown(value);
        let mut condition = self.base.clone();
        let mut settings = self.settings.clone();
        match self.vary.key {
            Key::Memory => {
                super::parse_memory(&shown)?;
                condition.memory = Some((shown, value));
            }
            Key::Sysctl => {
                let setting = format!("{}={shown}", self.vary.name).parse()?;
                condition.sysctls.push(CaseSysctl { setting, shown });
            }
            Key::Param(name) => settings.push(Setting { key: name.to_string(), values: vec![shown] }),
            Key::Fill => {
                crate::units::parse_fill(&shown)?;
                condition.fill = Some(shown);
            }
        }
        let sets = params::expand(self.scenario.params(), &settings, self.scale)?;
        for params in &sets {
            self.scenario.check(params)?;
        }
        Ok((condition, sets))
    }
}

/// Plan `fslab hunt` on `machine`.
pub fn plan(request: &HuntRequest, machine: &dyn Machine) -> Result<HuntPlan> {
    let scenario = scenario::find(&request.scenario)?;
    let seeded = scenario.seeded().ok_or_else(|| {
        Error::usage(format!("{} has no seed's claim to hunt: choose a scenario with a seed (see `fslab list`)", scenario.name()))
    })?;
    let vary = hunt_axis::parse(&request.vary, scenario).map_err(Error::usage)?;
    for setting in &request.set {
        preset::check_settings(&[scenario], std::slice::from_ref(setting))?;
        if setting.values.len() > 1 || setting.key == vary.name {
            return Err(Error::usage(format!(
                "--set {}: a hunt holds every parameter at one value and varies only --vary {}",
                setting.key, vary.name
            )));
        }
    }
    if !request.target.vm.kernel.is_empty() {
        return Err(Error::usage("--kernel with hunt: a hunt measures this machine's kernel; run the scenario with --kernel"));
    }
    if request.target.crash_record {
        return Err(Error::usage("--crash-record with hunt: record the cases of one value with run or exec instead"));
    }
    if request.target.crash.is_some() {
        // The oracle brackets where a seed's claim flips once along the
        // axis; "some crash state is bad" is no such claim (on ext4,
        // in-place loses a file in about two runs of three at any file
        // count), and each point would pay for its states.
        return Err(Error::usage(
            "--crash with hunt: a hunt brackets where the seed's claim flips once, and whether some crash state is bad \
             does not flip once along an axis (a lost file is a race that shows in some runs at any value) while each point \
             pays for its states (50-200 ms each); judge the values you want with run --crash --set KEY=A,B,C --repeat 3",
        ));
    }
    // A point is judged on the seed's claim, never on a read-back.
    let mut harness = super::harness_plan(&request.target, ColdRead::Never)?;
    super::check_images_repeated(&request.target, request.repeat)?;
    if harness.targets.len() != 1 {
        return Err(Error::usage("hunt follows one target: give one file system with --fs (run it once per file system)"));
    }
    if harness.conditions.len() != 1 {
        return Err(Error::usage("hunt varies only --vary: give --memory, --sysctl and --fill one value each"));
    }
    let base = harness.conditions[0].clone();
    if vary.key == Key::Memory && base.memory.is_some() {
        return Err(Error::usage("--vary memory and --memory both set the limit: leave --memory out"));
    }
    if vary.key == Key::Fill && !request.target.fill.is_empty() {
        return Err(Error::usage("--vary fill and --fill both set the fill: leave --fill out"));
    }
    if vary.key == Key::Sysctl && harness.sysctls.iter().any(|s| s.key == vary.name) {
        return Err(Error::usage(format!("--vary {0} and --sysctl {0} both set it: leave --sysctl out", vary.name)));
    }
    let target = harness.targets[0].clone();
    // The seed's comparison on the seed's own kind of disk, as the preset.
    harness.scenario_disks = preset::seed_disks(&[scenario], &request.target);
    // Each point measures the seed's comparison (the preset's settings
    // with several values, such as replace-files' two strategies), since
    // the claim is judged across it; the user's --set of the same key wins.
    // Settings that are only evidence beside the claim are held at the
    // claim's value.
    let mut settings: Vec<Setting> = Vec::new();
    let mut held = Vec::new();
    for (key, values) in seeded.preset().settings {
        if values.contains(',') && *key != vary.name && !request.set.iter().any(|s| s.key == *key) {
            match seeded.hunt_holds().iter().find(|(k, _, _)| k == key) {
                Some(&(key, value, why)) => {
                    settings.push(preset::preset_setting(scenario, key, value)?);
                    held.push(Held { key, value, why });
                }
                None => settings.push(preset::preset_setting(scenario, key, values)?),
            }
        }
    }
    settings.extend(request.set.iter().cloned());
    let (lo, hi) = (vary.axis.lo, vary.axis.hi);
    let points = Points { scenario, vary, base, settings, scale: request.scale };
    // Both ends are checked (values, room) before anything is made; the
    // plan's conditions are the ends, so the lab checks the machine for them.
    let mut ends = Vec::new();
    for value in [lo, hi] {
        let (condition, sets) = points.at(value).map_err(|e| Error::usage(format!("--vary {}: {e}", request.vary)))?;
        for params in &sets {
            let work = scenario.work(params);
            super::run::check_room(scenario, work.as_ref(), (std::slice::from_ref(&target), std::slice::from_ref(&condition)), &harness, machine, Error::usage)?;
        }
        ends.push(condition);
    }
    harness.conditions = ends;
    let per_point = points.at(hi).map_or(1, |(_, sets)| sets.len());
    let planned = request.steps as usize * request.repeat as usize * per_point;
    Ok(HuntPlan { harness, seeded, target, points, planned, held })
}
