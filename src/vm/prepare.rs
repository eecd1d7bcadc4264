//! A kernel made ready for guests once per run (`--kernel IMAGE`): the
//! image checked, its module tree found and indexed, QEMU and a static
//! busybox looked for, and a bzImage's `vmlinux` unpacked, so that every
//! case of the run boots by PVH entry (under TCG the bzImage's own
//! decompression is the slow part of a boot; see [`super::image`]).
//!
//! Unpacked kernels live in the kernel cache ([`DEFAULT_KERNEL_CACHE`]),
//! one `KEY.vmlinux` per image, KEY the SHA-256 of the image's bytes: the
//! same image reuses its entry across runs, a rebuilt one (same path, new
//! bytes) gets a new one. An entry is written under a temporary name and
//! renamed, so a present entry is a whole one; a `flock` on `.lock` in the
//! folder makes parallel runs unpack an image once. The folder is checked
//! as fslab's own, like the age cache (root's, writable by no one else).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::{FlockOperation, Mode, OFlags};
use sha2::{Digest, Sha256};

use super::image::{self, Format};
use super::kernel::{self, GUEST_BASE};
use super::modules::{Module, ModuleTree};
use crate::error::{Error, Result};
use crate::target::folder::{FolderRole, OwnedDir};
use crate::target::FsType;

/// Where unpacked kernels are kept when the caller names no other folder.
pub const DEFAULT_KERNEL_CACHE: &str = "/var/cache/fslab/kernels";

