//! What a kernel image can do here (`fslab kernels IMAGE`): where its
//! modules are, whether a guest of it finds what every guest needs
//! (virtio block and PCI, 9p over virtio, overlayfs), which file systems
//! it can mount, how it boots and with what acceleration.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::accel::{self, Accel};
use super::image::{Format, KernelImage, MAX_IMAGE_BYTES};
use super::initramfs::is_static_elf;
use super::modules::{ModuleTree, Resolved};
use crate::error::{Error, Result};
use crate::ledger::given;

/// What every guest loads: the PCI transport and block device of virtio,
/// 9p over virtio (the host's root and the output share), and overlayfs
/// (the tmpfs layer over the read-only root), and loop devices (a crash
/// state is mounted from an image in the guest, `--crash`).
pub const GUEST_BASE: &[&str] = &["virtio_pci", "virtio_blk", "9pnet_virtio", "9p", "overlay", "loop"];

/// The static busybox the initramfs is built around.
pub const BUSYBOX: &str = "/bin/busybox";

/// A kernel image found, read once, and where its module tree is.
#[derive(Debug)]
pub struct Located {
    /// The image, inspected.
    pub image: KernelImage,
    /// Its bytes, as read and inspected (what a guest boots is made of them).
    pub bytes: Vec<u8>,
    /// Its module tree (not yet opened).
    pub modules_dir: PathBuf,
}

/// The kernel image IMAGE names and the module tree that goes with it:
/// `host` is the running kernel (`/boot/vmlinuz-RELEASE`); a tree given
/// (`--kernel-modules`) wins, else `lib/modules/RELEASE` of the package
/// root the image lies in (`ROOT/boot/vmlinuz-RELEASE`, as `dpkg -x`
/// leaves it), else the host's `/lib/modules/RELEASE`. The image is read
/// here, once, held to `ledger::given`'s rule (a regular file of root's or
/// the user's in folders no one else can write, at most
/// [`MAX_IMAGE_BYTES`](super::image::MAX_IMAGE_BYTES)).
pub fn locate(image: &str, modules: Option<&Path>) -> Result<Located> {
    let path = if image == "host" {
        let release = rustix::system::uname().release().to_string_lossy().into_owned();
        PathBuf::from(format!("/boot/vmlinuz-{release}"))
    } else {
        PathBuf::from(image)
    };
    if image == "host" && std::fs::symlink_metadata(&path).is_err() {
        return Err(Error::usage(format!(
            "host is the running kernel, whose image is not in /boot here ({}): with --kernel, `host` runs \
             its cases on this machine without a guest; give `fslab kernels` an image file",
            path.display()
        )));
    }
    let file = given::open_file(&path, "kernel image")?;
    if file.size > MAX_IMAGE_BYTES {
        return Err(Error::usage(format!(
            "kernel image {}: {} bytes, over the {} fslab reads of an image; a vmlinux with debug info boots the \
             same stripped (`strip --strip-debug`), or give its bzImage",
            path.display(),
            file.size,
            crate::units::bytes_short(MAX_IMAGE_BYTES)
        )));
    }
    let bytes = file.read(MAX_IMAGE_BYTES)?;
    let inspected = KernelImage::of_bytes(&path, &bytes)?;
    let modules_dir = match modules {
        Some(dir) => dir.to_path_buf(),
        None => beside(&file.canonical, &path, &inspected)?,
    };
    Ok(Located { image: inspected, bytes, modules_dir })
}

/// The module tree of the image at `path`, which lies at `lies` (its
/// symlinks followed): `ROOT/lib/modules/RELEASE` when that is
/// `ROOT/boot/IMAGE`, else `/lib/modules/RELEASE`.
fn beside(lies: &Path, path: &Path, image: &KernelImage) -> Result<PathBuf> {
    let Some(release) = image.release.clone() else {
        return Err(Error::usage(format!(
            "{}: the image does not say its release, so its modules cannot be found; name them with --kernel-modules DIR",
            path.display()
        )));
    };
    let beside = lies.parent().and_then(Path::parent).map(|root| root.join("lib/modules").join(&release));
    Ok(beside.filter(|d| d.join("kernel").is_dir()).unwrap_or_else(|| Path::new("/lib/modules").join(&release)))
}

