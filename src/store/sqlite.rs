//! The SQLite backend: one file, WAL mode, so a reader (`fslab runs`) never
//! waits for a run that is writing its cases.
//!
//! A store is a regular file or nothing yet: any other thing at the path
//! (`/dev/null`, a FIFO, a folder) is refused before SQLite sees it, so
//! nothing (a `-journal`, a `-wal`) is ever made beside it. SQLite opens
//! it with `SQLITE_OPEN_NOFOLLOW`: the path it is given (the command line
//! resolves links by its rules first) must hold no symlink. A database
//! some other program made is refused, not turned into a store. Reading
//! commands open the file read-only and change nothing in it; so a store
//! one may read but not write (mode 444, a read-only mount) can still be
//! read, and writing to it is refused up front with what to do.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::OpenFlags;
use rusqlite::types::{ToSqlOutput, Value as Lite, ValueRef};

use super::schema::Dialect;
use super::{Backend, Sql, Value};
use crate::error::{Error, Result};

/// An open SQLite store.
pub struct SqliteBackend {
    conn: rusqlite::Connection,
    path: String,
    read_only: bool,
}

impl SqliteBackend {
    /// Open or create the store file at `path` for writing runs into.
    pub fn open(path: &Path) -> Result<SqliteBackend> {
        let shown = path.display().to_string();
        let parent = folder_of(path);
        if !parent.is_dir() {
            return Err(missing_folder(path));
        }
        let exists = refuse_non_regular(path, &shown)?;
        // SQLite makes its -wal and -shm files beside the store.
        let (what, at) = if exists { ("the store", path) } else { ("its folder", parent) };
        for (what, at) in [(what, at), ("its folder, where SQLite keeps its -wal and -shm files,", parent)] {
            if let Err(e) = rustix::fs::access(at, rustix::fs::Access::WRITE_OK) {
                return Err(Error::environment(format!(
                    "--store {shown}: this user may not write {what} ({}: {}); reading commands (runs, show, \
                     export, compare, report) still read it; to store runs, give a --store you may write, or \
                     --no-store",
                    at.display(),
                    crate::error::describe_io(&e.into())
                )));
            }
        }
        let conn = rusqlite::Connection::open_with_flags(path, OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW)
            .map_err(|e| sqlite_error(&shown, &e))?;
        let backend = SqliteBackend { conn, path: shown, read_only: false };
        backend.conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| sqlite_error(&backend.path, &e))?;
        backend.refuse_foreign()?;
        backend.setup().map_err(|e| sqlite_error(&backend.path, &e))?;
        Ok(backend)
    }

    /// Refuse a database that holds something and is not an fslab store
    /// (no `fslab_schema` table), naming what it holds: fslab's tables and
    /// WAL mode are never added to another program's database. An empty
    /// file, or none, becomes a store.
    fn refuse_foreign(&self) -> Result<()> {
        let names = |sql: &str| -> rusqlite::Result<Vec<String>> {
            let mut statement = self.conn.prepare(sql)?;
            statement.query_map([], |row| row.get::<_, String>(0))?.collect()
        };
        let held = names("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
            .map_err(|e| sqlite_error(&self.path, &e))?;
        if held.is_empty() || held.iter().any(|name| name == "fslab_schema") {
            return Ok(());
        }
        let shown: Vec<&str> = held.iter().take(8).map(String::as_str).collect();
        let more = if held.len() > shown.len() { format!(" and {} more", held.len() - shown.len()) } else { String::new() };
        Err(Error::usage(format!(
            "--store {}: an SQLite database that is not an fslab store (it holds {}{more}); fslab does not add its \
             tables to another program's database: give another path",
            self.path,
            crate::text::escape(&shown.join(", "))
        )))
    }

    /// Open the existing store file at `path` read-only: nothing in it or
    /// beside it is changed, and a file one may not write is read all
    /// the same.
    pub fn open_read_only(path: &Path) -> Result<SqliteBackend> {
        let shown = path.display().to_string();
        if !refuse_non_regular(path, &shown)? {
            return Err(Error::usage(format!("{shown}: no such store file")));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let open = |immutable: bool| -> rusqlite::Result<SqliteBackend> {
            let uri = format!("file:{}{}", uri_path(path), if immutable { "?immutable=1" } else { "" });
            let conn = rusqlite::Connection::open_with_flags(uri, flags)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            // The first read is where a WAL store that needs a -shm file
            // it cannot make fails.
            conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
            Ok(SqliteBackend { conn, path: shown.clone(), read_only: true })
        };
        match open(false) {
            Ok(backend) => Ok(backend),
            // A WAL store in a folder one may not write (or on a read-only
            // mount) without its -shm file: no writer has it open (it
            // would have made both files), and every committed page is in
            // the file itself, so it is read as the immutable file it is.
            Err(e) if is_cannot_open(&e) && !sibling(path, "-wal").exists() && !sibling(path, "-shm").exists() => {
                open(true).map_err(|e| sqlite_error(&shown, &e))
            }
            Err(e) => Err(sqlite_error(&shown, &e)),
        }
    }

    fn setup(&self) -> rusqlite::Result<()> {
        // Turning a fresh store to WAL needs it to itself, and SQLite
        // answers SQLITE_BUSY at once, without its busy handler, while
        // another writer opening the same fresh store holds it (one in
        // five tries of four writers here): so the switch is retried for
        // as long as the busy timeout would have waited.
        let started = Instant::now();
        loop {
            // journal_mode answers with a row, so it is a query.
            match self.conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
                Ok(_) => break,
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(e),
            }
        }
        self.conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")?;
        Ok(())
    }
}

