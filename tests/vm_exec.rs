//! `fslab exec --kernel`: any command measured under another kernel, in a
//! guest of the Debian 6.1 kernel the tests fetch once
//! (tests/common/kernel.rs), beside the host's own. Under software
//! emulation a guest costs tens of seconds, so the guests of this file run
//! one at a time and the commands stay small.

mod common;

use common::kernel::{self, one_guest};
use common::{Lab, cases, figure};

/// What the command of the first test does: counts its runs in a tally
/// outside the scratch target (a guest's `/var/tmp` is its own tmpfs, so
/// each guest counts alone), says where it runs, and writes three files,
/// a fourth under a 6.1 kernel.
const WRITES_BY_KERNEL: &str = "mkdir -p \"$TALLY\" && echo run >> \"$TALLY/runs\" && \
    echo \"runs=$(wc -l < \"$TALLY/runs\") probe=$EXEC_GUEST_PROBE fs=$FSLAB_FS device=$FSLAB_DEVICE\" && \
    echo \"mount=$FSLAB_MOUNT\" && echo \"pwd=$(pwd)\" && \
    for i in 1 2 3; do echo $i > f$i; done && \
    case \"$(uname -r)\" in 6.1.*) echo 4 > f4 ;; esac && echo \"release=$(uname -r)\"";

/// The value of `key=` on a line of `stdout`.
fn said<'a>(stdout: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}=");
    stdout
        .split_whitespace()
        .find_map(|word| word.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {key}= in {stdout:?}"))
}

