//! `fslab run SCENARIO...`: the matrix of file systems × parameter values
//! × repeats, each case measured on a fresh target; one table per
//! scenario with the seed's own figures first.

use std::process::ExitCode;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::{RunArgs, table};
use crate::error::{Error, Result};
use crate::scenario::params::{self, Params};
use crate::scenario::{self, Case, Lab, Phase, RunRecord, SCENARIOS, Scenario};

/// Figures every scenario table shows after its own headline figures.
const COMMON: [&str; 7] =
    ["written_bytes", "flushes", "journal_commits", "files", "extents", "perfection", "layout_score"];

/// Run `fslab run`.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let scenarios: Vec<&'static dyn Scenario> = if args.preset.is_some() {
        SCENARIOS.to_vec()
    } else {
        args.scenarios.iter().map(|name| scenario::find(name)).collect::<Result<_>>()?
    };
    // Every setting must belong to some chosen scenario, and every value
    // must parse, before anything is made.
    for setting in &args.set {
        if !scenarios.iter().any(|s| s.params().iter().any(|p| p.name == setting.key)) {
            let names: Vec<&str> = scenarios.iter().map(|s| s.name()).collect();
            return Err(Error::usage(format!(
                "--set {}: no parameter `{}` in {} (see `fslab list`)",
                setting.key,
                setting.key,
                names.join(", ")
            )));
        }
    }
    let mut matrix: Vec<(&'static dyn Scenario, Vec<Params>)> = Vec::new();
    for s in &scenarios {
        let cases = params::expand(s.params(), &args.set, args.scale).map_err(Error::usage)?;
        matrix.push((*s, cases));
    }

    let plan = super::exec::plan(&args.target, false)?;
    let lab = Lab::open(plan)?;
    let environment = scenario::Environment::read(&lab.plan().target_options.scratch);
    let targets = lab.plan().targets.clone();
    let total: usize = matrix.iter().map(|(_, p)| p.len()).sum::<usize>() * targets.len() * args.repeat as usize;
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed}, about {eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut cases: Vec<Case> = Vec::new();
    'all: for (scenario, param_sets) in &matrix {
        for params in param_sets {
            for spec in &targets {
                for repeat in 1..=args.repeat {
                    if crate::interrupt::pending().is_some() {
                        break 'all;
                    }
                    let label = format!("{} on {}", scenario.name(), spec.label());
                    let progress = |phase: Phase| bar.set_message(format!("{label}: {}", phase.as_str()));
                    let mut work = scenario.work(params);
                    cases.push(lab.measure(spec, scenario.name(), params.to_json(), repeat, &progress, work.as_mut()));
                    bar.inc(1);
                }
            }
        }
    }
    bar.finish_and_clear();
    super::exec::finish(lab, environment, cases, &args.target, |record| render_text(record, &matrix))
}

/// A table per scenario: the parameters that vary, the seed's figures,
/// then the common ones.
fn render_text(record: &RunRecord, matrix: &[(&'static dyn Scenario, Vec<Params>)]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "run {}  (kernel {})", record.id, record.environment.kernel);
    for (scenario, _) in matrix {
        let cases: Vec<&Case> = record.cases.iter().filter(|c| c.scenario == scenario.name()).collect();
        if cases.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n{} (seed {}): {}", scenario.name(), scenario.seed(), scenario.about());
        let params: Vec<&str> = scenario.params().iter().map(|p| p.name).collect();
        let headline = scenario.headline();
        let mut figures: Vec<&str> = headline.to_vec();
        figures.extend(COMMON.iter().filter(|f| !headline.contains(f)));
        s.push_str(&table::render_cases(&cases, &params, &figures));
        s.push_str(&table::failures(&cases));
        s.push_str(&table::missing(&cases));
    }
    s
}
