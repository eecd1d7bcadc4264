//! `fslab run --kernel`: cases in guests of another kernel, end to end,
//! with the Debian 6.1 kernel the tests fetch once (tests/common/kernel.rs).
//! Under software emulation a guest costs tens of seconds, so the guests
//! of this file run one at a time and the cases stay small.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::kernel::{self, one_guest};
use common::{Lab, Watched, cases, figure};

#[test]
fn replace_files_in_a_guest_and_on_the_host_shows_the_same_commits() {
    let Some((image, _one)) = one_guest("replace_files_in_a_guest_and_on_the_host") else { return };
    let lab = Lab::new();
    let kernels = format!("{},host", image.display());
    let args =
        ["replace-files", "--kernel", &kernels, "--fs", "ext4", "--set", "strategy=fsync-each,writeback-batch", "--disk", "hdd-7200-2009"];
    let json = lab.run_json(&args, 0);
    let all = cases(&json);
    assert_eq!(all.len(), 4, "two strategies under two kernels");
    let host = kernel::host_release();
    let mut guests = 0;
    for case in all {
        assert_eq!(case["status"], "ok", "{case}");
        let release = case["conditions"]["kernel"].as_str().expect("every case names its kernel");
        let commits = figure(case, "journal_commits").expect("journal commits counted");
        match case["params"]["strategy"].as_str().unwrap() {
            "fsync-each" => assert!(commits >= 20.0, "fsync-each under {release}: {commits} commits"),
            _ => assert!(commits <= 3.0, "writeback-batch under {release}: {commits} commits"),
        }
        // The guest is told the drive, and models its own requests on it.
        assert_eq!(case["target"]["disk"], "hdd-7200-2009", "{release}");
        assert!(figure(case, "modelled_work_s").unwrap() > 0.0, "{release}: {}", case["figures"]["modelled_work_s"]);
        assert!(case["requests"].as_array().unwrap().iter().any(|s| s["phase"] == "work" && s["disk"] == "hdd-7200-2009"), "{release}");
        if release == host {
            assert!(case.get("guest").is_none(), "a host case has no guest: {case}");
            continue;
        }
        guests += 1;
        assert!(release.starts_with("6.1.0-"), "{release}");
        let guest = &case["guest"];
        assert_eq!(guest["release"], release);
        assert_eq!(guest["kernel"], image.to_str().unwrap());
        assert_eq!(guest["memory"], "1G");
        assert_eq!(guest["cpus"], 2);
        assert_eq!(guest["emulated"], guest["accel"] == "tcg");
        assert!(guest["wall_s"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(guests, 2);
    // People read the kernel in the place: `ext4@6.1.0-N-amd64`.
    let shown = String::from_utf8(lab.expect(&["show", "last"], 0).stdout).unwrap();
    assert!(shown.contains("ext4@6.1.0-"), "{shown}");
    assert!(shown.contains(&format!("ext4@{host}")), "{shown}");
    lab.assert_nothing_left("after a run with guests");
}

#[test]
fn a_guests_crash_states_are_judged_by_the_guests_own_kernel() {
    let Some((image, _one)) = one_guest("a_guests_crash_states_are_judged_by_the_guests_own_kernel") else { return };
    let lab = Lab::new();
    let args = [
        "replace-files", "--kernel", image.to_str().unwrap(), "--fs", "ext4", "--set", "strategy=fsync-each", "--crash", "flush",
        "--crash-max-states", "6",
    ];
    let json = lab.run_json(&args, 0);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    let release = case["guest"]["release"].as_str().unwrap();
    assert!(release.starts_with("6.1.0-") && release != kernel::host_release(), "{release}");
    assert_eq!(case["conditions"]["crash"], "flush");
    // The host's QEMU logged the guest's disk; the guest's own kernel
    // mounted and checked every state rebuilt from that log.
    let crash = &case["crash"];
    assert!(crash["recorder"].as_str().unwrap().contains("guest's virtio disk"), "{crash}");
    assert_eq!(crash["states"]["kernel"], release, "{crash}");
    assert_eq!(crash["states"]["judged"], 6, "{crash}");
    assert_eq!(figure(case, "crash_states"), Some(6.0));
    assert_eq!(figure(case, "crash_bad"), Some(0.0), "{crash}");
    assert_eq!(figure(case, "crash_durability_violations"), Some(0.0), "{crash}");
    // fsync-each marks each file durable, and the log's figures count the
    // work's flushes (one or more a file), not mkfs's writes.
    assert!(crash["marks"].as_array().unwrap().iter().filter(|m| m["what"].as_str().unwrap().starts_with("durable:")).count() >= 20);
    assert!(figure(case, "log_flushes").unwrap() >= 20.0, "{}", case["figures"]["log_flushes"]);
    // The host replayed the log onto an empty disk and got the disk the
    // guest left: the hash is the disk's, and the case would have failed.
    assert_eq!(crash["end_sha256"].as_str().unwrap().len(), 64, "{crash}");
    assert_ne!(crash["end_sha256"], crash["before_sha256"]);
    lab.assert_nothing_left("after a guest's crash states");
}

#[test]
fn mmap_fill_fragments_in_a_small_guest_and_not_in_a_large_one() {
    let Some((image, _one)) = one_guest("mmap_fill_in_a_small_guest") else { return };
    let lab = Lab::new();
    let image = image.to_str().unwrap();
    let args = ["mmap-fill", "--kernel", image, "--vm-memory", "512M,4G", "--fs", "xfs", "--set", "size=256M"];
    let json = lab.run_json(&args, 0);
    let all = cases(&json);
    assert_eq!(all.len(), 2);
    for case in all {
        let size = case["conditions"]["vm_memory"].as_str().expect("the guest's size is the condition");
        assert_eq!(case["guest"]["memory"], size);
        let extents = figure(case, "extents").expect("extents");
        let perfection = figure(case, "perfection").expect("perfection");
        let early = figure(case, "early_allocated_bytes").expect("the blocks read before msync");
        let touch = figure(case, "touch_s").unwrap_or(f64::NAN);
        eprintln!(
            "mmap-fill 256M on xfs in a {size} guest: {extents} extents, perfection {perfection}, \
             {early} bytes allocated before msync, touch {touch:.1} s"
        );
        // Under emulation the stores take 5-12 s; the flusher's first wake
        // would fall inside them were its timers not stretched with the work.
        if case["guest"]["emulated"] == true {
            let set = case["guest"]["emulation_sysctls"].to_string();
            assert!(set.contains("vm.dirty_writeback_centisecs=5000"), "{set}");
        }
        match size {
            // Measured: 9,218-15,677 extents, all but ~1 MiB allocated in
            // the stores' order as the 512M guest's dirty pages passed its
            // background threshold.
            "512M" => {
                assert!(extents >= 10.0 * perfection, "{extents} extents, perfection {perfection}");
                assert!(early > 128.0 * 1024.0 * 1024.0, "512M: {early} bytes allocated before msync");
            }
            // The 4G guest holds the whole file dirty until msync writes it
            // in page order.
            "4G" => {
                assert!(extents <= 4.0, "4G: {extents} extents ({early} bytes allocated before msync)");
                assert_eq!(early, 0.0, "4G: allocated before msync");
            }
            other => panic!("unexpected size {other}"),
        }
    }
    lab.assert_nothing_left("after guests of two sizes");
}

/// A `console.log` under `dir` that says the guest's init started.
/// A modelled figure repeats to the bit in a guest: create-file's O_DIRECT
/// file on a fresh xfs lands where the work puts it under either kernel,
/// and the guest's fslab, told the run's `--disk`, times it to the same
/// bits as the host's (measured: one extent at byte 98,304, 1.0324847810355
/// s on laptop-5400 under Debian's 6.1 in a TCG guest and under 6.18 here).
#[test]
fn a_guests_modelled_read_of_the_same_layout_is_the_hosts_to_the_bit() {
    let Some((image, _one)) = one_guest("a_guests_modelled_read_of_the_same_layout") else { return };
    let lab = Lab::new();
    let kernels = format!("{},host", image.display());
    let args = ["create-file", "--kernel", &kernels, "--fs", "xfs", "--set", "size=64M", "--set", "method=odirect-64k", "--disk", "laptop-5400"];
    let json = lab.run_json(&args, 0);
    let all = cases(&json);
    assert_eq!(all.len(), 2, "one case under each kernel");
    let layouts: Vec<String> = all.iter().map(|c| c["maps"][0]["extent_list"].to_string()).collect();
    assert_eq!(layouts[0], layouts[1], "the work placed its file alike under both kernels");
    for case in all {
        assert_eq!(case["status"], "ok", "{case}");
        assert_eq!(case["target"]["disk"], "laptop-5400", "the guest was told the run's disk: {case}");
        assert_eq!(case["figures"]["modelled_read_s"]["kind"], "exact", "{case}");
    }
    assert!(all[0].get("guest").is_some() && all[1].get("guest").is_none());
    for name in ["modelled_read_s", "modelled_ideal_s", "modelled_read_ratio"] {
        assert_eq!(all[0]["figures"][name]["value"].to_string(), all[1]["figures"][name]["value"].to_string(), "{name}");
    }
    lab.assert_nothing_left("after a guest and the host modelled one layout");
}

fn guest_started(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().any(|e| {
        std::fs::read_to_string(e.path().join("console.log")).is_ok_and(|c| c.contains("fslab-guest: init"))
    })
}

/// Processes whose command line names `dir` (QEMU names its images and
/// shares there).
fn processes_naming(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(&needle) {
                found.push(cmdline);
            }
        }
    }
    found
}

#[test]
fn a_run_killed_while_its_guest_runs_leaves_nothing_after_cleanup() {
    let Some((image, _one)) = one_guest("a_run_killed_while_its_guest_runs") else { return };
    let lab = Lab::new();
    let mut c = lab.command();
    c.args(["run", "replace-files", "--no-store", "--progress", "json", "--fs", "ext4", "--scratch"]).arg(lab.scratch());
    let mut child = Watched::spawn(c.arg("--kernel").arg(&image).stdout(std::process::Stdio::null()));
    child.until(Duration::from_secs(300), "the guest never started", || guest_started(&lab.scratch()));
    assert!(!processes_naming(lab.dir.path()).is_empty(), "QEMU runs with the lab's images");
    child.kill();
    lab.expect(&["cleanup"], 0);
    // QEMU dies with its parent or at cleanup, whichever comes first.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_naming(lab.dir.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(processes_naming(lab.dir.path()), Vec::<String>::new(), "QEMU left running");
    lab.assert_nothing_left("after SIGKILL during a guest and cleanup");
}

#[test]
fn a_guest_that_outlives_its_timeout_is_killed_and_its_case_quotes_the_console() {
    let Some((image, _one)) = one_guest("a_guest_that_outlives_its_timeout") else { return };
    let lab = Lab::new();
    let image = image.to_str().unwrap();
    // Ten seconds boot the kernel but never load xfs and fill 256 MiB too.
    let args = ["mmap-fill", "--kernel", image, "--fs", "xfs", "--set", "size=256M", "--vm-timeout", "10"];
    let mut c = lab.command();
    c.arg("run").args(args).args(["--json", "--progress", "json", "--scratch"]).arg(lab.scratch());
    let (out, worked) = Watched::spawn(c.stdout(std::process::Stdio::piped())).finish();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(worked < Duration::from_secs(120), "the timeout did not end the guest");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "failed");
    let error = case["error"].as_str().unwrap();
    assert!(error.contains("within 10 s and was killed"), "{error}");
    assert!(error.contains("console"), "{error}");
    // At least one line of the console under the header: a busy machine's
    // emulated guest may get no further than its init in ten seconds
    // ("fslab-guest: init 6.26" alone, seen beside two builds).
    assert!(error.lines().count() > 1, "the console's last lines are quoted: {error}");
    lab.assert_nothing_left("after a guest killed at its timeout");
}

