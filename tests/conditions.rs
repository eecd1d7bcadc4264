//! Conditions as matrix axes: `--memory` runs the work in a memory cgroup
//! fslab makes per case and removes however the run ends; a `--sysctl`
//! list makes one case per value, each put back after its case.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Lab, Watched, cases, figure, have, root_or_skip};

/// The machine's own value of `key`: read holding the sysctl lock shared,
/// so no other fslab run (another suite's, a user's) has its value set.
fn read_sysctl(key: &str) -> String {
    common::sysctl::quiet(|| common::sysctl::read(key))
}

/// The cgroups a run of fslab process `pid` made (named `fslab-RUN-N`,
/// the run id carrying the pid), anywhere under the memory controller.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let Ok(controller) = fslab::ledger::cgroup::memory_controller() else { return Vec::new() };
    let mark = format!("Z-{pid}-");
    let mut found = Vec::new();
    walk(&controller.mount, 0, &mut |p: &Path| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("fslab-") && name.contains(&mark) {
            found.push(p.to_path_buf());
        }
    });
    found
}

fn walk(dir: &Path, depth: u32, seen: &mut dyn FnMut(&Path)) {
    if depth > 6 {
        return;
    }
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            seen(&entry.path());
            walk(&entry.path(), depth + 1, seen);
        }
    }
}

/// The pid in a run id (`20261121T093015Z-4242-9f03a1c2`).
fn pid_of(run: &serde_json::Value) -> u32 {
    run["run"]["id"].as_str().unwrap().split('-').nth(1).unwrap().parse().unwrap()
}

#[test]
fn mmap_fill_fragments_under_a_memory_limit_and_not_without_one() {
    if !root_or_skip("memory_limit") || !have("mkfs.xfs") || fslab::ledger::cgroup::memory_controller().is_err() {
        return;
    }
    let lab = Lab::new();
    // Measured here: 65,536 extents (one per 4 KiB page) under 192M, 1
    // without a limit; the seed's scattered order (the default).
    let limited = lab.run_json(&["mmap-fill", "--fs", "xfs", "--set", "size=256M", "--memory", "192M"], 0);
    let case = &cases(&limited)[0];
    assert_eq!(case["conditions"], serde_json::json!({"memory": "192M"}));
    let (extents, perfection) = (figure(case, "extents").unwrap(), figure(case, "perfection").unwrap());
    assert!(extents >= 10.0 * perfection, "under 192M: {extents} extents, perfection {perfection}");
    assert_eq!(figure(case, "memory_limit_bytes"), Some((192u64 << 20) as f64));
    let peak = figure(case, "memory_peak_bytes").unwrap();
    assert!(peak > 0.0 && peak <= (192u64 << 20) as f64, "peak {peak}");
    let cgroup = case["target"]["memory_cgroup"].as_str().unwrap();
    let id = limited["run"]["id"].as_str().unwrap();
    assert!(cgroup.contains(&format!("fslab-{id}-1")) && (cgroup.starts_with("v1 ") || cgroup.starts_with("v2 ")), "{cgroup}");
    assert_eq!(cgroups_of(pid_of(&limited)), Vec::<PathBuf>::new(), "a cgroup is left after a normal exit");
    lab.assert_nothing_left("after a run under --memory");
    // The text table names the place.
    let shown = String::from_utf8_lossy(&lab.expect(&["show", id], 0).stdout).into_owned();
    assert!(shown.contains("xfs@192M") && shown.contains("peak MiB"), "{shown}");

    let free = lab.run_json(&["mmap-fill", "--fs", "xfs", "--set", "size=256M"], 0);
    let case = &cases(&free)[0];
    let (extents, perfection) = (figure(case, "extents").unwrap(), figure(case, "perfection").unwrap());
    assert!(extents <= 4.0, "without a limit: {extents} extents, perfection {perfection}");
    assert!(case.get("conditions").is_none() && case["figures"].get("memory_limit_bytes").is_none());
}

