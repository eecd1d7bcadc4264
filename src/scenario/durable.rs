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

/// What a checker found in one recovered crash state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looked {
    /// Every file of the work, judged (the harness tells empty, torn,
    /// missing and durability violations from them).
    Files(Vec<FileJudged>),
    /// A checker that judges the state whole (`exec --check`): `None`
    /// when it found it good, else what it said (its exit status and
    /// output, bounded).
    Verdict(Option<String>),
}

/// Where a crash state is looked at, beside its mounted work folder.
#[derive(Debug, Clone, Copy)]
pub struct StateAt<'a> {
    /// The run's ledger: a process the checker starts goes in it.
    pub ledger: &'a crate::ledger::Ledger,
    /// The names the work marked durable (`durable:NAME`) whose flush this
    /// state holds, in the order first marked.
    pub durable: &'a [String],
}

/// Judges a recovered crash state of a work's files.
pub trait StateChecker: Send + Sync {
    /// What the mounted state whose work folder is `dir` holds; an error
    /// only when `dir` cannot be read at all, or the checker cannot run.
    fn check(&self, dir: &Path, at: &StateAt<'_>) -> Result<Looked>;

    /// What the checker judges, as the case's `crash.states.checker` says
    /// it.
    fn about(&self) -> String;

    /// Whether it judges each state whole by its own verdict
    /// ([`Looked::Verdict`]) rather than file by file; an error from such a
    /// checker (it could not run) ends the judging.
    fn whole(&self) -> bool {
        false
    }
}

/// The files a file checker judged in `dir`, with no durable names (for
/// the scenarios' unit tests).
#[cfg(test)]
pub(crate) fn files_in(checker: &dyn StateChecker, dir: &Path) -> Vec<FileJudged> {
    let ledger = crate::ledger::Ledger::for_tests();
    match checker.check(dir, &StateAt { ledger: &ledger, durable: &[] }).unwrap() {
        Looked::Files(files) => files,
        other => panic!("not a file checker: {other:?}"),
    }
}
