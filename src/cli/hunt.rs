//! `fslab hunt SCENARIO --vary KEY=LO..HI`: where along one condition or
//! parameter the seed's claim flips. The search is
//! [`crate::harness::hunt`]'s; this file measures its points as cases of
//! one stored run, prints each step as it goes and the bracket at the end.
//! The run's one verdict lists the steps as its places, so `show` and
//! `report` find them again.

use std::collections::BTreeMap;
use std::process::ExitCode;

use super::HuntArgs;
use super::hunt_axis::{self, Key, Vary};
use super::hunt_said::{self as said, Step, StepCase, plural};
use crate::error::{Error, ErrorKind, Result};
use crate::harness::hunt::{self, Again, Judgement, Oracle, Repeat};
use crate::harness::{CaseSysctl, Condition, Run};
use crate::record::{Case, PlaceVerdict, Status, Verdict};
use crate::scenario::WorkSpec;
use crate::scenario::params::{self, Params, Setting};
use crate::scenario::{self, Scenario, Seeded};
use crate::site::TargetSpec;

/// Measures a point as cases of the run and judges it with the seed's
/// predicate.
struct Measurer<'a> {
    run: &'a mut Run,
    points: &'a Points<'a>,
    seeded: &'static dyn Seeded,
    target: TargetSpec,
    at: BTreeMap<u64, Vec<usize>>,
    steps: Vec<Step>,
    json: bool,
}

impl Measurer<'_> {
    /// The claim judged on `cases`: the place's verdict, if any.
    fn judge(&self, cases: &[&Case]) -> Option<PlaceVerdict> {
        self.seeded.verdict(cases).places.into_iter().next()
    }

    /// Measure `repeats` more repeats of `value`, stopping at the first
    /// failed case or an interruption.
    fn measure_cases(&mut self, value: u64, repeats: u32, condition: &Condition, sets: &[Params]) {
        let shown = self.points.vary.shown(value);
        let done = self.at.get(&value).map_or(0, |ix| ix.iter().map(|&i| self.run.cases()[i].repeat).max().unwrap_or(0));
        for repeat in done + 1..=done + repeats {
            for params in sets {
                if self.run.interrupted() {
                    return;
                }
                let spec = WorkSpec { scenario: self.points.scenario.name().into(), params: params.to_json() };
                let what = format!("{} on {}, {} {shown}", self.points.scenario.name(), self.target.label(), self.points.vary.name);
                let mut work = self.points.scenario.work(params);
                self.run.measure(&self.target, &spec, condition, repeat, &what, work.as_mut());
                let index = self.run.cases().len() - 1;
                self.at.entry(value).or_default().push(index);
                if self.run.cases()[index].status == Status::Failed {
                    return;
                }
            }
        }
    }
}

