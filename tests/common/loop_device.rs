//! The one loop-device helper of the tests: a sparse image under
//! `/var/tmp/PREFIX-*` (`temp.rs`) attached to a loop device with direct I/O,
//! optionally formatted and mounted, and released by `Drop` so a failing
//! assertion leaves nothing attached.
//!
//! Two crates compile this file: the integration tests as
//! `tests/common/loop_device.rs`, and the library's unit tests through a
//! `#[path]` module in `src/probe/testutil.rs` (a unit test cannot reach an
//! integration-test crate, nor one the other way). So it names the library
//! as `fslab::` (which the library's test build aliases to itself) and
//! takes `run` from the module that includes it.
//!
//! The design decision: the device is released with fslab's own ledger
//! release, which waits until the device is gone. A bare `losetup -d`
//! only marks a device still open somewhere to detach on its last close,
//! and once left one behind.

use std::path::PathBuf;

use super::run;

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
        let dir = super::temp::dir("");
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

    /// Run `mkfs.<fs> <mkfs_args> DEV` and mount it on a folder of the
    /// test, with `-o mount_options` if given; the mount point.
    pub fn format_and_mount(&mut self, fs: &str, mkfs_args: &[&str], mount_options: Option<&str>) -> PathBuf {
        let mut args = mkfs_args.to_vec();
        args.push(&self.device);
        run(&format!("mkfs.{fs}"), &args);
        let mount = self.dir.path().join("mnt");
        std::fs::create_dir(&mount).unwrap();
        let mut margs = vec!["-t", fs];
        if let Some(o) = mount_options {
            margs.extend(["-o", o]);
        }
        margs.extend([self.device.as_str(), mount.to_str().unwrap()]);
        run("mount", &margs);
        self.mount = Some(mount.clone());
        mount
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Some(mount) = self.mount.take() {
            // The library's own unmount: retries while busy (another test's
            // fork holds our descriptors until its exec), does nothing if
            // the test unmounted already.
            if let Err(e) = fslab::ledger::give_back::unmount(&mount) {
                eprintln!("{e}");
            }
        }
        if let Err(e) = fslab::ledger::give_back::detach_loops_over(&self.image) {
            eprintln!("{e}");
        }
    }
}
