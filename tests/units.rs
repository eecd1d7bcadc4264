//! One convention of units (docs/guide.md, "Units"): every figure of every
//! scenario carries a unit of `record::UNITS`, every rate is MiB/s (bytes
//! / seconds / 2^20) in value and label alike, and a run stored before the
//! convention reads back in it.

mod common;

use common::{Lab, root_or_skip};

const MIB: f64 = 1_048_576.0;

#[test]
fn every_scenarios_figures_carry_a_unit_of_the_convention_and_a_rate_is_mib_per_second() {
    if !root_or_skip("units") {
        return;
    }
    let lab = Lab::new();
    let json = lab.json(
        "run",
        &[
            "mmap-fill",
            "tree-copy",
            "replace-files",
            "create-file",
            "direct-stream",
            "--fs",
            "ext4",
            "--no-store",
            "--set",
            "size=16M",
            "--set",
            "seconds=1",
            "--set",
            "bytes=64M",
        ],
        0,
    );
    let cases = json["run"]["cases"].as_array().unwrap();
    let mut scenarios: Vec<&str> = cases.iter().map(|c| c["scenario"].as_str().unwrap()).collect();
    scenarios.dedup();
    assert_eq!(scenarios, ["mmap-fill", "tree-copy", "replace-files", "create-file", "direct-stream"]);
    for case in cases {
        for (name, figure) in case["figures"].as_object().unwrap() {
            let unit = figure["unit"].as_str().unwrap();
            assert!(fslab::record::UNITS.contains(&unit), "{} {name}: unit {unit:?}", case["scenario"]);
            if name.ends_with("_mbps") {
                assert_eq!(unit, "MiB/s", "{name}");
            }
        }
    }
    // create-file's rate is its size over its time in MiB: 16 MiB / create_s.
    let create = cases.iter().find(|c| c["scenario"] == "create-file").unwrap();
    let figure = |name: &str| create["figures"][name]["value"].as_f64().unwrap_or_else(|| panic!("{name}: {create}"));
    // Under 1 ms it is no rate, and says so.
    let expected = 16.0 * MIB / figure("create_s") / MIB;
    if figure("create_s") < fslab::units::RATE_FLOOR_S {
        let why = create["figures"]["create_mbps"]["missing"].as_str().unwrap_or_default();
        assert!(why.contains("under the 1 ms"), "{create}");
    } else {
        let rate = figure("create_mbps");
        assert!((rate - expected).abs() <= expected * 1e-9, "create_mbps {rate} is not 16 MiB / create_s = {expected}");
    }
    // And the cold read-back's: bytes read over its seconds, in MiB.
    let cold = figure("cold_read_bytes") / figure("cold_read_s") / MIB;
    if figure("cold_read_s") >= fslab::units::RATE_FLOOR_S {
        assert!((figure("cold_read_mbps") - cold).abs() <= cold * 1e-9, "{} vs {cold}", figure("cold_read_mbps"));
    }
    lab.assert_nothing_left("after the units run");
}

#[test]
fn a_run_recorded_in_decimal_megabytes_reads_back_in_mib_per_second() {
    let dir = common::temp::dir("units");
    let mut case = common::crafted_case("create-file", "ext4", 1, None);
    case["figures"]["create_mbps"] = serde_json::json!({"value": 100.0, "unit": "MB/s", "better": "higher", "kind": "timing"});
    case["figures"]["total_mbps"] = serde_json::json!({"value": 584.9, "unit": "MB/s", "better": "higher", "kind": "timing"});
    let old = common::crafted_run("20261121T000000Z-1-00000001", true, vec![case]);
    // As an old run's --json output, and as an old store holds it.
    let file = dir.path().join("old.json");
    std::fs::write(&file, old.to_string()).unwrap();
    let store = dir.path().join("old.db");
    let record: fslab::record::RunRecord = serde_json::from_value(old["run"].clone()).unwrap();
    fslab::store::Store::open(store.to_str().unwrap()).unwrap().put_run(&record).unwrap();
    let (file, store) = (file.to_str().unwrap(), store.to_str().unwrap());
    for args in [vec!["export", file, "--json"], vec!["export", &record.id, "--json", "--store", store]] {
        let json = common::fslab_json(&args);
        let figures = &json["run"]["cases"][0]["figures"];
        assert_eq!(figures["create_mbps"]["unit"], "MiB/s", "{args:?}: {figures}");
        let value = figures["create_mbps"]["value"].as_f64().unwrap();
        assert!((value - 1e8 / MIB).abs() < 1e-9, "{args:?}: 100 MB/s is 95.37 MiB/s, not {value}");
        // Always MiB/s under the wrong label: relabelled, not scaled.
        let total = (figures["total_mbps"]["unit"].as_str(), figures["total_mbps"]["value"].as_f64());
        assert_eq!(total, (Some("MiB/s"), Some(584.9)), "{args:?}");
    }
}
