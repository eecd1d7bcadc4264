//! Tests of `prepare.rs`: refusals and their exit codes, the kernel
//! cache's reuse and lock, modules per file system, and what boots being
//! what was read (fake images and module trees; nothing is booted).

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use super::super::image::{fake_bzimage, fake_vmlinux};
use super::super::modinfo::{fake_module, write_fake_module};
use super::*;
use crate::error::ErrorKind;

fn tempdir() -> tempfile::TempDir {
    crate::test_temp::dir("")
}

/// A `dpkg -x`-shaped root below `root`: `boot/vmlinuz-6.1.0-test` (a
/// bzImage around a PVH vmlinux) and `lib/modules/6.1.0-test` with what
/// every guest loads and ext4. Returns the image's path.
fn package_root(root: &Path) -> PathBuf {
    std::fs::create_dir_all(root.join("boot")).unwrap();
    let image = root.join("boot/vmlinuz-6.1.0-test");
    std::fs::write(&image, fake_bzimage(&fake_vmlinux(18))).unwrap();
    let tree = root.join("lib/modules/6.1.0-test");
    let module = |rel: &str, entries: &[&str]| write_fake_module(&tree, rel, entries);
    module("kernel/drivers/virtio/virtio.ko", &["depends="]);
    module("kernel/drivers/virtio/virtio_pci.ko", &["depends=virtio"]);
    module("kernel/drivers/block/virtio_blk.ko", &["depends=virtio"]);
    module("kernel/fs/ext4/ext4.ko", &["alias=fs-ext4", "depends=jbd2"]);
    module("kernel/fs/jbd2/jbd2.ko", &["depends="]);
    module("kernel/drivers/block/loop.ko", &["depends="]);
    std::fs::write(tree.join("modules.builtin"), "kernel/net/9p/9pnet_virtio.ko\nkernel/fs/9p/9p.ko\nkernel/fs/overlayfs/overlay.ko\n")
        .unwrap();
    image
}

/// Whether this host has what `prepare` insists on beyond the image.
fn host_ready(test: &str) -> bool {
    let ready = kernel::qemu_version().is_some() && kernel::busybox_is_static();
    if !ready {
        eprintln!("skipped {test}: needs qemu-system-x86_64 and busybox-static");
    }
    ready
}

#[test]
fn what_is_no_kernel_image_is_refused_as_usage_naming_it() {
    let dir = tempdir();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "hello").unwrap();
    let err = GuestKernel::prepare(notes.to_str().unwrap(), None, &dir.path().join("cache"), &[FsType::Ext4]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Usage);
    assert!(err.message.contains(notes.to_str().unwrap()) && err.message.contains("not a kernel image"), "{}", err.message);
    let absent = dir.path().join("vmlinuz-nothing");
    let err = GuestKernel::prepare(absent.to_str().unwrap(), None, &dir.path().join("cache"), &[FsType::Ext4]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Usage);
    assert!(err.message.contains("vmlinuz-nothing"), "{}", err.message);
    // A vmlinux QEMU cannot start.
    let no_pvh = dir.path().join("vmlinux");
    std::fs::write(&no_pvh, fake_vmlinux(5)).unwrap();
    let err = GuestKernel::prepare(no_pvh.to_str().unwrap(), None, &dir.path().join("cache"), &[FsType::Ext4]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Usage);
    assert!(err.message.contains("no PVH entry note"), "{}", err.message);
    assert!(!dir.path().join("cache").exists(), "nothing is cached for a refused image");
}

#[test]
fn missing_or_foreign_modules_are_named_with_what_to_pass() {
    let dir = tempdir();
    let image = package_root(dir.path());
    let cache = dir.path().join("cache");
    let elsewhere = dir.path().join("lib/modules/6.1.0-other");
    let err = GuestKernel::prepare(image.to_str().unwrap(), Some(&elsewhere), &cache, &[FsType::Ext4]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Environment);
    assert!(err.message.contains("--kernel-modules DIR"), "{}", err.message);
    // A tree of another release.
    std::fs::create_dir_all(elsewhere.join("kernel")).unwrap();
    let err = GuestKernel::prepare(image.to_str().unwrap(), Some(&elsewhere), &cache, &[FsType::Ext4]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Usage);
    assert!(err.message.contains("is for 6.1.0-other"), "{}", err.message);
    // What every guest needs, missing.
    std::fs::remove_file(dir.path().join("lib/modules/6.1.0-test/kernel/drivers/block/virtio_blk.ko")).unwrap();
    let err = GuestKernel::prepare(image.to_str().unwrap(), None, &cache, &[FsType::Ext4]).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Environment);
    assert!(err.message.contains("virtio_blk") && err.message.contains("every guest"), "{}", err.message);
}

