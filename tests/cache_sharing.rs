//! The aged-image cache shared by runs that go at once, and its faults:
//! one key aged once while the others wait, every case's provenance true,
//! `cleanup --cache` never removing an entry a live run uses, a cache on
//! another file system than the scratch folder, an aging that cannot reach
//! its fill never cached, and a cache folder not ours refused before
//! anything is made. Real ext4 images aged by `churn`, real runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Lab, Watched, cases, root_or_skip};

/// create-file on a 256 MiB ext4 aged by `age`: the smallest real aging.
fn aged_run(lab: &Lab, cache: &Path, age: &str, extra: &[&str]) -> Command {
    let mut c = lab.command();
    c.args(["run", "create-file", "--json", "--no-store", "--fs", "ext4", "--size", "256M"])
        .args(["--set", "size=8M", "--set", "method=write-64k", "--age", age, "--age-cache"])
        .arg(cache)
        .arg("--scratch")
        .arg(lab.scratch())
        .args(extra);
    c
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}\n--- stderr\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    })
}

/// The names in the cache folder, sorted.
fn names(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn concurrent_runs_of_one_key_age_it_once_and_say_so_truly() {
    if !root_or_skip("cache_concurrent_key") {
        return;
    }
    let labs: Vec<Lab> = (0..3).map(|_| Lab::new()).collect();
    let cache = labs[0].dir.path().join("cache");
    let children: Vec<_> =
        labs.iter().map(|lab| aged_run(lab, &cache, "churn", &[]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()).collect();
    let starts: Vec<serde_json::Value> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
            cases(&json_of(&out))[0]["start"].clone()
        })
        .collect();
    let made: Vec<&serde_json::Value> = starts.iter().filter(|s| s["cache_hit"] == false).collect();
    assert_eq!(made.len(), 1, "not made exactly once: {starts:#?}");
    let entry_json = format!("{}.json", made[0]["cache_key"].as_str().unwrap());
    let entry: serde_json::Value = serde_json::from_slice(&std::fs::read(cache.join(&entry_json)).unwrap()).unwrap();
    for start in &starts {
        assert_eq!(start["image_hash"], entry["image_hash"], "a case says it started from the entry and did not: {start}");
        if start["cache_hit"] == true {
            assert_eq!(start["aging_seconds"].as_f64(), Some(0.0), "{start}");
        }
    }
    assert!(
        starts.iter().any(|s| s["waited_seconds"].as_f64().unwrap_or(0.0) > 0.0),
        "no run said it waited for the one making the image: {starts:#?}"
    );
    let images = names(&cache).iter().filter(|n| n.ends_with(".img")).count();
    assert_eq!(images, 1, "{:?}", names(&cache));
    for lab in &labs {
        lab.assert_nothing_left("after three runs of one key");
    }
}

#[test]
fn cleanup_of_the_cache_beside_a_live_run_keeps_what_it_uses() {
    if !root_or_skip("cache_cleanup_beside_run") {
        return;
    }
    let (lab, cleaner) = (Lab::new(), Lab::new());
    let cache = lab.dir.path().join("cache");
    // Its output read as it comes, so a full pipe never holds it up.
    let mut run = Watched::spawn(aged_run(&lab, &cache, "churn", &["--repeat", "6", "--progress", "json"]).stdout(Stdio::piped()));
    let (mut kept, mut tries, mut removed) = (0, 0, 0);
    while run.ended().is_none() && run.worked() < Duration::from_secs(300) {
        let out = cleaner.expect(&["cleanup", "--cache", "--age-cache", cache.to_str().unwrap()], 0);
        let said = String::from_utf8_lossy(&out.stdout);
        tries += 1;
        kept += usize::from(said.contains("kept 1 entry a live run uses"));
        // Once its last repeat has copied the image the run no longer
        // uses the entry, and a cleanup may take it before the run ends.
        removed += usize::from(said.contains("removed 1 entry"));
        std::thread::sleep(Duration::from_millis(200));
    }
    let (out, _) = run.finish();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the live run failed beside `cleanup --cache`: {stderr}");
    let json = json_of(&out);
    assert!(cases(&json).iter().all(|c| c["status"] == "ok"), "{json}");
    assert!(kept > 0, "no cleanup of {tries} found the entry in use");
    // Once the run is over (or done with it), the entry goes, once.
    let out = cleaner.expect(&["cleanup", "--cache", "--age-cache", cache.to_str().unwrap()], 0);
    removed += usize::from(String::from_utf8_lossy(&out.stdout).contains("removed 1 entry"));
    assert_eq!(removed, 1, "the entry was removed {removed} times; last: {out:?}");
    assert!(names(&cache).is_empty(), "{:?}", names(&cache));
    lab.assert_nothing_left("after the run");
}