#[test]
fn a_guest_runs_the_very_binary_the_host_runs_even_from_var_tmp() {
    let Some((image, _one)) = one_guest("a_guest_runs_the_very_binary_the_host_runs") else { return };
    let lab = Lab::new();
    // The guest mounts tmpfs on /tmp, /run and /var/tmp: a path there names
    // nothing inside it, so the binary must travel with the guest.
    let copy = lab.dir.path().join("bin/fslab");
    std::fs::create_dir(copy.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_fslab"), &copy).unwrap();
    let mut c = std::process::Command::new(&copy);
    c.env("FSLAB_STATE_DIR", lab.state()).env("FSLAB_STORE", lab.store());
    c.args(["run", "replace-files", "--json", "--fs", "ext4", "--set", "strategy=fsync-each", "--scratch"]);
    c.arg(lab.scratch()).arg("--kernel").arg(&image);
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    assert!(figure(case, "journal_commits").unwrap() >= 20.0, "{case}");
    lab.assert_nothing_left("after a guest of a binary under /var/tmp");
}

#[test]
fn what_a_guest_cannot_do_yet_is_refused_with_the_flag_named() {
    let lab = Lab::new();
    for (args, said) in [
        (&["replace-files", "--kernel", "host", "--vm-memory", "128M"][..], "256M"),
        (&["replace-files", "--vm-memory", "1G"][..], "--kernel IMAGE"),
        (&["replace-files", "--kernel", "/nonexistent/vmlinuz"][..], "/nonexistent/vmlinuz"),
        (&["replace-files", "--kernel", "/nonexistent/vmlinuz", "--disk-profile", "/nonexistent/disk.json"][..], "--disk-profile with --kernel"),
    ] {
        let mut full = vec!["run", "--no-store"];
        full.extend_from_slice(args);
        let out = lab.expect(&full, 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}
