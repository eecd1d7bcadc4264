//! `exec --crash`: what a command or its checker does cannot hold fslab.
//! A process the checker or the command leaves running outside its
//! group, holding its output, is named, ended by its pid, and fails the
//! case, within seconds (not the checker's 120 s, not forever); a signal
//! while a checker runs ends fslab at once; a process that reads the
//! mark channel cannot keep it from ending; a mark line of a gigabyte,
//! millions of bad lines or 300,000 names keep fslab's memory and its
//! record small; and `subset:100000` over a large epoch with three states
//! judged stays small.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::{Lab, Watched, cases, recorder_or_skip};

/// fslab's peak resident set so far (`VmHWM`, KiB); `None` once it has
/// exited.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Run `fslab exec --json` with `args` in `lab`, bounded: it must end
/// within `limit` of its work. Its JSON, exit code and peak RSS in MiB.
fn bounded(lab: &Lab, args: &[&str], limit: Duration) -> (serde_json::Value, Option<i32>, u64) {
    let mut c = lab.command();
    c.args(["exec", "--json", "--progress", "json", "--no-store", "--fs", "ext4", "--size", "512M", "--scratch"]).arg(lab.scratch());
    c.args(args);
    let mut child = Watched::spawn(c.stdout(Stdio::piped()));
    let pid = child.id();
    let mut peak = 0;
    child.until(limit, "fslab did not end", || match peak_kib(pid) {
        Some(kib) => {
            peak = peak.max(kib);
            false
        }
        None => true,
    });
    let (out, _) = child.finish();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    (json, out.status.code(), peak / 1024)
}

/// The pid a command wrote into `file`, ended (SIGKILL) if it still runs
/// a `sleep`: whether it was still running.
fn still_ran(file: &Path) -> bool {
    let Ok(pid) = std::fs::read_to_string(file) else { return false };
    let pid = pid.trim();
    let running = std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep"));
    if running {
        let _ = std::process::Command::new("kill").args(["-KILL", pid]).status();
    }
    running
}

#[test]
fn a_process_left_outside_the_group_holding_output_is_named_ended_and_fails_the_case() {
    if !recorder_or_skip("a_process_left_outside_the_group_holding_output_is_named_ended_and_fails_the_case") {
        return;
    }
    let lab = Lab::new();
    let pid_file = lab.dir.path().join("escaped.pid");
    let escape = format!("setsid sleep 100000 & sleep 0.5; echo $! > {}", pid_file.display());
    for (who, args) in [
        ("the checker", vec!["--crash", "flush", "--check", escape.as_str(), "--", "sh", "-c", "echo a > a; sync a"]),
        ("the command", vec!["--crash", "flush", "--", "sh", "-c", escape.as_str()]),
    ] {
        let (json, code, _) = bounded(&lab, &args, Duration::from_secs(60));
        let ran = still_ran(&pid_file);
        let case = &cases(&json)[0];
        assert_eq!(code, Some(4), "{who}: {json}");
        assert_eq!(case["status"], "failed", "{who}");
        let error = case["error"].as_str().unwrap();
        assert!(error.contains(who) && error.contains("sleep 100000") && error.contains("ended"), "{who}: {error}");
        assert!(!ran, "{who}: the escaped sleep still ran");
        lab.assert_nothing_left(who);
    }
}

#[test]
fn a_signal_while_a_checker_runs_ends_fslab_at_once() {
    if !recorder_or_skip("a_signal_while_a_checker_runs_ends_fslab_at_once") {
        return;
    }
    let lab = Lab::new();
    let flag = lab.dir.path().join("checking");
    let mut c = lab.command();
    c.args(["exec", "--no-store", "--fs", "ext4", "--size", "512M", "--crash", "flush", "--progress", "json", "--scratch"]).arg(lab.scratch());
    c.arg("--check").arg(format!("touch {}; sleep 100", flag.display()));
    c.args(["--", "sh", "-c", "echo a > a; sync a"]);
    let mut child = Watched::spawn(c.stdout(Stdio::null()));
    child.until(Duration::from_secs(60), "no checker ran", || flag.exists());
    let at = child.worked();
    let pid = child.id();
    let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
    child.until(at + Duration::from_secs(20), "fslab went on after SIGTERM", || peak_kib(pid).is_none());
    let (out, _) = child.finish();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&out.status), Some(15), "died of SIGTERM");
    std::fs::remove_file(&flag).unwrap();
    lab.assert_nothing_left(&format!("after SIGTERM while a checker ran:\n{}", String::from_utf8_lossy(&out.stderr)));
}

