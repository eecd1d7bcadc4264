//! A seed's verdict on a run: does the run still show what the seed
//! reported, and which figures say so.

use serde::{Deserialize, Serialize};

/// Whether the seed's finding holds on this run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verdict {
    /// The scenario judged.
    pub scenario: String,
    /// Its seed report.
    pub seed: String,
    /// `true` the effect is there, `false` it is gone, `None` the cases
    /// needed were missing or failed.
    pub shows: Option<bool>,
    /// The figures that decided it, in a sentence.
    pub evidence: String,
}

impl Verdict {
    /// A verdict that could not be reached, and why.
    pub fn unknown(scenario: &'static str, seed: &'static str, why: impl Into<String>) -> Verdict {
        Verdict { scenario: scenario.to_string(), seed: seed.to_string(), shows: None, evidence: why.into() }
    }

    /// One word for tables: `shows`, `gone`, `unknown`.
    pub fn word(&self) -> &'static str {
        match self.shows {
            Some(true) => "shows",
            Some(false) => "gone",
            None => "unknown",
        }
    }
}