/// A kernel checked and ready to boot guests.
#[derive(Debug)]
pub struct GuestKernel {
    /// The image as the user gave it (`--kernel`), for labels and messages.
    pub given: String,
    /// What QEMU's `-kernel` gets: a PVH `vmlinux` (the image itself, or
    /// unpacked from a bzImage into the cache), or the bzImage itself when
    /// it cannot be unpacked (it boots, more slowly).
    pub vmlinux: PathBuf,
    /// The kernel's release (`6.1.0-56-amd64`).
    pub release: String,
    /// Its module tree (`lib/modules/RELEASE`).
    pub modules_dir: PathBuf,
    /// The tree, indexed once per run (its alias index takes a second to
    /// build), and the modules found for each file system so far.
    modules: Mutex<(ModuleTree, BTreeMap<FsType, Vec<Module>>)>,
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
    /// busybox are here and that the tree has what every guest loads, and
    /// unpack a bzImage's vmlinux into the kernel cache `cache`. A file
    /// that is no kernel image, or cannot be read, is refused (exit 2);
    /// missing modules, QEMU or busybox are the environment's (exit 3).
    pub fn prepare(image: &str, modules: Option<&Path>, cache: &Path) -> Result<GuestKernel> {
        let path = Path::new(image);
        if image != "host" && path.exists() {
            // Unreadable is the user's to fix, like a missing file.
            std::fs::File::open(path)
                .map_err(|e| Error::usage(format!("{image}: cannot read the kernel image ({e}); give one you can read")))?;
        }
        let (inspected, modules_dir) = kernel::locate(image, modules)?;
        if inspected.format == Format::Vmlinux && !inspected.pvh {
            return Err(Error::usage(format!(
                "{image}: this vmlinux has no PVH entry note (Xen note 18), so QEMU cannot start it; give the \
                 kernel's bzImage (vmlinuz) instead"
            )));
        }
        if !modules_dir.join("kernel").is_dir() {
            return Err(Error::environment(format!(
                "{image}: no modules for release {} at {}; install the kernel's package (its lib/modules/RELEASE) \
                 or name its module tree with --kernel-modules DIR",
                inspected.release.as_deref().unwrap_or("(unknown)"),
                modules_dir.display()
            )));
        }
        let mut tree = ModuleTree::open(&modules_dir)?;
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
            return Err(missing_modules(image, &modules_dir, "every guest", &base.missing));
        }
        check_host_tools()?;
        let vmlinux = match inspected.format {
            Format::Vmlinux => inspected.path.clone(),
            Format::Bzimage => unpacked(&inspected.path, cache)?,
        };
        Ok(GuestKernel {
            given: image.to_string(),
            vmlinux,
            release,
            modules_dir,
            modules: Mutex::new((tree, BTreeMap::new())),
        })
    }

    /// A kernel of `release` that was never checked (no files behind it):
    /// for tests of what holds one, such as the harness's conditions.
    #[cfg(test)]
    pub(crate) fn for_tests(release: &str) -> GuestKernel {
        let modules_dir = Path::new("/lib/modules").join(release);
        GuestKernel {
            given: format!("/boot/vmlinuz-{release}"),
            vmlinux: PathBuf::from(format!("/boot/vmlinuz-{release}")),
            release: release.to_string(),
            modules: Mutex::new((ModuleTree::empty(&modules_dir), BTreeMap::new())),
            modules_dir,
        }
    }

    /// The modules a guest needs for file system `fs`, in load order:
    /// every guest's ([`GUEST_BASE`]) and the file system's own (`fs-NAME`,
    /// else NAME). Resolved once per file system; a missing one is the
    /// environment's (exit 3).
    pub fn modules_for(&self, fs: FsType) -> Result<Vec<Module>> {
        let mut guard = self.modules.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (tree, found) = &mut *guard;
        if let Some(modules) = found.get(&fs) {
            return Ok(modules.clone());
        }
        let resolved = kernel::resolve_fs(tree, GUEST_BASE, fs)?;
        if !resolved.missing.is_empty() {
            return Err(missing_modules(&self.given, &self.modules_dir, fs.name(), &resolved.missing));
        }
        found.insert(fs, resolved.order.clone());
        Ok(resolved.order)
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

/// The vmlinux of the bzImage at `bzimage`, from the cache `cache`,
/// unpacked into it first when absent. A bzImage that cannot be
/// unpacked (an old boot protocol, an unknown compression, no
/// decompressor, no PVH note inside) is booted as it is; a cache folder
/// that cannot be used is an error.
fn unpacked(bzimage: &Path, cache: &Path) -> Result<PathBuf> {
    let bytes = std::fs::read(bzimage).map_err(|e| Error::usage(format!("{}: cannot read the kernel image ({e})", bzimage.display())))?;
    let key = crate::target::image_copy::hex(&Sha256::digest(&bytes));
    drop(bytes);
    let dir = OwnedDir::open_or_make(cache, FolderRole::KernelCache)?;
    let name = format!("{key}.vmlinux");
    let entry = dir.path().join(&name);
    if is_entry(&dir, &name)? {
        return Ok(entry);
    }
    let _lock = CacheLock::take(&dir)?;
    if is_entry(&dir, &name)? {
        return Ok(entry); // another process unpacked it while we waited
    }
    match image::extract_vmlinux(bzimage, &entry) {
        Ok(_) => Ok(entry),
        // Making or naming the entry failed: the cache's fault, said.
        Err(e) if e.message.starts_with(&*dir.path().to_string_lossy()) => Err(e),
        // The image cannot be unpacked here: QEMU boots it as it is.
        Err(_) => Ok(bzimage.to_path_buf()),
    }
}

/// Whether `name` in the cache is a regular file of ours that starts as
/// an ELF does: an entry, which renaming made whole.
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
    let mut magic = [0u8; 4];
    let read = rustix::io::read(&fd, &mut magic).unwrap_or(0);
    Ok(read == 4 && &magic == b"\x7fELF")
}

/// The kernel cache's lock (`.lock`, an exclusive `flock`), held while
/// an entry is made; released when dropped (the file closes).
struct CacheLock {
    _file: File,
}

impl CacheLock {
    fn take(dir: &OwnedDir) -> Result<CacheLock> {
        let path = dir.path().join(".lock");
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir.fd(), ".lock", flags, Mode::from_raw_mode(0o600))
            .map_err(|e| Error::io(&path, "open the kernel cache's lock", e.into()))?;
        let file = File::from(fd);
        rustix::fs::flock(file.as_fd(), FlockOperation::LockExclusive)
            .map_err(|e| Error::io(&path, "lock the kernel cache", e.into()))?;
        Ok(CacheLock { _file: file })
    }
}

#[cfg(test)]
#[path = "prepare_tests.rs"]
mod tests;
