//! `scripts/postgres.sh`, run as root by `scripts/test.sh`: the role it
//! gives the tests is no door for another local user. `nobody` cannot log
//! in with anything the script leaves readable (its own text included),
//! the role cannot make databases, and `postgres.sh drop URL` (test.sh's
//! exit trap) removes the role and its database.
//!
//! It runs against the machine's own server (started if it is not; a
//! running one is left as it is), making and dropping a role of its own.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/postgres.sh")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `psql URL -c SQL` as nobody (no groups), or as root when `nobody` is false.
fn psql(url: &str, sql: &str, nobody: bool) -> Output {
    let mut c = if nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "psql"]);
        c
    } else {
        Command::new("psql")
    };
    c.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql]).env_remove("PGPASSWORD").env("HOME", "/nonexistent");
    c.output().unwrap()
}

/// Whether the role `name` exists, asked as the postgres superuser.
fn role_exists(port: &str, name: &str) -> bool {
    let out = Command::new("runuser")
        .args(["-u", "postgres", "--", "psql", "-X", "-A", "-t", "-p", port, "-c"])
        .arg(format!("SELECT count(*) FROM pg_roles WHERE rolname = '{name}'"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim() == "1"
}

#[test]
fn the_test_database_role_is_no_door_for_another_local_user_and_is_dropped_after() {
    if !common::root_or_skip("postgres_script_role") || !common::have("psql") {
        return;
    }
    let out = Command::new("bash").arg(script()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // postgres://ROLE:SECRET@127.0.0.1:PORT/DATABASE
    let rest = url.strip_prefix("postgres://").unwrap_or_else(|| panic!("not a URL: {url}"));
    let (who, place) = rest.split_once('@').unwrap();
    let (role, secret) = who.split_once(':').unwrap();
    let (host_port, database) = place.split_once('/').unwrap();
    let port = host_port.rsplit_once(':').unwrap().1.to_string();
    let dropped = || {
        let out = Command::new("bash").arg(script()).args(["drop", &url]).output().unwrap();
        assert!(out.status.success(), "drop: {}", text(&out));
    };

    // The secret is in no text nobody may read that the script leaves:
    // not in the script itself (as 'fslab_test' was).
    let own = std::fs::read_to_string(script()).unwrap();
    let result = std::panic::catch_unwind(|| {
        assert!(secret.len() >= 20 && !own.contains(secret), "the role's secret is in the script: {secret}");
        for password in ["fslab_test", role, secret] {
            let theirs = format!("postgres://{role}:{password}@{host_port}/{database}");
            let out = psql(&theirs, "SELECT 1", true);
            if password == secret {
                continue; // the real secret is root's: only root has the URL
            }
            assert!(!out.status.success(), "nobody logged in as {role} with password {password}: {}", text(&out));
        }
        // Nor through the server's socket as a local user (peer: nobody is not the role).
        let local = format!("postgresql:///{database}?host=/var/run/postgresql&port={port}&user={role}");
        let out = psql(&local, "SELECT 1", true);
        assert!(!out.status.success(), "nobody logged in over the socket as {role}: {}", text(&out));
        // The role works, for root who has the URL, but makes no database.
        let out = psql(&url, "SELECT 1", false);
        assert!(out.status.success(), "the tests' own URL does not work: {}", text(&out));
        let out = psql(&url, "CREATE DATABASE fslab_test_may_not", false);
        assert!(!out.status.success(), "the tests' role made a database");
        assert!(text(&out).contains("permission denied"), "{}", text(&out));
        // It may make a schema in its own database (the tests' stores).
        let out = psql(&url, "CREATE SCHEMA fslab_test_schema; DROP SCHEMA fslab_test_schema", false);
        assert!(out.status.success(), "{}", text(&out));
    });
    dropped();
    assert!(!role_exists(&port, role), "postgres.sh drop left the role {role}");
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}
