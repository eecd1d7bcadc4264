//! The packaged kernels apt knows: Debian's `linux-image-ABI-amd64`
//! packages of a versioned ABI (`6.1.0-50`, `6.12.57+deb12`), found with
//! `apt-cache search` and described by `apt-cache show` (Version, Size,
//! SHA256, Filename), in Debian's order of their package versions. The
//! other flavours (`-cloud-amd64`, `-rt-amd64`) and the metapackages
//! (`linux-image-6.12-amd64`, `linux-image-amd64`) are left out: a name
//! is one kernel build, booted as the plain flavour.

use std::process::Command;

use serde::Serialize;

use super::version;
use crate::error::{Error, Result};
use crate::record::release::is_versioned_abi;

/// The package names apt is asked for (a regular expression of
/// `apt-cache search --names-only`); [`abi_of`] keeps the plain flavour
/// of a versioned ABI among them.
const SEARCH: &str = "^linux-image-[0-9].*-amd64$";

/// One kernel package, as apt's lists describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Package {
    /// The ABI part of the package's name (`6.1.0-50`, `6.12.57+deb12`):
    /// what `debian:NAME` names.
    pub name: String,
    /// The package (`linux-image-6.1.0-50-amd64`).
    pub package: String,
    /// The package's version (`6.1.176-1`, `6.12.57-1~bpo12+1`).
    pub version: String,
    /// The `.deb`'s size in bytes.
    pub size_bytes: u64,
    /// The `.deb`'s SHA-256, as apt's (signed) lists give it.
    pub sha256: String,
    /// Where the archive keeps it (`pool/main/l/...deb`).
    pub filename: String,
}

impl Package {
    /// The kernel's release (`uname -r` in its guests): `NAME-amd64`.
    pub fn release(&self) -> String {
        format!("{}-amd64", self.name)
    }
}

/// The packaged kernels apt knows, in Debian's version order (oldest
/// first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// Each package once (its highest version when apt lists several).
    pub packages: Vec<Package>,
}

impl Catalog {
    /// Ask apt: `apt-cache search`, then `apt-cache show` of what it
    /// found (once a process). No kernel at all (apt's lists not fetched yet) or no apt is
    /// the environment's (exit 3), with what to do.
    pub fn from_apt() -> Result<Catalog> {
        // Asked once a process: a run naming several ranges reads apt once.
        static ASKED: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        if let Some(catalog) = ASKED.get() {
            return Ok(catalog.clone());
        }
        let found = apt_cache(&["search", "--names-only", SEARCH])?;
        let names: Vec<&str> =
            found.lines().filter_map(|line| line.split_whitespace().next()).filter(|p| abi_of(p).is_some()).collect();
        if names.is_empty() {
            return Err(no_catalog());
        }
        let mut args = vec!["show"];
        args.extend(&names);
        let catalog = Catalog::parse(&apt_cache(&args)?);
        if catalog.packages.is_empty() {
            return Err(no_catalog());
        }
        Ok(ASKED.get_or_init(|| catalog).clone())
    }

    /// The catalog `apt-cache show`'s text describes: every stanza of a
    /// plain-flavour kernel package with a Version, a Size, a SHA256 and
    /// a Filename; a package listed more than once keeps its highest
    /// version. Sorted in Debian's version order, ties by name.
    pub fn parse(show: &str) -> Catalog {
        let mut packages: Vec<Package> = Vec::new();
        for stanza in show.split("\n\n") {
            let Some(package) = stanza_package(stanza) else {
                continue;
            };
            match packages.iter_mut().find(|p| p.package == package.package) {
                Some(known) if version::compare(&package.version, &known.version).is_gt() => *known = package,
                Some(_) => {}
                None => packages.push(package),
            }
        }
        packages.sort_by(|a, b| version::compare(&a.version, &b.version).then_with(|| a.name.cmp(&b.name)));
        Catalog { packages }
    }

    /// The package named `name` exactly, and where it stands.
    pub fn named(&self, name: &str) -> Option<(usize, &Package)> {
        self.packages.iter().enumerate().find(|(_, p)| p.name == name)
    }
}

/// The ABI of a plain-flavour kernel package with a versioned ABI
/// (`linux-image-6.1.0-50-amd64` gives `6.1.0-50`, `linux-image-6.12.57+deb12-amd64`
/// gives `6.12.57+deb12`); `None` for any other package: another
/// flavour, a metapackage, a debug or unsigned one.
pub fn abi_of(package: &str) -> Option<&str> {
    let abi = package.strip_prefix("linux-image-")?.strip_suffix("-amd64")?;
    is_versioned_abi(abi).then_some(abi)
}

/// One stanza's kernel package, when it is one and whole.
fn stanza_package(stanza: &str) -> Option<Package> {
    let field =
        |name: &str| stanza.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':').map(|v| v.trim().to_string()));
    let package = field("Package")?;
    let name = abi_of(&package)?.to_string();
    let sha256 = field("SHA256")?.to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(Package {
        name,
        version: field("Version")?,
        size_bytes: field("Size")?.parse().ok()?,
        sha256,
        filename: field("Filename")?,
        package,
    })
}

/// `apt-cache ARGS`'s output (in the C locale); apt missing or failing is
/// the environment's.
fn apt_cache(args: &[&str]) -> Result<String> {
    let out = Command::new("apt-cache").args(args).env("LC_ALL", "C").output().map_err(|e| {
        Error::environment(format!(
            "apt-cache does not run here ({e}): Debian kernels (debian:NAME) are found and fetched with apt, so this \
             needs a Debian machine; give --kernel an image file instead"
        ))
    })?;
    if !out.status.success() {
        return Err(Error::environment(format!(
            "apt-cache {} failed ({}): {}",
            args.first().copied().unwrap_or_default(),
            out.status,
            crate::text::escape(String::from_utf8_lossy(&out.stderr).trim())
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn no_catalog() -> Error {
    Error::environment(
        "apt knows no Debian kernel package (linux-image-X.Y.Z-N-amd64): its package lists are not fetched yet; run \
         `apt-get update` as root, then try again",
    )
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