/// One module every guest needs, and how this kernel has it.
#[derive(Debug, Clone, Serialize)]
pub struct Need {
    /// Its name.
    pub name: String,
    /// `module` (loaded from the tree, with `load` modules in all),
    /// `built in` or `missing`.
    pub how: &'static str,
    /// The modules to load for it, in order.
    pub load: Vec<String>,
}

/// One file system and whether a guest of this kernel can mount it.
#[derive(Debug, Clone, Serialize)]
pub struct FsSupport {
    /// The file system.
    pub fs: String,
    /// Whether the kernel has it (built in, or its modules all found).
    pub available: bool,
    /// The modules to load for it, in order (empty when built in).
    pub load: Vec<String>,
    /// What was not found, when unavailable.
    pub missing: Vec<String>,
}

/// What `fslab kernels IMAGE` reports.
#[derive(Debug, Clone, Serialize)]
pub struct KernelReport {
    /// The image, inspected.
    pub image: KernelImage,
    /// How QEMU starts it: `pvh` (a vmlinux with the PVH note) or `bzimage`
    /// (slower under TCG: unpack it to a vmlinux first).
    pub boots_by: &'static str,
    /// The module tree used.
    pub modules_dir: PathBuf,
    /// How many modules the tree holds.
    pub modules: usize,
    /// The tree's release, which must be the image's.
    pub modules_release: String,
    /// What every guest needs.
    pub guest_needs: Vec<Need>,
    /// File systems, as `--fs` names them.
    pub file_systems: Vec<FsSupport>,
    /// KVM or TCG here, and why.
    pub accel: Accel,
    /// `qemu-system-x86_64 --version`'s first line, or `None` when missing.
    pub qemu: Option<String>,
    /// Whether a static busybox is at [`BUSYBOX`].
    pub busybox_static: bool,
    /// Whether a guest of this kernel can run a case here: every need
    /// met, QEMU and a static busybox present, releases agreeing.
    pub ready: bool,
}

/// Inspect IMAGE and its modules as [`locate`] finds them.
pub fn report(image: &str, modules: Option<&Path>) -> Result<KernelReport> {
    let Located { image, modules_dir, .. } = locate(image, modules)?;
    let mut tree = ModuleTree::open(&modules_dir)?;
    let modules_dir = tree.dir().to_path_buf();
    let mut guest_needs = Vec::new();
    for name in GUEST_BASE {
        let resolved = tree.resolve(&[name])?;
        let how = if !resolved.builtin.is_empty() {
            "built in"
        } else if resolved.missing.is_empty() {
            "module"
        } else {
            "missing"
        };
        let load = resolved.order.into_iter().map(|m| m.name).collect();
        guest_needs.push(Need { name: name.to_string(), how, load });
    }
    let mut file_systems = Vec::new();
    for fs in crate::site::fs_type::ALL {
        let resolved = resolve_fs(&mut tree, &[], fs)?;
        file_systems.push(FsSupport {
            fs: fs.name().to_string(),
            available: resolved.missing.is_empty(),
            load: resolved.order.into_iter().map(|m| m.name).collect(),
            missing: resolved.missing,
        });
    }
    let qemu = qemu_version();
    let busybox_static = busybox_is_static();
    let modules_release = tree.release().to_string();
    let releases_agree = image.release.as_deref().is_none_or(|r| r == modules_release);
    let ready = guest_needs.iter().all(|n| n.how != "missing") && qemu.is_some() && busybox_static && releases_agree;
    Ok(KernelReport {
        boots_by: if image.format == Format::Vmlinux && image.pvh { "pvh" } else { "bzimage" },
        image,
        modules: tree.module_count(),
        modules_dir,
        modules_release,
        guest_needs,
        file_systems,
        accel: accel::detect(),
        qemu,
        busybox_static,
        ready,
    })
}

