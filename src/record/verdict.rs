//! A seed's verdict on a run: does the run still show what the seed
//! reported, where (on which target under which conditions), and which
//! figures say so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Whether the seed's finding holds on this run: a summary over every
/// place the run measured, and each place's own judgement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verdict {
    /// The scenario judged.
    pub scenario: String,
    /// Its seed report.
    pub seed: String,
    /// `true` the effect shows on at least one place, `false` it is gone
    /// on every place judged, `None` no place could be judged.
    pub shows: Option<bool>,
    /// Where it shows and where it is gone, with the deciding figures, in
    /// a sentence.
    pub evidence: String,
    /// What the seed itself reported (its file system, year and figures),
    /// kept beside the run's evidence so a reader can weigh the two.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub claim: String,
    /// One judgement per place (target × conditions), in the run's order;
    /// empty in runs stored before verdicts said where.
    #[serde(default)]
    pub places: Vec<PlaceVerdict>,
}

/// The seed's claim judged on the cases of one place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlaceVerdict {
    /// The place as tables name it: target label and condition values
    /// (`xfs@256M`).
    pub target: String,
    /// The target label alone (`xfs`, `ext2-1k`).
    #[serde(default)]
    pub fs: String,
    /// The conditions the cases ran under (empty: the machine's own).
    #[serde(default)]
    pub conditions: BTreeMap<String, String>,
    /// `true` shows here, `false` gone here, `None` not judged (a case
    /// or figure the predicate needs is missing).
    pub shows: Option<bool>,
    /// The figure the predicate weighed (`extents`).
    #[serde(default)]
    pub figure: String,
    /// Its value here, when measured.
    #[serde(default)]
    pub value: Option<f64>,
    /// What it was weighed against (perfection, the best file system's),
    /// when the predicate compares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<f64>,
    /// The figures in a few words ("31,483 extents where 1 would do, 4 KiB
    /// each"), or why the place was not judged.
    #[serde(default)]
    pub evidence: String,
}

impl Verdict {
    /// A verdict that could not be reached, and why.
    pub fn unknown(scenario: &'static str, seed: &'static str, why: impl Into<String>) -> Verdict {
        Verdict {
            scenario: scenario.to_string(),
            seed: seed.to_string(),
            shows: None,
            evidence: why.into(),
            claim: String::new(),
            places: Vec::new(),
        }
    }

    /// One word for tables: `shows`, `gone`, `unknown`.
    pub fn word(&self) -> &'static str {
        word(self.shows)
    }

    /// The places named once, by what the claim did there: "shows on
    /// btrfs, xfs@256M; gone on ext2, ext3; not judged on ext2-1k" (what
    /// text and report print above the rows of figures).
    pub fn where_list(&self) -> String {
        let mut parts = Vec::new();
        for (shows, said) in [(Some(true), "shows on"), (Some(false), "gone on"), (None, "not judged on")] {
            let named: Vec<&str> = self.places.iter().filter(|p| p.shows == shows).map(|p| p.target.as_str()).collect();
            if !named.is_empty() {
                parts.push(format!("{said} {}", named.join(", ")));
            }
        }
        parts.join("; ")
    }
}

impl PlaceVerdict {
    /// One word for tables: `shows`, `gone`, `unknown`.
    pub fn word(&self) -> &'static str {
        word(self.shows)
    }
}

fn word(shows: Option<bool>) -> &'static str {
    match shows {
        Some(true) => "shows",
        Some(false) => "gone",
        None => "unknown",
    }
}
