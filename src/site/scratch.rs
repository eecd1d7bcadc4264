//! The scratch kind: a fresh file system on a loop device over a sparse
//! image in the scratch folder — fslab's usual target, and the only one it
//! formats without being told a device's name twice.
//!
//! A preset's variant (seed 001's 1 KiB-block ext2) is the same kind under
//! another label, with mkfs arguments and mount options of its own.

use std::fs::File;
use std::path::PathBuf;

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::ledger::folder::{FileId, OwnedDir};
use super::held::Held;
use crate::age_cache::CacheEntry;
use crate::age_cache::image_copy::{self, Copied};
use super::kind::{Made, TargetKind};
use crate::ledger::{Ledger, Resource};
use super::mounted::{self, Format, MountedFs};
use super::pool::Pooled;
use crate::ledger::proof::Proof;
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

    fn needs_scratch(&self) -> bool {
        true
    }

    fn makes_image(&self) -> bool {
        true
    }

    fn check(&self) -> Result<()> {
        self.fs.check_available()
    }

    fn make<'l>(&self, ledger: &'l Ledger, options: &TargetOptions, run_id: &str) -> Result<Box<dyn Made + 'l>> {
        let started = self.start(ledger, options, run_id)?;
        if let Some(record) = &options.record {
            return super::recorded::make(started, self.fs, record, run_id, &self.label());
        }
        let Started { mut held, folder, image, file, id, mkfs_extra, mount_opts, image_copy } = started;
        let (device, open, _) = attach(&mut held, &image, &file, id, true)?;
        held.keep_open(open);
        if let Some(pool) = options.pooled.as_deref().filter(|_| options.base_image.is_some()) {
            // As a loop device over the scratch folder would say.
            crate::sys::loop_dev::set_rotational(&device, pool.rotational())
                .map_err(|e| Error::io(&device, "make the case's loop device as rotational as the scratch folder's", e))?;
        }
        let format = Format { fs: self.fs, mkfs_extra: &mkfs_extra, mount_opts, image_copy, formatted: false };
        Ok(Box::new(MountedFs::make(held, &device, Some((image, id)), &folder, format)?))
    }
}

/// A scratch image made in its run folder (fresh, or a copy of a cache
/// entry), with no device yet, and how it is to be formatted and mounted:
/// what the plain and the recorded scratch kinds both start from.
pub(super) struct Started<'l> {
    pub held: Held<'l>,
    pub folder: OwnedDir,
    pub image: PathBuf,
    pub file: File,
    pub id: FileId,
    pub mkfs_extra: Vec<String>,
    pub mount_opts: Option<String>,
    pub image_copy: Option<String>,
}

impl Scratch {
    /// Make the run folder and the image (a copy of `options`'s cache
    /// entry when it names one), every step in the ledger first.
    fn start<'l>(&self, ledger: &'l Ledger, options: &TargetOptions, run_id: &str) -> Result<Started<'l>> {
        let base = options.base_image.as_deref();
        if let Some(base) = base {
            check_base(base, self.fs)?;
        }
        let mut held = Held::new(ledger);
        let folder = mounted::make_folder(&mut held, run_id, &self.label())?;
        let name = format!("{}.img", self.fs.name());
        let size = base.map_or(options.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES), |b| b.meta.image_bytes);
        let pooled = options.pooled.as_deref().filter(|_| base.is_some());
        let (image, file, id) = match pooled {
            // Named for the run folder, which is the case's alone.
            Some(pool) => make_file(&mut held, pool.dir(), &format!("{}.img", folder_name(&folder)), size, Resource::Image)?,
            None => make_file(&mut held, &folder, &name, size, Resource::Image)?,
        };
        let image_copy = base.map(|base| copy_base(base, pooled, &file, &image)).transpose()?;
        let mut mkfs_extra = options.mkfs_args.get(&self.fs).cloned().unwrap_or_default();
        mkfs_extra.extend(self.mkfs_args.iter().cloned());
        let mut mount_opts = self.mount_opts.clone().or_else(|| options.mount_opts.get(&self.fs).cloned());
        if base.is_some() && self.fs == FsType::Xfs {
            // Every copy of an entry carries its UUID, which xfs refuses
            // to mount twice at once.
            mount_opts = Some(match mount_opts.filter(|o| !o.is_empty()) {
                Some(opts) => format!("{opts},nouuid"),
                None => "nouuid".to_string(),
            });
        }
        Ok(Started { held, folder, image, file, id, mkfs_extra, mount_opts, image_copy })
    }
}

/// Refuse a cache entry made for another file system than `fs` (when its
/// key names one as `fs`).
fn check_base(base: &CacheEntry, fs: FsType) -> Result<()> {
    match base.meta.made_of.get("fs") {
        Some(made) if made != fs.name() => Err(Error::failed(format!(
            "cache entry {} holds a {made} image, not {fs}: a case starts only from an entry of its own file system",
            base.meta.key
        ))),
        _ => Ok(())
    }
}

/// The last component of `folder`'s path (`RUN-LABEL`).
fn folder_name(folder: &OwnedDir) -> String {
    folder.path().file_name().map_or_else(|| "case".to_string(), |n| n.to_string_lossy().into_owned())
}

