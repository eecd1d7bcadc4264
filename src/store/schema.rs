//! The store's schema and its migrations, written once for both backends.
//!
//! The one design decision: there is a single DDL text per version, with
//! three words a backend fills in (`{id}`, `{int}`, `{real}`), so SQLite
//! and PostgreSQL cannot drift apart. Values a reader only ever wants whole
//! (parameters, environment, timelines, extent lists) are JSON text; what
//! `runs`, `compare` and SQL users filter on (scenario, fs, figure name,
//! value, tag) are columns.
//!
//! A store records its version in `fslab_schema`. Opening one applies the
//! missing migrations in one transaction; a store whose version is newer
//! than this fslab knows is refused with a clear error, never guessed at.

use super::{Backend, Value};
use crate::error::{Error, Result};

/// The schema version this fslab writes and reads.
pub const CURRENT: i64 = 9;

/// Each version's DDL, in order; index `i` makes version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: runs, their tags, cases, figures, timelines, kept extent maps.
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        complete {int} NOT NULL DEFAULT 0,
        command TEXT NOT NULL,
        kernel TEXT NOT NULL,
        environment TEXT NOT NULL,
        sysctls TEXT NOT NULL,
        verdicts TEXT NOT NULL DEFAULT '[]'
    );
    CREATE TABLE run_tags (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        tag TEXT NOT NULL,
        PRIMARY KEY (run_id, tag)
    );
    CREATE INDEX run_tags_by_tag ON run_tags (tag);
    CREATE TABLE cases (
        id {id},
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        ordinal {int} NOT NULL,
        case_key TEXT NOT NULL,
        scenario TEXT NOT NULL,
        fs TEXT NOT NULL,
        params TEXT NOT NULL,
        repeat {int} NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        fs_type TEXT NOT NULL,
        device TEXT,
        mkfs_args TEXT NOT NULL,
        mount_opts TEXT,
        cold_method TEXT,
        command_output TEXT,
        UNIQUE (run_id, ordinal)
    );
    CREATE INDEX cases_by_key ON cases (case_key);
    CREATE TABLE figures (
        case_id {int} NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        ordinal {int} NOT NULL,
        name TEXT NOT NULL,
        value {real},
        unit TEXT NOT NULL,
        better TEXT NOT NULL,
        kind TEXT NOT NULL,
        missing TEXT,
        PRIMARY KEY (case_id, name)
    );
    CREATE TABLE timelines (
        case_id {int} PRIMARY KEY REFERENCES cases(id) ON DELETE CASCADE,
        points TEXT NOT NULL
    );
    CREATE TABLE extent_maps (
        case_id {int} NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        ordinal {int} NOT NULL,
        path TEXT NOT NULL,
        size {int} NOT NULL,
        block_size {int} NOT NULL,
        device_bytes {int} NOT NULL,
        extents {int} NOT NULL,
        truncated {int} NOT NULL,
        extent_list TEXT NOT NULL,
        PRIMARY KEY (case_id, ordinal)
    )",
    // 2: a case's conditions (memory limit, per-case sysctls) as a JSON
    // object, and the memory cgroup its work ran in; NULL in cases stored
    // before, which read as none, as they ran.
    "ALTER TABLE cases ADD COLUMN conditions TEXT;
    ALTER TABLE cases ADD COLUMN memory_cgroup TEXT",
    // 3: an aged or filled target's starting point (`--age`, `--fill`) as
    // a JSON object, and how its image was copied from the cache; NULL in
    // cases stored before, which started fresh.
    "ALTER TABLE cases ADD COLUMN start TEXT;
    ALTER TABLE cases ADD COLUMN image_copy TEXT",
    // 4: why a case counts as measured on a busy machine (others' CPU or
    // disk I/O over the thresholds in its window); NULL when it did not,
    // and in cases stored before, which were not watched.
    "ALTER TABLE cases ADD COLUMN busy TEXT",
    // 5: the guest a case ran in (`--kernel IMAGE`) as a JSON object:
    // kernel release, acceleration, whether timings were emulated, the
    // VM's size; NULL for cases run on the host, and in cases stored
    // before, which all ran there.
    "ALTER TABLE cases ADD COLUMN guest TEXT",
    // 6: the modelled drive (`--disk`) the case's `modelled_*` figures are
    // for, a disk profile's name; NULL in cases stored before, which had
    // none.
    "ALTER TABLE cases ADD COLUMN disk TEXT",
    // 7: a case's sampled block requests (work, cold read-back) as a JSON
    // list; none in cases stored before, which traced none.
    "CREATE TABLE request_streams (
        case_id {int} PRIMARY KEY REFERENCES cases(id) ON DELETE CASCADE,
        streams TEXT NOT NULL
    )",
    // 8: runs of a plan (`run --plan`): the plan's id and the shard a run
    // ran; a case's key in its plan, unique with the plan's id and the
    // repeat, so a shard run again replaces its cases, never adds to them;
    // and each plan's file, once. NULL in runs and cases of no plan.
    "ALTER TABLE runs ADD COLUMN plan_id TEXT;
    ALTER TABLE runs ADD COLUMN shard TEXT;
    CREATE INDEX runs_by_plan ON runs (plan_id);
    ALTER TABLE cases ADD COLUMN plan_id TEXT;
    ALTER TABLE cases ADD COLUMN plan_key TEXT;
    CREATE UNIQUE INDEX cases_by_plan ON cases (plan_id, plan_key, repeat);
    CREATE TABLE plans (
        id TEXT PRIMARY KEY,
        cases {int} NOT NULL,
        document TEXT NOT NULL
    )",
    // 9: a case's crash record (`--crash`, `--crash-record`) as a JSON
    // object: the recording's summary and marks, and each crash state's
    // outcome; NULL for cases not recorded, and in cases stored before,
    // which kept only its figures.
    "ALTER TABLE cases ADD COLUMN crash TEXT",
];

