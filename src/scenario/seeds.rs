//! The seeds preset's last word: does this kernel still show what each
//! seed reported, where, and which measured figure says so.
//!
//! Each scenario states its seed's claim as a predicate on the cases of
//! one place (a target label under its conditions, `xfs@256M`), written
//! beside its [`Seeded`](super::Seeded) impl with each threshold's reason:
//! the claim is about a mechanism, not about the file system the seed
//! happened to use, so it is judged on every place of the run
//! ([`judge_places`]). This module holds the shape of the answer and the
//! small lookups every predicate needs. Exact figures where the claim has
//! them: a verdict must come out the same when the run is repeated.

pub use crate::record::{PlaceVerdict, Verdict};

use std::collections::BTreeMap;

use crate::record::{Case, Rule, Samples};
use crate::site::FsType;
use crate::units::{bytes_short, short_number};

/// The comparison a seed made, as the preset runs it.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// `--set` values, as `(key, "v1,v2")`; the user's own `--set` for the
    /// same key wins.
    pub settings: &'static [(&'static str, &'static str)],
    /// Targets beyond the five default file systems (seed 001's 1 KiB-block
    /// ext2).
    pub variants: &'static [Variant],
    /// Conditions the seed's machine had and a fresh lab lacks (seed 000's
    /// memory about the file's size, its writeback starting early): each is
    /// a place of its own beside the run's conditions, for this scenario
    /// alone, so it does not multiply the other scenarios' cases.
    pub conditions: &'static [PresetCondition],
    /// The modelled drive (a built-in disk profile's name) of the kind the
    /// seed's report ran on, where it names one: the preset times reading
    /// the layout there, unless the run names a `--disk`.
    pub disk: Option<&'static str>,
}

/// One condition a preset adds: a memory limit, sysctls set for the case,
/// an aged or full start, written as `--memory`, `--sysctl`, `--age` and
/// `--fill` would take them.
#[derive(Debug, Clone, Copy)]
pub struct PresetCondition {
    /// The work's memory limit (`96M`), if any.
    pub memory: Option<&'static str>,
    /// Sysctls set for the case alone, as `(key, value)`.
    pub sysctls: &'static [(&'static str, &'static str)],
    /// The target aged first, as `--age` takes it (`churn`), if at all.
    pub age: Option<&'static str>,
    /// The target filled first, as `--fill` takes it (`80%`), if at all.
    pub fill: Option<&'static str>,
}

/// A scratch file system made another way, under its own label.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The row's name (`ext2-1k`).
    pub label: &'static str,
    /// The file system.
    pub fs: FsType,
    /// mkfs arguments added to the run's.
    pub mkfs_args: &'static [&'static str],
    /// Mount options replacing the run's, if any.
    pub mount_opts: Option<&'static str>,
}

/// How far from its threshold a deciding value may lie and still read
/// `marginal`: within 20% either way (4.3 × against a 4 × rule is, 2.4 ×
/// is not). Another run of the same setup on another machine lands about
/// that far off on the timing-led figures.
pub const MARGIN: f64 = 0.2;

/// How a test's numbers print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// A ratio: `24.7×`.
    Times,
    /// A count: `52`.
    Count,
    /// Bytes: `6 KiB`.
    Bytes,
    /// A share: `48%`.
    Share,
}

impl Shown {
    fn print(self, value: f64) -> String {
        match self {
            Shown::Times if value.is_infinite() => "∞×".to_string(),
            Shown::Times => {
                // Three figures at most, no trailing zeros: 1.25×, 10.5×, 312×.
                let places = if value >= 100.0 { 0 } else if value >= 10.0 { 1 } else { 2 };
                let text = format!("{value:.places$}");
                let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
                format!("{text}×")
            }
            Shown::Count => short_number(value),
            Shown::Bytes => bytes_short(value.max(0.0) as u64),
            Shown::Share => format!("{:.0}%", value * 100.0),
        }
    }
}

