//! The SQLite backend: one file, WAL mode, so a reader (`fslab runs`) never
//! waits for a run that is writing its cases.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value as Lite, ValueRef};

use super::schema::Dialect;
use super::{Backend, Sql, Value};
use crate::error::{Error, Result};

/// An open SQLite store.
pub struct SqliteBackend {
    conn: rusqlite::Connection,
    path: String,
}

impl SqliteBackend {
    /// Open or create the store file at `path`.
    pub fn open(path: &Path) -> Result<SqliteBackend> {
        let shown = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(Error::usage(format!(
                    "--store {shown}: the folder {} does not exist; create it or give another path",
                    parent.display()
                )));
            }
        }
        let conn = rusqlite::Connection::open(path).map_err(|e| sqlite_error(&shown, &e))?;
        let backend = SqliteBackend { conn, path: shown };
        backend.setup().map_err(|e| sqlite_error(&backend.path, &e))?;
        Ok(backend)
    }

    fn setup(&self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(Duration::from_secs(30))?;
        // journal_mode answers with a row, so it is a query.
        let _mode: String = self.conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        self.conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")?;
        Ok(())
    }
}

/// An SQLite error as a user reads it: which store, what SQLite said, and
/// for a file that is not a database, what to do.
fn sqlite_error(path: &str, e: &rusqlite::Error) -> Error {
    let not_a_db = matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase);
    if not_a_db {
        Error::usage(format!("--store {path}: the file is not an SQLite database; give another path"))
    } else {
        Error::environment(format!("store {path}: {e}"))
    }
}

fn to_lite(v: &Value) -> ToSqlOutput<'_> {
    match v {
        Value::Int(Some(i)) => ToSqlOutput::Owned(Lite::Integer(*i)),
        Value::Real(Some(f)) => ToSqlOutput::Owned(Lite::Real(*f)),
        Value::Text(Some(s)) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        Value::Int(None) | Value::Real(None) | Value::Text(None) => ToSqlOutput::Owned(Lite::Null),
    }
}

fn from_lite(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(i) => Value::Int(Some(i)),
        ValueRef::Real(f) => Value::Real(Some(f)),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(Some(String::from_utf8_lossy(t).into_owned())),
    }
}

struct Tx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    path: &'a str,
}

impl Sql for Tx<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<()> {
        let params: Vec<ToSqlOutput<'_>> = params.iter().map(to_lite).collect();
        let mut statement = self.tx.prepare_cached(sql).map_err(|e| sqlite_error(self.path, &e))?;
        statement.execute(rusqlite::params_from_iter(params)).map_err(|e| sqlite_error(self.path, &e))?;
        Ok(())
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let params: Vec<ToSqlOutput<'_>> = params.iter().map(to_lite).collect();
        let mut statement = self.tx.prepare_cached(sql).map_err(|e| sqlite_error(self.path, &e))?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params)).map_err(|e| sqlite_error(self.path, &e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| sqlite_error(self.path, &e))? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(from_lite(row.get_ref(i).map_err(|e| sqlite_error(self.path, &e))?));
            }
            out.push(values);
        }
        Ok(out)
    }
}

impl Backend for SqliteBackend {
    fn dialect(&self) -> Dialect {
        Dialect { id: "INTEGER PRIMARY KEY AUTOINCREMENT", int: "INTEGER", real: "REAL" }
    }

    fn transaction(&mut self, work: &mut dyn FnMut(&mut dyn Sql) -> Result<()>) -> Result<()> {
        // IMMEDIATE takes the write lock up front, so two writers wait on
        // the busy timeout instead of failing half-way.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sqlite_error(&self.path, &e))?;
        work(&mut Tx { tx: &tx, path: &self.path })?;
        tx.commit().map_err(|e| sqlite_error(&self.path, &e))
    }
}
