//! One seed's verdict on one screen: its places gathered into lines by
//! the word they got and the test that decided it, each line naming its
//! places in few words (`ext2, ext3 (all 4 places each), xfs@160M`), the
//! deciding values as a range beside the threshold (`mean extent 8–128
//! MiB (shows at < 1 MiB)`) and, where the evidence says one, the modelled
//! read's range; then what the seed reported, in the same terms. Nothing
//! here is a new figure: ranges are of the values the places were judged
//! on, printed as their rows print them.

use super::wrap;
use crate::record::{Case, PlaceVerdict, Verdict};
use crate::scenario::seeds::{ModelledRead, modelled_read_in, slower};
use crate::units::short_number;

/// The words in the order their lines come: where the claim holds first.
const WORDS: [&str; 5] = ["shows", "marginal", "mixed", "gone", "unknown"];

/// Where a group line's text goes on after the word, and its
/// continuations.
pub(super) const INDENT: usize = 14;

/// Places that share a line: the same word from the same test (what it
/// weighs and its threshold; for a place not judged, the same reason).
struct Group<'a> {
    word: &'a str,
    key: (String, String),
    places: Vec<&'a PlaceVerdict>,
    /// How many of them had a case measured on a busy machine (the run's
    /// footnote names the cases).
    busy: usize,
}

/// `v` as its head line, a line per group (wrapped), its safety note, a
/// line per program measured beside it and the seed's own figures.
pub(super) fn render(v: &Verdict, cases: &[Case]) -> String {
    let head = format!("  seed {} {:<14}", v.seed, v.scenario);
    if v.places.is_empty() {
        // A run stored before verdicts said where: its word and sentence.
        return wrap(&format!("{head} {:<8} {}", v.word(), v.evidence), head.len() + 10);
    }
    let mut s = wrap(&format!("{head} {}", tally(v)), head.len() + 1);
    let busy = |p: &PlaceVerdict| cases.iter().any(|c| c.scenario == v.scenario && c.busy.is_some() && c.place() == p.target);
    for group in groups(v, &busy) {
        let line = format!("    {:<9} {}: {}", group.word, places_text(&group.places, &v.places), figures_text(&group));
        s.push_str(&wrap(&line, INDENT));
    }
    if !v.safety.is_empty() {
        s.push_str(&wrap(&format!("    {:<9} {}", "safety", v.safety), INDENT));
    }
    for line in &v.programs {
        // `dpkg: with its fsyncs, ...`: the program's name in the word's column.
        let (name, said) = line.split_once(": ").unwrap_or(("program", line));
        s.push_str(&wrap(&format!("    {name:<9} {said}"), INDENT));
    }
    let reported = crate::scenario::find(&v.scenario).ok().and_then(|s| s.seeded()).map(|s| s.reported());
    match reported {
        Some(said) => s.push_str(&wrap(&format!("    {:<9} {said}", "the seed"), INDENT)),
        // A scenario this fslab does not know: the claim as stored.
        None if !v.claim.is_empty() => s.push_str(&wrap(&format!("    {:<9} {}", "the seed", v.claim), INDENT)),
        None => {}
    }
    s
}

/// `shows at 6 of 20 places`, `gone at all 5 places`, `gone at 3 of 5
/// places, 2 not judged`, `not judged at any of 2 places`.
fn tally(v: &Verdict) -> String {
    let all = v.places.len();
    let count = |shows| v.places.iter().filter(|p| p.shows == shows).count();
    let places = if all == 1 { "place" } else { "places" };
    let unjudged = count(None);
    let not_judged = if unjudged > 0 { format!(", {unjudged} not judged") } else { String::new() };
    match v.shows {
        Some(true) => format!("shows at {} of {all} {places}{not_judged}", count(Some(true))),
        Some(false) if unjudged == 0 => format!("gone at all {all} {places}"),
        Some(false) => format!("gone at {} of {all} {places}{not_judged}", count(Some(false))),
        None => format!("not judged at any of {all} {places}"),
    }
}

/// The places of `v` in groups, in [`WORDS`] order and, within a word,
/// in the order their first place ran.
fn groups<'a>(v: &'a Verdict, busy: &dyn Fn(&PlaceVerdict) -> bool) -> Vec<Group<'a>> {
    let mut groups: Vec<Group<'a>> = Vec::new();
    for p in &v.places {
        let (word, key, busy) = (p.word(), key(p), usize::from(busy(p)));
        match groups.iter_mut().find(|g| g.word == word && g.key == key) {
            Some(group) => {
                group.places.push(p);
                group.busy += busy;
            }
            None => groups.push(Group { word, key, places: vec![p], busy }),
        }
    }
    let rank = |word: &str| WORDS.iter().position(|w| *w == word).unwrap_or(WORDS.len());
    groups.sort_by_key(|g| rank(g.word));
    groups
}