/// One test of a seed's claim on a place: a value weighed against the
/// threshold where the claim starts to hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// The figure the value comes from (`extents`).
    pub figure: &'static str,
    /// What is weighed, in a few words (`mkfile/dd extents`).
    pub what: &'static str,
    /// Its value here.
    pub value: f64,
    /// The threshold.
    pub threshold: f64,
    /// The claim holds at `value >= threshold` (else at `value < threshold`).
    pub at_least: bool,
    /// How the numbers print.
    pub shown: Shown,
}

impl Test {
    /// A test that holds at `value >= threshold`.
    pub fn at_least(figure: &'static str, what: &'static str, value: f64, threshold: f64, shown: Shown) -> Test {
        Test { figure, what, value, threshold, at_least: true, shown }
    }

    /// A test that holds at `value < threshold`.
    pub fn below(figure: &'static str, what: &'static str, value: f64, threshold: f64, shown: Shown) -> Test {
        Test { figure, what, value, threshold, at_least: false, shown }
    }

    /// Whether the claim holds by this test.
    pub fn holds(&self) -> bool {
        if self.at_least { self.value >= self.threshold } else { self.value < self.threshold }
    }

    /// How far past the threshold, as a factor on the side where it
    /// holds: above 1 holds, below 1 does not, 1 is on the line.
    pub fn factor(&self) -> f64 {
        let (over, under) = if self.at_least { (self.value, self.threshold) } else { (self.threshold, self.value) };
        match (over, under) {
            (o, u) if u > 0.0 => o / u,
            (o, _) if o > 0.0 => f64::INFINITY,
            _ => 1.0,
        }
    }

    /// Whether the value lies within [`MARGIN`] of the threshold.
    pub fn marginal(&self) -> bool {
        let f = self.factor();
        f < 1.0 + MARGIN && f > 1.0 / (1.0 + MARGIN)
    }

    /// `mkfile/dd extents 24.7× (shows at ≥ 4.0×)`.
    pub fn describe(&self) -> String {
        let op = if self.at_least { "≥" } else { "<" };
        format!("{} {} (shows at {op} {})", self.what, self.shown.print(self.value), self.shown.print(self.threshold))
    }

    /// The record's form, with the margin said.
    pub fn rule(&self) -> Rule {
        Rule {
            what: self.what.to_string(),
            value: self.value,
            threshold: self.threshold,
            at_least: self.at_least,
            shown: self.describe(),
            margin: MARGIN,
            marginal: self.marginal(),
        }
    }
}

/// A predicate's answer on one place: the tests of the claim (all must
/// hold, or with `any` one), the figure reported as deciding with its
/// value and what it was weighed against (the record's `figure`, `value`,
/// `against`), and a few words of evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// `None`: a case or figure the predicate needs is missing here.
    pub shows: Option<bool>,
    /// The deciding figure's name.
    pub figure: &'static str,
    /// Its value here.
    pub value: Option<f64>,
    /// What it was weighed against, if anything.
    pub against: Option<f64>,
    /// The figures in a few words, or why the place was not judged.
    pub evidence: String,
    /// The tests, each with its threshold.
    pub tests: Vec<Test>,
    /// Whether one holding test is enough (else all must hold).
    pub any: bool,
    /// Figures that bear on the mechanism whatever the tests say.
    pub also: Vec<String>,
}

impl Judged {
    /// A place the predicate cannot judge, and why.
    pub fn unknown(figure: &'static str, why: impl Into<String>) -> Judged {
        Judged { shows: None, figure, value: None, against: None, evidence: why.into(), tests: Vec::new(), any: false, also: Vec::new() }
    }

    /// The claim judged by `tests` (all must hold, or one with `any`),
    /// reporting `figure`'s `value` weighed `against` something.
    pub fn by(tests: Vec<Test>, any: bool, figure: &'static str, value: f64, against: Option<f64>, evidence: String) -> Judged {
        let shows = if any { tests.iter().any(Test::holds) } else { tests.iter().all(Test::holds) };
        Judged { shows: Some(shows), figure, value: Some(value), against, evidence, tests, any, also: Vec::new() }
    }

