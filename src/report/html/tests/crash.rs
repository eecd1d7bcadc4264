//! The section's crash states: cost beside safety per group, and a strip
//! per group along the log with every state coloured by its outcome, the
//! flushes and the marks on the same axis.

use super::*;
use crate::record::{BadState, CrashMark, CrashRecord, CrashStates, StateOutcome};

/// A replace-files case with `strategy`, its states at entries 60.. of a
/// 100-entry log: one good state per flush, and `bad` of them torn (the
/// last one also a durability violation when `violation`).
fn crashed(strategy: &str, bad: usize, violation: bool) -> Case {
    let mut c = case("replace-files", "ext4", 1, 0.02);
    c.params.insert("strategy".into(), strategy.into());
    c.conditions.insert("crash".into(), "flush".into());
    let flushes: Vec<u64> = (60..100).step_by(4).collect();
    let mut outcomes: Vec<StateOutcome> = flushes.iter().map(|&f| StateOutcome { entry: f, prefix: f + 1, ..Default::default() }).collect();
    for o in outcomes.iter_mut().skip(2).take(bad) {
        o.classes = vec!["torn".into()];
    }
    if violation {
        let last = outcomes.last_mut().unwrap();
        last.classes.push("durability".into());
        last.violations = 1;
    }
    let n = |v: usize| v as f64;
    let bad_states = outcomes.iter().filter(|o| !o.classes.is_empty()).count();
    for (name, v) in [
        ("crash_states", n(outcomes.len())),
        ("crash_bad", n(bad_states)),
        ("crash_torn", n(bad)),
        ("crash_durability_violations", n(usize::from(violation))),
        ("journal_commits", 21.0),
    ] {
        c.figures.set(name, v, "count", Better::Lower, Kind::Timing);
    }
    let first_bad = (bad > 0).then(|| BadState { entry: 68, epoch: 3, prefix: 69, classes: vec!["torn".into()], detail: "exist_1 torn".into(), ..Default::default() });
    let mark = |what: &str, entries| CrashMark { what: what.into(), entries, at_s: 0.0 };
    c.crash = Some(CrashRecord {
        entries: 100,
        marks: vec![mark("work_start", 60), mark("durable:exist_1", 65), mark("work_end", 90)],
        states: Some(CrashStates {
            model: "flush".into(),
            from_entry: 60,
            total: outcomes.len() as u64,
            judged: outcomes.len() as u64,
            first_bad,
            outcomes,
            flush_entries: flushes,
            ..CrashStates::default()
        }),
        ..CrashRecord::default()
    });
    c
}

#[test]
fn each_group_s_states_are_drawn_along_the_log_with_its_flushes_and_marks() {
    let html = page(&[run(vec![crashed("fsync-each", 0, false), crashed("in-place", 3, true), case("replace-files", "xfs", 1, 0.1)])], None);
    assert_balanced(&html);
    let section = &html[html.find(r#"<h3 id="crash">Crash states</h3>"#).expect("a crash section")..];
    // The table: cost beside safety, a row per group that judged states.
    let rows = attrs(section, "tr data-bad", "data-bad");
    assert_eq!(rows, ["0", "4"], "fsync-each none bad; in-place 3 torn and 1 violation");
    assert!(section.contains("<td>3 torn</td>"), "{section}");
    assert!(section.contains("1× exist_1 torn (entry 68)"), "{section}");
    // A strip per group, each state a bar coloured by its outcome.
    assert_eq!(attrs(section, "svg class=\"chart crash\"", "data-states"), ["10", "10"]);
    assert_eq!(attrs(section, "svg class=\"chart crash\"", "data-bad"), ["0", "4"]);
    assert_eq!(attrs(section, "svg class=\"chart crash\"", "data-flushes"), ["10", "10"]);
    assert_eq!(attrs(section, "svg class=\"chart crash\"", "data-marks"), ["3", "3"]);
    let second = &section[section.rfind(r#"<svg class="chart crash""#).unwrap()..];
    let outcomes = attrs(second, "rect data-outcome", "data-outcome");
    assert_eq!(outcomes.iter().filter(|o| **o == "good").count(), 6);
    assert_eq!(outcomes.iter().filter(|o| **o == "torn").count(), 3);
    assert_eq!(outcomes.iter().filter(|o| **o == "durability").count(), 1);
    assert!(second.contains(r##"fill="#ec8a2f"><title>entries 0–69: torn</title>"##), "{second}");
    assert!(second.contains(">work start</text>") && second.contains(">work end</text>"), "{second}");
    assert!(second.contains("<title>durable:exist_1 at entry 65</title>"), "{second}");
    // The legend names every colour once.
    assert_eq!(section.matches(r#"<span data-outcome="#).count(), 8);
    // A page without crash states has no such section.
    assert!(!page(&[run(vec![case("replace-files", "xfs", 1, 0.1)])], None).contains("Crash states"));
}

#[test]
fn the_verdict_says_cost_and_safety_in_its_row_and_an_untried_safety_once() {
    let mut judged = run(vec![crashed("fsync-each", 0, false)]);
    let mut place = PlaceVerdict { target: "ext4@crash=flush".into(), shows: Some(true), evidence: "21 commits".into(), ..Default::default() };
    place.also = vec!["cost and safety: fsync-each 21 commits, 0 of 10 crash states bad".into()];
    judged.verdicts = vec![Verdict { places: vec![place], shows: Some(true), ..Verdict::unknown("replace-files", "002", "") }];
    let html = page(std::slice::from_ref(&judged), None);
    assert!(html.contains("<td>21 commits; cost and safety: fsync-each 21 commits, 0 of 10 crash states bad</td>"), "{html}");
    assert!(!html.contains(r#"<p class="safety">"#));
    judged.verdicts[0].safety = "not tried: add --crash flush".into();
    assert_eq!(page(&[judged], None).matches(r#"<p class="safety">safety: not tried: add --crash flush</p>"#).count(), 1);
}
