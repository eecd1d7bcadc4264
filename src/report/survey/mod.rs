//! A survey across kernels: the cases of runs whose kernel varies
//! (`run --kernel A,B,host`) regrouped so that each deciding figure can be
//! read against the kernel version. The report draws it (`chart`, and the
//! page's "Across kernels" section) and `show` prints it as a table.
//!
//! The design decision: a case's kernel is its `kernel` condition (the
//! release), so the place without it (`ext4`, `ext4@vm=512M`) and the
//! parameters that vary within the scenario name a *series*, and every
//! series has a cell per kernel, the kernels in version order
//! ([`release_order`]). Each figure is then judged once, the same way for
//! every reader: [`Change::Same`] (every value of each series equal under
//! every kernel: said in a line, not drawn), [`Change::Differs`] (some
//! series' repeats under two kernels lie apart, or it is measured under
//! some kernels and not others: drawn first), or [`Change::WithinRepeats`]
//! (the values move, but no two kernels' repeats lie apart).

pub mod chart;
#[cfg(test)]
pub(crate) mod tests;

use crate::record::catalog::{CHART_MARKS, EXEC_CHART};
use crate::record::release::release_order;
use crate::record::{Better, Case, Catalog, Figure, Kind, RunRecord, Status};
use crate::report::bars::{Spread, spread};
use crate::report::markup::param_value;

/// The condition a case's kernel release is recorded under.
pub const KERNEL: &str = "kernel";

/// One kernel of the survey.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// Its release, as the case recorded it (`6.1.0-57-amd64`).
    pub release: String,
    /// Whether it is the machine's own kernel (a case with no guest).
    pub host: bool,
    /// The kernel as `--kernel` gave it for a guest (`debian:6.1.0-57`, an
    /// image's path), from its first case; none on the host.
    pub given: Option<String>,
    /// Whether some of its cases ran under emulation (TCG).
    pub emulated: bool,
}

impl Kernel {
    /// Its release, `(host)` after the host's: `6.18.44 (host)`.
    pub fn label(&self) -> String {
        if self.host { format!("{} (host)", self.release) } else { self.release.clone() }
    }
}

/// One repeat's value of a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeat {
    /// The value, in the figure's base unit.
    pub value: f64,
    /// The case's repeat number.
    pub repeat: u32,
    /// Whether it is a timing an emulator measured (a TCG guest's).
    pub emulated: bool,
}

/// One series' cases under one kernel, and what they measured of one
/// figure.
#[derive(Debug, Clone, Default)]
pub struct Cell<'a> {
    /// The cases (every repeat, failed ones too); empty when the series
    /// did not run under this kernel.
    pub cases: Vec<&'a Case>,
    /// The repeats that measured the figure.
    pub repeats: Vec<Repeat>,
    /// Why the other repeats lack it, each reason once.
    pub missing: Vec<String>,
}

impl Cell<'_> {
    /// Median and range of the measured repeats, if any.
    pub fn spread(&self) -> Option<Spread> {
        spread(&self.values())
    }

    /// The measured values.
    pub fn values(&self) -> Vec<f64> {
        self.repeats.iter().map(|r| r.value).collect()
    }

    /// Whether the series ran under this kernel but measured nothing of
    /// the figure.
    pub fn is_missing(&self) -> bool {
        !self.cases.is_empty() && self.repeats.is_empty()
    }

    /// Whether this cell and `other` tell their kernels apart: both
    /// measured and their repeats' ranges do not meet, or one measured and
    /// the other ran without measuring.
    pub fn apart_from(&self, other: &Cell) -> bool {
        match (self.spread(), other.spread()) {
            (Some(a), Some(b)) => a.max < b.min || b.max < a.min,
            (Some(_), None) => other.is_missing(),
            (None, Some(_)) => self.is_missing(),
            (None, None) => false,
        }
    }
}

/// How a figure changes across the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Some series' repeats under two kernels lie apart, or it was
    /// measured under some kernels and not under others.
    Differs,
    /// The values move, but within the repeats' spread.
    WithinRepeats,
    /// Every value of each series is the same under every kernel.
    Same,
    /// No series measured it under any kernel.
    Unmeasured,
}

impl Change {
    /// The word of `data-change`: `differs`, `within`, `same`, `unmeasured`.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Differs => "differs",
            Change::WithinRepeats => "within",
            Change::Same => "same",
            Change::Unmeasured => "unmeasured",
        }
    }
}

