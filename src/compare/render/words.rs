//! The sentences a comparison says once rather than on every row — what
//! differs between the setups, what the sample sizes allow, what "likely"
//! means for the exit status — and the wrapping that keeps text lines
//! within a terminal's width.

use super::super::{Comparison, Outcome, format, judge, stats};

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

/// What a likely regression is and that it does not fail the comparison;
/// None when there is none of either kind.
pub fn likely_footer(c: &Comparison) -> Option<String> {
    let likely = c.count(Outcome::LikelyRegression) + c.count(Outcome::LikelyImprovement);
    if likely == 0 {
        return None;
    }
    let gap = format::percent(c.threshold.max(judge::LIKELY_GAP));
    let decide = match stats::values_needed(c.alpha) {
        Some(k) => format!("--repeat {k} on both sides decides them"),
        None => "no number of repeats can decide them".to_string(),
    };
    Some(format!(
        "Likely: too few repeats for a test, but every value of one side is more than {gap} beyond every value of \
         the other. Likely regressions do not fail the comparison (exit 1 is for decided ones); {decide}."
    ))
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
