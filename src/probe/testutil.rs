//! Test helpers for the probes: loop devices and mounts made in a test and
//! released by `Drop`, so a failing assertion leaves nothing attached.
//!
//! Kept apart from `tests/common` (an integration-test crate the unit
//! tests cannot reach); everything lives under `/var/tmp/fslab-test-*`,
//! which the CI script checks is gone afterwards.

use std::path::PathBuf;
use std::process::Command;

/// True when running as root; otherwise prints why `test` is skipped. Under
/// `FSLAB_REQUIRE_ROOT_TESTS` skipping is a failure.
pub fn root_or_skip(test: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    assert!(std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_none(), "{test} needs root");
    eprintln!("skipping {test}: needs root");
    false
}

/// Run `cmd args`, panicking with its stderr when it fails; its stdout.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A sparse image in `/var/tmp` attached to a loop device with direct I/O,
/// optionally formatted and mounted.
pub struct LoopDevice {
    /// `/dev/loopN`.
    pub device: String,
    /// Its device numbers.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// The backing image.
    pub image: PathBuf,
    mount: Option<PathBuf>,
    dir: tempfile::TempDir,
}

impl LoopDevice {
    /// Attach a new sparse image of `size_mib`.
    pub fn new(size_mib: u64) -> LoopDevice {
        Self::attach(size_mib, &[], &[])
    }

    /// As [`new`](Self::new), with an MBR holding one Linux partition of
    /// `part_mib` MiB from 1 MiB on, known to the kernel as `loopNp1`.
    pub fn partitioned(size_mib: u64, part_mib: u32) -> LoopDevice {
        let mut mbr = [0u8; 512];
        let entry = &mut mbr[446..462];
        entry[4] = 0x83; // Linux
        entry[8..12].copy_from_slice(&2048u32.to_le_bytes()); // first sector
        entry[12..16].copy_from_slice(&(part_mib * 2048).to_le_bytes()); // sectors
        mbr[510..].copy_from_slice(&[0x55, 0xaa]);
        let lo = Self::attach(size_mib, &mbr, &["--partscan"]);
        // partx reads the table itself and adds the partition by BLKPG, so
        // this works on kernels built without the msdos parser, like this
        // VM's; on others the kernel has already added it and -u keeps it.
        run("partx", &["-u", &lo.device]);
        lo
    }

    fn attach(size_mib: u64, first_sector: &[u8], losetup_args: &[&str]) -> LoopDevice {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").expect("tempdir");
        let image = dir.path().join("image");
        std::fs::write(&image, first_sector).unwrap();
        std::fs::OpenOptions::new().write(true).open(&image).unwrap().set_len(size_mib << 20).unwrap();
        let mut args = vec!["--find", "--show", "--direct-io=on"];
        args.extend_from_slice(losetup_args);
        args.push(image.to_str().unwrap());
        let device = run("losetup", &args);
        let device = device.trim().to_string();
        // Built before anything else can panic, so Drop detaches it.
        let mut lo = LoopDevice { device, major: 0, minor: 0, image, mount: None, dir };
        let st = rustix::fs::stat(lo.device.as_str()).unwrap();
        (lo.major, lo.minor) = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
        lo
    }

    /// Run `mkfs.<fs> <args> DEV` and mount it on a folder of the test;
    /// the mount point.
    pub fn format_and_mount(&mut self, fs: &str, mkfs_args: &[&str]) -> PathBuf {
        let mut args = mkfs_args.to_vec();
        args.push(&self.device);
        run(&format!("mkfs.{fs}"), &args);
        let mount = self.dir.path().join("mnt");
        std::fs::create_dir(&mount).unwrap();
        run("mount", &["-t", fs, &self.device, mount.to_str().unwrap()]);
        self.mount = Some(mount.clone());
        mount
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Some(mount) = self.mount.take() {
            // The library's own unmount: retries while busy (another test's
            // fork holds our descriptors until its exec), then detaches.
            if let Err(e) = crate::target::ledger::unmount(&mount) {
                eprintln!("{e}");
            }
        }
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}
