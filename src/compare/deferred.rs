//! Deferring work is no improvement. A file system can make its window
//! look better by leaving work for later: xfs leaves the metadata it
//! logged in its log until the unmount (with `vm.laptop_mode` 0, 1.15 MB
//! of 10 MB for 2,000 new files; with 5 its syncfs writes it), and the
//! window's `written_bytes` then falls while nothing was saved.
//!
//! The design decision: each window figure with a deferred twin
//! ([`DEFERRED_TWINS`]) gets a total, window + deferred per case, judged
//! like any figure (`total_written_bytes`); a window figure that got
//! better while its total did not is [`Outcome::Deferred`], never an
//! improvement. A run that did not measure what it deferred (stored
//! before, or a `--dir`) has no total, and its window figures are judged
//! as they were.

use std::borrow::Cow;

use super::{FigureComparison, Outcome, format};
use crate::record::catalog::DEFERRED_TWINS;
use crate::record::{Better, Case, Figure, Kind};

/// What a total in bytes is: a timing, since its deferred part is.
static TOTAL_BYTES: Figure = total("bytes");
/// What a total count is.
static TOTAL_COUNT: Figure = total("count");

const fn total(unit: &'static str) -> Figure {
    Figure { value: None, unit: Cow::Borrowed(unit), better: Better::Lower, kind: Kind::Timing, missing: None }
}

/// One case's totals: per twin whose deferred figure the case holds, its
/// name, what it is, and window + deferred, or why there is no sum (the
/// missing part's reason, when it has one).
pub(super) fn totals(case: &Case) -> impl Iterator<Item = (&'static str, &'static Figure, Result<f64, Option<&str>>)> {
    DEFERRED_TWINS.iter().filter_map(move |twin| {
        let later = case.figures.get(twin.deferred)?;
        let window = case.figures.get(twin.window);
        let what = if later.unit == "bytes" { &TOTAL_BYTES } else { &TOTAL_COUNT };
        let finite = |f: Option<&Figure>| f.and_then(|f| f.value).filter(|v| v.is_finite());
        let sum = match (finite(window), finite(Some(later))) {
            (Some(w), Some(d)) => Ok(w + d),
            _ => Err(later.missing.as_deref().or(window.and_then(|w| w.missing.as_deref()))),
        };
        Some((twin.total, what, sum))
    })
}

/// Whether an outcome calls a figure better.
fn better(outcome: Outcome) -> bool {
    matches!(outcome, Outcome::Improvement | Outcome::LikelyImprovement)
}

/// Every window figure that got better while its total did not becomes
/// [`Outcome::Deferred`], its note saying what the total did.
pub(super) fn no_credit_for_deferring(rows: &mut [FigureComparison]) {
    let same_case = |a: &FigureComparison, b: &FigureComparison| a.scenario == b.scenario && a.fs == b.fs && a.params == b.params;
    let mut demoted = Vec::new();
    for (i, row) in rows.iter().enumerate().filter(|(_, r)| better(r.outcome)) {
        let Some(twin) = DEFERRED_TWINS.iter().find(|t| t.window == row.figure) else { continue };
        let Some(total) = rows.iter().find(|t| t.figure == twin.total && same_case(t, row)) else { continue };
        if better(total.outcome) {
            continue;
        }
        let change = format::change(total.base_median, total.new_median, &total.unit);
        let note = format!(
            "better in the window only: with what it left for later ({}), {change}, {}",
            twin.deferred,
            total.outcome.words()
        );
        demoted.push((i, note));
    }
    for (i, note) in demoted {
        rows[i].outcome = Outcome::Deferred;
        super::add_note(&mut rows[i].note, &note);
    }
}