#[test]
fn a_process_reading_the_mark_channel_cannot_keep_it_from_ending() {
    if !recorder_or_skip("a_process_reading_the_mark_channel_cannot_keep_it_from_ending") {
        return;
    }
    let lab = Lab::new();
    let pid_file = lab.dir.path().join("escaped.pid");
    // The reader holds nothing else of the command's.
    let work = format!(
        "echo one > \"$FSLAB_CRASH_MARK\"; setsid sh -c 'echo $$ > {}; exec cat \"$FSLAB_CRASH_MARK\"' >/dev/null 2>&1 </dev/null & sleep 1; echo two > \"$FSLAB_CRASH_MARK\"",
        pid_file.display()
    );
    let (json, code, _) = bounded(&lab, &["--crash", "flush", "--", "sh", "-c", &work], Duration::from_secs(60));
    let _ = still_ran(&pid_file);
    let case = &cases(&json)[0];
    assert_eq!(code, Some(4), "{json}");
    let error = case["error"].as_str().unwrap();
    assert!(error.contains("cat") && error.contains("ended"), "{error}");
    lab.assert_nothing_left("after a reader of the mark channel");
}

#[test]
fn what_a_command_writes_to_the_mark_channel_keeps_fslab_and_its_record_small() {
    if !recorder_or_skip("what_a_command_writes_to_the_mark_channel_keeps_fslab_and_its_record_small") {
        return;
    }
    let lab = Lab::new();
    let long = "head -c 1G /dev/zero | tr '\\0' x > \"$FSLAB_CRASH_MARK\"";
    let (json, code, peak) = bounded(&lab, &["--crash", "flush", "--", "sh", "-c", long], Duration::from_secs(120));
    assert_eq!(code, Some(4), "{json}");
    assert!(cases(&json)[0]["error"].as_str().unwrap().contains("1073741824 bytes"), "{json}");
    assert!(peak < 150, "a 1 GiB line: fslab peaked at {peak} MiB");
    let bad = "yes \"$(printf 'a\\tb')\" | head -n 3000000 > \"$FSLAB_CRASH_MARK\"";
    let (json, code, peak) = bounded(&lab, &["--crash", "flush", "--", "sh", "-c", bad], Duration::from_secs(120));
    assert_eq!(code, Some(4), "{json}");
    let error = cases(&json)[0]["error"].as_str().unwrap();
    assert!(error.contains("and 2999997 more") && error.len() < 1000, "{error}");
    assert!(peak < 150, "3,000,000 bad lines: fslab peaked at {peak} MiB");
    let many = "seq 300000 | sed 's/^/m/' > \"$FSLAB_CRASH_MARK\"";
    let (json, code, peak) = bounded(&lab, &["--crash", "flush", "--", "sh", "-c", many], Duration::from_secs(120));
    assert_eq!(code, Some(0), "{json}");
    let crash = &cases(&json)[0]["crash"];
    assert_eq!(crash["marks"].as_array().unwrap().len(), 5002, "work_start, 5,000 names, work_end");
    assert_eq!(crash["marks_left_out"], 295_000);
    assert!(json.to_string().len() < 2_000_000, "{} bytes of JSON", json.to_string().len());
    assert!(peak < 150, "300,000 names: fslab peaked at {peak} MiB");
    lab.assert_nothing_left("after three runs");
}

#[test]
fn subset_with_a_large_k_over_a_large_epoch_judges_a_few_states_in_little_memory() {
    if !recorder_or_skip("subset_with_a_large_k_over_a_large_epoch_judges_a_few_states_in_little_memory") {
        return;
    }
    let lab = Lab::new();
    // 8,000 direct 4 KiB writes into a file made and synced first: one
    // epoch of thousands of writes (the journal commits none of them).
    let work = "fallocate -l 40M f && sync f && dd if=/dev/zero of=f bs=4k count=8000 oflag=direct conv=notrunc status=none";
    let args = ["--crash", "subset:100000", "--crash-max-states", "3", "--", "sh", "-c", work];
    let (json, code, peak) = bounded(&lab, &args, Duration::from_secs(300));
    assert_eq!(code, Some(0), "{json}");
    let states = &cases(&json)[0]["crash"]["states"];
    assert_eq!(states["judged"], 3, "{states}");
    assert!(states["total"].as_u64().unwrap() > 100_000, "a large epoch drawn: {states}");
    assert!(peak < 200, "fslab peaked at {peak} MiB");
    lab.assert_nothing_left("after subset:100000");
}
