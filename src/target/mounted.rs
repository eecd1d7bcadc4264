//! A file system fslab formatted on a block device and mounted in its run
//! folder: what the scratch and device kinds both end in.
//!
//! mkfs runs on the device fslab attached or was given, and every tool gets
//! its arguments as argv, never through a shell.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::held::Held;
use super::kind::{Caps, Made};
use super::ledger::{self, Ledger, Resource};
use super::{FsType, TargetOptions};
use crate::error::{Error, Result};
use crate::record::TargetRecord;

/// A mounted file system fslab made.
#[derive(Debug)]
pub(super) struct MountedFs<'l> {
    held: Held<'l>,
    fs: FsType,
    device: PathBuf,
    image: Option<PathBuf>,
    work_dir: PathBuf,
    mkfs_args: Vec<String>,
    mount_opts: Option<String>,
    mounted: bool,
}

/// Make the run folder `SCRATCH/RUN-LABEL` that holds a target's image and
/// mount point.
pub(super) fn make_folder(held: &mut Held, options: &TargetOptions, run_id: &str, label: &str) -> Result<PathBuf> {
    let scratch = &options.scratch;
    fs::create_dir_all(scratch).map_err(|e| Error::io(scratch, "create the scratch folder", e))?;
    let folder = scratch.join(format!("{run_id}-{label}"));
    held.record(Resource::RunDir(folder.clone()))?;
    fs::create_dir(&folder).map_err(|e| Error::io(&folder, "create the run folder", e))?;
    Ok(folder)
}

/// How to format and mount: the file system, mkfs arguments after fslab's
/// own, and mount options.
pub(super) struct Format<'a> {
    pub fs: FsType,
    pub mkfs_extra: &'a [String],
    pub mount_opts: Option<String>,
}

impl<'l> MountedFs<'l> {
    /// Format `device` and mount it on `folder/mnt`; `held` already holds
    /// what was made before (folder, image, loop device).
    pub(super) fn make(
        mut held: Held<'l>,
        device: &Path,
        image: Option<PathBuf>,
        folder: &Path,
        format: Format,
    ) -> Result<MountedFs<'l>> {
        let fs = format.fs;
        let mut args = fs.base_mkfs_args();
        args.extend(format.mkfs_extra.iter().cloned());
        let mut argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        argv.push(device.into());
        let mkfs = fs.mkfs_path().ok_or_else(|| Error::environment(format!("{} is not installed", fs.mkfs())))?;
        tool(held.ledger, mkfs.as_os_str(), argv)?;

        let mount_point = folder.join("mnt");
        held.record(Resource::MountPoint(mount_point.clone()))?;
        fs::create_dir(&mount_point).map_err(|e| Error::io(&mount_point, "create the mount point", e))?;
        held.record(Resource::Mount(mount_point.clone()))?;
        let mut made = MountedFs {
            held,
            fs,
            device: device.to_path_buf(),
            image,
            work_dir: mount_point,
            mkfs_args: args,
            mount_opts: format.mount_opts,
            mounted: false,
        };
        made.mount()?;
        Ok(made)
    }

    fn mount(&mut self) -> Result<()> {
        let mut argv = vec![os("-t"), os(self.fs.name())];
        if let Some(opts) = &self.mount_opts {
            argv.extend([os("-o"), os(opts)]);
        }
        argv.extend([self.device.clone().into_os_string(), self.work_dir.clone().into_os_string()]);
        tool(self.held.ledger, "mount", argv)?;
        self.mounted = true;
        Ok(())
    }
}

impl Made for MountedFs<'_> {
    fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    fn fs_type(&self) -> &str {
        self.fs.name()
    }

    fn record(&self) -> TargetRecord {
        TargetRecord {
            fs_type: self.fs.name().to_string(),
            device: Some(self.device.display().to_string()),
            mkfs_args: self.mkfs_args.clone(),
            mount_opts: self.mount_opts.clone(),
            cold_method: None,
        }
    }

    fn caps(&self) -> Caps {
        Caps { remount: true, block_stats: true, trace: true }
    }

    fn device(&self) -> Option<&Path> {
        Some(&self.device)
    }

    fn backing_path(&self) -> Option<&Path> {
        self.image.as_deref()
    }

    /// Unmount and mount again: the file system's cached pages and inodes
    /// are gone, and direct I/O on the loop device kept the image out of
    /// the page cache, so the next read goes to the disk (seed 001's way).
    fn remount(&mut self) -> Result<()> {
        if self.mounted {
            ledger::unmount(&self.work_dir)?;
            self.mounted = false;
        }
        self.mount()
    }

    fn release(mut self: Box<Self>) -> Result<()> {
        self.held.release()
    }
}

/// An `OsString` of a `&str`.
pub(super) fn os(s: &str) -> OsString {
    OsString::from(s)
}

/// Run an external tool with argv (no shell); its stderr becomes the
/// error message when it fails.
pub(super) fn tool(
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
