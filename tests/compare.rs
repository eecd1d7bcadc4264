//! `fslab compare` end to end on real runs: a setup made slower on purpose
//! (an ext4 mounted `sync`) is a regression and exits 1; two runs of the
//! same setup are not and exit 0.

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
    assert!(text.contains("create-file wall_s on ext4 (method=write-64k, size=16 MiB): "), "{text}");
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
    // commit more or less), so either exit is fair; timings are not judged.
    let out = lab.command().args(["compare", "one", "two", "--json"]).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let wall = row(&c, "wall_s");
    assert_eq!(wall["outcome"], "too_few_repeats", "{wall}");
    assert!(wall["note"].as_str().unwrap().contains("--repeat 4"), "{wall}");
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
