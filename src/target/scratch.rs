//! The scratch kind: a fresh file system on a loop device over a sparse
//! image in the scratch folder — fslab's usual target, and the only one it
//! formats without being told a device's name twice.
//!
//! A preset's variant (seed 001's 1 KiB-block ext2) is the same kind under
//! another label, with mkfs arguments and mount options of its own.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use super::held::Held;
use super::kind::{Made, TargetKind};
use super::ledger::{Ledger, Resource};
use super::mounted::{self, Format, MountedFs, os, tool};
use super::{DEFAULT_SIZE_BYTES, FsType, TargetOptions};
use crate::error::{Error, Result};

/// A fresh file system on a loop device over a sparse image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scratch {
    /// The file system to make.
    pub fs: FsType,
    /// The row's name when it is not the file system's (`ext2-1k`).
    pub label: Option<String>,
    /// mkfs arguments added after the run's own for `fs`.
    pub mkfs_args: Vec<String>,
    /// Mount options replacing the run's for `fs`, when given.
    pub mount_opts: Option<String>,
}

impl Scratch {
    /// A scratch `fs` made the run's way.
    pub fn new(fs: FsType) -> Scratch {
        Scratch { fs, label: None, mkfs_args: Vec::new(), mount_opts: None }
    }
}

impl TargetKind for Scratch {
    fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.fs.name().to_string())
    }

    fn scratch_fs(&self) -> Option<FsType> {
        // A variant is a preset's own row, not one to add variants to.
        self.label.is_none().then_some(self.fs)
    }

    fn needs_root(&self) -> bool {
        true
    }

    fn check(&self) -> Result<()> {
        self.fs.check_available()
    }

    fn make<'l>(&self, ledger: &'l Ledger, options: &TargetOptions, run_id: &str) -> Result<Box<dyn Made + 'l>> {
        let mut held = Held::new(ledger);
        let folder = mounted::make_folder(&mut held, options, run_id, &self.label())?;
        let image = folder.join(format!("{}.img", self.fs.name()));
        make_image(&mut held, &image, options.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES))?;
        let device = attach(&mut held, &image)?;
        let mut mkfs_extra = options.mkfs_args.get(&self.fs).cloned().unwrap_or_default();
        mkfs_extra.extend(self.mkfs_args.iter().cloned());
        let mount_opts = self.mount_opts.clone().or_else(|| options.mount_opts.get(&self.fs).cloned());
        let format = Format { fs: self.fs, mkfs_extra: &mkfs_extra, mount_opts };
        Ok(Box::new(MountedFs::make(held, &device, Some(image), &folder, format)?))
    }
}

fn make_image(held: &mut Held, image: &Path, size: u64) -> Result<()> {
    held.record(Resource::Image(image.to_path_buf()))?;
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(image)
        .map_err(|e| Error::io(image, "create the image", e))?;
    file.set_len(size).map_err(|e| Error::io(image, "size the image", e))
}

fn attach(held: &mut Held, image: &Path) -> Result<PathBuf> {
    held.record(Resource::Loop(image.to_path_buf()))?;
    // Direct I/O on the loop device: its reads and writes reach the
    // disk, not the page cache of the image, so a cold read is cold.
    let out = tool(held.ledger, "losetup", [os("--find"), os("--show"), os("--direct-io=on"), image.into()])?;
    Ok(PathBuf::from(out.trim_end_matches('\n')))
}
