//! `fslab bisect` over a program's git history, end to end: a repository
//! the test writes (16 commits of a small C program that writes 40 files;
//! commit 7 adds an fsync per file), built at each step, measured on
//! scratch ext4, with the answer checked against the commit the test made
//! the change in.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::Lab;

/// The C program of commit `n`: 40 files of 4 KiB; from `fsync_from` on
/// each is fsynced; from `slow_from` on it burns 25% more CPU first; at
/// `broken` it does not compile.
fn program(n: u32, fsync_from: u32, slow_from: Option<u32>, broken: Option<u32>) -> String {
    let sync = if n >= fsync_from { "fsync(fd);" } else { "" };
    let spins: u64 = if slow_from.is_some_and(|s| n >= s) { 50_000_000 } else { 40_000_000 };
    let typo = if broken == Some(n) { "this is not C" } else { "" };
    format!(
        "#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\n/* version {n} */\n{typo}\n\
         int main(void) {{\n    volatile unsigned long x = 0;\n    for (unsigned long i = 0; i < {spins}UL; i++) x += i;\n\
             char name[32], buf[4096] = {{0}};\n    for (int i = 0; i < 40; i++) {{\n\
                 snprintf(name, sizeof name, \"f%02d\", i);\n\
                 int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);\n\
                 if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf) return 1;\n        {sync}\n        close(fd);\n    }}\n    return 0;\n}}\n"
    )
}

/// A repository of 16 commits in `dir`; returns the commit ids, first
/// first.
fn repository(dir: &Path, fsync_from: u32, slow_from: Option<u32>, broken: Option<u32>) -> Vec<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    std::fs::create_dir_all(dir).unwrap();
    git(&["init", "-q"]);
    git(&["config", "user.email", "test@example.com"]);
    git(&["config", "user.name", "test"]);
    let mut ids = Vec::new();
    for n in 1..=16 {
        std::fs::write(dir.join("prog.c"), program(n, fsync_from, slow_from, broken)).unwrap();
        git(&["add", "prog.c"]);
        let subject = if n == fsync_from { format!("commit {n}: fsync every file") } else { format!("commit {n}") };
        git(&["commit", "-q", "-m", &subject]);
        ids.push(git(&["rev-parse", "HEAD"]));
    }
    ids
}

/// `fslab bisect` over `repo` from its first commit, on ext4, with `more`
/// flags before the command.
fn bisect(lab: &Lab, repo: &Path, more: &[&str]) -> Command {
    let mut c = lab.command();
    c.arg("bisect").arg("--repo").arg(repo).args(["--good", "HEAD~15", "--build", "cc -O1 -o prog prog.c", "--fs", "ext4"]);
    c.arg("--scratch").arg(lab.scratch()).args(["--size", "256M", "--progress", "none"]).args(more);
    c.args(["--", "{tree}/prog"]);
    c
}

fn json_of(out: &std::process::Output, code: i32) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(code),
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn first_bad(json: &serde_json::Value) -> String {
    let outcome = &json["bisect"]["outcome"];
    assert_eq!(outcome["kind"], "found", "{json:#}");
    let i = outcome["first_bad"].as_u64().unwrap() as usize;
    json["bisect"]["points"][i]["key"].as_str().unwrap().to_string()
}

