//! One plan over a real Slurm job array into one PostgreSQL store: the
//! example batch script (`examples/slurm-seeds.sbatch`) submitted as an
//! array of 4 shards to the single-node cluster scripts/slurm.sh starts
//! (scripts/test.sh does, and exports SLURM_CONF), each task running its
//! shard of a small plan. Afterwards the store holds exactly the plan's
//! cases, each once; their exact figures are those of the same plan run
//! unsharded into another database; running a shard again through Slurm
//! changes no count; `status` says the plan is done. Skips without root, a
//! cluster or a server; with FSLAB_REQUIRE_SLURM=1 (CI) a missing cluster
//! fails.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{Lab, TestDatabase, root_or_skip};
use serde_json::Value;

/// Whether a Slurm cluster was given (FSLAB_TEST_SLURM=1 and SLURM_CONF);
/// prints why not, and fails instead under FSLAB_REQUIRE_SLURM=1.
fn slurm_or_skip(test: &str) -> bool {
    let given = std::env::var("FSLAB_TEST_SLURM").is_ok_and(|v| v == "1") && std::env::var_os("SLURM_CONF").is_some();
    if given && common::have("sbatch") {
        return true;
    }
    let why = "set FSLAB_TEST_SLURM=1 and SLURM_CONF (scripts/slurm.sh start starts a cluster and prints its slurm.conf)";
    if std::env::var("FSLAB_REQUIRE_SLURM").is_ok_and(|v| v == "1") {
        panic!("{test}: no Slurm cluster but FSLAB_REQUIRE_SLURM=1: {why}");
    }
    eprintln!("SKIPPED {test}: {why}");
    false
}

/// Submit the example batch script as `array` (`0-3`), for a plan of
/// `shards` shards, and wait for every task (10 minutes at most: then the
/// job is cancelled and the test fails, rather than waiting on a cluster
/// that cannot run it); its tasks' output is in `out` as shard-INDEX.out,
/// shown when a task failed.
fn submit(lab: &Lab, plan: &Path, shards: u32, array: &str, store: &str, out: &Path) {
    use std::io::BufRead as _;
    use std::process::Stdio;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/slurm-seeds.sbatch");
    let bin = Path::new(env!("CARGO_BIN_EXE_fslab")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut sbatch = Command::new("sbatch")
        .args(["--wait", "--parsable", &format!("--array={array}"), "--job-name=fslab-shard-test"])
        .arg(format!("--output={}/shard-%a.out", out.display()))
        .arg(format!("--chdir={}", out.display()))
        .arg(&script)
        .env("PATH", path)
        .env("PLAN", plan)
        .env("SHARDS", shards.to_string())
        .env("FSLAB_STORE", store)
        .env("FSLAB_SCRATCH", lab.scratch())
        .env("FSLAB_STATE_DIR", lab.state())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sbatch");
    // --parsable prints the job's id once it is queued, then waits.
    let mut job = String::new();
    std::io::BufReader::new(sbatch.stdout.take().unwrap()).read_line(&mut job).unwrap();
    let job = job.trim().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let status = loop {
        if let Some(status) = sbatch.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let queue = Command::new("squeue").output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
            let _ = Command::new("scancel").arg(&job).status();
            let _ = sbatch.kill();
            let _ = sbatch.wait();
            panic!("job {job:?} ({array}) not done in 10 minutes; cancelled. squeue:\n{queue}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    if !status.success() {
        let mut told = format!("sbatch --array={array} {} (job {job}): {status:?}\n", script.display());
        for name in common::names(out) {
            told += &format!("--- {name}\n{}", std::fs::read_to_string(out.join(&name)).unwrap_or_default());
        }
        panic!("{told}");
    }
}

/// `fslab ARGS --json` in the lab, insisting on `code`, parsed.
fn json(lab: &Lab, args: &[&str], code: i32) -> Value {
    let out = lab.expect(args, code);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout)))
}

/// Each stored case of a plan by (key, repeat): its exact figures' values.
fn exact_figures(shown: &Value) -> BTreeMap<(String, u64), BTreeMap<String, Value>> {
    let mut by_case = BTreeMap::new();
    for case in shown["run"]["cases"].as_array().expect("run.cases") {
        let key = (case["plan_key"].as_str().expect("a plan's case has its key").to_string(), case["repeat"].as_u64().unwrap());
        let exact: BTreeMap<String, Value> = case["figures"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, f)| f["kind"] == "exact")
            .map(|(name, f)| (name.clone(), f["value"].clone()))
            .collect();
        assert!(by_case.insert(key.clone(), exact).is_none(), "case {key:?} shown twice");
    }
    by_case
}

