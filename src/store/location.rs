//! Where the store is when neither `--store` nor `FSLAB_STORE` says.
//!
//! The design decision: root's runs and a user's runs are kept apart, each
//! where its kind of program keeps data. Root (fslab's usual user: it
//! makes loop devices and mounts) keeps them in `/var/lib/fslab/fslab.db`,
//! whatever `HOME` says — `sudo` may leave the user's `HOME` in place, and
//! root writing into a user's home would let that user point root's writes
//! anywhere. Anyone else keeps them under the XDG data folder,
//! `$XDG_DATA_HOME/fslab/fslab.db`, else `$HOME/.local/share/fslab/fslab.db`
//! (a relative value is ignored, as the XDG spec says), else, with neither,
//! beside their state folder in `/var/tmp/fslab-UID/`. Never the current
//! folder: a run's results do not depend on where it was started from.
//!
//! The folder is made (0700) and checked like the state folder by the
//! command line (`ledger::folder`, which this layer may not use), before
//! the store is opened.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The store file's name in its folder.
pub const FILE_NAME: &str = "fslab.db";

/// Root's store folder.
pub const ROOT_FOLDER: &str = "/var/lib/fslab";

/// The store used when `--store` and `FSLAB_STORE` are not given, for the
/// effective user and this environment.
pub fn default_location() -> PathBuf {
    let uid = rustix::process::geteuid();
    default_for(uid.is_root(), uid.as_raw(), std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

/// The store when `--store` is not given: `FSLAB_STORE`, else the default
/// ([`default_location`]). An empty `FSLAB_STORE=` counts as unset, as an
/// empty variable usually does; SQLite would take "" for a temporary
/// database and keep nothing.
pub fn from_environment() -> String {
    match std::env::var_os("FSLAB_STORE").filter(|v| !v.is_empty()) {
        Some(location) => location.to_string_lossy().into_owned(),
        None => default_location().display().to_string(),
    }
}

/// A `--store` value as given: an empty one names no store and is refused
/// (exit 2), where SQLite would have taken it for a temporary database.
pub fn parse(text: &str) -> std::result::Result<String, String> {
    if text.is_empty() {
        return Err("an empty path names no store: give an SQLite file or a postgres:// URL, or --no-store".into());
    }
    Ok(text.to_string())
}

/// Whether `location` (a `--store` value) is the default store, whose
/// folder fslab makes and checks.
pub fn is_default(location: &str) -> bool {
    Path::new(location) == default_location()
}

/// The default store of user `uid` (`root` or not) given these values of
/// `XDG_DATA_HOME` and `HOME`.
fn default_for(root: bool, uid: u32, xdg_data_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    if root {
        return Path::new(ROOT_FOLDER).join(FILE_NAME);
    }
    let absolute = |value: Option<OsString>| value.map(PathBuf::from).filter(|p| p.is_absolute());
    let data = absolute(xdg_data_home).or_else(|| absolute(home).map(|home| home.join(".local/share")));
    match data {
        Some(data) => data.join("fslab").join(FILE_NAME),
        None => PathBuf::from(format!("/var/tmp/fslab-{uid}")).join(FILE_NAME),
    }
}

/// What to add to "no store at PATH" when PATH is a user's default store:
/// root's runs are elsewhere (`sudo fslab run` stores them as root).
pub fn not_found_hint(location: &str) -> Option<String> {
    let root = rustix::process::geteuid().is_root();
    (!root && is_default(location)).then(|| {
        format!("runs made as root (sudo fslab run) are in {ROOT_FOLDER}/{FILE_NAME}: read them with sudo")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn root_keeps_runs_in_var_lib_whatever_home_says() {
        let root = default_for(true, 0, os("/home/ann/.data"), os("/home/ann"));
        assert_eq!(root, Path::new("/var/lib/fslab/fslab.db"));
    }

    #[test]
    fn a_user_keeps_runs_in_the_xdg_data_folder() {
        assert_eq!(default_for(false, 1000, os("/d/xdg"), os("/home/ann")), Path::new("/d/xdg/fslab/fslab.db"));
        assert_eq!(default_for(false, 1000, None, os("/home/ann")), Path::new("/home/ann/.local/share/fslab/fslab.db"));
        // A relative XDG_DATA_HOME is ignored, as the spec says.
        assert_eq!(default_for(false, 1000, os("xdg"), os("/home/ann")), Path::new("/home/ann/.local/share/fslab/fslab.db"));
        assert_eq!(default_for(false, 1000, None, None), Path::new("/var/tmp/fslab-1000/fslab.db"));
        assert_eq!(default_for(false, 1000, os(""), os("")), Path::new("/var/tmp/fslab-1000/fslab.db"));
    }
}
