//! The Debian kernels in the kernel cache: `KERNEL_CACHE/debian/NAME/`
//! holds one package as `dpkg-deb -x` leaves it (`boot/vmlinuz-RELEASE`,
//! `lib/modules/RELEASE` pruned to what guests load), and
//! `package.json`: the package, its version, the name, the `.deb`'s
//! SHA-256 and size, the release. An entry is made under `.NAME.part`
//! and renamed into place whole ([`super::fetch`]), so a present entry
//! is a whole one and is used as it is, with no apt at all.
//!
//! The `debian` folder is held to fslab's folder rule, as the kernel
//! cache is (`ledger::folder`): the user's alone, writable by no one
//! else, reached through no other user's symlink; it is made 0700 when
//! absent, and everything in it is reached from its descriptor.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::catalog::Package;
use crate::record::release::is_versioned_abi;
use crate::error::{Error, Result};
use crate::ledger::folder::{FolderRole, OwnedDir};

/// The folder of Debian kernels inside the kernel cache.
pub const FOLDER: &str = "debian";

/// Each entry's description of itself.
pub const META: &str = "package.json";

/// What an entry says of the package it was unpacked from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// The package (`linux-image-6.1.0-57-amd64`).
    pub package: String,
    /// Its version (`6.1.192-3`).
    pub version: String,
    /// The kernel's name (`6.1.0-57`), the entry's folder.
    pub name: String,
    /// The SHA-256 of the `.deb`, checked against apt's before unpacking.
    pub sha256: String,
    /// The `.deb`'s size in bytes.
    pub size_bytes: u64,
    /// The kernel's release (`6.1.0-57-amd64`).
    pub release: String,
}

impl Meta {
    /// What an entry of `package` says.
    pub fn of(package: &Package) -> Meta {
        Meta {
            package: package.package.clone(),
            version: package.version.clone(),
            name: package.name.clone(),
            sha256: package.sha256.clone(),
            size_bytes: package.size_bytes,
            release: package.release(),
        }
    }
}

/// A whole entry of the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its folder (`KERNEL_CACHE/debian/NAME`).
    pub dir: PathBuf,
    /// Its kernel image (`boot/vmlinuz-RELEASE`), whose module tree lies
    /// beside it.
    pub image: PathBuf,
    /// What it says of its package.
    pub meta: Meta,
}

impl Entry {
    /// What `--kernel` names it by: `debian:NAME`.
    pub fn given(&self) -> String {
        format!("{}{}", super::PREFIX, self.meta.name)
    }
}

/// The kernel cache's `debian` folder, held open.
#[derive(Debug)]
pub struct DebianCache {
    dir: OwnedDir,
}

impl DebianCache {
    /// The `debian` folder of the kernel cache `kernel_cache`, made when
    /// absent; one that is not the user's alone is refused (exit 3).
    pub fn open_or_make(kernel_cache: &Path) -> Result<DebianCache> {
        Ok(DebianCache { dir: OwnedDir::open_or_make(&kernel_cache.join(FOLDER), FolderRole::KernelCache)? })
    }

    /// The `debian` folder when there is one; `None` when absent.
    pub fn open_existing(kernel_cache: &Path) -> Result<Option<DebianCache>> {
        Ok(OwnedDir::open_existing(&kernel_cache.join(FOLDER), FolderRole::KernelCache)?.map(|dir| DebianCache { dir }))
    }

    /// Its canonical path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The folder, for the fetch that writes it.
    pub(super) fn dir(&self) -> &OwnedDir {
        &self.dir
    }