/// The refusal of a store file whose folder is missing (exit 2): fslab
/// makes no folder but the default store's.
pub fn missing_folder(path: &Path) -> Error {
    Error::usage(format!(
        "--store {}: the folder {} does not exist; create it or give another path",
        path.display(),
        folder_of(path).display()
    ))
}

/// The folder a store file `path` lies in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// How long one writer waits for another to let go of the store.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `e` is SQLite's "database is locked" (`SQLITE_BUSY`).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy)
}

/// Whether something is at `path` (following a link), refusing anything
/// but a regular file: SQLite would open `/dev/null` or a FIFO and make
/// its `-journal` beside it.
fn refuse_non_regular(path: &Path, shown: &str) -> Result<bool> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(meta) => Err(Error::usage(format!(
            "--store {shown}: {}, not a regular file; a store is an SQLite file, or a path where one can be made",
            crate::error::file_type_words(&meta.file_type())
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, "look at the store", e)),
    }
}

/// `path` with `suffix` added to its name: the store's `-wal` and `-shm`.
fn sibling(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// A path as the path part of an SQLite `file:` URI: every byte but the
/// unreserved ones and `/` percent-encoded.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The errors of a read-only open of a WAL store whose -shm file cannot
/// be made.
fn is_cannot_open(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{CannotOpen, ReadOnly};
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, CannotOpen | ReadOnly))
}

/// An SQLite error as a user reads it: which store, what SQLite said, and
/// for a file that is not a database, what to do.
fn sqlite_error(path: &str, e: &rusqlite::Error) -> Error {
    let not_a_db = matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase);
    let read_only = matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ReadOnly);
    // SQLITE_CANTOPEN_SYMLINK: a link on the way (fslab hands SQLite a
    // path with none, so one was put there since).
    let link = matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == rusqlite::ffi::SQLITE_CANTOPEN_SYMLINK);
    if not_a_db {
        Error::usage(format!("--store {path}: the file is not an SQLite database; give another path"))
    } else if link {
        Error::usage(format!("--store {path}: a symbolic link is on the way; fslab opens a store by its own path: give that"))
    } else if read_only {
        Error::environment(format!(
            "store {path}: {e}: this user may not write it; give a --store you may write, or --no-store"
        ))
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
        // the busy timeout instead of failing half-way; a reader takes
        // none.
        let behavior = if self.read_only {
            rusqlite::TransactionBehavior::Deferred
        } else {
            rusqlite::TransactionBehavior::Immediate
        };
        let tx = self
            .conn
            .transaction_with_behavior(behavior)
            .map_err(|e| sqlite_error(&self.path, &e))?;
        work(&mut Tx { tx: &tx, path: &self.path })?;
        tx.commit().map_err(|e| sqlite_error(&self.path, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_escape_what_a_uri_would_read() {
        assert_eq!(uri_path(Path::new("/var/tmp/fslab.db")), "/var/tmp/fslab.db");
        assert_eq!(uri_path(Path::new("/a b/x?y#z%.db")), "/a%20b/x%3Fy%23z%25.db");
    }

    #[test]
    fn a_read_only_open_changes_nothing_and_refuses_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        drop(SqliteBackend::open(&path).unwrap());
        let before = std::fs::read(&path).unwrap();
        let mut backend = SqliteBackend::open_read_only(&path).unwrap();
        let written = backend.transaction(&mut |sql| sql.execute("CREATE TABLE t (x INTEGER)", &[]));
        assert!(written.is_err(), "a read-only store took a write");
        drop(backend);
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let err = SqliteBackend::open_read_only(dir.path()).err().unwrap();
        assert!(err.message.contains("a directory, not a regular file"), "{err}");
        assert!(SqliteBackend::open_read_only(&dir.path().join("none.db")).is_err());
        assert!(!dir.path().join("none.db").exists());
    }
}
