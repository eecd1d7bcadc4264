//! Cases that ran in a guest under software emulation (TCG): their
//! timings measure the emulator as much as the kernel — 2–15× inflated
//! and uneven with the host's load — so `compare` shows them and judges
//! none of them, on either side; their exact figures (extents, commits,
//! I/O counts) carry over and are judged as usual.

use serde::Serialize;

use crate::record::guest::EMULATED_NOT_JUDGED;
use crate::record::{Case, RunRecord};

/// One side's emulated cases, and how many cases it has: what the note
/// said once per comparison names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmulatedCases {
    /// Every case counted.
    pub cases: usize,
    /// How many of them ran emulated.
    pub emulated: usize,
    /// Where they ran, each place once (`ext4@6.1.0-56-amd64,vm=512M`).
    pub places: Vec<String>,
    /// Why there was no hardware acceleration, as the first emulated
    /// case recorded it.
    pub why: Option<String>,
}

impl EmulatedCases {
    /// The emulated cases among `runs`' cases.
    pub fn of(runs: &[RunRecord]) -> EmulatedCases {
        let cases: Vec<&Case> = runs.iter().flat_map(|r| &r.cases).collect();
        let why = cases.iter().filter(|c| c.timings_emulated()).find_map(|c| c.guest.as_ref()?.why_emulated.clone());
        let mut places: Vec<String> = Vec::new();
        for case in cases.iter().filter(|c| c.timings_emulated()) {
            if !places.contains(&case.place()) {
                places.push(case.place());
            }
        }
        let emulated = cases.iter().filter(|c| c.timings_emulated()).count();
        EmulatedCases { cases: cases.len(), emulated, places, why }
    }
}

/// Which side's cases of a compared figure ran emulated: `base`, `new`
/// or `both`; what a row's `emulated` field says.
pub fn side(base: bool, new: bool) -> Option<&'static str> {
    match (base, new) {
        (true, true) => Some("both"),
        (true, false) => Some("base"),
        (false, true) => Some("new"),
        (false, false) => None,
    }
}

/// `Timings emulated (TCG): not judged — 2 of 4 cases of v2 (on
/// ext4@6.1.0-56-amd64,vm=512M) ran in a guest under software emulation
/// (/dev/kvm is PVM ...): their timings measure the emulator, ... Exact
/// figures are compared as usual.`, said once; `None` when neither side
/// has an emulated case.
pub fn sentence(base_label: &str, base: &EmulatedCases, new_label: &str, new: &EmulatedCases) -> Option<String> {
    let sides: Vec<String> = [(base_label, base), (new_label, new)]
        .into_iter()
        .filter(|(_, e)| e.emulated > 0)
        .map(|(label, e)| {
            let noun = if e.cases == 1 { "case" } else { "cases" };
            let mut named: Vec<String> = e.places.iter().take(8).cloned().collect();
            if e.places.len() > 8 {
                named.push(format!("and {} more", e.places.len() - 8));
            }
            format!("{} of {} {noun} of {label} (on {})", e.emulated, e.cases, named.join(", "))
        })
        .collect();
    if sides.is_empty() {
        return None;
    }
    let why = base.why.as_ref().or(new.why.as_ref()).map(|w| format!(" ({w})")).unwrap_or_default();
    let mut first = EMULATED_NOT_JUDGED.to_string();
    first[..1].make_ascii_uppercase();
    Some(format!(
        "{first} — {} ran in a guest under software emulation{why}: their timings measure the emulator, so neither they \
         nor the timings they are compared with are judged. Exact figures are compared as usual.",
        sides.join(", ")
    ))
}
