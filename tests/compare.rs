//! `fslab compare` end to end on real runs: a setup made slower on purpose
//! (an ext4 mounted `sync`) is a regression and exits 1; two runs of the
//! same setup are not and exit 0. And on crafted runs: a case that newly
//! failed is a regression, sides with nothing in common exit 2, and an
//! incomplete run is named.

mod common;

use common::{Lab, root_or_skip};
use serde_json::Value;

/// create-file writing 16 MiB in 64 KiB writes on ext4, five times, tagged.
fn create_file_run(lab: &Lab, tag: &str, extra: &[&str]) {
    let mut args = vec!["create-file", "--fs", "ext4", "--set", "method=write-64k", "--set", "size=16M"];
    args.extend(["--repeat", "5", "--tag", tag]);
    args.extend(extra);
    lab.run_json(&args, 0);
}

fn compare(lab: &Lab, base: &str, new: &str, code: i32) -> Value {
    let out = lab.expect(&["compare", base, new, "--json"], code);
    serde_json::from_slice(&out.stdout).expect("compare --json")
}

fn row<'a>(c: &'a Value, figure: &str) -> &'a Value {
    c["compare"]["rows"].as_array().unwrap().iter().find(|r| r["figure"] == figure).unwrap_or_else(|| panic!("no {figure} row"))
}