/// One figure of a scenario across the kernels.
#[derive(Debug, Clone)]
pub struct FigureAcross<'a> {
    /// Its name.
    pub name: String,
    /// Its base unit.
    pub unit: String,
    /// Which direction is better.
    pub better: Better,
    /// Exact, or a timing when any case measured it as one.
    pub kind: Kind,
    /// Whether a seed's verdict weighed it.
    pub deciding: bool,
    /// `cells[series][kernel]`, in the scenario's series order and the
    /// survey's kernel order.
    pub cells: Vec<Vec<Cell<'a>>>,
    /// How it changes across the kernels.
    pub change: Change,
}

/// One scenario's series and figures.
#[derive(Debug, Clone)]
pub struct ScenarioAcross<'a> {
    /// The scenario's name.
    pub name: String,
    /// The series: place without its kernel, then the parameters that
    /// vary within the scenario (`ext4 strategy=fsync-each`), in order of
    /// first appearance.
    pub series: Vec<String>,
    /// Its deciding figures some case holds, those that differ first,
    /// then those that move within their repeats, then the same and the
    /// unmeasured; in each, exact figures before timings, then the
    /// verdicts' figures, then the headline's order.
    pub figures: Vec<FigureAcross<'a>>,
}

/// The runs' cases across their kernels.
#[derive(Debug, Clone)]
pub struct Survey<'a> {
    /// The kernels, in version order (a release's guest before its host).
    pub kernels: Vec<Kernel>,
    /// The scenarios with cases under a kernel, in the catalog's order,
    /// then any other in order of first appearance.
    pub scenarios: Vec<ScenarioAcross<'a>>,
}

impl<'a> Survey<'a> {
    /// The survey of `runs` (pooled: each repeat a value), when their
    /// cases ran under two kernels or more; `None` otherwise. `catalog`
    /// gives each scenario's headline figures; the runs' verdicts add
    /// their deciding figures.
    pub fn of(catalog: &Catalog, runs: &'a [RunRecord]) -> Option<Survey<'a>> {
        let cases: Vec<&Case> = runs.iter().flat_map(|r| &r.cases).filter(|c| c.conditions.contains_key(KERNEL)).collect();
        let kernels = kernels(&cases);
        if kernels.len() < 2 {
            return None;
        }
        let mut names: Vec<&str> =
            catalog.scenarios.iter().map(|s| s.name).filter(|n| cases.iter().any(|c| c.scenario == *n)).collect();
        for case in &cases {
            if !names.contains(&case.scenario.as_str()) {
                names.push(&case.scenario);
            }
        }
        let scenarios = names
            .into_iter()
            .map(|name| {
                let cases: Vec<&Case> = cases.iter().copied().filter(|c| c.scenario == name).collect();
                scenario(catalog, runs, name, &cases, &kernels)
            })
            .collect();
        Some(Survey { kernels, scenarios })
    }
}

/// The kernels `cases` ran under, in version order.
fn kernels(cases: &[&Case]) -> Vec<Kernel> {
    let mut kernels: Vec<Kernel> = Vec::new();
    for case in cases {
        let release = &case.conditions[KERNEL];
        let host = case.guest.is_none();
        match kernels.iter_mut().find(|k| k.release == *release && k.host == host) {
            Some(kernel) => kernel.emulated |= case.timings_emulated(),
            None => kernels.push(Kernel {
                release: release.clone(),
                host,
                given: case.guest.as_ref().map(|g| g.kernel.clone()),
                emulated: case.timings_emulated(),
            }),
        }
    }
    kernels.sort_by(|a, b| release_order(&a.release, &b.release).then(a.host.cmp(&b.host)));
    kernels
}

/// The index of `case`'s kernel in `kernels`.
fn kernel_of(case: &Case, kernels: &[Kernel]) -> usize {
    let host = case.guest.is_none();
    kernels.iter().position(|k| k.release == case.conditions[KERNEL] && k.host == host).expect("every case's kernel is listed")
}

/// The figures a scenario's survey considers: the verdicts' deciding
/// figures, then its headline (a command's chart figures for `exec` and
/// unknown scenarios), never a mark drawn on another figure (perfection).
fn deciding_figures(catalog: &Catalog, runs: &[RunRecord], name: &str) -> (Vec<String>, Vec<String>) {
    let weighed: Vec<String> = runs
        .iter()
        .flat_map(|r| &r.verdicts)
        .filter(|v| v.scenario == name)
        .flat_map(|v| &v.places)
        .map(|p| p.figure.clone())
        .collect();
    let headline = catalog.scenario(name).map_or(EXEC_CHART, |s| s.headline);
    let mut order: Vec<String> = Vec::new();
    for figure in weighed.iter().map(String::as_str).chain(headline.iter().copied()) {
        if !order.iter().any(|f| f == figure) && !CHART_MARKS.iter().any(|(mark, _)| *mark == figure) {
            order.push(figure.to_string());
        }
    }
    (order, weighed)
}

fn scenario<'a>(catalog: &Catalog, runs: &[RunRecord], name: &str, cases: &[&'a Case], kernels: &[Kernel]) -> ScenarioAcross<'a> {
    let varying = varying_params(cases);
    let label = |case: &Case| {
        let mut label = case.place_without(KERNEL);
        for key in &varying {
            let value = case.params.get(key).map_or_else(|| "—".to_string(), |v| param_value(key, v));
            label.push_str(&format!(" {key}={value}"));
        }
        label
    };
    let mut series: Vec<String> = Vec::new();
    let mut grouped: Vec<Vec<Vec<&Case>>> = Vec::new();
    for case in cases {
        let name = label(case);
        let at = match series.iter().position(|s| *s == name) {
            Some(at) => at,
            None => {
                series.push(name);
                grouped.push(vec![Vec::new(); kernels.len()]);
                series.len() - 1
            }
        };
        grouped[at][kernel_of(case, kernels)].push(*case);
    }
    let (order, weighed) = deciding_figures(catalog, runs, name);
    let mut figures: Vec<FigureAcross> = order
        .iter()
        .filter_map(|figure| {
            let copies = || cases.iter().filter_map(|c| c.figures.get(figure));
            let model: &Figure = copies().find(|f| f.value.is_some()).or_else(|| copies().next())?;
            let cells: Vec<Vec<Cell>> = grouped.iter().map(|row| row.iter().map(|cases| cell(cases, figure)).collect()).collect();
            Some(FigureAcross {
                name: figure.clone(),
                unit: model.unit.to_string(),
                better: model.better,
                kind: if copies().any(|f| f.kind == Kind::Timing) { Kind::Timing } else { Kind::Exact },
                deciding: weighed.contains(figure),
                change: change(&cells),
                cells,
            })
        })
        .collect();
    // Stable: within a kind of change, exact figures before timings (a
    // guest's seconds are not the host's), then the order above.
    figures.sort_by_key(|f| (f.change, f.kind == Kind::Timing));
    ScenarioAcross { name: name.to_string(), series, figures }
}

