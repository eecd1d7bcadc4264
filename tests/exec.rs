//! `fslab exec` end to end: real scratch file systems on loop devices, real
//! commands, figures checked against what the commands did and against
//! `filefrag` run on the same file.

mod common;

use common::{Lab, cases, figure, root_or_skip};

const MIB: f64 = 1048576.0;

#[test]
fn dd_is_measured_on_ext4_xfs_btrfs_and_extents_match_filefrag() {
    if !root_or_skip("dd_is_measured") {
        return;
    }
    let lab = Lab::new();
    let json = lab.exec_json(
        &[
            "--fs",
            "ext4,xfs,btrfs",
            "--cold-read",
            "--",
            "sh",
            "-c",
            "dd if=/dev/zero of=f bs=1M count=64 conv=fsync 2>/dev/null && filefrag f",
        ],
        0,
    );
    assert_eq!(json["schema"], "fslab/1");
    let cases = cases(&json);
    assert_eq!(cases.iter().map(|c| c["fs"].as_str().unwrap()).collect::<Vec<_>>(), ["ext4", "xfs", "btrfs"]);
    for case in cases {
        let fs = case["fs"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{fs}: {case}");
        assert_eq!(case["scenario"], "exec");
        let written = figure(case, "written_bytes").unwrap();
        assert!(
            (written - 64.0 * MIB).abs() <= 0.05 * 64.0 * MIB,
            "{fs}: wrote {written} bytes to the device for a 64 MiB dd"
        );
        let stdout = case["command"]["stdout"].as_str().unwrap();
        assert_eq!(figure(case, "extents").unwrap() as u64, common::filefrag_extents_in(stdout, "f"), "{fs}: extents vs filefrag");
        assert_eq!(figure(case, "files"), Some(1.0), "{fs}");
        assert_eq!(figure(case, "bytes"), Some(64.0 * MIB), "{fs}");
        // The cold read went to the device: about 64 MiB read, by remount.
        assert_eq!(case["target"]["cold_method"], "remount", "{fs}");
        let read = figure(case, "cold_read_bytes").unwrap();
        assert_eq!(read, 64.0 * MIB, "{fs}");
        assert!(figure(case, "cold_read_mbps").unwrap() > 0.0, "{fs}");
        assert!(figure(case, "cold_read_ios_per_mib").unwrap() > 0.0, "{fs}");
        assert!(figure(case, "wall_s").unwrap() > 0.0, "{fs}");
        assert!(!case["timeline"].as_array().unwrap().is_empty(), "{fs}: no timeline");
        assert!(case["target"]["device"].as_str().unwrap().starts_with("/dev/loop"), "{fs}");
    }
    lab.assert_nothing_left("after a normal exec");
}

#[test]
fn twenty_fsyncs_cause_twenty_journal_commits_and_plain_writes_do_not() {
    if !root_or_skip("fsync_commits") {
        return;
    }
    let lab = Lab::new();
    let with = lab.exec_json(
        &["--fs", "ext4", "--", "sh", "-c", "for i in $(seq 20); do dd if=/dev/zero of=f$i bs=4k count=1 conv=fsync 2>/dev/null; done"],
        0,
    );
    let without = lab.exec_json(
        &["--fs", "ext4", "--", "sh", "-c", "for i in $(seq 20); do dd if=/dev/zero of=f$i bs=4k count=1 2>/dev/null; done"],
        0,
    );
    let with = &cases(&with)[0];
    let without = &cases(&without)[0];
    let commits_with = figure(with, "journal_commits").expect("journal commits measured as root");
    let commits_without = figure(without, "journal_commits").expect("journal commits measured as root");
    assert!(commits_with >= 20.0, "20 fsyncs gave {commits_with} commits");
    assert!(commits_without <= 3.0, "20 plain writes gave {commits_without} commits");
    let flushes_with = figure(with, "flushes").expect("flushes counted");
    assert!(flushes_with >= 20.0, "20 fsyncs gave {flushes_with} device flushes");
    assert_eq!(figure(with, "files"), Some(20.0));
    lab.assert_nothing_left("after the fsync runs");
}

#[test]
fn a_failing_command_fails_its_target_only_and_its_output_is_kept() {
    if !root_or_skip("failing_command") {
        return;
    }
    let lab = Lab::new();
    let json = lab.exec_json(
        &["--fs", "ext4,xfs", "--", "sh", "-c", "echo to-stdout; echo to-stderr >&2; test \"$(stat -f -c %T .)\" != xfs"],
        4,
    );
    let cases = cases(&json);
    assert_eq!(cases[0]["status"], "ok", "{}", cases[0]);
    assert_eq!(cases[1]["status"], "failed");
    assert_eq!(cases[1]["command"]["exit_code"], 1);
    assert!(cases[1]["error"].as_str().unwrap().contains("status 1"), "{}", cases[1]["error"]);
    for case in cases {
        assert_eq!(case["command"]["stdout"], "to-stdout\n");
        assert_eq!(case["command"]["stderr"], "to-stderr\n");
    }
    // The failed target is still measured as far as it went.
    assert!(figure(&cases[1], "wall_s").is_some());
    lab.assert_nothing_left("after a failing command");
}

#[test]
fn awkward_paths_and_options_reach_the_tools_as_argv() {
    if !root_or_skip("awkward_paths") {
        return;
    }
    let lab = Lab::new();
    let scratch = lab.scratch().join("a b'c\"d\ne");
    let mut c = lab.command();
    c.arg("exec").arg("--json").arg("--scratch").arg(&scratch);
    c.args(["--fs", "ext4", "--mkfs-opt", "ext4=-L 'my label' -b 2048", "--mount-opt", "ext4=nodelalloc"]);
    c.args(["--", "sh", "-c", "findmnt -n -o LABEL,OPTIONS -T .; stat -f -c %S .; pwd; echo \"$FSLAB_MOUNT\""]);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &cases(&json)[0];
    let stdout = case["command"]["stdout"].as_str().unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("my label"), "{stdout:?}");
    assert!(lines[0].contains("nodelalloc"), "{stdout:?}");
    assert_eq!(lines[1], "2048", "block size from --mkfs-opt");
    assert!(stdout.contains("a b'c\"d\ne"), "{stdout:?}");
    assert_eq!(case["target"]["mount_opts"], "nodelalloc");
    std::fs::remove_dir(&scratch).unwrap();
    lab.assert_nothing_left("after awkward paths");
}

