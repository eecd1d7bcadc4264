//! Results that last: every `run` and `exec`, kept with its environment,
//! cases, figures, timelines and extent maps, in SQLite (a file, the
//! default) or PostgreSQL (`postgres://...`, for a team or a fleet).
//!
//! The design decision a reader must know: what is stored, and how, is
//! written once here against a small [`Backend`] trait (run a statement,
//! run a query, do something in one transaction); `sqlite.rs` and
//! `postgres.rs` only connect and convert values. So the two stores hold
//! the same rows and read back the same [`RunRecord`], bit for bit.
//!
//! A run is written as it goes: its header when it starts, each case in a
//! transaction of its own as soon as it is measured, and `complete` when it
//! ends. A run that was interrupted or killed keeps its finished cases and
//! reads back with `complete: false`.

pub mod location;
mod plans;
mod postgres;
mod rows;
pub mod schema;
mod select;
mod sqlite;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

pub use plans::{PlanCaseRow, PlanRunRow, StoredPlan};
pub use select::{Selection, from_file, open_for_reading, resolve, resolve_plan};
pub use sqlite::missing_folder;

use crate::error::{Error, Result};
use crate::record::{Case, RunRecord, StartRecord, Status, Verdict};

/// One SQL value, typed even when null (PostgreSQL wants a type for every
/// parameter).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A 64-bit integer.
    Int(Option<i64>),
    /// A double.
    Real(Option<f64>),
    /// Text.
    Text(Option<String>),
}

impl Value {
    /// Text from a string slice.
    fn text(s: &str) -> Value {
        Value::Text(Some(s.to_string()))
    }

    /// The integer, if this is a non-null integer.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            _ => None,
        }
    }

    /// The double, if this is a non-null number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|i| i as f64),
            Value::Text(_) => None,
        }
    }

    /// The text, if this is non-null text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }
}

/// What a store backend does: statements with `?` placeholders, queries
/// that return rows of [`Value`]s, and transactions.
pub trait Backend {
    /// The words this backend's DDL needs.
    fn dialect(&self) -> schema::Dialect;
    /// Run `work` in one transaction: committed if it returns `Ok`, rolled
    /// back otherwise.
    fn transaction(&mut self, work: &mut dyn FnMut(&mut dyn Sql) -> Result<()>) -> Result<()>;
}

/// Statements inside a transaction.
pub trait Sql {
    /// Run a statement.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<()>;
    /// Run a query and return every row.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>>;
    /// Keep other writers out while the schema is checked and migrated
    /// (PostgreSQL: an advisory lock; SQLite's write transaction already
    /// does).
    fn lock_for_migration(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A stored run, in a line (`fslab runs`).
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// Run id.
    pub id: String,
    /// When it started.
    pub started_at: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether every planned case ran.
    pub complete: bool,
    /// Kernel release.
    pub kernel: String,
    /// Cases stored.
    pub cases: u64,
    /// Of which failed.
    pub failed: u64,
    /// Scenarios in it, in order of first case.
    pub scenarios: Vec<String>,
    /// File-system labels in it, in order of first case.
    pub targets: Vec<String>,
    /// The run-wide sysctls it set (`--sysctl` with one value).
    pub sysctls: Vec<(String, String)>,
    /// How its targets were made and started, each distinct set-up once,
    /// in order of first case: what `fslab runs` says of a run beside its
    /// id (`sync`, `aged`), so runs that differ in set-up are told apart.
    pub setups: Vec<SetupSummary>,
}

/// One way a run's targets were made and started.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetupSummary {
    /// The file system's type.
    pub fs_type: String,
    /// Its whole mkfs argument list.
    pub mkfs_args: Vec<String>,
    /// Its mount options, when fslab gave any.
    pub mount_opts: Option<String>,
    /// The case's conditions (memory limit, per-case sysctls, age, fill).
    pub conditions: std::collections::BTreeMap<String, String>,
    /// The aging profile it started from (`--age`).
    pub age: Option<String>,
    /// The fill it started at (`--fill`), as a fraction.
    pub fill: Option<f64>,
}

/// An open store.
pub struct Store {
    backend: Box<dyn Backend>,
    location: String,
    /// The schema version read (older than CURRENT only read-only).
    version: i64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("location", &self.location).finish()
    }
}

