//! Aged and full targets end to end (`--age`, `--fill`, `--age-cache`):
//! real 1 GiB xfs and ext4 images aged by `churn`, kept in the cache,
//! copied for every case; the starting state measured and the same from
//! case to case; the work's extents checked against filefrag on the aged
//! file system; a kill during aging leaves nothing but complete entries.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{Lab, Watched, cases, figure, root_or_skip};

/// The cache folder of a lab's runs: beside its scratch folder, so the
/// scratch folder's "nothing left" check still holds.
fn cache_of(lab: &Lab) -> PathBuf {
    lab.dir.path().join("cache")
}

fn start_of(case: &serde_json::Value) -> &serde_json::Value {
    let start = &case["start"];
    assert!(start.is_object(), "no start record: {case}");
    start
}

/// Every `KEY.img` in the cache has its `KEY.json`, and nothing else is
/// there but the keys' lock files: the cache holds only complete entries.
fn assert_only_complete_entries(cache: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(cache) else { return 0 };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    let images: Vec<&String> = names.iter().filter(|n| n.ends_with(".img")).collect();
    for image in &images {
        let meta = image.trim_end_matches(".img").to_string() + ".json";
        assert!(names.contains(&meta), "{image} without {meta}: {names:?}");
    }
    assert_eq!(names.len(), images.len() * 2, "only entries in the cache: {names:?}");
    images.len()
}

/// Free figures of a fresh file system of `fs`, by `fslab free --json`.
fn fresh_free(fs: &str) -> serde_json::Value {
    let scratch = common::ScratchFs::new("aged-fresh", fs, 1024, &[]).expect("a fresh fs");
    let mount = scratch.path("");
    common::fslab_json(&["free", "--json", mount.to_str().unwrap()])["free"].clone()
}

#[test]
fn churn_reaches_its_fill_fragments_free_space_and_every_case_starts_the_same() {
    if !root_or_skip("churn_reaches_its_fill") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let args = [
        "create-file",
        "--fs",
        "xfs,ext4",
        "--size",
        "1G",
        "--set",
        "size=64M",
        "--set",
        "method=write-64k",
        "--repeat",
        "2",
        "--age",
        "churn",
        "--age-cache",
        cache.to_str().unwrap(),
    ];
    let json = lab.run_json(&args, 0);
    let all = cases(&json);
    assert_eq!(all.len(), 4);
    for fs in ["xfs", "ext4"] {
        let two: Vec<&serde_json::Value> = all.iter().filter(|c| c["fs"] == fs).collect();
        let (a, b) = (start_of(two[0]), start_of(two[1]));
        for case in &two {
            assert_eq!(case["status"], "ok", "{case}");
            let fill = figure(case, "start_fill").unwrap();
            assert!((0.78..=0.82).contains(&fill), "{fs}: churn to 80% left the fs {fill} full");
        }
        // The first case of the run made the image; the second copied it.
        assert_eq!((a["cache_hit"].as_bool(), b["cache_hit"].as_bool()), (Some(false), Some(true)), "{fs}");
        assert!(a["aging_seconds"].as_f64().unwrap() > 0.0, "{fs}");
        assert_eq!(b["aging_seconds"].as_f64(), Some(0.0), "{fs}");
        assert_eq!(a["cache_key"], b["cache_key"], "{fs}");
        assert_eq!(a["image_hash"], b["image_hash"], "{fs}");
        assert!(!a["free_histogram"].as_array().unwrap().is_empty(), "{fs}");
        assert_eq!(a["free_histogram"], b["free_histogram"], "{fs}: two copies start with one histogram");
        for name in ["start_free_extents", "start_free_largest_bytes", "start_fragmented_share", "start_files"] {
            assert_eq!(figure(two[0], name), figure(two[1], name), "{fs}: {name}");
        }
        // Aging moved the free space the stated way against a fresh fs.
        let fresh = fresh_free(fs);
        let aged_extents = figure(two[0], "start_free_extents").unwrap();
        let aged_largest = figure(two[0], "start_free_largest_bytes").unwrap();
        let aged_share = figure(two[0], "start_fragmented_share").unwrap();
        assert!(aged_extents > fresh["free_extents"].as_f64().unwrap(), "{fs}: {aged_extents} free extents vs fresh {fresh}");
        assert!(aged_largest < fresh["largest_bytes"].as_f64().unwrap(), "{fs}: largest {aged_largest} vs fresh {fresh}");
        assert!(aged_share > fresh["fragmented_share"].as_f64().unwrap(), "{fs}: share {aged_share} vs fresh {fresh}");
        // The work's own layout counts only its file, not aging's.
        assert_eq!(figure(two[0], "files"), Some(1.0), "{fs}");
    }
    assert_eq!(assert_only_complete_entries(&cache), 2);

    // A later run with the same key pays nothing and names the key.
    let again = lab.run_json(&args, 0);
    for case in cases(&again) {
        let start = start_of(case);
        assert_eq!(start["cache_hit"], true, "{case}");
        assert_eq!(start["aging_seconds"].as_f64(), Some(0.0));
        let key = start["cache_key"].as_str().unwrap();
        assert!(all.iter().any(|c| c["start"]["cache_key"] == key), "{key} is a key of the first run");
    }
    // The store keeps where each case started; `show` prints it once.
    let shown = lab.expect(&["show", "last"], 0);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("starting state (aged churn:delete=50%,fill=80%"), "{text}");
    assert_eq!(text.matches("from the cache (aging 0 s)").count(), 2, "{text}");
    let stored: serde_json::Value = serde_json::from_slice(&lab.expect(&["show", "last", "--json"], 0).stdout).unwrap();
    assert_eq!(cases(&stored)[0]["start"], cases(&again)[0]["start"], "the start record survives the store");
    // A scratch folder that cannot share blocks (this one, unless it is
    // btrfs) gets the run's pool: every case's image is a reflink there.
    let copy = cases(&stored)[0]["target"]["image_copy"].as_str().unwrap().to_string();
    if on_btrfs(&lab.scratch()) {
        assert!(copy.starts_with("reflink of cache entry"), "{copy}");
    } else {
        for case in cases(&again) {
            assert!(case["target"]["image_copy"].as_str().unwrap().starts_with("reflink of the run's pooled copy of cache entry"), "{case}");
        }
    }
    lab.assert_nothing_left("after aged runs");
}