/// A tmpfs mounted for a test's cache folder, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = common::unmount(&self.0);
    }
}

#[test]
fn a_cache_on_another_file_system_than_the_scratch_folder_works() {
    if !root_or_skip("cache_cross_device") {
        return;
    }
    let lab = Lab::new();
    let cache = lab.dir.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    common::run("mount", &["-t", "tmpfs", "-o", "size=1G,mode=0700", "tmpfs", cache.to_str().unwrap()]);
    let mounted = Tmpfs(cache.clone());
    let out = aged_run(&lab, &cache, "churn", &["--repeat", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json = json_of(&out);
    let two = cases(&json);
    assert!(two.iter().all(|c| c["status"] == "ok"), "{json}");
    assert_eq!(two[1]["start"]["cache_hit"], true);
    assert!(two[1]["target"]["image_copy"].as_str().unwrap().contains("copy of cache entry"), "{}", two[1]["target"]);
    assert_eq!(names(&cache).iter().filter(|n| n.ends_with(".json")).count(), 1);
    drop(mounted);
    lab.assert_nothing_left("after a cache on tmpfs");
}

#[test]
fn an_aging_that_cannot_reach_its_fill_fails_says_why_and_is_not_cached() {
    if !root_or_skip("cache_fill_not_reached") {
        return;
    }
    let lab = Lab::new();
    let cache = lab.dir.path().join("cache");
    // 1,024 inodes hold about 6 MiB of 4-8 KiB files: far from 60%.
    let mut c = aged_run(&lab, &cache, "churn:sizes=4K..8K,fill=60%,rounds=1", &["--repeat", "2", "--mkfs-opt", "ext4=-N 1024", "--progress", "json"]);
    let (out, worked) = Watched::spawn(c.stdout(Stdio::piped())).finish();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let json = json_of(&out);
    for case in cases(&json) {
        assert_eq!(case["status"], "failed", "{case}");
        let error = case["error"].as_str().unwrap();
        assert!(error.contains("ran out of inodes") && error.contains("of the 60% asked"), "{error}");
    }
    assert!(worked < Duration::from_secs(120), "{worked:?}");
    let left: Vec<String> = names(&cache).into_iter().filter(|n| !n.ends_with(".lock")).collect();
    assert!(left.is_empty(), "an aging that missed its fill was cached: {left:?}");
    lab.assert_nothing_left("after an aging short of its fill");
}

#[test]
fn a_cache_folder_not_ours_alone_stops_the_run_before_anything_is_made() {
    if !root_or_skip("cache_refused") {
        return;
    }
    let lab = Lab::new();
    let open = lab.dir.path().join("open-cache");
    std::fs::create_dir(&open).unwrap();
    std::os::unix::fs::chown(&open, Some(65534), Some(65534)).unwrap();
    let out = aged_run(&lab, &open, "churn", &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("age cache folder") && stderr.contains("uid 65534"), "{stderr}");
    assert!(common::loops_under(lab.dir.path()).is_empty());
    assert_eq!(std::fs::read_dir(lab.scratch()).unwrap().count(), 0, "something was made in the scratch folder");
    lab.assert_nothing_left("after a refused cache folder");
}