#[test]
fn bad_input_gets_the_contract_exit_codes() {
    let lab = Lab::new();
    let check = |args: &[&str], code: i32, says: &str| {
        let out = lab.exec(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    check(&["--fs", "f2fs", "--", "true"], 2, "ext2, ext3, ext4, xfs and btrfs");
    check(&["--dir", "/nonexistent/x", "--", "true"], 2, "/nonexistent/x");
    check(&["--fs", "ext4"], 2, "COMMAND");
    check(&["--fs", "ext4", "--device", "/dev/null", "--", "true"], 2, "--destroy-data-on");
    check(&["--fs", "ext4", "--device", "/dev/null", "--destroy-data-on", "/dev/zero", "--", "true"], 2, "same device");
    check(&["--fs", "ext4", "--sysctl", "vm.dirty_ratio", "--", "true"], 2, "KEY=VALUE");
    check(&["--fs", "ext4", "--mkfs-opt", "ext4=-L 'open", "--", "true"], 2, "--mkfs-opt");
    check(&["--fs", "ext4", "--size", "12X", "--", "true"], 2, "size");
    if rustix::process::geteuid().is_root() {
        check(&["--dir", "/tmp", "--sysctl", "vm.no_such_knob=1", "--", "true"], 2, "no such sysctl");
        check(&["--fs", "ext4", "--device", "/dev/null", "--destroy-data-on", "/dev/null", "--", "true"], 2, "not a block device");
    }
    lab.assert_nothing_left("after bad input");
}

#[test]
fn a_mounted_device_is_never_formatted_and_a_free_one_is() {
    if !root_or_skip("device_target") {
        return;
    }
    let lab = Lab::new();
    // A "real" device for the test: a loop device the test attached itself.
    let image = lab.dir.path().join("disk.img");
    std::fs::File::create(&image).unwrap().set_len(512 << 20).unwrap();
    let device = common::run("losetup", &["--find", "--show", image.to_str().unwrap()]).trim().to_string();
    struct Detach(std::path::PathBuf);
    impl Drop for Detach {
        fn drop(&mut self) {
            common::detach_loops_over(&self.0);
        }
    }
    let detach = Detach(image.clone());

    let json = lab.exec_json(
        &["--fs", "ext4", "--device", &device, "--destroy-data-on", &device, "--", "sh", "-c", "findmnt -n -o SOURCE -T ."],
        0,
    );
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    assert_eq!(case["command"]["stdout"].as_str().unwrap().trim(), device);

    // Now mounted elsewhere: refused, and its contents survive.
    let mnt = lab.dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    common::run("mount", &[&device, mnt.to_str().unwrap()]);
    std::fs::write(mnt.join("precious"), b"keep me").unwrap();
    let out = lab.exec(&["--fs", "ext4", "--device", &device, "--destroy-data-on", &device, "--", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    common::unmount(&mnt).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mounted"), "{stderr}");
    common::run("mount", &[&device, mnt.to_str().unwrap()]);
    let kept = std::fs::read(mnt.join("precious"));
    common::unmount(&mnt).unwrap();
    assert_eq!(kept.unwrap(), b"keep me");
    std::fs::remove_dir(&mnt).unwrap();
    drop(detach);
    lab.assert_nothing_left("after device runs");
}

#[test]
fn dir_works_without_root_and_marks_root_figures_missing() {
    if !root_or_skip("dir_as_non_root") || !common::have("setpriv") {
        return;
    }
    let lab = Lab::new();
    let work = lab.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(lab.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    // The state folder must be the user's own: nobody's.
    std::os::unix::fs::chown(lab.state(), Some(65534), Some(65534)).unwrap();
    let own = lab.dir.path().join("own");
    std::fs::create_dir(&own).unwrap();
    std::os::unix::fs::chown(&own, Some(65534), Some(65534)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(["exec", "--json", "--cold-read", "--dir"])
        .arg(&work)
        .args(["--", "sh", "-c", "head -c 1048576 /dev/zero > f && id -u"])
        .env("FSLAB_STATE_DIR", lab.state())
        .env("FSLAB_STORE", own.join("fslab.db"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &cases(&json)[0];
    assert_eq!(case["fs"], "dir");
    assert_eq!(case["status"], "ok", "{case}");
    assert_eq!(case["command"]["stdout"], "65534\n");
    assert_eq!(case["target"]["cold_method"], "fadvise");
    assert!(case.get("requests").is_none(), "no stream was traced: {case}");
    assert_eq!(figure(case, "files"), Some(1.0));
    assert_eq!(figure(case, "cold_read_bytes"), Some(MIB));
    assert!(figure(case, "wall_s").is_some());
    for name in ["journal_commits", "seeks", "block_requests", "modelled_work_s", "modelled_seeks", "modelled_cold_read_s", "modelled_cold_read_seeks"] {
        assert_eq!(figure(case, name), None, "{name} needs root");
        assert!(case["figures"][name]["missing"].as_str().unwrap().contains("root"), "{}", case["figures"][name]);
    }
    // The work folder is gone; the user's own directory stays.
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    lab.assert_nothing_left("after --dir as nobody");
}

#[test]
fn scratch_file_systems_need_root_and_say_so() {
    if !root_or_skip("scratch_needs_root") || !common::have("setpriv") {
        return;
    }
    let lab = Lab::new();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(["exec", "--fs", "ext4", "--", "true"])
        .env("FSLAB_STATE_DIR", "/tmp/fslab-test-nobody-state")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("root") && stderr.contains("--dir"), "{stderr}");
    lab.assert_nothing_left("after a refused run");
}

#[test]
fn the_command_is_told_where_it_runs_and_its_exit_status_is_a_figure() {
    if !root_or_skip("exec_env_and_status") {
        return;
    }
    let lab = Lab::new();
    let json = lab.exec_json(
        &["--fs", "ext4,btrfs", "--", "sh", "-c", "echo \"$FSLAB_MOUNT|$FSLAB_FS|$FSLAB_DEVICE|$(pwd)\"; test \"$FSLAB_FS\" != btrfs || exit 3"],
        4,
    );
    let both = cases(&json);
    for (case, fs, status) in [(&both[0], "ext4", 0.0), (&both[1], "btrfs", 3.0)] {
        let seen = case["command"]["stdout"].as_str().unwrap().trim_end().to_string();
        let words: Vec<&str> = seen.split('|').collect();
        assert_eq!(words.len(), 4, "{seen}");
        assert_eq!(words[0], words[3], "{fs}: FSLAB_MOUNT is the working directory");
        assert!(words[0].starts_with(lab.scratch().to_str().unwrap()), "{fs}: {seen}");
        assert_eq!(words[1], fs, "{fs}: FSLAB_FS");
        assert_eq!(words[2], case["target"]["device"].as_str().unwrap(), "{fs}: FSLAB_DEVICE");
        assert_eq!(figure(case, "exit_status"), Some(status), "{fs}");
        assert_eq!(case["figures"]["exit_status"]["kind"], "exact");
    }
    assert_eq!(both[0]["status"], "ok");
    assert_eq!(both[1]["status"], "failed");
    assert!(both[1]["error"].as_str().unwrap().contains("exited with status 3"), "{}", both[1]["error"]);
    // Killed by a signal: 128 + N, as a shell says, and the signal named.
    let json = lab.exec_json(&["--fs", "ext4", "--", "sh", "-c", "kill -TERM $$"], 4);
    let case = &cases(&json)[0];
    assert_eq!(figure(case, "exit_status"), Some(143.0));
    assert!(case["error"].as_str().unwrap().contains("SIGTERM"), "{}", case["error"]);
    lab.assert_nothing_left("after env and status runs");
}

#[test]
fn warmups_run_unrecorded_before_the_repeats() {
    if !root_or_skip("exec_repeat_warmup") {
        return;
    }
    let lab = Lab::new();
    let tally = lab.dir.path().join("tally");
    let command = format!("echo \"$FSLAB_FS\" >> '{}'", tally.display());
    let json = lab.exec_json(&["--fs", "ext4,xfs", "--repeat", "3", "--warmup", "2", "--", "sh", "-c", &command], 0);
    let shown: Vec<(&str, u64)> = cases(&json).iter().map(|c| (c["fs"].as_str().unwrap(), c["repeat"].as_u64().unwrap())).collect();
    assert_eq!(shown, [("ext4", 1), ("ext4", 2), ("ext4", 3), ("xfs", 1), ("xfs", 2), ("xfs", 3)]);
    // Every run happened: two warmups and three repeats per target.
    let ran = std::fs::read_to_string(&tally).unwrap();
    assert_eq!(ran.lines().collect::<Vec<_>>(), [["ext4"; 5], ["xfs"; 5]].concat());
    // The store holds the repeats only.
    let out = lab.expect(&["show", "--json", "last"], 0);
    let stored: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(common::cases(&stored).len(), 6);
    assert!(stored["run"]["complete"].as_bool().unwrap());
    lab.assert_nothing_left("after repeats and warmups");
}

#[test]
fn show_output_streams_while_the_command_runs_and_keeps_it() {
    if !root_or_skip("exec_show_output") {
        return;
    }
    use std::io::BufRead;
    let lab = Lab::new();
    let mut c = lab.command();
    c.args(["exec", "--json", "--show-output", "--scratch"]).arg(lab.scratch());
    c.args(["--fs", "ext4", "--", "sh", "-c", "echo early-line; echo err-line >&2; sleep 4; echo late-line"]);
    let mut child = c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let json = std::thread::spawn(move || {
        let mut all = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut all).unwrap();
        all
    });
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    // Its two streams are shown by two threads: in either order.
    let mut seen = String::new();
    while !seen.contains("early-line") && stderr.read_line(&mut seen).unwrap() > 0 {}
    assert!(seen.contains("early-line"), "the command's stdout never reached fslab's stderr: {seen}");
    assert_eq!(child.try_wait().unwrap(), None, "shown only after the command ended");
    std::io::Read::read_to_string(&mut stderr, &mut seen).unwrap();
    assert!(seen.contains("late-line") && seen.contains("err-line"), "{seen}");
    assert_eq!(child.wait().unwrap().code(), Some(0), "{seen}");
    let json: serde_json::Value = serde_json::from_slice(&json.join().unwrap()).expect("stdout stays one JSON document");
    let case = &cases(&json)[0];
    assert_eq!(case["command"]["stdout"], "early-line\nlate-line\n");
    assert_eq!(case["command"]["stderr"], "err-line\n");
    // Without --json the command's stdout is fslab's, before the table.
    let out = lab.exec(&["--show-output", "--fs", "ext4", "--", "echo", "on-stdout"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("on-stdout\n"), "{}", String::from_utf8_lossy(&out.stdout));
    lab.assert_nothing_left("after --show-output");
}

#[test]
fn the_works_own_window_leaves_fslabs_sync_out_and_short_work_has_a_fine_timeline() {
    if !root_or_skip("exec_work_window") {
        return;
    }
    let lab = Lab::new();
    // 32 MiB reach the device during the work (fsync), 32 MiB only in
    // fslab's syncfs after it. That needs the flusher to leave b alone for
    // the half second: with the machine's own limits, other work's dirty
    // pages (a preset copying images beside the suite) can pass the
    // background limit and b goes out at once, so the run sets limits far
    // above what the machine dirties (and, changing sysctls, measures
    // with no other fslab run beside it).
    let json = lab.exec_json(
        &[
            "--fs",
            "ext4",
            "--sysctl",
            "vm.dirty_bytes=8589934592",
            "--sysctl",
            "vm.dirty_background_bytes=4294967296",
            "--",
            "sh",
            "-c",
            "dd if=/dev/zero of=a bs=1M count=32 conv=fsync 2>/dev/null; dd if=/dev/zero of=b bs=1M count=32 2>/dev/null; sleep 0.5",
        ],
        0,
    );
    let case = &cases(&json)[0];
    let work = figure(case, "work_written_bytes").unwrap();
    let total = figure(case, "written_bytes").unwrap();
    assert!((work - 32.0 * MIB).abs() <= 0.1 * 32.0 * MIB, "the work wrote {work} bytes itself");
    assert!((total - 64.0 * MIB).abs() <= 0.1 * 64.0 * MIB, "{total} bytes in all");
    assert!(figure(case, "work_write_ios").unwrap() <= figure(case, "write_ios").unwrap());
    let mbps = figure(case, "work_mbps").unwrap();
    let wall = figure(case, "wall_s").unwrap();
    assert!((mbps - work / MIB / wall).abs() <= 0.1 * mbps, "work_mbps {mbps} vs {work} bytes in {wall} s (MiB/s)");
    // Under a second of work, sampled every tenth of one.
    let t: Vec<f64> = case["timeline"].as_array().unwrap().iter().map(|p| p["t_s"].as_f64().unwrap()).collect();
    assert!(t.len() >= 5 && t[0] < 0.2, "{t:?}");
    lab.assert_nothing_left("after the work-window run");
}

#[test]
fn parse_fio_stores_fios_own_bandwidth() {
    if !root_or_skip("exec_parse_fio") || !common::have("fio") {
        return;
    }
    let lab = Lab::new();
    let out = lab.exec(&["--fs", "ext4", "--parse", "fio", "--", "fio", "--name=w", "--rw=write", "--bs=64k", "--size=64M", "--output-format=json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = lab.expect(&["show", "--json", "last"], 0);
    let stored: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &cases(&stored)[0];
    let stdout = case["command"]["stdout"].as_str().unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
    let write = &report["jobs"][0]["write"];
    assert_eq!(figure(case, "fio_w_write_bw_bytes"), write["bw_bytes"].as_f64());
    assert_eq!(figure(case, "fio_w_write_iops"), write["iops"].as_f64());
    let p99 = write["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap();
    assert_eq!(figure(case, "fio_w_write_clat_p99_s"), Some(p99 / 1e9));
    let bw = &case["figures"]["fio_w_write_bw_bytes"];
    assert_eq!((bw["kind"].as_str(), bw["better"].as_str(), bw["unit"].as_str()), (Some("timing"), Some("higher"), Some("bytes/s")));
    assert!(case["figures"].get("fio_w_read_bw_bytes").is_none(), "a write job has no read figures");
    assert_eq!(case["params"]["parse"], "fio");
    // A command whose stdout is not fio's JSON fails its case and says why.
    let json = lab.exec_json(&["--fs", "ext4", "--parse", "fio", "--", "echo", "hello"], 4);
    let error = cases(&json)[0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("--output-format=json"), "{error}");
    lab.assert_nothing_left("after --parse fio");
}
