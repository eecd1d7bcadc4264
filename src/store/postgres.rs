//! The PostgreSQL backend: the same schema in a server, so many machines
//! can write their runs into one database at once. Statements are written
//! with `?` for SQLite; here they are numbered (`$1`, `$2`, ...).

use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};

use super::schema::Dialect;
use super::{Backend, Sql, Value};
use crate::error::{Error, Result};

/// A lock id for schema migrations ("fslab" in ASCII), so two machines
/// opening a new database at once do not both create its tables.
const MIGRATION_LOCK: i64 = 0x66_73_6c_61_62;

/// A connection to a PostgreSQL store.
pub struct PgBackend {
    client: Client,
    shown: String,
}

impl PgBackend {
    /// Connect to `url` (`postgres://user:password@host:port/database`).
    pub fn connect(url: &str) -> Result<PgBackend> {
        let shown = super::shown_location(url);
        let config: postgres::Config =
            url.parse().map_err(|e| Error::usage(format!("--store {shown}: not a PostgreSQL URL: {e}")))?;
        let client = config.connect(NoTls).map_err(|e| {
            Error::environment(format!(
                "--store {shown}: cannot connect: {e} (is the server running, and does the database exist? \
                 `createdb` makes one)"
            ))
        })?;
        Ok(PgBackend { client, shown })
    }
}

/// `?` placeholders as `$1, $2, ...` (no statement of the store has a `?`
/// inside a literal).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

fn pg_error(shown: &str, e: &postgres::Error) -> Error {
    Error::environment(format!("store {shown}: {e}"))
}

/// The value as a parameter: integers go to BIGINT columns, reals to
/// DOUBLE PRECISION, text to TEXT.
fn param(v: &Value) -> &(dyn ToSql + Sync) {
    match v {
        Value::Int(i) => i,
        Value::Real(f) => f,
        Value::Text(t) => t,
    }
}

fn read(row: &postgres::Row, i: usize) -> std::result::Result<Value, postgres::Error> {
    let ty = row.columns()[i].type_();
    Ok(if *ty == Type::INT8 {
        Value::Int(row.try_get(i)?)
    } else if *ty == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if *ty == Type::FLOAT8 {
        Value::Real(row.try_get(i)?)
    } else {
        Value::Text(row.try_get(i)?)
    })
}

struct Tx<'a, 'b> {
    tx: &'a mut postgres::Transaction<'b>,
    shown: &'a str,
}

impl Sql for Tx<'_, '_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<()> {
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(param).collect();
        self.tx.execute(numbered(sql).as_str(), &params).map_err(|e| pg_error(self.shown, &e))?;
        Ok(())
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>> {
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(param).collect();
        let rows = self.tx.query(numbered(sql).as_str(), &params).map_err(|e| pg_error(self.shown, &e))?;
        rows.iter()
            .map(|row| (0..row.len()).map(|i| read(row, i)).collect::<std::result::Result<Vec<_>, _>>())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| pg_error(self.shown, &e))
    }

    fn lock_for_migration(&mut self) -> Result<()> {
        self.tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(|e| pg_error(self.shown, &e))?;
        Ok(())
    }
}

impl Backend for PgBackend {
    fn dialect(&self) -> Dialect {
        Dialect { id: "BIGSERIAL PRIMARY KEY", int: "BIGINT", real: "DOUBLE PRECISION" }
    }

    fn transaction(&mut self, work: &mut dyn FnMut(&mut dyn Sql) -> Result<()>) -> Result<()> {
        let mut tx = self.client.transaction().map_err(|e| pg_error(&self.shown, &e))?;
        work(&mut Tx { tx: &mut tx, shown: &self.shown })?;
        tx.commit().map_err(|e| pg_error(&self.shown, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(numbered("INSERT INTO t (a, b) VALUES (?, ?)"), "INSERT INTO t (a, b) VALUES ($1, $2)");
        assert_eq!(numbered("SELECT 1"), "SELECT 1");
    }
}