/// The (key, repeat) of every case row the database holds for `plan`.
fn rows(url: &str, plan: &str) -> Vec<(String, i64)> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("reach the test database");
    let mut rows: Vec<(String, i64)> = client
        .query("SELECT plan_key, repeat FROM cases WHERE plan_id = $1", &[&plan])
        .expect("read the cases")
        .iter()
        .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_plan_sharded_over_a_slurm_job_array_stores_each_case_once_with_the_unsharded_figures() {
    if !root_or_skip("shard_slurm") || !slurm_or_skip("shard_slurm") {
        return;
    }
    let (Some(sharded), Some(whole)) = (TestDatabase::new("shard_slurm"), TestDatabase::new("shard_slurm_whole")) else { return };
    let lab = Lab::new();
    let out = lab.dir.path().join("slurm");
    std::fs::create_dir(&out).unwrap();
    // 16 cases: two strategies and two ways to make a file, on ext4 and
    // xfs, twice each.
    let plan = lab.dir.path().join("small.plan");
    let plan_arg = plan.to_str().unwrap();
    let flags = [
        "replace-files", "create-file", "--fs", "ext4,xfs", "--set", "strategy=fsync-each,writeback-batch",
        "--set", "method=write-1g,mkfile", "--set", "size=16M", "--size", "512M", "--repeat", "2",
    ];
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    let mut planning = vec!["plan"];
    planning.extend(flags);
    planning.extend(["-o", plan_arg, "--scratch", scratch, "--json"]);
    let planned = json(&lab, &planning, 0);
    let id = planned["plan"]["id"].as_str().unwrap().to_string();
    let mut expected: Vec<(String, i64)> = planned["plan"]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["key"].as_str().unwrap().to_string(), c["repeat"].as_i64().unwrap()))
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 16, "{planned}");

    let started = std::time::Instant::now();
    submit(&lab, &plan, 4, "0-3", &sharded.url, &out);
    eprintln!("shard_slurm: 4 shards of {} cases through sbatch --wait in {:.1} s", expected.len(), started.elapsed().as_secs_f64());
    assert_eq!(rows(&sharded.url, &id), expected, "the store holds exactly the plan's cases, each once");
    let status = json(&lab, &["status", plan_arg, "--store", &sharded.url, "--json"], 0);
    assert_eq!((&status["status"]["done"], &status["status"]["missing"]), (&Value::from(16), &Value::from(0)), "{status}");
    let machines = status["status"]["machines"].as_array().unwrap();
    let host = common::run("hostname", &["-s"]);
    assert!(machines.iter().all(|m| m["host"].as_str().is_some_and(|h| h.split('.').next() == Some(host.trim()))), "{status}");
    let shards: Vec<&str> = machines.iter().flat_map(|m| m["shards"].as_array().unwrap()).filter_map(Value::as_str).collect();
    assert!(!shards.is_empty() && shards.iter().all(|s| s.ends_with("/4")), "each run names its shard of 4: {status}");

    // The same plan on this machine, unsharded, into another database.
    lab.expect(&["run", "--plan", plan_arg, "--scratch", scratch, "--store", &whole.url], 0);
    let by_shards = exact_figures(&json(&lab, &["show", &id, "--store", &sharded.url, "--json"], 0));
    let at_once = exact_figures(&json(&lab, &["show", &id, "--store", &whole.url, "--json"], 0));
    assert_eq!(by_shards.len(), 16);
    assert!(by_shards.values().all(|f| !f.is_empty()), "every case has exact figures: {by_shards:?}");
    assert_eq!(by_shards, at_once, "the exact figures of the sharded run and the unsharded one");
    let names: std::collections::BTreeSet<&String> = by_shards.values().flat_map(BTreeMap::keys).collect();
    eprintln!("shard_slurm: {} exact figures alike, of {names:?}", by_shards.values().map(BTreeMap::len).sum::<usize>());

    // Shard 2 of 4 again, through Slurm: its cases replace, never add.
    submit(&lab, &plan, 4, "1", &sharded.url, &out);
    assert_eq!(rows(&sharded.url, &id), expected, "after shard 2 ran again");
    let again = json(&lab, &["status", plan_arg, "--store", &sharded.url, "--json"], 0);
    assert_eq!((&again["status"]["done"], &again["status"]["missing"]), (&Value::from(16), &Value::from(0)), "{again}");
    assert_eq!(exact_figures(&json(&lab, &["show", &id, "--store", &sharded.url, "--json"], 0)).len(), 16);
    lab.assert_nothing_left("shard_slurm");
}