/// What a place was judged by: the test's words and threshold, else (a
/// record stored before tests were kept) its figure, and for a place not
/// judged its reason.
fn key(p: &PlaceVerdict) -> (String, String) {
    match &p.rule {
        Some(rule) => (rule.what.clone(), shown_parts(rule).map(|(_, at)| at.to_string()).unwrap_or_default()),
        None if p.shows.is_none() => (p.figure.clone(), p.evidence.clone()),
        None => (p.figure.clone(), String::new()),
    }
}

/// A rule's `shown` cut into the value as printed and the threshold
/// (`mean extent 8 MiB (shows at < 1 MiB)`: `8 MiB`, `(shows at < 1
/// MiB)`).
fn shown_parts(rule: &crate::record::Rule) -> Option<(&str, &str)> {
    let rest = rule.shown.strip_prefix(rule.what.as_str())?.strip_prefix(' ')?;
    let at = rest.find(" (shows at ")?;
    Some((&rest[..at], &rest[at + 1..]))
}

/// The group's places in few words: a target whose every place is in the
/// group by its name and how many (`btrfs (all 4 places)`, neighbours
/// alike sharing it: `ext2, ext3 (both places each)`), any other place by
/// its label.
fn places_text(group: &[&PlaceVerdict], all: &[PlaceVerdict]) -> String {
    let mut targets: Vec<&str> = Vec::new();
    for p in group {
        if !targets.contains(&p.fs_label()) {
            targets.push(p.fs_label());
        }
    }
    // (names, how many places each) for whole targets; (label, 0) else.
    let mut parts: Vec<(Vec<&str>, usize)> = Vec::new();
    for fs in targets {
        let mine: Vec<&&PlaceVerdict> = group.iter().filter(|p| p.fs_label() == fs).collect();
        let of_fs = all.iter().filter(|p| p.fs_label() == fs).count();
        if mine.len() == of_fs && of_fs > 1 {
            match parts.last_mut() {
                Some((names, n)) if *n == of_fs => names.push(fs),
                _ => parts.push((vec![fs], of_fs)),
            }
        } else {
            parts.extend(mine.iter().map(|p| (vec![p.target.as_str()], 0)));
        }
    }
    let said: Vec<String> = parts
        .iter()
        .map(|(names, n)| match (names.len(), n) {
            (_, 0) => names.join(", "),
            (1, 2) => format!("{} (both places)", names[0]),
            (_, 2) => format!("{} (both places each)", names.join(", ")),
            (1, n) => format!("{} (all {n} places)", names[0]),
            (_, n) => format!("{} (all {n} places each)", names.join(", ")),
        })
        .collect();
    said.join(", ")
}

/// The group's figures: the deciding test's values as a range beside its
/// threshold, the modelled read's range, how a lone mixed place's samples
/// split, how many places ran busy; a place not judged says why.
fn figures_text(group: &Group) -> String {
    let first = group.places[0];
    let mut parts = Vec::new();
    match &first.rule {
        Some(rule) => parts.push(rule_range(&group.places).unwrap_or_else(|| rule.shown.clone())),
        None if first.shows.is_none() => parts.push(first.evidence.clone()),
        None => {
            let values: Vec<f64> = group.places.iter().filter_map(|p| p.value).collect();
            let (lo, hi) = (values.iter().copied().reduce(f64::min), values.iter().copied().reduce(f64::max));
            match lo.zip(hi) {
                Some((lo, hi)) => parts.push(format!("{} {}", first.figure, range(&short_number(lo), &short_number(hi)))),
                None => parts.push(first.figure.clone()),
            }
        }
    }
    let reads: Vec<ModelledRead> = group.places.iter().filter_map(|p| modelled_read_in(&p.evidence)).collect();
    if let Some(read) = read_range(&reads) {
        parts.push(read);
    }
    if group.word == "mixed" {
        match (group.places.len(), &first.samples) {
            (1, Some(samples)) => parts.push(samples.describe()),
            _ => parts.push("each place's repeats or images disagree".to_string()),
        }
    }
    match (group.busy, group.places.len()) {
        (0, _) => {}
        (1, 1) => parts.push("ran busy".to_string()),
        (busy, all) if busy == all => parts.push(format!("all {all} ran busy")),
        (busy, all) => parts.push(format!("{busy} of {all} ran busy")),
    }
    parts.join("; ")
}

