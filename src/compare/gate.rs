//! What gates a comparison: which figures can fail it (or leave it
//! undecided), at what threshold, and what it decided.
//!
//! Without a gate every judged figure gates at `--threshold`. With
//! `--gate FIGURE[:THRESHOLD]` (or a gate file, one such gate a line) only
//! the figures named do; the others are judged and shown the same, but
//! fail nothing. A gate's threshold replaces `--threshold` for its figure;
//! a gated exact figure without one gates at 0: counts repeat exactly, so
//! one extent more is a regression, even from one run a side. Newly failed
//! cases fail the comparison whatever the gate.

use serde::Serialize;

use super::Outcome;
use crate::record::Kind;

/// One figure that gates a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// The figure's name (`extents`).
    pub figure: String,
    /// Its own threshold; `None` (JSON `null`): `--threshold` for a
    /// timing, any change (0) for an exact figure.
    pub threshold: Option<f64>,
    /// Where it was given (`--gate`, `ci/gates:3`), for errors.
    #[serde(skip)]
    pub from: String,
}

/// What a comparison decided, the exit status's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// A gated figure regressed, or a case newly failed (exit 1).
    Regression,
    /// No regression, but a gated figure moved past its threshold for the
    /// worse and the repeats cannot decide it (exit 5 unless allowed).
    Undecided,
    /// Nothing gated got worse as far as the evidence can tell (exit 0).
    Pass,
}

/// The gate `figure` falls under, if `gates` names it.
pub fn find<'a>(gates: &'a [Gate], figure: &str) -> Option<&'a Gate> {
    gates.iter().find(|g| g.figure == figure)
}

/// Whether `figure` gates, and the threshold it is judged at: every figure
/// gates at `threshold` when `gates` is empty; else only those named, at
/// their own threshold, or (none given) at `threshold` for a timing and 0
/// for an exact figure. Figures not named are judged at `threshold`.
pub fn threshold_for(gates: &[Gate], figure: &str, kind: Kind, threshold: f64) -> (bool, f64) {
    if gates.is_empty() {
        return (true, threshold);
    }
    match find(gates, figure) {
        Some(gate) => (true, gate.threshold.unwrap_or(if kind == Kind::Exact { 0.0 } else { threshold })),
        None => (false, threshold),
    }
}

/// Whether a row's outcome leaves the comparison undecided: an effect past
/// the threshold for the worse that too few repeats cannot decide.
pub fn is_undecided(outcome: Outcome) -> bool {
    matches!(outcome, Outcome::Undecided | Outcome::LikelyRegression)
}

/// `5%` or `0.05` as 0.05; what is wrong with it otherwise, for a message
/// that names where it was given.
pub fn share(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (text, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / scale),
        _ => Err("give a number or a percentage, such as 5% or 0.05".to_string()),
    }
}

/// A threshold: a [`share`] under 100%.
pub fn threshold(text: &str) -> Result<f64, String> {
    let t = share(text)?;
    if t >= 1.0 {
        return Err("give a share under 100%, such as 5%".to_string());
    }
    Ok(t)
}

/// The gates in one `--gate` value or gate file line:
/// `extents,wall_s:10%`, each `FIGURE[:THRESHOLD]`, `from` saying where
/// they came from. Errors say which item is wrong and why.
pub fn parse(text: &str, from: &str) -> Result<Vec<Gate>, String> {
    text.split(',')
        .map(str::trim)
        .map(|item| {
            let (figure, threshold) = match item.split_once(':') {
                Some((figure, t)) => (figure.trim(), Some(t.trim())),
                None => (item, None),
            };
            let wrong = |why: &str| format!("{item}: {why} (a gate is FIGURE or FIGURE:THRESHOLD, such as extents or wall_s:10%)");
            if figure.is_empty() {
                return Err(wrong("no figure named"));
            }
            if !figure.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(wrong("a figure's name has letters, digits and _ only"));
            }
            let threshold = threshold.map(|t| self::threshold(t).map_err(|why| wrong(&why))).transpose()?;
            Ok(Gate { figure: figure.to_string(), threshold, from: from.to_string() })
        })
        .collect()
}

/// The gates a gate file holds: one `--gate` value a line, `#` to the
/// line's end a comment, blank lines skipped. `shown` names the file in
/// `from` and in errors: `ci/gates:3: wall_s:fast: give a number...`.
pub fn parse_file(text: &str, shown: &str) -> Result<Vec<Gate>, String> {
    let mut gates = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let from = format!("{shown}:{}", at + 1);
        gates.extend(parse(line, &from).map_err(|why| format!("{from}: {why}"))?);
    }
    Ok(gates)
}

/// `gates` with each figure once: the same gate given twice is kept once;
/// one figure given two thresholds is an error naming both places.
pub fn merge(gates: Vec<Gate>) -> Result<Vec<Gate>, String> {
    let mut merged: Vec<Gate> = Vec::new();
    for gate in gates {
        match merged.iter().find(|g| g.figure == gate.figure) {
            Some(g) if g.threshold == gate.threshold => {}
            Some(g) => {
                let said = |g: &Gate| g.threshold.map_or("no threshold".to_string(), super::format::percent);
                return Err(format!(
                    "{} is gated twice, with {} ({}) and {} ({}): give it once",
                    gate.figure,
                    said(g),
                    g.from,
                    said(&gate),
                    gate.from
                ));
            }
            None => merged.push(gate),
        }
    }
    Ok(merged)
}

