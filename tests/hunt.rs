//! `fslab hunt`: real, small hunts on xfs under memory limits — their JSON
//! shape, their steps stored as the cases of a run, points that ran busy
//! measured again — one on ext4 whose work runs out of room, said as a
//! failure, and one interrupted after its first step, said as interrupted.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::{BusyLoops, Lab, have, root_or_skip};

/// Whether the memory hunts can run here.
fn memory_hunts(test: &str) -> bool {
    root_or_skip(test) && have("mkfs.xfs") && fslab::ledger::cgroup::memory_controller().is_ok()
}

/// A 32 MiB mmap-fill on xfs: no limit from 32M reclaims for more than a
/// few seconds.
const SMALL: [&str; 8] = ["mmap-fill", "--fs", "xfs", "--size", "512M", "--set", "size=32M", "--vary"];

/// `fslab hunt --json --scratch S ARGS...` in `lab`, to be run.
fn hunt_command(lab: &Lab, args: &[&str]) -> Command {
    let mut c = lab.command();
    c.args(["hunt", "--json", "--scratch"]).arg(lab.scratch()).args(args);
    c
}

/// `c` run to its end, insisting on exit `code`: its document and what it
/// said on stderr (the steps, with --json).
fn hunted(mut c: Command, code: i32) -> (serde_json::Value, String) {
    let out = c.output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr).into_owned());
    assert_eq!(out.status.code(), Some(code), "{stdout}\n{stderr}");
    (serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}")), stderr)
}

/// Each step measured once, or twice when `again` says why; a step whose
/// first repeat ran busy was measured again.
fn check_rounds(steps: &[serde_json::Value]) {
    for step in steps {
        let cases = step["cases"].as_array().unwrap();
        match step["again"].as_str() {
            None => assert_eq!(cases.len(), 1, "{step}"),
            Some(why) => {
                assert!(["mixed", "busy", "flip", "figure"].contains(&why), "{step}");
                assert_eq!(cases.len(), 2, "{step}");
            }
        }
        let first_busy = cases[0]["busy"].is_string();
        assert_eq!(step["ran_busy"].as_bool(), Some(first_busy), "{step}");
        if first_busy {
            assert!(matches!(step["again"].as_str(), Some("busy" | "mixed")), "ran busy, not measured again: {step}");
        }
        let busy_left = cases.iter().all(|c| c["busy"].is_string());
        assert_eq!(step["busy"].as_bool(), Some(first_busy && busy_left), "{step}");
    }
}

#[test]
fn a_small_memory_hunt_ends_and_its_steps_are_stored() {
    if !memory_hunts("hunt") {
        return;
    }
    let lab = Lab::new();
    let args = [&SMALL[..], &["memory=32M..128M", "--steps", "4"]].concat();
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
    }
    check_rounds(steps);
    // 32 MiB under 128M is one piece: the hunt holds the machine's sysctl
    // lock shared, so no other fslab run sets early writeback meanwhile.
    // Measured quiet, that is exact; when every repeat there ran on a busy
    // machine (other runs beside the suite), the figure is their mean and
    // fslab must say they ran busy (check_rounds holds the rest).
    let first = &steps[0];
    if first["busy"] == true {
        let notes: Vec<&str> = first["cases"].as_array().unwrap().iter().filter_map(|c| c["busy"].as_str()).collect();
        assert!(notes.len() == 2 && notes.iter().all(|n| !n.is_empty()), "busy without a busy note: {first}");
        assert!(first["value_of_figure"].as_f64().is_some_and(|v| v >= 1.0), "{first}");
    } else {
        assert_eq!(first["value_of_figure"].as_f64(), Some(1.0), "measured quiet: {first}");
    }
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
    assert!(hunt["failed"].is_null() && hunt["not_monotonic"].is_null(), "{hunt}");
    // Stored: a run whose cases are the steps' repeats and whose verdict's
    // places are the steps.
    let run = hunt["run"].as_str().unwrap();
    let shown = lab.expect(&["show", run, "--json"], 0);
    let stored: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let cases = stored["run"]["cases"].as_array().unwrap();
    // A point measures the claim alone: posix_fallocate, the seed's
    // workaround, is evidence, and no case reads its file back cold.
    assert_eq!(hunt["params"]["prealloc"], "none");
    let repeats: usize = steps.iter().map(|s| s["cases"].as_array().unwrap().len()).sum();
    assert_eq!(cases.len(), repeats);
    for case in cases {
        assert!(case["figures"].get("cold_read_mbps").is_none(), "a hunt's case read back cold: {case}");
    }
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
fn a_hunt_beside_busy_loops_measures_each_point_again_and_names_what_stayed_busy() {
    if !memory_hunts("hunt_busy") {
        return;
    }
    let lab = Lab::new();
    // Two points, 128M and then 96M (the last step of the budget).
    let args = [&SMALL[..], &["memory=96M..128M", "--steps", "2"]].concat();
    let (doc, stderr) = {
        let _loops = BusyLoops::start();
        hunted(hunt_command(&lab, &args), 0)
    };
    let steps = doc["hunt"]["steps"].as_array().unwrap();
    let values: Vec<u64> = steps.iter().map(|s| s["value"].as_u64().unwrap() >> 20).collect();
    assert_eq!(values, [128, 96]);
    check_rounds(steps);
    for step in steps {
        assert_eq!((step["ran_busy"].as_bool(), step["again"].as_str(), step["busy"].as_bool()), (Some(true), Some("busy"), Some(true)), "{step}");
    }
    // Said as it goes, and once more at the end.
    for n in [1, 2] {
        assert!(stderr.contains(&format!("step {n} again (it ran busy): ")), "{stderr}");
    }
    assert_eq!(stderr.matches("; ran busy: others used ").count(), 2, "{stderr}");
    assert_eq!(stderr.matches("; busy again: others used ").count(), 2, "{stderr}");
    let summary = doc["hunt"]["summary"].as_str().unwrap();
    assert!(summary.contains("2 at 128 MiB and 96 MiB which ran busy") && summary.contains("128 MiB and 96 MiB measured only while busy: less reliable"), "{summary}");
    lab.assert_nothing_left("after a busy hunt");
}

