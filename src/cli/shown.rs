//! Stored runs made safe to print: every string a run holds (tags, errors,
//! labels, parameters, what a store another user handed over says) with
//! its control characters escaped ([`crate::text::escape_strings`]), for
//! the tables and comparisons a terminal or a markdown page shows. A case's
//! error and its command's output keep their newlines: they are text of
//! several lines, which the tables indent and `compare` joins. `--json`
//! prints the runs as they are stored.

use crate::error::{Error, Result};
use crate::store::Selection;

/// `selection` with every string of its label and runs escaped.
pub(super) fn selection(selection: Selection) -> Result<Selection> {
    let mut runs = serde_json::to_value(&selection.runs).map_err(|e| unreadable(&e))?;
    crate::text::escape_strings(&mut runs, &["error", "stdout", "stderr"]);
    Ok(Selection {
        label: crate::text::escape(&selection.label).into_owned(),
        runs: serde_json::from_value(runs).map_err(|e| unreadable(&e))?,
    })
}

fn unreadable(e: &serde_json::Error) -> Error {
    Error::failed(format!("a stored run could not be made fit to print: {e}"))
}