impl Oracle for Measurer<'_> {
    fn measure(&mut self, value: u64, repeats: u32, again: Option<Again>) -> Judgement {
        let unjudged = Judgement { shows: None, figure: None, repeats: Vec::new(), failed: None };
        let Ok((condition, sets)) = self.points.at(value) else { return unjudged };
        let before = self.at.get(&value).map_or(0, Vec::len);
        self.measure_cases(value, repeats, &condition, &sets);
        // Measured while interrupted: the search sets it aside, unsaid.
        if self.run.interrupted() {
            return unjudged;
        }
        let cases: Vec<&Case> = self.at.get(&value).map(|ix| ix.iter().map(|&i| &self.run.cases()[i]).collect()).unwrap_or_default();
        let round = &cases[before.min(cases.len())..];
        // Each repeat judged on its own: its cases, one per compared set.
        let mut each: Vec<StepCase> = Vec::new();
        let mut quiet: Vec<&Case> = Vec::new();
        for c in &cases {
            if each.iter().any(|e| e.repeat == c.repeat) {
                continue;
            }
            let of_repeat: Vec<&Case> = cases.iter().copied().filter(|o| o.repeat == c.repeat).collect();
            let own = self.judge(&of_repeat);
            let failed = of_repeat.iter().find(|o| o.status == Status::Failed);
            let busy = of_repeat.iter().find_map(|o| o.busy.clone());
            if busy.is_none() {
                quiet.extend(&of_repeat);
            }
            each.push(StepCase {
                repeat: c.repeat,
                status: if failed.is_some() { Status::Failed } else { Status::Ok },
                error: failed.and_then(|o| o.error.clone()),
                busy,
                shows: own.as_ref().and_then(|p| p.shows),
                value_of_figure: own.and_then(|p| p.value),
            });
        }
        // The quiet repeats decide when any was measured.
        let place = self.judge(if quiet.is_empty() { &cases } else { &quiet });
        let failed = each.iter().find(|e| e.status == Status::Failed).map(|e| e.error.clone().unwrap_or_else(|| "no error recorded".into()));
        let place = place.unwrap_or_else(|| PlaceVerdict {
            target: self.target.label(),
            fs: self.target.label(),
            conditions: BTreeMap::new(),
            shows: None,
            figure: String::new(),
            value: None,
            against: None,
            evidence: "no case measured".into(),
            ..Default::default()
        });
        let label = match self.points.vary.key {
            Key::Param(name) => format!("{} {name}={}", place.target, self.points.vary.shown(value)),
            _ => place.target.clone(),
        };
        let failed_step = failed.is_some();
        let step = Step {
            value,
            shown: self.points.vary.shown(value),
            place: label,
            shows: if failed_step { None } else { place.shows },
            mixed: false,
            again: None,
            ran_busy: false,
            busy: false,
            figure: place.figure.clone(),
            value_of_figure: if failed_step { None } else { place.value },
            evidence: match &failed {
                Some(error) => format!("a case failed: {error}"),
                None => place.evidence.clone(),
            },
            cases: each,
        };
        let number = self.steps.iter().position(|s| s.value == value).unwrap_or(self.steps.len()) + 1;
        let round_busy = round.iter().find_map(|c| c.busy.as_deref());
        let line = said::step_line(number, again, self.points.vary, &step, &place, round_busy, failed.as_deref());
        self.run.say(&line, self.json);
        let judgement = Judgement {
            shows: step.shows,
            figure: step.value_of_figure,
            repeats: step.cases.iter().map(|c| Repeat { shows: c.shows, busy: c.busy.is_some() }).collect(),
            failed,
        };
        match self.steps.iter_mut().find(|s| s.value == value) {
            Some(old) => *old = step,
            None => self.steps.push(step),
        }
        judgement
    }

    fn stopped(&self) -> bool {
        self.run.interrupted()
    }
}