#[test]
fn a_bzimage_is_unpacked_once_and_its_modules_read_per_file_system() {
    if !host_ready("a_bzimage_is_unpacked_once_and_its_modules_read_per_file_system") {
        return;
    }
    let dir = tempdir();
    let image = package_root(dir.path());
    let cache = dir.path().join("cache");
    let both = [FsType::Ext4, FsType::Btrfs];
    let kernel = GuestKernel::prepare(image.to_str().unwrap(), None, &cache, &both).unwrap();
    assert_eq!(kernel.release, "6.1.0-test");
    assert_eq!(kernel.modules_dir, dir.path().join("lib/modules/6.1.0-test"));
    assert!(kernel.vmlinux.starts_with(&cache) && kernel.vmlinux.extension().unwrap() == "vmlinux", "{:?}", kernel.vmlinux);
    assert_eq!(std::fs::read(&kernel.vmlinux).unwrap(), fake_vmlinux(18));
    let first = std::fs::metadata(&kernel.vmlinux).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let again = GuestKernel::prepare(image.to_str().unwrap(), None, &cache, &both).unwrap();
    assert_eq!(again, kernel);
    let second = std::fs::metadata(&again.vmlinux).unwrap();
    assert_eq!((first.ino(), first.mtime_nsec()), (second.ino(), second.mtime_nsec()), "unpacked again");

    let names = |mods: Vec<Loaded>| mods.into_iter().map(|m| m.name).collect::<Vec<_>>();
    assert_eq!(names(kernel.modules_for(FsType::Ext4).unwrap()), ["virtio", "virtio_pci", "virtio_blk", "loop", "jbd2", "ext4"]);
    let err = kernel.modules_for(FsType::Btrfs).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Environment);
    assert!(err.message.contains("btrfs") && err.message.contains("--kernel-modules DIR"), "{}", err.message);
    let err = kernel.modules_for(FsType::Xfs).unwrap_err();
    assert!(err.message.contains("no modules were read for xfs"), "{}", err.message);
}

#[test]
fn what_boots_is_what_was_read_though_the_files_change_after() {
    if !host_ready("what_boots_is_what_was_read_though_the_files_change_after") {
        return;
    }
    let dir = tempdir();
    let bzimage = package_root(dir.path());
    // A vmlinux given as it is, beside the bzImage.
    let image = bzimage.with_file_name("vmlinux-6.1.0-test");
    std::fs::write(&image, fake_vmlinux(18)).unwrap();
    let tree = dir.path().join("lib/modules/6.1.0-test");
    let ext4 = tree.join("kernel/fs/ext4/ext4.ko");
    let read = std::fs::read(&ext4).unwrap();
    let kernel = GuestKernel::prepare(image.to_str().unwrap(), None, &dir.path().join("cache"), &[FsType::Ext4]).unwrap();
    assert_ne!(kernel.vmlinux, image, "QEMU would open the image given again");
    // Changed after the check: another kernel, and an ext4 that wants more.
    std::fs::write(&image, fake_vmlinux(5)).unwrap();
    std::fs::write(&ext4, fake_module(&["alias=fs-ext4", "depends=jbd2,evil"])).unwrap();
    assert_eq!(std::fs::read(&kernel.vmlinux).unwrap(), fake_vmlinux(18));
    let modules = kernel.modules_for(FsType::Ext4).unwrap();
    let loaded = modules.iter().find(|m| m.name == "ext4").unwrap();
    assert_eq!(&loaded.bytes[..], &read[..]);
}

#[test]
fn an_image_that_cannot_be_unpacked_is_kept_and_booted_as_it_is() {
    let dir = tempdir();
    let image = dir.path().join("vmlinuz");
    let mut bytes = fake_bzimage(&fake_vmlinux(18));
    let at = 5 * 512 + 16; // the payload: no compression fslab knows
    bytes[at..at + 6].copy_from_slice(b"NOTXZ!");
    let located = Located { image: KernelImage::of_bytes(&image, &bytes).unwrap(), bytes, modules_dir: PathBuf::new() };
    let entry = cached(&located, &dir.path().join("cache")).unwrap();
    assert_eq!(entry.extension().unwrap(), "bzimage");
    assert_eq!(std::fs::read(&entry).unwrap(), located.bytes);
    assert_eq!(cached(&located, &dir.path().join("cache")).unwrap(), entry, "kept once");
}

#[test]
fn parallel_unpacks_wait_for_the_cache_lock() {
    let dir = tempdir();
    let image = dir.path().join("vmlinuz");
    let bytes = fake_bzimage(&fake_vmlinux(18));
    let located = Located { image: KernelImage::of_bytes(&image, &bytes).unwrap(), bytes, modules_dir: PathBuf::new() };
    let cache = dir.path().join("cache");
    let dir = OwnedDir::open_or_make(&cache, FolderRole::KernelCache).unwrap();
    let held = FolderLock::take(&dir, ".lock", "the kernel cache's lock").unwrap();
    let waiter = {
        let cache = cache.clone();
        std::thread::spawn(move || cached(&located, &cache))
    };
    std::thread::sleep(Duration::from_millis(500));
    assert!(!waiter.is_finished(), "unpacked while another held the lock");
    let entries = || std::fs::read_dir(&cache).unwrap().filter(|e| e.as_ref().unwrap().file_name() != ".lock").count();
    assert_eq!(entries(), 0);
    drop(held);
    let entry = waiter.join().unwrap().unwrap();
    assert!(entry.starts_with(&cache));
    assert_eq!(entries(), 1, "the entry alone, no temporary left");
}
