//! A guest booted end to end through what the harness calls: Debian's 6.1
//! kernel (`common::kernel::debian_kernel`: fetched once by
//! `scripts/debian-kernel.sh`, or `FSLAB_TEST_KERNEL=IMAGE`) made ready by
//! `GuestKernel::prepare`, then `session::run_job` with this build's fslab
//! (shipped in the guest's share) running replace-files on the guest's
//! `/dev/vda` under TCG (or KVM). Its
//! JSON comes back through the share, and the guest's files are gone
//! afterwards. What boots is what `prepare` read: the image and every
//! module are overwritten with junk between the two, and the guest still
//! boots the kernel and loads the modules that were checked.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use fslab::ledger::folder::{FolderRole, OwnedDir};
use fslab::ledger::Ledger;
use fslab::site::FsType;
use fslab::vm::prepare::{GuestKernel, DEFAULT_KERNEL_CACHE};
use fslab::vm::session::{run_job, Job, VmShape};

/// Every file below `dir` whose name ends in `.ko`.
fn modules_below(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            modules_below(&path, out);
        } else if path.extension().is_some_and(|e| e == "ko") {
            out.push(path);
        }
    }
}

#[test]
fn replace_files_runs_in_a_guest_of_what_was_prepared_though_its_files_were_swapped() {
    if !common::root_or_skip("replace_files_runs_in_a_guest_of_what_was_prepared") {
        return;
    }
    let dir = common::temp::dir("");
    let Some((vmlinuz, tree)) = common::kernel::package_copy(dir.path()) else { return };
    // The package's kernel as a vmlinux beside its bzImage (unpacked by a
    // first prepare), so the guest boots the image file given, not a cache
    // entry made from it.
    let unpacked = GuestKernel::prepare(vmlinuz.to_str().unwrap(), None, Path::new(DEFAULT_KERNEL_CACHE), &[]).unwrap();
    let image = vmlinuz.with_file_name(format!("vmlinux-{}", unpacked.release));
    std::fs::copy(&unpacked.vmlinux, &image).unwrap();
    let kernel = GuestKernel::prepare(image.to_str().unwrap(), None, &dir.path().join("kernel-cache"), &[FsType::Ext4]).unwrap();
    assert_eq!(kernel.modules_dir, tree);
    // Swapped after the check: junk in the image and in every module.
    let mut modules = Vec::new();
    modules_below(&tree, &mut modules);
    assert!(modules.len() > 50, "{} modules", modules.len());
    for path in modules.iter().chain([&image]) {
        std::fs::write(path, b"junk, not what was checked").unwrap();
    }
    let ledger = Ledger::create(&dir.path().join("state"), "vmboot").unwrap();
    let scratch = dir.path().join("scratch");
    ledger.set_scratch(OwnedDir::open_or_make(&scratch, FolderRole::Scratch).unwrap()).unwrap();
    let args: Vec<String> = [
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
    let shape = VmShape { memory_bytes: 1 << 30, cpus: 2, timeout: Duration::from_secs(900), log_cap: None };
    let label = format!("ext4@{}", kernel.release);
    let fslab = std::fs::File::open(env!("CARGO_BIN_EXE_fslab")).unwrap();
    let job = Job { fslab: &fslab, args: &args, env: None };
    let got = run_job(&ledger, "vmboot", &label, &kernel, FsType::Ext4, &shape, 256 << 20, job).unwrap();
    let run = &got.run;
    eprintln!(
        "guest ({}, {}): wall {:.1} s; guest uptime at init {:?}, modules {:?}, mounted {:?}, done {:?}",
        got.accel.describe(),
        got.qemu_version,
        run.wall_s,
        run.mark("init"),
        run.mark("modules"),
        run.mark("mounted"),
        run.mark("done")
    );
    assert!(got.qemu_version.starts_with("QEMU emulator version"), "{}", got.qemu_version);
    assert!(got.console_tail.iter().any(|l| l.starts_with("fslab-guest: done")), "{:?}", got.console_tail);
    assert_eq!(run.status, 0, "the job failed: {}", run.stderr);
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json["run"]["environment"]["kernel"], kernel.release.as_str());
    let case = &json["run"]["cases"][0];
    assert_eq!(case["status"], "ok", "{case}");
    let commits = case["figures"]["journal_commits"]["value"].as_f64().unwrap();
    assert!(commits >= 20.0, "fsync-each made {commits} journal commits");
    // Every file of the guest is released: its run folder is gone.
    let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "left in the scratch folder: {left:?}");
}

#[test]
fn kernels_refuses_what_is_no_kernel_image_and_reports_one_that_is() {
    let dir = common::temp::dir("");
    let not_image = dir.path().join("notes.txt");
    std::fs::write(&not_image, "hello").unwrap();
    let out = common::fslab_expect(&["kernels", not_image.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a kernel image"));
    let Some(vmlinuz) = common::kernel::debian_kernel() else { return };
    let json = common::fslab_json(&["kernels", "--json", vmlinuz.to_str().unwrap()]);
    let report = &json["kernels"][0];
    assert_eq!(report["image"]["format"], "bzimage");
    assert_eq!(report["ready"], true, "{report}");
    for fs in report["file_systems"].as_array().unwrap() {
        assert_eq!(fs["available"], true, "{fs}");
    }
    let ext4 = &report["file_systems"][2]["load"];
    let load: Vec<&str> = ext4.as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let at = |m: &str| load.iter().position(|x| *x == m).unwrap_or_else(|| panic!("{m} not in {load:?}"));
    assert!(at("crc32c_generic") < at("ext4") && at("jbd2") < at("ext4"), "{load:?}");
}
