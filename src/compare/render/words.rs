//! The sentences a comparison says once rather than on every row — what
//! differs between the setups, what the sample sizes allow, what gates it,
//! what "likely" means, what is undecided and what would decide it — and
//! the wrapping that keeps text lines within a terminal's width.

use super::super::{Comparison, Outcome, format, gate, judge, stats};

/// The widest line plain text prints when it can help it.
pub const WIDTH: usize = 120;

/// `ext4 mount: defaults → sync`, one per difference.
pub fn differences(c: &Comparison) -> Vec<[String; 3]> {
    c.differs.iter().map(|d| [format!("{}:", d.what), d.base.clone(), format!("→ {}", d.new)]).collect()
}

/// `Smallest p the repeats allow: 0.1 with 3 vs 3 values (31 figures), 0.2
/// with 3 vs 2 (1); below 0.05 needs --repeat 4.` None when no
/// figure was judged by statistics.
pub fn sample_sizes(c: &Comparison) -> Option<String> {
    let first = c.sample_sizes.first()?;
    let plural = |n: usize| if n == 1 { "figure" } else { "figures" };
    let mut said = vec![format!(
        "{} with {} vs {} values ({} {})",
        format::p_value(first.least_p),
        first.base,
        first.new,
        first.figures,
        plural(first.figures)
    )];
    for s in &c.sample_sizes[1..] {
        said.push(format!("{} with {} vs {} ({})", format::p_value(s.least_p), s.base, s.new, s.figures));
    }
    let mut line = format!("Smallest p the repeats allow: {}", said.join(", "));
    if c.sample_sizes.iter().any(|s| s.least_p >= c.alpha) {
        match stats::values_needed(c.alpha) {
            Some(k) => line.push_str(&format!("; below {} needs --repeat {k}", c.alpha)),
            None => line.push_str(&format!("; no number of repeats reaches p < {}", c.alpha)),
        }
    }
    line.push('.');
    Some(line)
}

/// What a likely regression or improvement is; None when there is none
/// of either kind.
pub fn likely_footer(c: &Comparison) -> Option<String> {
    let likely = c.count(Outcome::LikelyRegression) + c.count(Outcome::LikelyImprovement);
    if likely == 0 {
        return None;
    }
    let gap = format::percent(c.threshold.max(judge::LIKELY_GAP));
    Some(format!(
        "Likely: too few repeats for a test, but every value of one side is more than {gap} beyond every value of \
         the other."
    ))
}

/// `Gate: extents (any change), wall_s (10%); the other figures are
/// shown, not gated.`, with the gated figures no case measured on both
/// sides; None without `--gate`.
pub fn gate_line(c: &Comparison) -> Option<String> {
    if c.gates.is_empty() {
        return None;
    }
    let kind = |figure: &str| c.rows.iter().find(|r| r.figure == figure).map(|r| r.kind);
    let mut line = format!("Gate: {}; the other figures are shown, not gated.", gate::describe(&c.gates, c.threshold, kind));
    if !c.gates_unmeasured.is_empty() {
        line.push_str(&format!(" No case measured {} on both sides.", c.gates_unmeasured.join(", ")));
    }
    Some(line)
}

/// What leaves the comparison undecided, what would decide it, and the
/// exit status: `Undecided (exit 5): 2 gated figures moved past their
/// threshold for the worse (1 likely regression, 1 undecided), and the
/// repeats cannot decide them; --repeat 6 on both sides would, if the
/// separations seen hold (each row says what it needs). ...`. None when
/// nothing gated is undecided.
pub fn undecided_footer(c: &Comparison) -> Option<String> {
    if c.undecided == 0 {
        return None;
    }
    let rows: Vec<_> = c.rows.iter().filter(|r| r.gated && gate::is_undecided(r.outcome)).collect();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let likely = rows.iter().filter(|r| r.outcome == Outcome::LikelyRegression).count();
    let undecided = rows.len() - likely;
    let kinds: Vec<String> = [(likely, plural(likely, "likely regression", "likely regressions")), (undecided, format!("{undecided} undecided"))]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, said)| said)
        .collect();
    let never = rows.iter().filter(|r| r.repeats_needed.is_none()).count();
    let fewest = rows.iter().filter_map(|r| r.repeats_needed).min();
    let at_fewest = rows.iter().filter(|r| r.repeats_needed == fewest).count();
    let decide = match (fewest, c.repeats_needed) {
        (Some(k), Some(most)) if k == most && never == 0 => format!("--repeat {k} on both sides would"),
        (Some(k), Some(most)) if k == most => format!("--repeat {k} on both sides would decide {at_fewest} of them"),
        (Some(k), Some(most)) if never == 0 => {
            format!("--repeat {k} on both sides would decide {at_fewest} of them, --repeat {most} all")
        }
        (Some(k), Some(most)) => format!("--repeat {k} on both sides would decide {at_fewest} of them, --repeat {most} all but {never}"),
        _ => "no number of repeats up to 10 000 would".to_string(),
    };
    let hold = if rows.len() == 1 { "the separation seen holds" } else { "the separations seen hold (each row says what it needs)" };
    let decide = format!("{decide}, if {hold}");
    let head = match c.decision {
        gate::Decision::Regression => "Undecided as well (the regression makes it exit 1)",
        _ => "Undecided (exit 5; --allow-undecided: 0)",
    };
    Some(format!(
        "{head}: {} moved past {} threshold for the worse ({}), and the repeats cannot decide {}; {decide}.",
        if c.gates.is_empty() { plural(rows.len(), "figure", "figures") } else { plural(rows.len(), "gated figure", "gated figures") },
        if rows.len() == 1 { "its" } else { "their" },
        kinds.join(", "),
        if rows.len() == 1 { "it" } else { "them" },
    ))
}

