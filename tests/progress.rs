//! Progress where no terminal is: run with stderr piped (nohup, CI), a run
//! says each case as it starts and ends, with the run's clock and an
//! estimate of what is left; `--progress json` says the same as one JSON
//! event a line, a wait for another run's lock included; and every line of
//! progress comes before the results on stdout. Real runs of the binary.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{Lab, Watched, root_or_skip};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `fslab exec --dir WORK ARGS... -- sh -c SCRIPT` in the lab, its output
/// (stderr a pipe, as under nohup or CI).
fn exec_in_dir(lab: &Lab, args: &[&str], script: &str) -> Output {
    let work = lab.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut c = lab.command();
    c.arg("exec").arg("--dir").arg(&work).args(args).args(["--", "sh", "-c", script]);
    c.output().expect("run fslab exec")
}

/// A command failing the first time it runs and passing after, by a flag
/// file outside the work folder.
fn fails_once(lab: &Lab) -> String {
    let flag = lab.dir.path().join("ran-once");
    format!("sleep 0.2; if [ -e {f} ]; then exit 0; fi; touch {f}; exit 1", f = flag.display())
}

/// The JSON events among stderr's lines (other lines are said in words).
fn events(stderr: &str) -> Vec<serde_json::Value> {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON object ({e}): {l}\n--- stderr\n{stderr}")))
        .collect()
}

#[test]
fn without_a_terminal_each_case_is_said_as_it_starts_and_ends() {
    let lab = Lab::new();
    let out = exec_in_dir(&lab, &["--repeat", "2"], &fails_once(&lab));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "a failed case is exit 4\n{stdout}\n{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with('[')).collect();
    let said = |at: usize, what: &str| {
        let line = lines.get(at).unwrap_or_else(|| panic!("no progress line {at}:\n{stderr}"));
        assert!(line.contains(what), "line {at} does not say `{what}`: {line}\n--- stderr\n{stderr}");
        line.to_string()
    };
    said(0, "[1/2] ");
    said(0, " exec on dir r1 started");
    let first = said(1, "[1/2] ");
    said(1, " exec on dir r1 failed in ");
    // The run's clock on every line, and what is left after a case.
    assert!(first.contains(" 0:0"), "{first}");
    assert!(first.contains("about") && first.ends_with(" left"), "no estimate: {first}");
    said(2, "[2/2] ");
    said(2, " exec on dir r2 started");
    said(3, " exec on dir r2 ok in ");
    said(4, "done: 2 cases in ");
    said(4, "1 failed");
    assert_eq!(lines.len(), 5, "{stderr}");
    // No bar drawn into the log, and the results on stdout as ever.
    assert!(!stderr.contains('\r'), "{stderr:?}");
    assert!(stdout.contains("stored as run "), "{stdout}");

    // `--progress none` says no case.
    let out = exec_in_dir(&lab, &["--progress", "none"], "true");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("[1/1]"), "{}", text(&out.stderr));
    lab.assert_nothing_left("after runs said line by line");
}

