//! The crash table under a run's tables (`--crash MODEL`): per case, the
//! states judged, the bad ones by class, durability violations, and the
//! first bad state.

use std::fmt::Write;

use crate::record::Case;

/// The widest a first bad state's detail is shown.
const DETAIL_CHARS: usize = 100;

/// The widest a parameter's value is shown (an exec command's, a
/// checker's).
const PARAM_CHARS: usize = 40;

/// A parameter's value as the line shows it: cut to [`PARAM_CHARS`].
fn shortened(value: &serde_json::Value) -> String {
    let text = value.as_str().map_or(value.to_string(), str::to_string);
    if text.chars().count() <= PARAM_CHARS {
        return text;
    }
    format!("{}...", text.chars().take(PARAM_CHARS).collect::<String>())
}

/// One line per case whose crash states were judged; nothing for a run
/// that judged none.
pub(super) fn render(cases: &[Case]) -> String {
    let mut s = String::new();
    for case in cases {
        let Some(states) = case.crash.as_ref().and_then(|c| c.states.as_ref()) else { continue };
        if s.is_empty() {
            s.push_str("\ncrash states (each rebuilt from the write log, mounted, checked by the file system's checker and the work's):\n");
        }
        let figure = |name: &str| case.figures.get(name).and_then(|f| f.value);
        let n = |name: &str| figure(name).map_or("-".to_string(), |v| format!("{v:.0}"));
        let params: Vec<String> = case.params.iter().map(|(k, v)| format!("{k}={}", shortened(v))).collect();
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
        let _ = write!(
            s,
            "  {} {} r{}: {} states{capped} ({}, seed {}, from entry {}), {} bad: {judged_by}, {} unmountable, {} fsck failed{violations}",
            crate::text::escape(&case.place()),
            crate::text::escape(&params.join(" ")),
            case.repeat,
            states.judged,
            states.model,
            states.seed,
            states.from_entry,
            n("crash_bad"),
            n("crash_unmountable"),
            n("crash_fsck_failed"),
        );
        match &states.first_bad {
            Some(bad) => {
                // What the checker printed comes after the detail's first
                // line, shown a line each.
                let (head, output) = bad.detail.split_once('\n').unwrap_or((&bad.detail, ""));
                let detail: String = head.chars().take(DETAIL_CHARS).collect();
                let more = if head.chars().count() > DETAIL_CHARS { "..." } else { "" };
                let _ = writeln!(s, "; first bad: entry {} (epoch {}): {}{more}", bad.entry, bad.epoch, crate::text::escape(&detail));
                for line in output.lines() {
                    let _ = writeln!(s, "    | {}", crate::text::escape(line));
                }
            }
            None => s.push_str("; none bad\n"),
        }
        if states.checker.starts_with("none") {
            let _ = writeln!(s, "    no checker: {}", crate::text::escape(&states.checker));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{BadState, Better, CrashRecord, CrashStates, Kind};

    #[test]
    fn a_judged_case_gets_one_line_and_a_run_without_none() {
        let mut case = Case::new("replace-files", "ext4", serde_json::Map::new(), 1);
        case.conditions.insert("crash".into(), "prefix".into());
        case.params.insert("strategy".into(), "in-place".into());
        for (name, v) in [("crash_bad", 2.0), ("crash_empty", 0.0), ("crash_torn", 2.0), ("crash_missing", 0.0)] {
            case.figures.set(name, v, "count", Better::Lower, Kind::Timing);
        }
        for name in ["crash_unmountable", "crash_fsck_failed", "crash_durability_violations"] {
            case.figures.set(name, 0.0, "count", Better::Lower, Kind::Timing);
        }
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
        case.crash = Some(CrashRecord { states: Some(states), ..CrashRecord::default() });
        assert_eq!(
            render(std::slice::from_ref(&case)),
            "\ncrash states (each rebuilt from the write log, mounted, checked by the file system's checker and the work's):\n  \
             ext4@crash=prefix strategy=in-place r1: 28 states (prefix, seed 31, from entry 59), 2 bad: 0 empty, 2 torn, \
             0 missing, 0 unmountable, 0 fsck failed; 0 durability violations; first bad: entry 73 (epoch 24): exist_1 torn\n"
        );
        case.crash = Some(CrashRecord::default());
        assert_eq!(render(&[case]), "");
    }

    #[test]
    fn a_checker_that_judges_states_whole_shows_its_verdicts_and_the_first_bad_output() {
        let mut case = Case::new("exec", "ext4", serde_json::Map::new(), 1);
        case.params.insert("check".into(), "sqlite3 db 'PRAGMA integrity_check' | grep -qx ok".into());
        case.conditions.insert("crash".into(), "flush".into());
        for (name, v) in [("crash_bad", 1.0), ("crash_check_failed", 1.0), ("crash_unmountable", 0.0), ("crash_fsck_failed", 0.0)] {
            case.figures.set(name, v, "count", Better::Lower, Kind::Timing);
        }
        let detail = "the checker exited with status 1; its output:\n*** in database main ***\nPage 4: \x1b[2J".to_string();
        let bad = BadState { entry: 9, epoch: 2, prefix: 10, extra: 0, classes: vec!["check_failed".into()], detail };
        let states = CrashStates { model: "flush".into(), seed: 31, judged: 5, total: 5, cap: 300, first_bad: Some(bad), ..CrashStates::default() };
        case.crash = Some(CrashRecord { states: Some(states), ..CrashRecord::default() });
        let shown = render(&[case]);
        assert!(shown.contains("r1: 5 states (flush"), "{shown}");
        assert!(shown.contains("check=sqlite3 db 'PRAGMA integrity_check' | gr... r1"), "{shown}");
        assert!(shown.contains("5 states (flush, seed 31, from entry 0), 1 bad: 1 check failed, 0 unmountable, 0 fsck failed; first bad: entry 9 (epoch 2): the checker exited with status 1; its output:\n"), "{shown}");
        assert!(shown.ends_with("    | *** in database main ***\n    | Page 4: \\x1b[2J\n"), "{shown}");
    }
}
