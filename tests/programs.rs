//! The programs people run, as scenarios, each crash state judged by the
//! program's own tools: `dpkg` upgrades real packages (built by the
//! scenario with dpkg-deb) in a scratch root; with its fsyncs no state
//! loses a file of a package dpkg calls installed, on ext4 or btrfs, with
//! `--force-unsafe-io` btrfs does, and dpkg's flushes are fewer. `git`
//! with its default settings syncs nothing (its commits are said durable
//! before any flush) and with `core.fsync=all` still leaves `git init`
//! unsynced; SQLite in DELETE mode loses its last commit at FULL and not
//! at EXTRA (which syncs the folder after the journal's unlink, as its
//! documentation says); a replace by rename that does not sync the file
//! leaves xfs's file empty beside a neighbour's fsync.

mod common;

use common::{Lab, cases, measured, recorder_or_skip};

/// The case of `json` whose parameters or conditions are all `pairs`.
fn case_with<'a>(json: &'a serde_json::Value, pairs: &[(&str, &str)]) -> &'a serde_json::Value {
    cases(json)
        .iter()
        .find(|c| pairs.iter().all(|(k, v)| c["params"][*k] == *v || c["conditions"][*k] == *v))
        .unwrap_or_else(|| panic!("no case with {pairs:?}"))
}

/// A case's bad crash states, checked against its distinct outcomes (each
/// bad state counted in one, or among those left out), and the outcomes.
fn bad_states(case: &serde_json::Value) -> (f64, Vec<String>) {
    assert_eq!(case["status"], "ok", "{}", case["error"]);
    let states = &case["crash"]["states"];
    assert_eq!(measured(case, "crash_unmountable") + measured(case, "crash_fsck_failed"), 0.0, "{states}");
    let bad = measured(case, "crash_check_failed");
    let outcomes = states["bad_outcomes"].as_array().cloned().unwrap_or_default();
    let counted: u64 = outcomes.iter().map(|o| o["states"].as_u64().unwrap()).sum::<u64>()
        + states["bad_outcomes_left_out"].as_u64().unwrap_or(0);
    assert_eq!(counted as f64, bad, "every bad state is in one outcome: {states}");
    (bad, outcomes.iter().map(|o| o["detail"].as_str().unwrap().to_string()).collect())
}

#[test]
fn dpkg_with_its_fsyncs_loses_nothing_and_with_unsafe_io_loses_installed_files_on_btrfs() {
    if !recorder_or_skip("dpkg_with_its_fsyncs_loses_nothing_and_with_unsafe_io_loses_installed_files_on_btrfs") {
        return;
    }
    let lab = Lab::new();
    let args = ["dpkg", "--fs", "ext4,btrfs", "--crash", "flush", "--set", "unsafe_io=no,yes", "--size", "512M", "--no-store"];
    let json = lab.run_json(&args, 0);
    let mut flushes = std::collections::BTreeMap::new();
    for case in cases(&json) {
        let (fs, unsafe_io) = (case["fs"].as_str().unwrap(), case["params"]["unsafe_io"].as_str().unwrap());
        assert_eq!(case["status"], "ok", "{fs} {unsafe_io}: {}", case["error"]);
        // dpkg said what it did: three packages upgraded over 1.0.
        let said = case["command"]["stdout"].as_str().unwrap();
        assert_eq!(said.matches("Setting up fslab-").count(), 3, "{said}");
        // Each package marked durable once dpkg returned.
        let marks = case["crash"]["marks"].as_array().unwrap();
        let durable: Vec<&str> = marks.iter().filter_map(|m| m["what"].as_str()?.strip_prefix("durable:")).collect();
        assert_eq!(durable, ["fslab-1", "fslab-2", "fslab-3"], "{fs} {unsafe_io}");
        let states = &case["crash"]["states"];
        assert!(measured(case, "crash_states") >= 10.0, "{fs} {unsafe_io}: {states}");
        assert_eq!(measured(case, "crash_unmountable") + measured(case, "crash_fsck_failed"), 0.0, "{fs} {unsafe_io}: {states}");
        let bad = measured(case, "crash_check_failed");
        match (fs, unsafe_io) {
            (_, "no") => assert_eq!(bad, 0.0, "{fs}: dpkg with its fsyncs lost something: {}", states["first_bad"]),
            ("btrfs", "yes") => {
                assert!(bad >= 1.0, "btrfs with --force-unsafe-io: no state lost an installed file: {states}");
                let detail = states["first_bad"]["detail"].as_str().unwrap();
                assert!(detail.contains("dpkg --verify of installed packages"), "{detail}");
            }
            _ => {}
        }
        flushes.insert((fs.to_string(), unsafe_io.to_string()), measured(case, "flushes"));
    }
    for fs in ["ext4", "btrfs"] {
        let (safe, quick) = (flushes[&(fs.into(), "no".into())], flushes[&(fs.into(), "yes".into())]);
        assert!(safe > quick, "{fs}: dpkg's fsyncs cost no flushes: {safe} with, {quick} without");
    }
    lab.assert_nothing_left("after dpkg's crash states");
}