#[test]
fn progress_json_is_one_event_a_line_and_every_line_comes_before_the_results() {
    let lab = Lab::new();
    // --json: stdout holds the run's document alone, stderr the events.
    let out = exec_in_dir(&lab, &["--json", "--repeat", "2", "--progress", "json"], &fails_once(&lab));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    let run: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"));
    let all = events(&stderr);
    let cases: Vec<&serde_json::Value> = all.iter().filter(|e| e["event"] != "wait" && e["event"] != "waited").collect();
    let kinds: Vec<&str> = cases.iter().map(|e| e["event"].as_str().unwrap_or("?")).collect();
    assert_eq!(kinds, ["case_start", "case_end", "case_start", "case_end", "run_end"], "{stderr}");
    for (at, n) in [(0, 1), (1, 1), (2, 2), (3, 2)] {
        let e = cases[at];
        assert_eq!(e["case"], n, "{e}");
        assert_eq!(e["of"], 2, "{e}");
        assert_eq!(e["scenario"], "exec", "{e}");
        assert_eq!(e["place"], "dir", "{e}");
        assert_eq!(e["repeat"], n, "{e}");
        assert!(e["elapsed_s"].as_f64().is_some_and(|s| s >= 0.0), "{e}");
    }
    let (failed, ok) = (cases[1], cases[3]);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed["error"].as_str().is_some_and(|e| !e.is_empty()), "{failed}");
    assert!(failed["seconds"].as_f64().is_some_and(|s| s >= 0.2), "{failed}");
    assert!(failed["left_s"].as_f64().is_some_and(|s| s > 0.0), "one case left: {failed}");
    assert_eq!(ok["status"], "ok", "{ok}");
    assert!(ok["error"].is_null(), "{ok}");
    assert_eq!(ok["left_s"], 0.0, "{ok}");
    let end = cases[4];
    assert_eq!(end["run"], run["run"]["id"], "{end}");
    assert_eq!((end["cases"].as_u64(), end["failed"].as_u64(), end["planned"].as_u64()), (Some(2), Some(1), Some(2)), "{end}");
    assert_eq!(end["complete"], true, "{end}");
    assert!(end["seconds"].as_f64().is_some_and(|s| s >= 0.4), "{end}");

    // stdout and stderr into one pipe (`2>&1 | tee log`): the results come
    // after the last line of progress, never between its lines.
    let work = lab.dir.path().join("work");
    let mut c = Command::new("sh");
    c.env("FSLAB_STATE_DIR", lab.state()).env("FSLAB_STORE", lab.store());
    c.args(["-c", r#"exec "$0" "$@" 2>&1"#, env!("CARGO_BIN_EXE_fslab"), "exec", "--dir"]).arg(&work);
    let out = c.args(["--repeat", "2", "--", "sleep", "0.1"]).output().unwrap();
    let both = text(&out.stdout);
    assert!(out.status.success(), "{both}");
    let lines: Vec<&str> = both.lines().collect();
    let last_progress = lines.iter().rposition(|l| l.starts_with('[')).unwrap_or_else(|| panic!("no progress: {both}"));
    let table = lines.iter().position(|l| l.starts_with("run ")).unwrap_or_else(|| panic!("no results: {both}"));
    assert!(last_progress < table, "progress after the results began:\n{both}");
    lab.assert_nothing_left("after runs said as events");
}

/// Hold `path`'s flock exclusively until dropped.
struct Held(#[allow(dead_code)] std::fs::File);

impl Held {
    fn take(path: &Path) -> Held {
        let file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        Held(file)
    }
}

#[test]
fn a_wait_for_another_runs_lock_is_an_event_and_the_run_goes_on_after_it() {
    if !root_or_skip("progress_wait_event") {
        return;
    }
    let lab = Lab::new();
    let cache = lab.dir.path().join("cache");
    let aged = |extra: &[&str]| {
        let mut c = lab.command();
        c.args(["run", "create-file", "--no-store", "--fs", "ext4", "--size", "256M"])
            .args(["--set", "size=8M", "--set", "method=write-64k", "--age", "churn", "--age-cache"])
            .arg(&cache)
            .arg("--scratch")
            .arg(lab.scratch())
            .args(extra);
        c
    };
    // The first run ages the key's image; its lock file stays.
    let out = aged(&["--progress", "none"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lock = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "lock"))
        .unwrap_or_else(|| panic!("no key lock in {}", cache.display()));
    // Another holder makes the next run wait for the key.
    let held = Held::take(&lock);
    let mut child = Watched::spawn(aged(&["--progress", "json"]).stdout(Stdio::null()));
    let waits_for_the_key = |line: &str| line.contains(r#""event":"wait""#) && line.contains("cache");
    child.until_said(Duration::from_secs(120), "no wait said", waits_for_the_key);
    let line = child.lines().into_iter().find(|l| waits_for_the_key(l)).unwrap();
    let wait: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    assert!(wait["what"].as_str().unwrap().contains(&lock.display().to_string()), "{wait}");
    let me = format!("pid {} ", std::process::id());
    assert!(wait["holders"].as_array().is_some_and(|h| h.iter().any(|h| h.as_str().unwrap_or("").starts_with(&me))), "{wait}");
    assert_eq!(wait["waited_s"], 0, "the first word comes at once: {wait}");
    // While it waits, its working clock (the tests' deadlines) stands still.
    let worked = child.worked();
    std::thread::sleep(Duration::from_secs(2));
    assert!(child.ended().is_none() && child.waiting(), "it did not wait");
    assert!(child.worked().saturating_sub(worked) < Duration::from_millis(500), "{worked:?}, then {:?}", child.worked());
    drop(held);
    let (out, _) = child.finish();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let all = events(&stderr);
    // The end of the wait is said once the key is taken.
    let waited = all.iter().position(|e| e["event"] == "waited").unwrap_or_else(|| panic!("no waited event:\n{stderr}"));
    let wait_at = all.iter().position(|e| e["event"] == "wait").unwrap();
    assert!(wait_at < waited, "{stderr}");
    assert_eq!(all[waited]["what"], wait["what"], "{stderr}");
    assert!(all[waited]["waited_s"].as_f64().is_some_and(|s| s >= 2.0), "it waited 2 s and more: {stderr}");
    let last = all.last().unwrap();
    assert_eq!(last["event"], "run_end", "{stderr}");
    assert_eq!(last["cases"], 1, "{last}");
    lab.assert_nothing_left("after a run that waited");
}

#[test]
fn a_wait_and_its_end_are_read_from_events_and_from_words() {
    use common::watch::says_wait;
    assert_eq!(says_wait(r#"{"event":"wait","what":"x","holders":[],"waited_s":0}"#), Some(true));
    assert_eq!(says_wait(r#"{"event":"waited","what":"x","waited_s":1.5}"#), Some(false));
    assert_eq!(says_wait(r#"{"event":"case_start","case":1}"#), None);
    assert_eq!(says_wait("fslab: waiting for the machine's sysctl lock (/run/fslab/sysctl.lock), held by pid 1 (uid 0, fslab)"), Some(true));
    assert_eq!(says_wait("fslab: got the machine's sysctl lock (/run/fslab/sysctl.lock) after 3.0 s"), Some(false));
    assert_eq!(says_wait("[1/2] 0:01 exec on dir r1 started"), None);
}
