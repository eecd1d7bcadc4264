//! The series a list of stored runs makes: per machine, per case key
//! (scenario, place, parameters, conditions) and per figure, one value a
//! run (the median of the run's ok repeats), in the runs' order, each
//! judged by [`super::detect`].

use std::collections::BTreeMap;

use super::detect::{self, Finding};
use crate::compare::is_host_wide;
use crate::compare::stats::median;
use crate::record::{Better, Case, Figure, Kind, RunRecord, Status};

/// One run's value of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The run's index in the list given.
    pub run: usize,
    /// The median of its ok repeats.
    pub value: f64,
    /// Whether every repeat was measured on a busy machine.
    pub busy: bool,
}

/// A series and what it says.
#[derive(Debug, Clone)]
pub struct Series {
    /// The machine (host name, else its architecture).
    pub machine: String,
    /// The case's scenario.
    pub scenario: String,
    /// Where it ran (`ext4`, `xfs@256M`).
    pub place: String,
    /// The case key `compare` matches by.
    pub key: String,
    /// The figure.
    pub figure: String,
    /// Its unit.
    pub unit: String,
    /// Which way is better.
    pub better: Better,
    /// Exact or timing.
    pub kind: Kind,
    /// The values that were judged, in run order.
    pub values: Vec<Value>,
    /// Busy runs set aside (a timing's, when quiet ones are most).
    pub set_aside: usize,
    /// What the detector found; `Step::at` indexes `values`.
    pub finding: Finding,
}

impl Series {
    /// Whether a change of this series is for the worse.
    pub fn worse(&self, relative: f64) -> bool {
        match self.better {
            Better::Lower => relative > 0.0,
            Better::Higher => relative < 0.0,
        }
    }
}

/// The series of `runs` (oldest first), each judged with `threshold`;
/// `figures` keeps only those named (all when empty). Host-wide figures
/// (the whole disk's, the machine's load: [`is_host_wide`]) describe the
/// machine, not the case, and are left out unless `host_figures` or named;
/// the second value counts the names left out.
pub fn of(runs: &[RunRecord], figures: &[String], threshold: f64, host_figures: bool) -> (Vec<Series>, usize) {
    use rayon::prelude::*;
    // (machine, case key, figure) → the first case and figure that measured
    // it (what the series is of), and a value a run.
    type Key = (String, String, String);
    type Gathered<'r> = (&'r Case, &'r Figure, Vec<Value>);
    let mut gathered: BTreeMap<Key, Gathered> = BTreeMap::new();
    let mut left_out = std::collections::BTreeSet::new();
    for (index, run) in runs.iter().enumerate() {
        let machine = run.environment.host.as_deref().unwrap_or(&run.environment.machine);
        let mut per_key: BTreeMap<Key, (Vec<f64>, usize, &Case, &Figure)> = BTreeMap::new();
        for case in run.cases.iter().filter(|c| c.status == Status::Ok) {
            let key = case.key();
            for (name, figure) in case.figures.iter() {
                let Some(v) = figure.value else { continue };
                let named = figures.iter().any(|f| f == name);
                if !figures.is_empty() && !named {
                    continue;
                }
                if is_host_wide(name) && !host_figures && !named {
                    left_out.insert(name);
                    continue;
                }
                let entry =
                    per_key.entry((machine.to_string(), key.clone(), name.to_string())).or_insert((Vec::new(), 0, case, figure));
                entry.0.push(v);
                entry.1 += usize::from(case.busy.is_some());
            }
        }
        for (key, (values, busy, case, figure)) in per_key {
            let Some(value) = median(&values) else { continue };
            let value = Value { run: index, value, busy: busy == values.len() };
            gathered.entry(key).or_insert((case, figure, Vec::new())).2.push(value);
        }
    }
    let gathered: Vec<(Key, Gathered)> = gathered.into_iter().collect();
    let mut all: Vec<Series> = gathered
        .into_par_iter()
        .map(|((machine, key, name), (case, figure, all))| {
            let quiet = all.iter().filter(|v| !v.busy).count();
            // Busy values are set aside from a timing while quiet ones are
            // at least half of them: a busy machine's time is not the code's.
            let keep_busy = figure.kind == Kind::Exact || crate::record::busy::busy_ones_decide(quiet, all.len() - quiet);
            let kept: Vec<Value> = all.iter().filter(|v| keep_busy || !v.busy).cloned().collect();
            let values: Vec<f64> = kept.iter().map(|v| v.value).collect();
            Series {
                machine,
                scenario: case.scenario.clone(),
                place: case.place(),
                key,
                figure: name,
                unit: figure.unit.to_string(),
                better: figure.better,
                kind: figure.kind,
                set_aside: all.len() - kept.len(),
                finding: detect::detect(&values, figure.kind == Kind::Exact, threshold),
                values: kept,
            }
        })
        .collect();
    rejudge_pooled(&mut all, threshold);
    (all, left_out.len())
}