/// Fill the fresh image open as `file` with the cache entry's content (a
/// reflink where the scratch folder's file system can without changing
/// the loop device's sector size, or of the entry's copy in the run's
/// pool, else a sparse copy), synced so the case's work does not share
/// the disk with its writeback; how, in the record's words.
fn copy_base(base: &CacheEntry, pooled: Option<&Pooled>, file: &File, image: &std::path::Path) -> Result<String> {
    let source = pooled.map_or(base.file(), Pooled::copy);
    let copied = image_copy::copy_image(source, file, true).map_err(|e| {
        Error::io(image, &format!("copy cache entry {} into the image", base.path().display()), e)
    })?;
    file.sync_all().map_err(|e| Error::io(image, "sync the image", e))?;
    // The key's first 12 digits, as tables show it; the case's start
    // record has it whole.
    let key: String = base.meta.key.chars().take(12).collect();
    if base.is_unnamed() {
        return Ok(format!("copy of this run's aged image {key}, not kept in the cache (its name was taken by another file)"));
    }
    Ok(match copied {
        Copied::Reflink if pooled.is_some() => format!("reflink of the run's pooled copy of cache entry {key}"),
        Copied::Reflink => format!("reflink of cache entry {key}"),
        Copied::Sparse { data_bytes } => {
            format!("sparse copy of cache entry {key} ({} MiB of data)", data_bytes.div_ceil(1 << 20))
        }
    })
}

/// Make the sparse file `name` (an image, a log, a mount point) of `size`
/// bytes in `folder`, once: recorded as `resource` first, made unnamed
/// (`O_TMPFILE`), proved by its device and inode, then given its name
/// (`linkat`, which fails if the name exists), so no kill leaves a file
/// the ledger cannot prove. File systems without `O_TMPFILE` get
/// `O_CREAT | O_EXCL | O_NOFOLLOW`. For an image, the same descriptor is
/// what the loop device is attached to.
pub(super) fn make_file(
    held: &mut Held,
    folder: &OwnedDir,
    name: &str,
    size: u64,
    resource: fn(PathBuf) -> Resource,
) -> Result<(PathBuf, File, FileId)> {
    let path = folder.path().join(name);
    let token = held.record(resource(path.clone()))?;
    let fail = |what: &str, e: rustix::io::Errno| Error::io(&path, what, e.into());
    let mode = Mode::from_raw_mode(0o600);
    let unnamed = rustix::fs::openat(folder.fd(), ".", OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, mode);
    let fd = match unnamed {
        Ok(fd) => {
            let id = FileId::of(&fd).map_err(|e| Error::io(&path, "stat the file made", e))?;
            held.prove(token, Proof::File(id))?;
            rustix::fs::linkat(&fd, "", folder.fd(), name, AtFlags::EMPTY_PATH).map_err(|e| fail("name the file made", e))?;
            // Opened again by its name, so the loop device shows it (an
            // unnamed file's descriptor keeps showing `#INODE (deleted)`):
            // the same inode, or nothing.
            let named = rustix::fs::openat(folder.fd(), name, OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC, mode)
                .map_err(|e| fail("open the file made", e))?;
            if FileId::of(&named).ok() != Some(id) {
                return Err(Error::failed(format!("{}: not the file just made", path.display())));
            }
            named
        }
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR | rustix::io::Errno::INVAL) => {
            let flags = OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::RDWR | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(folder.fd(), name, flags, mode).map_err(|e| fail("create the file", e))?;
            let id = FileId::of(&fd).map_err(|e| Error::io(&path, "stat the file made", e))?;
            held.prove(token, Proof::File(id))?;
            fd
        }
        Err(e) => return Err(fail("create the file", e)),
    };
    let file = File::from(fd);
    file.set_len(size).map_err(|e| Error::io(&path, "size the file made", e))?;
    let id = FileId::of(&file).map_err(|e| Error::io(&path, "stat the file made", e))?;
    Ok((path, file, id))
}

/// Attach the image open as `file` to a free loop device (with direct
/// I/O when `direct_io`: its reads and writes reach the disk, not the page
/// cache of the image, so a cold read is cold), recorded with the image's
/// device and inode first: the device's path, its open descriptor, and its
/// ledger entry. It detaches itself on the descriptor's last close, so a
/// killed run leaves it no longer than its mount.
pub(super) fn attach(
    held: &mut Held,
    image: &std::path::Path,
    file: &File,
    id: FileId,
    direct_io: bool,
) -> Result<(PathBuf, File, crate::ledger::Token)> {
    let token = held.record(Resource::Loop(image.to_path_buf()))?;
    held.prove(token, Proof::Backing(id))?;
    let attached =
        crate::sys::loop_dev::attach(file, direct_io).map_err(|e| Error::io(image, "attach a loop device to the image", e))?;
    // Known from now on by its attachment too, which a release can check
    // when the file behind it no longer answers a stat.
    let diskseq = crate::sys::loop_dev::diskseq(&attached.device)
        .map_err(|e| Error::io(image, "read the loop device's disk sequence number", e))?;
    held.prove(token, Proof::Loop { backing: id, diskseq })?;
    Ok((PathBuf::from(format!("/dev/loop{}", attached.number)), attached.device, token))
}
