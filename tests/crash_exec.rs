//! `exec --crash MODEL --check CMD`: the user's checker runs in each
//! recovered crash state of a command's work, and its exit status judges
//! it; the command marks its own durability points through
//! `FSLAB_CRASH_MARK`, and the checker learns them from
//! `FSLAB_CRASH_DURABLE`. A checker that exits 1 makes every state bad; a
//! file the command synced and marked is there whole in every state past
//! its mark; SQLite never fails `PRAGMA integrity_check`, keeps every row
//! it committed with `synchronous=EXTRA` or in WAL mode with `FULL`, and
//! with its rollback journal and `FULL` loses a committed row in some
//! state (the journal's unlink is not synced: SQLite's own documentation
//! says so); a SIGKILL while a checker runs, then `fslab cleanup`, leaves
//! nothing.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::{Lab, Watched, cases, measured, recorder_or_skip};

/// `fslab exec --json` on ext4 with `args` (flags, then `--` and the
/// command), exit `code`.
fn exec(lab: &Lab, args: &[&str], code: i32) -> serde_json::Value {
    let mut all = vec!["--fs", "ext4", "--size", "512M", "--no-store"];
    all.extend_from_slice(args);
    lab.exec_json(&all, code)
}

/// The only case of `json`, which must be ok.
fn only_ok(json: &serde_json::Value) -> &serde_json::Value {
    let all = cases(json);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["status"], "ok", "{}", all[0]["error"]);
    &all[0]
}

#[test]
fn a_checker_that_exits_1_makes_every_state_bad_and_its_output_is_kept() {
    if !recorder_or_skip("a_checker_that_exits_1_makes_every_state_bad_and_its_output_is_kept") {
        return;
    }
    let lab = Lab::new();
    let check = "echo looked in $(pwd); echo durable at $FSLAB_CRASH_DURABLE >&2; exit 1";
    let work = "for i in 1 2 3; do echo $i > f$i; sync f$i; done";
    let json = exec(&lab, &["--crash", "flush", "--check", check, "--", "sh", "-c", work], 0);
    let case = only_ok(&json);
    let states = measured(case, "crash_states");
    assert!(states >= 3.0, "{}", case["crash"]["states"]);
    assert_eq!(measured(case, "crash_bad"), states, "every state bad");
    assert_eq!(measured(case, "crash_check_failed"), states, "every state's checker failed");
    assert_eq!(measured(case, "crash_unmountable") + measured(case, "crash_fsck_failed"), 0.0);
    let first = &case["crash"]["states"]["first_bad"];
    assert_eq!(first["classes"], serde_json::json!(["check_failed"]), "{first}");
    let detail = first["detail"].as_str().unwrap();
    assert!(detail.contains("exited with status 1"), "{detail}");
    assert!(detail.contains("looked in /") && detail.contains("state-mnt"), "the checker ran in the mounted state: {detail}");
    assert!(detail.contains("durable at /"), "stderr kept too: {detail}");
    assert!(case["crash"]["states"]["checker"].as_str().unwrap().contains("exit 1"), "{}", case["crash"]["states"]);
    // Printed: the first bad state's output.
    let out = lab.exec(&["--fs", "ext4", "--size", "512M", "--no-store", "--crash", "flush", "--check", check, "--", "sh", "-c", work]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("check failed") && text.contains("looked in"), "{text}");
    lab.assert_nothing_left("after two judged runs");
}