#[test]
fn a_hunt_whose_case_fails_says_failed_and_stops() {
    if !root_or_skip("hunt_failed") {
        return;
    }
    let lab = Lab::new();
    // Half of the 128 MiB ext4 is reserved for root (-m 50), which the room
    // check before the run does not model: mmap-fill's own check finds too
    // little free for a file of 52 MiB or so, after the small ones fit.
    let args = ["mmap-fill", "--fs", "ext4", "--size", "128M", "--mkfs-opt", "ext4=-m 50", "--vary", "size=16M..76M", "--repeat", "2", "--steps", "6"];
    let (doc, stderr) = hunted(hunt_command(&lab, &args), 4);
    let hunt = &doc["hunt"];
    assert_eq!(hunt["outcome"], "failed", "{hunt}");
    let failed = &hunt["failed"];
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("too little for a") && error.contains("filled through a mapping"), "{failed}");
    let steps = hunt["steps"].as_array().unwrap();
    let last = steps.last().unwrap();
    assert_eq!(last["value"], failed["value"], "{hunt}");
    assert!(steps.len() >= 2, "the small sizes fit: {hunt}");
    // The failed point stopped at its first failed case: no second
    // repeat, never measured again as repeats that disagree.
    let cases = last["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "{last}");
    assert_eq!((cases[0]["status"].as_str(), cases[0]["error"].as_str()), (Some("failed"), Some(error)));
    assert!(!last["mixed"].as_bool().unwrap() && last["again"].is_null() && last["shows"].is_null(), "{last}");
    for step in &steps[..steps.len() - 1] {
        assert_eq!(step["cases"][0]["status"], "ok", "{step}");
    }
    let summary = hunt["summary"].as_str().unwrap();
    let mib = failed["value"].as_u64().unwrap() >> 20;
    assert!(summary.contains(&format!("a case failed at size {mib} MiB, so the hunt stopped there")), "{summary}");
    assert!(!summary.contains("could not be judged") && !summary.contains("disagreed"), "{summary}");
    // The error is quoted once, on its step's line.
    assert_eq!(stderr.matches(error).count(), 1, "{stderr}");
    lab.assert_nothing_left("after a failed hunt");
}

#[test]
fn an_interrupted_hunt_says_interrupted() {
    if !memory_hunts("hunt_interrupted") {
        return;
    }
    let lab = Lab::new();
    let args = [&SMALL[..], &["memory=32M..128M", "--steps", "4"]].concat();
    let mut child = hunt_command(&lab, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // SIGINT once the first step is said (on stderr with --json).
    let mut said = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said += &line;
        said.push('\n');
        if line.starts_with("step 1: ") {
            Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
            break;
        }
    }
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    said += &rest.join("\n");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Everything released, then it dies of the signal.
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{said}");
    let hunt = &serde_json::from_str::<serde_json::Value>(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{said}"))["hunt"];
    assert_eq!(hunt["outcome"], "interrupted", "{hunt}");
    let summary = hunt["summary"].as_str().unwrap();
    assert!(summary.contains(": interrupted by SIGINT: "), "{summary}");
    for blame in ["step budget", "could not be judged", "failed"] {
        assert!(!summary.contains(blame), "{summary}");
    }
    // Only what was measured before the signal is a step.
    assert_eq!(hunt["steps"][0]["value"].as_u64(), Some(128 << 20), "{hunt}");
    assert!(said.contains("fslab: interrupted by SIGINT"), "{said}");
    let shown = lab.expect(&["show", hunt["run"].as_str().unwrap(), "--json"], 0);
    let stored: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(stored["run"]["complete"], false);
    lab.assert_nothing_left("after an interrupted hunt");
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
