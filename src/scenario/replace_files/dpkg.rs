//! dpkg's own line in seed 002's verdict: what the real program's fsyncs
//! cost beside `--force-unsafe-io` (its flushes and journal commits, the
//! medians of its repeats) and, where the run judged crash states, what
//! the switch loses (bad states of states, summed over repeats). The
//! `dpkg` program scenario measures it; the seeds preset runs it on
//! replace-files' places, so each place has both.

use crate::record::Case;
use crate::scenario::seeds;
use crate::units::short_number;

/// The program, as [`crate::scenario::Seeded::programs`] names it.
pub(super) const DPKG: &str = "dpkg";

/// One place's dpkg cases, with its fsyncs and without.
pub(super) struct Pair<'a> {
    place: String,
    safe: Vec<&'a Case>,
    unsafe_io: Vec<&'a Case>,
}

impl Pair<'_> {
    /// The median of `name` with fsyncs and without, when both have it.
    fn cost(&self, name: &str) -> Option<(f64, f64)> {
        Some((seeds::median(&self.safe, name)?, seeds::median(&self.unsafe_io, name)?))
    }

    /// Bad crash states and states judged, with fsyncs and without:
    /// `[bad, judged, bad, judged]`; `None` when either side judged none.
    fn crash(&self) -> Option<[f64; 4]> {
        let sum = |cases: &[&Case], name| cases.iter().filter_map(|c| c.figures.value(name)).sum::<f64>();
        let judged = |cases: &[&Case]| cases.iter().any(|c| c.figures.value("crash_states").is_some());
        (judged(&self.safe) && judged(&self.unsafe_io)).then(|| {
            [
                sum(&self.safe, "crash_bad"),
                sum(&self.safe, "crash_states"),
                sum(&self.unsafe_io, "crash_bad"),
                sum(&self.unsafe_io, "crash_states"),
            ]
        })
    }
}

/// dpkg's cases of `cases` by place, in the order places first ran, each
/// with both settings measured: found once for the verdict, which reads
/// them per place and over all places.
pub(super) fn pairs<'a>(cases: &[&'a Case]) -> Vec<Pair<'a>> {
    let mine: Vec<&Case> = cases.iter().copied().filter(|c| c.scenario == DPKG).collect();
    let mut out: Vec<Pair<'a>> = Vec::new();
    for place in seeds::places(&mine) {
        let safe = seeds::with_params(&place.cases, &[("unsafe_io", "no")]);
        let unsafe_io = seeds::with_params(&place.cases, &[("unsafe_io", "yes")]);
        if !safe.is_empty() && !unsafe_io.is_empty() {
            out.push(Pair { place: place.label, safe, unsafe_io });
        }
    }
    out
}

