//! Distribution kernel packages: Debian's kernels by name (issue 42).
//! `debian:6.1.0-50` is the package `linux-image-6.1.0-50-amd64` from
//! Debian's archive, as apt knows it; `debian:6.1.0-47..6.12.117` every
//! kernel between, in Debian's order of package versions. Wherever fslab
//! takes a kernel image (`--kernel`, `fslab kernels`) it takes such a
//! name: the package is fetched once into the kernel cache and booted as
//! an image is, its module tree beside it.
//!
//! The pieces: [`version`] (dpkg's version order), [`catalog`] (what apt
//! knows: `apt-cache search` and `show`), [`names`] (names, lists and
//! ranges read and resolved), [`cache`] (`KERNEL_CACHE/debian/NAME`),
//! [`download`] (`apt-get download`, the SHA-256 held to apt's),
//! [`prune`] (the module tree cut to what guests load) and [`fetch`]
//! (unpacked, described, renamed into place under a lock).
//!
//! Layering: `distro` names the ledger (the cache folder's rule, its
//! lock) and the foundation; `plan` names it to expand `--kernel`, and
//! `cli` to list and report.

pub mod cache;
pub mod catalog;
pub mod download;
pub mod fetch;
pub mod names;
pub mod prune;
pub mod version;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use cache::{DebianCache, Entry, Meta};
pub use catalog::{Catalog, Package};
pub use names::{PREFIX, Spec};

/// Whether a kernel as given names Debian packages (`debian:…`).
pub fn is_debian(given: &str) -> bool {
    given.starts_with(PREFIX)
}

/// A kernel a `debian:` spec names: one the kernel cache holds, or a
/// package apt knows, to fetch.
#[derive(Debug, Clone)]
pub enum Named {
    /// A whole entry of the cache.
    Cached(Entry),
    /// A package the cache lacks (or had not when looked up).
    Package(Package),
}

impl Named {
    /// What `--kernel` names it by: `debian:NAME`.
    pub fn given(&self) -> String {
        match self {
            Named::Cached(entry) => entry.given(),
            Named::Package(package) => format!("{PREFIX}{}", package.name),
        }
    }

    /// Its entry in the kernel cache `kernel_cache`, fetched when absent.
    pub fn fetched(self, kernel_cache: &Path) -> crate::error::Result<Entry> {
        match self {
            Named::Cached(entry) => Ok(entry),
            Named::Package(package) => fetch::fetch(&DebianCache::open_or_make(kernel_cache)?, &package),
        }
    }
}

/// The kernels `debian:SPEC` names, in the order it names them, each as
/// the kernel cache `kernel_cache` holds it or as a package to fetch;
/// nothing is fetched yet. A spec that lists names the cache holds asks
/// no apt at all; anything else reads apt's catalog first. A wrong name
/// is a usage error (exit 2); no apt, or apt knowing no kernel, is the
/// environment's (exit 3).
pub fn resolve(given: &str, kernel_cache: &Path) -> crate::error::Result<Vec<Named>> {
    let spec = Spec::parse(given)?;
    let cache = DebianCache::open_or_make(kernel_cache)?;
    if let Some(names) = spec.one_by_one() {
        let mut cached = Vec::new();
        for name in &names {
            match cache.entry(name)? {
                Some(entry) if !cached.iter().any(|e: &Entry| e.meta.name == entry.meta.name) => cached.push(entry),
                _ => break,
            }
        }
        if cached.len() == names.len() {
            return Ok(cached.into_iter().map(Named::Cached).collect());
        }
    }
    let catalog = Catalog::from_apt()?;
    let mut named = Vec::new();
    for package in spec.select(&catalog)? {
        named.push(match cache.entry(&package.name)? {
            Some(entry) => Named::Cached(entry),
            None => Named::Package(package.clone()),
        });
    }
    Ok(named)
}

/// The kernels `debian:SPEC` names ([`resolve`]), each fetched into the
/// kernel cache when absent.
pub fn kernels(given: &str, kernel_cache: &Path) -> crate::error::Result<Vec<Entry>> {
    resolve(given, kernel_cache)?.into_iter().map(|named| named.fetched(kernel_cache)).collect()
}

/// One kernel apt knows, and whether the kernel cache holds it.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// Where it comes from: `debian`.
    pub source: &'static str,
    /// What `--kernel` takes: `debian:NAME`.
    pub kernel: String,
    /// The package, as apt knows it.
    #[serde(flatten)]
    pub package: Package,
    /// The kernel's release (`6.1.0-57-amd64`), as places print it.
    pub release: String,
    /// The cache entry's folder when the cache holds it, else `None`.
    pub cached: Option<PathBuf>,
}

/// The kernels `which` names (`debian` for all, or `debian:SPEC`), in
/// Debian's order, each with its cache entry if the kernel cache holds
/// one. Nothing is fetched or made; a cache fslab may not use counts as
/// holding nothing, said once on stderr.
pub fn list(which: &str, kernel_cache: &Path) -> crate::error::Result<Vec<Listed>> {
    let catalog = Catalog::from_apt()?;
    let packages: Vec<&Package> = if which == "debian" {
        catalog.packages.iter().collect()
    } else if is_debian(which) {
        let mut picked = Spec::parse(which)?.select(&catalog)?;
        picked.sort_by(|a, b| version::compare(&a.version, &b.version));
        picked
    } else {
        return Err(crate::error::Error::usage(format!(
            "--list {}: fslab lists Debian's kernels: give debian, or debian:RANGE (debian:6.1.0-47..6.1.0-57)",
            crate::text::escape(which)
        )));
    };
    let cache = DebianCache::open_existing(kernel_cache).unwrap_or_else(|e| {
        eprintln!("fslab: {e}; no kernel is shown as cached");
        None
    });
    let mut listed = Vec::new();
    for package in packages {
        let cached = match &cache {
            Some(cache) => cache.entry(&package.name)?.map(|entry| entry.dir),
            None => None,
        };
        listed.push(Listed {
            source: "debian",
            kernel: format!("{PREFIX}{}", package.name),
            release: package.release(),
            package: package.clone(),
            cached,
        });
    }
    Ok(listed)
}
