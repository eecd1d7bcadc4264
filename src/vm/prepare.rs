//! A kernel made ready for guests once per run (`--kernel IMAGE`): the
//! image read and checked, its module tree found and indexed, the modules
//! every case's file system needs read, QEMU and a static busybox looked
//! for, and what QEMU boots written into the kernel cache, so that every
//! case of the run boots exactly what was checked here, whatever becomes
//! of the files it came from, and a bzImage boots by PVH entry (under TCG
//! the bzImage's own decompression is the slow part of a boot; see
//! [`super::image`]).
//!
//! Read once: the image is read whole through `ledger::given` (root's or
//! the user's, in folders no one else can write, at most
//! [`MAX_IMAGE_BYTES`](super::image::MAX_IMAGE_BYTES)), and the modules
//! through the tree's descriptor ([`ModuleTree::load`]); both are held
//! from then on as bytes, the modules in memory and the kernel in the
//! cache.
//!
//! The kernel cache ([`DEFAULT_KERNEL_CACHE`]) holds one entry per image,
//! named by the SHA-256 of the image's bytes: `KEY.vmlinux` (a vmlinux as
//! given, or unpacked from a bzImage), or `KEY.bzimage` (a bzImage that
//! cannot be unpacked here, booted as it is). The same image reuses its
//! entry across runs, a rebuilt one (same path, new bytes) gets a new one.
//! An entry is written under a temporary name and renamed, so a present
//! entry is a whole one; a `flock` on `.lock` in the folder makes parallel
//! runs write an image once. The folder is checked as fslab's own, like
//! the age cache (root's, writable by no one else).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use sha2::{Digest, Sha256};

use super::image::{self, Format, KernelImage};
use super::kernel::{self, Located, GUEST_BASE};
use super::modules::{Loaded, ModuleTree};
use crate::error::{Error, Result};
use crate::ledger::flock::FolderLock;
use crate::ledger::folder::{FolderRole, OwnedDir};
use crate::site::FsType;

/// Where unpacked kernels are kept when the caller names no other folder.
pub const DEFAULT_KERNEL_CACHE: &str = "/var/cache/fslab/kernels";

/// A kernel checked and ready to boot guests.
#[derive(Debug)]
pub struct GuestKernel {
    /// The image as the user gave it (`--kernel`), for labels and messages.
    pub given: String,
    /// What QEMU's `-kernel` gets: the kernel cache's entry for the image
    /// (a PVH `vmlinux`, or the bzImage itself when it cannot be unpacked;
    /// it boots, more slowly).
    pub vmlinux: PathBuf,
    /// The kernel's release (`6.1.0-56-amd64`).
    pub release: String,
    /// Its module tree (`lib/modules/RELEASE`), its canonical path.
    pub modules_dir: PathBuf,
    /// The modules a guest of each file system loads, read at
    /// preparation, or why they cannot be (missing from the tree).
    modules: BTreeMap<FsType, Result<Vec<Loaded>>>,
}

impl PartialEq for GuestKernel {
    fn eq(&self, other: &Self) -> bool {
        (&self.given, &self.vmlinux, &self.release, &self.modules_dir)
            == (&other.given, &other.vmlinux, &other.release, &other.modules_dir)
    }
}

impl Eq for GuestKernel {}

