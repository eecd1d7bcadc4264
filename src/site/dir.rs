//! The directory kind: a new folder inside an existing directory
//! (`--dir PATH`), for measuring without root on whatever file system
//! holds it. Nothing is formatted; its cache is emptied without a remount.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Access, AtFlags, CWD};

use super::TargetOptions;
use super::held::Held;
use super::kind::{Caps, Made, TargetKind};
use crate::ledger::{Ledger, Resource};
use crate::error::{Error, Result};
use crate::record::TargetRecord;

/// A new folder inside an existing directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dir {
    /// The directory the work folder is made in.
    pub path: PathBuf,
}

impl TargetKind for Dir {
    fn label(&self) -> String {
        "dir".to_string()
    }

    fn needs_root(&self) -> bool {
        false
    }

    fn check(&self) -> Result<()> {
        match fs::metadata(&self.path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(Error::usage(format!("--dir {}: not a directory", self.path.display()))),
            Err(e) => return Err(Error::io(&self.path, "--dir", e)),
        }
        if let Some(kind) = rustix::fs::statfs(&self.path).ok().and_then(|s| pseudo_fs(s.f_type)) {
            return Err(Error::environment(format!(
                "--dir {}: a {kind} file system, which holds no files a command could write: give a directory on a disk's file system",
                self.path.display()
            )));
        }
        // Asked of the kernel with this process's effective ids: for root
        // that still fails on a read-only file system or bind mount.
        let access = Access::WRITE_OK | Access::EXEC_OK;
        rustix::fs::accessat(CWD, &self.path, access, AtFlags::EACCESS).map_err(|e| unwritable(&self.path, e.into()))
    }

    fn make<'l>(&self, ledger: &'l Ledger, _options: &TargetOptions, run_id: &str) -> Result<Box<dyn Made + 'l>> {
        let mut held = Held::new(ledger);
        // Resolved once: the ledger names the folder by a path without
        // symlinks, which its release (here or by a later cleanup, from any
        // working directory) refuses to go through.
        let dir = fs::canonicalize(&self.path).map_err(|e| Error::io(&self.path, "--dir", e))?;
        let work = dir.join(format!("fslab-{run_id}"));
        let token = held.record(Resource::WorkDir(work.clone()))?;
        fs::create_dir(&work).map_err(|e| unwritable(&self.path, e))?;
        let meta = fs::symlink_metadata(&work).map_err(|e| Error::io(&work, "stat", e))?;
        // Recorded with its device and inode: a release removes only this.
        held.prove(token, crate::ledger::proof::Proof::File(crate::ledger::folder::FileId { dev: meta.dev(), ino: meta.ino() }))?;
        let (major, minor) = (rustix::fs::major(meta.dev()), rustix::fs::minor(meta.dev()));
        let fs_type = crate::layout::mounts::find_by_device(major, minor)
            .map(|m| m.fs_type)
            .unwrap_or_else(|| "unknown".to_string());
        Ok(Box::new(DirMade { held, work_dir: work, fs_type }))
    }
}

/// The kernel's own file systems, where access(2) lets root write but no
/// folder can be made (statfs magic numbers, `linux/magic.h`).
fn pseudo_fs(magic: i64) -> Option<&'static str> {
    Some(match magic {
        0x9fa0 => "proc",
        0x6265_6572 => "sysfs",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x0027_e0eb => "cgroup",
        0x6367_7270 => "cgroup2",
        0x7363_6673 => "securityfs",
        0xcafe_4a11 => "bpf",
        0x6265_6570 => "configfs",
        0x6165_676c => "pstore",
        0x1cd1 => "devpts",
        0xde5e_81e4 => "efivarfs",
        0x6573_5543 => "fusectl",
        0x1980_0202 => "mqueue",
        0x6e73_6673 => "nsfs",
        _ => return None,
    })
}

/// `--dir` cannot take a new folder: the environment's fault (exit 3).
fn unwritable(dir: &Path, e: std::io::Error) -> Error {
    let why = match e.raw_os_error() {
        Some(libc::EROFS) => "its file system is mounted read-only".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("no permission to make a folder there as uid {}", rustix::process::geteuid().as_raw())
        }
        _ => crate::error::describe_io(&e),
    };
    Error::environment(format!(
        "--dir {}: cannot make the work folder there ({why}): give a directory this user can write in",
        dir.display()
    ))
}

/// A work folder made in `--dir`.
#[derive(Debug)]
struct DirMade<'l> {
    held: Held<'l>,
    work_dir: PathBuf,
    fs_type: String,
}

impl Made for DirMade<'_> {
    fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    fn fs_type(&self) -> &str {
        &self.fs_type
    }

    fn record(&self) -> TargetRecord {
        TargetRecord { fs_type: self.fs_type.clone(), ..TargetRecord::default() }
    }

    fn caps(&self) -> Caps {
        // Whatever device holds the folder is counted and traced; the other
        // users of that file system are counted with it.
        Caps { remount: false, block_stats: true, trace: true }
    }

    fn backing_path(&self) -> Option<&Path> {
        Some(&self.work_dir)
    }

    fn remount(&mut self) -> Result<()> {
        Err(Error::failed("a --dir target cannot be remounted"))
    }

    fn release(mut self: Box<Self>) -> Result<()> {
        self.held.release()
    }
}
