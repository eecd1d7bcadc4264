//! Sysctls come back exactly, whatever was set and however the run ended:
//! the writeback pairs as pairs, a killed holder's values before the next
//! run reads "old" ones, and keys that cannot be set are refused before
//! anything is made. Real sysctls; the machine is put back by a guard even
//! when a test fails.

mod common;

use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::sysctl::{Saved, cleanup_when_the_lock_is_free, path, read, wait_for, write};
use common::{Lab, Watched, root_or_skip};

/// The tests here change the same knobs: one at a time.
static KNOBS: Mutex<()> = Mutex::new(());

fn work(lab: &Lab) -> String {
    let work = lab.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    work.to_str().unwrap().to_string()
}

/// `fslab exec ... -- sleep 60` with `setting`, watched (killed if the
/// test ends first, so a failing test leaves no fslab running on to change
/// sysctls later).
fn spawn_sleeper(lab: &Lab, setting: &str) -> Watched {
    let mut c = lab.command();
    c.args(["exec", "--progress", "json", "--dir", &work(lab), "--sysctl", setting, "--", "sleep", "60"]);
    Watched::spawn(c.stdout(Stdio::null()))
}

#[test]
fn each_writeback_member_comes_back_with_its_partner() {
    if !root_or_skip("sysctl_pairs") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let lab = Lab::new();
    let saved = Saved::now(&[]);
    // From the machine as it is (ratios in force), and from a machine
    // whose limits are given in bytes.
    for bytes_first in [false, true] {
        let _restore = Saved::now(&[]);
        if bytes_first {
            write("vm.dirty_bytes", "268435456");
            write("vm.dirty_background_bytes", "134217728");
        }
        let baseline = Saved::now(&[]);
        for (key, value, reads) in [
            ("vm.dirty_bytes", "96M", "100663296"),
            ("vm.dirty_ratio", "33", "33"),
            ("vm.dirty_background_bytes", "64M", "67108864"),
            ("vm.dirty_background_ratio", "7", "7"),
        ] {
            let setting = format!("{key}={value}");
            let json = lab.exec_json(&["--dir", &work(&lab), "--sysctl", &setting, "--", "cat", &path(key)], 0);
            assert_eq!(common::cases(&json)[0]["command"]["stdout"].as_str().unwrap().trim(), reads);
            assert_eq!(baseline.differences(), Vec::<String>::new(), "after a run with {setting}");

            let mut child = spawn_sleeper(&lab, &setting);
            wait_for(key, reads, &mut child);
            child.kill();
            let out = cleanup_when_the_lock_is_free(&lab);
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(said.contains(key), "{said}");
            assert_eq!(baseline.differences(), Vec::<String>::new(), "after SIGKILL with {setting} and cleanup: {said}");
        }
    }
    assert_eq!(saved.differences(), Vec::<String>::new());
    lab.assert_nothing_left("after the pair runs");
}

