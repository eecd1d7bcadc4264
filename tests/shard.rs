//! One plan, sharded, into one store: `fslab plan` gives the same file for
//! the same flags; shards partition its cases, those sharing an aged image
//! together; a plan run in shards stores what it stores unsharded, each
//! case once however often a shard runs; a shard killed mid-way leaves
//! its cases missing, named by `status`, until it runs again; `report`
//! and `compare` read a plan as a run.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::{Lab, TestDatabase, Watched, root_or_skip};
use fslab::plan::shard::shard_of;
use serde_json::Value;

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn plan_of(path: &Path) -> Value {
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(json["schema"], "fslab/1");
    json["plan"].clone()
}

fn keys(plan: &Value) -> Vec<(String, u64)> {
    plan["cases"].as_array().unwrap().iter().map(|c| (c["key"].as_str().unwrap().to_string(), c["repeat"].as_u64().unwrap())).collect()
}

/// `fslab plan ARGS -o lab/NAME` in the lab, exit 0; the file's path.
fn plan(lab: &Lab, name: &str, args: &[&str]) -> PathBuf {
    let path = lab.dir.path().join(name);
    let scratch = lab.scratch();
    let mut all = vec!["plan", "--scratch", scratch.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", path.to_str().unwrap()]);
    lab.expect(&all, 0);
    path
}

#[test]
fn the_same_flags_give_the_same_plan_and_cases_sharing_an_aged_image_share_a_shard() {
    if !root_or_skip("shard_same_plan") {
        return;
    }
    let lab = Lab::new();
    let a = plan(&lab, "a.json", &["replace-files", "--fs", "ext4,xfs", "--set", "strategy=fsync-each,none", "--repeat", "2"]);
    // The same flags, in another order and spelling.
    let b = plan(&lab, "b.json", &["--repeat=2", "--set", "strategy=fsync-each,none", "--fs=ext4", "--fs", "xfs", "replace-files"]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "the same flags give the same file, byte for byte");
    let (pa, pb) = (plan_of(&a), plan_of(&b));
    assert_eq!(pa["id"].as_str().unwrap().len(), 16);
    assert_eq!(keys(&pa).len(), 8);
    assert_eq!(pa["run_args"], serde_json::json!(["replace-files", "--fs=ext4", "--fs=xfs", "--set=strategy=fsync-each,none", "--repeat=2"]));
    // One more repeat: another plan, every case of the first kept as it was.
    let c = plan_of(&plan(&lab, "c.json", &["replace-files", "--fs", "ext4,xfs", "--set", "strategy=fsync-each,none", "--repeat", "3"]));
    assert_ne!(c["id"], pb["id"]);
    let more: BTreeSet<_> = keys(&c).into_iter().collect();
    assert!(keys(&pa).iter().all(|k| more.contains(k)), "adding cases leaves the others' keys");
    // A fresh case's shard key is its own key; aged cases share their image's.
    for case in pa["cases"].as_array().unwrap() {
        assert_eq!(case["shard_key"], case["key"]);
    }
    let aged = plan_of(&plan(&lab, "aged.json", &["create-file", "--fs", "ext4,xfs", "--set", "size=16M", "--set", "method=mkfile,write-64k", "--age", "churn", "--repeat", "2"]));
    let mut by_image: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in aged["cases"].as_array().unwrap() {
        by_image.entry(case["shard_key"].as_str().unwrap().into()).or_default().push(case["key"].as_str().unwrap().into());
    }
    assert_eq!(by_image.len(), 2, "one aged image per file system: {by_image:?}");
    assert!(by_image.values().all(|cases| cases.len() == 4), "{by_image:?}");
    let images = plan_of(&plan(&lab, "images.json", &["create-file", "--fs", "ext4", "--set", "size=16M", "--age", "churn", "--age-images", "2", "--repeat", "2"]));
    let image_keys: BTreeSet<_> = images["cases"].as_array().unwrap().iter().map(|c| c["shard_key"].as_str().unwrap()).collect();
    assert_eq!(image_keys.len(), 2, "each aged image its own key");
    // Shards partition the cases, and an image's cases share one.
    for n in 1..=5 {
        let mut seen = 0;
        for k in 1..=n {
            seen += aged["cases"].as_array().unwrap().iter().filter(|c| shard_of(c["shard_key"].as_str().unwrap(), n) == k).count();
        }
        assert_eq!(seen, 8, "every case in exactly one of {n} shards");
        for cases in by_image.values() {
            let shards: BTreeSet<u32> = aged["cases"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| cases.contains(&c["key"].as_str().unwrap().to_string()))
                .map(|c| shard_of(c["shard_key"].as_str().unwrap(), n))
                .collect();
            assert_eq!(shards.len(), 1, "an aged image's cases in one shard of {n}");
        }
    }
    lab.assert_nothing_left("after planning");
}

#[test]
fn a_plan_refuses_what_it_cannot_keep_and_a_run_of_it_what_it_decides() {
    if !root_or_skip("shard_refusals") {
        return;
    }
    let lab = Lab::new();
    let p = plan(&lab, "p.json", &["replace-files", "--fs", "ext4"]);
    let p = p.to_str().unwrap();
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let out = lab.expect(args, 2);
        assert!(text(&out).contains(says), "{args:?} should say {says:?}:\n{}", text(&out));
    };
    refused(&["plan", "replace-files", "--tag", "x", "-o", "/dev/null"], "--tag: a plan keeps the cases");
    refused(&["plan", "replace-files", "--store", "/tmp/x.db", "-o", "/dev/null"], "give --store to `fslab run --plan`");
    refused(&["run", "--plan", p, "--fs", "xfs", "--scratch", scratch], "--fs with --plan: the plan decides the cases");
    refused(&["run", "--plan", p, "--repeat", "2", "--scratch", scratch], "--repeat with --plan");
    refused(&["run", "--plan", p, "replace-files", "--scratch", scratch], "SCENARIO with --plan");
    refused(&["run", "replace-files", "--shard", "1/2", "--scratch", scratch], "--plan");
    refused(&["run", "--plan", p, "--shard", "3/2", "--scratch", scratch], "K must be a whole number from 1 to 2");
    let mut c = lab.command();
    c.args(["run", "--plan", p, "--shard", "slurm/4", "--scratch", scratch]).env_remove("SLURM_ARRAY_TASK_ID");
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("SLURM_ARRAY_TASK_ID is not set"), "{}", text(&out));
    let out = lab.command().args(["run", "--plan", p, "--shard", "k8s/4", "--scratch", scratch]).env("JOB_COMPLETION_INDEX", "4").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("JOB_COMPLETION_INDEX=\"4\" is no index from 0 to 3"), "{}", text(&out));
    // A plan changed after it was written, and another fslab's.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    doc["plan"]["cases"][0]["params"]["files"] = 2000.into();
    let edited = lab.dir.path().join("edited.json");
    std::fs::write(&edited, doc.to_string()).unwrap();
    refused(&["run", "--plan", edited.to_str().unwrap(), "--scratch", scratch], "was changed after `fslab plan` wrote it");
    let mut file: fslab::plan::PlanFile = serde_json::from_value(plan_of(Path::new(p))).unwrap();
    file.fslab = "0.0.1 (0000000)".into();
    file.id = file.id_of();
    let other = lab.dir.path().join("other.json");
    std::fs::write(&other, fslab::json_document("plan", &file)).unwrap();
    refused(&["run", "--plan", other.to_str().unwrap(), "--scratch", scratch], "a plan of fslab 0.0.1 (0000000)");
    // A plan file of nobody's decides nothing root makes or sets.
    let theirs = lab.dir.path().join("theirs.json");
    std::fs::copy(p, &theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let out = lab.expect(&["run", "--plan", theirs.to_str().unwrap(), "--scratch", scratch], 3);
    assert!(text(&out).contains("theirs.json"), "{}", text(&out));
    // Nothing was stored by any of them.
    assert!(!lab.store().exists());
    lab.assert_nothing_left("after the refusals");
}

