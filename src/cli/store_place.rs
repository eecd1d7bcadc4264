//! The store a reading command uses, and the files it reads runs from:
//! `--store`, else `FSLAB_STORE`, else the default for this user
//! (`store::location`), whose folder, like the state folder, must be the
//! user's alone — no one else's, written by no one else, reached through
//! no one else's symlink — before fslab reads from it. (A run makes and
//! checks it, and any SQLite `--store`'s folder, when it opens the store:
//! `harness::Keeper`.)
//!
//! A store or a run's file named on the command line may be anyone's (a
//! colleague hands one over): it is only read. But a symbolic link to it
//! is followed only as outputs follow one (`ledger::walk`): when the link
//! and every folder above it belong to root or the invoking user and no
//! one else may write those folders; another user's link is refused (exit
//! 2), so no one but the user chooses what root reads. SQLite and the JSON
//! reader then open the path found, which holds no link.

use std::path::Path;

use super::StoreArgs;
use crate::error::Result;
use crate::store::Selection;
use crate::store::location::is_default;
use crate::ledger::folder::{FolderRole, OwnedDir};

impl StoreArgs {
    /// Where to read runs from: a PostgreSQL URL as given; the default
    /// store's file once its folder is checked (never made: reading creates
    /// nothing; a missing one is "no store at ..."); any other file by the
    /// path its links lead to ([`named_file`]).
    pub(super) fn for_reading(&self) -> Result<String> {
        let location = &self.location;
        if crate::store::is_postgres(location) {
            return Ok(location.clone());
        }
        if is_default(location) {
            let file = OwnedDir::file_in(Path::new(location), FolderRole::Store, false)?;
            return Ok(file.map_or_else(|| location.clone(), |f| f.display().to_string()));
        }
        Ok(named_file(Path::new(location))?.map_or_else(|| location.clone(), |f| f.display().to_string()))
    }

    /// The runs `selector` names ([`crate::store::resolve`]): a file
    /// (a store, a run's --json) needs no store, so the default's folder
    /// is looked at only when the selector is not one; a plan's file names
    /// its plan in the store.
    pub(super) fn resolve(&self, selector: &str) -> Result<Selection> {
        if std::fs::symlink_metadata(selector).is_ok() {
            if let Some(file) = named_file(Path::new(selector))?.filter(|f| f.is_file()) {
                // A plan's file names the plan, whose cases the store holds.
                if let Some(id) = super::plan::id_in(&file) {
                    return crate::store::resolve_plan(&self.for_reading()?, &id);
                }
                return crate::store::from_file(&file, selector);
            }
        }
        crate::store::resolve(&self.for_reading()?, selector)
    }

    /// As [`StoreArgs::resolve`], a plan read as one run
    /// ([`super::plan::as_one`]): what `show`, `export` and `report` print.
    /// (`compare` takes a plan's shards' runs as they are, each with the
    /// machine it ran on.)
    pub(super) fn resolve_one(&self, selector: &str) -> Result<Selection> {
        super::plan::as_one(self.resolve(selector)?)
    }
}

pub(super) use crate::ledger::walk::named_file;