#[test]
fn a_command_writes_what_each_kernel_made_it_write_and_each_case_names_its_kernel() {
    let Some((image, _one)) = one_guest("a_command_writes_what_each_kernel_made_it_write") else { return };
    let lab = Lab::new();
    let kernels = format!("{},host", image.display());
    let tally = lab.dir.path().join("tally");
    let mut c = lab.command();
    c.args(["exec", "--json", "--show-output", "--warmup", "1", "--kernel", &kernels, "--fs", "ext4", "--scratch"]);
    c.arg(lab.scratch()).env("TALLY", &tally).env("EXEC_GUEST_PROBE", "from-the-host");
    let started = std::time::Instant::now();
    let out = c.args(["--", "sh", "-c", WRITES_BY_KERNEL]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout stays one JSON document");
    let all = cases(&json);
    assert_eq!(all.len(), 2, "one case under each kernel");
    let host = kernel::host_release();
    let guest_release = all[0]["conditions"]["kernel"].as_str().unwrap().to_string();
    assert!(guest_release.starts_with("6.1.0-"), "{guest_release}");
    assert_eq!(all[1]["conditions"]["kernel"], host.as_str());
    for case in all {
        assert_eq!(case["status"], "ok", "{case}");
        assert_eq!(case["scenario"], "exec");
        let release = case["conditions"]["kernel"].as_str().unwrap();
        let stdout = case["command"]["stdout"].as_str().unwrap();
        // The command ran under the kernel its case names, and wrote as it
        // was told to there: an exact figure, the same under any load.
        assert_eq!(said(stdout, "release"), release, "{stdout}");
        let files = if release.starts_with("6.1.") { 4.0 } else { 3.0 };
        assert_eq!(figure(case, "files"), Some(files), "{release}: {stdout}");
        assert_eq!(case["figures"]["files"]["kind"], "exact");
        // It ran in the mounted target, told so as on the host, with the
        // host's environment.
        assert_eq!(said(stdout, "mount"), said(stdout, "pwd"), "{release}: {stdout}");
        assert_eq!(said(stdout, "fs"), "ext4");
        assert_eq!(said(stdout, "device"), case["target"]["device"].as_str().unwrap(), "{release}");
        assert_eq!(said(stdout, "probe"), "from-the-host", "{release}: the host's environment");
        // One warmup before it, in the guest the case booted (its tally is
        // in the guest's own /var/tmp), on the host on the host.
        assert_eq!(said(stdout, "runs"), "2", "{release}: {stdout}");
    }
    let guest = &all[0]["guest"];
    assert_eq!(guest["release"], guest_release.as_str());
    assert_eq!(guest["kernel"], image.to_str().unwrap());
    assert_eq!(all[0]["target"]["device"], "/dev/vda");
    assert!(all[1].get("guest").is_none(), "a host case has no guest");
    eprintln!(
        "one guest exec case: QEMU {:.1} s (boot to init {:.1} s, {}), the whole run {:.1} s",
        guest["wall_s"].as_f64().unwrap(),
        guest["boot_s"].as_f64().unwrap_or(f64::NAN),
        guest["accel"],
        started.elapsed().as_secs_f64()
    );
    // --show-output: the guest's output is shown once its case is back.
    assert!(stderr.contains(&format!("release={guest_release}")), "{stderr}");
    // People read the kernel in the place.
    let shown = String::from_utf8(lab.expect(&["show", "last"], 0).stdout).unwrap();
    assert!(shown.contains(&format!("ext4@{guest_release}")) && shown.contains(&format!("ext4@{host}")), "{shown}");
    // An exec run compares across kernels as a run does: place by place,
    // the emulated guest's timings shown but not judged.
    let id = json["run"]["id"].as_str().unwrap();
    let compared = lab.compare_json(id, id);
    let rows = compared["compare"]["rows"].as_array().unwrap_or_else(|| panic!("{compared}"));
    let row = |place: &str, name: &str| {
        rows.iter()
            .find(|r| r["figure"] == name && r["fs"] == place)
            .unwrap_or_else(|| panic!("no {name} row for {place}: {compared}"))
    };
    for (place, files) in [(format!("ext4@{guest_release}"), 4.0), (format!("ext4@{host}"), 3.0)] {
        let files_row = row(&place, "files");
        assert_eq!(files_row["base_median"].as_f64(), Some(files), "{files_row}");
        assert_eq!(files_row["outcome"], "unchanged", "{files_row}");
    }
    if guest["emulated"] == true {
        let wall = row(&format!("ext4@{guest_release}"), "wall_s");
        assert_eq!(wall["outcome"], "emulated", "{wall}");
    }
    lab.assert_nothing_left("after exec under a guest's kernel and the host's");
}

#[test]
fn check_judges_a_guests_crash_states_under_the_guests_kernel() {
    let Some((image, _one)) = one_guest("check_judges_a_guests_crash_states") else { return };
    let lab = Lab::new();
    // Each file written, synced, then marked durable.
    let work = "for i in 1 2 3 4; do printf 'record %s\\n' $i > f$i; sync f$i; echo f$i > \"$FSLAB_CRASH_MARK\"; done";
    // Every name durable at a state must be there whole, and the checker
    // must run under the guest's kernel: any other fails every state.
    let check = "case \"$(uname -r)\" in 6.1.*) ;; *) echo \"not in the guest\"; exit 1 ;; esac; \
                 while read -r name; do [ \"$(cat \"$name\")\" = \"record ${name#f}\" ] || { echo \"$name lost\"; exit 1; }; \
                 done < \"$FSLAB_CRASH_DURABLE\"";
    let args = [
        "--kernel",
        image.to_str().unwrap(),
        "--fs",
        "ext4",
        "--no-store",
        "--crash",
        "flush",
        "--crash-max-states",
        "6",
        "--check",
        check,
        "--",
        "sh",
        "-c",
        work,
    ];
    let json = lab.exec_json(&args, 0);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    let release = case["conditions"]["kernel"].as_str().unwrap();
    assert!(release.starts_with("6.1.0-"), "{release}");
    assert_eq!(case["conditions"]["crash"], "flush");
    assert_eq!(case["params"]["check"], check);
    let crash = &case["crash"];
    assert!(crash["recorder"].as_str().unwrap().contains("guest's virtio disk"), "{crash}");
    assert_eq!(crash["states"]["kernel"], release, "{crash}");
    let marks: Vec<&str> =
        crash["marks"].as_array().unwrap().iter().filter_map(|m| m["what"].as_str()?.strip_prefix("durable:")).collect();
    assert_eq!(marks, ["f1", "f2", "f3", "f4"], "{crash}");
    assert_eq!(figure(case, "crash_states"), Some(6.0), "{crash}");
    assert_eq!(figure(case, "crash_check_failed"), Some(0.0), "{crash}");
    assert_eq!(figure(case, "crash_bad"), Some(0.0), "{crash}");
    lab.assert_nothing_left("after a guest's command judged by its checker");
}

#[test]
fn a_command_failing_in_a_guest_is_a_failed_case_quoting_its_stderr() {
    let Some((image, _one)) = one_guest("a_command_failing_in_a_guest") else { return };
    let lab = Lab::new();
    let command = "echo to-stdout; echo \"broke under $(uname -r)\" >&2; exit 3";
    let json = lab.exec_json(&["--kernel", image.to_str().unwrap(), "--fs", "ext4", "--", "sh", "-c", command], 4);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "failed");
    let release = case["conditions"]["kernel"].as_str().unwrap();
    assert!(release.starts_with("6.1.0-"), "{release}");
    assert!(case["error"].as_str().unwrap().contains("exited with status 3"), "{}", case["error"]);
    assert_eq!(case["command"]["stdout"], "to-stdout\n");
    assert_eq!(case["command"]["stderr"], format!("broke under {release}\n"));
    assert_eq!(figure(case, "exit_status"), Some(3.0));
    assert_eq!(case["guest"]["release"], release);
    // The table's note quotes the command's stderr under the place.
    let shown = String::from_utf8(lab.expect(&["show", "last"], 0).stdout).unwrap();
    assert!(shown.contains(&format!("ext4@{release}: ")) && shown.contains(&format!("| broke under {release}")), "{shown}");
    lab.assert_nothing_left("after a command failing in a guest");
}

