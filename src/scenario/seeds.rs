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
//! them: a verdict must come out the same when the run is repeated. Where
//! a claim rests on a timing (journal commits, extents writeback placed),
//! the medians of the repeats decide, and a place whose repeats disagree
//! says so.

pub use crate::record::{PlaceVerdict, Verdict};

use std::collections::BTreeMap;

use crate::record::Case;
use crate::target::FsType;

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

/// A predicate's answer on one place: shows or not (or could not be
/// judged), the figure that decided, and a few words of evidence.
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
}

impl Judged {
    /// A place the predicate cannot judge, and why.
    pub fn unknown(figure: &'static str, why: impl Into<String>) -> Judged {
        Judged { shows: None, figure, value: None, against: None, evidence: why.into() }
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
/// the seed itself reported, kept as one line of evidence.
pub fn judge_places(
    scenario: &str,
    seed: &str,
    claim: &str,
    cases: &[&Case],
    predicate: impl Fn(&[&Case]) -> Judged,
) -> Verdict {
    let places: Vec<PlaceVerdict> = places(cases)
        .into_iter()
        .map(|place| {
            let mut judged = predicate(&place.cases);
            if let Some(split) = repeats_split(&place.cases, &judged, &predicate) {
                judged.evidence = format!("{}; {split}", judged.evidence);
            }
            PlaceVerdict {
                target: place.label,
                fs: place.fs.to_string(),
                conditions: place.conditions.clone(),
                shows: judged.shows,
                figure: judged.figure.to_string(),
                value: judged.value,
                against: judged.against,
                evidence: judged.evidence,
            }
        })
        .collect();
    let with = |shows: Option<bool>| places.iter().filter(move |p| p.shows == shows);
    let mut parts = Vec::new();
    let showing: Vec<String> = with(Some(true)).map(|p| format!("{} ({})", p.target, p.evidence)).collect();
    if !showing.is_empty() {
        parts.push(format!("shows on {}", showing.join(" and on ")));
    }
    let gone: Vec<&str> = with(Some(false)).map(|p| p.target.as_str()).collect();
    if !gone.is_empty() {
        parts.push(format!("gone on {}", gone.join(", ")));
    }
    let unjudged: Vec<String> = with(None).map(|p| format!("{} ({})", p.target, p.evidence)).collect();
    if !unjudged.is_empty() {
        parts.push(format!("not judged on {}", unjudged.join(", ")));
    }
    let shows = if !showing.is_empty() {
        Some(true)
    } else if !gone.is_empty() {
        Some(false)
    } else {
        None
    };
    let evidence = if places.is_empty() {
        format!("seed {seed}: no case of {scenario} in this run")
    } else {
        format!("seed {seed} {}", parts.join("; "))
    };
    Verdict { scenario: scenario.into(), seed: seed.into(), shows, evidence, claim: claim.into(), places }
}

/// When the figure that decided a place is a timing (or made from
/// timings: a figure no case holds, as tree-copy's share of contiguous
/// files) and its repeats, judged one by one, disagree about the claim:
/// `a timing: shows in 2 of 5 repeats`. The medians still decide; this
/// says how firmly.
fn repeats_split(cases: &[&Case], judged: &Judged, predicate: &impl Fn(&[&Case]) -> Judged) -> Option<String> {
    let declared = cases.iter().filter_map(|c| c.figures.get(judged.figure)).collect::<Vec<_>>();
    let timing = declared.is_empty() || declared.iter().any(|f| f.kind == crate::record::Kind::Timing);
    if !timing || judged.shows.is_none() {
        return None;
    }
    let mut repeats: Vec<u32> = cases.iter().map(|c| c.repeat).collect();
    repeats.sort_unstable();
    repeats.dedup();
    let each: Vec<bool> = repeats
        .iter()
        .filter_map(|r| predicate(&cases.iter().copied().filter(|c| c.repeat == *r).collect::<Vec<_>>()).shows)
        .collect();
    let shows = each.iter().filter(|s| **s).count();
    (shows > 0 && shows < each.len()).then(|| format!("a timing: shows in {shows} of {} repeats", each.len()))
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
            Some(n) => Judged { shows: Some(n >= 10.0), figure: "journal_commits", value: Some(n), against: Some(10.0), evidence: format!("{} commits", crate::units::short_number(n)) },
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

    #[test]
    fn a_place_whose_timing_repeats_disagree_says_so() {
        // Commits of five repeats under load: 201, 94, 201, 16, 138.
        let repeat = |n: f64, r: u32, kind: Kind| {
            let mut c = case("ext4", "fsync-each", n);
            c.repeat = r;
            c.figures.set("journal_commits", n, "count", Better::Lower, kind);
            c
        };
        let predicate = |cases: &[&Case]| match median(cases, "journal_commits") {
            Some(n) => Judged { shows: Some(n >= 100.0), figure: "journal_commits", value: Some(n), against: None, evidence: format!("{n} commits") },
            None => Judged::unknown("journal_commits", "no case"),
        };
        let loaded: Vec<Case> = [201.0, 94.0, 201.0, 16.0, 138.0].iter().zip(1..).map(|(&n, r)| repeat(n, r, Kind::Timing)).collect();
        let v = judge_places("replace-files", "002", "", &loaded.iter().collect::<Vec<_>>(), predicate);
        assert_eq!(v.places[0].shows, Some(true), "the median, 138, decides");
        assert_eq!(v.places[0].evidence, "138 commits; a timing: shows in 3 of 5 repeats");
        // Repeats that agree, or an exact figure, add nothing.
        let steady: Vec<Case> = (1..4).map(|r| repeat(201.0, r, Kind::Timing)).collect();
        let v = judge_places("replace-files", "002", "", &steady.iter().collect::<Vec<_>>(), predicate);
        assert_eq!(v.places[0].evidence, "201 commits");
        let exact: Vec<Case> = [201.0, 16.0, 138.0].iter().zip(1..).map(|(&n, r)| repeat(n, r, Kind::Exact)).collect();
        let v = judge_places("replace-files", "002", "", &exact.iter().collect::<Vec<_>>(), predicate);
        assert_eq!(v.places[0].evidence, "138 commits");
    }
}