    /// The whole entry of the kernel `name`, `None` when the cache has
    /// none (or `name` could name no entry). Something in its place that
    /// is no entry fslab made is the environment's (exit 3): remove it.
    pub fn entry(&self, name: &str) -> Result<Option<Entry>> {
        if !is_versioned_abi(name) {
            return Ok(None);
        }
        let path = self.path().join(name);
        let not_ours = |why: &str| {
            Error::environment(format!(
                "{}: in the Debian kernel cache, but {why}; remove it and fslab fetches the kernel again",
                path.display()
            ))
        };
        match self.dir.stat_child(Path::new(name)).map_err(|e| Error::io(&path, "stat", e))? {
            None => return Ok(None),
            Some((_, FileType::Directory)) => {}
            Some(_) => return Err(not_ours("not a folder")),
        }
        let entry = self.dir.open_dir(Path::new(name)).map_err(|e| Error::io(&path, "open", e))?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(entry.fd(), META, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Err(not_ours(&format!("without its {META}"))),
            Err(e) => return Err(Error::io(&path.join(META), "open", e.into())),
        };
        let mut text = String::new();
        std::fs::File::from(fd).take(64 << 10).read_to_string(&mut text).map_err(|e| Error::io(&path.join(META), "read", e))?;
        let meta: Meta = serde_json::from_str(&text).map_err(|e| not_ours(&format!("its {META} does not read ({e})")))?;
        if meta.name != name {
            return Err(not_ours(&format!("its {META} names {}", crate::text::escape(&meta.name))));
        }
        let image = Path::new("boot").join(format!("vmlinuz-{}", meta.release));
        match rustix::fs::statat(entry.fd(), &image, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {}
            _ => {
                return Err(not_ours(&format!("without its kernel image {}", image.display())));
            }
        }
        Ok(Some(Entry { image: path.join(image), dir: path, meta }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn meta(name: &str) -> Meta {
        Meta {
            package: format!("linux-image-{name}-amd64"),
            version: "6.1.192-3".into(),
            name: name.into(),
            sha256: "0".repeat(64),
            size_bytes: 70591024,
            release: format!("{name}-amd64"),
        }
    }

    /// An entry as a fetch leaves it, with `meta` as its package.json.
    fn entry(cache: &DebianCache, folder: &str, meta: Option<&Meta>) -> PathBuf {
        let dir = cache.path().join(folder);
        std::fs::create_dir_all(dir.join("boot")).unwrap();
        std::fs::write(dir.join(format!("boot/vmlinuz-{folder}-amd64")), b"kernel").unwrap();
        if let Some(meta) = meta {
            std::fs::write(dir.join(META), serde_json::to_vec(meta).unwrap()).unwrap();
        }
        dir
    }

    #[test]
    fn a_whole_entry_is_found_and_anything_else_in_its_place_is_refused() {
        let dir = crate::test_temp::dir("");
        let cache = DebianCache::open_or_make(&dir.path().join("kernels")).unwrap();
        assert_eq!(cache.path(), dir.path().canonicalize().unwrap().join("kernels/debian"));
        assert_eq!(cache.entry("6.1.0-57").unwrap(), None);
        let whole = entry(&cache, "6.1.0-57", Some(&meta("6.1.0-57")));
        let found = cache.entry("6.1.0-57").unwrap().unwrap();
        assert_eq!(found.image, whole.join("boot/vmlinuz-6.1.0-57-amd64"));
        assert_eq!((found.given(), found.meta), ("debian:6.1.0-57".to_string(), meta("6.1.0-57")));
        entry(&cache, "6.1.0-56", None);
        entry(&cache, "6.1.0-55", Some(&meta("6.1.0-54")));
        std::fs::write(cache.path().join("6.1.0-53"), b"").unwrap();
        for (name, why) in [("6.1.0-56", "without its package.json"), ("6.1.0-55", "names 6.1.0-54"), ("6.1.0-53", "not a folder")] {
            let e = cache.entry(name).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Environment, "{e}");
            assert!(e.message.contains(why) && e.message.contains("remove it"), "{e}");
        }
        for not_a_name in ["../debian", ".6.1.0-57.part", "", "6.1.0-57/boot"] {
            assert_eq!(cache.entry(not_a_name).unwrap(), None, "{not_a_name}");
        }
    }

    #[test]
    fn a_cache_folder_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::test_temp::dir("");
        let open = dir.path().join("kernels/debian");
        std::fs::create_dir_all(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = DebianCache::open_or_make(&dir.path().join("kernels")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Environment, "{e}");
        assert!(e.message.contains("--kernel-cache"), "{e}");
    }
}