/// Run `fslab hunt`.
pub fn run(args: &HuntArgs) -> Result<ExitCode> {
    let scenario = scenario::find(&args.scenario)?;
    let seeded = scenario.seeded().ok_or_else(|| {
        Error::usage(format!("{} has no seed's claim to hunt: choose a scenario with a seed (see `fslab list`)", scenario.name()))
    })?;
    let vary = hunt_axis::parse(&args.vary, scenario).map_err(Error::usage)?;
    for setting in &args.set {
        if !scenario.params().iter().any(|p| p.name == setting.key) {
            let keys: Vec<&str> = scenario.params().iter().map(|p| p.name).collect();
            return Err(Error::usage(format!(
                "--set {}: no parameter `{}` in {}{} (see `fslab list`)",
                setting.key,
                setting.key,
                scenario.name(),
                crate::error::did_you_mean(&setting.key, &keys)
            )));
        }
        if setting.values.len() > 1 || setting.key == vary.name {
            return Err(Error::usage(format!(
                "--set {}: a hunt holds every parameter at one value and varies only --vary {}",
                setting.key, vary.name
            )));
        }
    }
    if !args.target.vm.kernel.is_empty() {
        return Err(Error::usage("--kernel with hunt: a hunt measures this machine's kernel; run the scenario with --kernel"));
    }
    if args.target.crash_record {
        return Err(Error::usage("--crash-record with hunt: record the cases of one value with run or exec instead"));
    }
    let mut plan = super::plan::plan(&args.target, false)?;
    super::plan::check_images_repeated(&args.target, args.repeat)?;
    if plan.targets.len() != 1 {
        return Err(Error::usage("hunt follows one target: give one file system with --fs (run it once per file system)"));
    }
    if plan.conditions.len() != 1 {
        return Err(Error::usage("hunt varies only --vary: give --memory, --sysctl and --fill one value each"));
    }
    let base = plan.conditions[0].clone();
    if vary.key == Key::Memory && base.memory.is_some() {
        return Err(Error::usage("--vary memory and --memory both set the limit: leave --memory out"));
    }
    if vary.key == Key::Fill && !args.target.fill.is_empty() {
        return Err(Error::usage("--vary fill and --fill both set the fill: leave --fill out"));
    }
    if vary.key == Key::Sysctl && plan.sysctls.iter().any(|s| s.key == vary.name) {
        return Err(Error::usage(format!("--vary {0} and --sysctl {0} both set it: leave --sysctl out", vary.name)));
    }
    let target = plan.targets[0].clone();
    // Each point measures the seed's comparison (the preset's settings
    // with several values, such as replace-files' two strategies), since
    // the claim is judged across it; the user's --set of the same key wins.
    let mut settings: Vec<Setting> = Vec::new();
    for (key, values) in seeded.preset().settings {
        if values.contains(',') && *key != vary.name && !args.set.iter().any(|s| s.key == *key) {
            settings.push(format!("{key}={values}").parse().map_err(|e| Error::failed(format!("the seeds preset of {}: {e}", scenario.name())))?);
        }
    }
    settings.extend(args.set.iter().cloned());
    let points = Points { scenario, vary: &vary, base, settings, scale: args.scale };
    // Both ends are checked (values, room) before anything is made; the
    // plan's conditions are the ends, so the lab checks the machine for them.
    let mut ends = Vec::new();
    for value in [vary.axis.lo, vary.axis.hi] {
        let (condition, sets) = points.at(value).map_err(|e| Error::usage(format!("--vary {}: {e}", args.vary)))?;
        for params in &sets {
            let work = scenario.work(params);
            crate::harness::check_room(&target, &plan.target_options, work.as_ref())
                .map_err(|e| Error::usage(format!("{} on {}: {}", scenario.name(), target.label(), e.message)))?;
            let start = crate::harness::StartPlan::for_condition(plan.start.as_ref(), &condition)?;
            if let Some(start) = &start {
                crate::harness::check_start_room(&plan.target_options, start.level(), work.as_ref())
                    .map_err(|e| Error::usage(format!("{}: {}", scenario.name(), e.message)))?;
            }
            let level = start.as_ref().map_or(0.0, crate::harness::StartPlan::level);
            crate::harness::check_disk(&target, &plan.target_options, work.as_ref(), level)
                .map_err(|e| Error::usage(format!("{}: {}", scenario.name(), e.message)))?;
        }
        ends.push(condition);
    }
    plan.conditions = ends;
    // Points are compared with each other: like every run, the hunt holds
    // the machine's sysctl lock, so no other run changes sysctls while its
    // points are measured.
    let per_point = points.at(vary.axis.hi).map_or(1, |(_, sets)| sets.len());
    let planned = args.steps as usize * args.repeat as usize * per_point;
    let mut run = Run::start(plan, super::exec::store(&args.target), &args.target.tag, planned, args.target.progress)?;
    let fixed = fixed_params(scenario, &args.set);
    let head = format!("{} on {}{}", scenario.name(), target.label(), fixed);
    run.say(
        &format!(
            "hunt {head}: {} from {} to {}, {} steps {}, stopping {} or after {} steps; {} each (a point whose repeats disagree, that ran busy or that breaks a single flip is measured again as often, once)",
            vary.name,
            vary.said(vary.axis.lo),
            vary.said(vary.axis.hi),
            if vary.axis.scale == hunt::Scale::Geometric { "geometric" } else { "linear" },
            match vary.start {
                hunt::Start::FromHigh => "down from the high end (measuring the low end only if needed)",
                hunt::Start::FromLow => "up from the low end (measuring the high end only if needed)",
                hunt::Start::BothEnds => "after both ends",
            },
            vary.axis.tolerance(),
            args.steps,
            plural(args.repeat, "repeat")
        ),
        args.target.json,
    );
    let mut measurer = Measurer {
        run: &mut run,
        points: &points,
        seeded,
        target,
        at: BTreeMap::new(),
        steps: Vec::new(),
        json: args.target.json,
    };
    let found = hunt::hunt(&vary.axis, args.steps, args.repeat, vary.start, &mut measurer);
    let mut steps = std::mem::take(&mut measurer.steps);
    let fs = measurer.target.label();
    // What the search knows of each point: why it was measured again, and
    // whether it ran busy.
    for step in &mut steps {
        if let Some(point) = found.points.iter().find(|p| p.value == step.value) {
            (step.mixed, step.again, step.ran_busy, step.busy) = (point.mixed, point.again.map(hunt::Again::as_str), point.ran_busy, point.busy);
        } else {
            step.ran_busy = step.cases.iter().any(|c| c.busy.is_some());
        }
    }
    let signal = crate::interrupt::pending().map(crate::interrupt::signal_name);
    let summary = said::summary(&head, &vary, &found, args.repeat, &steps, signal.as_deref());
    run.say(&summary, args.target.json);
    if !run.interrupted() {
        let measured = run.cases().len();
        run.set_planned(measured);
    }
    let verdict = Verdict {
        scenario: scenario.name().into(),
        seed: seeded.seed().into(),
        shows: if steps.iter().any(|s| s.shows == Some(true)) {
            Some(true)
        } else if steps.iter().any(|s| s.shows == Some(false)) {
            Some(false)
        } else {
            None
        },
        evidence: summary.clone(),
        claim: String::new(),
        places: steps.iter().map(|s| step_place(s, &fs, &vary)).collect(),
    };
    let failed = run.cases().iter().any(|c| c.status == Status::Failed);
    let mut params = points.at(vary.axis.lo).map(|(_, sets)| merged(&sets)).unwrap_or_default();
    if matches!(vary.key, Key::Param(_)) {
        params.remove(&vary.name);
    }
    let doc = said::HuntJson::new(
        said::Head { scenario: scenario.name(), seed: seeded.seed(), fs, run: run.lab().id.clone(), params, repeat: args.repeat, steps_budget: args.steps },
        &vary,
        &found,
        steps,
        summary,
    );
    // An interrupted hunt is stored and released like any run, then says
    // what it found so far (with --json, its document) before dying of
    // the signal.
    let done = match run.finish(vec![verdict]) {
        Ok(done) => done,
        Err(e) => {
            if args.target.json {
                super::print(&crate::json_document("hunt", &doc))?;
            }
            return Err(e);
        }
    };
    if args.target.json {
        super::print(&crate::json_document("hunt", &doc))?;
    } else if let Ok(Some(location)) = &done.stored {
        super::print(format!("stored as run {} in {location}\n", done.record.id).as_bytes())?;
    }
    if let Err(e) = &done.released {
        eprintln!("fslab: {e}");
    }
    if let Err(e) = done.stored {
        eprintln!("fslab: {e}");
        return Ok(e.exit_code());
    }
    Ok(if failed || done.released.is_err() { ExitCode::from(ErrorKind::Failed.exit_code()) } else { ExitCode::SUCCESS })
}