/// Whether `dir` is on btrfs (`stat -f`).
fn on_btrfs(dir: &Path) -> bool {
    common::run("stat", &["-f", "-c", "%T", dir.to_str().unwrap()]).trim() == "btrfs"
}

/// A run killed while its cases use the pool (mounted, a case's image in
/// it) leaves the pool to the next cleanup, which releases it with
/// everything else, the cases' images in it first.
#[test]
fn sigkill_while_cases_use_the_pool_then_cleanup_releases_the_pool() {
    if !root_or_skip("sigkill_pooled_case") || !common::have("mkfs.btrfs") || on_btrfs(&Lab::new().scratch()) {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let mut c = lab.command();
    c.args(["run", "create-file", "--no-store", "--progress", "json", "--fs", "xfs", "--size", "2G", "--set", "size=256M"])
        .args(["--repeat", "3", "--age", "churn", "--age-cache"])
        .arg(&cache)
        .arg("--scratch")
        .arg(lab.scratch());
    let mut child = Watched::spawn(c.stdout(std::process::Stdio::null()));
    // A case's mount inside the pool's: the pool, a copy and a case image.
    let in_pool = || common::mounts_under(&lab.scratch()).iter().filter(|m| m.to_string_lossy().contains("-pool/mnt")).count() >= 1
        && common::loops_under(&lab.scratch()).len() >= 2;
    child.until(Duration::from_secs(120), "no case started in the pool", in_pool);
    child.kill();
    assert!(!common::mounts_under(&lab.scratch()).is_empty(), "the kill left the pool mounted for cleanup to find");
    lab.expect(&["cleanup"], 0);
    lab.assert_nothing_left("killed while a case used the pool, then cleanup");
    assert_only_complete_entries(&cache);
}

#[test]
fn on_an_aged_and_filled_fs_the_work_s_extents_equal_filefrag_s() {
    if !root_or_skip("aged_extents_vs_filefrag") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    // The three ways of seed 003: xfs_mkfile's O_DIRECT 256 KiB writes,
    // dd's 64 KiB writes, fallocate.
    // 24 MiB each: the 1 GiB image filled to 85% has about 150 MiB free.
    let script = "dd if=/dev/zero of=mkfile bs=256K count=96 oflag=direct 2>/dev/null \
                  && dd if=/dev/zero of=w64k bs=64K count=384 2>/dev/null \
                  && fallocate -l 24M falloc && sync && filefrag mkfile w64k falloc";
    let json = lab.exec_json(
        &[
            "--fs", "xfs,ext4", "--size", "1G", "--age", "churn", "--fill", "85%", "--age-cache",
            cache.to_str().unwrap(), "--", "sh", "-c", script,
        ],
        0,
    );
    for case in cases(&json) {
        let fs = case["fs"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{case}");
        let fill = figure(case, "start_fill").unwrap();
        assert!((0.83..=0.87).contains(&fill), "{fs}: filled to {fill}");
        let stdout = case["command"]["stdout"].as_str().unwrap();
        let maps = case["maps"].as_array().unwrap();
        let mut total = 0;
        for name in ["mkfile", "w64k", "falloc"] {
            let want = common::filefrag_extents_in(stdout, name);
            let map = maps.iter().find(|m| m["path"].as_str().unwrap().ends_with(name)).unwrap_or_else(|| panic!("{fs}: no map of {name}"));
            assert_eq!(map["extents"].as_u64(), Some(want), "{fs}: {name} extents vs filefrag");
            total += want;
        }
        assert_eq!(figure(case, "extents"), Some(total as f64), "{fs}: the sum over the work's files");
    }
    lab.assert_nothing_left("after the aged exec");
}

#[test]
fn a_work_that_cannot_fit_the_filled_fs_is_refused_before_anything_is_made() {
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let out = lab.expect(
        &[
            "run", "create-file", "--fs", "ext4", "--scratch", lab.scratch().to_str().unwrap(), "--size", "1G",
            "--fill", "90%", "--set", "size=512M", "--age-cache", cache.to_str().unwrap(),
        ],
        2,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--size") && err.contains("90%"), "{err}");
    assert!(!cache.exists(), "the cache was made for a refused run");
    let out = lab.expect(&["run", "create-file", "--dir", "/var/tmp", "--age", "churn"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dir"), "{out:?}");
    let out = lab.expect(&["run", "create-file", "--fs", "ext4", "--age", "churn:rounds=x"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("rounds"), "{out:?}");
    let out = lab.expect(&["run", "create-file", "--fs", "ext4", "--fill", "100%"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("99%"), "{out:?}");
}

#[test]
fn sigkill_during_aging_then_cleanup_leaves_only_complete_cache_entries() {
    if !root_or_skip("sigkill_during_aging") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    for wait_ms in [1500, 4000] {
        let mut c = lab.command();
        c.args(["run", "create-file", "--no-store", "--progress", "json", "--fs", "xfs", "--size", "2G", "--set", "size=16M"])
            .args(["--age", &format!("churn:seed={wait_ms}"), "--age-cache"])
            .arg(&cache)
            .arg("--scratch")
            .arg(lab.scratch());
        let mut child = Watched::spawn(c.stdout(std::process::Stdio::null()));
        // Wait for the aging target's mount, then let aging run a while.
        child.until(Duration::from_secs(30), "the aging target never mounted", || !common::mounts_under(&lab.scratch()).is_empty());
        std::thread::sleep(Duration::from_millis(wait_ms));
        child.kill();
        lab.expect(&["cleanup"], 0);
        lab.assert_nothing_left(&format!("killed {wait_ms} ms into aging, then cleanup"));
        assert_only_complete_entries(&cache);
    }
    // `cleanup --cache` empties the cache.
    let out = lab.expect(&["cleanup", "--cache", "--age-cache", cache.to_str().unwrap()], 0);
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0, "{out:?}");
}

#[test]
fn a_fill_list_is_a_matrix_axis_with_a_place_per_level() {
    if !root_or_skip("fill_list_axis") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let scratch = lab.scratch();
    let args = [
        "run", "create-file", "--json", "--fs", "ext4", "--size", "1G", "--set", "size=16M", "--fill", "30%,70%", "--age-cache",
        cache.to_str().unwrap(), "--scratch", scratch.to_str().unwrap(),
    ];
    let out = lab.expect(&args, 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Both images are made before the first case, one a core.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("aging 2 images for the cache before the first case, 2 at a time"), "{said}");
    assert!(said.contains("aged 2 images in"), "{said}");
    let all = cases(&json);
    for case in all {
        assert_eq!(case["start"]["cache_hit"], false, "made by this run: {}", case["start"]);
        assert!(case["start"]["aging_seconds"].as_f64().unwrap() > 0.0, "{}", case["start"]);
    }
    let places: Vec<String> = all.iter().map(|c| format!("{}@fill={}", c["fs"].as_str().unwrap(), c["conditions"]["fill"].as_str().unwrap())).collect();
    assert_eq!(places, ["ext4@fill=30%", "ext4@fill=70%"]);
    for (case, want) in all.iter().zip([0.3, 0.7]) {
        let fill = figure(case, "start_fill").unwrap();
        assert!((fill - want).abs() <= 0.02, "{case}: filled to {fill}, not {want}");
        assert_eq!(case["start"]["fill"].as_f64(), Some(want), "the case's start says its own fill");
    }
    assert_ne!(all[0]["start"]["cache_key"], all[1]["start"]["cache_key"]);
    lab.assert_nothing_left("after a fill axis");
}

#[test]
fn a_filled_btrfs_leaves_its_unfilled_share_to_data() {
    // btrfs's statfs counts the empty part of its duplicated metadata
    // chunks as free though no data can go there: filled to 80% by that
    // count, a 1 GiB image had about 100 MiB for data and this 150 MiB
    // file met ENOSPC. The level counts only what data can take.
    if !root_or_skip("filled_btrfs") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let json = lab.run_json(
        &["create-file", "--fs", "btrfs", "--size", "1G", "--fill", "80%", "--set", "size=150M", "--set", "method=write-1g", "--age-cache", cache.to_str().unwrap()],
        0,
    );
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    let fill = figure(case, "start_fill").unwrap();
    assert!((0.78..=0.82).contains(&fill), "filled to {fill}");
    assert_eq!(figure(case, "files"), Some(1.0), "{case}");
    lab.assert_nothing_left("after a filled btrfs");
}

#[test]
fn the_seeds_preset_finds_seed_003_on_an_aged_full_xfs() {
    if !root_or_skip("preset_seed_003_aged") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let json = lab.run_json(&["create-file", "--preset", "seeds", "--fs", "xfs", "--age-cache", cache.to_str().unwrap()], 0);
    let verdict = &json["run"]["verdicts"][0];
    assert_eq!(verdict["seed"], "003", "{verdict}");
    let places = verdict["places"].as_array().unwrap();
    let place = |target: &str| places.iter().find(|p| p["target"] == target).unwrap_or_else(|| panic!("no {target} in {verdict}"));
    // Fresh, xfs keeps every way's file in one extent; aged and 80% full,
    // xfs_mkfile's direct writes leave several times the extents of dd's.
    assert_eq!(place("xfs")["shows"], false, "{verdict}");
    assert_eq!(place("xfs@age=churn,fill=80%")["shows"], true, "{verdict}");
    assert_eq!(verdict["shows"], true);
    lab.assert_nothing_left("after the preset");
}

#[test]
fn an_aged_place_judged_over_three_images_says_three() {
    if !root_or_skip("aged_three_images") {
        return;
    }
    let lab = Lab::new();
    let cache = cache_of(&lab);
    let args = [
        "--preset", "seeds", "create-file", "--fs", "ext4", "--size", "1G", "--set", "size=32M",
        "--set", "method=mkfile,write-1g,write-64k", "--age-images", "3", "--repeat", "3", "--age-cache",
        cache.to_str().unwrap(),
    ];
    let json = lab.run_json(&args, 0);
    // Three images, one per repeat, each from its own seed.
    let aged: Vec<&serde_json::Value> = cases(&json).iter().filter(|c| c["conditions"]["age"].is_string()).collect();
    let keys: std::collections::BTreeSet<&str> = aged.iter().map(|c| start_of(c)["cache_key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
    for case in &aged {
        assert_eq!(start_of(case)["image"].as_u64(), case["repeat"].as_u64(), "{}", start_of(case));
    }
    let places = json["run"]["verdicts"][0]["places"].as_array().unwrap();
    let place = places.iter().find(|p| p["conditions"]["age"].is_string()).expect("the aged place");
    assert_eq!(place["images"].as_u64(), Some(3), "{place}");
    assert_eq!(place["samples"]["by"], "images", "{place}");
    assert_eq!(place["samples"]["count"].as_u64(), Some(3), "{place}");
    let fresh = places.iter().find(|p| p["conditions"].get("age").is_none()).expect("the fresh place");
    assert!(fresh["images"].is_null(), "{fresh}");
    // The text says it too, with each place's evidence.
    let shown = lab.expect(&["show", "last", "--why"], 0);
    // Rows wrap at 120 columns: read the words, not the lines.
    let text = String::from_utf8_lossy(&shown.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("3 images"), "{text}");
    // Fewer repeats than images never reach every image: refused.
    let mut c = lab.command();
    c.args(["run", "--scratch"]).arg(lab.scratch()).args(["create-file", "--fs", "ext4", "--age", "churn", "--age-images", "3"]);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--repeat 3"));
    lab.assert_nothing_left("after three images");
}
