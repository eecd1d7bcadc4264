//! The store end to end: runs read back exactly as they were printed, from
//! SQLite and from PostgreSQL; a killed run keeps its finished cases and
//! reads back incomplete; bad stores are refused before anything is made;
//! a store one may only read serves every reading command.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{Lab, TestDatabase, Watched, root_or_skip};
use serde_json::Value;

/// `fslab SUBCOMMAND ARGS` in the lab, insisting on `code`; stdout.
fn lab_out(lab: &Lab, args: &[&str], code: i32) -> String {
    let out = lab.expect(args, code);
    if code == 0 {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// Run mmap-fill on two file systems into `store`, then read the run back
/// with `export --json` and `show --json`: both must equal what the run
/// printed, figure for figure, bit for bit.
fn round_trip(lab: &Lab, store: &str) {
    let printed = lab.run_json(
        &["mmap-fill", "--fs", "ext4,xfs", "--set", "size=16M", "--tag", "round-trip", "--store", store],
        0,
    );
    let run = &printed["run"];
    let id = run["id"].as_str().unwrap();
    assert_eq!(run["complete"], true);
    for case in run["cases"].as_array().unwrap() {
        let map = &case["maps"][0];
        assert!(map["extent_list"].as_array().is_some_and(|l| !l.is_empty()), "a kept map: {map}");
        assert!(case["timeline"].as_array().is_some_and(|t| !t.is_empty()));
    }
    let exported = parse(&lab_out(lab, &["export", id, "--json", "--store", store], 0));
    assert_eq!(exported, printed, "export --json of {id} from {store}");
    let shown = parse(&lab_out(lab, &["show", "round-trip", "--json", "--store", store], 0));
    assert_eq!(shown, printed, "show --json by tag");
    let runs = parse(&lab_out(lab, &["runs", "--json", "--store", store], 0));
    let listed = &runs["runs"][0];
    assert_eq!((listed["id"].as_str(), listed["cases"].as_u64(), &listed["complete"]), (Some(id), Some(2), &Value::Bool(true)));
    let csv = lab_out(lab, &["export", id, "--csv", "--store", store], 0);
    let figures: usize = run["cases"].as_array().unwrap().iter().map(|c| c["figures"].as_object().unwrap().len()).sum();
    assert_eq!(csv.lines().count(), figures + 1, "a CSV row per figure and a header");
}

#[test]
fn a_run_reads_back_from_sqlite_exactly_as_it_was_printed() {
    if !root_or_skip("store_sqlite_round_trip") {
        return;
    }
    let lab = Lab::new();
    round_trip(&lab, lab.store().to_str().unwrap());
    lab.assert_nothing_left("sqlite round trip");
}

#[test]
fn a_run_reads_back_from_postgres_exactly_as_it_was_printed() {
    if !root_or_skip("store_postgres_round_trip") {
        return;
    }
    let Some(db) = TestDatabase::new("store_postgres_round_trip") else { return };
    let lab = Lab::new();
    round_trip(&lab, &db.url);
    lab.assert_nothing_left("postgres round trip");
}

#[test]
fn a_killed_run_keeps_its_finished_cases_and_reads_back_incomplete() {
    if !root_or_skip("store_killed_run") {
        return;
    }
    let lab = Lab::new();
    let mut c = lab.command();
    c.args(["run", "mmap-fill", "--fs", "ext4,xfs,btrfs", "--set", "size=16M", "--repeat", "8", "--progress", "json", "--scratch"]);
    let mut child = Watched::spawn(c.arg(lab.scratch()).stdout(Stdio::null()));
    let store = lab.store();
    let mut stored = 0;
    child.until(Duration::from_secs(120), "no case stored within two minutes of work", || {
        std::thread::sleep(Duration::from_millis(200));
        if !store.exists() {
            return false;
        }
        let out = lab.command().args(["runs", "--json"]).output().unwrap();
        let Ok(runs) = serde_json::from_slice::<Value>(&out.stdout) else { return false };
        stored = runs["runs"][0]["cases"].as_u64().unwrap_or(0);
        stored >= 2
    });
    // SIGKILL: nothing of fslab's own runs after this, only what it stored.
    child.kill();
    lab_out(&lab, &["cleanup"], 0);
    lab.assert_nothing_left("after the killed run's cleanup");

    let runs = parse(&lab_out(&lab, &["runs", "--json"], 0));
    let run = &runs["runs"][0];
    assert_eq!(run["complete"], false, "{run}");
    let kept = run["cases"].as_u64().unwrap();
    assert!(kept >= stored && kept < 24, "kept {kept} of 24 cases (saw {stored} stored before the kill)");
    let id = run["id"].as_str().unwrap();
    let exported = parse(&lab_out(&lab, &["export", id, "--json"], 0));
    assert_eq!(exported["run"]["complete"], false);
    let cases = exported["run"]["cases"].as_array().unwrap();
    assert_eq!(cases.len() as u64, kept);
    for case in cases {
        assert_eq!(case["status"], "ok");
        // Kinds read back as measured: the file's size is the work's, its
        // extents where writeback put the pages.
        assert_eq!(case["figures"]["files"]["kind"], "exact");
        assert_eq!(case["figures"]["extents"]["kind"], "timing");
    }
    let shown = lab_out(&lab, &["show", id], 0);
    assert!(shown.contains("INCOMPLETE"), "{shown}");
    assert!(lab_out(&lab, &["runs"], 0).contains("incomplete"));
}

#[test]
fn a_store_from_a_newer_fslab_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    drop(fslab::store::Store::open(path.to_str().unwrap()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE fslab_schema SET version = 99", []).unwrap();
    drop(conn);
    let out = common::fslab_expect(&["runs", "--store", path.to_str().unwrap()], 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("schema version 99") && err.contains("newer fslab") && err.contains("--store"), "{err}");
}

#[test]
fn stores_that_cannot_be_read_are_usage_errors_that_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    let err = common::fslab_expect(&["runs", "--store", missing.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&err.stderr).contains("no store at"));
    assert!(!missing.exists(), "reading never creates a store");

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database, just notes\n".repeat(100)).unwrap();
    let err = common::fslab_expect(&["runs", "--store", text.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&err.stderr).contains("not an SQLite database"), "{:?}", err);

    let empty = dir.path().join("empty.db");
    drop(fslab::store::Store::open(empty.to_str().unwrap()).unwrap());
    let err = common::fslab_expect(&["show", "nosuchrun", "--store", empty.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&err.stderr).contains("fslab runs"), "{err:?}");
    common::fslab_expect(&["export", "last", "--json", "--store", empty.to_str().unwrap()], 2);

    let err = common::fslab_expect(&["runs", "--store", "postgres://nobody@127.0.0.1:1/none"], 3);
    assert!(String::from_utf8_lossy(&err.stderr).contains("cannot connect"), "{err:?}");
}

#[test]
fn a_bad_store_stops_a_run_before_anything_is_made() {
    if !root_or_skip("store_bad_before_run") {
        return;
    }
    let lab = Lab::new();
    let bad = lab.dir.path().join("no-such-folder").join("x.db");
    let mut c = lab.command();
    c.args(["run", "mmap-fill", "--fs", "ext4", "--set", "size=16M", "--scratch"]).arg(lab.scratch());
    let out = c.arg("--store").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    lab.assert_nothing_left("bad store");
}

#[test]
fn whole_runs_round_trip_through_both_backends_alike() {
    // A record with every kind of field: a missing figure, a timeline, a
    // kept map with flags, a failed case, tags and verdicts (one stored
    // before verdicts had places, one with places under conditions).
    let dir = tempfile::tempdir().unwrap();
    let record: fslab::record::RunRecord = serde_json::from_value(serde_json::json!({
        "id": "20261121T000000Z-1-00000001", "tag": "a", "tags": ["a", "b"], "started_at": "2026-11-21T00:00:00Z",
        "command": ["fslab", "run", "x"], "complete": true,
        "environment": {"fslab_version": "0.1.0", "kernel": "6.18", "machine": "x86_64", "cpu": null, "cpus": 2,
                        "memory_bytes": 1024, "tools": {"mke2fs": "1.47"}, "disk": null},
        "sysctls": [["vm.dirty_ratio", "90"]],
        "cases": [{
            "scenario": "mmap-fill", "fs": "ext4", "params": {"size": 16777216, "order": "seed"}, "repeat": 2,
            "status": "ok", "error": null,
            "target": {"fs_type": "ext4", "device": "/dev/loop9", "mkfs_args": ["-q"], "mount_opts": "sync", "cold_method": "remount",
                       "memory_cgroup": "v1 memory.limit_in_bytes /sys/fs/cgroup/memory/fslab-20261121T000000Z-1-00000001-1",
                       "disk": "ssd-plp"},
            "conditions": {"memory": "192M", "vm.dirty_ratio": "5", "kernel": "6.1.0-56-amd64", "vm_memory": "512M"},
            "requests": [{"phase": "work", "disk": "ssd-plp", "queue_depth": 1, "requests": 1, "flushes": 0, "not_modelled": 0,
                          "every": 1, "measured_s": 0.0, "modelled_s": 1.5e-4, "points": [[0.0, 1.5e-4, 40960, 4096, "W"]]}],
            "guest": {"kernel": "/var/cache/fslab/kernels/6.1.0-56/boot/vmlinux-6.1.0-56-amd64", "release": "6.1.0-56-amd64",
                      "accel": "tcg", "emulated": true, "why_emulated": "/dev/kvm is PVM, which cannot boot a stock kernel",
                      "memory": "512M", "memory_bytes": 536870912, "cpus": 2, "boot_s": 3.4, "wall_s": 41.5,
                      "qemu": "QEMU emulator version 7.2.19"},
            "figures": {"wall_s": {"value": 0.1 + 0.2, "unit": "s", "better": "lower", "kind": "timing"},
                        "journal_commits": {"value": null, "unit": "count", "better": "lower", "kind": "exact", "missing": "no tracefs"}},
            "timeline": [{"t_s": 1.0, "read_bytes_per_s": null, "write_bytes_per_s": 1.5e8, "user_pct": 1.0,
                          "system_pct": 2.5, "iowait_pct": 0.0, "idle_pct": 96.5, "dirty_bytes": 4096, "writeback_bytes": 0}],
            "maps": [{"path": "f", "size": 8192, "block_size": 4096, "device_bytes": 1073741824, "extents": 2, "truncated": false,
                      "extent_list": [{"logical": 0, "physical": 40960, "length": 4096, "flags": []},
                                      {"logical": 4096, "physical": 4096, "length": 4096, "flags": ["last", "unwritten"]}]}]
        }, {
            "scenario": "exec", "fs": "dir", "params": {}, "repeat": 1, "status": "failed", "error": "it broke",
            "target": {"fs_type": "tmpfs", "device": null, "mkfs_args": [], "mount_opts": null, "cold_method": null},
            "figures": {}, "timeline": [], "maps": [],
            "command": {"argv": ["false"], "exit_code": 1, "signal": null, "stdout": "", "stderr": "no\n", "dropped_bytes": 0}
        }],
        "verdicts": [{"scenario": "mmap-fill", "seed": "000", "shows": null, "evidence": "too few cases"},
                     {"scenario": "mmap-fill", "seed": "000", "shows": true, "evidence": "seed 000 shows on xfs@256M (...)",
                      "claim": "ext3 in 2009",
                      "places": [{"target": "xfs@256M", "fs": "xfs", "conditions": {"memory": "256M"}, "shows": true,
                                  "figure": "extents", "value": 30000.0, "against": 1.0, "evidence": "30,000 extents"},
                                 {"target": "ext4", "fs": "ext4", "conditions": {}, "shows": null,
                                  "figure": "extents", "value": null, "evidence": "no case"}]}]
    }))
    .unwrap();
    let want = serde_json::to_value(&record).unwrap();
    let sqlite = dir.path().join("both.db");
    let mut locations = vec![sqlite.to_string_lossy().into_owned()];
    let db = TestDatabase::new("store_both_backends");
    locations.extend(db.as_ref().map(|d| d.url.clone()));
    for location in &locations {
        let mut store = fslab::store::Store::open(location).unwrap();
        store.put_run(&record).unwrap();
        let back = store.load(&record.id).unwrap().expect("the run is there");
        assert_eq!(serde_json::to_value(&back).unwrap(), want, "{location}");
        assert_eq!(store.ids_tagged("b").unwrap(), vec![record.id.clone()]);
        // The listing: every run with its own tags and cases, and a tag
        // narrowing it to the runs that carry it.
        store.put_run(&tiny_run("20261121T000001Z-2-00000002")).unwrap();
        let listed = |runs: Vec<fslab::store::RunSummary>| -> Vec<_> {
            runs.into_iter().map(|r| (r.id, r.tags, r.cases, r.failed, r.scenarios, r.targets, r.complete)).collect()
        };
        let crafted = (
            record.id.clone(),
            vec!["a".to_string(), "b".to_string()],
            2,
            1,
            vec!["mmap-fill".to_string(), "exec".to_string()],
            vec!["ext4".to_string(), "dir".to_string()],
            true,
        );
        let tiny = ("20261121T000001Z-2-00000002".to_string(), vec![], 2, 0, vec!["replace-files".to_string()], vec!["ext4".to_string()], true);
        assert_eq!(listed(store.runs(None).unwrap()), vec![crafted.clone(), tiny], "{location}");
        assert_eq!(listed(store.runs(Some("b")).unwrap()), vec![crafted], "{location}");
        assert!(store.runs(Some("nobody")).unwrap().is_empty());
        // Opening again migrates nothing and loses nothing.
        drop(store);
        let mut again = fslab::store::Store::open(location).unwrap();
        assert!(again.load(&record.id).unwrap().is_some());
        assert!(again.load("nope").unwrap().is_none());
    }
}

#[test]
fn many_writers_share_one_store() {
    // Four machines' worth of writers opening one fresh store at once: the
    // schema is made once, and every run is there afterwards, whole.
    let dir = tempfile::tempdir().unwrap();
    let mut locations = vec![dir.path().join("shared.db").to_string_lossy().into_owned()];
    let db = TestDatabase::new("store_many_writers");
    locations.extend(db.as_ref().map(|d| d.url.clone()));
    for location in &locations {
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let location = location.clone();
                std::thread::spawn(move || {
                    let mut store = fslab::store::Store::open(&location).expect("open the shared store");
                    for r in 0..3 {
                        let mut run = tiny_run(&format!("writer{w}-run{r}"));
                        run.tags = vec!["fleet".into()];
                        store.put_run(&run).expect("write a run");
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("a writer failed");
        }
        let mut store = fslab::store::Store::open(location).unwrap();
        let ids = store.ids_tagged("fleet").unwrap();
        assert_eq!(ids.len(), 12, "{location}: {ids:?}");
        for id in ids {
            let run = store.load(&id).unwrap().unwrap();
            assert_eq!(run.cases.len(), 2, "{location}: {id}");
            assert!(run.complete);
        }
    }
}

/// A small run record with two cases of three figures each.
#[test]
fn a_store_of_the_schema_before_conditions_still_reads_and_migrates_on_write() {
    // Version 1 had no conditions: its cases read back without them, by
    // reading commands that never change the store, and a run stored
    // there migrates it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let location = path.to_str().unwrap();
    let old = tiny_run("20261121T000001Z-2-00000002");
    store_of_version(&path, &old, 1, &["conditions", "memory_cgroup", "start", "image_copy", "busy", "guest", "disk"]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    let back = store.load(&old.id).unwrap().expect("the old run is there");
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&old).unwrap());
    drop(store);
    let listed = String::from_utf8_lossy(&common::fslab_expect(&["runs", "--store", location], 0).stdout).into_owned();
    assert!(listed.contains(&old.id), "{listed}");
    let mut store = fslab::store::Store::open(location).unwrap();
    let mut new = tiny_run("20261121T000002Z-3-00000003");
    new.cases[0].conditions.insert("memory".into(), "256M".into());
    store.put_run(&new).unwrap();
    assert_eq!(store.load(&new.id).unwrap().unwrap().cases[0].place(), "ext4@256M");
    assert!(store.load(&old.id).unwrap().unwrap().cases[0].conditions.is_empty());
}

#[test]
fn a_store_of_the_schema_before_aged_starts_still_reads_and_migrates_on_write() {
    // Version 2 had no start record: its cases read back as fresh ones,
    // and a run stored there migrates it and keeps its start.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    let location = path.to_str().unwrap();
    let old = tiny_run("20261121T000001Z-2-00000004");
    store_of_version(&path, &old, 2, &["start", "image_copy", "busy", "guest", "disk"]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    let back = store.load(&old.id).unwrap().expect("the old run is there");
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&old).unwrap());
    drop(store);
    let mut store = fslab::store::Store::open(location).unwrap();
    let mut new = tiny_run("20261121T000002Z-3-00000005");
    new.cases[0].start = Some(serde_json::from_value(serde_json::json!({
        "age": "churn:fill=80%", "cache_key": "ab".repeat(32), "image_hash": "cd".repeat(32), "cache_hit": true
    })).unwrap());
    new.cases[0].target.image_copy = Some("sparse copy of cache entry abababababab (10 MiB of data)".into());
    store.put_run(&new).unwrap();
    let again = store.load(&new.id).unwrap().unwrap();
    assert_eq!(again.cases[0].start, new.cases[0].start);
    assert_eq!(again.cases[0].target.image_copy, new.cases[0].target.image_copy);
    assert!(store.load(&old.id).unwrap().unwrap().cases[0].start.is_none());
}

#[test]
fn a_busy_note_is_kept_and_a_store_from_before_busy_notes_reads_without_them() {
    // Version 3 kept no busy note: its cases read back as not busy, and a
    // run stored there migrates it and keeps its cases' notes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    let location = path.to_str().unwrap();
    let old = tiny_run("20261121T000001Z-2-00000006");
    store_of_version(&path, &old, 3, &["busy", "guest", "disk"]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    let back = store.load(&old.id).unwrap().expect("the old run is there");
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&old).unwrap());
    drop(store);
    let mut store = fslab::store::Store::open(location).unwrap();
    let mut new = tiny_run("20261121T000002Z-3-00000007");
    new.cases[1].busy = Some("others used 1.4 cores on average (load 7.4 → 7.9)".into());
    store.put_run(&new).unwrap();
    let again = store.load(&new.id).unwrap().unwrap();
    assert_eq!((again.cases[0].busy.as_deref(), again.cases[1].busy.as_deref()), (None, new.cases[1].busy.as_deref()));
    assert_eq!(serde_json::to_value(&again).unwrap()["cases"][1]["busy"], "others used 1.4 cores on average (load 7.4 → 7.9)");
    assert!(store.load(&old.id).unwrap().unwrap().cases.iter().all(|c| c.busy.is_none()));
}

#[test]
fn a_guest_is_kept_and_a_store_from_before_guests_reads_its_cases_as_run_on_the_host() {
    // Version 4 kept no guest: its cases read back as run on the host, and
    // a run stored there migrates it and keeps its cases' guests, emulated
    // or not, with what a guest record may leave out left out.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    let location = path.to_str().unwrap();
    let old = tiny_run("20261121T000001Z-2-00000008");
    store_of_version(&path, &old, 4, &["guest", "disk"]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    let back = store.load(&old.id).unwrap().expect("the old run is there");
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&old).unwrap());
    drop(store);
    let mut store = fslab::store::Store::open(location).unwrap();
    let mut new = tiny_run("20261121T000002Z-3-00000009");
    new.cases[0].guest = Some(serde_json::from_value(serde_json::json!({
        "kernel": "/k/vmlinux", "release": "6.1.0-56-amd64", "accel": "tcg", "emulated": true,
        "why_emulated": "/dev/kvm is PVM", "memory": "512M", "memory_bytes": 536870912u64, "cpus": 2,
        "boot_s": 3.25, "wall_s": 40.5, "qemu": "QEMU emulator version 7.2.19"
    })).unwrap());
    new.cases[1].guest = Some(serde_json::from_value(serde_json::json!({
        "kernel": "/k/bzImage", "release": "6.12.1", "accel": "kvm", "emulated": false,
        "memory": "4G", "memory_bytes": 4294967296u64, "cpus": 4, "wall_s": 9.0, "qemu": "QEMU emulator version 7.2.19"
    })).unwrap());
    store.put_run(&new).unwrap();
    let again = store.load(&new.id).unwrap().unwrap();
    assert_eq!((&again.cases[0].guest, &again.cases[1].guest), (&new.cases[0].guest, &new.cases[1].guest));
    let json = serde_json::to_value(&again).unwrap();
    assert_eq!(json["cases"][0]["guest"]["emulated"], true);
    assert!(json["cases"][1]["guest"].get("why_emulated").is_none() && json["cases"][1]["guest"].get("boot_s").is_none(), "{json}");
    assert!(store.load(&old.id).unwrap().unwrap().cases.iter().all(|c| c.guest.is_none()));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("SELECT version FROM fslab_schema", [], |r| r.get(0)).unwrap();
    let nulls: i64 = conn.query_row("SELECT COUNT(*) FROM cases WHERE guest IS NULL", [], |r| r.get(0)).unwrap();
    assert_eq!((version, nulls), (fslab::store::schema::CURRENT, 2), "the old run's two host cases are NULL");
}

