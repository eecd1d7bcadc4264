//! Nothing is ever left behind: SIGKILL at random points then `fslab
//! cleanup`, and sysctls restored after every way a run can end.
//!
//! Each test uses its own sysctl, so tests running side by side never see
//! each other's values.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::sysctl::{cleanup_when_the_lock_is_free, wait_for as wait_for_sysctl};
use common::{Lab, Watched, root_or_skip};

/// The machine's own value of `key`: read holding the sysctl lock shared,
/// so no other fslab run (another suite's, a user's) has its value set.
fn read_sysctl(key: &str) -> String {
    common::sysctl::quiet(|| common::sysctl::read(key))
}

/// A value different from the current one, valid for a centisecs knob.
fn other_value(current: &str) -> String {
    (current.parse::<u64>().unwrap() + 7).to_string()
}

/// Trace instances a run of fslab process `pid` made (their names carry
/// the run id, which ends in the pid), in the system's tracefs.
fn trace_instances_of(pid: u32) -> Vec<String> {
    let mark = format!("Z-{pid}-");
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains(&mark)).collect())
        .unwrap_or_default()
}

/// `fslab cleanup`'s report, once no other fslab holds the machine's
/// sysctl lock (the suite may share the machine with other runs).
fn cleanup(lab: &Lab) -> String {
    String::from_utf8_lossy(&cleanup_when_the_lock_is_free(lab).stdout).into_owned()
}

/// A small deterministic generator (xorshift), seeded and printed so a
/// failing sequence of kill points can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