#[test]
fn a_sync_mount_is_a_regression_and_the_same_setup_is_not() {
    if !root_or_skip("compare_sync_mount") {
        return;
    }
    let lab = Lab::new();
    create_file_run(&lab, "base", &[]);
    create_file_run(&lab, "again", &[]);
    create_file_run(&lab, "sync", &["--mount-opt", "ext4=sync"]);
    lab.assert_nothing_left("three create-file runs");

    let slower = compare(&lab, "base", "sync", 1);
    assert_eq!(slower["schema"], "fslab/1");
    // Every 64 KiB write commits on its own: 256 and the final one, exactly.
    let commits = row(&slower, "journal_commits");
    assert_eq!(commits["outcome"], "regression", "{commits}");
    assert!(commits["new"].as_array().unwrap().iter().all(|v| v.as_f64() == Some(257.0)), "{commits}");
    // And the time it took, over five repeats a side, with its evidence.
    let wall = row(&slower, "wall_s");
    assert_eq!(wall["outcome"], "regression", "{wall}");
    assert!(wall["ci"][0].as_f64().unwrap() > 1.05, "{wall}");
    assert!(wall["q_value"].as_f64().unwrap() < 0.05, "{wall}");

    let same = compare(&lab, "base", "again", 0);
    let rows = same["compare"]["rows"].as_array().unwrap();
    let regressions: Vec<&Value> = rows.iter().filter(|r| r["outcome"] == "regression").collect();
    assert!(regressions.is_empty(), "the same setup regressed: {regressions:#?}");
    assert!(rows.len() > 20, "figures were compared: {}", rows.len());

    // The text says it in a sentence, and markdown is a table.
    let out = lab.command().args(["compare", "base", "sync"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\n  create-file on ext4 (method=write-64k, size=16 MiB):\n"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("    wall_s ") && l.contains("x slower ") && l.contains(" (median ")), "{text}");
    assert!(text.lines().last().unwrap().contains("regression"), "{text}");
    let out = lab.command().args(["compare", "base", "sync", "--markdown"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("|---"));
}

#[test]
fn too_few_repeats_are_said_not_guessed() {
    if !root_or_skip("compare_too_few") {
        return;
    }
    let lab = Lab::new();
    for tag in ["one", "two"] {
        lab.run_json(&["replace-files", "--fs", "ext4", "--set", "strategy=fsync-each", "--tag", tag], 0);
    }
    // Exact figures may still differ between single runs (a journal
    // commit more or less), so a regression is fair; timings are not
    // judged, and one that moved past the threshold leaves it undecided.
    let out = lab.command().args(["compare", "one", "two", "--json"]).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1 | 5)), "{}", String::from_utf8_lossy(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let wall = row(&c, "wall_s");
    assert!(matches!(wall["outcome"].as_str(), Some("too_few_repeats" | "undecided")), "{wall}");
    let code = match c["compare"]["decision"].as_str() {
        Some("regression") => 1,
        Some("undecided") => 5,
        _ => 0,
    };
    assert_eq!(out.status.code(), Some(code), "the exit follows the decision: {c}");
    // What one value a side allows is said once for the comparison.
    let sizes = &c["compare"]["sample_sizes"][0];
    assert_eq!((sizes["base"].as_u64(), sizes["new"].as_u64(), sizes["least_p"].as_f64()), (Some(1), Some(1), Some(1.0)), "{c}");
}

/// `fslab run replace-files --fs ext4 --repeat 3 --no-store --json`, with
/// `extra`, saved as `NAME.json` in the lab; its path.
fn saved_run(lab: &Lab, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["replace-files", "--fs", "ext4", "--repeat", "3", "--no-store"];
    args.extend(extra);
    saved(lab, name, &lab.run_json(&args, 0))
}

/// A run's `--json` output saved as `NAME.json` in the lab, for
/// `compare`'s sides; its path.
fn saved(lab: &Lab, name: &str, run: &Value) -> String {
    let path = lab.dir.path().join(format!("{name}.json"));
    std::fs::write(&path, run.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn compare_opens_with_what_differs_and_says_likely_effects_in_the_right_words() {
    if !root_or_skip("compare_what_differs") {
        return;
    }
    let lab = Lab::new();
    let base = saved_run(&lab, "defaults", &[]);
    let sync = saved_run(&lab, "sync", &["--mount-opt", "ext4=sync"]);
    lab.assert_nothing_left("two replace-files runs");

    let out = lab.command().args(["compare", &base, &sync]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let decided = text.contains("\nRegressions:\n");
    // Decided regressions exit 1; else the likely ones leave it undecided.
    assert_eq!(out.status.code(), Some(if decided { 1 } else { 5 }), "exit 1 only for decided regressions:\n{text}");
    // The header names the mount option, once, before any row.
    let header = text.split("\n\n").next().unwrap();
    assert!(header.contains("What differs (") && header.contains("\n  ext4 mount: defaults → sync\n"), "{text}");
    assert_eq!(text.matches("sync\n").count(), 1, "{text}");
    // The smallest p 3 against 3 allow is said once, not on each row.
    assert!(header.contains("Smallest p the repeats allow: 0.1 with 3 vs 3 values"), "{text}");
    assert!(!text.contains("cannot reach p"), "{text}");
    // Flushes 42 → 761 cannot be missed: decided (exact) or likely, in counts' words.
    let flushes = text.lines().find(|l| l.trim_start().starts_with("flushes ")).unwrap_or_else(|| panic!("{text}"));
    assert!(flushes.split("x more").nth(1).is_some_and(|rest| rest.trim_start().starts_with('(')), "{flushes}");
    assert!(!text.contains("x worse") && !text.lines().any(|l| l.contains("bytes ") && l.contains(" slower")), "{text}");
    assert!(text.contains("Likely regressions (too few repeats to decide, ranges apart):"), "{text}");
    assert!(text.contains("— ranges apart: "), "{text}");
    let undecided = if decided { "Undecided as well (the regression makes it exit 1): " } else { "Undecided (exit 5; " };
    assert!(text.replace('\n', " ").contains(undecided), "{text}");
    // backing_* are host-wide: counted aside, not judged.
    let flat = text.replace('\n', " ");
    assert!(flat.contains("host-wide (backing_*: the whole disk under the target"), "{text}");
    assert!(!text.contains("backing_flushes"), "host-wide rows only with --all: {text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120), "a line over 120 columns:\n{text}");

    let out = lab.command().args(["compare", &base, &sync, "--json"]).output().unwrap();
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let differs = c["compare"]["differs"].as_array().unwrap();
    assert_eq!(differs, &[serde_json::json!({"what": "ext4 mount", "base": "defaults", "new": "sync"})], "{c}");
    let backing = row(&c, "backing_flushes");
    assert_eq!((backing["outcome"].as_str(), backing["host_wide"].as_bool()), (Some("host_wide"), Some(true)), "{backing}");
    let likely = c["compare"]["rows"].as_array().unwrap().iter().filter(|r| r["outcome"] == "likely_regression").count();
    assert!(likely > 0, "{c}");
    let markdown = lab.command().args(["compare", &base, &sync, "--markdown"]).output().unwrap();
    assert!(String::from_utf8_lossy(&markdown.stdout).contains("- ext4 mount: defaults → sync\n"));

    // --host-figures judges them: the whole disk's flushes rose as much.
    let out = lab.command().args(["compare", &base, &sync, "--json", "--host-figures"]).output().unwrap();
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let backing = row(&c, "backing_flushes");
    assert!(matches!(backing["outcome"].as_str(), Some("regression" | "likely_regression")), "{backing}");
    // The same setup differs in nothing, and says nothing of it.
    let out = lab.command().args(["compare", &base, &base]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("What differs"));
}

#[test]
fn bad_compare_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    drop(fslab::store::Store::open(store.to_str().unwrap()).unwrap());
    let s = store.to_str().unwrap();
    for (args, says) in [
        (vec!["compare", "a", "b", "--store", s], "fslab runs"),
        (vec!["compare", "a", "b", "--store", s, "--threshold", "150%"], "--threshold"),
        (vec!["compare", "a", "b", "--store", s, "--alpha", "0"], "--alpha"),
    ] {
        let out = common::fslab_expect(&args, 2);
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Write a crafted run's `--json` output into `dir` as `NAME.json`; its
/// path, for `compare`'s sides.
fn crafted(dir: &std::path::Path, name: &str, complete: bool, cases: Vec<Value>) -> String {
    let path = dir.join(format!("{name}.json"));
    let id = format!("20261121T00000{}Z-1-0000000{}", name.len() % 10, name.len() % 10);
    std::fs::write(&path, common::crafted_run(&id, complete, cases).to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

fn ok(scenario: &str, fs: &str, repeat: u32) -> Value {
    common::crafted_case(scenario, fs, repeat, None)
}

#[test]
fn a_case_ok_in_base_and_failed_in_new_is_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let base = crafted(dir.path(), "base", true, vec![ok("replace-files", "ext4", 1), ok("replace-files", "xfs", 1)]);
    let failed = common::crafted_case("replace-files", "xfs", 1, Some("mkfs.xfs: cannot\nformat"));
    let new = crafted(dir.path(), "newer", true, vec![ok("replace-files", "ext4", 1), failed]);
    let out = common::fslab_expect(&["compare", &base, &new, "--json"], 1);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let failed = &c["compare"]["newly_failed"];
    assert_eq!(failed.as_array().map(Vec::len), Some(1), "{c}");
    assert_eq!((&failed[0]["fs"], &failed[0]["failed"], &failed[0]["repeats"]), (&Value::from("xfs"), &Value::from(1), &Value::from(1)));
    assert_eq!(failed[0]["error"], "mkfs.xfs: cannot\nformat");
    assert!(c["compare"]["only_base"].as_array().unwrap().is_empty(), "listed once, as a regression: {c}");

    let out = common::fslab_expect(&["compare", &base, &new], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Newly failed (ok in "), "{text}");
    assert!(text.contains("  replace-files on xfs (files=20): failed in its only repeat in "), "{text}");
    assert!(text.contains(": mkfs.xfs: cannot format\n"), "{text}");
    assert!(text.lines().last().unwrap().starts_with("1 regression (1 newly failed case), "), "{text}");
    let out = common::fslab_expect(&["compare", &base, &new, "--markdown"], 1);
    assert!(String::from_utf8_lossy(&out.stdout).contains("- replace-files on xfs (files=20): failed in its only repeat"));
    // The other way round, the case is fixed, not a regression.
    common::fslab_expect(&["compare", &new, &base], 0);
}

/// A replace-files case on ext4 whose crash states were judged: `bad` of
/// 40 states bad, `violations` durability violations among them.
fn crashed(repeat: u32, bad: f64, violations: f64) -> Value {
    let mut case = ok("replace-files", "ext4", repeat);
    case["conditions"] = serde_json::json!({"crash": "flush"});
    let count = |v: f64, better: &str| serde_json::json!({"value": v, "unit": "count", "better": better, "kind": "timing"});
    let figures = case["figures"].as_object_mut().unwrap();
    figures.insert("crash_states".into(), count(40.0, "higher"));
    figures.insert("crash_bad".into(), count(bad, "lower"));
    figures.insert("crash_empty".into(), count(bad, "lower"));
    figures.insert("crash_durability_violations".into(), count(violations, "lower"));
    case
}

#[test]
fn a_side_that_gains_bad_crash_states_is_a_regression_whatever_the_statistics() {
    // Three repeats a side cannot decide a timing, and 0 has no ratio; a
    // safety count that was 0 in every base repeat and is not in one new
    // repeat is a regression all the same, and gates, even under a --gate
    // that names other figures.
    let dir = tempfile::tempdir().unwrap();
    let base = crafted(dir.path(), "base", true, (1..=3).map(|r| crashed(r, 0.0, 0.0)).collect());
    let new = crafted(dir.path(), "newer", true, vec![crashed(1, 0.0, 0.0), crashed(2, 3.0, 1.0), crashed(3, 0.0, 0.0)]);
    let out = common::fslab_expect(&["compare", &base, &new, "--json"], 1);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    for figure in ["crash_bad", "crash_empty", "crash_durability_violations"] {
        let r = row(&c, figure);
        assert_eq!((&r["outcome"], &r["gated"]), (&Value::from("regression"), &Value::from(true)), "{r}");
        assert!(r["note"].as_str().unwrap().contains("must stay 0"), "{r}");
    }
    assert_eq!(row(&c, "crash_states")["outcome"], "too_few_repeats", "the states judged are a count like any other");
    common::fslab_expect(&["compare", &base, &new, "--gate", "wall_s"], 1);
    let out = common::fslab_expect(&["compare", &base, &new], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("crash_bad                    more in 1 of 3 repeats  (median 0 → 0)"), "{text}");
    // Fewer bad states is judged by the statistics as before; the same
    // zeros on both sides are unchanged.
    common::fslab_expect(&["compare", &new, &base], 0);
    common::fslab_expect(&["compare", &base, &base], 0);
}

#[test]
fn runs_with_no_case_in_common_are_a_usage_error_that_says_what_each_has() {
    let dir = tempfile::tempdir().unwrap();
    let base = crafted(dir.path(), "base", true, vec![ok("tree-copy", "ext4", 1)]);
    let new = crafted(dir.path(), "newer", true, vec![ok("mmap-fill", "xfs", 1), ok("mmap-fill", "btrfs", 1)]);
    for format in ["--json", "--markdown", "--all"] {
        let out = common::fslab_expect(&["compare", &base, &new, format], 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no case in common"), "{err}");
        assert!(err.contains("has 1 case: tree-copy on ext4 (files=20)"), "{err}");
        assert!(err.contains("has 2 cases: mmap-fill on xfs (files=20), mmap-fill on btrfs (files=20)"), "{err}");
        assert!(out.stdout.is_empty(), "no verdict is printed");
    }
    // A condition is part of a case's key: a memory limit on one side alone
    // leaves nothing in common, and the error says that is why.
    let mut limited = ok("tree-copy", "ext4", 1);
    limited["conditions"] = serde_json::json!({"memory": "256M"});
    let limited = crafted(dir.path(), "limited", true, vec![limited]);
    let out = common::fslab_expect(&["compare", &base, &limited], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("; their setups differ in: ext4 conditions: none → memory=256M"), "{err}");
    // A killed run that stored no case has nothing in common either.
    let empty = crafted(dir.path(), "empty", false, vec![]);
    let out = common::fslab_expect(&["compare", &base, &empty], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no case at all"));
}

#[test]
fn an_incomplete_run_is_named_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let base = crafted(dir.path(), "base", true, vec![ok("replace-files", "ext4", 1), ok("replace-files", "ext4", 2)]);
    let killed = crafted(dir.path(), "killed", false, vec![ok("replace-files", "ext4", 1)]);
    let id = "20261121T000006Z-1-00000006";
    let out = common::fslab_expect(&["compare", &base, &killed], 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("INCOMPLETE: run {id} of ")) && text.contains("killed or interrupted"), "{text}");
    let out = common::fslab_expect(&["compare", &base, &killed, "--markdown"], 0);
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(markdown.contains(&format!("**Incomplete:** run {id} of ")), "{markdown}");
    let out = common::fslab_expect(&["compare", &base, &killed, "--json"], 0);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["compare"]["new_incomplete"], serde_json::json!([id]), "{c}");
    assert_eq!(c["compare"]["base_incomplete"], serde_json::json!([]));
    // Complete runs say nothing of it.
    let out = common::fslab_expect(&["compare", &base, &base], 0);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("INCOMPLETE"));
}

/// A shell script in the lab that `exec` runs on each side: the command
/// (and so the case) is the same, and what it does is read from `knob`,
/// a file the test writes between the sides.
fn knob_script(lab: &Lab, name: &str, body: &str) -> (String, std::path::PathBuf) {
    let knob = lab.dir.path().join(format!("{name}.knob"));
    let script = lab.dir.path().join(format!("{name}.sh"));
    std::fs::write(&script, body.replace("KNOB", &knob.to_string_lossy())).unwrap();
    (script.to_string_lossy().into_owned(), knob)
}

/// `fslab exec --fs ext4 --no-store --json EXTRA -- sh SCRIPT`, saved as
/// `NAME.json` in the lab; its path.
fn saved_exec(lab: &Lab, name: &str, extra: &[&str], script: &str) -> String {
    let mut args = vec!["--fs", "ext4", "--no-store"];
    args.extend(extra);
    args.extend(["--", "sh", script]);
    saved(lab, name, &lab.exec_json(&args, 0))
}

#[test]
fn three_repeats_a_side_cannot_decide_a_real_twofold_slowdown_and_say_so() {
    if !root_or_skip("compare_undecided") {
        return;
    }
    let lab = Lab::new();
    // The same command, writing the same 1 MiB, then waiting 0.5 s or 1 s:
    // long enough that a loaded machine's slower fsync (0.2 s more at
    // times, beside another suite) keeps the two sides apart.
    let body = "dd if=/dev/zero of=f bs=64k count=16 conv=fsync status=none\nsleep \"$(cat KNOB)\"\n";
    let (script, knob) = knob_script(&lab, "slow", body);
    std::fs::write(&knob, "0.5").unwrap();
    let base = saved_exec(&lab, "base", &["--repeat", "3"], &script);
    std::fs::write(&knob, "1.0").unwrap();
    let slower = saved_exec(&lab, "slower", &["--repeat", "3"], &script);
    lab.assert_nothing_left("two exec runs");

    // 3 against 3 can reach no p below 0.1: the 2x is seen, not decided.
    let out = lab.expect(&["compare", &base, &slower, "--json"], 5);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["compare"]["decision"], "undecided", "{c}");
    let wall = row(&c, "wall_s");
    assert!(matches!(wall["outcome"].as_str(), Some("likely_regression" | "undecided")), "{wall}");
    let slowdown = wall["slowdown"].as_f64().unwrap();
    assert!((1.4..2.4).contains(&slowdown), "a real 2x: {wall}");
    // Wholly apart at 3 a side: 4 a side would give p = 2/70 < 0.05.
    assert_eq!(wall["repeats_needed"].as_u64(), Some(4), "{wall}");
    assert!(c["compare"]["repeats_needed"].as_u64().unwrap() >= 4, "{c}");
    let text = String::from_utf8(lab.expect(&["compare", &base, &slower], 5).stdout).unwrap();
    let flat = text.replace("\n    ", " ").replace('\n', " ");
    assert!(flat.contains("--repeat 4 would decide"), "the row says what decides it:\n{text}");
    assert!(flat.contains("exit 5"), "the summary says the exit:\n{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120), "a line over 120 columns:\n{text}");
    let markdown = String::from_utf8(lab.expect(&["compare", &base, &slower, "--markdown"], 5).stdout).unwrap();
    assert!(markdown.contains("undecided") && markdown.contains("--repeat 4 would decide"), "{markdown}");
    // Told otherwise, undecided passes; a gate on a figure that did not move passes.
    lab.expect(&["compare", &base, &slower, "--allow-undecided"], 0);
    lab.expect(&["compare", &base, &slower, "--gate", "extents"], 0);
    lab.expect(&["compare", &base, &slower, "--gate", "wall_s"], 5);
}

#[test]
fn a_gated_exact_figure_fails_on_one_extra_extent_from_one_run_a_side() {
    if !root_or_skip("compare_gate_extents") {
        return;
    }
    let lab = Lab::new();
    // A real fallocate of 200 MiB is one extent on ext4 and two without
    // flex_bg (the second group's bitmaps and inode table cut it): the work
    // placed every block itself, so the count is exact.
    let made = |name: &str, extra: &[&str]| {
        let mut args = vec!["create-file", "--fs", "ext4", "--set", "method=fallocate", "--set", "size=200M", "--no-store"];
        args.extend(extra);
        saved(&lab, name, &lab.run_json(&args, 0))
    };
    let base = made("base", &[]);
    let more = made("more", &["--mkfs-opt", "ext4=-O ^flex_bg"]);
    lab.assert_nothing_left("two create-file runs");

    let out = lab.expect(&["compare", &base, &more, "--gate", "extents", "--json"], 1);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let extents = row(&c, "extents");
    assert_eq!((extents["base"].clone(), extents["new"].clone()), (serde_json::json!([1.0]), serde_json::json!([2.0])), "{extents}");
    assert_eq!((extents["kind"].as_str(), extents["outcome"].as_str(), extents["gated"].as_bool()), (Some("exact"), Some("regression"), Some(true)));
    assert_eq!(extents["threshold"].as_f64(), Some(0.0), "a gated exact figure: any change");
    assert_eq!(row(&c, "create_s")["gated"].as_bool(), Some(false));
    assert_eq!(c["compare"]["gates"], serde_json::json!([{"figure": "extents", "threshold": null}]));
    assert_eq!(c["compare"]["decision"], "regression");
    // Gated elsewhere, the extent decides nothing: its change is shown and
    // fails nothing.
    let out = lab.expect(&["compare", &base, &more, "--gate", "bytes", "--json"], 0);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (extents, bytes) = (row(&c, "extents"), row(&c, "bytes"));
    assert_eq!((extents["gated"].as_bool(), bytes["outcome"].as_str()), (Some(false), Some("unchanged")), "{bytes}");
    // The same gate kept in a file, with comments.
    let gates = lab.dir.path().join("gates");
    std::fs::write(&gates, "# what fails CI\n\nextents   # one more extent is a regression\n").unwrap();
    let out = lab.expect(&["compare", &base, &more, "--gate-file", &gates.to_string_lossy()], 1);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Gate: extents (any change)"), "{text}");
}

#[test]
fn a_command_s_extents_are_a_timing_that_one_run_a_side_cannot_gate() {
    if !root_or_skip("compare_gate_exec_extents") {
        return;
    }
    if !common::have("fallocate") {
        panic!("fallocate (util-linux) is needed");
    }
    let lab = Lab::new();
    // f and g take 4 KiB each in turn, so f's 22 blocks lie apart (22
    // extents); with KNOB=20, g skips a turn and two of f's are adjacent
    // (21). fslab cannot know a command placed its blocks itself, so its
    // layout is a timing: one extent more in 21 (+4.8%) is within the
    // gate's 5%, and with no threshold of its own nothing is decided.
    let body = "for i in $(seq 0 21); do\n  fallocate -o $((i * 4096)) -l 4096 f\n  \
                [ \"$i\" = \"$(cat KNOB)\" ] || fallocate -o $((i * 4096)) -l 4096 g\ndone\nrm g\n";
    let (script, knob) = knob_script(&lab, "frag", body);
    std::fs::write(&knob, "20").unwrap();
    let base = saved_exec(&lab, "base", &[], &script);
    std::fs::write(&knob, "none").unwrap();
    let more = saved_exec(&lab, "more", &[], &script);
    lab.assert_nothing_left("two exec runs");
    let out = lab.expect(&["compare", &base, &more, "--gate", "extents", "--json"], 0);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let extents = row(&c, "extents");
    assert_eq!((extents["base"].clone(), extents["new"].clone()), (serde_json::json!([21.0]), serde_json::json!([22.0])), "{extents}");
    assert_eq!((extents["kind"].as_str(), extents["outcome"].as_str()), (Some("timing"), Some("too_few_repeats")), "{extents}");
    // Gated at any change, the timing moved the wrong way and one value a
    // side cannot decide it: undecided.
    lab.expect(&["compare", &base, &more, "--gate", "extents:0"], 5);
}

#[test]
fn bad_gates_are_usage_errors_naming_the_line_and_the_nearest_figure() {
    let dir = tempfile::tempdir().unwrap();
    let base = crafted(dir.path(), "base", true, vec![ok("replace-files", "ext4", 1)]);
    let new = crafted(dir.path(), "newer", true, vec![ok("replace-files", "ext4", 1)]);
    let gates = dir.path().join("gates");
    let g = gates.to_str().unwrap();
    for (text, says) in [
        ("flushes\nwall_s:fast\n", "gates:2: wall_s:fast"),
        ("journal_commits:150%\n", "gates:1: "),
        ("flushes # fine\n:5%\n", "gates:2: "),
        ("jornal_commits\n", "did you mean `journal_commits`"),
    ] {
        std::fs::write(&gates, text).unwrap();
        let out = common::fslab_expect(&["compare", &base, &new, "--gate-file", g], 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{text:?}: {err}");
        assert!(out.stdout.is_empty(), "no verdict is printed");
    }
    let out = common::fslab_expect(&["compare", &base, &new, "--gate", "flushez"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("`flushes`"), "{}", String::from_utf8_lossy(&out.stderr));
    // A figure given two thresholds, a gate on figures the runs do not have.
    let out = common::fslab_expect(&["compare", &base, &new, "--gate", "flushes:1%,flushes:2%"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("flushes"));
    let out = common::fslab_expect(&["compare", &base, &new, "--gate", "extents"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("extents"), "a gate that compared nothing must not pass");
    // Neither a missing file nor one that is no regular file is read.
    common::fslab_expect(&["compare", &base, &new, "--gate-file", &format!("{g}.missing")], 2);
    let out = common::fslab_expect(&["compare", &base, &new, "--gate-file", "/dev/zero"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("regular file"), "{}", String::from_utf8_lossy(&out.stderr));
    // The crafted sides are the same: the gate passes.
    std::fs::write(&gates, "flushes\njournal_commits:10%\n").unwrap();
    common::fslab_expect(&["compare", &base, &new, "--gate-file", g], 0);
}

#[test]
fn a_gate_file_is_read_where_the_user_points_and_nowhere_else() {
    if !root_or_skip("compare_gate_file_links") {
        return;
    }
    let dir = common::temp::dir("gate-file");
    let base = crafted(dir.path(), "base", true, vec![ok("replace-files", "ext4", 1)]);
    let new = crafted(dir.path(), "newer", true, vec![ok("replace-files", "ext4", 1)]);
    let gates = dir.path().join("gates");
    std::fs::write(&gates, "flushes\n").unwrap();
    let shared = common::Sticky::new(dir.path());
    let link = |name: &str, uid: u32| shared.link(name, &gates, uid);
    let compare_with = |file: &str| common::finish(common::fslab_command().args(["compare", &base, &new, "--gate-file", file]));
    // nobody's link in a sticky folder chooses nothing root reads.
    let (code, err) = compare_with(&link("theirs", 65534));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("belongs to uid 65534") && err.contains("name the file it points to"), "{err}");
    assert_eq!(compare_with(&link("ours", 0)).0, Some(0), "root's own link is followed");
    // A file anyone owns is only read: nobody's gates gate as well.
    std::os::unix::fs::chown(&gates, Some(65534), Some(65534)).unwrap();
    assert_eq!(compare_with(&gates.to_string_lossy()).0, Some(0));
    // A FIFO is not waited on, and nothing larger than a gate file is read.
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let (code, err) = compare_with(&fifo.to_string_lossy());
    assert!(code == Some(2) && err.contains("a FIFO, not a regular file"), "{code:?} {err}");
    std::fs::write(&gates, "flushes\n".repeat(200_000)).unwrap();
    let (code, err) = compare_with(&gates.to_string_lossy());
    assert!(code == Some(2) && err.contains("over 1048576 bytes"), "{code:?} {err}");
}