#[test]
fn a_case_s_modelled_drive_and_requests_are_kept_and_a_store_from_before_reads_without_them() {
    // Version 5 kept neither: its cases read back with no drive and no
    // request streams; a run stored there migrates it and keeps both.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    let old = tiny_run("20261121T000001Z-2-0000000a");
    store_of_version(&path, &old, 5, &["disk"]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    let back = store.load(&old.id).unwrap().expect("the old run is there");
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&old).unwrap());
    assert!(back.cases.iter().all(|c| c.requests.is_empty() && c.target.disk.is_none()));
    drop(store);
    let mut store = fslab::store::Store::open(path.to_str().unwrap()).unwrap();
    let mut new = tiny_run("20261121T000002Z-3-0000000b");
    new.cases[0].target.disk = Some("hdd-7200-2009".into());
    new.cases[0].requests = serde_json::from_value(serde_json::json!([
        {"phase": "work", "disk": "hdd-7200-2009", "queue_depth": 1, "requests": 3, "flushes": 1, "not_modelled": 0,
         "every": 1, "measured_s": 0.002, "modelled_s": 0.0125,
         "points": [[0.0, 0.004, 1048576, 4096, "W"], [0.001, 0.009, 0, 4096, "W"], [0.002, 0.0125, 8192, 512, "R"]]},
        {"phase": "cold_read", "disk": "hdd-7200-2009", "queue_depth": 1, "requests": 0, "flushes": 0, "not_modelled": 2,
         "every": 1, "measured_s": 0.0, "modelled_s": null, "points": []}
    ]))
    .unwrap();
    store.put_run(&new).unwrap();
    let again = store.load(&new.id).unwrap().unwrap();
    assert_eq!((again.cases[0].target.disk.as_deref(), again.cases[1].target.disk.as_deref()), (Some("hdd-7200-2009"), None));
    let json = serde_json::to_value(&again).unwrap();
    assert_eq!(json["cases"][0]["target"]["disk"], "hdd-7200-2009");
    assert!(json["cases"][1]["target"].get("disk").is_none(), "{json}");
    assert!(store.load(&old.id).unwrap().unwrap().cases.iter().all(|c| c.target.disk.is_none()));
    assert_eq!(serde_json::to_value(&again).unwrap(), serde_json::to_value(&new).unwrap());
    assert_eq!(again.cases[0].requests[0].points[2].offset, 8192);
    assert_eq!(again.cases[0].target.disk.as_deref(), Some("hdd-7200-2009"));
    assert!(again.cases[1].requests.is_empty());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("SELECT MAX(version) FROM fslab_schema", [], |r| r.get(0)).unwrap();
    let streams: i64 = conn.query_row("SELECT COUNT(*) FROM request_streams", [], |r| r.get(0)).unwrap();
    assert_eq!((version, streams), (fslab::store::schema::CURRENT, 1), "one case had streams");
}