#[test]
fn the_memory_cgroup_and_its_ledger_entry_are_gone_after_sigint_and_after_sigkill_and_cleanup() {
    if !root_or_skip("memory_cgroup_released") || fslab::ledger::cgroup::memory_controller().is_err() {
        return;
    }
    let lab = Lab::new();
    let work = lab.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let spawn = || {
        let mut c = lab.command();
        c.args(["exec", "--no-store", "--progress", "json", "--memory", "64M", "--dir"]).arg(&work).args(["--", "sleep", "60"]);
        Watched::spawn(c.stdout(Stdio::null()))
    };
    // Until the command runs inside the cgroup, limited as asked.
    let wait_inside = |run: &mut Watched| -> PathBuf {
        let pid = run.id();
        let mut inside = None;
        run.until(Duration::from_secs(30), "the cgroup never held the command", || {
            let Some(cgroup) = cgroups_of(pid).pop() else { return false };
            let procs = std::fs::read_to_string(cgroup.join("cgroup.procs")).unwrap_or_default();
            if procs.split_whitespace().count() < 2 {
                return false;
            }
            let limit = std::fs::read_to_string(cgroup.join("memory.limit_in_bytes"))
                .or_else(|_| std::fs::read_to_string(cgroup.join("memory.max")))
                .unwrap();
            assert_eq!(limit.trim(), (64u64 << 20).to_string());
            inside = Some(cgroup);
            true
        });
        inside.unwrap()
    };

    let mut child = spawn();
    let cgroup = wait_inside(&mut child);
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let (out, _) = child.finish();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!cgroup.exists(), "{} is left after SIGINT", cgroup.display());
    lab.assert_nothing_left("after SIGINT");

    let mut child = spawn();
    let cgroup = wait_inside(&mut child);
    child.kill();
    assert!(cgroup.exists(), "nothing can remove the cgroup before cleanup runs");
    let out = lab.command().arg("cleanup").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(report.contains("memory cgroup"), "{report}");
    assert!(!cgroup.exists(), "{} is left after SIGKILL and cleanup", cgroup.display());
    lab.assert_nothing_left("after SIGKILL and cleanup");
}

#[test]
fn a_sysctl_list_is_one_case_per_value_each_put_back() {
    if !root_or_skip("sysctl_list") {
        return;
    }
    let key = "vm.dirty_expire_centisecs";
    let original = read_sysctl(key);
    let n: u64 = original.parse().unwrap();
    let (a, b) = ((n + 11).to_string(), (n + 13).to_string());
    let lab = Lab::new();
    let work = lab.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work = work.to_str().unwrap();
    let proc_file = format!("/proc/sys/{}", key.replace('.', "/"));
    let json = lab.exec_json(&["--dir", work, "--sysctl", &format!("{key}={a},{b}"), "--", "cat", &proc_file], 0);
    let all = cases(&json);
    assert_eq!(all.len(), 2);
    for (case, value) in all.iter().zip([&a, &b]) {
        assert_eq!(case["conditions"], serde_json::json!({key: value}));
        assert_eq!(case["command"]["stdout"].as_str().unwrap().trim(), value.as_str());
    }
    assert_eq!(json["run"]["sysctls"], serde_json::json!([]), "a list is per case, not run-wide");
    assert_eq!(read_sysctl(key), original, "after the run");
    let shown = String::from_utf8_lossy(&lab.expect(&["show", json["run"]["id"].as_str().unwrap()], 0).stdout).into_owned();
    assert!(shown.contains(&format!("dir@{key}={a}")) && shown.contains(&format!("dir@{key}={b}")), "{shown}");

    // One value stays run-wide, as before conditions.
    let json = lab.exec_json(&["--dir", work, "--sysctl", &format!("{key}={a}"), "--", "cat", &proc_file], 0);
    assert!(cases(&json)[0].get("conditions").is_none());
    assert_eq!(json["run"]["sysctls"], serde_json::json!([[key, a]]));
    assert_eq!(read_sysctl(key), original, "after the run-wide one");
    lab.assert_nothing_left("after the sysctl runs");
}
