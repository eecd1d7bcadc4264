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
    /// What survives a crash, said once for the whole verdict where the
    /// places do not say it: `not tried: ...` for a seed about a trade
    /// with safety whose run judged no crash state; empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub safety: String,
    /// The programs people run that the seed is about, measured beside it
    /// (`--preset seeds` runs them): a line each, its name first (`dpkg:
    /// with its fsyncs, 1.44× the flushes ... of --force-unsafe-io ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<String>,
}

/// The seed's claim judged on the cases of one place.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// The word for the place: `shows`, `gone`, `marginal` (the deciding
    /// value lies within the rule's margin of its threshold), `mixed`
    /// (its repeats or aged images judge differently) or `unknown`; empty
    /// in runs stored before margins (then read from `shows`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub judged: String,
    /// The test that decided, with its threshold and margin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// How the place's samples (repeats, or aged images) judged each on
    /// their own, when it has more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Samples>,
    /// How many independently aged images the place's cases started from
    /// (`--age-images`); `None` for a fresh target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<u32>,
    /// Figures that bear on the seed's mechanism whatever the rule said
    /// ("system CPU 9.1 s, 6.5 × xfs's"): evidence beside the claim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
}

/// The test of a seed's claim that decided a place: a value weighed
/// against the threshold where the claim starts to hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// What is weighed, in a few words (`mkfile/dd extents`).
    pub what: String,
    /// Its value here.
    pub value: f64,
    /// The threshold.
    pub threshold: f64,
    /// The claim holds when `value >= threshold` (`true`) or when
    /// `value < threshold` (`false`).
    pub at_least: bool,
    /// How the value and threshold print (`24.7×`, `6 KiB`).
    pub shown: String,
    /// The margin, as a fraction of the threshold (0.2: within 20% either
    /// way), inside which the place reads `marginal`.
    pub margin: f64,
    /// Whether the value lies inside the margin.
    pub marginal: bool,
}

/// How a place's samples judged, each on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Samples {
    /// What a sample is: `repeats`, or `images` (independently aged
    /// images of one start).
    pub by: String,
    /// How many there were.
    pub count: u32,
    /// How many showed the claim.
    pub showing: u32,
    /// How many did not.
    pub gone: u32,
}

impl Samples {
    /// Whether they disagree.
    pub fn mixed(&self) -> bool {
        self.showing > 0 && self.gone > 0
    }

    /// `3 images: 2 show, 1 gone` or `3 repeats agree`.
    pub fn describe(&self) -> String {
        if self.mixed() {
            format!("{} {}: {} show, {} gone", self.count, self.by, self.showing, self.gone)
        } else if self.count == 1 {
            format!("1 {}", self.by.trim_end_matches('s'))
        } else {
            format!("{} {} agree", self.count, self.by)
        }
    }
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
            safety: String::new(),
            programs: Vec::new(),
        }
    }

    /// One word for tables: `shows`, `gone`, `unknown`.
    pub fn word(&self) -> &'static str {
        word(self.shows)
    }

    /// The places named once, by what the claim did there: "shows on
    /// btrfs, xfs@256M; marginal on xfs@120M; gone on ext2, ext3; not
    /// judged on ext2-1k" (what text and report print above the rows of
    /// figures).
    pub fn where_list(&self) -> String {
        let mut parts = Vec::new();
        for (word, said) in
            [("shows", "shows on"), ("marginal", "marginal on"), ("mixed", "mixed on"), ("gone", "gone on"), ("unknown", "not judged on")]
        {
            let named: Vec<&str> = self.places.iter().filter(|p| p.word() == word).map(|p| p.target.as_str()).collect();
            if !named.is_empty() {
                parts.push(format!("{said} {}", named.join(", ")));
            }
        }
        parts.join("; ")
    }
}

impl PlaceVerdict {
    /// A place's row after its word: the deciding test beside its threshold
    /// (and the margin, when inside it), the evidence, how its samples judged,
    /// and what else bears on the mechanism.
    pub fn details(&self) -> String {
        let p = self;
        let mut parts: Vec<String> = Vec::new();
        if let Some(rule) = &p.rule {
            let shown = if rule.marginal {
                format!("{}, within {:.0}% of it)", rule.shown.trim_end_matches(')'), rule.margin * 100.0)
            } else {
                rule.shown.clone()
            };
            parts.push(shown);
        }
        if !p.evidence.is_empty() {
            parts.push(p.evidence.clone());
        }
        match (&p.samples, p.images) {
            (Some(samples), _) if samples.by == "images" => parts.push(samples.describe()),
            (Some(samples), Some(images)) => parts.push(format!("{} on {images} aged image", samples.describe())),
            (Some(samples), None) => parts.push(samples.describe()),
            (None, Some(images)) => parts.push(format!("{images} aged image{}", if images == 1 { "" } else { "s" })),
            (None, None) => {}
        }
        parts.extend(p.also.iter().cloned());
        parts.join("; ")
    }

    /// The place's target: its `fs`, or (in a record stored before `fs`)
    /// its label up to the conditions.
    pub fn fs_label(&self) -> &str {
        if self.fs.is_empty() { self.target.split('@').next().unwrap_or(&self.target) } else { &self.fs }
    }

    /// One word for tables: `shows`, `gone`, `marginal`, `mixed`,
    /// `unknown`.
    pub fn word(&self) -> &str {
        if self.judged.is_empty() { word(self.shows) } else { &self.judged }
    }
}

fn word(shows: Option<bool>) -> &'static str {
    match shows {
        Some(true) => "shows",
        Some(false) => "gone",
        None => "unknown",
    }
}

/// The `'static` form of a place's word (`shows`, `gone`, `marginal`,
/// `mixed`, `unknown`); anything else reads `unknown`.
pub fn verdict_word(word: &str) -> &'static str {
    ["shows", "gone", "marginal", "mixed"].into_iter().find(|w| *w == word).unwrap_or("unknown")
}