#[test]
fn a_case_s_crash_states_are_kept_and_a_store_from_before_reads_without_them() {
    // The crash record with every state's outcome comes back as it went
    // in; a store of version 8 kept none, and its cases read without one.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v8.db");
    let old = tiny_run("20261121T000001Z-2-0000000c");
    store_of_version(&path, &old, 8, &[]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    assert!(store.load(&old.id).unwrap().unwrap().cases.iter().all(|c| c.crash.is_none()));
    drop(store);
    let mut store = fslab::store::Store::open(path.to_str().unwrap()).unwrap();
    let mut new = tiny_run("20261121T000002Z-3-0000000d");
    new.cases[0].crash = Some(serde_json::from_value(serde_json::json!({
        "folder": "/s/r-ext4-rec1", "kept": false, "recorder": "qemu-storage-daemon version 7.2.22", "cap_bytes": 4294967296u64,
        "entries": 120, "flushes": 41, "discards": 0, "write_bytes": 655360, "log_bytes": 700000,
        "before_sha256": "ab", "end_sha256": "cd",
        "marks": [{"what": "work_start", "entries": 60, "at_s": 0.5}, {"what": "durable:exist_1", "entries": 64, "at_s": 0.6},
                  {"what": "work_end", "entries": 118, "at_s": 1.5}],
        "states": {"model": "flush", "seed": 31, "from_entry": 60, "total": 3, "judged": 3, "cap": 300,
                   "checker": "replace-files: ...",
                   "first_bad": {"entry": 70, "epoch": 22, "prefix": 71, "extra": 0, "classes": ["empty"], "detail": "exist_2 empty"},
                   "outcomes": [{"entry": 63, "prefix": 64}, {"entry": 70, "prefix": 71, "classes": ["empty"]},
                                {"entry": 117, "prefix": 118, "extra": 2, "classes": ["durability"], "violations": 1}],
                   "flush_entries": [63, 70, 117]}
    }))
    .unwrap());
    store.put_run(&new).unwrap();
    let again = store.load(&new.id).unwrap().unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), serde_json::to_value(&new).unwrap());
    let states = again.cases[0].crash.as_ref().and_then(|c| c.states.as_ref()).expect("the states are kept");
    let outcomes: Vec<&str> = states.outcomes.iter().map(|o| o.outcome()).collect();
    assert_eq!(outcomes, ["good", "empty", "durability"]);
    assert!(again.cases[1].crash.is_none());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("SELECT MAX(version) FROM fslab_schema", [], |r| r.get(0)).unwrap();
    let kept: i64 = conn.query_row("SELECT COUNT(*) FROM cases WHERE crash IS NOT NULL", [], |r| r.get(0)).unwrap();
    assert_eq!((version, kept), (fslab::store::schema::CURRENT, 1), "one case had a crash record");
}

