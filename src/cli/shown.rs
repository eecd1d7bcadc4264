//! Stored runs made safe to print: every string a run holds (tags, errors,
//! labels, parameters, what a store another user handed over says) with
//! its control characters escaped ([`crate::text::escape_strings`]), for
//! the tables and comparisons a terminal or a markdown page shows. A case's
//! error and its command's output keep their newlines: they are text of
//! several lines, which the tables indent and `compare` joins. `--json`
//! prints the runs as they are stored.

use crate::error::{Error, Result};
use crate::record::{KeptMap, TimelinePoint};
use crate::store::Selection;

/// `selection` with every string of its label and runs escaped. Extent
/// maps and timelines, which no table or comparison prints, are set aside
/// and put back as they are rather than copied through: a preset run keeps
/// a million and more extents.
pub(super) fn selection(mut selection: Selection) -> Result<Selection> {
    type Bulk = (Vec<KeptMap>, Vec<TimelinePoint>);
    let bulk: Vec<Vec<Bulk>> = selection
        .runs
        .iter_mut()
        .map(|run| run.cases.iter_mut().map(|c| (std::mem::take(&mut c.maps), std::mem::take(&mut c.timeline))).collect())
        .collect();
    let mut value = serde_json::to_value(&selection.runs).map_err(|e| unreadable(&e))?;
    crate::text::escape_strings(&mut value, &["error", "stdout", "stderr"]);
    let mut runs: Vec<crate::record::RunRecord> = serde_json::from_value(value).map_err(|e| unreadable(&e))?;
    for (run, bulk) in runs.iter_mut().zip(bulk) {
        for (case, (maps, timeline)) in run.cases.iter_mut().zip(bulk) {
            (case.maps, case.timeline) = (maps, timeline);
        }
    }
    Ok(Selection { label: crate::text::escape(&selection.label).into_owned(), runs, plan: selection.plan })
}

fn unreadable(e: &serde_json::Error) -> Error {
    Error::failed(format!("a stored run could not be made fit to print: {e}"))
}