#[test]
fn a_file_synced_then_marked_is_there_in_every_state_past_its_mark() {
    if !recorder_or_skip("a_file_synced_then_marked_is_there_in_every_state_past_its_mark") {
        return;
    }
    let lab = Lab::new();
    // Each file written, synced, then marked; more writes after, unsynced.
    let work = "for i in 1 2 3 4; do printf 'record %s\\n' $i > f$i; sync f$i; echo f$i > \"$FSLAB_CRASH_MARK\"; \
                head -c 65536 /dev/urandom > junk$i; done";
    // Every name durable at the state must be there whole; count how
    // many states saw each number of durable names.
    let check = "n=0; while read -r name; do [ \"$(cat \"$name\")\" = \"record ${name#f}\" ] || { echo \"$name lost\"; exit 1; }; \
                 n=$((n+1)); done < \"$FSLAB_CRASH_DURABLE\"; echo \"$n durable\"";
    let json = exec(&lab, &["--crash", "prefix", "--check", check, "--", "sh", "-c", work], 0);
    let case = only_ok(&json);
    let marks: Vec<&str> =
        case["crash"]["marks"].as_array().unwrap().iter().filter_map(|m| m["what"].as_str()?.strip_prefix("durable:")).collect();
    assert_eq!(marks, ["f1", "f2", "f3", "f4"]);
    assert!(measured(case, "crash_states") > 4.0, "{}", case["crash"]["states"]);
    assert_eq!(measured(case, "crash_bad"), 0.0, "{}", case["crash"]["states"]);
    assert_eq!(measured(case, "crash_check_failed"), 0.0);

    // The same checker sees a name it was told of missing when the
    // command marks before it syncs: a mark is a claim the checker holds
    // the work to, not a sync of its own.
    let early = "for i in 1 2 3 4; do echo f$i > \"$FSLAB_CRASH_MARK\"; sleep 0.2; printf 'record %s\\n' $i > f$i; sync; done";
    let json = exec(&lab, &["--crash", "prefix", "--check", check, "--", "sh", "-c", early], 0);
    let case = only_ok(&json);
    assert!(measured(case, "crash_check_failed") >= 1.0, "{}", case["crash"]["states"]);
    let detail = case["crash"]["states"]["first_bad"]["detail"].as_str().unwrap();
    assert!(detail.contains("lost"), "{detail}");
    lab.assert_nothing_left("after two judged runs");
}

