//! Debian's kernels by name (`debian:NAME`), through the real binary as
//! root: a range listed in Debian's order, wrong names and a backwards
//! range refused with what to write (exit 2), a real fetch into a kernel
//! cache of the test's own, by two callers at once (one fetches, the other
//! waits and finds it), and the entry used again with no apt at all.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};

use common::{Lab, fslab_command, root_or_skip, temp};
use serde_json::Value;

/// Whether apt knows Debian 12's kernels here; a test that needs them
/// skips with the reason where it may, and fails under CI
/// (`FSLAB_REQUIRE_ROOT_TESTS`), whose setup fetches apt's lists.
fn apt_knows_kernels(test: &str) -> bool {
    if !root_or_skip(test) {
        return false;
    }
    let out = Command::new("apt-cache").args(["search", "--names-only", r"^linux-image-6\.1\.0-[0-9]+-amd64$"]).output();
    if out.is_ok_and(|o| !o.stdout.is_empty()) {
        return true;
    }
    if std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_some() {
        panic!("{test}: apt knows no linux-image-6.1.0-N-amd64 package (scripts/setup.sh runs apt-get update)");
    }
    eprintln!("skipping {test}: apt knows no Debian kernel here (apt-get update)");
    false
}

/// A folder of the test's own and the kernel cache in it (not made yet),
/// where apt knows Debian's kernels; `None` where the test skips.
fn kernel_cache(test: &str) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !apt_knows_kernels(test) {
        return None;
    }
    let dir = temp::dir("debian");
    let cache = dir.path().join("kernels");
    Some((dir, cache))
}

/// `fslab ARGS --kernel-cache CACHE`, run to its end.
fn kernels(args: &[&str], cache: &Path) -> Output {
    fslab_command().arg("kernels").args(args).arg("--kernel-cache").arg(cache).output().expect("run fslab kernels")
}

