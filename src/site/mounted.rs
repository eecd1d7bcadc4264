//! A file system fslab formatted on a block device and mounted in its run
//! folder: what the scratch and device kinds both end in.
//!
//! mkfs runs on the device fslab attached or was given, and every tool gets
//! its arguments as argv, never through a shell. The run folder and the
//! mount point are made from the held scratch folder's descriptor, and the
//! mount lands on the mount point's held descriptor (`/proc/self/fd/N`,
//! with `mount --no-canonicalize`, so mount(8) does not resolve it again).

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ledger::folder::{FileId, OwnedDir};
use super::held::Held;
use crate::ledger::kmsg::KernelLog;
use super::kind::{Caps, Made};
use crate::ledger::{Ledger, Resource, Token};
use crate::ledger::proof::{self, Proof};
use super::FsType;
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
    mount_point: OwnedDir,
    mount_proof: Proof,
    mkfs_args: Vec<String>,
    mount_opts: Option<String>,
    image_copy: Option<String>,
    mounted: bool,
}

/// Make the run folder `SCRATCH/RUN-LABEL` that holds a target's image and
/// mount point, in the run's held scratch folder, and hold it.
pub(super) fn make_folder(held: &mut Held, run_id: &str, label: &str) -> Result<OwnedDir> {
    let scratch = held.ledger.scratch()?;
    let name = format!("{run_id}-{label}");
    let path = scratch.path().join(&name);
    let token = held.record(Resource::RunDir(path.clone()))?;
    let folder = scratch.make_child(&name).map_err(|e| Error::io(&path, "create the run folder", e))?;
    held.prove(token, Proof::File(folder.id()))?;
    Ok(folder)
}

/// Mount a tracefs of the run's own in its scratch folder (for a machine
/// with none mounted), left to the ledger's release at the run's end; its
/// path.
pub fn mount_tracefs(ledger: &Ledger, run_id: &str) -> Result<PathBuf> {
    let mut held = Held::new(ledger);
    let scratch = ledger.scratch()?;
    let (path, _, _) = mount_virtual(&mut held, scratch, &format!("{run_id}-tracefs"), ("tracefs", "nodev"), None)?;
    held.hand_over();
    Ok(path)
}

/// Mount a file system with no device (`fs_type` from `source`: tmpfs,
/// tracefs), with `options`, on the new folder `name` in `folder`: the
/// mount point and the mount each in `held` before it is made. Its path,
/// the mount point as made (the folder under the mount), and the tokens of
/// the mount and the mount point.
pub(super) fn mount_virtual(
    held: &mut Held,
    folder: &OwnedDir,
    name: &str,
    (fs_type, source): (&str, &str),
    options: Option<&str>,
) -> Result<(PathBuf, OwnedDir, [Token; 2])> {
    let path = folder.path().join(name);
    let point_token = held.record(Resource::MountPoint(path.clone()))?;
    let point = folder.make_child(name).map_err(|e| Error::io(&path, &format!("create the {fs_type} mount point"), e))?;
    held.prove(point_token, Proof::File(point.id()))?;
    let token = held.record(Resource::Mount(path.clone()))?;
    held.prove(token, Proof::Mount { source: source.into(), fs_type: fs_type.into(), backing: None, diskseq: None })?;
    let mut argv = vec![os("--no-canonicalize"), os("-t"), os(fs_type)];
    if let Some(options) = options {
        argv.extend([os("-o"), os(options)]);
    }
    argv.extend([os(source), on_fd(&point)]);
    run_tool(mount_command(held.ledger, &point), "mount", argv)?;
    Ok((path, point, [token, point_token]))
}

/// `mount` whose child inherits `dir`'s descriptor, to be named as
/// [`on_fd`].
pub(super) fn mount_command(ledger: &Ledger, dir: &OwnedDir) -> Command {
    let mut command = ledger.tool_command("mount");
    crate::sys::process::inherit_fd(&mut command, dir.fd().as_raw_fd());
    command
}

