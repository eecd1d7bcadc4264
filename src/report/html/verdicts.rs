//! A seed's verdict in a report: the answer and the places it shows and is
//! gone, named once; then a compact table with a row per place and the
//! figure that decided it there; then what the seed itself reported.

use std::fmt::{self, Write as _};

use super::escape;
use crate::record::Verdict;
use crate::units::short_number;

/// Write `verdict` as a `<div class="verdict">` with its table of places
/// (a verdict stored before places existed keeps its sentence alone).
pub(super) fn write_verdict(out: &mut String, verdict: &Verdict) -> fmt::Result {
    let class = verdict.word();
    writeln!(out, r#"<div class="verdict {class}" data-verdict="{class}">"#)?;
    if verdict.places.is_empty() {
        let (seed, word, evidence) = (escape(&verdict.seed), verdict.word(), escape(&verdict.evidence));
        writeln!(out, r#"<p><b>seed {seed}: {word}</b> — {evidence}</p>"#)?;
    } else {
        writeln!(out, r#"<p><b>seed {}</b> {}</p>"#, escape(&verdict.seed), escape(&verdict.where_list()))?;
    }
    if !verdict.places.is_empty() {
        writeln!(out, r#"<table class="places"><tr><th>place</th><th></th><th>figure</th><th>here</th><th>against</th><th>evidence</th></tr>"#)?;
        for p in &verdict.places {
            let number = |v: Option<f64>| v.map_or_else(String::new, short_number);
            writeln!(
                out,
                r#"<tr class="{}"><td>{}</td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td></tr>"#,
                p.word(),
                escape(&p.target),
                p.word(),
                escape(&p.figure),
                number(p.value),
                number(p.against),
                escape(&[p.evidence.as_str()].into_iter().chain(p.also.iter().map(String::as_str)).collect::<Vec<_>>().join("; "))
            )?;
        }
        writeln!(out, "</table>")?;
    }
    if !verdict.safety.is_empty() {
        writeln!(out, r#"<p class="safety">safety: {}</p>"#, escape(&verdict.safety))?;
    }
    for line in &verdict.programs {
        writeln!(out, r#"<p class="program">{}</p>"#, escape(line))?;
    }
    if !verdict.claim.is_empty() {
        writeln!(out, r#"<p class="claim">the seed: {}</p>"#, escape(&verdict.claim))?;
    }
    writeln!(out, "</div>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::PlaceVerdict;

    #[test]
    fn a_verdict_draws_a_row_per_place() {
        let place = |target: &str, shows, value, evidence: &str| PlaceVerdict {
            target: target.into(),
            fs: "btrfs".into(),
            conditions: Default::default(),
            shows,
            figure: "extents".into(),
            value,
            against: Some(1.0),
            evidence: evidence.into(),
            ..Default::default()
        };
        let v = Verdict {
            places: vec![place("btrfs", Some(true), Some(31_483.0), "31,483 extents <4 KiB>"), place("xfs", Some(false), Some(1.0), "1 extent")],
            claim: "ext3 in 2009".into(),
            ..Verdict::unknown("mmap-fill", "000", "")
        };
        let mut out = String::new();
        write_verdict(&mut out, &Verdict { shows: Some(true), ..v }).unwrap();
        assert!(out.contains("<b>seed 000</b> shows on btrfs; gone on xfs</p>"), "{out}");
        assert!(out.contains(r#"<tr class="shows"><td>btrfs</td><td>shows</td><td>extents</td><td class="num">31,483</td><td class="num">1</td><td>31,483 extents &lt;4 KiB&gt;</td></tr>"#), "{out}");
        assert!(out.contains(r#"<p class="claim">the seed: ext3 in 2009</p>"#), "{out}");
        let mut old = String::new();
        write_verdict(&mut old, &Verdict::unknown("mmap-fill", "000", "too few cases")).unwrap();
        assert!(old.contains("<b>seed 000: unknown</b> — too few cases</p>") && !old.contains("<table"), "{old}");
    }
}
