//! Keeping a run in the store while it goes: the header when it starts,
//! each case as soon as it is measured (so a killed run keeps what it
//! finished), `complete` at the end.
//!
//! A store that breaks mid-run does not stop the measuring: the failure
//! is said once on stderr, the run goes on and prints its results, and
//! the exit code says that not everything was kept.

use crate::error::{Error, Result};
use crate::record::{Case, RunRecord, Verdict};
use crate::store::location::is_default;
use crate::store::{Store, is_postgres, missing_folder};
use crate::ledger::folder::{FolderRole, OwnedDir};

/// The store side of one run.
pub struct Keeper {
    store: Option<Store>,
    run_id: String,
    next: usize,
    broken: Option<String>,
}

/// Where to write runs: a PostgreSQL URL as given; an SQLite file where
/// its folder is the user's alone, checked like the state folder (the
/// default's made 0700 when missing) and any symlink on the way, the
/// file's own too, root's or the user's ([`OwnedDir::file_in`]), else exit
/// 3 before anything is written: root never writes through a folder or a
/// link another user controls. The path returned has no link in it.
pub fn writable(location: &str) -> Result<String> {
    if is_postgres(location) {
        return Ok(location.to_string());
    }
    let path = std::path::Path::new(location);
    match OwnedDir::file_in(path, FolderRole::Store, is_default(location))? {
        Some(file) => Ok(file.display().to_string()),
        None => Err(missing_folder(path)),
    }
}

impl Keeper {
    /// Open the store at `location` (none for `None`: `--no-store`),
    /// before anything is made, so a bad store is an error that costs
    /// nothing.
    pub fn open(location: Option<&str>) -> Result<Keeper> {
        let store = match location {
            Some(location) => Some(Store::open(&writable(location)?)?),
            None => None,
        };
        Ok(Keeper { store, run_id: String::new(), next: 0, broken: None })
    }

    /// Record the run's start; `header` has no cases yet.
    pub fn begin(&mut self, header: &RunRecord) -> Result<()> {
        self.run_id = header.id.clone();
        match self.store.as_mut() {
            Some(store) => store.begin_run(header),
            None => Ok(()),
        }
    }

    /// Store a finished case.
    pub fn keep(&mut self, case: &Case) {
        let ordinal = self.next;
        self.next += 1;
        if self.broken.is_some() {
            return;
        }
        if let Some(store) = self.store.as_mut() {
            if let Err(e) = store.add_case(&self.run_id, ordinal, case) {
                eprintln!("fslab: {e}; the run goes on, but its cases from here on are not stored");
                self.broken = Some(e.to_string());
            }
        }
    }

    /// Mark the run finished. Returns where it was stored, or the error
    /// that kept it from being stored whole.
    pub fn finish(mut self, complete: bool, verdicts: &[Verdict]) -> std::result::Result<Option<String>, Error> {
        let Some(store) = self.store.as_mut() else { return Ok(None) };
        if let Some(why) = self.broken.take() {
            return Err(Error::failed(format!("run {} is only partly stored in {}: {why}", self.run_id, store.location())));
        }
        store.finish_run(&self.run_id, complete, verdicts)?;
        Ok(Some(store.location().to_string()))
    }
}
