//! Seed 002's verdict with `--crash`: cost and safety side by side, on a
//! real ext4. fsync-each never leaves a bad crash state; in-place may (a
//! race: about two runs in three here), so only fsync-each's zero and the
//! presence of both rows are asserted; dpkg, run beside it both ways,
//! gets its own line. The run is stored: `show` prints
//! its crash table back, and the report draws its states. Without
//! `--crash` the verdict says once that safety was not tried.

mod common;

use common::{Lab, cases, figure, recorder_or_skip};

#[test]
fn seed_002_s_verdict_says_cost_and_safety_and_the_stored_run_shows_and_draws_its_states() {
    if !recorder_or_skip("seed_002_s_verdict_says_cost_and_safety_and_the_stored_run_shows_and_draws_its_states") {
        return;
    }
    let lab = Lab::new();
    let args = [
        "--preset", "seeds", "replace-files", "--fs", "ext4", "--crash", "flush", "--set", "strategy=fsync-each,in-place",
        "--repeat", "3", "--size", "512M", "--tag", "safety",
    ];
    let json = lab.run_json(&args, 0);
    lab.assert_nothing_left("after the crash run");
    let mut states_of_fsync_each = 0.0;
    for case in cases(&json) {
        assert_eq!(case["status"], "ok", "{}", case["error"]);
        let outcomes = case["crash"]["states"]["outcomes"].as_array().expect("every state's outcome is kept");
        assert_eq!(outcomes.len() as f64, figure(case, "crash_states").unwrap());
        let bad = outcomes.iter().filter(|o| o.get("classes").is_some()).count();
        assert_eq!(bad as f64, figure(case, "crash_bad").unwrap(), "{case}");
        if case["params"]["strategy"] == "fsync-each" {
            assert_eq!(figure(case, "crash_bad"), Some(0.0), "fsync-each leaves no bad state: {}", case["crash"]["states"]);
            states_of_fsync_each += figure(case, "crash_states").unwrap();
        }
    }
    let verdict = &json["run"]["verdicts"][0];
    assert!(verdict.get("safety").is_none(), "safety was tried: {verdict}");
    let also = verdict["places"][0]["also"].as_array().expect("cost and safety beside the place");
    let said = also.iter().filter_map(|a| a.as_str()).find(|a| a.starts_with("cost and safety: ")).expect("cost and safety");
    let fsync_each = format!(" commits, 0 of {states_of_fsync_each} crash states bad; in-place ");
    assert!(said.starts_with("cost and safety: fsync-each ") && said.contains(&fsync_each), "{said}");
    // dpkg ran beside it both ways: its own line, cost and crash states.
    let dpkg = verdict["programs"][0].as_str().expect("dpkg's line");
    assert!(dpkg.starts_with("dpkg: with its fsyncs, ") && dpkg.contains("× the flushes"), "{dpkg}");
    assert!(dpkg.contains(" with them, ") && dpkg.ends_with(" without"), "crash states both ways: {dpkg}");

    // Stored: `show` prints the crash table back from the store, and the
    // report draws a strip per strategy with every state.
    let id = json["run"]["id"].as_str().unwrap();
    let shown = String::from_utf8_lossy(&lab.expect(&["show", id], 0).stdout).into_owned();
    // A case's head names its place, repeat and whole parameters.
    assert_eq!(shown.matches(": files=20 strategy=").count(), 6, "{shown}");
    assert_eq!(shown.matches("ext4@crash=flush r3: files=20 strategy=").count(), 2, "{shown}");
    // Each place's cost and safety is its evidence: `--why` says it.
    let why = String::from_utf8_lossy(&lab.expect(&["show", id, "--why"], 0).stdout).into_owned();
    let words = why.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("cost and safety: fsync-each"), "{why}");
    let page = lab.state().join("page.html");
    lab.expect(&["report", "safety", "-o", page.to_str().unwrap()], 0);
    let html = std::fs::read_to_string(&page).unwrap();
    let strips: Vec<&str> = html.split(r#"<svg class="chart crash""#).skip(1).collect();
    assert_eq!(strips.len(), 2 + 2, "one strip per strategy and per dpkg setting (its first repeat)");
    for strip in strips {
        let strip = &strip[..strip.find("</svg>").unwrap()];
        let drawn = strip.matches("<rect data-outcome=").count();
        assert!(strip.contains(&format!(r#"data-states="{drawn}""#)), "every state drawn: {drawn}");
    }

    // Without --crash: the verdict as before, safety said once untried.
    let json = lab.run_json(&["--preset", "seeds", "replace-files", "--fs", "ext4", "--set", "strategy=fsync-each", "--no-store"], 0);
    let verdict = &json["run"]["verdicts"][0];
    assert_eq!(verdict["safety"], "not tried: add --crash flush to judge what each strategy leaves after a crash", "{verdict}");
    // The place says no strategy's safety, only dpkg's cost.
    let also: Vec<&str> = verdict["places"][0]["also"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    assert!(matches!(also[..], [dpkg] if dpkg.starts_with("dpkg: its fsyncs ") && !dpkg.contains("crash")), "{verdict}");
}
