//! `fslab bisect`: the first point of an ordered axis (kernels, or a
//! program's commits) where a figure or a verdict changes.
//!
//! The parts: [`judge`] reads one point against the two ends by the rule
//! the user named, [`search`] chooses what to measure next and when the
//! answer is known; neither measures anything. The command line measures
//! a point by running its cases as a stored run and hands the samples
//! back ([`samples_of`]).

pub mod drive;
pub mod git;
pub mod judge;
pub mod search;

pub use drive::{Axis, Bisect, Ended, Step, Work};
pub use judge::{Change, Reading, Samples, Threshold};
pub use search::{Ask, Next, Outcome, Point, Search};

use crate::record::{RunRecord, Status};

/// The samples one stored run gives `change`: each ok case's figure
/// (quiet or busy), its kind, the verdict words of the run, and why none
/// could be read when every case failed.
pub fn samples_of(run: &RunRecord, change: &Change) -> Samples {
    let mut samples = Samples::default();
    let mut failures = Vec::new();
    for case in &run.cases {
        if case.status == Status::Failed {
            failures.push(case.error.clone().unwrap_or_else(|| "failed, no reason given".into()));
            continue;
        }
        if let Change::Figure { name, .. } = change {
            let Some(figure) = case.figures.get(name) else {
                continue;
            };
            samples.kind = samples.kind.or(Some(judged_as(figure)));
            match figure.value {
                Some(v) if case.busy.is_some() => samples.busy.push(v),
                Some(v) => samples.quiet.push(v),
                None => failures.push(format!("{name} missing: {}", figure.missing.as_deref().unwrap_or("no reason given"))),
            }
        }
    }
    if let Change::Verdict { .. } = change {
        for verdict in &run.verdicts {
            for place in &verdict.places {
                let word = if place.judged.is_empty() {
                    match place.shows {
                        Some(true) => "shows",
                        Some(false) => "gone",
                        None => "unknown",
                    }
                } else {
                    place.judged.as_str()
                };
                samples.words.push(word.to_string());
            }
        }
    }
    let nothing = samples.measured() == 0 && samples.words.is_empty();
    if nothing {
        samples.failed = Some(if failures.is_empty() { "no case measured".into() } else { failures.join("; ") });
    }
    samples
}

/// How a figure is judged: a count is read as a value against the
/// threshold even when the machine's timing moves it (journal commits:
/// about 40 against 2 with an fsync per file), so one run decides a
/// point far from the threshold; times and rates by the rank-sum test.
fn judged_as(figure: &crate::record::Figure) -> crate::record::Kind {
    if figure.unit == "count" { crate::record::Kind::Exact } else { figure.kind }
}
