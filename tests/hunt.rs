//! `fslab hunt`: a real, small hunt on xfs under memory limits, its JSON
//! shape, and its steps stored as the cases of a run.

mod common;

use common::{Lab, have, root_or_skip};

#[test]
fn a_small_memory_hunt_ends_and_its_steps_are_stored() {
    if !root_or_skip("hunt") || !have("mkfs.xfs") || fslab::target::cgroup::memory_controller().is_err() {
        return;
    }
    let lab = Lab::new();
    // A 32 MiB mmap-fill: no limit here reclaims for more than a few
    // seconds, and four points at most.
    let args = ["mmap-fill", "--fs", "xfs", "--size", "512M", "--set", "size=32M", "--vary", "memory=32M..128M", "--steps", "4"];
    let doc = lab.json("hunt", &args, 0);
    assert_eq!(doc["schema"], "fslab/1");
    let hunt = &doc["hunt"];
    assert_eq!((hunt["scenario"].as_str(), hunt["seed"].as_str(), hunt["fs"].as_str()), (Some("mmap-fill"), Some("000"), Some("xfs")));
    assert_eq!(hunt["vary"]["key"], "memory");
    assert_eq!((hunt["vary"]["lo"].as_u64(), hunt["vary"]["hi"].as_u64()), (Some(32 << 20), Some(128 << 20)));
    assert_eq!(hunt["params"]["size"].as_u64(), Some(32 << 20));
    let steps = hunt["steps"].as_array().unwrap();
    assert!((2..=4).contains(&steps.len()), "{} steps", steps.len());
    // Down from the cheap high end.
    assert_eq!(steps[0]["value"].as_u64(), Some(128 << 20));
    assert_eq!(steps[0]["place"], "xfs@128M");
    for step in steps {
        assert_eq!(step["figure"], "extents");
        assert!(step["value_of_figure"].as_f64().is_some() && step["shows"].is_boolean(), "{step}");
        assert_eq!(step["cases"].as_array().unwrap().len(), 1);
    }
    // 32 MiB under 128M is one piece on a quiet machine; not asserted, as
    // the lab's own state folder keeps this run out of the machine-wide
    // sysctl lock, and another fslab run may set early writeback meanwhile.
    assert!(steps[0]["value_of_figure"].as_f64().unwrap() >= 1.0);
    match hunt["outcome"].as_str().unwrap() {
        "bracket" => {
            let b = &hunt["bracket"];
            let (shows, gone) = (b["shows_at"].as_u64().unwrap(), b["gone_at"].as_u64().unwrap());
            assert!(shows < gone, "{b}");
            assert!(hunt["summary"].as_str().unwrap().contains(&format!("shows at memory ≤ {} MiB", shows >> 20)));
        }
        "agree" => {
            assert!(hunt["bracket"].is_null());
            assert!(hunt["summary"].as_str().unwrap().contains("at both ends"), "{}", hunt["summary"]);
        }
        other => panic!("outcome {other}: {hunt}"),
    }
    // Stored: a run whose cases are the steps and whose verdict's places
    // are the steps.
    let run = hunt["run"].as_str().unwrap();
    let shown = lab.expect(&["show", run, "--json"], 0);
    let stored: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let cases = stored["run"]["cases"].as_array().unwrap();
    // Each point measures the seed's comparison: prealloc none and posix_fallocate.
    assert_eq!(hunt["params"]["prealloc"], serde_json::json!(["none", "posix_fallocate"]));
    assert_eq!(cases.len(), 2 * steps.len());
    assert!(stored["run"]["complete"].as_bool().unwrap());
    let places = stored["run"]["verdicts"][0]["places"].as_array().unwrap();
    let values: Vec<&str> = places.iter().map(|p| p["conditions"]["memory"].as_str().unwrap()).collect();
    let shown_values: Vec<&str> = steps.iter().map(|s| s["shown"].as_str().unwrap()).collect();
    assert_eq!(values, shown_values);
    // The report draws the figure against the memory limit.
    let page = lab.dir.path().join("hunt.html");
    lab.expect(&["report", run, "-o", page.to_str().unwrap()], 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"<svg class="chart hunt""#) && html.contains(r#"data-key="memory""#), "no hunt chart");
    assert_eq!(html.matches(r#"<circle class="point"#).count(), steps.len());
    lab.assert_nothing_left("after a hunt");
}

#[test]
fn a_hunt_refuses_what_it_cannot_vary_before_making_anything() {
    let lab = Lab::new();
    let refused = |args: &[&str], says: &str| {
        let out = lab.expect(args, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(&["hunt", "mmap-fill", "--fs", "xfs", "--vary", "order=1..2"], "choice");
    refused(&["hunt", "mmap-fill", "--fs", "xfs", "--vary", "memory=1G..128M"], "below");
    refused(&["hunt", "mmap-fill", "--fs", "xfs,ext4", "--vary", "memory=128M..1G"], "one target");
    refused(&["hunt", "mmap-fill", "--fs", "xfs", "--memory", "1G", "--vary", "memory=128M..1G"], "leave --memory out");
    refused(&["hunt", "mmap-fill", "--fs", "xfs", "--set", "size=1M,2M", "--vary", "memory=128M..1G"], "one value");
}