    /// The test that decided, and whether the answer lies within the
    /// margin (one test inside it would flip the answer): for a claim
    /// that holds, the holding test nearest its threshold (with `any`: the
    /// farthest, as all holding ones must flip); for one that does not,
    /// the failing test farthest from its threshold (with `any`: the
    /// nearest).
    pub fn deciding(&self) -> Option<(&Test, bool)> {
        let shows = self.shows?;
        let side: Vec<&Test> = self.tests.iter().filter(|t| t.holds() == shows).collect();
        let by_factor = |a: &&&Test, b: &&&Test| a.factor().total_cmp(&b.factor());
        // Holding tests have factors above 1, failing ones below: the
        // nearest to the line is the smallest above, the largest below.
        let near_first = if shows { side.iter().min_by(by_factor) } else { side.iter().max_by(by_factor) };
        let far_first = if shows { side.iter().max_by(by_factor) } else { side.iter().min_by(by_factor) };
        let all_must_flip = if shows { self.any } else { !self.any };
        let test = *(if all_must_flip { far_first } else { near_first })?;
        let marginal = if all_must_flip { side.iter().all(|t| t.marginal()) } else { test.marginal() };
        Some((test, marginal))
    }
}

/// The cases of one place: a target label and the conditions they ran
/// under, failed cases included (so a place whose cases all failed is
/// listed as not judged rather than forgotten).
#[derive(Debug)]
pub struct Place<'a> {
    /// The label tables use (`xfs@256M`).
    pub label: String,
    /// The target label (`xfs`).
    pub fs: &'a str,
    /// The conditions.
    pub conditions: &'a BTreeMap<String, String>,
    /// Its cases, in run order.
    pub cases: Vec<&'a Case>,
}

/// The places of `cases`, in the order their first case ran.
pub fn places<'a>(cases: &[&'a Case]) -> Vec<Place<'a>> {
    let mut out: Vec<Place<'a>> = Vec::new();
    for &case in cases {
        match out.iter_mut().find(|p| p.fs == case.fs && *p.conditions == case.conditions) {
            Some(place) => place.cases.push(case),
            None => out.push(Place { label: case.place(), fs: &case.fs, conditions: &case.conditions, cases: vec![case] }),
        }
    }
    out
}

/// The seed's verdict on a run: `predicate` judged on every place of
/// `cases`, then summed up — shows if any place shows, gone if every
/// judged place is gone, unknown if none could be judged. `claim` is what
/// the seed itself reported, kept as one line of evidence. Each place says
/// the test that decided it beside its threshold, reads `marginal` when
/// that value lies within [`MARGIN`] of it, and `mixed` when its samples
/// (aged images, else repeats), judged each on its own, disagree.
pub fn judge_places(
    scenario: &str,
    seed: &str,
    claim: &str,
    cases: &[&Case],
    predicate: impl Fn(&[&Case]) -> Judged,
) -> Verdict {
    let places: Vec<PlaceVerdict> = places(cases).into_iter().map(|place| judge_place(&place, &predicate)).collect();
    let with = |word: &'static str| places.iter().filter(move |p| p.word() == word);
    let mut parts = Vec::new();
    for (word, said) in [("shows", "shows on"), ("marginal", "marginal on"), ("mixed", "mixed on")] {
        let named: Vec<String> = with(word).map(|p| format!("{} ({})", p.target, p.evidence)).collect();
        if !named.is_empty() {
            parts.push(format!("{said} {}", named.join(" and on ")));
        }
    }
    let gone: Vec<&str> = with("gone").map(|p| p.target.as_str()).collect();
    if !gone.is_empty() {
        parts.push(format!("gone on {}", gone.join(", ")));
    }
    let unjudged: Vec<String> = with("unknown").map(|p| format!("{} ({})", p.target, p.evidence)).collect();
    if !unjudged.is_empty() {
        parts.push(format!("not judged on {}", unjudged.join(", ")));
    }
    let shows = if places.iter().any(|p| p.shows == Some(true)) {
        Some(true)
    } else if places.iter().any(|p| p.shows == Some(false)) {
        Some(false)
    } else {
        None
    };
    let evidence = if places.is_empty() {
        format!("seed {seed}: no case of {scenario} in this run")
    } else {
        format!("seed {seed} {}", parts.join("; "))
    };
    let (safety, programs) = (String::new(), Vec::new());
    Verdict { scenario: scenario.into(), seed: seed.into(), shows, evidence, claim: claim.into(), places, safety, programs }
}