#[test]
fn the_commit_that_added_an_fsync_per_file_is_found_in_four_steps_and_found_again_from_the_store() {
    if !common::root_or_skip("bisect over a git history") || !common::have("cc") {
        return;
    }
    let lab = Lab::new();
    let repo = lab.dir.path().join("repo");
    let ids = repository(&repo, 7, None, None);
    let out = bisect(&lab, &repo, &["--figure", "journal_commits", "--json"]).output().unwrap();
    let json = json_of(&out, 0);
    assert_eq!(first_bad(&json), ids[6], "commit 7: {json:#}");
    let b = &json["bisect"];
    assert!(b["steps"].as_u64().unwrap() <= 5, "{b:#}");
    assert_eq!(b["outcome"]["last_good"], 5);
    // Journal commits: about 40 against 2, far apart.
    // A busy machine's values are kept apart from quiet ones; either decides.
    let values = |i: usize| {
        let point = &b["points"][i];
        point["values"][0].as_f64().or_else(|| point["busy_values"][0].as_f64()).unwrap()
    };
    assert!(values(0) <= 5.0 && values(15) >= 30.0, "{} and {}", values(0), values(15));
    // The people's answer names the commit, its subject and how to see it.
    let text = bisect(&lab, &repo, &["--figure", "journal_commits"]).output().unwrap();
    let said = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0), "{said}");
    assert!(said.contains("resumed from the store, 6 already measured"), "{said}");
    assert!(said.contains(&format!("first bad   {}  commit 7: fsync every file", &ids[6][..10])), "{said}");
    assert!(said.contains(&format!("git -C {} show {}", repo.display(), ids[6])), "{said}");
    // Resumed whole: nothing measured again.
    let again = json_of(&bisect(&lab, &repo, &["--figure", "journal_commits", "--json"]).output().unwrap(), 0);
    assert_eq!(again["bisect"]["measured"].as_array().unwrap().len(), 0, "{again:#}");
    assert_eq!(first_bad(&again), ids[6]);
    lab.assert_nothing_left("after three bisects");
}