#[test]
fn sigkill_at_random_points_then_cleanup_leaves_nothing() {
    if !root_or_skip("sigkill_cleanup") {
        return;
    }
    let key = "vm.dirty_expire_centisecs";
    let original = read_sysctl(key);
    let value = other_value(&original);
    let lab = Lab::new();
    let command = |lab: &Lab| -> Command {
        let mut c = lab.command();
        c.arg("exec").arg("--scratch").arg(lab.scratch()).args(["--progress", "json"]);
        c.args(["--fs", "ext4", "--size", "256M", "--cold-read", "--sysctl", &format!("{key}={value}")]);
        c.args(["--", "sh", "-c", "dd if=/dev/zero of=f bs=1M count=16 conv=fsync 2>/dev/null; sleep 0.2 & wait"]);
        c.stdout(Stdio::null());
        c
    };
    let spawn = |lab: &Lab| -> Child { command(lab).stderr(Stdio::null()).spawn().unwrap() };

    // One whole run, to know how long a run takes (its work: not a wait
    // for another run's sysctl lock).
    let (out, worked) = Watched::spawn(&mut command(&lab)).finish();
    assert!(out.status.success(), "an undisturbed run failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let whole_ms = worked.as_millis() as u64;
    lab.assert_nothing_left("after an undisturbed run");
    assert_eq!(read_sysctl(key), original);

    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    eprintln!("kill points seeded with {seed}, a whole run takes {whole_ms} ms");
    let mut rng = Rng(seed);
    let mut killed_running = 0;
    let mut round = 0;
    // Twenty kills of a live fslab, at points spread over a whole run;
    // a round whose fslab had already finished does not count.
    while killed_running < 20 && round < 60 {
        round += 1;
        let mut child = spawn(&lab);
        let at = rng.below(whole_ms);
        std::thread::sleep(Duration::from_millis(at));
        let still_running = child.try_wait().unwrap().is_none();
        let pid = child.id();
        let _ = child.kill();
        let _ = child.wait();
        killed_running += u32::from(still_running);
        let report = cleanup(&lab);
        let context = format!("round {round}, killed at {at} ms (seed {seed}); cleanup said:\n{report}");
        lab.assert_nothing_left(&context);
        assert_eq!(read_sysctl(key), original, "{context}");
        assert_eq!(trace_instances_of(pid), Vec::<String>::new(), "{context}");
    }
    assert_eq!(killed_running, 20, "only {killed_running} of {round} kills hit a running fslab");
}

#[test]
fn sysctl_is_restored_after_exit_error_sigint_and_sigkill() {
    if !root_or_skip("sysctl_restored") {
        return;
    }
    let key = "vm.dirty_writeback_centisecs";
    let original = read_sysctl(key);
    let value = other_value(&original);
    let setting = format!("{key}={value}");
    let lab = Lab::new();
    let work = lab.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work = work.to_str().unwrap().to_string();

    // Normal exit: the command saw the new value; afterwards the old one.
    let json = lab.exec_json(&["--dir", &work, "--sysctl", &setting, "--", "cat", &format!("/proc/sys/{}", key.replace('.', "/"))], 0);
    assert_eq!(common::cases(&json)[0]["command"]["stdout"].as_str().unwrap().trim(), value);
    assert_eq!(read_sysctl(key), original, "after a normal exit");

    // An error: mkfs refuses a value fslab passes on (its options are
    // checked before anything is made, their values are mkfs's to judge);
    // the case fails (exit 4).
    let out = lab.exec(&["--fs", "ext4", "--mkfs-opt", "ext4=-m 60", "--sysctl", &setting, "--", "true"]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(read_sysctl(key), original, "after a failed run");

    // SIGINT while the command runs: the command is stopped, everything
    // released, and fslab dies of SIGINT.
    let spawn = || {
        let mut c = lab.command();
        c.arg("exec").arg("--scratch").arg(lab.scratch()).args(["--progress", "json", "--fs", "ext4", "--size", "256M", "--sysctl", &setting]);
        Watched::spawn(c.args(["--", "sleep", "60"]).stdout(Stdio::null()))
    };
    let mut child = spawn();
    wait_for_sysctl(key, &value, &mut child);
    // Let it reach the command.
    child.until(Duration::from_secs(30), "the command never started", || !common::processes_in(&lab.scratch()).is_empty());
    let started = Instant::now();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let (out, _) = child.finish();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(20), "SIGINT did not stop the 60 s command");
    assert_eq!(read_sysctl(key), original, "after SIGINT");
    lab.assert_nothing_left("after SIGINT");

    // SIGKILL: the value stays until cleanup puts it back.
    let mut child = spawn();
    wait_for_sysctl(key, &value, &mut child);
    child.kill();
    // Nothing of this run's can restore it; another fslab starting on the
    // machine meanwhile (the next start restores what a dead run left)
    // may have, before the read below or between it and the cleanup, and
    // then there is nothing left for cleanup to say.
    let left = read_sysctl(key);
    assert!(left == value || left == original, "{key} reads {left}");
    let report = cleanup(&lab);
    if left == value {
        assert!(report.contains(key) || report.trim() == "nothing to clean up", "{report}");
    }
    assert_eq!(read_sysctl(key), original, "after SIGKILL and cleanup");
    lab.assert_nothing_left("after SIGKILL and cleanup");
}

#[test]
fn the_next_start_releases_what_a_killed_run_left() {
    if !root_or_skip("next_start_cleans") {
        return;
    }
    let lab = Lab::new();
    let mut c = lab.command();
    c.arg("exec").arg("--scratch").arg(lab.scratch()).args(["--progress", "json", "--fs", "ext4", "--size", "256M", "--", "sleep", "60"]);
    let mut child = Watched::spawn(c.stdout(Stdio::null()));
    child.until(Duration::from_secs(30), "never mounted", || !common::mounts_under(&lab.scratch()).is_empty());
    child.kill();
    assert!(!common::mounts_under(&lab.scratch()).is_empty(), "the mount outlives a SIGKILL");
    // A reading command is no start: it leaves the dead run alone.
    let out = lab.command().args(["map", "/proc/self/exe"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("dead run"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!common::mounts_under(&lab.scratch()).is_empty(), "map released a dead run's mount");
    // A command that makes targets is.
    let work = common::temp::dir("next-start");
    let out = lab.command().arg("exec").arg("--dir").arg(work.path()).args(["--no-store", "--", "true"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("dead run"), "{}", String::from_utf8_lossy(&out.stderr));
    lab.assert_nothing_left("after the next start");
}

/// A dead run's ledger, crafted: its owner long gone (no process holds its
/// lock) and one empty folder it "made" in its scratch folder (the parent
/// of `made`, made 0700), recorded with the proofs fslab writes.
fn dead_ledger(state: &std::path::Path, made: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    std::fs::create_dir_all(state).unwrap();
    let scratch = made.parent().unwrap();
    std::fs::DirBuilder::new().mode(0o700).create(scratch).unwrap();
    std::fs::create_dir(made).unwrap();
    let id = |p: &std::path::Path| {
        let m = std::fs::metadata(p).unwrap();
        serde_json::json!({"dev": m.dev(), "ino": m.ino()})
    };
    let ledger = state.join("20261121T000000Z-1-deadbeef.ledger");
    let lines = [
        serde_json::json!({"owner": {"pid": i32::MAX, "start_ticks": 1, "format": 2}}),
        serde_json::json!({"scratch": {"path": scratch.canonicalize().unwrap(), "id": id(scratch)}}),
        serde_json::json!({"make": {"mount_point": made}}),
        serde_json::json!({"proved": {"entry": 0, "proof": {"file": id(made)}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&ledger, text).unwrap();
    ledger
}

#[test]
fn reading_commands_leave_dead_runs_alone_and_cleanup_releases_them() {
    let dir = common::temp::dir("dead-ledger");
    let state = dir.path().join("state");
    let made = dir.path().join("scratch/made");
    let ledger = dead_ledger(&state, &made);
    let before = std::fs::read(&ledger).unwrap();
    let run = dir.path().join("run.json");
    std::fs::write(&run, common::crafted_run_json("20261121T000000Z-2-00000001", true)).unwrap();
    let run = run.to_str().unwrap();
    let store = dir.path().join("none.db");
    let store = store.to_str().unwrap();
    let fslab = |args: &[&str]| {
        let out = common::fslab_command().env("FSLAB_STATE_DIR", &state).args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for args in [
        vec!["map", "/proc/self/exe"],
        vec!["frag", "/proc/self/exe"],
        vec!["free", "/"],
        vec!["list"],
        vec!["runs", "--store", store],
        vec!["show", run],
        vec!["export", run, "--csv"],
        vec!["compare", run, run],
    ] {
        let (code, stderr) = fslab(&args);
        assert!(code.is_some_and(|c| c != 101), "{args:?}: {code:?} {stderr}");
        assert!(!stderr.contains("dead run") && !stderr.contains("deadbeef"), "{args:?} spoke of the dead run: {stderr}");
        assert_eq!(std::fs::read(&ledger).ok().as_deref(), Some(&before[..]), "{args:?} touched the dead run's ledger");
        assert!(made.is_dir(), "{args:?} released what the dead run made");
    }
    let out = common::fslab_command().env("FSLAB_STATE_DIR", &state).arg("cleanup").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("deadbeef"), "cleanup names the dead run: {stdout}");
    assert!(!ledger.exists() && !made.exists(), "cleanup released it: {stdout}");
}
