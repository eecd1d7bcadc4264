//! fslab: a laboratory for file-system layout and write-path performance.
//!
//! The crate is layered so that arrows only point down:
//! `cli` → `report`, `compare` → `store` → `scenario` → `target`, `probe`,
//! `layout` → `sys`.
//! Unsafe code lives in `sys` only, behind safe functions; everything
//! above it is safe Rust.

/// The JSON schema name every `--json` output carries (and a stored run's
/// JSON export).
pub const SCHEMA: &str = "fslab/1";

pub mod cli;
pub mod compare;
pub mod error;
pub mod layout;
pub mod interrupt;
pub mod measure;
pub mod probe;
pub mod target;
pub mod report;
pub mod scenario;
pub mod store;
pub mod sys;
pub mod units;