#[test]
fn git_says_commits_durable_before_any_flush_and_with_core_fsync_all_still_leaves_its_init_unsynced() {
    if !recorder_or_skip("git_says_commits_durable_before_any_flush_and_with_core_fsync_all_still_leaves_its_init_unsynced") {
        return;
    }
    let lab = Lab::new();
    let json = lab.run_json(&["git", "--fs", "ext4", "--crash", "flush", "--set", "fsync=default,all", "--no-store"], 0);
    let (default, all) = (case_with(&json, &[("fsync", "default")]), case_with(&json, &[("fsync", "all")]));
    // git's default syncs nothing: its three commits returned before the
    // device had flushed anything of the work, and the table warns.
    assert_eq!(default["crash"]["states"]["marks_before_flush"], 3, "{}", default["crash"]["states"]);
    assert!(all["crash"]["states"]["marks_before_flush"].is_null(), "{}", all["crash"]["states"]);
    assert!(measured(all, "flushes") > measured(default, "flushes"), "core.fsync=all costs no flushes");
    bad_states(default);
    let (bad, outcomes) = bad_states(all);
    assert!(bad >= 1.0, "core.fsync=all: no state lost git init's files");
    assert!(outcomes.iter().any(|o| o.contains("git cannot read the repository")), "{outcomes:?}");
    lab.assert_nothing_left("after git's crash states");
}

#[test]
fn sqlite_in_delete_mode_loses_its_last_commit_at_full_and_keeps_it_at_extra_and_in_wal() {
    if !recorder_or_skip("sqlite_in_delete_mode_loses_its_last_commit_at_full_and_keeps_it_at_extra_and_in_wal") {
        return;
    }
    let lab = Lab::new();
    let args = ["sqlite", "--fs", "ext4", "--crash", "flush", "--set", "journal=delete,wal", "--set", "synchronous=full,extra"];
    let json = lab.run_json(&[&args[..], &["--no-store"]].concat(), 0);
    let (bad, outcomes) = bad_states(case_with(&json, &[("journal", "delete"), ("synchronous", "full")]));
    // The journal's unlink is the commit; FULL does not sync the folder
    // after it, so a state before the next flush rolls the row back.
    assert!(bad >= 1.0, "DELETE at FULL: no committed row lost");
    assert!(outcomes.iter().all(|o| o.contains("committed rows lost")), "{outcomes:?}");
    for pairs in [[("journal", "delete"), ("synchronous", "extra")], [("journal", "wal"), ("synchronous", "full")]] {
        let (bad, outcomes) = bad_states(case_with(&json, &pairs));
        assert_eq!(bad, 0.0, "{pairs:?}: {outcomes:?}");
    }
    lab.assert_nothing_left("after SQLite's crash states");
}

#[test]
fn a_replace_by_rename_that_does_not_sync_the_file_leaves_xfs_empty_beside_a_neighbours_fsync() {
    if !recorder_or_skip("a_replace_by_rename_that_does_not_sync_the_file_leaves_xfs_empty_beside_a_neighbours_fsync") {
        return;
    }
    let lab = Lab::new();
    let args = ["atomic-replace", "--fs", "xfs", "--crash", "flush", "--set", "form=full,no-file-sync", "--neighbour-fsync", "0s"];
    let json = lab.run_json(&[&args[..], &["--no-store"]].concat(), 0);
    let (bad, outcomes) = bad_states(case_with(&json, &[("form", "full")]));
    assert_eq!(bad, 0.0, "the full idiom: {outcomes:?}");
    let weak = case_with(&json, &[("form", "no-file-sync")]);
    assert!(measured(weak, "neighbour_fsyncs") >= 1.0);
    let (bad, outcomes) = bad_states(weak);
    assert!(bad >= 1.0, "without the file's sync, beside a neighbour's fsync, no state left data empty");
    assert!(outcomes.iter().any(|o| o.contains("data has 0 bytes")), "{outcomes:?}");
    lab.assert_nothing_left("after atomic-replace's crash states");
}
