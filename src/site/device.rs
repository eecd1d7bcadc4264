//! The device kind: a fresh file system on a real block device the user
//! gave up by naming it twice (`--device D --destroy-data-on D`).
//!
//! It is checked free — not mounted, no partition of it mounted, not held
//! by anything (an `O_EXCL` open) — when the plan is checked and again
//! right before mkfs, since time passes between the two.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::held::Held;
use super::kind::{Made, TargetKind};
use crate::ledger::Ledger;
use super::mounted::{self, Format, MountedFs};
use super::{FsType, TargetOptions};
use crate::error::{Error, Result};

/// A fresh file system on a device the user gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// The file system to make.
    pub fs: FsType,
    /// The device, named by both `--device` and `--destroy-data-on`.
    pub device: PathBuf,
}

impl TargetKind for Device {
    fn label(&self) -> String {
        self.fs.name().to_string()
    }

    fn needs_root(&self) -> bool {
        true
    }

    fn needs_scratch(&self) -> bool {
        true
    }

    fn check(&self) -> Result<()> {
        self.fs.check_available()?;
        check_device_free(&self.device)
    }

    fn make<'l>(&self, ledger: &'l Ledger, options: &TargetOptions, run_id: &str) -> Result<Box<dyn Made + 'l>> {
        check_device_free(&self.device)?;
        if let Some(log) = &options.host_log {
            return super::hosted::make(ledger, self.fs, &self.device, log, options, run_id);
        }
        Ok(Box::new(make_mounted(ledger, self.fs, &self.device, options, run_id)?))
    }
}

/// A fresh `fs` on `device` (already checked free), made with the run's
/// mkfs and mount options and mounted in a run folder of its own.
pub(super) fn make_mounted<'l>(
    ledger: &'l Ledger,
    fs: FsType,
    device: &Path,
    options: &TargetOptions,
    run_id: &str,
) -> Result<MountedFs<'l>> {
    let mut held = Held::new(ledger);
    let folder = mounted::make_folder(&mut held, run_id, fs.name())?;
    let mkfs_extra = options.mkfs_args.get(&fs).cloned().unwrap_or_default();
    let mount_opts = options.mount_opts.get(&fs).cloned();
    let format = Format { fs, mkfs_extra: &mkfs_extra, mount_opts, image_copy: None, formatted: false };
    // Its canonical name, as mountinfo will show it after the mount.
    let device = fs::canonicalize(device).map_err(|e| Error::io(device, "--device", e))?;
    MountedFs::make(held, &device, None, &folder, format)
}

/// Refuse a device that is not a block device, or is mounted or held:
/// opening it O_EXCL fails while a file system, swap, RAID or mapper holds
/// it, and no mounted partition of it may exist either.
fn check_device_free(device: &Path) -> Result<()> {
    let meta = fs::metadata(device).map_err(|e| Error::io(device, "--device", e))?;
    if !meta.file_type().is_block_device() {
        return Err(Error::usage(format!("--device {}: not a block device", device.display())));
    }
    let (major, minor) = (rustix::fs::major(meta.rdev()), rustix::fs::minor(meta.rdev()));
    if let Some(m) = crate::layout::mounts::find_by_device(major, minor) {
        return Err(Error::usage(format!(
            "--device {}: mounted on {}; fslab never formats a mounted device",
            device.display(),
            m.mount_point.display()
        )));
    }
    let name = fs::canonicalize(device).ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    if let Some(name) = name {
        let partitions = fs::read_dir(Path::new("/sys/class/block").join(&name)).into_iter().flatten().flatten();
        for part in partitions.filter_map(|e| e.file_name().into_string().ok()).filter(|p| p.starts_with(&name)) {
            let Some((major, minor)) = device_number(&part) else { continue };
            if let Some(m) = crate::layout::mounts::find_by_device(major, minor) {
                return Err(Error::usage(format!(
                    "--device {}: its partition {part} is mounted on {}",
                    device.display(),
                    m.mount_point.display()
                )));
            }
        }
    }
    match OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(device) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(Error::usage(format!(
            "--device {}: in use (held by a file system, swap, RAID or device mapper); fslab never formats a device in use",
            device.display()
        ))),
        Err(e) => Err(Error::io(device, "open the device", e)),
    }
}

/// The `major:minor` sysfs gives for block device `name`.
fn device_number(name: &str) -> Option<(u32, u32)> {
    let text = fs::read_to_string(Path::new("/sys/class/block").join(name).join("dev")).ok()?;
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
