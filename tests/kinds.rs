//! A figure's kind says what is true of it: exact only where the workload
//! alone decides it. Journal commits, flushes and xfs log forces follow
//! jbd2's timer, fsync batching and when writeback ran (measured: 16 to
//! 201 commits for one 200-file fsync-each under a second core's load),
//! so they are timings, and `compare` tests them over repeats instead of
//! calling one value against another a change. Layout figures are exact
//! where the work allocates every block itself (O_DIRECT, fallocate) and
//! timings where writeback allocates them.

mod common;

use common::{Lab, cases, compare_row, root_or_skip};
use serde_json::Value;

/// The kind `case` declares for figure `name`.
fn kind<'a>(case: &'a Value, name: &str) -> &'a str {
    case["figures"][name]["kind"].as_str().unwrap_or_else(|| panic!("no {name} in {case}"))
}

fn param<'a>(case: &'a Value, name: &str) -> &'a str {
    case["params"][name].as_str().unwrap_or_default()
}

#[test]
fn counts_that_timing_moves_are_timings_and_what_the_work_decides_is_exact() {
    if !root_or_skip("kinds_declared") {
        return;
    }
    let lab = Lab::new();
    let run = lab.run_json(&["replace-files", "--fs", "ext4,xfs", "--set", "strategy=fsync-each", "--no-store"], 0);
    for case in cases(&run) {
        let fs = case["fs"].as_str().unwrap();
        for name in ["journal_commits", "flushes", "trace_lost_events"] {
            assert_eq!(kind(case, name), "timing", "{fs} {name}");
        }
        if fs == "xfs" {
            assert_eq!(kind(case, "log_forces"), "timing", "{case}");
        }
        // Buffered writes: writeback places the blocks (xfs left 200 or
        // 201 extents for 200 files under load).
        assert_eq!(kind(case, "extents"), "timing", "{fs}");
        for name in ["files_replaced", "files", "bytes", "perfection"] {
            assert_eq!(kind(case, name), "exact", "{fs} {name}");
        }
    }
    let run = lab.run_json(
        &["create-file", "--fs", "ext4,btrfs", "--set", "size=16M", "--set", "method=mkfile,odirect-64k,write-64k", "--no-store"],
        0,
    );
    for case in cases(&run) {
        let (method, fs) = (param(case, "method"), case["fs"].as_str().unwrap());
        // O_DIRECT places its own blocks, but btrfs moves even those.
        let want = if method == "write-64k" || fs == "btrfs" { "timing" } else { "exact" };
        for name in ["extents", "records", "layout_score", "fragmented_files"] {
            assert_eq!(kind(case, name), want, "{fs} {method} {name}");
        }
    }
    lab.assert_nothing_left("replace-files and create-file runs");
}

#[test]
fn compare_tests_a_timing_count_instead_of_calling_one_value_a_change() {
    if !root_or_skip("kinds_compared") {
        return;
    }
    let lab = Lab::new();
    // One repeat a side: 21 commits against 2 is one value each, which a
    // timing cannot be judged on.
    for (tag, opt) in [("ordered", "ext4=data=ordered"), ("journal", "ext4=data=journal")] {
        let args = ["replace-files", "--fs", "ext4", "--set", "strategy=fsync-each", "--mount-opt", opt, "--tag", tag];
        lab.run_json(&args, 0);
    }
    lab.assert_nothing_left("two replace-files runs");
    let c = lab.compare_json("ordered", "journal");
    let row = |name: &str| compare_row(&c, name);
    for name in ["journal_commits", "flushes"] {
        let r = row(name);
        assert_eq!(r["kind"], "timing", "{r}");
        assert_eq!(r["outcome"], "too_few_repeats", "{r}");
    }
    assert!(row("journal_commits")["base"][0].as_f64().unwrap() > row("journal_commits")["new"][0].as_f64().unwrap());
}
