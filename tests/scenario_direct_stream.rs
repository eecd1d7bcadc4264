//! `fslab run direct-stream` end to end (seed 004): the O_DIRECT loop on
//! real loop file systems, checked on exact figures — bytes written, the
//! device's write I/Os, file size and extents — never on its timings.

mod common;

use common::{Lab, cases, figure, root_or_skip};

const MIB: f64 = 1048576.0;

fn run_json(lab: &Lab, args: &[&str]) -> serde_json::Value {
    lab.run_json(&[&["direct-stream"], args].concat(), 0)
}

#[test]
fn a_byte_limit_is_written_exactly_one_device_write_per_block() {
    if !root_or_skip("direct_stream_byte_limit") {
        return;
    }
    let lab = Lab::new();
    let json = run_json(&lab, &["--fs", "ext3,ext4,xfs", "--set", "bytes=64M", "--set", "seconds=60"]);
    let cases = cases(&json);
    assert_eq!(cases.len(), 3);
    for case in cases {
        let fs = case["fs"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{case}");
        assert_eq!(case["params"]["bs"], 512 * 1024);
        assert_eq!(figure(case, "bytes_written"), Some(64.0 * MIB), "{fs}");
        assert_eq!(figure(case, "files"), Some(1.0), "{fs}");
        assert_eq!(figure(case, "bytes"), Some(64.0 * MIB), "{fs}: the file is the bytes written");
        // The byte limit decided the amount and O_DIRECT placed the blocks:
        // what the file is and where it went are exact.
        for name in ["bytes", "perfection", "extents"] {
            assert_eq!(case["figures"][name]["kind"], "exact", "{fs}: {name}");
        }
        // O_DIRECT: every 512 KiB write goes to the device as it is made,
        // and each waits for the last, so none merge away.
        let ios = figure(case, "write_ios").unwrap();
        assert!(ios >= 128.0, "{fs}: {ios} write I/Os for 128 blocks");
        assert!(figure(case, "written_bytes").unwrap() >= 64.0 * MIB, "{fs}");
        // Well under a second of streaming alone: too short to judge a
        // drop, and it says so rather than claiming none. On a loaded
        // machine the same bytes can take the rule's seven whole
        // intervals, and then it is judged, from a timeline that long.
        let points = case["timeline"].as_array().map_or(0, Vec::len);
        match figure(case, "drop_detected") {
            None => {
                let why = case["figures"]["drop_detected"]["missing"].as_str().unwrap();
                assert!(why.contains("timeline intervals"), "{fs}: {why}");
            }
            Some(judged) => assert!(points >= 8 && (judged == 0.0 || judged == 1.0), "{fs}: {judged} from {points} points"),
        }
    }
    lab.assert_nothing_left("after direct-stream with a byte limit");
}

#[test]
fn overwrite_keeps_the_files_size_and_extents() {
    if !root_or_skip("direct_stream_overwrite") {
        return;
    }
    let lab = Lab::new();
    let json =
        run_json(&lab, &["--fs", "ext4,xfs", "--set", "file=overwrite", "--set", "bytes=64M", "--set", "seconds=60"]);
    let cases = cases(&json);
    assert_eq!(cases.len(), 2);
    for case in cases {
        let fs = case["fs"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{case}");
        assert_eq!(case["params"]["file"], "overwrite");
        assert_eq!(figure(case, "bytes_written"), Some(64.0 * MIB), "{fs}");
        assert_eq!(figure(case, "bytes"), Some(64.0 * MIB), "{fs}: size unchanged");
        let before = figure(case, "prepared_extents").unwrap();
        assert!(before >= 1.0, "{fs}");
        assert_eq!(figure(case, "extents"), Some(before), "{fs}: writing in place adds no extent");
        assert!(figure(case, "write_ios").unwrap() >= 128.0, "{fs}");
    }
    lab.assert_nothing_left("after direct-stream overwrite");
}

#[test]
fn the_time_limit_stops_the_stream_in_whole_blocks() {
    if !root_or_skip("direct_stream_time_limit") {
        return;
    }
    let lab = Lab::new();
    let json = run_json(&lab, &["--fs", "ext4", "--set", "seconds=1", "--set", "bytes=8G", "--set", "bs=1M"]);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    let written = figure(case, "bytes_written").unwrap();
    assert!(written > 0.0 && written < 8192.0 * MIB, "{written}");
    assert_eq!(written % MIB, 0.0, "whole 1 MiB blocks");
    assert_eq!(figure(case, "bytes"), Some(written));
    lab.assert_nothing_left("after a time-limited direct-stream");
}

#[test]
fn a_block_size_o_direct_cannot_use_is_refused_before_anything_is_made() {
    let lab = Lab::new();
    let refused = |sets: &[&str], says: &[&str]| {
        let mut c = lab.command();
        c.args(["run", "--scratch"]).arg(lab.scratch()).args(["direct-stream", "--fs", "ext4"]);
        for s in sets {
            c.args(["--set", s]);
        }
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sets:?}: {stderr}");
        for word in says {
            assert!(stderr.contains(word), "{sets:?}: {stderr}");
        }
    };
    refused(&["bs=1000"], &["direct-stream", "bs=1000", "4096", "bs=4 KiB"]);
    refused(&["bs=6K"], &["bs=6144", "4 KiB or 8 KiB"]);
    refused(&["bs=512K,6K"], &["bs=6144"]);
    refused(&["bs=1M", "bytes=512K"], &["bytes=512 KiB", "bytes=1 MiB or more"]);
    refused(&["file=append"], &["new, overwrite"]);
    lab.assert_nothing_left("after refused direct-stream runs");
}

#[test]
fn the_preset_streams_long_enough_to_judge_its_seed_on_every_fs() {
    if !root_or_skip("direct_stream_preset_judged") {
        return;
    }
    let lab = Lab::new();
    // The seed's ext3 and the fastest file system here: a fixed 8 GiB
    // ended on xfs in 4.5 s, too short for the detector's 7 intervals.
    let json = lab.run_json(&["--preset", "seeds", "direct-stream", "--fs", "ext3,xfs", "--no-store"], 0);
    for case in cases(&json) {
        assert_eq!(case["status"], "ok", "{case}");
        let intervals = case["timeline"].as_array().map_or(0, Vec::len);
        assert!(intervals >= 8, "{}: {intervals} timeline intervals", case["fs"]);
        assert_eq!(case["params"]["seconds"].as_u64(), Some(20), "{}", case["params"]);
    }
    let verdict = &json["run"]["verdicts"][0];
    let places = verdict["places"].as_array().unwrap();
    assert_eq!(places.len(), 2, "{verdict}");
    for place in places {
        assert_ne!(place["judged"], "unknown", "{place}");
        let rule = &place["rule"];
        assert!(rule["shown"].as_str().unwrap().contains("shows at"), "{place}");
        assert!(rule["threshold"].is_number() && rule["value"].is_number(), "{place}");
    }
    lab.assert_nothing_left("after the direct-stream preset");
}