/// Figure `name` over one series' cases under one kernel.
fn cell<'a>(cases: &[&'a Case], name: &str) -> Cell<'a> {
    let mut cell = Cell { cases: cases.to_vec(), ..Cell::default() };
    for case in cases {
        let reason = match case.figures.get(name) {
            Some(Figure { value: Some(value), kind, .. }) => {
                let emulated = *kind == Kind::Timing && case.timings_emulated();
                cell.repeats.push(Repeat { value: *value, repeat: case.repeat, emulated });
                continue;
            }
            Some(figure) => figure.missing.clone().unwrap_or_else(|| "not measured".to_string()),
            None => match (&case.status, &case.error) {
                (Status::Failed, Some(error)) => format!("the case failed: {error}"),
                (Status::Failed, None) => "the case failed".to_string(),
                _ => "not measured".to_string(),
            },
        };
        if !cell.missing.contains(&reason) {
            cell.missing.push(reason);
        }
    }
    cell
}

/// How a figure's `cells` change across the kernels (see [`Change`]).
fn change(cells: &[Vec<Cell>]) -> Change {
    let (mut measured, mut moves) = (false, false);
    for row in cells {
        let ran: Vec<&Cell> = row.iter().filter(|c| !c.cases.is_empty()).collect();
        if ran.iter().all(|c| c.repeats.is_empty()) {
            continue;
        }
        measured = true;
        if ran.iter().enumerate().any(|(i, a)| ran[i + 1..].iter().any(|b| a.apart_from(b))) {
            return Change::Differs;
        }
        let mut values = ran.iter().flat_map(|c| c.values());
        let first = values.next();
        moves |= values.any(|v| Some(v) != first);
    }
    match (measured, moves) {
        (false, _) => Change::Unmeasured,
        (true, true) => Change::WithinRepeats,
        (true, false) => Change::Same,
    }
}

/// The parameters whose values differ between `cases` (or that some
/// lack), in name order.
fn varying_params(cases: &[&Case]) -> Vec<String> {
    let mut keys: Vec<&String> = cases.iter().flat_map(|c| c.params.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|key| {
            let first = cases.first().and_then(|c| c.params.get(*key));
            cases.iter().any(|c| c.params.get(*key) != first)
        })
        .cloned()
        .collect()
}
