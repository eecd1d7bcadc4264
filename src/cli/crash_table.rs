//! The crash table under a run's tables (`--crash MODEL`): per case, its
//! place and whole parameters (wrapped), the states judged, the bad ones
//! by class and durability violations, then each distinct bad outcome with
//! the states that showed it, and a warning when the work marked names
//! durable before the device had flushed anything of it.

use std::fmt::Write;

use crate::compare::render::wrap;
use crate::record::{BadOutcome, Case, CrashStates};

/// The widest an outcome's first line is shown.
const DETAIL_CHARS: usize = 88;

/// The distinct bad outcomes shown a case (the rest counted; all of them
/// are in `--json` and the report).
const OUTCOMES_SHOWN: usize = 3;

/// The lines of a checker's output shown an outcome.
const OUTPUT_LINES: usize = 4;

/// A block per case whose crash states were judged; nothing for a run
/// that judged none.
pub(super) fn render(cases: &[Case]) -> String {
    let mut s = String::new();
    for case in cases {
        let Some(states) = case.crash.as_ref().and_then(|c| c.states.as_ref()) else { continue };
        if s.is_empty() {
            s.push_str("\ncrash states (each rebuilt from the write log, mounted, checked by the file system's checker and the work's):\n");
        }
        let mut pieces = vec![format!("{} r{}:", crate::text::escape(&case.place()), case.repeat)];
        pieces.extend(case.params.iter().map(|(k, v)| {
            let text = v.as_str().map_or(v.to_string(), str::to_string);
            format!("{k}={}", crate::text::escape(&text))
        }));
        for line in wrap("  ", " ", &pieces) {
            let _ = writeln!(s, "{line}");
        }
        let _ = writeln!(s, "    {}", counts(case, states));
        if states.marks_before_flush > 0 {
            let _ = writeln!(
                s,
                "    warning: {} names marked durable before any flush since the work began (the device had promised nothing yet)",
                states.marks_before_flush
            );
        }
        outcomes(&mut s, states);
        if states.checker.starts_with("none") {
            let _ = writeln!(s, "    no checker: {}", crate::text::escape(&states.checker));
        }
    }
    s
}

/// `49 states (flush, seed 31, from entry 2), 38 bad: ...`.
fn counts(case: &Case, states: &CrashStates) -> String {
    let figure = |name: &str| case.figures.get(name).and_then(|f| f.value);
    let n = |name: &str| figure(name).map_or("-".to_string(), |v| format!("{v:.0}"));
    let capped = if states.judged < states.total { format!(" (capped: {} of {})", states.judged, states.total) } else { String::new() };
    // A checker of files counts them; one that judges states whole
    // (exec --check) counts its verdicts.
    let judged_by = match figure("crash_check_failed") {
        Some(_) => format!("{} check failed", n("crash_check_failed")),
        None => format!("{} empty, {} torn, {} missing", n("crash_empty"), n("crash_torn"), n("crash_missing")),
    };
    let violations = match figure("crash_durability_violations") {
        Some(v) => format!("; {v:.0} durability violations"),
        None => String::new(),
    };
    let none = if states.first_bad.is_none() { "; none bad" } else { "" };
    format!(
        "{} states{capped} ({}, seed {}, from entry {}), {} bad: {judged_by}, {} unmountable, {} fsck failed{violations}{none}",
        states.judged,
        states.model,
        states.seed,
        states.from_entry,
        n("crash_bad"),
        n("crash_unmountable"),
        n("crash_fsck_failed"),
    )
}

/// Each distinct bad outcome shown (the first [`OUTCOMES_SHOWN`]), most
/// states first; a record from before they were kept shows its first bad
/// state.
fn outcomes(s: &mut String, states: &CrashStates) {
    let mut kept: Vec<&BadOutcome> = states.bad_outcomes.iter().collect();
    if kept.is_empty() {
        if let Some(bad) = &states.first_bad {
            let _ = write!(s, "    first bad, entry {}: ", bad.entry);
            detail(s, &bad.detail);
        }
        return;
    }
    kept.sort_by(|a, b| b.states.cmp(&a.states).then(a.first_entry.cmp(&b.first_entry)));
    for o in kept.iter().take(OUTCOMES_SHOWN) {
        let _ = write!(s, "    {} state{} from entry {}: ", o.states, if o.states == 1 { "" } else { "s" }, o.first_entry);
        detail(s, &o.detail);
    }
    let rest: u64 = kept.iter().skip(OUTCOMES_SHOWN).map(|o| o.states).sum::<u64>() + states.bad_outcomes_left_out;
    let distinct = kept.len().saturating_sub(OUTCOMES_SHOWN);
    if rest > 0 {
        let more = if states.bad_outcomes_left_out > 0 { "+" } else { "" };
        let outcomes = if distinct == 1 && more.is_empty() { "outcome" } else { "outcomes" };
        let _ = writeln!(s, "    and {distinct}{more} other {outcomes} in {rest} states (all kept: show --json, report)");
    }
}

