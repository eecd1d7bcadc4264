//! One Debian kernel fetched into the kernel cache: downloaded and
//! checked ([`super::download`]), unpacked with `dpkg-deb -x` into
//! `.NAME.part`, its module tree pruned to what guests load
//! ([`super::prune`]) and `usr/share/doc` dropped, described in
//! `package.json`, synced, and renamed to `NAME`: a present entry is a
//! whole one. A `flock` on the cache folder's `.lock` makes parallel
//! callers fetch once: whoever waited finds the entry made.

use std::fs::File;
use std::io::Write as _;
use std::process::Command;
use std::time::Instant;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::cache::{DebianCache, Entry, META, Meta};
use super::catalog::Package;
use crate::error::{Error, Result};
use crate::ledger::flock::FolderLock;

/// The cache's entry for `package`: the one there, else fetched now,
/// saying so on stderr (`fetching linux-image-… (67.3 MiB)`, `unpacked
/// … in N s`).
pub fn fetch(cache: &DebianCache, package: &Package) -> Result<Entry> {
    if let Some(entry) = cache.entry(&package.name)? {
        return Ok(entry);
    }
    let _lock = FolderLock::take(cache.dir(), ".lock", "the Debian kernel cache's lock")?;
    if let Some(entry) = cache.entry(&package.name)? {
        return Ok(entry); // fetched by another while this one waited
    }
    let name = &package.name;
    let (part, deb) = (format!(".{name}.part"), format!(".{name}.deb"));
    let started = Instant::now();
    eprintln!(
        "fslab: fetching {} {} ({}) into {}",
        package.package,
        package.version,
        crate::units::bytes(package.size_bytes),
        cache.path().join(name).display()
    );
    // A killed fetch's leftovers go first.
    super::prune::remove(&cache.path().join(&part))?;
    super::download::download(package, cache.dir(), &deb)?;
    let downloaded = started.elapsed();
    crate::interrupt::check()?;
    let unpacked = unpack(cache, package, &part, &deb);
    let _ = rustix::fs::unlinkat(cache.dir().fd(), deb.as_str(), AtFlags::empty());
    if let Err(e) = unpacked {
        let _ = super::prune::remove(&cache.path().join(&part));
        return Err(e);
    }
    rustix::fs::renameat(cache.dir().fd(), part.as_str(), cache.dir().fd(), name.as_str())
        .map_err(|e| Error::io(&cache.path().join(name), "name the cache entry", e.into()))?;
    rustix::fs::fsync(cache.dir().fd()).map_err(|e| Error::io(cache.path(), "sync", e.into()))?;
    eprintln!(
        "fslab: unpacked {} in {:.1} s (downloaded in {:.1} s, SHA256 as apt's; modules pruned to what guests load)",
        package.package,
        started.elapsed().as_secs_f64(),
        downloaded.as_secs_f64()
    );
    cache
        .entry(name)?
        .ok_or_else(|| Error::failed(format!("{}: fetched, but no entry is there", cache.path().join(name).display())))
}

/// Unpack the checked `.deb` (`deb` in the cache) into the new folder
/// `part`, prune it and describe it, every byte synced.
fn unpack(cache: &DebianCache, package: &Package, part: &str, deb: &str) -> Result<()> {
    let work = cache.dir().make_child(part).map_err(|e| Error::io(&cache.path().join(part), "make", e))?;
    let out = Command::new("dpkg-deb")
        .arg("-x")
        .arg(cache.path().join(deb))
        .arg(work.path())
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| Error::environment(format!("dpkg-deb does not run here ({e}): Debian kernels are unpacked with it")))?;
    if !out.status.success() {
        return Err(Error::failed(format!(
            "dpkg-deb -x {} failed ({}): {}",
            package.package,
            out.status,
            crate::text::escape(String::from_utf8_lossy(&out.stderr).trim())
        )));
    }
    crate::interrupt::check()?;
    let release = package.release();
    let root = work.path();
    let tree = root.join("lib/modules").join(&release);
    let image = root.join("boot").join(format!("vmlinuz-{release}"));
    if !tree.join("kernel").is_dir() || !image.is_file() {
        return Err(Error::failed(format!(
            "{} {}: the package holds no boot/vmlinuz-{release} with lib/modules/{release}/kernel beside it",
            package.package, package.version
        )));
    }
    super::prune::prune(&tree)?;
    super::prune::remove(&root.join("usr/share/doc"))?;
    write_meta(&work, &Meta::of(package))?;
    rustix::fs::syncfs(work.fd()).map_err(|e| Error::io(root, "sync", e.into()))
}

/// `package.json` in the entry being made.
fn write_meta(work: &crate::ledger::folder::OwnedDir, meta: &Meta) -> Result<()> {
    let path = work.path().join(META);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(work.fd(), META, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| Error::io(&path, "create", e.into()))?;
    let mut text = serde_json::to_vec_pretty(meta).expect("plain data serialises");
    text.push(b'\n');
    let mut file = File::from(fd);
    file.write_all(&text).and_then(|()| file.sync_all()).map_err(|e| Error::io(&path, "write", e))
}