#[test]
fn a_bisect_killed_mid_step_resumes_without_measuring_its_decided_steps_again() {
    if !common::root_or_skip("a killed bisect resumes") || !common::have("cc") {
        return;
    }
    let lab = Lab::new();
    let repo = lab.dir.path().join("repo");
    let ids = repository(&repo, 7, None, None);
    let mut child =
        bisect(&lab, &repo, &["--figure", "journal_commits"]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    // The two ends and a step said, then killed in the next.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let mut said = Vec::new();
    while !said.last().is_some_and(|l: &String| l.contains("steps left") && (l.contains("→ good") || l.contains("→ bad"))) {
        said.push(lines.next().expect("the bisect ended before its first step was decided").unwrap());
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = Command::new("kill").args(["-KILL", &child.id().to_string()]).status();
    let _ = child.wait();
    let json = json_of(&bisect(&lab, &repo, &["--figure", "journal_commits", "--json"]).output().unwrap(), 0);
    let b = &json["bisect"];
    let resumed: Vec<u64> = b["resumed"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert!(resumed.len() >= 3, "{said:?} then resumed {resumed:?}");
    for step in b["measured"].as_array().unwrap() {
        assert!(!resumed.contains(&step["point"].as_u64().unwrap()), "measured again: {step}");
    }
    assert_eq!(first_bad(&json), ids[6]);
    lab.assert_nothing_left("after a killed bisect and its resumption");
}

#[test]
fn a_commit_that_does_not_build_is_skipped_and_said() {
    if !common::root_or_skip("a build that fails is skipped") || !common::have("cc") {
        return;
    }
    let lab = Lab::new();
    let repo = lab.dir.path().join("repo");
    let ids = repository(&repo, 7, None, Some(8));
    let out = bisect(&lab, &repo, &["--figure", "journal_commits", "--no-store"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains(&format!("{}: skipped, the build (cc -O1 -o prog prog.c) exited 1", &ids[7][..10])), "{said}");
    assert!(said.contains(&format!("first bad   {}", &ids[6][..10])), "{said}");
    lab.assert_nothing_left("after a bisect with a skipped commit");
}

#[test]
fn bad_input_is_refused_with_what_to_do() {
    if !common::root_or_skip("bisect refuses bad input") || !common::have("cc") {
        return;
    }
    let lab = Lab::new();
    let repo = lab.dir.path().join("repo");
    repository(&repo, 7, None, None);
    let refused = |c: &mut Command, code: i32, words: &str| {
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(err.contains(words), "wanted {words:?} in: {err}");
    };
    // Ends that do not differ: the change is before both (exit 5).
    let mut late = lab.command();
    late.arg("bisect").arg("--repo").arg(&repo).args([
        "--good",
        "HEAD~3",
        "--build",
        "cc -o prog prog.c",
        "--fs",
        "ext4",
        "--no-store",
    ]);
    late.arg("--scratch").arg(lab.scratch()).args([
        "--size",
        "256M",
        "--figure",
        "journal_commits",
        "--progress",
        "none",
        "--",
        "{tree}/prog",
    ]);
    let out = late.output().unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("do not differ"), "{}", String::from_utf8_lossy(&out.stdout));
    // A revision git does not know; the ends the wrong way round.
    let mut unknown = bisect(&lab, &repo, &["--figure", "journal_commits", "--bad", "no-such-branch"]);
    refused(&mut unknown, 2, "--bad no-such-branch: no such commit");
    let mut reversed = lab.command();
    reversed
        .arg("bisect")
        .arg("--repo")
        .arg(&repo)
        .args(["--good", "HEAD", "--bad", "HEAD~4", "--build", "true", "--fs", "ext4"]);
    reversed.args(["--figure", "journal_commits", "--", "true"]);
    refused(&mut reversed, 2, "is not an ancestor of --bad HEAD~4");
    // A figure the work does not measure.
    let mut figure = bisect(&lab, &repo, &["--figure", "journal_comits", "--no-store"]);
    refused(&mut figure, 2, "--figure journal_comits: the work measures no such figure");
    // Kernels: one Debian has not, a range the wrong way round, one kernel.
    let kernels = |list: &str| {
        let mut c = lab.command();
        c.args(["bisect", "--kernel", list, "--fs", "ext4", "--figure", "journal_commits", "--no-store", "--", "true"]);
        c
    };
    refused(&mut kernels("debian:6.1.0-99,debian:6.1.0-50"), 2, "6.1.0-99");
    refused(&mut kernels("debian:6.1.0-54..6.1.0-47"), 2, "debian:6.1.0-47..6.1.0-54");
    refused(&mut kernels("host"), 2, "two kernels at least");
    let mut two_places = lab.command();
    two_places.args(["bisect", "--kernel", "host,host", "--fs", "ext4,xfs", "--figure", "wall_s", "--", "true"]);
    refused(&mut two_places, 2, "a bisect follows one place");
    // Uncommitted changes: refused before anything is built.
    std::fs::write(repo.join("prog.c"), "changed").unwrap();
    let mut dirty = bisect(&lab, &repo, &["--figure", "journal_commits"]);
    refused(&mut dirty, 2, "uncommitted changes (prog.c): commit or stash them first");
    lab.assert_nothing_left("after refusals");
}

#[test]
fn a_commit_that_makes_the_program_a_quarter_slower_is_found_by_its_wall_time_or_said_cant_tell() {
    if !common::root_or_skip("bisect on a timing") || !common::have("cc") {
        return;
    }
    let lab = Lab::new();
    let repo = lab.dir.path().join("repo");
    // No fsync anywhere (commit 99 never comes); commit 11 spins 25% longer.
    let ids = repository(&repo, 99, Some(11), None);
    let out = bisect(&lab, &repo, &["--figure", "wall_s", "--json", "--no-store"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    let b = &json["bisect"];
    match b["outcome"]["kind"].as_str() {
        // Found: it must be commit 11, its sides told apart by the test.
        Some("found") => {
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(first_bad(&json), ids[10], "a wrong commit: {b:#}");
            let first = b["outcome"]["first_bad"].as_u64().unwrap() as usize;
            assert!(b["points"][first]["values"].as_array().unwrap().len() >= 2, "a timing decided from one value: {b:#}");
            // The answer's two sides were measured again one after the other.
            let confirm = &b["confirm"];
            assert_eq!(confirm["first_bad"].as_u64(), Some(first as u64), "{b:#}");
            let (g, bad) = (confirm["good"].as_array().unwrap().len(), confirm["bad"].as_array().unwrap().len());
            assert!(g >= 5 && g == bad, "{b:#}");
        }
        // Undecided is an answer too, with its figures and exit 5.
        Some("cant_tell" | "ends_agree" | "not_one_step") => {
            assert_eq!(out.status.code(), Some(5));
            assert!(b["outcome"]["why"].as_str().unwrap().contains("p = "), "{b:#}");
        }
        other => panic!("{other:?}: {b:#}"),
    }
    lab.assert_nothing_left("after a timing bisect");
}