/// Every gate's figure known (declared, or measured by the runs
/// compared), else the first unknown one with the nearest known name.
pub fn check_known(gates: &[Gate], known: &[&str]) -> Result<(), String> {
    match gates.iter().find(|g| !known.contains(&g.figure.as_str())) {
        None => Ok(()),
        Some(g) => {
            let nearest = crate::error::nearest(&g.figure, known)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            Err(format!("{}: no figure is called `{}`{nearest}", g.from, g.figure))
        }
    }
}

/// `extents (any change), wall_s (10%), sys_s (5%)`: the gates as a
/// comparison says them, each with the threshold it gates at; `kind`
/// tells a figure's kind when the comparison measured it (a figure it did
/// not is said with both rules).
pub fn describe(gates: &[Gate], threshold: f64, kind: impl Fn(&str) -> Option<Kind>) -> String {
    let percent = super::format::percent;
    gates
        .iter()
        .map(|g| {
            let at = match (g.threshold, kind(&g.figure)) {
                (Some(t), _) => percent(t),
                (None, Some(Kind::Exact)) => "any change".to_string(),
                (None, Some(Kind::Timing)) => percent(threshold),
                (None, None) => format!("any change if exact, else {}", percent(threshold)),
            };
            format!("{} ({at})", g.figure)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(figure: &str, threshold: Option<f64>) -> Gate {
        Gate { figure: figure.into(), threshold, from: "--gate".into() }
    }

    #[test]
    fn shares_read_as_percent_or_fraction() {
        assert_eq!(share("5%"), Ok(0.05));
        assert_eq!(share("0.1"), Ok(0.1));
        assert_eq!(share("0"), Ok(0.0));
        for bad in ["", "-1%", "five", "nan", "%", "inf"] {
            assert!(share(bad).is_err(), "{bad}");
        }
        assert!(threshold("100%").is_err() && threshold("1.5").is_err());
    }

    #[test]
    fn a_gate_is_a_figure_with_or_without_its_threshold() {
        assert_eq!(parse("extents", "--gate"), Ok(vec![gate("extents", None)]));
        assert_eq!(parse("extents, wall_s:10%", "--gate"), Ok(vec![gate("extents", None), gate("wall_s", Some(0.1))]));
        assert_eq!(parse("fio_w_write_iops:0.2", "--gate").unwrap()[0].threshold, Some(0.2));
        for (bad, says) in [
            ("wall_s:fast", "wall_s:fast: give a number"),
            ("wall_s:150%", "under 100%"),
            (":5%", "no figure named"),
            ("extents,", "no figure named"),
            ("wall s", "letters, digits and _"),
            ("a:1:2", "a:1:2: give a number"),
        ] {
            let err = parse(bad, "--gate").unwrap_err();
            assert!(err.contains(says) && err.contains("FIGURE:THRESHOLD"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_gate_file_has_a_gate_a_line_and_comments() {
        let text = "# what fails CI\n\nextents   # one more is a regression\n  wall_s:10%, sys_s\n";
        let gates = parse_file(text, "ci/gates").unwrap();
        let names: Vec<(&str, &str)> = gates.iter().map(|g| (g.figure.as_str(), g.from.as_str())).collect();
        assert_eq!(names, [("extents", "ci/gates:3"), ("wall_s", "ci/gates:4"), ("sys_s", "ci/gates:4")]);
        let err = parse_file("extents\nwall_s:fast\n", "ci/gates").unwrap_err();
        assert!(err.starts_with("ci/gates:2: wall_s:fast: "), "{err}");
        assert_eq!(parse_file("# nothing\n\n", "g"), Ok(Vec::new()));
    }

    #[test]
    fn a_figure_gated_twice_must_agree() {
        let file = Gate { from: "g:2".into(), ..gate("extents", Some(0.1)) };
        assert_eq!(merge(vec![gate("extents", None), gate("extents", None)]).unwrap().len(), 1);
        let err = merge(vec![gate("extents", None), file]).unwrap_err();
        assert_eq!(err, "extents is gated twice, with no threshold (--gate) and 10% (g:2): give it once");
    }

    #[test]
    fn unknown_figures_are_named_with_the_nearest_known() {
        let known = ["extents", "wall_s", "journal_commits"];
        assert_eq!(check_known(&[gate("extents", None)], &known), Ok(()));
        let err = check_known(&[Gate { from: "g:4".into(), ..gate("extens", None) }], &known).unwrap_err();
        assert_eq!(err, "g:4: no figure is called `extens` (did you mean `extents`?)");
        let err = check_known(&[gate("commits", None)], &known).unwrap_err();
        assert!(err.ends_with("(did you mean `journal_commits`?)"), "{err}");
    }

    #[test]
    fn gated_exact_figures_gate_at_any_change_and_the_rest_at_the_threshold() {
        assert_eq!(threshold_for(&[], "extents", Kind::Exact, 0.05), (true, 0.05), "no gate: all gate as before");
        let gates = [gate("extents", None), gate("wall_s", None), gate("flushes", Some(0.2))];
        assert_eq!(threshold_for(&gates, "extents", Kind::Exact, 0.05), (true, 0.0));
        assert_eq!(threshold_for(&gates, "wall_s", Kind::Timing, 0.05), (true, 0.05));
        assert_eq!(threshold_for(&gates, "flushes", Kind::Exact, 0.05), (true, 0.2));
        assert_eq!(threshold_for(&gates, "sys_s", Kind::Timing, 0.05), (false, 0.05));
        let kind = |name: &str| match name {
            "extents" | "flushes" => Some(Kind::Exact),
            "wall_s" => Some(Kind::Timing),
            _ => None,
        };
        assert_eq!(describe(&gates, 0.05, kind), "extents (any change), wall_s (5%), flushes (20%)");
        assert_eq!(describe(&[gate("seeks", None)], 0.05, kind), "seeks (any change if exact, else 5%)");
    }
}
