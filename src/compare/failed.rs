//! The cases a comparison judges by status rather than by figures: a case
//! that was ok in the base and failed in the new side is a regression
//! whatever its figures would say (its figures are not comparable, or not
//! there), and two sides with no case in common cannot be compared at all.

use serde::Serialize;

use super::format;
use crate::record::{Case, RunRecord};

/// A case ok on every base repeat and failed on some new repeat.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedCase {
    /// Scenario name.
    pub scenario: String,
    /// Target label.
    pub fs: String,
    /// Parameters (as the first failed case has them).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// New repeats that failed.
    pub failed: usize,
    /// New repeats in all (failed and ok).
    pub repeats: usize,
    /// Why the first of them failed, as it said.
    pub error: Option<String>,
}

impl FailedCase {
    /// From the first failed case of a key, with the counts.
    pub(super) fn new(first: &Case, failed: usize, repeats: usize) -> FailedCase {
        FailedCase {
            scenario: first.scenario.clone(),
            fs: first.place(),
            params: first.params.clone(),
            failed,
            repeats,
            error: first.error.clone(),
        }
    }

    /// `tree-copy on xfs: failed in 2 of 5 repeats in v2: mkfs failed`.
    pub fn describe(&self, new_label: &str) -> String {
        let label = format::label(&self.scenario, None, &self.fs, &self.params);
        let repeats = if self.repeats == 1 { "its only repeat".to_string() } else { format!("{} of {} repeats", self.failed, self.repeats) };
        match &self.error {
            Some(error) => format!("{label}: failed in {repeats} in {new_label}: {}", one_line(error)),
            None => format!("{label}: failed in {repeats} in {new_label}"),
        }
    }
}

/// An error on one line, for a list item or a table cell.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The distinct cases of `runs` (scenario, target, parameters), as people
/// read them, in order of first appearance: for saying what a side holds.
pub fn case_labels(runs: &[RunRecord]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for case in runs.iter().flat_map(|r| &r.cases) {
        let label = format::label(&case.scenario, None, &case.place(), &case.params);
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels
}

/// `3 cases: a, b, c` or `no case at all`, the first five named.
pub fn summarise_cases(runs: &[RunRecord]) -> String {
    let labels = case_labels(runs);
    match labels.len() {
        0 => "no case at all".to_string(),
        n => {
            let mut named = labels.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            if n > 5 {
                named.push_str(&format!(", and {} more", n - 5));
            }
            format!("{n} case{}: {named}", if n == 1 { "" } else { "s" })
        }
    }
}
