//! fslab: a laboratory for file-system layout and write-path performance.
//!
//! The crate is layered so that arrows only point down:
//! `cli` → `report` → `scenario` → `target`, `probe`, `layout` → `sys`.
//! Unsafe code lives in `sys` only, behind safe functions; everything
//! above it is safe Rust.

pub mod cli;
pub mod error;
pub mod layout;
pub mod interrupt;
pub mod measure;
pub mod probe;
pub mod target;
pub mod report;
pub mod scenario;
pub mod sys;
pub mod units;