/// dpkg at the place named `place` (of [`pairs`]): `dpkg: its fsyncs 210
/// flushes, 76 commits; --force-unsafe-io 146 flushes, 73 commits; crash
/// states bad 0 of 40 with its fsyncs, 12 of 40 without`. `None` where
/// dpkg did not run both ways there.
pub(super) fn at_place(pairs: &[Pair<'_>], place: &str) -> Option<String> {
    let pair = pairs.iter().find(|p| p.place == place)?;
    let (mut safe, mut unsafe_io) = (Vec::new(), Vec::new());
    for (name, one, many) in [("flushes", "flush", "flushes"), ("journal_commits", "commit", "commits")] {
        let said = |n: f64| format!("{} {}", short_number(n), if n == 1.0 { one } else { many });
        if let Some((with, without)) = pair.cost(name) {
            safe.push(said(with));
            unsafe_io.push(said(without));
        }
    }
    let cost = |parts: Vec<String>| if parts.is_empty() { "no cost counted".to_string() } else { parts.join(", ") };
    let mut line = format!("dpkg: its fsyncs {}; --force-unsafe-io {}", cost(safe), cost(unsafe_io));
    if let Some([bad, of, bad_u, of_u]) = pair.crash().map(|c| c.map(short_number)) {
        line.push_str(&format!("; crash states bad {bad} of {of} with its fsyncs, {bad_u} of {of_u} without"));
    }
    Some(line)
}

/// dpkg over every place of [`pairs`], for the verdict's own line: how
/// many times `--force-unsafe-io`'s flushes and commits its fsyncs cost (a
/// range over the places), the seed's file system's figures beside them,
/// and the crash states bad each way, summed. `None` when dpkg did not run
/// both ways anywhere.
pub(super) fn summary(pairs: &[Pair<'_>]) -> Option<String> {
    let example = pairs.iter().find(|p| p.place == "ext4" || p.place.starts_with("ext4@")).or(pairs.first())?;
    let places = if pairs.len() == 1 { "1 place".to_string() } else { format!("{} places", pairs.len()) };
    let (mut ratios, mut figures) = (Vec::new(), Vec::new());
    for (name, said, short) in [("flushes", "flushes", "flushes"), ("journal_commits", "journal commits", "commits")] {
        let each: Vec<f64> = pairs.iter().filter_map(|p| p.cost(name)).map(|(a, b)| a / b.max(1.0)).collect();
        if let Some(range) = ratio_range(&each) {
            ratios.push(format!("{range} the {said}"));
        }
        if let Some((a, b)) = example.cost(name) {
            figures.push(format!("{} vs {} {short}", short_number(a), short_number(b)));
        }
    }
    if ratios.is_empty() {
        return None;
    }
    let mut line = format!(
        "dpkg: with its fsyncs, {} of --force-unsafe-io at {places} ({}: {})",
        ratios.join(" and "),
        example.place,
        figures.join(", ")
    );
    let judged: Vec<[f64; 4]> = pairs.iter().filter_map(Pair::crash).collect();
    if !judged.is_empty() {
        let [bad, of, bad_u, of_u] = std::array::from_fn(|i| short_number(judged.iter().map(|c| c[i]).sum::<f64>()));
        line.push_str(&format!("; crash states bad {bad} of {of} with them, {bad_u} of {of_u} without"));
    }
    Some(line)
}

/// `1.44×` for one ratio or several equal when printed, `1.3–1.5×` for a
/// range; `None` for none.
fn ratio_range(ratios: &[f64]) -> Option<String> {
    let low = ratios.iter().copied().reduce(f64::min)?;
    let high = ratios.iter().copied().reduce(f64::max)?;
    let (low, high) = (short_number(low), short_number(high));
    Some(if low == high { format!("{low}×") } else { format!("{low}–{high}×") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Kind};

    fn dpkg(fs: &str, unsafe_io: &str, flushes: f64, commits: Option<f64>, crash: Option<(f64, f64)>) -> Case {
        let mut figures = crate::record::Figures::new();
        figures.set("flushes", flushes, "count", Better::Lower, Kind::Exact);
        if let Some(n) = commits {
            figures.set("journal_commits", n, "count", Better::Lower, Kind::Timing);
        }
        let mut params = serde_json::Map::new();
        params.insert("unsafe_io".into(), unsafe_io.into());
        let mut case = Case { figures, ..Case::new(DPKG, fs, params, 1) };
        if let Some((bad, states)) = crash {
            case.conditions.insert("crash".into(), "flush".into());
            case.figures.set("crash_bad", bad, "count", Better::Lower, Kind::Timing);
            case.figures.set("crash_states", states, "count", Better::Lower, Kind::Timing);
        }
        case
    }

    #[test]
    fn a_place_says_both_ways_and_the_summary_ranges_over_places() {
        let cases = [
            dpkg("ext4", "no", 210.0, Some(76.0), None),
            dpkg("ext4", "yes", 146.0, Some(73.0), None),
            dpkg("btrfs", "no", 272.0, None, None),
            dpkg("btrfs", "yes", 152.0, None, None),
            // Only one way on xfs: not a pair, left out.
            dpkg("xfs", "no", 209.0, Some(70.0), None),
        ];
        let refs: Vec<&Case> = cases.iter().collect();
        let refs = pairs(&refs);
        assert_eq!(
            at_place(&refs, "ext4").unwrap(),
            "dpkg: its fsyncs 210 flushes, 76 commits; --force-unsafe-io 146 flushes, 73 commits"
        );
        assert_eq!(at_place(&refs, "btrfs").unwrap(), "dpkg: its fsyncs 272 flushes; --force-unsafe-io 152 flushes");
        assert_eq!(at_place(&refs, "xfs"), None);
        assert_eq!(
            summary(&refs).unwrap(),
            "dpkg: with its fsyncs, 1.44–1.79× the flushes and 1.04× the journal commits of --force-unsafe-io at 2 places \
             (ext4: 210 vs 146 flushes, 76 vs 73 commits)"
        );
    }

    #[test]
    fn crash_states_are_summed_each_way_where_both_were_judged() {
        let cases = [
            dpkg("btrfs", "no", 272.0, None, Some((0.0, 40.0))),
            dpkg("btrfs", "no", 270.0, None, Some((1.0, 40.0))),
            dpkg("btrfs", "yes", 152.0, None, Some((29.0, 40.0))),
        ];
        let cases: Vec<&Case> = cases.iter().collect();
        let refs = pairs(&cases);
        let line = at_place(&refs, "btrfs@crash=flush").unwrap();
        assert!(line.ends_with("; crash states bad 1 of 80 with its fsyncs, 29 of 40 without"), "{line}");
        let all = summary(&refs).unwrap();
        assert!(
            all.ends_with(
                "at 1 place (btrfs@crash=flush: 271 vs 152 flushes); crash states bad 1 of 80 with them, 29 of 40 without"
            ),
            "{all}"
        );
        assert_eq!(summary(&pairs(&cases[..2])), None, "one way only: nothing to say");
    }
}