#[test]
fn a_store_of_schema_6_reads_without_request_streams() {
    // Version 6 had the drive but not yet the table of request streams.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.db");
    let old = tiny_run("20261121T000001Z-2-0000000e");
    store_of_version(&path, &old, 6, &[]);
    let mut store = fslab::store::Store::open_existing(&path).unwrap();
    let back = store.load(&old.id).unwrap().expect("the old run is there");
    assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&old).unwrap());
}

/// A store at `path` holding `run`, made as schema `version` made it: the
/// case columns later versions added (`dropped`) taken out again.
fn store_of_version(path: &std::path::Path, run: &fslab::record::RunRecord, version: i64, dropped: &[&str]) {
    fslab::store::Store::open(path.to_str().unwrap()).unwrap().put_run(run).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    if version < 8 {
        conn.execute_batch(
            "DROP INDEX cases_by_plan; DROP INDEX runs_by_plan; DROP TABLE plans; ALTER TABLE cases DROP COLUMN plan_id; \
             ALTER TABLE cases DROP COLUMN plan_key; ALTER TABLE runs DROP COLUMN plan_id; ALTER TABLE runs DROP COLUMN shard",
        )
        .unwrap();
    }
    for column in dropped {
        conn.execute_batch(&format!("ALTER TABLE cases DROP COLUMN {column}")).unwrap();
    }
    if version < 7 {
        conn.execute_batch("DROP TABLE request_streams").unwrap();
    }
    if version < 9 {
        conn.execute_batch("ALTER TABLE cases DROP COLUMN crash").unwrap();
    }
    conn.execute_batch(&format!("UPDATE fslab_schema SET version = {version}")).unwrap();
}

