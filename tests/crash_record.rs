//! `--crash-record`: every write a scratch device completes is logged by a
//! real qemu-storage-daemon, and the log rebuilds the device. A whole log
//! replayed onto the image from before the work gives, byte for byte, the
//! image the recorder left; without one of its writes it does not. And
//! whatever ends a recording — its end, an error, Ctrl-C, SIGKILL then
//! `fslab cleanup`, a log past its cap — leaves no daemon, FUSE mount,
//! loop device or file behind but a recording the user asked to keep.

mod common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Lab, Watched, cases, figure, recorder_or_skip};
use fslab::age_cache::image_copy::content_hash;
use fslab::crash::replay::{apply, materialise};
use fslab::crash::{Entry, WriteLog};

/// A new, empty file `name` in `dir`, open for reading and writing.
fn new_file(dir: &Path, name: &str) -> File {
    File::options().read(true).write(true).create_new(true).open(dir.join(name)).unwrap()
}

/// A case's recording, read: its folder, the image before and its log.
fn recording(case: &serde_json::Value) -> (PathBuf, File, WriteLog) {
    let crash = &case["crash"];
    assert_eq!(crash["kept"], true, "{crash}");
    let folder = PathBuf::from(crash["folder"].as_str().unwrap());
    let before = File::open(folder.join("before.img")).unwrap();
    let log_path = folder.join("writes.log");
    let log = WriteLog::read(&log_path, File::open(&log_path).unwrap()).unwrap();
    (folder, before, log)
}

#[test]
fn a_whole_log_replayed_onto_the_image_before_gives_the_image_the_recorder_saw() {
    if !recorder_or_skip("a_whole_log_replayed_onto_the_image_before_gives_the_image_the_recorder_saw") {
        return;
    }
    let lab = Lab::new();
    let work = "for i in 1 2 3; do head -c 300000 /dev/urandom > f$i.tmp && sync f$i.tmp && mv f$i.tmp f$i; done";
    let json = lab.exec_json(&["--fs", "ext4,xfs,btrfs", "--size", "512M", "--crash-record", "--no-store", "--", "sh", "-c", work], 0);
    let rebuilt_dir = common::temp::dir("replay");
    let mut places = Vec::new();
    for case in cases(&json) {
        let place = format!("{}@crash={}", case["fs"].as_str().unwrap(), case["conditions"]["crash"].as_str().unwrap());
        assert_eq!(case["status"], "ok", "{place}: {}", case["error"]);
        let (folder, before, log) = recording(case);
        let crash = &case["crash"];
        let summary = log.summary();
        assert_eq!(crash["entries"].as_u64(), Some(summary.entries), "{place}");
        assert_eq!(figure(case, "log_entries"), Some(summary.entries as f64), "{place}");
        assert_eq!(figure(case, "log_flushes"), Some(summary.flushes as f64), "{place}");
        assert_eq!(figure(case, "log_bytes"), Some(summary.log_bytes as f64), "{place}");
        assert_eq!(std::fs::metadata(log.path()).unwrap().len(), summary.log_bytes, "{place}: the kept log ends with its last entry");
        // Three sync calls' flushes, each after its file's data.
        assert!(summary.flushes >= 3, "{place}: {summary:?}");
        let marks = crash["marks"].as_array().unwrap();
        let count = |what: &str| marks.iter().find(|m| m["what"] == what).and_then(|m| m["entries"].as_u64()).unwrap();
        assert!(count("work_start") < count("work_end") && count("work_end") <= summary.entries, "{place}: {marks:?}");
        // A mark counts up to a flush (the super block is rewritten at
        // each, and every 4096 entries): the syncs' flushes are in.
        for mark in [count("work_start"), count("work_end")].into_iter().filter(|&m| m > 0 && m % 4096 != 0) {
            assert!(log.entries()[mark as usize - 1].is_flush(), "{place}: entry {} before a mark is no flush", mark - 1);
        }
        assert_eq!(content_hash(&before).unwrap().0, crash["before_sha256"].as_str().unwrap(), "{place}");

        let whole = new_file(rebuilt_dir.path(), &format!("{place}.img"));
        materialise(&before, &log, log.entries().len(), &whole).unwrap();
        let end = crash["end_sha256"].as_str().unwrap();
        assert_eq!(content_hash(&whole).unwrap().0, end, "{place}: the whole log rebuilt another image");
        let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(folder.join("recording.json")).unwrap()).unwrap();
        assert_eq!(manifest["recording"]["end_sha256"], end, "{place}");
        assert_eq!(manifest["recording"]["fs"], case["fs"], "{place}");

        // Without its largest write that nothing later overwrote (the
        // work's random bytes), the same log rebuilds another image.
        let entries = log.entries();
        let overwritten = |i: usize| {
            let (a, b) = (entries[i].offset(), entries[i].offset() + entries[i].data_bytes());
            entries[i + 1..].iter().any(|e| e.offset() < b && e.offset() + e.nr_sectors * 512 > a)
        };
        let dropped = (0..entries.len())
            .filter(|&i| entries[i].data_bytes() > 0 && !overwritten(i))
            .max_by_key(|&i| entries[i].data_bytes())
            .expect("a write nothing overwrote");
        let without = new_file(rebuilt_dir.path(), &format!("{place}-without.img"));
        fslab::age_cache::image_copy::copy_image(&before, &without, false).unwrap();
        let kept: Vec<Entry> = entries.iter().enumerate().filter(|(i, _)| *i != dropped).map(|(_, e)| *e).collect();
        apply(&log, &kept, &without).unwrap();
        assert_ne!(content_hash(&without).unwrap().0, end, "{place}: entry {dropped} left out went unseen");
        std::fs::remove_dir_all(&folder).unwrap();
        places.push(place);
    }
    assert_eq!(places, ["ext4@crash=record", "xfs@crash=record", "btrfs@crash=record"]);
    lab.assert_nothing_left("after three recordings, their folders removed");
}

