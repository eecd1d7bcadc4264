//! Making and releasing one target: image, loop device, mkfs, mount — or a
//! device given up by name, or a folder inside `--dir`.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::ledger::{self, Ledger, Resource, Token};
use super::{FsType, TargetOptions, TargetSpec, DEFAULT_SIZE_BYTES};
use crate::error::{Error, Result};
use crate::probe::blockstat::BlockDevice;

/// A made target, ready for work in [`work_dir`](Self::work_dir).
#[derive(Debug)]
pub struct Target<'l> {
    ledger: &'l Ledger,
    tokens: Vec<Token>,
    /// The row label: fs name, or `dir`.
    pub label: String,
    /// The file-system type the work lands on (for `--dir`, whatever holds
    /// it, from mountinfo).
    pub fs_type: String,
    /// Where the work runs: the mount point, or the folder made in `--dir`.
    pub work_dir: PathBuf,
    /// The block device under the file system (`/dev/loop3`), when fslab
    /// made or was given it.
    pub device: Option<PathBuf>,
    /// The image file behind a loop device.
    pub image: Option<PathBuf>,
    /// mkfs arguments used (fslab's and the user's), for the record.
    pub mkfs_args: Vec<String>,
    /// Mount options used, for the record.
    pub mount_opts: Option<String>,
    mounted: bool,
}

impl<'l> Target<'l> {
    /// Make the target `spec` for run `run_id`, recording every step in
    /// `ledger` first.
    pub fn make(ledger: &'l Ledger, spec: &TargetSpec, options: &TargetOptions, run_id: &str) -> Result<Self> {
        let mut target = Target {
            ledger,
            tokens: Vec::new(),
            label: spec.label(),
            fs_type: String::new(),
            work_dir: PathBuf::new(),
            device: None,
            image: None,
            mkfs_args: Vec::new(),
            mount_opts: None,
            mounted: false,
        };
        match spec {
            TargetSpec::Dir(dir) => target.make_dir(dir, run_id)?,
            TargetSpec::Scratch(fs) => target.make_scratch(*fs, options, run_id)?,
            TargetSpec::Variant { fs, mkfs_args, mount_opts, .. } => {
                let mut options = options.clone();
                options.mkfs_args.entry(*fs).or_default().extend(mkfs_args.iter().cloned());
                if let Some(opts) = mount_opts {
                    options.mount_opts.insert(*fs, opts.clone());
                }
                target.make_scratch(*fs, &options, run_id)?;
            }
            TargetSpec::Device { fs, device } => {
                // Checked again right before formatting: time has passed
                // since `check`.
                check_device_free(device)?;
                let folder = target.make_folder(options, run_id)?;
                target.device = Some(device.clone());
                target.format_and_mount(*fs, device, &folder, options)?;
            }
        }
        Ok(target)
    }

    fn record(&mut self, resource: Resource) -> Result<()> {
        let token = self.ledger.record(resource)?;
        self.tokens.push(token);
        Ok(())
    }