fn tiny_run(id: &str) -> fslab::record::RunRecord {
    serde_json::from_value(serde_json::json!({
        "id": id, "tag": null, "started_at": "2026-11-21T00:00:00Z", "command": ["fslab"], "complete": true,
        "environment": {"fslab_version": "0.1.0", "kernel": "6.18", "machine": "x86_64", "cpu": null, "cpus": 2,
                        "memory_bytes": null, "tools": {}, "disk": null},
        "sysctls": [],
        "cases": (1..=2).map(|repeat| serde_json::json!({
            "scenario": "replace-files", "fs": "ext4", "params": {"files": 20}, "repeat": repeat, "status": "ok",
            "error": null, "target": {"fs_type": "ext4", "device": null, "mkfs_args": [], "mount_opts": null, "cold_method": null},
            "figures": {"wall_s": {"value": 0.01 * repeat as f64, "unit": "s", "better": "lower", "kind": "timing"},
                        "journal_commits": {"value": 21.0, "unit": "count", "better": "lower", "kind": "exact"},
                        "flushes": {"value": 42.0, "unit": "count", "better": "lower", "kind": "exact"}},
            "timeline": []
        })).collect::<Vec<_>>()
    }))
    .unwrap()
}

#[test]
fn a_store_that_is_not_a_regular_file_is_refused_and_nothing_is_made_beside_it() {
    let dir = common::temp::dir("store-kind");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let fifo = dir.path().join("fifo.db");
    common::run("mkfifo", &[fifo.to_str().unwrap()]);
    let folder = dir.path().join("folder.db");
    std::fs::create_dir(&folder).unwrap();
    let journal_before = std::path::Path::new("/dev/null-journal").exists();
    for (store, kind) in [(fifo.as_path(), "a FIFO"), (folder.as_path(), "a directory"), (std::path::Path::new("/dev/null"), "a character device")] {
        let mut c = common::fslab_command();
        c.env("FSLAB_STATE_DIR", dir.path().join("state")).arg("exec").arg("--dir").arg(&work).arg("--store").arg(store);
        let (code, err) = common::finish(c.args(["--", "true"]));
        assert_eq!(code, Some(2), "exec --store {}: {err}", store.display());
        assert!(err.contains(&format!("{kind}, not a regular file")), "{err}");
        let (code, err) = common::finish(common::fslab_command().arg("runs").arg("--store").arg(store));
        assert_eq!(code, Some(2), "runs --store {}: {err}", store.display());
        assert!(err.contains(&format!("{kind}, not a regular file")), "{err}");
    }
    assert!(common::names(&work).is_empty(), "nothing was made: {:?}", common::names(&work));
    let made: Vec<String> = common::names(dir.path()).into_iter().filter(|n| n != "state").collect();
    assert_eq!(made, ["fifo.db", "folder.db", "work"], "nothing beside the stores");
    assert!(common::names(&folder).is_empty());
    if !journal_before {
        assert!(!std::path::Path::new("/dev/null-journal").exists(), "a journal was made beside /dev/null");
    }
}

