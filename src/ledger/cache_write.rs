//! The aged-image cache's file names, and the release of a cache write a
//! run recorded ([`Resource::CacheImage`](super::Resource::CacheImage)):
//! the ledger's side of `crate::age_cache`.

use std::path::Path;

use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;

use super::folder::{FolderRole, OwnedDir};
use super::proof::{Outcome, Proof};
use crate::error::Error;

/// Whether `key` is one fslab makes (64 lowercase hex digits): the only
/// names in the folder it reads, writes or removes are `KEY.img` and
/// `KEY.json`.
pub fn is_key(key: &str) -> bool {
    key.len() == 64 && key.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The key of a cache file name (`KEY.img`, `KEY.json`), and whether it
/// is the image.
pub fn parse_name(name: &str) -> Option<(&str, bool)> {
    let (key, ext) = name.split_once('.')?;
    let image = match ext {
        "img" => true,
        "json" => false,
        _ => return None,
    };
    is_key(key).then_some((key, image))
}

/// Release a cache write a run recorded ([`Resource::CacheImage`]): an
/// image at `path` that is the file the run made (`proof`) and has no json
/// beside it is an incomplete entry, and is removed; a complete entry, or
/// another file there, is left (released: nothing of the run's is left to
/// give back — its unnamed copy died with it). A path not named as a cache
/// image, or a folder that is not ours alone, is refused.
pub fn release_write(path: &Path, proof: Option<&Proof>) -> Outcome {
    let refuse = |why: String| Ok(Some(format!("not made by fslab: {why}")));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let (Some((key, true)), Some(folder)) = (parse_name(name), path.parent()) else {
        return refuse(format!("{} is not named as a cache image", path.display()));
    };
    let Some(Proof::File(want)) = proof else {
        return Ok(None); // killed before its unnamed file was proved: gone with it
    };
    let dir = match OwnedDir::open_existing(folder, FolderRole::Cache) {
        Ok(Some(dir)) => dir,
        Ok(None) => return Ok(None),
        Err(e) => return refuse(e.message),
    };
    let stat_of = |name: &str| dir.stat_child(Path::new(name)).map_err(|e| Error::io(path, "stat", e));
    match stat_of(name)? {
        Some((id, FileType::RegularFile)) if id == *want => {}
        _ => return Ok(None),
    }
    if stat_of(&format!("{key}.json"))?.is_some() {
        return Ok(None); // complete: kept
    }
    match rustix::fs::unlinkat(dir.fd(), name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(Error::io(path, "remove the incomplete cache image", e.into())),
    }
}