/// `Not gated (--gate extents): 1 regression, 2 undecided — shown; they
/// fail nothing.` None without a gate, or when nothing outside it moved
/// for the worse.
pub fn not_gated_footer(c: &Comparison) -> Option<String> {
    if c.gates.is_empty() {
        return None;
    }
    let counted = [
        (Outcome::Regression, "regression", "regressions"),
        (Outcome::LikelyRegression, "likely regression", "likely regressions"),
        (Outcome::Undecided, "undecided", "undecided"),
    ];
    let parts: Vec<String> = counted
        .iter()
        .map(|&(outcome, one, many)| (c.not_gated(outcome), one, many))
        .filter(|&(n, _, _)| n > 0)
        .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect();
    (!parts.is_empty()).then(|| format!("Not gated: {} in figures outside the gate — shown; they fail nothing.", parts.join(", ")))
}

/// What a row the repeats cannot decide needs: `--repeat 4 would decide`;
/// empty for any other row.
pub fn repeats_needed(row: &super::super::FigureComparison) -> String {
    match row.repeats_needed {
        Some(k) => format!("--repeat {k} would decide"),
        None if gate::is_undecided(row.outcome) => "no number of repeats up to 10 000 would decide".to_string(),
        None => String::new(),
    }
}

/// Host-wide figures left out of the verdict, for the not-shown line.
pub fn host_wide(c: &Comparison) -> Option<String> {
    let n = c.count(Outcome::HostWide);
    (n > 0).then(|| {
        format!(
            "{n} host-wide (backing_*: the whole disk under the target, other users included; host_*: the rest of \
             the machine; --host-figures judges them)"
        )
    })
}

/// `Busy machine (other processes used ≥ 0.5 cores or ...): 2 of 6 cases
/// of v1 (xfs r2, ext4 r1), 1 of 6 of v2 (ext4 r3) — timings there are
/// less reliable.`, said once; None when neither side has a busy case.
pub fn busy(c: &Comparison) -> Option<String> {
    let sides: Vec<String> = [(&c.base_label, &c.base_busy), (&c.new_label, &c.new_busy)]
        .into_iter()
        .filter_map(|(label, busy)| Some(format!("{} of {label} ({})", busy.count()?, busy.listed()?)))
        .collect();
    (!sides.is_empty()).then(|| {
        format!("Busy machine ({}): {} — timings there are less reliable.", crate::record::busy::BUSY_RULE, sides.join(", "))
    })
}

/// `Timings emulated (TCG): not judged — 1 of 2 cases of v2 (...) ran in
/// a guest under software emulation ...`, said once; None when neither
/// side has an emulated case.
pub fn emulated(c: &Comparison) -> Option<String> {
    super::super::emulated::sentence(&c.base_label, &c.base_emulated, &c.new_label, &c.new_emulated)
}

/// A paragraph of prose broken between words into lines of at most
/// [`WIDTH`] characters, none indented.
pub fn paragraph(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > WIDTH {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// Lay `pieces` out as lines of at most [`WIDTH`] characters: the first
/// piece after `indent`, each next one after `sep` when it fits, else
/// on a line of its own indented four more; a piece too long for any line
/// is broken between words.
pub fn wrap(indent: &str, sep: &str, pieces: &[String]) -> Vec<String> {
    let more = format!("{indent}    ");
    let width = |s: &str| s.chars().count();
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for piece in pieces.iter().filter(|p| !p.is_empty()) {
        if line.is_empty() {
            line = format!("{indent}{piece}");
        } else if width(&line) + width(sep) + width(piece) <= WIDTH {
            line.push_str(sep);
            line.push_str(piece);
        } else {
            lines.push(std::mem::take(&mut line));
            line = format!("{more}{piece}");
        }
        while width(&line) > WIDTH {
            // Break at the last space that leaves a line within WIDTH, or
            // not at all when there is none.
            let cut = line
                .char_indices()
                .filter(|&(i, ch)| ch == ' ' && width(&line[..i]) <= WIDTH && i > more.len())
                .map(|(i, _)| i)
                .next_back();
            let Some(cut) = cut else { break };
            let rest = line[cut + 1..].to_string();
            line.truncate(cut);
            lines.push(std::mem::replace(&mut line, format!("{more}{rest}")));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_pieces_share_a_line_and_long_ones_wrap_within_the_width() {
        assert_eq!(wrap("  ", "  ", &["a:".into(), "b".into(), String::new()]), ["  a:  b"]);
        assert_eq!(wrap("", " ", &["a:".into(), "b".into()]), ["a: b"]);
        let long = "word ".repeat(40);
        let lines = wrap("  ", "  ", &["label: 8.8x slower".into(), format!("({})", long.trim())]);
        assert_eq!(lines[0], "  label: 8.8x slower");
        assert!(lines[1..].iter().all(|l| l.starts_with("      ") && l.chars().count() <= WIDTH), "{lines:#?}");
        assert_eq!(lines.iter().map(|l| l.matches("word").count()).sum::<usize>(), 40);
        // Nothing to break at: the line stays whole rather than lose text.
        let unbroken = "x".repeat(130);
        assert_eq!(wrap("", "", std::slice::from_ref(&unbroken)), [unbroken]);
        let prose = paragraph(&"several words ".repeat(20));
        assert!(prose.len() == 3 && prose.iter().all(|l| l.chars().count() <= WIDTH && !l.starts_with(' ')), "{prose:#?}");
    }
}
