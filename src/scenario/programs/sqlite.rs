//! `sqlite`: a table made and rows inserted, one transaction per sqlite3
//! call, in each journal mode and synchronous setting: what SQLite's
//! commits cost in flushes beside what a crash leaves of them, each state
//! judged by SQLite itself (`PRAGMA integrity_check`, and every row
//! marked durable present; `sqlite_check.sh`).

use super::{Program, Vars};
use crate::scenario::params::{ParamKind, ParamSpec, Params};

const PARAMS: [ParamSpec; 3] = [
    ParamSpec {
        name: "rows",
        kind: ParamKind::Count { max: 10_000 },
        small: "5",
        full: "20",
        seed: "-",
        about: "transactions, each inserting one 4 KiB row",
    },
    ParamSpec {
        name: "journal",
        kind: ParamKind::Choice(&["delete", "truncate", "wal"]),
        small: "delete",
        full: "delete",
        seed: "-",
        about: "PRAGMA journal_mode",
    },
    ParamSpec {
        name: "synchronous",
        kind: ParamKind::Choice(&["normal", "full", "extra"]),
        small: "full",
        full: "full",
        seed: "-",
        about: "PRAGMA synchronous",
    },
];

/// The scenario.
pub static SQLITE: Program = Program {
    name: "sqlite",
    about: "SQLite transactions in each journal mode and synchronous setting; cost beside crash safety",
    params: &PARAMS,
    scripts: super::scripts!("sqlite"),
    vars,
};

/// A case's variables and the bytes it needs.
fn vars(params: &Params) -> Vars {
    let rows = params.number("rows");
    // The rows in the database, its journal or WAL, and room.
    let space = (1 << 20) + rows * 16 * 1024;
    let vars = vec![
        ("ROWS", rows.to_string()),
        ("JOURNAL", params.word("journal").to_string()),
        ("SYNCHRONOUS", params.word("synchronous").to_string()),
    ];
    (vars, space)
}