/// Start `fslab exec --crash-record` of `sleep 60` on ext4, and wait until
/// the command runs on the recorded device.
fn recording_sleeper(lab: &Lab) -> Watched {
    let mut c = lab.command();
    c.arg("exec").arg("--scratch").arg(lab.scratch()).args(["--progress", "json"]);
    c.args(["--fs", "ext4", "--size", "256M", "--crash-record", "--no-store", "--", "sleep", "60"]);
    let mut child = Watched::spawn(c.stdout(Stdio::null()));
    child.until(Duration::from_secs(60), "the command never started", || {
        common::processes_in(&lab.scratch())
            .iter()
            .any(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep"))
    });
    let mounts = common::mounts_under(&lab.scratch());
    assert!(mounts.iter().any(|m| m.ends_with("device")), "the recorder's export is mounted: {mounts:?}");
    child
}

#[test]
fn sigkill_while_recording_then_cleanup_leaves_nothing() {
    if !recorder_or_skip("sigkill_while_recording_then_cleanup_leaves_nothing") {
        return;
    }
    let lab = Lab::new();
    let mut child = recording_sleeper(&lab);
    child.kill();
    // The daemon dies with fslab; its dead export, the loop device over it
    // and the file system on that stay until cleanup.
    let deadline = Instant::now() + Duration::from_secs(10);
    while common::processes_in(&lab.scratch()).iter().any(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim().starts_with("qemu-storage"))
    }) {
        assert!(Instant::now() < deadline, "the recorder outlived fslab");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!common::mounts_under(&lab.scratch()).is_empty(), "the mounts outlive a SIGKILL");
    // Past the export's one second of cached attributes: a stat of it now
    // asks the dead daemon, and gets ENOTCONN.
    std::thread::sleep(Duration::from_millis(1500));
    let out = lab.command().arg("cleanup").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    for released in ["writes.log", "before.img", "-rec1", "device"] {
        assert!(said.contains(released), "cleanup said nothing of {released}:\n{said}");
    }
    lab.assert_nothing_left(&format!("after SIGKILL and cleanup, which said:\n{said}"));
}

