//! What survives a crash: the write log a recorded target's device kept
//! (every write with its data, every flush, in the order the device
//! completed them), the device rebuilt at any point of it, and the marks
//! that say where the work's sync calls had returned.
//!
//! The recorder itself (a `qemu-storage-daemon` whose `blklogwrites` node
//! sits between the loop device and the image) is a target in `site`;
//! this room only reads what it left, so it names no file system under
//! test: the log's format (`log.rs`), replay onto a copy of the image from
//! before the work (`replay.rs`), durability points (`marks.rs`) and the
//! crash states a model picks from a log (`states.rs`).

pub mod log;
pub mod marks;
pub mod replay;
pub mod states;
mod subsets;

pub use log::{Entry, Summary, WriteLog};
pub use marks::{Marker, live_entries};
pub use states::{Model, State, States};