/// An outcome's detail: its first line cut to [`DETAIL_CHARS`], then what
/// the checker printed a line each (the first [`OUTPUT_LINES`]).
fn detail(s: &mut String, detail: &str) {
    let (head, output) = detail.split_once('\n').unwrap_or((detail, ""));
    // A checker's one line of output reads on the same line.
    if let (Some(said), [line]) = (head.strip_suffix("; its output:"), output.lines().collect::<Vec<_>>().as_slice()) {
        let line: String = format!("{said}: {line}").chars().take(DETAIL_CHARS).collect();
        let _ = writeln!(s, "{}", crate::text::escape(&line));
        return;
    }
    let cut: String = head.chars().take(DETAIL_CHARS).collect();
    let more = if head.chars().count() > DETAIL_CHARS { "..." } else { "" };
    let _ = writeln!(s, "{}{more}", crate::text::escape(&cut));
    let lines: Vec<&str> = output.lines().collect();
    for line in lines.iter().take(OUTPUT_LINES) {
        let cut: String = line.chars().take(DETAIL_CHARS).collect();
        let _ = writeln!(s, "      | {}", crate::text::escape(&cut));
    }
    if lines.len() > OUTPUT_LINES {
        let _ = writeln!(s, "      | ({} more lines)", lines.len() - OUTPUT_LINES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BadState, Better, CrashRecord, Kind};

    fn judged(scenario: &str, crash: &str, figures: &[(&str, f64)], states: CrashStates) -> Case {
        let mut case = Case::new(scenario, "ext4", serde_json::Map::new(), 1);
        case.conditions.insert("crash".into(), crash.into());
        for (name, v) in figures {
            case.figures.set(name, *v, "count", Better::Lower, Kind::Timing);
        }
        case.crash = Some(CrashRecord { states: Some(states), ..CrashRecord::default() });
        case
    }

    #[test]
    fn a_judged_case_gets_its_block_and_a_run_without_none() {
        let bad = BadState { entry: 73, epoch: 24, prefix: 74, extra: 0, classes: vec!["torn".into()], detail: "exist_1 torn".into() };
        let states = CrashStates {
            model: "prefix".into(),
            seed: 31,
            from_entry: 59,
            total: 28,
            judged: 28,
            cap: 300,
            checker: "replace-files: ...".into(),
            first_bad: Some(bad),
            ..CrashStates::default()
        };
        let figures = [
            ("crash_bad", 2.0),
            ("crash_empty", 0.0),
            ("crash_torn", 2.0),
            ("crash_missing", 0.0),
            ("crash_unmountable", 0.0),
            ("crash_fsck_failed", 0.0),
            ("crash_durability_violations", 0.0),
        ];
        let mut case = judged("replace-files", "prefix", &figures, states);
        case.params.insert("strategy".into(), "in-place".into());
        assert_eq!(
            render(std::slice::from_ref(&case)),
            "\ncrash states (each rebuilt from the write log, mounted, checked by the file system's checker and the work's):\n  \
             ext4@crash=prefix r1: strategy=in-place\n    28 states (prefix, seed 31, from entry 59), 2 bad: 0 empty, 2 torn, \
             0 missing, 0 unmountable, 0 fsck failed; 0 durability violations\n    first bad, entry 73: exist_1 torn\n"
        );
        case.crash = Some(CrashRecord::default());
        assert_eq!(render(&[case]), "");
    }

    #[test]
    fn every_distinct_outcome_is_counted_the_whole_command_wrapped_and_early_marks_warned_of() {
        let check = "git fsck --no-progress && git merge-base --is-ancestor $(tail -n 1 \"$FSLAB_CRASH_DURABLE\") HEAD && \
                     test -s .git/HEAD && echo every commit marked durable is on the branch";
        let mut outcomes = Vec::new();
        let classes = vec!["check_failed".to_string()];
        let empty_head = "the checker exited with status 1; its output:\ngit cannot read the repository\n\x1b[2J";
        for (entry, detail) in [(12, empty_head), (13, empty_head), (20, "the checker exited with status 2; its output:\ndata has 0 bytes")] {
            assert!(BadOutcome::count(&mut outcomes, entry, &classes, detail));
        }
        for n in 0..20 {
            BadOutcome::count(&mut outcomes, 30 + n, &classes, &format!("status 1; object {n} empty"));
        }
        assert_eq!(outcomes.len(), crate::record::crash::MAX_BAD_OUTCOMES);
        let first_bad = BadState { entry: 12, classes: classes.clone(), detail: empty_head.into(), ..BadState::default() };
        let states = CrashStates {
            model: "flush".into(),
            seed: 31,
            judged: 49,
            total: 49,
            first_bad: Some(first_bad),
            bad_outcomes: outcomes,
            bad_outcomes_left_out: 6,
            marks_before_flush: 3,
            ..CrashStates::default()
        };
        let figures = [("crash_bad", 23.0), ("crash_check_failed", 23.0), ("crash_unmountable", 0.0), ("crash_fsck_failed", 0.0)];
        let mut case = judged("exec", "flush", &figures, states);
        case.params.insert("check".into(), check.into());
        let shown = render(&[case]);
        assert!(shown.lines().all(|l| l.chars().count() <= 120), "{shown}");
        let joined: String = shown.lines().skip(2).take(3).map(str::trim).collect::<Vec<_>>().join(" ");
        assert!(joined.starts_with(&format!("ext4@crash=flush r1: check={check}")), "{shown}");
        assert!(shown.contains("    49 states (flush, seed 31, from entry 0), 23 bad: 23 check failed, 0 unmountable, 0 fsck failed\n"), "{shown}");
        assert!(shown.contains("    warning: 3 names marked durable before any flush since the work began"), "{shown}");
        assert!(
            shown.contains(
                "    2 states from entry 12: the checker exited with status 1; its output:\n      | git cannot read the repository\n      \
                 | \\x1b[2J\n    1 state from entry 20: the checker exited with status 2: data has 0 bytes\n    1 state from entry 30: status 1; object 0 empty\n"
            ),
            "{shown}"
        );
        assert!(shown.contains("    and 13+ other outcomes in 19 states (all kept: show --json, report)\n"), "{shown}");
    }
}
