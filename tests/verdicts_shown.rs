//! `fslab show` of a stored preset run: the seeds' verdicts on one screen
//! (at most 40 lines of at most 120 columns, places that got the same word
//! from the same test on one line), and with `--why` a row per place with
//! all its evidence; `--json` the same either way.

mod common;

use common::fslab_expect;

/// A stored run holding the verdicts of a whole preset run (all five
/// seeds, 46 places), and no cases: the verdicts are what is shown.
fn stored_preset_run(dir: &std::path::Path) -> (String, String) {
    let verdicts: serde_json::Value = serde_json::from_str(include_str!("fixtures/preset-verdicts.json")).unwrap();
    let id = "20261123T093906Z-17261-24015acc";
    let record: fslab::record::RunRecord = serde_json::from_value(serde_json::json!({
        "id": id, "tag": null, "started_at": "2026-11-23T09:39:06Z", "command": ["fslab", "run", "--preset", "seeds"],
        "complete": true,
        "environment": {"fslab_version": "0.1.0", "kernel": "6.18", "machine": "x86_64", "cpu": null, "cpus": 2,
                        "memory_bytes": null, "tools": {}, "disk": null},
        "sysctls": [], "cases": [], "verdicts": verdicts
    }))
    .unwrap();
    let store = dir.join("lab.db").to_string_lossy().into_owned();
    fslab::store::Store::open(&store).unwrap().put_run(&record).unwrap();
    (id.to_string(), store)
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(fslab_expect(args, 0).stdout).expect("UTF-8")
}

#[test]
fn show_gives_the_verdicts_on_one_screen_and_why_every_place() {
    let dir = tempfile::tempdir().unwrap();
    let (id, store) = stored_preset_run(dir.path());
    let short = stdout(&["show", &id, "--store", &store]);
    let block: Vec<&str> = short.lines().skip_while(|l| !l.starts_with("verdicts:")).collect();
    assert!(!block.is_empty() && block.len() <= 40, "{} lines:\n{short}", block.len());
    for line in short.lines() {
        assert!(line.chars().count() <= 120, "{} columns: {line}", line.chars().count());
    }
    assert!(block[0].ends_with("(fslab show RUN --why: every place)"), "{short}");
    // Seed 000's 14 places where it is gone share one line.
    assert!(short.contains("\n    gone      ext2, ext3, ext4 (all 4 places each), xfs, xfs@160M: mean extent 8–128 MiB"), "{short}");
    assert!(short.contains("\n    marginal  ext2-1k: read I/Os per MiB/best 1.8× (shows at ≥ 2×)"), "{short}");
    assert!(short.contains("read at 18.4 MB/s of 70 (3.8× slower)"), "{short}");
    assert!(!short.contains("31,559 extents where 1 would do"), "a place's evidence waits for --why: {short}");

    let why = stdout(&["show", &id, "--store", &store, "--why"]);
    let rows = why.lines().filter(|l| l.starts_with("    ") && !l.starts_with("     ")).count();
    assert!(rows >= 46, "a row per place: {why}");
    assert!(why.contains("\n    btrfs@vm.dirty_background_bytes=32M  shows     mean extent 4.15 KiB (shows at < 1 MiB)"), "{why}");
    assert!(why.replace("\n                                                   ", " ").contains("31,559 extents where 1 would do, 4 KiB each"), "{why}");
    assert!(why.contains("\n    the seed: ext3 in 2009: a 1 GiB file in 50,435 extents"), "{why}");

    let json = stdout(&["show", &id, "--store", &store, "--json"]);
    assert_eq!(stdout(&["show", &id, "--store", &store, "--json", "--why"]), json);
    let document: serde_json::Value = serde_json::from_str(&json).unwrap();
    let fixture: serde_json::Value = serde_json::from_str(include_str!("fixtures/preset-verdicts.json")).unwrap();
    assert_eq!(document["run"]["verdicts"], fixture);
}
