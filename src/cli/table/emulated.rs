//! The footnote a run's tables end with when some of its cases ran in a
//! guest under software emulation: their timing cells carry a mark, and
//! what it means is said once for the whole run, as the busy-machine note
//! is.

use super::super::verdicts::wrap;
use crate::record::Case;
use crate::record::guest::emulated_footnote;

/// `† emulated (TCG): timings measure the emulator; exact figures carry
/// over (why: ...).`, after a blank line, wrapped to the table's width;
/// empty when no case was emulated.
pub fn emulated(cases: &[&Case]) -> String {
    match emulated_footnote(cases) {
        Some(note) => format!("\n{}", wrap(&note, 2)),
        None => String::new(),
    }
}