#[test]
fn ctrl_c_or_an_error_while_recording_releases_everything() {
    if !recorder_or_skip("ctrl_c_or_an_error_while_recording_releases_everything") {
        return;
    }
    let lab = Lab::new();
    let child = recording_sleeper(&lab);
    let started = Instant::now();
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let (out, _) = child.finish();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGINT), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(30), "SIGINT did not stop the recording");
    lab.assert_nothing_left("after SIGINT");

    // Refused by the kernel only when the superblock is read, after the
    // recorder started: the case fails, and the recording is given back.
    let json = lab.exec_json(&["--fs", "ext2", "--size", "64M", "--crash-record", "--mount-opt", "ext2=data=journal", "--", "true"], 4);
    let error = cases(&json)[0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("incompatible with ext2"), "{error}");
    lab.assert_nothing_left("after a mount the kernel refused");
}

#[test]
fn a_log_past_its_cap_fails_the_case_with_the_size_needed_and_exit_2() {
    if !recorder_or_skip("a_log_past_its_cap_fails_the_case_with_the_size_needed_and_exit_2") {
        return;
    }
    let lab = Lab::new();
    let work = "head -c 64000000 /dev/urandom > f && sync f";
    let json = lab.exec_json(&["--fs", "ext4", "--size", "256M", "--crash-record", "--crash-log-cap", "16M", "--no-store", "--", "sh", "-c", work], 2);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "failed");
    let error = case["error"].as_str().unwrap();
    assert!(error.contains("the write log reached its cap of 16 MiB (--crash-log-cap)"), "{error}");
    assert!(error.contains("give --crash-log-cap 1G or more"), "{error}");
    let needed = case["crash"]["needed_bytes"].as_u64().unwrap();
    assert!(needed > 64_000_000, "the device was sent the 64 MB and more: {needed}");
    assert_eq!(case["crash"]["kept"], false);
    lab.assert_nothing_left("after a log past its cap");
}

#[test]
fn recording_is_refused_where_it_cannot_be_made() {
    let lab = Lab::new();
    let dir = lab.dir.path().join("work");
    std::fs::create_dir(&dir).unwrap();
    let out = lab.exec(&["--dir", dir.to_str().unwrap(), "--crash-record", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = lab.exec(&["--fs", "ext4", "--crash-log-cap", "1G", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "--crash-log-cap alone: {}", String::from_utf8_lossy(&out.stderr));
    let scratch = lab.scratch();
    let out = lab.expect(&["hunt", "replace-files", "--vary", "files=1..8", "--fs", "ext4", "--crash-record", "--scratch", scratch.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--crash-record with hunt"), "{}", String::from_utf8_lossy(&out.stderr));
    if !rustix::process::geteuid().is_root() {
        return;
    }
    if let Some(kernel) = common::kernel::debian_kernel() {
        let scratch = lab.scratch();
        let args = ["run", "replace-files", "--fs", "ext4", "--crash-record", "--scratch", scratch.to_str().unwrap(), "--kernel"];
        let out = lab.expect(&[&args[..], &[kernel.to_str().unwrap()]].concat(), 2);
        assert!(String::from_utf8_lossy(&out.stderr).contains("--crash-record with --kernel"), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // An image that fits the scratch folder's disk, but not beside its
    // copy and its log's cap.
    let vfs = rustix::fs::statvfs(lab.scratch()).unwrap();
    let size = format!("{}M", (vfs.f_bavail * vfs.f_frsize / 10 * 6) >> 20);
    let out = lab.exec(&["--fs", "ext4", "--size", &size, "--crash-record", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("with its recording (a copy of it and a log of up to 4 GiB)"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = lab.exec(&["--fs", "ext4", "--crash-record", "--crash-log-cap", "1M", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--crash-log-cap 1 MiB: below the smallest"), "{}", String::from_utf8_lossy(&out.stderr));
    lab.assert_nothing_left("after refusals");
}
