//! What `--kernel` and `fslab kernels` read as root: a kernel image and its
//! module tree must be regular files and folders of root's or the invoking
//! user's, in folders no one else can write, reached through no other
//! user's symlink; anything else is refused before anything is made, and
//! nothing is read without a bound (`/dev/zero`, a FIFO). Each command runs
//! the real binary under a 1 GiB address-space limit and a 30 s deadline,
//! so a read without end fails the test instead of the machine.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{Lab, LoopDevice, root_or_skip};

const NOBODY: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
}

/// The lab's fslab under `prlimit --as=1G`, with `args`.
fn limited(lab: &Lab, args: &[&str]) -> Command {
    let fslab = lab.command();
    let mut c = Command::new("prlimit");
    c.arg("--as=1073741824").arg(fslab.get_program()).args(args);
    for (key, value) in fslab.get_envs() {
        if let Some(value) = value {
            c.env(key, value);
        }
    }
    c
}

/// Run `c` within 30 s and insist on exit `code` and every word of
/// `says` in its stderr.
fn refused(mut c: Command, code: i32, says: &[&str], context: &str) {
    let (status, stderr) = common::finish(&mut c);
    assert_eq!(status, Some(code), "{context}: {stderr}");
    for word in says {
        assert!(stderr.contains(word), "{context}: {word:?} not in {stderr}");
    }
}

/// `fslab kernels ARGS` and `fslab run --kernel IMAGE ARGS`, both refused
/// with `code` saying `says`; the run makes no kernel cache and nothing in
/// the scratch folder.
fn both_refuse(lab: &Lab, image: &Path, extra: &[&str], code: i32, says: &[&str], context: &str) {
    let image = image.to_str().unwrap();
    let mut args = vec!["kernels", image];
    args.extend_from_slice(extra);
    refused(limited(lab, &args), code, says, &format!("kernels: {context}"));
    let cache = lab.dir.path().join("kernel-cache");
    let scratch = lab.scratch();
    let mut args = vec!["run", "replace-files", "--no-store", "--fs", "ext4", "--kernel", image];
    args.extend_from_slice(&["--kernel-cache", cache.to_str().unwrap(), "--scratch", scratch.to_str().unwrap()]);
    args.extend_from_slice(extra);
    refused(limited(lab, &args), code, says, &format!("run --kernel: {context}"));
    assert!(!cache.exists(), "{context}: the kernel cache was made");
    assert_eq!(common::names(&scratch), Vec::<String>::new(), "{context}: made in the scratch folder");
}

#[test]
fn what_is_no_regular_file_is_refused_as_a_kernel_without_reading_it() {
    if !root_or_skip("what_is_no_regular_file_is_refused_as_a_kernel") {
        return;
    }
    let lab = Lab::new();
    let fifo = lab.dir.path().join("fifo");
    common::run("mkfifo", &[fifo.to_str().unwrap()]);
    let folder = lab.dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let device = LoopDevice::new(16);
    for (image, what) in [
        (Path::new("/dev/zero"), "/dev/zero"),
        (fifo.as_path(), "a FIFO"),
        (folder.as_path(), "a folder"),
        (Path::new(&device.device), "a block device"),
    ] {
        both_refuse(&lab, image, &[], 2, &["not a regular file"], what);
    }
    // A regular file past the cap is refused before it is read.
    let huge = lab.dir.path().join("vmlinux-huge");
    std::fs::File::create(&huge).unwrap().set_len((512 << 20) + 1).unwrap();
    both_refuse(&lab, &huge, &[], 2, &["512 MiB"], "an image over the cap");
}

#[test]
fn another_users_kernel_image_or_module_tree_is_refused_before_anything_is_made() {
    if !root_or_skip("another_users_kernel_image_or_module_tree_is_refused") {
        return;
    }
    let lab = Lab::new();
    let Some((image, tree)) = common::kernel::package_copy(lab.dir.path()) else { return };
    let boot = image.parent().unwrap().to_path_buf();
    // As it comes (root's, 0644 in 0755 folders below the sticky /var/tmp).
    refused(limited(&lab, &["kernels", image.to_str().unwrap()]), 0, &[], "the copy as it is");

    chown(&image, NOBODY);
    both_refuse(&lab, &image, &[], 3, &["belongs to uid 65534", "chown"], "an image nobody owns");
    // Unless nobody is the user who ran sudo.
    let mut c = limited(&lab, &["kernels", image.to_str().unwrap()]);
    c.env("SUDO_UID", NOBODY.to_string());
    refused(c, 0, &[], "the invoking user's image");
    chown(&image, 0);

    chmod(&image, 0o666);
    both_refuse(&lab, &image, &[], 3, &["writable by its group or by others", "chmod go-w"], "an image others may write");
    chmod(&image, 0o644);

    chown(&boot, NOBODY);
    both_refuse(&lab, &image, &[], 3, &["uid 65534", "boot"], "a folder above the image nobody owns");
    chown(&boot, 0);
    chmod(&boot, 0o777);
    both_refuse(&lab, &image, &[], 3, &["boot", "777"], "a folder above the image others may write");
    chmod(&boot, 0o755);

    let link = lab.dir.path().join("their-vmlinuz");
    std::os::unix::fs::symlink(&image, &link).unwrap();
    chown(&link, NOBODY);
    both_refuse(&lab, &link, &[], 3, &["symlink", "uid 65534"], "nobody's symlink to the image");

    // The module tree: a module, a folder in it, the tree named.
    let ext4 = tree.join("kernel/fs/ext4/ext4.ko");
    chown(&ext4, NOBODY);
    both_refuse(&lab, &image, &[], 3, &["ext4.ko", "uid 65534"], "a module nobody owns");
    chown(&ext4, 0);
    let fs = tree.join("kernel/fs");
    chmod(&fs, 0o777);
    both_refuse(&lab, &image, &[], 3, &["kernel/fs", "chmod go-w"], "a folder of the tree others may write");
    chmod(&fs, 0o755);
    chown(&tree, NOBODY);
    let named = ["--kernel-modules", tree.to_str().unwrap()];
    both_refuse(&lab, &image, &named, 3, &["uid 65534"], "--kernel-modules nobody owns");
    chown(&tree, 0);

    refused(limited(&lab, &["kernels", image.to_str().unwrap()]), 0, &[], "the copy put back");
}