/// The modules to load for `first` (names or aliases) and then file
/// system `fs`: `fs-NAME` is what the kernel itself asks for; a tree
/// without `modules.builtin.modinfo` knows a built-in one by its name
/// alone, so NAME is tried when `fs-NAME` is missing.
pub fn resolve_fs(tree: &mut ModuleTree, first: &[&str], fs: crate::site::FsType) -> Result<Resolved> {
    let alias = format!("fs-{}", fs.name());
    let mut wanted: Vec<&str> = first.to_vec();
    wanted.push(&alias);
    let resolved = tree.resolve(&wanted)?;
    if resolved.missing.contains(&alias) {
        *wanted.last_mut().expect("the file system") = fs.name();
        let by_name = tree.resolve(&wanted)?;
        if by_name.missing.len() < resolved.missing.len() {
            return Ok(by_name);
        }
    }
    Ok(resolved)
}

/// `qemu-system-x86_64 --version`'s first line, `None` when it does not run.
pub fn qemu_version() -> Option<String> {
    Command::new("qemu-system-x86_64")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
}

/// Whether [`BUSYBOX`] is a statically linked busybox, as the initramfs
/// (which has no C library) needs.
pub fn busybox_is_static() -> bool {
    std::fs::read(BUSYBOX).is_ok_and(|b| is_static_elf(&b))
}

#[cfg(test)]
mod tests {
    use super::super::image::fake_vmlinux;
    use super::super::modinfo::write_fake_module;
    use super::*;

    #[test]
    fn a_package_root_reports_its_modules_file_systems_and_what_is_missing() {
        let dir = crate::test_temp::dir("");
        let root = dir.path();
        std::fs::create_dir_all(root.join("boot")).unwrap();
        let image = root.join("boot/vmlinux-6.1.0-test");
        std::fs::write(&image, fake_vmlinux(18)).unwrap();
        let tree = root.join("lib/modules/6.1.0-test");
        let module = |rel: &str, entries: &[&str]| write_fake_module(&tree, rel, entries);
        module("kernel/drivers/virtio/virtio.ko", &["depends="]);
        module("kernel/drivers/virtio/virtio_pci.ko", &["depends=virtio"]);
        module("kernel/drivers/block/virtio_blk.ko", &["depends=virtio"]);
        module("kernel/fs/ext4/ext4.ko", &["alias=fs-ext4", "alias=fs-ext3", "alias=fs-ext2", "depends="]);
        std::fs::write(tree.join("modules.builtin"), "kernel/net/9p/9pnet_virtio.ko\nkernel/fs/9p/9p.ko\nkernel/fs/xfs/xfs.ko\nkernel/drivers/block/loop.ko\n").unwrap();
        let report = report(image.to_str().unwrap(), None).unwrap();
        assert_eq!(report.boots_by, "pvh");
        assert_eq!(report.modules_dir, tree);
        assert_eq!(report.modules, 4);
        let how: Vec<(&str, &str)> = report.guest_needs.iter().map(|n| (n.name.as_str(), n.how)).collect();
        assert_eq!(
            how,
            [("virtio_pci", "module"), ("virtio_blk", "module"), ("9pnet_virtio", "built in"), ("9p", "built in"), ("overlay", "missing"), ("loop", "built in")]
        );
        assert_eq!(report.guest_needs[0].load, ["virtio", "virtio_pci"]);
        let fs: Vec<(&str, bool)> = report.file_systems.iter().map(|f| (f.fs.as_str(), f.available)).collect();
        assert_eq!(fs, [("ext2", true), ("ext3", true), ("ext4", true), ("xfs", true), ("btrfs", false)]);
        assert!(!report.ready, "overlay is missing");
    }
}