fn said(out: &Output) -> String {
    format!("--- stdout\n{}\n--- stderr\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", said(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", said(out)))
}

/// The kernels a `--list` names, in its order.
fn names(listed: &Value) -> Vec<String> {
    listed["kernels_available"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_range_is_listed_inclusive_in_debian_order() {
    let Some((_dir, cache)) = kernel_cache("a_range_is_listed_inclusive_in_debian_order") else { return };
    let listed = json(&kernels(&["--list", "debian:6.1.0-55..6.1.0-57", "--json"], &cache));
    assert_eq!(names(&listed), ["6.1.0-55", "6.1.0-56", "6.1.0-57"]);
    let first = &listed["kernels_available"][0];
    assert_eq!(first["kernel"], "debian:6.1.0-55");
    assert_eq!(first["package"], "linux-image-6.1.0-55-amd64");
    assert_eq!(first["release"], "6.1.0-55-amd64");
    assert_eq!(first["cached"], Value::Null);
    assert!(first["size_bytes"].as_u64().unwrap() > 50 << 20, "{first}");
    assert_eq!(first["sha256"].as_str().unwrap().len(), 64);
    let versions: Vec<&str> = listed["kernels_available"].as_array().unwrap().iter().map(|k| k["version"].as_str().unwrap()).collect();
    for pair in versions.windows(2) {
        let ordered = Command::new("dpkg").args(["--compare-versions", pair[0], "lt", pair[1]]).status().unwrap();
        assert!(ordered.success(), "dpkg does not put {} before {}", pair[0], pair[1]);
    }
    // The same as a table: a row per kernel, in that order, sizes in MiB.
    let out = kernels(&["--list", "debian:6.1.0-55..6.1.0-57"], &cache);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("  6.1.0-")).collect();
    assert_eq!(rows.len(), 3, "{text}");
    for (row, name) in rows.iter().zip(["6.1.0-55", "6.1.0-56", "6.1.0-57"]) {
        assert!(row.trim_start().starts_with(name) && row.contains(" MiB") && row.ends_with(" no"), "{row}");
    }
    assert!(!cache.exists(), "listing made the kernel cache");
}

#[test]
fn wrong_names_and_a_backwards_range_say_what_to_write() {
    let Some((_dir, cache)) = kernel_cache("wrong_names_and_a_backwards_range_say_what_to_write") else { return };
    let refused = |args: &[&str], says: &[&str]| {
        let out = kernels(args, &cache);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", said(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        for words in says {
            assert!(stderr.contains(words), "{args:?}: {words:?} not in:\n{stderr}");
        }
    };
    refused(
        &["--list", "debian:6.1.0-57..6.1.0-55"],
        &["the range runs backwards", "6.1.0-55 (", ") comes before 6.1.0-57 (", "write debian:6.1.0-55..6.1.0-57"],
    );
    refused(&["--list", "debian:6.1.0-999"], &["apt knows no Debian kernel 6.1.0-999", "the nearest are debian:6.1.0-", "fslab kernels --list debian"]);
    refused(&["debian:"], &["debian: names no kernel", "debian:6.1.0-47..6.1.0-57"]);
    refused(&["debian:6.1.0-55,,6.1.0-56"], &["an empty name"]);
    refused(&["debian:../../etc"], &["no Debian kernel name"]);
    refused(&["--list", "ubuntu"], &["give debian, or debian:RANGE"]);
    let both = Command::new("apt-cache").args(["search", "--names-only", r"^linux-image-6\.12\.90\+deb12(\.1)?-amd64$"]).output().unwrap();
    if String::from_utf8_lossy(&both.stdout).lines().count() == 2 {
        refused(&["debian:6.12.90"], &["6.12.90 names 2 kernels", "6.12.90+deb12 (", "6.12.90+deb12.1 (", "give the whole name"]);
    }
    // A run refuses it before anything is made or fetched.
    let lab = Lab::new();
    let cache_arg = cache.to_str().unwrap();
    let scratch = lab.scratch();
    let args = ["run", "create-file", "--fs", "ext4", "--kernel", "debian:6.1.0-999", "--kernel-cache", cache_arg, "--scratch", scratch.to_str().unwrap()];
    let out = lab.expect(&args, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("the nearest are"), "{}", said(&out));
    assert!(!cache.join("debian").read_dir().is_ok_and(|mut d| d.any(|e| !e.unwrap().file_name().to_string_lossy().starts_with('.'))));
    lab.assert_nothing_left("a refused Debian kernel");
}

#[test]
fn a_kernel_is_fetched_once_checked_and_then_used_with_no_apt() {
    let Some((dir, cache)) = kernel_cache("a_kernel_is_fetched_once_checked_and_then_used_with_no_apt") else { return };
    // The newest 6.1 build, which scripts/debian-kernel.sh fetches for the guest tests too.
    let listed = json(&kernels(&["--list", "debian", "--json"], &cache));
    let newest = listed["kernels_available"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|k| k["name"].as_str().unwrap().starts_with("6.1.0-"))
        .expect("a 6.1 kernel")
        .clone();
    let name = newest["name"].as_str().unwrap();
    let given = format!("debian:{name}");
    // Two callers at once: one fetches, the other waits for the cache's
    // lock and finds the entry made.
    let spawn = || {
        fslab_command()
            .args(["kernels", &given, "--json", "--kernel-cache"])
            .arg(&cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (spawn(), spawn());
    let pids = [first.id(), second.id()];
    let outs = [first.wait_with_output().unwrap(), second.wait_with_output().unwrap()];
    let fetching = format!("fetching linux-image-{name}-amd64 {}", newest["version"].as_str().unwrap());
    let fetched: Vec<bool> = outs.iter().map(|o| String::from_utf8_lossy(&o.stderr).contains(&fetching)).collect();
    assert_eq!(fetched.iter().filter(|f| **f).count(), 1, "one caller fetches:\n{}\n{}", said(&outs[0]), said(&outs[1]));
    let entry = cache.canonicalize().unwrap().join("debian").join(name);
    for out in &outs {
        let report = &json(out)["kernels"][0];
        assert_eq!(report["given"], given.as_str());
        assert_eq!(report["debian"]["sha256"], newest["sha256"]);
        assert_eq!(report["debian"]["version"], newest["version"]);
        assert_eq!(report["image"]["release"], format!("{name}-amd64"));
        assert_eq!(report["image"]["path"], entry.join(format!("boot/vmlinuz-{name}-amd64")).to_str().unwrap());
        let missing: Vec<&Value> = report["file_systems"].as_array().unwrap().iter().filter(|f| f["available"] != true).collect();
        assert!(missing.is_empty(), "the pruned tree lacks a file system: {missing:?}");
        if common::have("qemu-system-x86_64") {
            assert_eq!(report["ready"], true, "{report}");
        }
    }
    assert!(String::from_utf8_lossy(&outs.iter().find(|o| String::from_utf8_lossy(&o.stderr).contains(&fetching)).unwrap().stderr)
        .contains("SHA256 as apt's"));
    // The entry: what guests load and its description, nothing else.
    let meta: Value = serde_json::from_slice(&std::fs::read(entry.join("package.json")).unwrap()).unwrap();
    assert_eq!(meta["package"], format!("linux-image-{name}-amd64"));
    assert_eq!(meta["name"], name);
    assert_eq!(meta["sha256"], newest["sha256"]);
    assert_eq!(meta["size_bytes"], newest["size_bytes"]);
    let tree = entry.join(format!("lib/modules/{name}-amd64"));
    assert!(tree.join("kernel/fs/xfs").is_dir() && tree.join("kernel/drivers/virtio").is_dir() && tree.join("modules.builtin").is_file());
    for pruned in ["kernel/sound", "kernel/drivers/gpu", "kernel/net/ipv4", "kernel/arch/x86/kvm"] {
        assert!(!tree.join(pruned).exists(), "{pruned} was not pruned");
    }
    assert!(!entry.join("usr/share/doc").exists());
    let left: Vec<String> = std::fs::read_dir(entry.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".lock" && n != name)
        .collect();
    assert!(left.is_empty(), "left in the cache: {left:?}");
    for pid in pids {
        let downloads = std::fs::read_dir("/var/tmp").unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with(&format!("fslab-apt-{pid}-")));
        assert_eq!(downloads.count(), 0, "a download folder of pid {pid} is left in /var/tmp");
    }
    // Used again with no apt on PATH: nothing asked, nothing fetched, the
    // entry untouched.
    let inode = std::fs::metadata(entry.join("package.json")).unwrap().ino();
    let no_tools = dir.path().join("no-tools");
    std::fs::create_dir(&no_tools).unwrap();
    let out = fslab_command().args(["kernels", &given, "--json", "--kernel-cache"]).arg(&cache).env("PATH", &no_tools).output().unwrap();
    let report = &json(&out)["kernels"][0];
    assert_eq!(report["given"], given.as_str(), "{}", said(&out));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("fetching"), "{}", said(&out));
    assert_eq!(std::fs::metadata(entry.join("package.json")).unwrap().ino(), inode, "the entry was made again");
    // The list says where it is cached.
    let listed = json(&kernels(&["--list", &given, "--json"], &cache));
    assert_eq!(listed["kernels_available"][0]["cached"], entry.to_str().unwrap());
    // A plan of guests under it: the name kept as given, the place its
    // release, nothing fetched again.
    if !common::have("qemu-system-x86_64") {
        return;
    }
    let lab = Lab::new();
    let plan = dir.path().join("plan.json");
    let (scratch, cache_arg) = (lab.scratch(), cache.to_str().unwrap().to_string());
    let kernel_arg = format!("{given},host");
    let args = ["plan", "create-file", "--fs", "ext4", "--set", "size=16M", "--kernel", &kernel_arg, "--kernel-cache", &cache_arg];
    let out = lab.command().args(args).arg("--scratch").arg(&scratch).arg("-o").arg(&plan).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("fetching"), "{}", said(&out));
    let planned: Value = serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    let run_args: Vec<&str> = planned["plan"]["run_args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(run_args.contains(&format!("--kernel={given}").as_str()), "{run_args:?}");
    assert_eq!(planned["plan"]["cases"][0]["condition"], format!("{name}-amd64"));
    lab.assert_nothing_left("a plan under a Debian kernel");
}