/// `mean extent 4.15–65.5 KiB (shows at < 1 MiB)`: the deciding values
/// from the least to the most, as each place's row printed them.
fn rule_range(places: &[&PlaceVerdict]) -> Option<String> {
    let rules: Vec<&crate::record::Rule> = places.iter().filter_map(|p| p.rule.as_ref()).collect();
    let lo = rules.iter().min_by(|a, b| a.value.total_cmp(&b.value))?;
    let hi = rules.iter().max_by(|a, b| a.value.total_cmp(&b.value))?;
    let ((lo_text, at), (hi_text, _)) = (shown_parts(lo)?, shown_parts(hi)?);
    Some(format!("{} {} {at}", lo.what, range(lo_text, hi_text)))
}

/// `8–128 MiB`, `1.25–1.3×`, `8.32 KiB–8 MiB`, or the one value when both
/// ends print alike.
fn range(lo: &str, hi: &str) -> String {
    if lo == hi {
        return lo.to_string();
    }
    let unit = |text: &str| text.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',' || c == '-').to_string();
    let (lo_unit, hi_unit) = (unit(lo), unit(hi));
    if lo_unit == hi_unit {
        format!("{}–{hi}", &lo[..lo.len() - lo_unit.len()])
    } else {
        format!("{lo}–{hi}")
    }
}

/// `reads 6.81–87.2× slower than in one piece on hdd-7200-2009
/// (modelled)`, `reads 35% to 11.9× slower`, `reads as fast to 4% slower
/// than ...`: the least and the
/// most of the places' modelled reads; the reference and the drive said
/// when the places share them.
fn read_range(reads: &[ModelledRead]) -> Option<String> {
    let lo = reads.iter().min_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
    let hi = reads.iter().max_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
    let ((lo_said, _), (hi_said, joined)) = (slower(lo.ratio), slower(hi.ratio));
    let how = match (lo_said.strip_suffix(" slower"), hi_said.strip_suffix(" slower")) {
        _ if lo_said == hi_said => lo_said,
        (Some(lo_how), Some(hi_how)) => match lo_how.strip_suffix('×') {
            Some(lo_times) if hi_how.ends_with('×') => format!("{lo_times}–{hi_how} slower"),
            _ => format!("{lo_how} to {hi_how} slower"),
        },
        _ => format!("{lo_said} to {hi_said}"),
    };
    let shared = |of: &dyn Fn(&ModelledRead) -> &str| reads.iter().all(|r| of(r) == of(lo)).then(|| of(lo).to_string());
    let reference = shared(&|r| r.reference.as_str()).map(|r| format!(" {joined} {r}")).unwrap_or_default();
    let disk = shared(&|r| r.disk.as_str()).map(|d| format!(" on {d}")).unwrap_or_default();
    Some(format!("reads {how}{reference}{disk} (modelled)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_says_a_shared_unit_once() {
        assert_eq!(range("8 MiB", "128 MiB"), "8–128 MiB");
        assert_eq!(range("4.15 KiB", "65.5 KiB"), "4.15–65.5 KiB");
        assert_eq!(range("0.9×", "2.76×"), "0.9–2.76×");
        assert_eq!(range("1", "3"), "1–3");
        assert_eq!(range("8.32 KiB", "8 MiB"), "8.32 KiB–8 MiB");
        assert_eq!(range("1.8×", "1.8×"), "1.8×");
    }

    #[test]
    fn a_read_range_words_its_ends_as_a_reader_says_them() {
        let read = |ratio| ModelledRead { ratio, disk: "hdd-7200".into(), reference: "in one piece".into() };
        let said = |ratios: &[f64]| read_range(&ratios.iter().map(|r| read(*r)).collect::<Vec<_>>()).unwrap();
        assert_eq!(said(&[6.81, 87.2, 44.0]), "reads 6.81–87.2× slower than in one piece on hdd-7200 (modelled)");
        assert_eq!(said(&[1.35, 11.9]), "reads 35% to 11.9× slower than in one piece on hdd-7200 (modelled)");
        assert_eq!(said(&[0.99, 1.07]), "reads 1% faster to 7% slower than in one piece on hdd-7200 (modelled)");
        assert_eq!(said(&[1.0, 1.001]), "reads as fast as in one piece on hdd-7200 (modelled)");
        let mut other = read(2.0);
        other.disk = "laptop-5400".into();
        assert_eq!(read_range(&[read(2.0), other]).unwrap(), "reads 2× slower than in one piece (modelled)");
        assert_eq!(read_range(&[]), None);
    }
}
