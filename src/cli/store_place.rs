//! The store a command uses: `--store`, else `FSLAB_STORE`, else the
//! default for this user (`store::location`), whose folder is made 0700
//! when missing and, like the state folder, must be the user's alone —
//! no one else's, written by no one else, reached through no one else's
//! symlink — before root writes a run into it.

use std::path::Path;

use super::StoreArgs;
use crate::error::Result;
use crate::store::location::{FILE_NAME, is_default};
use crate::target::folder::{FolderRole, OwnedDir};

impl StoreArgs {
    /// Where to write runs: the location as given, or for the default
    /// store, the file in its folder made (0700) and checked first (exit 3
    /// when the folder is not the user's alone).
    pub fn for_writing(&self) -> Result<String> {
        match self.default_folder() {
            Some(folder) => Ok(OwnedDir::open_or_make(folder, FolderRole::Store)?.path().join(FILE_NAME).display().to_string()),
            None => Ok(self.location.clone()),
        }
    }

    /// Where to read runs from: the location as given, or for the default
    /// store, the file in its folder once that folder is checked (never
    /// made: reading creates nothing; a missing one is "no store at ...").
    pub fn for_reading(&self) -> Result<String> {
        let Some(folder) = self.default_folder() else { return Ok(self.location.clone()) };
        Ok(match OwnedDir::open_existing(folder, FolderRole::Store)? {
            Some(dir) => dir.path().join(FILE_NAME).display().to_string(),
            None => self.location.clone(),
        })
    }

    /// The default store's folder, when the location is the default.
    fn default_folder(&self) -> Option<&Path> {
        is_default(&self.location).then(|| Path::new(&self.location).parent()).flatten()
    }
}