/// One place judged on all its cases, and on each sample alone.
fn judge_place(place: &Place<'_>, predicate: &impl Fn(&[&Case]) -> Judged) -> PlaceVerdict {
    let judged = predicate(&place.cases);
    let deciding = judged.deciding().map(|(test, marginal)| (test.rule(), marginal));
    let samples = samples_of(&place.cases).map(|(by, groups)| {
        let each: Vec<Option<bool>> = groups.iter().map(|g| predicate(g).shows).collect();
        let count = |want| each.iter().filter(|s| **s == Some(want)).count() as u32;
        Samples { by: by.to_string(), count: groups.len() as u32, showing: count(true), gone: count(false) }
    });
    let word = match (judged.shows, &samples, &deciding) {
        (None, _, _) => "unknown",
        (_, Some(s), _) if s.mixed() => "mixed",
        (_, _, Some((_, true))) => "marginal",
        (Some(true), _, _) => "shows",
        (Some(false), _, _) => "gone",
    };
    PlaceVerdict {
        target: place.label.clone(),
        fs: place.fs.to_string(),
        conditions: place.conditions.clone(),
        shows: judged.shows,
        figure: judged.figure.to_string(),
        value: judged.value,
        against: judged.against,
        evidence: judged.evidence,
        judged: word.to_string(),
        rule: deciding.map(|(rule, _)| rule),
        samples,
        images: images_of(&place.cases),
        also: judged.also,
    }
}

/// How many aged images (cache entries) a place's cases started from;
/// `None` when none was aged or filled.
fn images_of(cases: &[&Case]) -> Option<u32> {
    let keys: std::collections::BTreeSet<&str> = cases.iter().filter_map(|c| c.start.as_ref()).map(|s| s.cache_key.as_str()).collect();
    (!keys.is_empty()).then_some(keys.len() as u32)
}

/// A place's cases as samples to judge one by one: by aged image when
/// they started from more than one (each a cache entry), else by repeat
/// when there is more than one; `None` for a single sample.
fn samples_of<'a>(cases: &[&'a Case]) -> Option<(&'static str, Vec<Vec<&'a Case>>)> {
    let group = |key: &dyn Fn(&Case) -> String| {
        let mut groups: Vec<(String, Vec<&'a Case>)> = Vec::new();
        for &case in cases {
            let k = key(case);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, members)) => members.push(case),
                None => groups.push((k, vec![case])),
            }
        }
        groups.into_iter().map(|(_, members)| members).collect::<Vec<_>>()
    };
    let images = group(&|c: &Case| c.start.as_ref().map(|s| s.cache_key.clone()).unwrap_or_default());
    if images.len() > 1 {
        return Some(("images", images));
    }
    let repeats = group(&|c: &Case| c.repeat.to_string());
    (repeats.len() > 1).then_some(("repeats", repeats))
}

/// The successful cases whose parameters include every `(key, value)` of
/// `params`.
pub fn with_params<'a>(cases: &[&'a Case], params: &[(&str, &str)]) -> Vec<&'a Case> {
    cases
        .iter()
        .copied()
        .filter(|c| c.status == crate::record::Status::Ok)
        .filter(|c| params.iter().all(|(k, v)| c.params.get(*k).is_some_and(|p| value_is(p, v))))
        .collect()
}