/// Every case of `show --json` by (plan key, repeat).
fn cases_by_key(shown: &Value) -> BTreeMap<(String, u64), Value> {
    shown["run"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| ((c["plan_key"].as_str().unwrap().to_string(), c["repeat"].as_u64().unwrap()), c.clone()))
        .collect()
}

/// The verdict matrix a report page draws: each cell's seed, place and
/// word, in order (the figures under the words are the cases' own).
fn matrix(page: &str) -> Vec<(String, String, String)> {
    let start = page.find(r#"<section class="matrix" id="verdicts">"#).expect("a verdict matrix");
    let section = &page[start..start + page[start..].find("</section>").unwrap()];
    let attribute = |text: &str, name: &str| text.split(&format!("{name}=\"")).nth(1).and_then(|t| t.split('"').next()).unwrap_or("").to_string();
    let mut cells = Vec::new();
    for body in section.split("<tbody").skip(1) {
        let seed = attribute(body, "data-seed");
        for cell in body.split("<td ").skip(1) {
            cells.push((seed.clone(), attribute(cell, "data-place"), attribute(cell, "data-verdict")));
        }
    }
    cells
}

#[test]
fn a_plan_in_two_shards_stores_what_it_stores_unsharded_once_however_often_a_shard_runs() {
    if !root_or_skip("shard_two_shards") {
        return;
    }
    let lab = Lab::new();
    let p = plan(
        &lab,
        "p.json",
        &["replace-files", "create-file", "--preset", "seeds", "--fs", "ext4,xfs", "--set", "size=32M", "--set", "method=mkfile,write-64k"],
    );
    let planned = plan_of(&p);
    let all = keys(&planned);
    let p = p.to_str().unwrap();
    let (sharded, whole) = (lab.dir.path().join("sharded.db"), lab.dir.path().join("whole.db"));
    let (sharded, whole) = (sharded.to_str().unwrap(), whole.to_str().unwrap());
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    // One aged image per file system for all three runs, in a cache of the
    // lab's own (a flag of this machine's, which --plan takes).
    let cache = lab.dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    for shard in ["1/2", "2/2"] {
        lab.expect(&["run", "--plan", p, "--shard", shard, "--store", sharded, "--scratch", scratch, "--age-cache", cache, "--tag", "sharded"], 0);
    }
    lab.expect(&["run", "--plan", p, "--store", whole, "--scratch", scratch, "--age-cache", cache], 0);
    let a = common::fslab_json(&["show", p, "--store", sharded, "--json"]);
    let b = common::fslab_json(&["show", p, "--store", whole, "--json"]);
    let (a_cases, b_cases) = (cases_by_key(&a), cases_by_key(&b));
    assert_eq!(a_cases.keys().cloned().collect::<Vec<_>>(), { let mut k = all.clone(); k.sort(); k }, "every case of the plan, once");
    assert_eq!(a_cases.keys().collect::<Vec<_>>(), b_cases.keys().collect::<Vec<_>>());
    assert_eq!(a["run"]["complete"], true);
    // The shown run follows the plan's order.
    let order: Vec<(String, u64)> =
        a["run"]["cases"].as_array().unwrap().iter().map(|c| (c["plan_key"].as_str().unwrap().into(), c["repeat"].as_u64().unwrap())).collect();
    assert_eq!(order, all);
    let mut exact = 0;
    for (key, case) in &a_cases {
        let other = &b_cases[key];
        assert_eq!(case["status"], "ok", "{case}");
        for (name, figure) in case["figures"].as_object().unwrap() {
            let theirs = &other["figures"][name];
            if figure["kind"] == "exact" && theirs["kind"] == "exact" {
                assert_eq!(figure["value"], theirs["value"], "{key:?} {name}: the same exact figure sharded and not");
                exact += 1;
            }
        }
    }
    assert!(exact > 50, "only {exact} exact figures compared");
    // Each shard's run holds its shard's cases.
    let mut store = fslab::store::Store::open(sharded).unwrap();
    let (runs, stored) = store.plan_rows(planned["id"].as_str().unwrap()).unwrap();
    assert_eq!(runs.len(), 2);
    for run in &runs {
        let k: u32 = run.shard.as_deref().unwrap().split('/').next().unwrap().parse().unwrap();
        for row in stored.iter().filter(|r| r.run_id == run.run_id) {
            let case = planned["cases"].as_array().unwrap().iter().find(|c| c["key"] == row.key.as_str()).unwrap();
            assert_eq!(shard_of(case["shard_key"].as_str().unwrap(), 2), k);
        }
        assert_eq!(run.environment.host.as_deref(), Some(rustix::system::uname().nodename().to_str().unwrap()));
    }
    // Shard 2 again: a case count that does not move.
    lab.expect(&["run", "--plan", p, "--shard", "2/2", "--store", sharded, "--scratch", scratch, "--age-cache", cache], 0);
    let (runs, again) = store.plan_rows(planned["id"].as_str().unwrap()).unwrap();
    assert_eq!((runs.len(), again.len()), (3, all.len()), "a shard run again replaces its cases");
    drop(store);
    let status = common::fslab_json(&["status", p, "--store", sharded, "--json"]);
    assert_eq!(status["status"]["complete"], true, "{status}");
    assert_eq!(status["status"]["done"].as_u64(), Some(all.len() as u64));
    // What the plan holds now: shard 2's cases measured anew. Their exact
    // figures are the ones measured before; a word a timing decides may
    // not be, so the page is held to a `show` of the same cases.
    let a = common::fslab_json(&["show", p, "--store", sharded, "--json"]);
    let again = cases_by_key(&a);
    assert_eq!(again.keys().collect::<Vec<_>>(), a_cases.keys().collect::<Vec<_>>());
    for (key, case) in &again {
        for (name, figure) in case["figures"].as_object().unwrap().iter().filter(|(_, f)| f["kind"] == "exact") {
            let before = &a_cases[key]["figures"][name];
            if before["kind"] == "exact" {
                assert_eq!(figure["value"], before["value"], "{key:?} {name}: an exact figure moved when shard 2 ran again");
            }
        }
    }
    // The report of the sharded plan draws the unsharded run's verdicts.
    let (page_a, page_b) = (lab.dir.path().join("a.html"), lab.dir.path().join("b.html"));
    common::fslab_expect(&["report", p, "--store", sharded, "-o", page_a.to_str().unwrap()], 0);
    common::fslab_expect(&["report", p, "--store", whole, "-o", page_b.to_str().unwrap()], 0);
    let (page_a, page_b) = (std::fs::read_to_string(page_a).unwrap(), std::fs::read_to_string(page_b).unwrap());
    let sorted = |mut cells: Vec<(String, String, String)>| {
        cells.sort();
        cells
    };
    let (cells_a, cells_b) = (sorted(matrix(&page_a)), sorted(matrix(&page_b)));
    assert!(cells_a.iter().any(|(seed, place, _)| seed == "003" && place == "xfs@age=churn,fill=80%"), "{cells_a:?}");
    // The page draws the whole plan's verdicts, judged over every shard's
    // cases, as `show` gives them.
    let verdicts = |shown: &Value| -> Vec<(String, String, String)> {
        shown["run"]["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|v| {
                let seed = v["seed"].as_str().unwrap().to_string();
                v["places"].as_array().unwrap().iter().map(move |p| (seed.clone(), p["target"].as_str().unwrap().into(), p["judged"].as_str().unwrap().into()))
            })
            .collect()
    };
    assert_eq!(cells_a, sorted(verdicts(&a)), "the sharded plan's page draws its verdicts");
    assert_eq!(cells_b, sorted(verdicts(&b)));
    // The same cells, and the same word in each wherever an exact figure
    // decides it; a word a timing decides (journal commits, a buffered
    // file's extents) is each measurement's own.
    assert_eq!(cells_a.len(), cells_b.len());
    let timed = |shown: &Value, seed: &str, place: &str| -> bool {
        let verdict = shown["run"]["verdicts"].as_array().unwrap().iter().find(|v| v["seed"] == seed).unwrap();
        let figure = verdict["places"].as_array().unwrap().iter().find(|p| p["target"] == place).unwrap()["figure"].as_str().unwrap_or("").to_string();
        shown["run"]["cases"].as_array().unwrap().iter().filter(|c| fslab::record::Case::place(&serde_json::from_value((*c).clone()).unwrap()) == place && c["scenario"] == verdict["scenario"]).any(|c| c["figures"][&figure]["kind"] != "exact")
    };
    for ((seed, place, word), (seed_b, place_b, word_b)) in cells_a.iter().zip(&cells_b) {
        assert_eq!((seed, place), (seed_b, place_b));
        if word != word_b {
            assert!(timed(&a, seed, place) || timed(&b, seed, place), "{seed} {place}: {word} sharded, {word_b} not, decided by exact figures");
            eprintln!("{seed} {place}: {word} sharded, {word_b} not (a timing decides it)");
        }
    }
    // compare takes the plan as a side; on another kind of machine it says so.
    let same = common::fslab_json(&["compare", p, whole, "--store", sharded, "--json", "--allow-undecided"]);
    let differs = |c: &Value| c["compare"]["differs"].as_array().unwrap().iter().map(|d| d["what"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert!(!differs(&same).contains(&"machine".to_string()), "{}", same["compare"]["differs"]);
    let conn = rusqlite::Connection::open(sharded).unwrap();
    conn.execute("UPDATE runs SET environment = json_set(environment, '$.cpu', 'Other CPU', '$.cpus', 64)", []).unwrap();
    drop(conn);
    let other = common::fslab_json(&["compare", p, whole, "--store", sharded, "--json", "--allow-undecided"]);
    assert!(differs(&other).contains(&"machine".to_string()), "{}", other["compare"]["differs"]);
    lab.assert_nothing_left("after the shards");
}

#[test]
fn a_shard_killed_mid_way_leaves_its_cases_missing_until_it_runs_again() {
    if !root_or_skip("shard_killed") {
        return;
    }
    let lab = Lab::new();
    let p = plan(&lab, "p.json", &["replace-files", "--fs", "ext4,xfs", "--set", "strategy=fsync-each,none", "--repeat", "3"]);
    let planned = plan_of(&p);
    let p = p.to_str().unwrap();
    let store = lab.store();
    let mut c = lab.command();
    c.args(["run", "--plan", p, "--shard", "1/1", "--progress", "json", "--scratch"]).arg(lab.scratch());
    let mut child = Watched::spawn(c.stdout(Stdio::null()));
    // Killed as its fourth case starts.
    child.until_said(Duration::from_secs(120), "no fourth case within two minutes", |line| {
        line.contains(r#""event":"case_start""#) && line.contains(r#""case":4"#)
    });
    child.kill();
    let status = lab.expect(&["status", p], 6);
    let said = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(said.contains("3 done, 0 failed, 9 missing"), "{said}");
    for case in &planned["cases"].as_array().unwrap()[3..] {
        let line = format!("{} replace-files on {} repeat {}", case["key"].as_str().unwrap(), case["target"].as_str().unwrap(), case["repeat"]);
        assert!(said.contains(&line), "{line} not named:\n{said}");
    }
    let json: Value = serde_json::from_slice(&lab.expect(&["status", p, "--json", "--shards", "1"], 6).stdout).unwrap();
    assert!(json["status"]["missing_cases"].as_array().unwrap().iter().all(|c| c["shard"] == "1/1"), "{json}");
    assert_eq!(json["status"]["missing_cases"].as_array().unwrap().len(), 9);
    // Nothing half-written: the stored cases are whole.
    let shown = common::fslab_json(&["show", p, "--store", store.to_str().unwrap(), "--json"]);
    assert_eq!(shown["run"]["complete"], false);
    for case in shown["run"]["cases"].as_array().unwrap() {
        assert_eq!(case["status"], "ok");
        assert!(common::figure(case, "wall_s").is_some() && !case["timeline"].as_array().unwrap().is_empty(), "{case}");
    }
    // The shard again: the plan complete, each case once.
    lab.expect(&["run", "--plan", p, "--shard", "1/1", "--scratch", lab.scratch().to_str().unwrap()], 0);
    let said = String::from_utf8_lossy(&lab.expect(&["status", p], 0).stdout).into_owned();
    assert!(said.contains("12 done, 0 failed, 0 missing"), "{said}");
    let mut s = fslab::store::Store::open(store.to_str().unwrap()).unwrap();
    assert_eq!(s.plan_rows(planned["id"].as_str().unwrap()).unwrap().1.len(), 12);
    lab.assert_nothing_left("after the killed shard and its rerun");
}

#[test]
fn shards_into_postgresql_replace_their_cases_never_add_to_them() {
    if !root_or_skip("shard_postgres") {
        return;
    }
    let Some(db) = TestDatabase::new("shard_postgres") else { return };
    let lab = Lab::new();
    let p = plan(&lab, "p.json", &["replace-files", "--fs", "ext4,xfs", "--set", "strategy=fsync-each,none"]);
    let p = p.to_str().unwrap();
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    for shard in ["1/2", "2/2", "1/2"] {
        lab.expect(&["run", "--plan", p, "--shard", shard, "--store", db.url.as_str(), "--scratch", scratch], 0);
    }
    let status = common::fslab_json(&["status", p, "--store", &db.url, "--json"]);
    assert_eq!((status["status"]["done"].as_u64(), status["status"]["missing"].as_u64()), (Some(4), Some(0)), "{status}");
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let row = client.query_one("SELECT COUNT(*), COUNT(DISTINCT (plan_key, repeat)) FROM cases", &[]).unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (4, 4));
    let shown = common::fslab_json(&["show", p, "--store", &db.url, "--json"]);
    assert_eq!(shown["run"]["cases"].as_array().unwrap().len(), 4);
    lab.assert_nothing_left("after the shards into PostgreSQL");
}
