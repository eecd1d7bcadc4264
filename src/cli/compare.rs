//! `fslab compare BASE NEW`: regression verdicts between two runs, tags or
//! stores; exit 1 when anything regressed (a figure, or a case that newly
//! failed), so CI can gate on it; exit 2 when the sides share no case, as
//! a gate that compared nothing must not pass.

use std::process::ExitCode;

use super::{CompareArgs, CompareOptionArgs};
use crate::compare::{self, CompareOptions, Side, render};
use crate::error::{Error, Result};

/// Run `fslab compare`.
pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    let options = options(&args.options)?;
    let (base, new) = (args.store.resolve(&args.base)?, args.store.resolve(&args.new)?);
    // Text and markdown show what the stores hold escaped; JSON keeps it.
    let (base, new) = if args.json { (base, new) } else { (super::shown::selection(base)?, super::shown::selection(new)?) };
    let comparison = compare::compare(
        Side { label: &base.label, runs: &base.runs },
        Side { label: &new.label, runs: &new.runs },
        &options,
    );
    if comparison.cases_in_common == 0 {
        return Err(Error::usage(format!(
            "{} and {} have no case in common, so nothing can be compared: {} has {}; {} has {} \
             (compare runs of the same scenarios on the same targets){}",
            base.label,
            new.label,
            base.label,
            compare::summarise_cases(&base.runs),
            new.label,
            compare::summarise_cases(&new.runs),
            differs(&comparison)
        )));
    }
    let rendered = if args.json {
        render::json(&comparison)
    } else if args.markdown {
        render::markdown(&comparison, args.all).into_bytes()
    } else {
        render::text(&comparison, args.all).into_bytes()
    };
    super::print(&rendered)?;
    Ok(if comparison.regressions() > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `; they also differ in: ext4 conditions: none → memory=256M` (a
/// condition is part of a case's key, so it alone can leave the sides
/// nothing in common), or nothing when the setups are the same.
fn differs(comparison: &compare::Comparison) -> String {
    if comparison.differs.is_empty() {
        return String::new();
    }
    let said: Vec<String> = comparison.differs.iter().map(|d| format!("{}: {} → {}", d.what, d.base, d.new)).collect();
    format!("; their setups differ in: {}", said.join("; "))
}

/// The judging options from the flags, refused with the flag named when
/// they make no sense.
pub(super) fn options(args: &CompareOptionArgs) -> Result<CompareOptions> {
    let threshold = parse_share("--threshold", &args.threshold)?;
    if threshold >= 1.0 {
        return Err(Error::usage(format!("--threshold {}: give a share under 100%, such as 5%", args.threshold)));
    }
    let alpha = parse_share("--alpha", &args.alpha)?;
    if alpha <= 0.0 || alpha >= 0.5 {
        return Err(Error::usage(format!("--alpha {}: give a level between 0 and 0.5, such as 0.05", args.alpha)));
    }
    Ok(CompareOptions { threshold, alpha, host_figures: args.host_figures, ..CompareOptions::default() })
}

/// `5%` or `0.05` as 0.05.
fn parse_share(flag: &str, text: &str) -> Result<f64> {
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n, 100.0),
        None => (text, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / scale),
        _ => Err(Error::usage(format!("{flag} {text}: give a number or a percentage, such as 5% or 0.05"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_read_as_percent_or_fraction() {
        assert_eq!(parse_share("--threshold", "5%").unwrap(), 0.05);
        assert_eq!(parse_share("--threshold", "0.1").unwrap(), 0.1);
        assert_eq!(parse_share("--threshold", "0").unwrap(), 0.0);
        for bad in ["", "-1%", "five", "nan", "%"] {
            let err = parse_share("--threshold", bad).unwrap_err();
            assert!(err.message.contains("--threshold"), "{bad}: {err}");
        }
    }
}