impl GuestKernel {
    /// Check `image` (a path), find its module tree (`modules` if given,
    /// else as [`kernel::locate`] does), check that QEMU and a static
    /// busybox are here and that the tree has what every guest loads, read
    /// the modules guests of `file_systems` load, and write what QEMU
    /// boots into the kernel cache `cache` (a bzImage's vmlinux unpacked).
    /// A file that is no kernel image, or no regular file, or too large, is
    /// refused (exit 2); an image or tree another user owns or may write,
    /// missing modules, QEMU or busybox are the environment's (exit 3).
    /// Nothing is made before all of that is checked.
    pub fn prepare(image: &str, modules: Option<&Path>, cache: &Path, file_systems: &[FsType]) -> Result<GuestKernel> {
        let located = kernel::locate(image, modules)?;
        let inspected = &located.image;
        if inspected.format == Format::Vmlinux && !inspected.pvh {
            return Err(Error::usage(format!(
                "{image}: this vmlinux has no PVH entry note (Xen note 18), so QEMU cannot start it; give the \
                 kernel's bzImage (vmlinuz) instead"
            )));
        }
        let modules_dir = &located.modules_dir;
        if !modules_dir.join("kernel").is_dir() {
            return Err(Error::environment(format!(
                "{image}: no modules for release {} at {}; install the kernel's package (its lib/modules/RELEASE) \
                 or name its module tree with --kernel-modules DIR",
                inspected.release.as_deref().unwrap_or("(unknown)"),
                modules_dir.display()
            )));
        }
        let mut tree = ModuleTree::open(modules_dir)?;
        let release = inspected.release.clone().unwrap_or_else(|| tree.release().to_string());
        if release != tree.release() {
            return Err(Error::usage(format!(
                "{image} is release {release}, but the module tree {} is for {}: modules of another release do not \
                 load; name the image's own tree with --kernel-modules DIR",
                modules_dir.display(),
                tree.release()
            )));
        }
        let base = tree.resolve(GUEST_BASE)?;
        if !base.missing.is_empty() {
            return Err(missing_modules(image, tree.dir(), "every guest", &base.missing));
        }
        check_host_tools()?;
        let mut loaded = BTreeMap::new();
        for fs in file_systems {
            let resolved = kernel::resolve_fs(&mut tree, GUEST_BASE, *fs)?;
            let modules = if resolved.missing.is_empty() {
                Ok(tree.load(&resolved.order)?)
            } else {
                Err(missing_modules(image, tree.dir(), fs.name(), &resolved.missing))
            };
            loaded.insert(*fs, modules);
        }
        Ok(GuestKernel {
            given: image.to_string(),
            vmlinux: cached(&located, cache)?,
            release,
            modules_dir: tree.dir().to_path_buf(),
            modules: loaded,
        })
    }

    /// A kernel of `release` that was never checked (no files behind it):
    /// for tests of what holds one, such as the harness's conditions.
    #[cfg(test)]
    pub(crate) fn for_tests(release: &str) -> GuestKernel {
        GuestKernel {
            given: format!("/boot/vmlinuz-{release}"),
            vmlinux: PathBuf::from(format!("/boot/vmlinuz-{release}")),
            release: release.to_string(),
            modules_dir: Path::new("/lib/modules").join(release),
            modules: BTreeMap::new(),
        }
    }

    /// The modules a guest needs for file system `fs`, in load order, as
    /// read at preparation: every guest's ([`GUEST_BASE`]) and the file
    /// system's own (`fs-NAME`, else NAME). A missing one is the
    /// environment's (exit 3).
    pub fn modules_for(&self, fs: FsType) -> Result<Vec<Loaded>> {
        match self.modules.get(&fs) {
            Some(modules) => modules.clone(),
            None => Err(Error::failed(format!(
                "{}: no modules were read for {} when the kernel was prepared",
                self.given,
                fs.name()
            ))),
        }
    }
}

fn missing_modules(image: &str, dir: &Path, for_what: &str, missing: &[String]) -> Error {
    Error::environment(format!(
        "{image}: the module tree {} lacks what {for_what} needs: {}; name the kernel's complete tree with \
         --kernel-modules DIR (lib/modules/RELEASE of its package), or pick a kernel that has them",
        dir.display(),
        missing.join(", ")
    ))
}

/// QEMU and a static busybox, or what to install (exit 3).
fn check_host_tools() -> Result<()> {
    if kernel::qemu_version().is_none() {
        return Err(Error::environment(
            "qemu-system-x86_64 does not run here, and guests (--kernel) need it: install qemu-system-x86",
        ));
    }
    if !kernel::busybox_is_static() {
        return Err(Error::environment(format!(
            "{} is no static busybox, and a guest's initramfs (which has no C library) is built around one: \
             install busybox-static",
            kernel::BUSYBOX
        )));
    }
    Ok(())
}