/// Judge each machine's timings again with the lag-one autocorrelation
/// pooled over them all ([`detect::pool`]): one series of thirty runs
/// cannot measure its own correlation well, and a machine's noise is the
/// machine's. A machine with too few timing series keeps each alone.
fn rejudge_pooled(all: &mut [Series], threshold: f64) {
    use rayon::prelude::*;
    let mut rhos: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for series in all.iter().filter(|s| s.kind == Kind::Timing) {
        if let Some(noise) = series.finding.noise {
            rhos.entry(series.machine.clone()).or_default().push(noise.rho);
        }
    }
    let pooled: BTreeMap<String, detect::Pooled> =
        rhos.into_iter().filter_map(|(machine, rhos)| Some((machine, detect::pool(&rhos)?))).collect();
    all.par_iter_mut().filter(|s| s.kind == Kind::Timing).for_each(|series| {
        let Some(pool) = pooled.get(&series.machine) else { return };
        if pool.rho > 0.0 {
            let values: Vec<f64> = series.values.iter().map(|v| v.value).collect();
            series.finding = detect::detect_with(&values, false, threshold, Some(*pool));
        } else if let Some(noise) = &mut series.finding.noise {
            // A floor of 0 judges as the series alone did: only say so.
            noise.pooled = Some(*pool);
        }
    });
}

/// `nights` copies of one run, as a series of nights for a test or a
/// benchmark: run `i` is started at minute `i` of 2026-11-01 and tagged
/// `tag`, its times in seconds wobbling by up to 1% and, from night
/// `slower_from` on, `factor` times as long.
pub fn nights(run: &RunRecord, nights: u32, tag: &str, slower_from: u32, factor: f64) -> Vec<RunRecord> {
    (0..nights)
        .map(|night| {
            let mut copy = run.clone();
            copy.id = format!("20261101T{:02}{:02}00Z-1-{night:08x}", night / 60, night % 60);
            copy.started_at = format!("2026-11-01T{:02}:{:02}:00Z", night / 60, night % 60);
            copy.tags = vec![tag.to_string()];
            let wobble = 1.0 + f64::from((night * 37 + 11) % 21) / 2000.0 - 0.005;
            let scale = wobble * if night >= slower_from { factor } else { 1.0 };
            for case in &mut copy.cases {
                let names: Vec<String> = case.figures.iter().map(|(n, _)| n.to_string()).collect();
                for name in names {
                    let Some(mut figure) = case.figures.get(&name).cloned() else { continue };
                    if figure.kind == Kind::Timing && figure.unit == "s" {
                        figure.value = figure.value.map(|v| v * scale);
                    }
                    case.figures.insert_figure(&name, figure);
                }
            }
            copy
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_run;

    fn run(id: &str, files: f64, wall: f64, busy: bool) -> RunRecord {
        let mut case = Case::new("exec", "ext4", Default::default(), 1);
        case.figures.set("files", files, "count", Better::Lower, Kind::Exact);
        case.figures.set("wall_s", wall, "s", Better::Lower, Kind::Timing);
        case.figures.set("host_load1_start", if busy { 2.0 } else { 0.5 }, "load", Better::Lower, Kind::Timing);
        case.busy = busy.then(|| "others used 1.5 cores".to_string());
        let mut run = test_run(id, vec![case]);
        run.environment.host = Some("lab1".into());
        run
    }

    #[test]
    fn a_run_a_value_per_case_and_figure_and_busy_timings_set_aside() {
        let mut runs: Vec<RunRecord> =
            (0..12).map(|i| run(&format!("r{i}"), if i >= 6 { 13.0 } else { 12.0 }, 1.0 + 0.001 * i as f64, false)).collect();
        runs.push(run("busy", 13.0, 3.0, true));
        let (series, left_out) = of(&runs, &[], 0.05, false);
        assert_eq!((series.len(), left_out), (2, 1), "host_load1_start left out");
        let files = series.iter().find(|s| s.figure == "files").unwrap();
        assert_eq!(files.values.len(), 13, "an exact figure keeps busy runs");
        assert_eq!(files.finding.changes.len(), 1);
        assert_eq!(files.values[files.finding.changes[0].at].run, 6);
        let wall = series.iter().find(|s| s.figure == "wall_s").unwrap();
        assert_eq!((wall.values.len(), wall.set_aside), (12, 1));
        assert!(wall.finding.changes.is_empty(), "{:?}", wall.finding);
        assert_eq!(of(&runs, &["wall_s".to_string()], 0.05, false).0.len(), 1);
        assert_eq!(of(&runs, &["host_load1_start".to_string()], 0.05, false).0.len(), 1, "named, so judged");
        let (judged, left_out) = of(&runs, &[], 0.05, true);
        assert_eq!((judged.len(), left_out), (3, 0), "--host-figures");
    }
}