#[test]
fn a_mark_that_is_not_a_name_fails_the_case_and_check_needs_crash() {
    if !recorder_or_skip("a_mark_that_is_not_a_name_fails_the_case_and_check_needs_crash") {
        return;
    }
    let lab = Lab::new();
    let long = "x".repeat(300);
    let work = format!("echo {long} > \"$FSLAB_CRASH_MARK\"");
    let json = exec(&lab, &["--crash", "flush", "--", "sh", "-c", &work], 4);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "failed");
    assert!(case["error"].as_str().unwrap().contains("FSLAB_CRASH_MARK"), "{}", case["error"]);
    let out = lab.exec(&["--fs", "ext4", "--no-store", "--check", "true", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--crash"), "{}", String::from_utf8_lossy(&out.stderr));
    // A checker the shell cannot read is refused before anything is made.
    let out = lab.exec(&["--fs", "ext4", "--no-store", "--crash", "flush", "--check", "if then", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--check"), "{}", String::from_utf8_lossy(&out.stderr));
    // A checker whose program is not there is an error of the run.
    let json = exec(&lab, &["--crash", "flush", "--check", "no-such-checker-program", "--", "true"], 2);
    let error = cases(&json)[0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("could not start") && error.contains("no-such-checker-program"), "{error}");
    lab.assert_nothing_left("after refusals");
}

/// The SQLite work: `ROWS` rows inserted one transaction each into `db`
/// under the pragmas in `$0`, and after each COMMIT has returned, the row
/// marked durable (sqlite3's `.shell`).
const SQLITE_WORK: &str = r#"{ echo "$0"; echo "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);"
  for i in $(seq 1 10); do
    echo "BEGIN; INSERT INTO t(k, v) VALUES ($i, hex(randomblob(3000))); COMMIT;"
    echo ".shell echo row-$i > $FSLAB_CRASH_MARK"
  done; } | sqlite3 db"#;

/// The SQLite checker: the database checks whole and holds every row
/// marked durable by then.
const SQLITE_CHECK: &str = r#"if [ ! -e db ]; then [ ! -s "$FSLAB_CRASH_DURABLE" ] || { echo db missing; exit 1; }; exit 0; fi
  sqlite3 db 'PRAGMA integrity_check' | grep -qx ok || { echo integrity_check failed; exit 1; }
  while read -r m; do
    [ "$(sqlite3 db "SELECT count(*) FROM t WHERE k=${m#row-}")" = 1 ] || { echo "$m lost"; exit 1; }
  done < "$FSLAB_CRASH_DURABLE""#;

#[test]
fn sqlite_keeps_every_committed_row_with_extra_or_wal_full_and_may_lose_the_last_with_delete_full() {
    if !recorder_or_skip("sqlite_keeps_every_committed_row_with_extra_or_wal_full_and_may_lose_the_last_with_delete_full") {
        return;
    }
    if !common::have("sqlite3") {
        assert!(std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_none(), "no sqlite3 (scripts/setup.sh --tests installs it)");
        return;
    }
    let lab = Lab::new();
    let mut said = Vec::new();
    for (mode, pragmas) in [
        ("delete-full", "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;"),
        ("delete-extra", "PRAGMA journal_mode=DELETE; PRAGMA synchronous=EXTRA;"),
        ("wal-full", "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"),
        ("wal-normal", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"),
        ("off", "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"),
    ] {
        let json = exec(&lab, &["--crash", "prefix", "--check", SQLITE_CHECK, "--", "sh", "-c", SQLITE_WORK, pragmas], 0);
        let case = only_ok(&json);
        let marks = case["crash"]["marks"].as_array().unwrap().iter().filter(|m| m["what"].as_str().unwrap().starts_with("durable:row-"));
        assert_eq!(marks.count(), 10, "{mode}: {}", case["crash"]["marks"]);
        let (states, bad) = (measured(case, "crash_states"), measured(case, "crash_bad"));
        let first = &case["crash"]["states"]["first_bad"];
        said.push(format!("{mode}: {states} states, {bad} bad ({})", first["detail"]));
        let detail = first["detail"].as_str().unwrap_or("");
        assert!(!detail.contains("integrity_check failed"), "{mode}: SQLite's file was damaged: {detail}");
        match mode {
            // Guaranteed by SQLite's own words: EXTRA syncs the folder
            // after the journal's unlink, and WAL with FULL syncs the WAL
            // at each commit.
            "delete-extra" | "wal-full" => assert_eq!(bad, 0.0, "{mode}: {}", case["crash"]["states"]),
            // FULL leaves the journal's unlink (the commit) unsynced: a
            // state from the database's sync to the next transaction's
            // finds the hot journal and rolls the last row back.
            "delete-full" => assert!(detail.ends_with(" lost"), "{mode}: {}", case["crash"]["states"]),
            _ => {}
        }
    }
    eprintln!("{}", said.join("\n"));
    lab.assert_nothing_left("after five judged runs");
}

#[test]
fn sigkill_while_a_checker_runs_then_cleanup_leaves_nothing() {
    if !recorder_or_skip("sigkill_while_a_checker_runs_then_cleanup_leaves_nothing") {
        return;
    }
    let lab = Lab::new();
    let flag = lab.dir.path().join("checking");
    let mut c = lab.command();
    c.args(["exec", "--scratch"]).arg(lab.scratch());
    c.args(["--fs", "ext4", "--size", "512M", "--crash", "flush", "--no-store", "--check"]);
    // The checker says it runs, then sleeps (with a child of its own).
    c.arg(format!("touch {}; sleep 300 & sleep 300", flag.display()));
    c.args(["--progress", "json", "--", "sh", "-c", "echo a > a; sync a"]);
    let mut child = Watched::spawn(c.stdout(Stdio::null()));
    child.until(Duration::from_secs(120), "no checker ran in time", || flag.exists());
    child.kill();
    let out = lab.command().arg("cleanup").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("state-mnt"), "cleanup said nothing of the state's mount:\n{said}");
    std::fs::remove_file(&flag).unwrap();
    lab.assert_nothing_left(&format!("after SIGKILL while a checker ran and cleanup, which said:\n{said}"));
}