#[test]
fn a_run_waiting_for_the_lock_saves_old_values_only_after_a_killed_holder_is_undone() {
    if !root_or_skip("sysctl_lock_race") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let key = "vm.stat_interval";
    let saved = Saved::now(&[key]);
    let original = saved.get(key).to_string();
    let n: u64 = original.parse().unwrap();
    let (held, waiting) = ((n + 7).to_string(), (n + 3).to_string());
    let lab = Lab::new();

    // A holds the lock with its value set.
    let mut a = spawn_sleeper(&lab, &format!("{key}={held}"));
    wait_for(key, &held, &mut a);
    // B waits for the lock; its command reads the value twice, a moment apart.
    let script = format!("cat {p}; sleep 2; cat {p}", p = path(key));
    let mut b = lab.command();
    b.args(["exec", "--json", "--dir", &work(&lab), "--sysctl", &format!("{key}={waiting}"), "--", "sh", "-c", &script]);
    let mut b = Watched::spawn(b.stdout(Stdio::piped()));
    // A is killed only once B says it waits (holding the turnstile alone,
    // B might still find the lock free when it gets to it, on a busy
    // machine).
    b.until_said(Duration::from_secs(30), "the second run never said it waits for the sysctl lock", |l| {
        l.contains("waiting for the machine's sysctl lock")
    });
    a.kill();
    // While B measures, another start must not put A's old value back
    // under it.
    wait_for(key, &waiting, &mut b);
    let out = lab.expect(&["cleanup"], 0);
    assert_eq!(read(key), waiting, "cleanup changed a live run's sysctl: {}", String::from_utf8_lossy(&out.stdout));
    let (out, _) = b.finish();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // It waited, then put back what the killed holder had set, itself.
    assert!(stderr.contains("waiting for the machine's sysctl lock"), "{stderr}");
    // Said by the lock's journal, or by the dead run's ledger when the
    // start's cleanup of dead runs came first (another run held the lock
    // between the two).
    let journal = format!("put back sysctl {key} to {original}");
    let ledger = format!("released sysctl {key} (back to {original})");
    assert!(stderr.contains(&journal) || stderr.contains(&ledger), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen = common::cases(&json)[0]["command"]["stdout"].as_str().unwrap().to_string();
    assert_eq!(seen, format!("{waiting}\n{waiting}\n"), "{stderr}");
    // Back to the machine's own value, with no cleanup in between.
    assert_eq!(read(key), original, "the second run restored the killed run's value: {stderr}");
    assert_eq!(saved.differences(), Vec::<String>::new());
    lab.assert_nothing_left("after the two runs");
}

#[test]
fn keys_that_cannot_be_set_are_refused_before_anything_is_made() {
    if !root_or_skip("sysctl_refused") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let saved = Saved::now(&["vm.swappiness"]);
    let lab = Lab::new();
    let work = work(&lab);
    let check = |setting: &str, code: i32, says: &str| {
        let out = lab.exec(&["--dir", &work, "--sysctl", setting, "--", "true"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{setting}: {stderr}");
        assert!(stderr.contains(says), "{setting}: {stderr}");
        assert_eq!(saved.differences(), Vec::<String>::new(), "{setting}");
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "{setting}: a work folder was made");
    };
    check("kernel.ostype=Plan9", 2, "read-only");
    check("vm.no_such_knob=1", 2, "no such sysctl");
    check("vm.dirty_ratio=30", 0, "");
    check("vm=1", 2, "group");
    check("vm.dirty_ratio=", 2, "no value");
    // Refused only at the write, under the lock, before any target is made;
    // what was written before it is put back.
    check("vm.swappiness=lots", 2, "refused");
    let out = lab.exec(&["--dir", &work, "--sysctl", "vm.swappiness=17", "--sysctl", "vm.dirty_bytes=1", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(saved.differences(), Vec::<String>::new());
    lab.assert_nothing_left("after refused sysctls");
}

#[test]
fn an_entry_that_can_never_be_released_is_reported_once_then_dropped() {
    if !root_or_skip("sysctl_unreleasable") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let saved = Saved::now(&[]);
    let lab = Lab::new();
    // A dead run's ledger (unlocked: its run is gone) that names a
    // read-only key, a key this kernel lacks, and the old form of a pair
    // entry whose value the kernel refuses.
    let lines = [
        r#"{"owner":{"pid":2147483647,"start_ticks":1,"format":2}}"#,
        r#"{"make":{"sysctl":{"key":"kernel.ostype","old":"Plan9"}}}"#,
        r#"{"make":{"sysctl":{"key":"vm.no_such_knob","old":"1"}}}"#,
        r#"{"make":{"sysctl":{"key":"vm.dirty_background_bytes","old":"0"}}}"#,
    ];
    std::fs::write(lab.state().join("dead.ledger"), lines.join("\n") + "\n").unwrap();
    let out = cleanup_when_the_lock_is_free(&lab);
    let said = String::from_utf8_lossy(&out.stdout);
    for says in ["kernel.ostype is read-only", "vm.no_such_knob no longer exists", "vm.dirty_background_ratio"] {
        assert!(said.contains(says), "{says}: {said}");
    }
    assert!(!lab.state().join("dead.ledger").exists());
    // Said once: the next command has nothing to say.
    let out = lab.expect(&["cleanup"], 0);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "nothing to clean up\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(read("kernel.ostype"), "Linux");
    assert_eq!(saved.differences(), Vec::<String>::new());
}

#[test]
fn a_run_in_another_state_folder_waits_says_for_whom_and_stops_at_sigterm() {
    if !root_or_skip("sysctl_machine_lock") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let key = "vm.stat_interval";
    let saved = Saved::now(&[key]);
    let held = (saved.get(key).parse::<u64>().unwrap() + 5).to_string();
    // Two labs: two state folders, as CI beside a developer would have.
    let (a_lab, b_lab) = (Lab::new(), Lab::new());
    let mut a = spawn_sleeper(&a_lab, &format!("{key}={held}"));
    wait_for(key, &held, &mut a);
    let a_pid = a.id();
    // B only measures, from another state folder: it must wait for A.
    let mut b = b_lab.command();
    b.args(["exec", "--dir", &work(&b_lab), "--", "true"]).stdout(Stdio::null());
    let mut b = Watched::spawn(&mut b);
    b.until_said(Duration::from_secs(20), "the waiting run said nothing", |l| l.starts_with("fslab: waiting for "));
    let line = b.lines().into_iter().find(|l| l.starts_with("fslab: waiting for ")).unwrap();
    assert!(line.contains("waiting for the machine's sysctl lock"), "{line}");
    assert!(line.contains(&format!("pid {a_pid} ")) && line.contains("exec"), "it does not say for whom: {line}");
    assert!(b.ended().is_none(), "B did not wait for A");
    // SIGTERM is answered at once, not after A.
    let b_pid = rustix::process::Pid::from_raw(b.id() as i32).unwrap();
    let asked = Instant::now();
    rustix::process::kill_process(b_pid, rustix::process::Signal::TERM).unwrap();
    let (out, _) = b.finish();
    assert!(asked.elapsed() < Duration::from_secs(2), "SIGTERM took {:?}", asked.elapsed());
    assert!(!out.status.success(), "{:?}", out.status);
    assert_eq!(read(key), held, "B changed A's setting");
    a.kill();
    // Waiting for the lock: another suite's or a user's measuring run may
    // hold it shared, and a cleanup that finds it taken puts nothing back.
    cleanup_when_the_lock_is_free(&b_lab);
    assert_eq!(saved.differences(), Vec::<String>::new(), "a killed run's sysctl is not back after another state folder's cleanup");
    // A's own folder still has its ledger: releasing it writes no sysctl.
    write(key, &held);
    a_lab.expect(&["cleanup"], 0);
    assert_eq!(read(key), held, "a ledger put back a value the machine's journal had put back already");
    drop(saved);
    a_lab.assert_nothing_left("after A");
    b_lab.assert_nothing_left("after B");
}

#[test]
fn a_measuring_run_beside_one_setting_writeback_measures_as_alone() {
    if !root_or_skip("sysctl_beside") || !common::have("mkfs.xfs") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let saved = Saved::now(&[]);
    let (measuring, setting) = (Lab::new(), Lab::new());
    let mmap_fill = |lab: &Lab| {
        let json = lab.json("run", &["mmap-fill", "--fs", "xfs", "--set", "size=160M", "--no-store"], 0);
        common::cases(&json).iter().map(|c| common::figure(c, "extents").unwrap()).collect::<Vec<_>>()
    };
    let alone = mmap_fill(&measuring);
    // Another state folder sets writeback to start at once, again and
    // again, for as long as the measuring run goes.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let changer = {
        let (stop, work, mut command) = (stop.clone(), work(&setting), setting.command());
        command.args(["exec", "--dir", &work, "--sysctl", "vm.dirty_background_bytes=1M", "--sysctl", "vm.dirty_bytes=2M"]);
        command.args(["--", "sleep", "0.3"]).stdout(Stdio::null()).stderr(Stdio::null());
        std::thread::spawn(move || {
            let mut runs = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                assert!(command.status().unwrap().success());
                runs += 1;
            }
            runs
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let beside = mmap_fill(&measuring);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let runs = changer.join().unwrap();
    assert!(runs >= 2, "the other run set writeback only {runs} times");
    assert_eq!(beside, alone, "mmap-fill measured beside a run setting writeback is not as alone (extents)");
    assert_eq!(saved.differences(), Vec::<String>::new());
    measuring.assert_nothing_left("after the measuring run");
    setting.assert_nothing_left("after the setting runs");
}

#[test]
fn a_run_whose_cases_set_sysctls_holds_the_lock_alone_only_while_those_cases_run() {
    if !root_or_skip("sysctl_per_case") {
        return;
    }
    let _turn = common::sysctl::one_suite_at_a_time();
    let _one = KNOBS.lock().unwrap_or_else(|p| p.into_inner());
    let saved = Saved::now(&[]);
    let (setting, other) = (Lab::new(), Lab::new());
    // Two cases, each setting writeback for itself and sleeping 3 s.
    let mut first = setting.command();
    first.args(["exec", "--progress", "json", "--dir", &work(&setting), "--no-store"]);
    first.args(["--sysctl", "vm.dirty_background_bytes=33554432,67108864", "--", "sleep", "3"]);
    let mut first = Watched::spawn(first.stdout(Stdio::null()));
    wait_for("vm.dirty_background_bytes", "33554432", &mut first);
    // A run that changes nothing, started during the first case: it gets
    // the lock (shared) when that case ends, and the second case waits
    // for it. Held for the whole run, it would have waited for both.
    let mut second = other.command();
    second.args(["exec", "--progress", "json", "--dir", &work(&other), "--no-store", "--", "sleep", "2"]);
    let mut second = Watched::spawn(second.stdout(Stdio::null()));
    let started = Instant::now();
    let mut second_done = None;
    let mut first_done = None;
    while first_done.is_none() || second_done.is_none() {
        if second_done.is_none() && second.ended().is_some() {
            second_done = Some(started.elapsed());
        }
        if first_done.is_none() && first.ended().is_some() {
            first_done = Some(started.elapsed());
        }
        // Their working time, not their waits for other runs' locks.
        let worked = first.worked().max(second.worked());
        assert!(worked < Duration::from_secs(300), "the runs did not end: {:?} {:?}", first.lines(), second.lines());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(first.ended().unwrap().success() && second.ended().unwrap().success());
    let (first_done, second_done) = (first_done.unwrap(), second_done.unwrap());
    assert!(second_done < first_done, "the other run ended at {second_done:?}, after the run setting sysctls ({first_done:?})");
    assert_eq!(saved.differences(), Vec::<String>::new());
    setting.assert_nothing_left("after the setting run");
    other.assert_nothing_left("after the other run");
}