/// A mount made for a test, unmounted however the test ends.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = common::unmount(&self.0);
    }
}

#[test]
fn a_store_one_may_read_but_not_write_serves_reading_commands_and_refuses_runs() {
    if !root_or_skip("store_read_only") {
        return;
    }
    use std::os::unix::fs::PermissionsExt as _;
    let dir = common::temp::dir("store-ro");
    let chmod = |path: &std::path::Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    chmod(dir.path(), 0o755);
    let store = dir.path().join("s.db");
    let (first, second) = ("20261121T000001Z-1-00000001", "20261121T000002Z-1-00000002");
    {
        let mut s = fslab::store::Store::open(store.to_str().unwrap()).unwrap();
        s.put_run(&tiny_run(first)).unwrap();
        s.put_run(&tiny_run(second)).unwrap();
    }
    chmod(&store, 0o444);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    chmod(&out, 0o777);
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    chmod(&state, 0o700);
    let before = std::fs::read(&store).unwrap();
    let s = store.to_str().unwrap();
    let (csv, html) = (out.join("x.csv"), out.join("r.html"));
    let reading: Vec<Vec<&str>> = vec![
        vec!["runs", "--store", s],
        vec!["show", first, "--store", s],
        vec!["export", first, "--json", "--store", s],
        vec!["export", first, "--csv", "-o", csv.to_str().unwrap(), "--store", s],
        vec!["compare", first, second, "--store", s],
        vec!["report", second, "--compare", first, "-o", html.to_str().unwrap(), "--store", s],
        vec!["show", s],
    ];
    let as_nobody = |args: &[&str]| {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", env!("CARGO_BIN_EXE_fslab")]).args(args);
        c.env("FSLAB_STATE_DIR", &state).current_dir(&out);
        common::finish(&mut c)
    };
    for args in &reading {
        let (code, err) = as_nobody(args);
        assert_eq!(code, Some(0), "as nobody, fslab {args:?}: {err}");
    }
    assert!(csv.is_file() && html.is_file());
    let work = out.join("work");
    std::fs::create_dir(&work).unwrap();
    chmod(&work, 0o777);
    // The store's folder is root's, not nobody's alone: a run there is
    // refused before the store is opened.
    let (code, err) = as_nobody(&["exec", "--dir", work.to_str().unwrap(), "--store", s, "--", "true"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("store folder") && err.contains("belongs to uid 0") && err.contains("--store"), "{err}");
    assert_eq!(std::fs::read(&store).unwrap(), before, "the store is unchanged");
    assert_eq!(common::names(dir.path()), ["out", "s.db", "state"], "nothing was made beside the store");

    // Root, on a read-only bind mount of the folder: the same.
    let ro = common::temp::dir("store-ro-mount");
    common::run("mount", &["--bind", dir.path().to_str().unwrap(), ro.path().to_str().unwrap()]);
    let _mounted = Mounted(ro.path().to_path_buf());
    common::run("mount", &["-o", "remount,bind,ro", ro.path().to_str().unwrap()]);
    let ro_store = ro.path().join("s.db");
    let r = ro_store.to_str().unwrap();
    for args in [vec!["runs", "--store", r], vec!["compare", first, second, "--store", r], vec!["export", second, "--csv", "--store", r]] {
        let out = common::fslab_command().env("FSLAB_STATE_DIR", &state).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "fslab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mut c = common::fslab_command();
    c.env("FSLAB_STATE_DIR", dir.path().join("root-state")).args(["exec", "--dir", work.to_str().unwrap(), "--store", r, "--", "true"]);
    let (code, err) = common::finish(&mut c);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("may not write"), "{err}");
}

#[test]
fn a_database_fslab_did_not_make_is_refused_not_made_a_store() {
    let dir = common::temp::dir("store-foreign-db");
    let app = dir.path().join("app.db");
    let conn = rusqlite::Connection::open(&app).unwrap();
    conn.execute_batch("CREATE TABLE accounts (name TEXT); CREATE TABLE sessions (id INTEGER); INSERT INTO accounts VALUES ('a')").unwrap();
    drop(conn);
    let before = std::fs::read(&app).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut c = common::fslab_command();
    c.env("FSLAB_STATE_DIR", dir.path().join("state")).arg("exec").arg("--dir").arg(&work).arg("--store").arg(&app);
    let (code, err) = common::finish(c.args(["--", "true"]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not an fslab store") && err.contains("accounts, sessions"), "{err}");
    assert_eq!(std::fs::read(&app).unwrap(), before, "the database changed (fslab's tables, WAL)");
    let names: Vec<String> = common::names(dir.path()).into_iter().filter(|n| n != "state").collect();
    assert_eq!(names, ["app.db", "work"], "nothing beside it");
}

#[test]
fn reading_commands_do_not_follow_another_users_link_to_a_store_or_a_run() {
    if !root_or_skip("store_reading_foreign_link") {
        return;
    }
    let dir = common::temp::dir("store-read-link");
    let store = dir.path().join("root.db");
    let run_id = "20261121T000001Z-1-00000001";
    fslab::store::Store::open(store.to_str().unwrap()).unwrap().put_run(&tiny_run(run_id)).unwrap();
    let json = dir.path().join("run.json");
    std::fs::write(&json, common::crafted_run_json(run_id, true)).unwrap();
    let shared = common::Sticky::new(dir.path());
    let link = |name: &str, to: &std::path::Path, uid: u32| shared.link(name, to, uid);
    let (theirs, theirs_json) = (link("theirs.db", &store, 65534), link("theirs.json", &json, 65534));
    for args in [
        vec!["runs", "--store", &theirs],
        vec!["show", run_id, "--store", &theirs],
        vec!["show", &theirs],
        vec!["show", &theirs_json],
        vec!["export", &theirs_json, "--csv"],
        vec!["compare", &theirs, &theirs_json],
    ] {
        let (code, err) = common::finish(common::fslab_command().args(&args));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("belongs to uid 65534") && err.contains("name the file it points to"), "{args:?}: {err}");
    }
    // Root's own link there is followed.
    let (ours, ours_json) = (link("ours.db", &store, 0), link("ours.json", &json, 0));
    for args in [vec!["runs", "--store", &ours], vec!["show", &ours], vec!["compare", &ours, &ours_json]] {
        let (code, err) = common::finish(common::fslab_command().args(&args));
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
}