/// What QEMU boots for the image `located` holds: its entry in the kernel
/// cache `cache`, written from the bytes read (a vmlinux as it is, a
/// bzImage's vmlinux unpacked) when absent. A bzImage that cannot be
/// unpacked (an old boot protocol, an unknown compression, no
/// decompressor, no PVH note inside) is kept and booted as it is; a cache
/// folder that cannot be used is an error.
fn cached(located: &Located, cache: &Path) -> Result<PathBuf> {
    let key = crate::age_cache::image_copy::hex(&Sha256::digest(&located.bytes));
    let dir = OwnedDir::open_or_make(cache, FolderRole::KernelCache)?;
    let names = [format!("{key}.vmlinux"), format!("{key}.bzimage")];
    let present = |dir: &OwnedDir| -> Result<Option<PathBuf>> {
        for name in &names {
            if is_entry(dir, name)? {
                return Ok(Some(dir.path().join(name)));
            }
        }
        Ok(None)
    };
    if let Some(entry) = present(&dir)? {
        return Ok(entry);
    }
    let _lock = FolderLock::take(&dir, ".lock", "the kernel cache's lock")?;
    if let Some(entry) = present(&dir)? {
        return Ok(entry); // another process wrote it while we waited
    }
    let (name, bytes) = match located.image.format {
        Format::Vmlinux => (&names[0], Cow::Borrowed(&located.bytes[..])),
        Format::Bzimage => match image::unpack_vmlinux(&located.bytes, &located.image.path) {
            Ok(vmlinux) => (&names[0], Cow::Owned(vmlinux)),
            Err(_) => (&names[1], Cow::Borrowed(&located.bytes[..])),
        },
    };
    write_entry(&dir, name, &bytes)?;
    Ok(dir.path().join(name))
}

/// Write `bytes` as the cache's entry `name`: under `NAME.part` (a killed
/// run's is replaced), synced, then renamed.
fn write_entry(dir: &OwnedDir, name: &str, bytes: &[u8]) -> Result<()> {
    let part = format!("{name}.part");
    let path = dir.path().join(&part);
    let io = |what: &'static str| move |e: std::io::Error| Error::io(&dir.path().join(name), what, e);
    match rustix::fs::unlinkat(dir.fd(), part.as_str(), AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => {}
        Err(e) => return Err(Error::io(&path, "remove", e.into())),
    }
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir.fd(), part.as_str(), flags, Mode::from_raw_mode(0o644))
        .map_err(|e| Error::io(&path, "create the kernel cache entry", e.into()))?;
    let mut file = File::from(fd);
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(io("write the kernel cache entry"))?;
    rustix::fs::renameat(dir.fd(), part.as_str(), dir.fd(), name).map_err(|e| io("name the kernel cache entry")(e.into()))
}

/// Whether `name` in the cache is a regular file of ours that starts as a
/// kernel image does: an entry, which renaming made whole.
fn is_entry(dir: &OwnedDir, name: &str) -> Result<bool> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir.fd(), name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(e) => return Err(Error::io(&dir.path().join(name), "open the kernel cache entry", e.into())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&dir.path().join(name), "stat", e.into()))?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile
        || stat.st_uid != rustix::process::geteuid().as_raw()
    {
        return Err(Error::environment(format!(
            "{}: in the kernel cache, but not a file of yours; remove it",
            dir.path().join(name).display()
        )));
    }
    let mut start = [0u8; 1024];
    let read = rustix::io::read(&fd, &mut start).unwrap_or(0);
    Ok(KernelImage::of_bytes(&dir.path().join(name), &start[..read]).is_ok())
}

#[cfg(test)]
#[path = "prepare_tests.rs"]
mod tests;