/// `/proc/self/fd/N` of `dir`, which the mount's child inherited.
pub(super) fn on_fd(dir: &OwnedDir) -> OsString {
    OsString::from(format!("/proc/self/fd/{}", dir.fd().as_raw_fd()))
}

/// How to format and mount: the file system, mkfs arguments after fslab's
/// own, and mount options. An image started as a copy of a cache entry
/// (`image_copy` says how, for the record) is not formatted: its mkfs
/// arguments are the ones the entry was made with (they are part of its
/// key), recorded as such.
pub(super) struct Format<'a> {
    pub fs: FsType,
    pub mkfs_extra: &'a [String],
    pub mount_opts: Option<String>,
    pub image_copy: Option<String>,
    /// mkfs already ran over the image, on another device (a recorded
    /// target formats through a plain loop device first).
    pub formatted: bool,
}

impl<'l> MountedFs<'l> {
    /// Format `device` and mount it on `folder/mnt`; `held` already holds
    /// what was made before (folder, image, loop device), and `backing` is
    /// the image behind a loop device.
    pub(super) fn make(
        mut held: Held<'l>,
        device: &Path,
        image: Option<(PathBuf, FileId)>,
        folder: &OwnedDir,
        format: Format,
    ) -> Result<MountedFs<'l>> {
        let fs = format.fs;
        let args = mkfs_args(fs, format.mkfs_extra);
        if format.image_copy.is_none() && !format.formatted {
            mkfs(held.ledger, fs, &args, device)?;
        }

        let work_dir = folder.path().join("mnt");
        let token = held.record(Resource::MountPoint(work_dir.clone()))?;
        let mount_point = folder.make_child("mnt").map_err(|e| Error::io(&work_dir, "create the mount point", e))?;
        held.prove(token, Proof::File(mount_point.id()))?;
        // A loop device fslab attached is known again by its attachment,
        // even if the file behind it stops answering (a dead FUSE export).
        let diskseq = match image {
            Some(_) => Some(
                std::fs::File::open(device)
                    .and_then(crate::sys::loop_dev::diskseq)
                    .map_err(|e| Error::io(device, "read the loop device's disk sequence number", e))?,
            ),
            None => None,
        };
        let mount_proof = Proof::Mount {
            source: device.to_string_lossy().into_owned(),
            fs_type: fs.name().to_string(),
            backing: image.as_ref().map(|(_, id)| *id),
            diskseq,
        };
        let token = held.record(Resource::Mount(work_dir.clone()))?;
        held.prove(token, mount_proof.clone())?;
        let mut made = MountedFs {
            held,
            fs,
            device: device.to_path_buf(),
            image: image.map(|(path, _)| path),
            work_dir,
            mount_point,
            mount_proof,
            mkfs_args: args,
            mount_opts: format.mount_opts,
            image_copy: format.image_copy,
            mounted: false,
        };
        made.mount()?;
        Ok(made)
    }

    /// What the target holds, for a kind built on this one to release
    /// out of turn or keep.
    pub(super) fn held(&mut self) -> &mut Held<'l> {
        &mut self.held
    }

    fn mount(&mut self) -> Result<()> {
        let mut argv = vec![os("--no-canonicalize"), os("-t"), os(self.fs.name())];
        if let Some(opts) = &self.mount_opts {
            argv.extend([os("-o"), os(opts)]);
        }
        argv.extend([self.device.clone().into_os_string(), on_fd(&self.mount_point)]);
        // Some options pass the parser and are refused only when the
        // superblock is read (ext2's `data=journal`): the kernel says why
        // in its log, and the options given are what to change.
        let mut kernel_log = self.mount_opts.as_ref().and_then(|_| KernelLog::from_now());
        run_tool(mount_command(self.held.ledger, &self.mount_point), "mount", argv).map_err(|e| {
            let Some(opts) = &self.mount_opts else { return e };
            let reason = kernel_log.as_mut().and_then(|log| super::options::lines_about(log, self.fs, opts));
            let Some(reason) = reason else { return e };
            Error::usage(format!(
                "mount -o {opts} on a fresh {}: the kernel refuses it: {reason} (change --mount-opt {}=...)",
                self.fs, self.fs
            ))
        })?;
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
            memory_cgroup: None,
            image_copy: self.image_copy.clone(),
            disk: None,
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
        self.unmount()?;
        self.mount()
    }

    /// Unmount through the proof of the mount made; the loop device stays
    /// attached until the release.
    fn unmount(&mut self) -> Result<bool> {
        if self.mounted {
            let scratch = self.held.ledger.scratch()?;
            proof::refused_is_error(proof::unmount(Some(scratch), &self.work_dir, Some(&self.mount_proof)))?;
            self.mounted = false;
        }
        Ok(true)
    }

    /// Unmount (which settles delayed allocation and inode inactivation
    /// onto the loop device, and through it into the image), then open the
    /// image read-only from the held scratch folder, never through a
    /// symlink, and insist it is the image made.
    fn export_image(&mut self) -> Result<Option<std::fs::File>> {
        let (Some(image), Proof::Mount { backing: Some(id), .. }) = (self.image.clone(), &self.mount_proof) else {
            return Ok(None);
        };
        let id = *id;
        self.unmount()?;
        let scratch = self.held.ledger.scratch()?;
        let relative = scratch
            .relative(&image)
            .ok_or_else(|| Error::failed(format!("{}: not in the scratch folder", image.display())))?;
        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
        let resolve = rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS;
        let fd = rustix::fs::openat2(scratch.fd(), &relative, flags, rustix::fs::Mode::empty(), resolve)
            .map_err(|e| Error::io(&image, "open the image to export it", e.into()))?;
        if FileId::of(&fd).ok() != Some(id) {
            return Err(Error::failed(format!("{}: not the image made (device/inode differ)", image.display())));
        }
        Ok(Some(std::fs::File::from(fd)))
    }

    fn release(mut self: Box<Self>) -> Result<()> {
        self.held.release()
    }
}