    /// A sparse image, a loop device over it, mkfs and mount.
    fn make_scratch(&mut self, fs: FsType, options: &TargetOptions, run_id: &str) -> Result<()> {
        let folder = self.make_folder(options, run_id)?;
        let image = folder.join(format!("{}.img", fs.name()));
        self.make_image(&image, options.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES))?;
        let device = self.attach(&image)?;
        self.format_and_mount(fs, &device, &folder, options)
    }

    fn make_folder(&mut self, options: &TargetOptions, run_id: &str) -> Result<PathBuf> {
        let scratch = &options.scratch;
        fs::create_dir_all(scratch).map_err(|e| Error::io(scratch, "create the scratch folder", e))?;
        let folder = scratch.join(format!("{run_id}-{}", self.label));
        self.record(Resource::RunDir(folder.clone()))?;
        fs::create_dir(&folder).map_err(|e| Error::io(&folder, "create the run folder", e))?;
        Ok(folder)
    }

    fn make_dir(&mut self, dir: &Path, run_id: &str) -> Result<()> {
        let work = dir.join(format!("fslab-{run_id}"));
        self.record(Resource::WorkDir(work.clone()))?;
        fs::create_dir(&work).map_err(|e| Error::io(&work, "create a work folder in --dir", e))?;
        let meta = fs::metadata(&work).map_err(|e| Error::io(&work, "stat", e))?;
        let (major, minor) = (rustix::fs::major(meta.dev()), rustix::fs::minor(meta.dev()));
        self.fs_type = crate::layout::mounts::find_by_device(major, minor)
            .map(|m| m.fs_type)
            .unwrap_or_else(|| "unknown".to_string());
        self.work_dir = work;
        Ok(())
    }

    fn make_image(&mut self, image: &Path, size: u64) -> Result<()> {
        self.record(Resource::Image(image.to_path_buf()))?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(image)
            .map_err(|e| Error::io(image, "create the image", e))?;
        file.set_len(size).map_err(|e| Error::io(image, "size the image", e))?;
        self.image = Some(image.to_path_buf());
        Ok(())
    }

    fn attach(&mut self, image: &Path) -> Result<PathBuf> {
        self.record(Resource::Loop(image.to_path_buf()))?;
        // Direct I/O on the loop device: its reads and writes reach the
        // disk, not the page cache of the image, so a cold read is cold.
        let out = tool(self.ledger, "losetup", [os("--find"), os("--show"), os("--direct-io=on"), image.into()])?;
        let device = PathBuf::from(out.trim_end_matches('\n'));
        self.device = Some(device.clone());
        Ok(device)
    }

    fn format_and_mount(&mut self, fs: FsType, device: &Path, folder: &Path, options: &TargetOptions) -> Result<()> {
        let mut args = fs.base_mkfs_args();
        args.extend(options.mkfs_args.get(&fs).cloned().unwrap_or_default());
        let mut argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        argv.push(device.into());
        let mkfs = fs.mkfs_path().ok_or_else(|| Error::environment(format!("{} is not installed", fs.mkfs())))?;
        tool(self.ledger, mkfs.as_os_str(), argv)?;
        self.mkfs_args = args;
        self.fs_type = fs.name().to_string();

        let mount_point = folder.join("mnt");
        self.record(Resource::MountPoint(mount_point.clone()))?;
        fs::create_dir(&mount_point).map_err(|e| Error::io(&mount_point, "create the mount point", e))?;
        self.mount_opts = options.mount_opts.get(&fs).cloned();
        self.work_dir = mount_point;
        self.record(Resource::Mount(self.work_dir.clone()))?;
        self.mount()
    }

    fn mount(&mut self) -> Result<()> {
        let device = self.device.clone().expect("a mounted target has a device");
        let mut argv = vec![os("-t"), os(&self.fs_type)];
        if let Some(opts) = &self.mount_opts {
            argv.extend([os("-o"), os(opts)]);
        }
        argv.extend([device.into_os_string(), self.work_dir.clone().into_os_string()]);
        tool(self.ledger, "mount", argv)?;
        self.mounted = true;
        Ok(())
    }

    /// Whether [`remount`](Self::remount) can empty this target's cache.
    pub fn can_remount(&self) -> bool {
        self.device.is_some()
    }

    /// Unmount and mount again: the file system's cached pages and inodes
    /// are gone, and direct I/O on the loop device kept the image out of
    /// the page cache, so the next read goes to the disk (seed 001's way).
    pub fn remount(&mut self) -> Result<()> {
        if self.mounted {
            ledger::unmount(&self.work_dir)?;
            self.mounted = false;
        }
        self.mount()
    }

    /// Release everything this target made, newest first.
    pub fn release(mut self) -> Result<()> {
        self.release_tokens()
    }

    fn release_tokens(&mut self) -> Result<()> {
        while let Some(token) = self.tokens.last().copied() {
            self.ledger.release(token)?;
            self.tokens.pop();
        }
        Ok(())
    }
}

impl Drop for Target<'_> {
    fn drop(&mut self) {
        // An error path: give back what this target holds now rather than at
        // the end of the run. What fails stays in the ledger for later.
        let _ = self.release_tokens();
    }
}

fn os(s: &str) -> OsString {
    OsString::from(s)
}

/// Run an external tool with argv (no shell); its stderr becomes the
/// error message when it fails.
fn tool(
    ledger: &Ledger,
    program: impl AsRef<std::ffi::OsStr>,
    args: impl IntoIterator<Item = OsString>,
) -> Result<String> {
    let program = program.as_ref();
    let args: Vec<OsString> = args.into_iter().collect();
    let out = ledger
        .tool_command(program)
        .args(&args)
        .output()
        .map_err(|e| Error::io(Path::new(program), "run", e))?;
    if !out.status.success() {
        let shown: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        return Err(Error::failed(format!(
            "{} {} failed: {}",
            program.to_string_lossy(),
            shown.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Refuse a device that is not a block device, or is mounted or held:
/// opening it O_EXCL fails while a file system, swap, RAID or mapper holds
/// it, and no mounted partition of it may exist either.
pub(super) fn check_device_free(device: &Path) -> Result<()> {
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
            let Ok(dev) = BlockDevice::from_name(&part) else { continue };
            if let Some(m) = crate::layout::mounts::find_by_device(dev.major, dev.minor) {
                return Err(Error::usage(format!(
                    "--device {}: its partition {part} is mounted on {}",
                    device.display(),
                    m.mount_point.display()
                )));
            }
        }
    }
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(device) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(Error::usage(format!(
            "--device {}: in use (held by a file system, swap, RAID or device mapper); fslab never formats a device in use",
            device.display()
        ))),
        Err(e) => Err(Error::io(device, "open the device", e)),
    }
}
