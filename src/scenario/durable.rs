//! What a work says about crashes: where its sync calls returned
//! ([`Durable`]), and how a crash state of its files is judged
//! ([`StateChecker`]).
//!
//! The design decision: the work only names what a call made durable
//! (`exist_3`) and classifies what it finds in a recovered state; where in
//! the write log the call returned, which states lie past it, and what
//! counts as a violation are the harness's, so every scenario's checker
//! is judged by one rule.

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;

/// Mark that what the work names has just been made durable (the fsync,
/// fdatasync or syncfs that covers it returned). Handed to the work only
/// when its device's writes are recorded; a work that is handed none
/// marks nothing and pays nothing.
pub type Durable = Arc<dyn Fn(&str) -> Result<()> + Send + Sync>;

/// What a crash state holds of one file under its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileState {
    /// Its contents from before the work, whole.
    Old,
    /// The contents the work wrote, whole.
    New,
    /// There, with no bytes.
    Empty,
    /// A mix of old, new and anything else, or the wrong length.
    Torn,
    /// Not there.
    Missing,
}

impl FileState {
    /// The word output uses (`old`, `new`, `empty`, `torn`, `missing`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Old => "old",
            FileState::New => "new",
            FileState::Empty => "empty",
            FileState::Torn => "torn",
            FileState::Missing => "missing",
        }
    }
}

/// One file of the work, judged in one crash state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileJudged {
    /// The name the work marks it by (its final name).
    pub name: String,
    /// What its final name holds.
    pub state: FileState,
    /// Whether it existed before the work (then missing is a loss).
    pub existed: bool,
    /// Whether its new contents are there whole under any name the work
    /// gave them (`NAME.dpkg-new` before the rename): what a sync call on
    /// that name made durable.
    pub new_somewhere: bool,
}

/// Judges a recovered crash state of a work's files.
pub trait StateChecker: Send + Sync {
    /// Every file of the work, judged in the mounted state whose work
    /// folder is `dir`; an error only when `dir` cannot be read at all.
    fn check(&self, dir: &Path) -> Result<Vec<FileJudged>>;
}