/// Whether `location` names a PostgreSQL database rather than a file.
pub fn is_postgres(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

impl Store {
    /// Open (creating and migrating as needed) the store at `location`: a
    /// `postgres://` or `postgresql://` URL, or an SQLite file path.
    pub fn open(location: &str) -> Result<Store> {
        let mut backend: Box<dyn Backend> = if is_postgres(location) {
            Box::new(postgres::PgBackend::connect(location)?)
        } else {
            Box::new(sqlite::SqliteBackend::open(Path::new(location))?)
        };
        let shown = shown_location(location);
        schema::migrate(backend.as_mut(), &shown)?;
        Ok(Store { backend, location: shown, version: schema::CURRENT })
    }

    /// Open an SQLite store that must already exist, for reading (a
    /// comparison side, `fslab runs`): read-only, so it is never created,
    /// migrated or otherwise changed, and a store one may not write reads
    /// all the same.
    pub fn open_existing(path: &Path) -> Result<Store> {
        let mut backend = sqlite::SqliteBackend::open_read_only(path)?;
        let shown = path.display().to_string();
        let version = schema::check(&mut backend, &shown)?;
        Ok(Store { backend: Box::new(backend), location: shown, version })
    }

    /// Where the store is, for messages (a URL without its password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Record the start of `run` (its header; its cases come one by one).
    pub fn begin_run(&mut self, run: &RunRecord) -> Result<()> {
        let plan = run.plan.as_ref();
        self.backend.transaction(&mut |sql| {
            if let Some(plan) = plan.filter(|p| !p.document.is_empty()) {
                sql.execute(
                    "INSERT INTO plans (id, cases, document) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
                    &[Value::text(&plan.id), int(plan.cases as u64), Value::text(&plan.document)],
                )?;
            }
            sql.execute(
                "INSERT INTO runs (id, started_at, complete, command, kernel, environment, sysctls, verdicts, plan_id, shard) \
                 VALUES (?, ?, 0, ?, ?, ?, ?, '[]', ?, ?)",
                &[
                    Value::text(&run.id),
                    Value::text(&run.started_at),
                    Value::text(&to_json(&run.command)),
                    Value::text(&run.environment.kernel),
                    Value::text(&to_json(&run.environment)),
                    Value::text(&to_json(&run.sysctls)),
                    Value::Text(plan.map(|p| p.id.clone())),
                    Value::Text(plan.and_then(|p| p.shard.clone())),
                ],
            )?;
            for tag in &run.tags {
                sql.execute("INSERT INTO run_tags (run_id, tag) VALUES (?, ?)", &[Value::text(&run.id), Value::text(tag)])?;
            }
            Ok(())
        })
    }

    /// Store one finished case of run `run_id` as its `ordinal`th, in one
    /// transaction: a case of a plan replaces the one stored under the
    /// same plan, key and repeat (a shard run again).
    pub fn add_case(&mut self, run_id: &str, ordinal: usize, case: &Case) -> Result<()> {
        self.backend.transaction(&mut |sql| rows::insert_case(sql, run_id, ordinal, case))
    }

    /// Mark `run_id` finished: `complete` when every planned case ran, and
    /// the verdicts it ended with.
    pub fn finish_run(&mut self, run_id: &str, complete: bool, verdicts: &[Verdict]) -> Result<()> {
        self.backend.transaction(&mut |sql| {
            sql.execute(
                "UPDATE runs SET finished_at = ?, complete = ?, verdicts = ? WHERE id = ?",
                &[
                    Value::text(&crate::record::utc_now()),
                    Value::Int(Some(i64::from(complete))),
                    Value::text(&to_json(verdicts)),
                    Value::text(run_id),
                ],
            )
        })
    }

    /// Store a whole run at once (an import, or a test).
    pub fn put_run(&mut self, run: &RunRecord) -> Result<()> {
        self.begin_run(run)?;
        for (ordinal, case) in run.cases.iter().enumerate() {
            self.add_case(&run.id, ordinal, case)?;
        }
        self.finish_run(&run.id, run.complete, &run.verdicts)
    }

    /// Every stored run, oldest first; only those tagged `tag` when given.
    pub fn runs(&mut self, tag: Option<&str>) -> Result<Vec<RunSummary>> {
        // Three queries however many runs there are (a team's store is a
        // round trip away), joined here by run id.
        const TAGGED: &str = "IN (SELECT run_id FROM run_tags WHERE tag = ?)";
        let (runs_where, rows_where, args) = match tag {
            Some(tag) => (format!("WHERE id {TAGGED}"), format!("WHERE run_id {TAGGED}"), vec![Value::text(tag)]),
            None => (String::new(), String::new(), Vec::new()),
        };
        let version = self.version;
        let mut out = Vec::new();
        self.backend.transaction(&mut |sql| {
            out.clear();
            let mut index = HashMap::new();
            let runs = sql.query(
                &format!("SELECT id, started_at, complete, kernel, sysctls FROM runs {runs_where} ORDER BY started_at, id"),
                &args,
            )?;
            for row in runs {
                index.insert(text(&row[0]), out.len());
                out.push(RunSummary {
                    id: text(&row[0]),
                    started_at: text(&row[1]),
                    complete: row[2].as_i64() == Some(1),
                    kernel: text(&row[3]),
                    tags: Vec::new(),
                    cases: 0,
                    failed: 0,
                    scenarios: Vec::new(),
                    targets: Vec::new(),
                    sysctls: from_json(&text(&row[4]), "sysctl list")?,
                    setups: Vec::new(),
                });
            }
            let summary_of = |row: &[Value]| index.get(row[0].as_str().unwrap_or_default()).copied();
            for row in sql.query(&format!("SELECT run_id, tag FROM run_tags {rows_where} ORDER BY run_id, tag"), &args)? {
                if let Some(i) = summary_of(&row) {
                    out[i].tags.push(text(&row[1]));
                }
            }
            let conditions = if version >= 2 { "conditions" } else { "NULL" };
            let start = if version >= 3 { "start" } else { "NULL" };
            let cases = sql.query(
                &format!(
                    "SELECT run_id, scenario, fs, status, fs_type, mkfs_args, mount_opts, {conditions}, {start} \
                     FROM cases {rows_where} ORDER BY run_id, ordinal"
                ),
                &args,
            )?;
            for case in cases {
                let Some(i) = summary_of(&case) else { continue };
                let summary = &mut out[i];
                summary.cases += 1;
                summary.failed += u64::from(case[3].as_str() == Some(Status::Failed.as_str()));
                push_new(&mut summary.scenarios, text(&case[1]));
                push_new(&mut summary.targets, text(&case[2]));
                let start: Option<StartRecord> = case[8].as_str().map(|t| from_json(t, "case's starting point")).transpose()?;
                let setup = SetupSummary {
                    fs_type: text(&case[4]),
                    mkfs_args: from_json(&text(&case[5]), "mkfs argument list")?,
                    mount_opts: case[6].as_str().map(str::to_string),
                    conditions: case[7].as_str().map(|t| from_json(t, "case's conditions")).transpose()?.unwrap_or_default(),
                    age: start.as_ref().and_then(|s| s.age.clone()),
                    fill: start.as_ref().and_then(|s| s.fill),
                };
                if !summary.setups.contains(&setup) {
                    summary.setups.push(setup);
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Ids of the runs tagged `tag`, oldest first.
    pub fn ids_tagged(&mut self, tag: &str) -> Result<Vec<String>> {
        self.select_ids(
            "SELECT r.id FROM runs r JOIN run_tags t ON t.run_id = r.id WHERE t.tag = ? ORDER BY r.started_at, r.id",
            &[Value::text(tag)],
        )
    }

    /// Ids of every stored run, oldest first.
    pub fn ids(&mut self) -> Result<Vec<String>> {
        self.select_ids("SELECT id FROM runs ORDER BY started_at, id", &[])
    }

    /// The first column of a query's rows, as text (the run ids): without
    /// the per-run case counts [`Store::runs`] gathers.
    fn select_ids(&mut self, query: &str, params: &[Value]) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        self.backend.transaction(&mut |sql| {
            ids = sql.query(query, params)?.iter().map(|row| text(&row[0])).collect();
            Ok(())
        })?;
        Ok(ids)
    }

    /// The run `id`, whole, or `None` if the store has no such run.
    pub fn load(&mut self, id: &str) -> Result<Option<RunRecord>> {
        let mut out = None;
        let version = self.version;
        self.backend.transaction(&mut |sql| {
            out = rows::load_run(sql, id, version)?;
            Ok(())
        })?;
        Ok(out)
    }
}

/// A location fit to print: a PostgreSQL URL loses its password.
fn shown_location(location: &str) -> String {
    if !is_postgres(location) {
        return location.to_string();
    }
    let (scheme, rest) = location.split_once("://").unwrap_or(("postgres", location));
    match rest.split_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{scheme}://{user}@{host}")
        }
        None => location.to_string(),
    }
}

pub(super) fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}

pub(super) fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::failed(format!("the store holds a {what} fslab cannot read: {e}")))
}

pub(super) fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

pub(super) fn int(v: u64) -> Value {
    Value::Int(Some(i64::try_from(v).unwrap_or(i64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(shown_location("postgres://fslab:s3cret@db.example/lab"), "postgres://fslab@db.example/lab");
        assert_eq!(shown_location("postgresql://db/lab"), "postgresql://db/lab");
        assert_eq!(shown_location("./fslab.db"), "./fslab.db");
    }
}