fn value_is(param: &serde_json::Value, want: &str) -> bool {
    match param {
        serde_json::Value::String(s) => s == want,
        serde_json::Value::Number(n) => n.to_string() == want,
        _ => false,
    }
}

/// The median of figure `name` over `cases` (repeats), or `None` when no
/// case measured it.
pub fn median(cases: &[&Case], name: &str) -> Option<f64> {
    let mut values: Vec<f64> = cases.iter().filter_map(|c| c.figures.value(name)).collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

/// How many times a reference's time `ratio` is, as a reader says it,
/// with the word that joins the reference: `82× slower` (than) from twice
/// on, `19% slower` below that, `as fast` (as) within half a percent, `4%
/// faster` (than).
pub fn slower(ratio: f64) -> (String, &'static str) {
    let pct = (ratio - 1.0) * 100.0;
    if ratio >= 2.0 {
        (format!("{} slower", Shown::Times.print(ratio)), "than")
    } else if pct.abs() < 0.5 {
        ("as fast".to_string(), "as")
    } else if pct > 0.0 {
        (format!("{pct:.0}% slower"), "than")
    } else {
        (format!("{:.0}% faster", -pct), "than")
    }
}

/// `reads 82× slower on hdd-7200-2009 (modelled) than in one piece`: a
/// modelled read time `ratio` times that of `reference`, on the drive
/// `cases` were modelled on (`target.disk`); `None` without a ratio or a
/// drive (a run stored before the model).
pub fn modelled_read(cases: &[&Case], ratio: Option<f64>, reference: &str) -> Option<String> {
    let disk = cases.iter().find_map(|c| c.target.disk.as_deref())?;
    let (slower, joined) = slower(ratio?);
    Some(format!("reads {slower} on {disk} (modelled) {joined} {reference}"))
}

/// A modelled read as [`modelled_read`] words it, read back from a
/// place's evidence: how many times the reference's time, on which drive,
/// against what.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelledRead {
    /// The modelled time over the reference's (1 as fast, 82.4 slower).
    pub ratio: f64,
    /// The drive it was modelled on (`hdd-7200-2009`).
    pub disk: String,
    /// What it was weighed against (`in one piece`, `write-1g's`).
    pub reference: String,
}

