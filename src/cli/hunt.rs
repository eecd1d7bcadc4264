//! `fslab hunt SCENARIO --vary KEY=LO..HI`: where along one condition or
//! parameter the seed's claim flips. The search is
//! [`crate::harness::hunt`]'s; this file measures its points as cases of
//! one stored run, prints each step as it goes and the bracket at the end.
//! The run's one verdict lists the steps as its places, so `show` and
//! `report` find them again.

use std::collections::BTreeMap;
use std::process::ExitCode;

use super::HuntArgs;
use super::hunt_said::{self as said, Step, StepCase, plural};
use crate::error::{ErrorKind, Result};
use crate::harness::hunt::{self, Again, Judgement, Oracle, Repeat};
use crate::harness::{Condition, Run};
use crate::plan::Host;
use crate::plan::hunt::{HuntPlan, Points};
use crate::plan::hunt_axis::{Key, Vary};
use crate::record::{Case, PlaceVerdict, Status, Verdict};
use crate::scenario::params::{self, Params, Setting};
use crate::scenario::{Scenario, Seeded, WorkSpec};
use crate::site::TargetSpec;

/// Measures a point as cases of the run and judges it with the seed's
/// predicate.
struct Measurer<'a> {
    run: &'a mut Run,
    points: &'a Points,
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
        let line = said::step_line(number, again, &self.points.vary, &step, &place, round_busy, failed.as_deref());
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
    let HuntPlan { harness, seeded, target, points, planned, held } = crate::plan::hunt::plan(&args.request(), &Host)?;
    let (scenario, vary) = (points.scenario, &points.vary);
    // Points are compared with each other: like every run, the hunt holds
    // the machine's sysctl lock, so no other run changes sysctls while its
    // points are measured.
    let mut run = Run::start(harness, super::exec::store(&args.target), &args.target.tag, planned, args.target.progress, None)?;
    let mut fixed = fixed_params(scenario, &args.set);
    let mut holds = String::new();
    for h in &held {
        fixed += &format!(", {} {}", h.key, h.value);
        holds += &format!("; {} held at {}: {}", h.key, h.value, h.why);
    }
    let head = format!("{} on {}{}", scenario.name(), target.label(), fixed);
    run.say(
        &format!(
            "hunt {head}: {} from {} to {}, {} steps {}, stopping {} or after {} steps; {} each (a point whose repeats disagree, that ran busy or that breaks a single flip is measured again as often, once){holds}",
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
    let summary = said::summary(&head, vary, &found, args.repeat, &steps, signal.as_deref());
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
        places: steps.iter().map(|s| step_place(s, &fs, vary)).collect(),
        safety: String::new(),
        programs: Vec::new(),
    };
    let failed = run.cases().iter().any(|c| c.status == Status::Failed);
    let mut params = points.at(vary.axis.lo).map(|(_, sets)| merged(&sets)).unwrap_or_default();
    if matches!(vary.key, Key::Param(_)) {
        params.remove(&vary.name);
    }
    let doc = said::HuntJson::new(
        said::Head { scenario: scenario.name(), seed: seeded.seed(), fs, run: run.lab().id.clone(), params, repeat: args.repeat, steps_budget: args.steps },
        vary,
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