/// fslab's mkfs arguments for `fs`, then `extra` (the run's and the
/// target's own).
pub(super) fn mkfs_args(fs: FsType, extra: &[String]) -> Vec<String> {
    let mut args = fs.base_mkfs_args();
    args.extend(extra.iter().cloned());
    args
}

/// Make `fs` on `device` with `args` ([`mkfs_args`]).
pub(super) fn mkfs(ledger: &Ledger, fs: FsType, args: &[String], device: &Path) -> Result<()> {
    let mkfs = fs.mkfs_path().ok_or_else(|| Error::environment(format!("{} is not installed", fs.mkfs())))?;
    let mut argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    argv.push(device.into());
    tool(ledger, mkfs.as_os_str(), argv).map(drop)
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
    run_tool(ledger.tool_command(program.as_ref()), program, args)
}

/// Run `command` (made by [`Ledger::tool_command`]) with argv; as [`tool`].
pub(super) fn run_tool(
    mut command: Command,
    program: impl AsRef<std::ffi::OsStr>,
    args: impl IntoIterator<Item = OsString>,
) -> Result<String> {
    let program = program.as_ref();
    let args: Vec<OsString> = args.into_iter().collect();
    let out = command
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

/// The methods of [`Made`](super::kind::Made) a target made around a
/// [`MountedFs`] in its field `fs` answers as the mount does: its work
/// folder, file system, record, device and backing file.
macro_rules! forward_to_fs {
    () => {
        fn work_dir(&self) -> &std::path::Path {
            self.fs.work_dir()
        }

        fn fs_type(&self) -> &str {
            self.fs.fs_type()
        }

        fn record(&self) -> crate::record::TargetRecord {
            self.fs.record()
        }

        fn device(&self) -> Option<&std::path::Path> {
            self.fs.device()
        }

        fn backing_path(&self) -> Option<&std::path::Path> {
            self.fs.backing_path()
        }
    };
}
pub(super) use forward_to_fs;