/// The words a backend puts into the DDL.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// An auto-numbered 64-bit primary key.
    pub id: &'static str,
    /// A 64-bit integer.
    pub int: &'static str,
    /// A double.
    pub real: &'static str,
}

/// `ddl` with the dialect's words in.
fn fill(ddl: &str, d: Dialect) -> String {
    ddl.replace("{id}", d.id).replace("{int}", d.int).replace("{real}", d.real)
}

/// Bring the store to [`CURRENT`], or refuse one that is newer. `location`
/// names the store in messages.
pub fn migrate(backend: &mut dyn Backend, location: &str) -> Result<()> {
    let dialect = backend.dialect();
    backend.transaction(&mut |sql| {
        sql.lock_for_migration()?;
        sql.execute("CREATE TABLE IF NOT EXISTS fslab_schema (version {int} NOT NULL)".replace("{int}", dialect.int).as_str(), &[])?;
        let rows = sql.query("SELECT MAX(version) FROM fslab_schema", &[])?;
        let found = rows.first().and_then(|r| r.first()).and_then(Value::as_i64).unwrap_or(0);
        if found > CURRENT {
            return Err(newer(location, found));
        }
        for version in found + 1..=CURRENT {
            let ddl = fill(MIGRATIONS[(version - 1) as usize], dialect);
            for statement in ddl.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                sql.execute(statement, &[])?;
            }
            sql.execute("DELETE FROM fslab_schema", &[])?;
            sql.execute("INSERT INTO fslab_schema (version) VALUES (?)", &[Value::Int(Some(version))])?;
        }
        Ok(())
    })
}

/// A store written by a newer fslab: refused, never guessed at.
fn newer(location: &str, found: i64) -> Error {
    Error::environment(format!(
        "the store {location} has schema version {found}, written by a newer fslab; this fslab reads up to \
         version {CURRENT}: use a newer fslab, or give another --store"
    ))
}

/// Check, without changing anything, that a store opened read-only has a
/// schema this fslab reads, and return its version: a newer one is refused
/// as [`migrate`] refuses it, an older one is read as it is (what it lacks
/// reads as empty, see [`READABLE`]), and a file without fslab's tables
/// holds no runs.
pub fn check(backend: &mut dyn Backend, location: &str) -> Result<i64> {
    let mut version = 0;
    backend.transaction(&mut |sql| {
        let tables = sql.query("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'fslab_schema'", &[])?;
        if tables.first().and_then(|r| r.first()).and_then(Value::as_i64) != Some(1) {
            return Err(Error::usage(format!(
                "{location}: an SQLite file without fslab's tables, so it holds no run; give the store \
                 `fslab run` or `fslab exec` wrote (--store)"
            )));
        }
        let rows = sql.query("SELECT MAX(version) FROM fslab_schema", &[])?;
        let found = rows.first().and_then(|r| r.first()).and_then(Value::as_i64).unwrap_or(0);
        if found > CURRENT {
            return Err(newer(location, found));
        }
        version = found;
        if found < READABLE {
            return Err(Error::environment(format!(
                "the store {location} has schema version {found}, older than this fslab's {CURRENT}; a \
                 command that stores runs (`fslab run`, `fslab exec`) with this --store migrates it"
            )));
        }
        Ok(())
    })?;
    Ok(version)
}

/// The oldest schema a read-only store is read in: version 1 lacks only
/// the cases' conditions and memory cgroup (read as none).
pub const READABLE: i64 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_has_its_migration_and_no_word_is_left_unfilled() {
        assert_eq!(MIGRATIONS.len() as i64, CURRENT);
        let d = Dialect { id: "ID", int: "INT", real: "REAL" };
        for ddl in MIGRATIONS {
            let filled = fill(ddl, d);
            assert!(!filled.contains('{') && !filled.contains('}'), "{filled}");
            // Statements are split on ';', so none may hide one in a literal.
            assert!(!filled.contains("';") && !filled.contains(";'"), "{filled}");
        }
    }
}