/// The modelled read a place's evidence says, as [`modelled_read`] wrote
/// it (`the file reads 44× slower on hdd-7200-2009 (modelled) than in one
/// piece: ...`), to the precision it was printed; `None` when it says none.
pub fn modelled_read_in(evidence: &str) -> Option<ModelledRead> {
    let (_, said) = evidence.split_once("reads ")?;
    let (how, said) = said.split_once(" on ")?;
    let (disk, said) = said.split_once(" (modelled) ")?;
    let said = said.strip_prefix("than ").or_else(|| said.strip_prefix("as "))?;
    let reference = said.split([':', '(', ',', ';']).next()?.trim_end();
    let number = |text: &str| text.parse::<f64>().ok();
    let ratio = if how == "as fast" {
        1.0
    } else if let Some(times) = how.strip_suffix("× slower") {
        number(times)?
    } else if let Some(pct) = how.strip_suffix("% slower") {
        1.0 + number(pct)? / 100.0
    } else {
        1.0 - number(how.strip_suffix("% faster")?)? / 100.0
    };
    Some(ModelledRead { ratio, disk: disk.to_string(), reference: reference.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Figures, Kind};

    fn case(fs: &str, strategy: &str, commits: f64) -> Case {
        let mut figures = Figures::new();
        figures.set("journal_commits", commits, "count", Better::Lower, Kind::Exact);
        let mut params = serde_json::Map::new();
        params.insert("strategy".into(), strategy.into());
        params.insert("files".into(), 20.into());
        Case { figures, ..Case::new("replace-files", fs, params, 1) }
    }

    fn times(value: f64, threshold: f64) -> Test {
        Test::at_least("extents", "a/b extents", value, threshold, Shown::Times)
    }

    #[test]
    fn the_deciding_test_says_its_value_beside_its_threshold_and_its_margin() {
        let judged = |tests: Vec<Test>, any| Judged::by(tests, any, "extents", 1.0, None, String::new());
        // One test, 5% past its threshold: shows, but marginal.
        let near = judged(vec![times(4.2, 4.0)], false);
        let (test, marginal) = near.deciding().unwrap();
        assert_eq!((near.shows, test.value, marginal), (Some(true), 4.2, true));
        assert_eq!(test.describe(), "a/b extents 4.2× (shows at ≥ 4×)");
        // Far past it: not marginal; far below: gone, not marginal.
        assert_eq!(judged(vec![times(24.7, 4.0)], false).deciding().map(|(_, m)| m), Some(false));
        let gone = judged(vec![times(2.4, 4.0)], false);
        assert_eq!((gone.shows, gone.deciding().map(|(t, m)| (t.value, m))), (Some(false), Some((2.4, false))));
        // All must hold: the nearest holding test decides a "shows"...
        let both = judged(vec![times(24.7, 4.0), times(11.0, 10.0)], false);
        assert_eq!(both.deciding().map(|(t, m)| (t.value, m)), Some((11.0, true)));
        // ...and a "gone" with two failing tests is marginal only when both are near.
        let one_far = judged(vec![times(3.9, 4.0), times(2.0, 10.0)], false);
        assert_eq!(one_far.deciding().map(|(t, m)| (t.value, m)), Some((2.0, false)));
        let both_near = judged(vec![times(3.9, 4.0), times(9.5, 10.0)], false);
        assert_eq!(both_near.deciding().map(|(_, m)| m), Some(true));
        // One of them is enough: a "gone" is marginal when the nearest is.
        let any = judged(vec![times(1.9, 2.0), times(1.0, 2.0)], true);
        assert_eq!((any.shows, any.deciding().map(|(t, m)| (t.value, m))), (Some(false), Some((1.9, true))));
        // A test below its threshold: 900 KiB mean extents under 1 MiB.
        let below = Test::below("bytes", "mean extent", 900.0 * 1024.0, 1024.0 * 1024.0, Shown::Bytes);
        assert!(below.holds() && below.marginal());
        assert_eq!(below.describe(), "mean extent 900 KiB (shows at < 1 MiB)");
    }

    #[test]
    fn a_place_reads_marginal_or_mixed_and_its_row_says_why() {
        // Commits against 10: 10.5 is within the margin; 30 and 2 are not.
        let predicate = |cases: &[&Case]| match median(&with_params(cases, &[]), "journal_commits") {
            Some(n) => Judged::by(vec![times(n, 10.0)], false, "journal_commits", n, Some(10.0), format!("{n} commits")),
            None => Judged::unknown("journal_commits", "no case"),
        };
        let mut second = case("ext4", "fsync-each", 2.0);
        second.repeat = 2;
        let all = [case("xfs", "fsync-each", 10.5), case("ext4", "fsync-each", 30.0), second];
        let refs: Vec<&Case> = all.iter().collect();
        let v = judge_places("replace-files", "002", "", &refs, predicate);
        assert_eq!(v.places[0].word(), "marginal");
        let rule = v.places[0].rule.as_ref().unwrap();
        assert_eq!((rule.value, rule.threshold, rule.margin, rule.marginal), (10.5, 10.0, MARGIN, true));
        assert_eq!(v.places[0].details(), "a/b extents 10.5× (shows at ≥ 10×, within 20% of it); 10.5 commits");
        // ext4's two repeats judge apart: mixed, whatever their median says.
        assert_eq!(v.places[1].word(), "mixed");
        let samples = v.places[1].samples.as_ref().unwrap();
        assert_eq!((samples.by.as_str(), samples.count, samples.showing, samples.gone), ("repeats", 2, 1, 1));
        assert!(v.places[1].details().ends_with("2 repeats: 1 show, 1 gone"), "{}", v.places[1].details());
        assert_eq!(v.where_list(), "marginal on xfs; mixed on ext4");
    }

    #[test]
    fn an_aged_place_is_judged_on_each_of_its_images_and_says_how_many() {
        let predicate = |cases: &[&Case]| match median(&with_params(cases, &[]), "journal_commits") {
            Some(n) => Judged::by(vec![times(n, 10.0)], false, "journal_commits", n, Some(10.0), String::new()),
            None => Judged::unknown("journal_commits", "no case"),
        };
        let aged = |commits: f64, key: &str, repeat: u32| {
            let mut c = case("xfs", "fsync-each", commits);
            c.repeat = repeat;
            c.start = Some(crate::record::StartRecord {
                age: Some("churn".into()),
                cache_key: key.into(),
                cache_hit: true,
                image: repeat,
                ..Default::default()
            });
            c
        };
        let three = [aged(30.0, "a", 1), aged(40.0, "b", 2), aged(50.0, "c", 3)];
        let v = judge_places("replace-files", "002", "", &three.iter().collect::<Vec<_>>(), predicate);
        let place = &v.places[0];
        assert_eq!((place.word(), place.images), ("shows", Some(3)));
        assert_eq!(place.details(), "a/b extents 40× (shows at ≥ 10×); 3 images agree");
        let split = [aged(30.0, "a", 1), aged(2.0, "b", 2), aged(50.0, "c", 3)];
        let v = judge_places("replace-files", "002", "", &split.iter().collect::<Vec<_>>(), predicate);
        assert_eq!(v.places[0].word(), "mixed");
        assert!(v.places[0].details().ends_with("3 images: 2 show, 1 gone"), "{}", v.places[0].details());
        let one = [aged(30.0, "a", 1)];
        let v = judge_places("replace-files", "002", "", &one.iter().collect::<Vec<_>>(), predicate);
        assert!(v.places[0].details().ends_with("1 aged image"), "{}", v.places[0].details());
    }

    #[test]
    fn a_modelled_read_is_said_beside_the_drive_it_was_modelled_on() {
        let words: Vec<(String, &str)> = [82.0, 2.0, 1.19, 1.004, 0.96].iter().map(|r| slower(*r)).collect();
        let said: Vec<String> = words.iter().map(|(w, j)| format!("{w} {j}")).collect();
        assert_eq!(said, ["82× slower than", "2× slower than", "19% slower than", "as fast as", "4% faster than"]);
        let mut modelled = case("ext3", "fsync-each", 3.0);
        let before = case("ext3", "fsync-each", 3.0);
        assert_eq!(modelled_read(&[&before], Some(82.4), "in one piece"), None, "a run stored before the model says nothing");
        modelled.target.disk = Some("hdd-7200-2009".into());
        let said = |ratio| modelled_read(&[&modelled], Some(ratio), "in one piece");
        assert_eq!(said(82.4).as_deref(), Some("reads 82.4× slower on hdd-7200-2009 (modelled) than in one piece"));
        assert_eq!(said(1.0).as_deref(), Some("reads as fast on hdd-7200-2009 (modelled) as in one piece"));
        assert_eq!(modelled_read(&[&modelled], None, "in one piece"), None);
    }

    #[test]
    fn a_modelled_read_is_read_back_from_the_words_that_said_it() {
        let mut modelled = case("ext3", "fsync-each", 3.0);
        modelled.target.disk = Some("hdd-7200".into());
        for (ratio, reference) in [(82.4, "in one piece"), (1.19, "write-1g's"), (1.0, "in one piece"), (0.96, "write-64k's")] {
            let said = modelled_read(&[&modelled], Some(ratio), reference).unwrap();
            let evidence = format!("mkfile's file {said}: mkfile 74 extents, write-1g 3");
            let back = modelled_read_in(&evidence).unwrap();
            assert!((back.ratio - ratio).abs() < 1e-9, "{evidence}: {back:?}");
            assert_eq!((back.disk.as_str(), back.reference.as_str()), ("hdd-7200", reference), "{evidence}");
        }
        let tree = "98% of files contiguous (best 100%, ext4), the copy reads 11.9× slower on hdd-7200 (modelled) than in one piece (best 35% slower, btrfs)";
        assert_eq!(modelled_read_in(tree).map(|m| (m.ratio, m.reference)), Some((11.9, "in one piece".to_string())));
        assert_eq!(modelled_read_in("21 journal commits with fsync-each, 2 with writeback-batch"), None);
    }

    #[test]
    fn cases_are_picked_by_params_and_medians_taken() {
        let all = [case("ext4", "fsync-each", 21.0), case("ext4", "fsync-each", 23.0), case("ext4", "none", 1.0)];
        let refs: Vec<&Case> = all.iter().collect();
        let picked = with_params(&refs, &[("strategy", "fsync-each"), ("files", "20")]);
        assert_eq!(picked.len(), 2);
        assert_eq!(median(&picked, "journal_commits"), Some(22.0));
        assert_eq!(median(&picked, "flushes"), None);
        assert!(with_params(&refs, &[("strategy", "other")]).is_empty());
        assert_eq!(median(&with_params(&refs, &[("strategy", "none")]), "journal_commits"), Some(1.0));
    }

    #[test]
    fn every_place_is_judged_and_the_summary_says_where() {
        let mut limited = case("xfs", "fsync-each", 40.0);
        limited.conditions.insert("memory".into(), "256M".into());
        let mut failed = case("ext2", "fsync-each", 0.0);
        failed.status = crate::record::Status::Failed;
        let all = [case("ext4", "fsync-each", 21.0), case("xfs", "fsync-each", 2.0), limited, failed, case("ext4", "fsync-each", 23.0)];
        let refs: Vec<&Case> = all.iter().collect();
        let predicate = |cases: &[&Case]| match median(&with_params(cases, &[]), "journal_commits") {
            Some(n) => Judged::by(vec![Test::at_least("journal_commits", "commits", n, 10.0, Shown::Count)], false, "journal_commits", n, Some(10.0), format!("{} commits", crate::units::short_number(n))),
            None => Judged::unknown("journal_commits", "no case"),
        };
        let v = judge_places("replace-files", "002", "ext4 in 2009", &refs, predicate);
        assert_eq!(v.shows, Some(true));
        assert_eq!(v.evidence, "seed 002 shows on ext4 (22 commits) and on xfs@256M (40 commits); gone on xfs; not judged on ext2 (no case)");
        assert_eq!(v.claim, "ext4 in 2009");
        let targets: Vec<(&str, &str, Option<bool>, Option<f64>)> =
            v.places.iter().map(|p| (p.target.as_str(), p.fs.as_str(), p.shows, p.value)).collect();
        assert_eq!(
            targets,
            [("ext4", "ext4", Some(true), Some(22.0)), ("xfs", "xfs", Some(false), Some(2.0)), ("xfs@256M", "xfs", Some(true), Some(40.0)), ("ext2", "ext2", None, None)]
        );
        assert_eq!(v.places[2].conditions.get("memory").map(String::as_str), Some("256M"));

        let gone = judge_places("replace-files", "002", "", &refs[1..2], predicate);
        assert_eq!((gone.shows, gone.evidence.as_str()), (Some(false), "seed 002 gone on xfs"));
        let none = judge_places("replace-files", "002", "", &refs[3..4], predicate);
        assert_eq!(none.shows, None);
        let empty = judge_places("replace-files", "002", "", &[], predicate);
        assert_eq!((empty.shows, empty.evidence.as_str()), (None, "seed 002: no case of replace-files in this run"));
    }
}
