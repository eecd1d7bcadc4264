//! A guest booted end to end from the `vm` building blocks: a Debian
//! kernel unpacked with `dpkg -x` (named by `FSLAB_TEST_KERNEL_ROOT`; the
//! test skips without it), its modules resolved from its own tree, the
//! initramfs written into a ledgered guest folder, QEMU under TCG (or
//! KVM), and this build's fslab running replace-files on the guest's
//! `/dev/vda`. Its JSON comes back through the share.
//!
//! `FSLAB_TEST_KERNEL_ROOT=/var/cache/fslab-kernels-dev/6.1.0-56 cargo test --test vm_boot`

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use fslab::target::folder::{FolderRole, OwnedDir};
use fslab::target::guest_files::GuestFiles;
use fslab::target::Ledger;
use fslab::vm::{accel, guest, image, initramfs, modules::ModuleTree, qemu};

/// The `boot/vmlinuz-*` of a `dpkg -x` root.
fn vmlinuz(root: &Path) -> PathBuf {
    std::fs::read_dir(root.join("boot"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("vmlinuz-"))
        .expect("a vmlinuz in boot/")
}

/// The kernel image and module tree below a `dpkg -x` root: a vmlinux
/// beside the vmlinuz if one was unpacked already, else unpacked into
/// `scratch`.
fn kernel(root: &Path, scratch: &Path) -> (PathBuf, ModuleTree) {
    let boot = root.join("boot");
    let vmlinuz = vmlinuz(root);
    let bz = image::KernelImage::inspect(&vmlinuz).unwrap();
    let release = bz.release.clone().expect("the bzImage names its release");
    let beside = boot.join(format!("vmlinux-{release}"));
    let vmlinux = if beside.exists() { beside } else { image::extract_vmlinux(&vmlinuz, &scratch.join("vmlinux")).unwrap().path };
    let tree = ModuleTree::open(&root.join("lib/modules").join(&release)).unwrap();
    (vmlinux, tree)
}

#[test]
fn replace_files_runs_in_a_guest_of_another_kernel_and_its_json_comes_back() {
    if !common::root_or_skip("replace_files_runs_in_a_guest_of_another_kernel_and_its_json_comes_back") {
        return;
    }
    let Some(root) = std::env::var_os("FSLAB_TEST_KERNEL_ROOT").map(PathBuf::from) else {
        eprintln!("skipped: FSLAB_TEST_KERNEL_ROOT names no unpacked kernel package");
        return;
    };
    if !common::have("qemu-system-x86_64") {
        eprintln!("skipped: no qemu-system-x86_64");
        return;
    }
    let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
    let (vmlinux, mut tree) = kernel(&root, dir.path());
    let release = tree.release().to_string();
    let resolved = tree.resolve(&["virtio_pci", "virtio_blk", "9pnet_virtio", "9p", "overlay", "fs-ext4"]).unwrap();
    assert!(resolved.missing.is_empty(), "{:?}", resolved.missing);

    let ledger = Ledger::create(&dir.path().join("state"), "vmboot").unwrap();
    ledger.set_scratch(OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
    let mut files = GuestFiles::make(&ledger, "vmboot", &format!("ext4@{release}"), 1 << 30).unwrap();
    let file = files.initramfs_file().unwrap();
    initramfs::write(file, &files.initramfs, Path::new("/bin/busybox"), tree.dir(), &resolved.order).unwrap();
    let job: Vec<String> = [
        env!("CARGO_BIN_EXE_fslab"),
        "run",
        "replace-files",
        "--fs",
        "ext4",
        "--device",
        "/dev/vda",
        "--destroy-data-on",
        "/dev/vda",
        "--set",
        "strategy=fsync-each",
        "--json",
        "--no-store",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    std::fs::write(files.share.join("job"), initramfs::job_script(&job)).unwrap();
    let spec = qemu::GuestSpec {
        qemu: "qemu-system-x86_64".into(),
        accel: accel::detect(),
        kernel: vmlinux,
        initramfs: files.initramfs.clone(),
        append: Vec::new(),
        memory_bytes: 1 << 30,
        cpus: 2,
        console: files.console.clone(),
        shares: vec![
            qemu::Share { tag: initramfs::ROOT_TAG.into(), path: "/".into(), read_only: true },
            qemu::Share { tag: initramfs::OUT_TAG.into(), path: files.share.clone(), read_only: false },
        ],
        disks: vec![files.disk.clone()],
    };
    let got = guest::run(&ledger, &spec, &files.share, Duration::from_secs(900)).unwrap();
    eprintln!(
        "guest ({}): wall {:.1} s; guest uptime at init {:?}, modules {:?}, mounted {:?}, done {:?}",
        spec.accel.describe(),
        got.wall_s,
        got.mark("init"),
        got.mark("modules"),
        got.mark("mounted"),
        got.mark("done")
    );
    assert_eq!(got.status, 0, "the job failed: {}", got.stderr);
    let json: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(json["run"]["environment"]["kernel"], release.as_str());
    let case = &json["run"]["cases"][0];
    assert_eq!(case["status"], "ok", "{case}");
    let commits = case["figures"]["journal_commits"]["value"].as_f64().unwrap();
    assert!(commits >= 20.0, "fsync-each made {commits} journal commits");
    let folder = files.dir.clone();
    files.release().unwrap();
    assert!(!folder.exists());
}

#[test]
fn kernels_refuses_what_is_no_kernel_image_and_reports_one_that_is() {
    let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
    let not_image = dir.path().join("notes.txt");
    std::fs::write(&not_image, "hello").unwrap();
    let out = common::fslab_expect(&["kernels", not_image.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a kernel image"));
    let Some(root) = std::env::var_os("FSLAB_TEST_KERNEL_ROOT").map(PathBuf::from) else {
        eprintln!("skipped the image: FSLAB_TEST_KERNEL_ROOT names no unpacked kernel package");
        return;
    };
    let vmlinuz = vmlinuz(&root);
    let json = common::fslab_json(&["kernels", "--json", vmlinuz.to_str().unwrap()]);
    let report = &json["kernels"][0];
    assert_eq!(report["image"]["format"], "bzimage");
    for fs in report["file_systems"].as_array().unwrap() {
        assert_eq!(fs["available"], true, "{fs}");
    }
    let ext4 = &report["file_systems"][2]["load"];
    let load: Vec<&str> = ext4.as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let at = |m: &str| load.iter().position(|x| *x == m).unwrap_or_else(|| panic!("{m} not in {load:?}"));
    assert!(at("crc32c_generic") < at("ext4") && at("jbd2") < at("ext4"), "{load:?}");
}
