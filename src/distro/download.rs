//! One kernel package downloaded and checked: `apt-get download
//! PACKAGE=VERSION` in a temporary folder of its own, and the `.deb`
//! copied into the cache while its SHA-256 is computed, then held to
//! apt's (the `SHA256:` of `apt-cache show`, from the archive's signed
//! lists) and to its size. What is unpacked is the copy whose bytes were
//! hashed, never the file apt left.
//!
//! apt downloads as its `_apt` user where it can: the temporary folder
//! (`/var/tmp/fslab-apt-PID-N`, made 0700) belongs to `_apt` when fslab
//! runs as root, so apt need not warn that it downloads unsandboxed. It
//! is removed, with what it holds, once the copy is made or the download
//! failed.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use sha2::{Digest, Sha256};

use super::catalog::Package;
use crate::error::{Error, Result};
use crate::ledger::folder::OwnedDir;

/// Where the temporary folders apt downloads into are made: a sticky
/// folder every user may pass through, as `_apt` must.
const TEMP_PARENT: &str = "/var/tmp";

/// Download `package` and write it as `name` in `into` (a regular file,
/// 0600, replacing a killed fetch's): exactly the bytes whose SHA-256 and
/// size apt's lists give. apt failing is the environment's (exit 3); a
/// download that is not what apt's lists say fails (exit 4), and nothing
/// of it is kept.
pub fn download(package: &Package, into: &OwnedDir, name: &str) -> Result<()> {
    let folder = AptFolder::make()?;
    let wanted = format!("{}={}", package.package, package.version);
    let out = Command::new("apt-get")
        .args(["download", "-q", &wanted])
        .current_dir(&folder.path)
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| Error::environment(format!("apt-get does not run here ({e}): Debian kernels are fetched with apt")))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(Error::environment(format!(
            "apt-get download {wanted} failed ({}): {}; check that the archive can be reached, run `apt-get update` \
             as root, and try again",
            out.status,
            crate::text::escape(said.trim())
        )));
    }
    let deb = folder.the_deb(&wanted)?;
    let path = into.path().join(name);
    let copied = copy_hashed(deb, into, name);
    let checked = copied.and_then(|(sha256, size)| {
        if sha256 == package.sha256 && size == package.size_bytes {
            return Ok(());
        }
        Err(Error::failed(format!(
            "{wanted}: the download has SHA256 {sha256} and {size} bytes, but apt's lists say {} and {} bytes; \
             nothing of it is kept (run `apt-get update` as root and try again)",
            package.sha256, package.size_bytes
        )))
    });
    if checked.is_err() {
        let _ = rustix::fs::unlinkat(into.fd(), name, AtFlags::empty());
    }
    checked.map_err(|e| e.context(format!("writing {}", path.display())))
}

/// Copy the open `deb` into `into` as `name`, synced, and say its SHA-256
/// (lowercase hex) and size.
fn copy_hashed(mut deb: File, into: &OwnedDir, name: &str) -> Result<(String, u64)> {
    let path = into.path().join(name);
    match rustix::fs::unlinkat(into.fd(), name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => {}
        Err(e) => return Err(Error::io(&path, "remove", e.into())),
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(into.fd(), name, flags, Mode::from_raw_mode(0o600))
        .map_err(|e| Error::io(&path, "create", e.into()))?;
    let mut copy = File::from(fd);
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let read = deb.read(&mut buffer).map_err(|e| Error::io(&path, "read the download", e))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        copy.write_all(&buffer[..read]).map_err(|e| Error::io(&path, "write", e))?;
        size += read as u64;
    }
    copy.sync_all().map_err(|e| Error::io(&path, "sync", e))?;
    Ok((hasher.finalize().iter().map(|b| format!("{b:02x}")).collect(), size))
}

/// A temporary folder apt downloads into, removed when dropped.
struct AptFolder {
    path: PathBuf,
    fd: OwnedFd,
}

impl AptFolder {
    /// Make `TEMP_PARENT/fslab-apt-PID-N` (0700), `_apt`'s when root.
    fn make() -> Result<AptFolder> {
        let mut made = None;
        for n in 0..1000 {
            let path = Path::new(TEMP_PARENT).join(format!("fslab-apt-{}-{n}", std::process::id()));
            match rustix::fs::mkdir(&path, Mode::RWXU) {
                Ok(()) => {
                    made = Some(path);
                    break;
                }
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(Error::io(&path, "make a folder to download into", e.into())),
            }
        }
        let path = made.ok_or_else(|| Error::failed(format!("no free name for a download folder in {TEMP_PARENT}")))?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(&path, flags, Mode::empty()).map_err(|e| Error::io(&path, "open", e.into()))?;
        let folder = AptFolder { path, fd };
        if rustix::process::geteuid().is_root() {
            if let Some((uid, gid)) = apt_user() {
                rustix::fs::fchown(&folder.fd, Some(uid), Some(gid))
                    .map_err(|e| Error::io(&folder.path, "chown to _apt", e.into()))?;
            }
        }
        Ok(folder)
    }

    /// The one `.deb` apt left, open (a regular file, not followed).
    fn the_deb(&self, wanted: &str) -> Result<File> {
        let names: Vec<String> = std::fs::read_dir(&self.path)
            .map_err(|e| Error::io(&self.path, "read", e))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".deb"))
            .collect();
        let [name] = names.as_slice() else {
            return Err(Error::failed(format!(
                "apt-get download {wanted} left {} .deb files in {}, not one",
                names.len(),
                self.path.display()
            )));
        };
        let path = self.path.join(name);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd =
            rustix::fs::openat(&self.fd, name.as_str(), flags, Mode::empty()).map_err(|e| Error::io(&path, "open", e.into()))?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&path, "stat", e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(Error::failed(format!("{}: what apt-get download left is no regular file", path.display())));
        }
        Ok(File::from(fd))
    }
}

impl Drop for AptFolder {
    fn drop(&mut self) {
        // remove_dir_all never follows a symlink, here or below.
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            eprintln!("fslab: could not remove the download folder {}: {e}", self.path.display());
        }
    }
}

/// `_apt`'s user and group ids, from `/etc/passwd`; `None` where apt has
/// no such user (it then downloads as root).
fn apt_user() -> Option<(rustix::process::Uid, rustix::process::Gid)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let line = passwd.lines().find(|l| l.starts_with("_apt:"))?;
    let fields: Vec<&str> = line.split(':').collect();
    let (uid, gid) = (fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?);
    Some((rustix::process::Uid::from_raw(uid), rustix::process::Gid::from_raw(gid)))
}