#[test]
fn what_exec_cannot_do_in_a_guest_is_refused_with_the_flag_named_before_anything_is_made() {
    let lab = Lab::new();
    // No such image: each refusal comes before the image is read.
    let image = "/nonexistent/vmlinuz";
    let cache = lab.dir.path().join("kernels");
    let cache = cache.to_str().unwrap();
    for (args, said) in [
        (&["--dir", "/tmp"][..], "--dir with --kernel"),
        (&["--fs", "ext4", "--device", "/dev/null", "--destroy-data-on", "/dev/null"][..], "--device with --kernel"),
        (&["--fs", "ext4", "--memory", "256M"][..], "--memory with --kernel"),
        (&["--fs", "ext4", "--crash-record"][..], "--crash-record with --kernel"),
        (&["--fs", "ext4", "--crash", "flush", "--warmup", "1"][..], "--warmup with --crash and --kernel"),
        (&["--fs", "ext4", "--disk-profile", "/nonexistent/disk.json"][..], "--disk-profile with --kernel"),
    ] {
        let mut c = lab.command();
        c.args(["exec", "--no-store", "--scratch"]).arg(lab.scratch()).args(["--kernel", image, "--kernel-cache", cache]);
        let out = c.args(args).args(["--", "true"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
    // A command a guest's job could not carry as given.
    use std::os::unix::ffi::OsStrExt;
    let mut c = lab.command();
    c.args(["exec", "--no-store", "--scratch"]).arg(lab.scratch()).args(["--kernel", image, "--fs", "ext4", "--", "printf"]);
    let out = c.arg(std::ffi::OsStr::from_bytes(b"\xff")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--kernel") && stderr.contains("UTF-8"), "{stderr}");
    // The guests' flags without a guest are refused as for run.
    let out = lab.exec(&["--no-store", "--fs", "ext4", "--vm-memory", "1G", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kernel IMAGE"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!std::path::Path::new(cache).exists(), "nothing was made in the kernel cache");
    lab.assert_nothing_left("after refused guest commands");
}
