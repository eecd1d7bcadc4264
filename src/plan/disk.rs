//! Which modelled drive a command's figures are for: `--disk NAME` among
//! the built-in profiles and the one `--disk-profile FILE` adds, as
//! `list --disks` lists them; `run`, `exec` and `hunt` default to
//! [`DEFAULT_DISK`], `map` and `frag` model only when asked.
//!
//! The profile file is read only when named, followed to by the rule for
//! named files (another user's symbolic link refused), and only as a
//! regular file of root's or the invoking user's
//! ([`crate::model::profile_file`]): a profile decides modelled figures.

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::{Profile, builtin, profile_file};

/// The drive `run`, `exec` and `hunt` model when no `--disk` is given: a
/// current 7200 rpm disk.
pub const DEFAULT_DISK: &str = "hdd-7200";

/// The profile in the file `path` names, by the rule for named files.
pub fn profile_file(path: &Path) -> Result<Profile> {
    let shown = crate::text::path(path);
    let found = crate::ledger::walk::named_file(path)?
        .ok_or_else(|| Error::usage(format!("disk profile {shown}: no such file; give the path of a JSON profile file")))?;
    profile_file::load(&found, path)
}

/// The drive `--disk` names among the built-in ones and the one
/// `--disk-profile` adds (that one when it is given alone); `None` when
/// neither is given.
pub fn named(disk: Option<&str>, file: Option<&Path>) -> Result<Option<Profile>> {
    let added = file.map(profile_file).transpose()?;
    let Some(name) = disk.or(added.as_ref().map(|p| p.name.as_str())) else { return Ok(None) };
    let all: Vec<Profile> = added.iter().cloned().collect();
    builtin::by_name(name, &all).map(Some).map_err(|e| Error::usage(format!("--disk {}: {}", crate::text::escape(name), e.message)))
}

/// The drive a run models: [`named`], else [`DEFAULT_DISK`].
pub fn for_run(disk: Option<&str>, file: Option<&Path>) -> Result<Profile> {
    Ok(named(disk, file)?.unwrap_or_else(default_disk))
}

/// The [`DEFAULT_DISK`] profile.
pub fn default_disk() -> Profile {
    builtin::find(DEFAULT_DISK).expect("the default disk is built in")
}

/// The drive a seed's report names, by its profile's name: built in, so
/// always there.
pub fn seed_disk(name: &str) -> Profile {
    builtin::find(name).unwrap_or_else(|| panic!("a seed names the built-in disk profile {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_is_named_or_the_default_and_an_unknown_name_is_refused() {
        assert_eq!(named(None, None).unwrap(), None);
        assert_eq!(for_run(None, None).unwrap().name, "hdd-7200");
        assert_eq!(for_run(Some("laptop-5400"), None).unwrap().name, "laptop-5400");
        let e = for_run(Some("floppy"), None).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(e.message.starts_with("--disk floppy: no disk profile `floppy`") && e.message.contains("hdd-7200-2009"), "{}", e.message);
        let e = named(None, Some(Path::new("/nonexistent/fslab-disk.json"))).unwrap_err();
        assert!(e.message.contains("no such file"), "{}", e.message);
    }

    #[test]
    fn a_profile_file_given_alone_is_the_disk() {
        let dir = crate::test_temp::dir("");
        let path = dir.path().join("mine.json");
        let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/disk-profile.json")).unwrap();
        std::fs::write(&path, &example).unwrap();
        let mine = named(None, Some(&path)).unwrap().unwrap();
        assert!(builtin::find(&mine.name).is_none(), "{}", mine.name);
        assert_eq!(named(Some("ssd-plp"), Some(&path)).unwrap().unwrap().name, "ssd-plp");
        assert_eq!(named(Some(&mine.name), Some(&path)).unwrap(), Some(mine));
    }
}