/// How each point's condition and parameters are made.
struct Points<'a> {
    scenario: &'static dyn Scenario,
    vary: &'a Vary,
    base: Condition,
    settings: Vec<Setting>,
    scale: params::Scale,
}

impl Points<'_> {
    /// The condition and parameters of the point at `value`.
    fn at(&self, value: u64) -> std::result::Result<(Condition, Vec<Params>), String> {
        let shown = self.vary.shown(value);
        let mut condition = self.base.clone();
        let mut settings = self.settings.clone();
        match self.vary.key {
            Key::Memory => {
                super::plan::parse_memory(&shown)?;
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

/// The parameter sets' values, a key with several (the seed's
/// comparison) as a list.
fn merged(sets: &[Params]) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for set in sets {
        for (key, value) in set.to_json() {
            match out.get_mut(&key) {
                None => {
                    out.insert(key, value);
                }
                Some(serde_json::Value::Array(list)) if !list.contains(&value) => list.push(value),
                Some(serde_json::Value::Array(_)) => {}
                Some(old) if *old != value => *old = serde_json::Value::Array(vec![old.clone(), value]),
                Some(_) => {}
            }
        }
    }
    out
}

/// The parameters the user held, for the headline: ", size 256 MiB".
fn fixed_params(scenario: &dyn Scenario, settings: &[Setting]) -> String {
    let mut out = String::new();
    for s in settings {
        let spec = scenario.params().iter().find(|p| p.name == s.key);
        let value = &s.values[0];
        let said = match (spec.map(|p| p.kind), crate::units::parse_bytes(value)) {
            (Some(params::ParamKind::Size), Ok(n)) => crate::units::bytes_short(n),
            _ => value.clone(),
        };
        out += &format!(", {} {said}", s.key);
    }
    out
}

/// A step as a place of the run's verdict; a parameter step names its
/// value among the conditions, so `report` can draw it on the axis.
fn step_place(step: &Step, fs: &str, vary: &Vary) -> PlaceVerdict {
    let mut conditions = BTreeMap::new();
    conditions.insert(vary.name.clone(), step.shown.clone());
    PlaceVerdict {
        target: step.place.clone(),
        fs: fs.to_string(),
        conditions,
        shows: step.shows,
        figure: step.figure.clone(),
        value: step.value_of_figure,
        against: None,
        evidence: step.evidence.clone(),
        ..Default::default()
    }
}
