//! The store a reading command uses: `--store`, else `FSLAB_STORE`, else
//! the default for this user (`store::location`), whose folder, like the
//! state folder, must be the user's alone — no one else's, written by no
//! one else, reached through no one else's symlink — before fslab reads
//! from it. (A run makes and checks it when it opens the store:
//! `harness::Keeper`.)

use std::path::Path;

use super::StoreArgs;
use crate::error::Result;
use crate::store::Selection;
use crate::store::location::{FILE_NAME, is_default};
use crate::target::folder::{FolderRole, OwnedDir};

impl StoreArgs {
    /// Where to read runs from: the location as given, or for the default
    /// store, the file in its folder once that folder is checked (never
    /// made: reading creates nothing; a missing one is "no store at ...").
    pub(super) fn for_reading(&self) -> Result<String> {
        let Some(folder) = self.default_folder() else { return Ok(self.location.clone()) };
        Ok(match OwnedDir::open_existing(folder, FolderRole::Store)? {
            Some(dir) => dir.path().join(FILE_NAME).display().to_string(),
            None => self.location.clone(),
        })
    }

    /// The runs `selector` names ([`crate::store::resolve`]): a file
    /// (a store, a run's --json) needs no store, so the default's folder
    /// is looked at only when the selector is not one.
    pub(super) fn resolve(&self, selector: &str) -> Result<Selection> {
        if Path::new(selector).is_file() {
            return crate::store::resolve(&self.location, selector);
        }
        crate::store::resolve(&self.for_reading()?, selector)
    }

    /// The default store's folder, when the location is the default.
    fn default_folder(&self) -> Option<&Path> {
        is_default(&self.location).then(|| Path::new(&self.location).parent()).flatten()
    }
}
