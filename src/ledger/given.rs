//! Files and folders a user names for fslab to read as root: a guest's
//! kernel image and its module tree (`--kernel`, `--kernel-modules`,
//! `fslab kernels`), which become code running in a guest QEMU starts as
//! root; and a plan file (`run --plan`), which decides what root makes and
//! sets.
//!
//! They are held to the folder rule (`folder.rs`): the path is resolved
//! once, through no symlink but root's or the user's (the invoking user:
//! `SUDO_UID`, else the effective one), every folder on the way root's or
//! the user's and written by no one else unless sticky. What it names must
//! be root's or the user's and writable by no one else, and of the kind
//! asked for; that is checked on the descriptor that is then read, never
//! on the path again, and below a folder everything is reached from its
//! descriptor (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`). A FIFO or device
//! is never opened for reading, and every read has a bound.
//!
//! Exit codes: an owner, a mode or a symlink refused exits 3, as the folder
//! rule's refusals do, with the `chown`/`chmod` that fixes it; a path that
//! names nothing or the wrong kind of file, or a file past its bound,
//! exits 2.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};

use super::walk::{Refusal, Rules, Walked, invoking_user, walk};
use crate::error::{Error, Result};

/// A regular file a user named, open for reading, checked.
#[derive(Debug)]
pub struct GivenFile {
    /// Where it is, as shown in messages.
    pub path: PathBuf,
    /// Where it lies: its canonical path, the symlinks on the way followed.
    pub canonical: PathBuf,
    /// Its size when checked, in bytes.
    pub size: u64,
    file: File,
}

/// A folder a user named, held open, checked.
#[derive(Debug)]
pub struct GivenDir {
    /// Its canonical path.
    pub path: PathBuf,
    fd: OwnedFd,
}

/// What a folder holds that a walk may visit: a folder or a regular file,
/// checked to be root's or the user's and writable by no one else.
/// Symlinks, devices, FIFOs and sockets are passed over, never followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Child {
    /// A folder, by name.
    Dir(String),
    /// A regular file, by name.
    File(String),
}

const PATH: OFlags = OFlags::PATH.union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);
const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_SYMLINKS);

/// Open the regular file at `path` (a `what`: "kernel image") under the
/// rule above.
pub fn open_file(path: &Path, what: &str) -> Result<GivenFile> {
    let (canonical, fd) = resolved(path, what)?;
    checked_file(fd, path.to_path_buf(), canonical, what)
}

/// Open the folder at `path` (a `what`: "module tree") under the rule above.
pub fn open_dir(path: &Path, what: &str) -> Result<GivenDir> {
    let (canonical, fd) = resolved(path, what)?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(path, "stat", e.into()))?;
    expect(&fd, &stat, FileType::Directory, path, what)?;
    checked(&stat, &canonical, what)?;
    let dir = rustix::fs::openat(&fd, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| Error::io(&canonical, "open", e.into()))?;
    same_inode(&stat, &dir, path)?;
    Ok(GivenDir { path: canonical, fd: dir })
}

impl GivenFile {
    /// The file, for reads at offsets (none past [`size`](Self::size)).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Its bytes, at most `max` (a file that has grown past them since it
    /// was checked is refused too, exit 2).
    pub fn read(&self, max: u64) -> Result<Vec<u8>> {
        too_large(self.size, max, &self.path)?;
        let mut bytes = Vec::with_capacity(self.size as usize);
        (&self.file).take(max + 1).read_to_end(&mut bytes).map_err(|e| Error::io(&self.path, "read", e))?;
        too_large(bytes.len() as u64, max, &self.path)?;
        Ok(bytes)
    }
}

impl GivenDir {
    /// The regular file at `relative` below it (no symlink, nothing above
    /// it), checked as a file [`open_file`] opens is; `None` when absent.
    pub fn open_file(&self, relative: &Path, what: &str) -> Result<Option<GivenFile>> {
        let path = self.path.join(relative);
        match rustix::fs::openat2(&self.fd, relative, PATH, Mode::empty(), BENEATH) {
            Ok(fd) => checked_file(fd, path.clone(), path, what).map(Some),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(refused_below(&path, what, e)),
        }
    }

    /// The folder at `relative` below it, checked; `None` when absent.
    pub fn open_dir(&self, relative: &Path, what: &str) -> Result<Option<GivenDir>> {
        let path = self.path.join(relative);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat2(&self.fd, relative, flags, Mode::empty(), BENEATH) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(refused_below(&path, what, e)),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&path, "stat", e.into()))?;
        checked(&stat, &path, what)?;
        Ok(Some(GivenDir { path, fd }))
    }

    /// Its folders and regular files, each checked (an entry another user
    /// owns or may write is refused, exit 3); anything else is left out.
    pub fn children(&self, what: &str) -> Result<Vec<Child>> {
        let io = |e: rustix::io::Errno| Error::io(&self.path, "read the folder", e.into());
        let mut dir = rustix::fs::Dir::read_from(&self.fd).map_err(io)?;
        let mut children = Vec::new();
        while let Some(entry) = dir.read() {
            let name = entry.map_err(io)?.file_name().to_string_lossy().into_owned();
            if name == "." || name == ".." {
                continue;
            }
            let stat = rustix::fs::statat(&self.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(io)?;
            let (kind, child) = match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => ("folder", Child::Dir(name.clone())),
                FileType::RegularFile => ("file", Child::File(name.clone())),
                _ => continue,
            };
            checked(&stat, &self.path.join(&name), &format!("{kind} in the {what}"))?;
            children.push(child);
        }
        Ok(children)
    }
}

/// The regular file `fd` (an `O_PATH` descriptor) holds, checked, then
/// opened for reading: the very inode checked, through `/proc/self/fd`
/// (an `O_PATH` descriptor is not read from). A FIFO or device is refused
/// before anything opens it.
fn checked_file(fd: OwnedFd, path: PathBuf, canonical: PathBuf, what: &str) -> Result<GivenFile> {
    let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&path, "stat", e.into()))?;
    expect(&fd, &stat, FileType::RegularFile, &path, what)?;
    checked(&stat, &path, what)?;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = rustix::fs::open(format!("/proc/self/fd/{}", raw(&fd)), flags, Mode::empty())
        .map_err(|e| Error::io(&path, "open", e.into()))?;
    same_inode(&stat, &file, &path)?;
    Ok(GivenFile { path, canonical, size: stat.st_size as u64, file: File::from(file) })
}

/// `path` walked by the folder rule (strictly: every folder on the way
/// root's or the invoking user's), its refusals said for a `what`.
fn resolved(path: &Path, what: &str) -> Result<(PathBuf, OwnedFd)> {
    let you = invoking_user();
    let rules = Rules { trusted: you, strict: true, create: false };
    match walk(path, rules) {
        Ok(Walked { path, fd, .. }) => Ok((path, fd)),
        Err(e) if e.is_not_found() => Err(Error::usage(format!("{}: no such {what}", path.display()))),
        Err(Refusal::Io(at, e)) => Err(Error::io(&at, what, e)),
        Err(Refusal::OpenParent(folder) | Refusal::LinkBelowOpen(_, folder)) => Err(Error::environment(format!(
            "{what} {}: the folder {} above it belongs to uid {} (mode {:o}): whoever else can write there can \
             put another {what} in its place, which fslab would act on as root; keep it below folders only root or you \
             (uid {you}) can write (a sticky one like /var/tmp is fine)",
            path.display(),
            folder.path.display(),
            folder.uid,
            folder.mode
        ))),
        Err(Refusal::ForeignLink(at, uid)) => Err(Error::environment(format!(
            "{what} {}: reached through {}, a symlink that belongs to uid {uid}, not to root or you (uid {you}); \
             fslab does not follow another user's symlink as root: name the file itself",
            path.display(),
            at.display()
        ))),
    }
}

/// Root's or the user's, and writable by no one else; else exit 3, with
/// the fix.
fn checked(stat: &Stat, path: &Path, what: &str) -> Result<()> {
    let (you, shown) = (invoking_user(), path.display());
    if stat.st_uid != 0 && stat.st_uid != you {
        return Err(Error::environment(format!(
            "the {what} {shown} belongs to uid {}, not to root or you (uid {you}): its owner could change what \
             fslab does as root; `chown {you} {shown}` if it is meant to be yours, or use a copy of your own",
            stat.st_uid
        )));
    }
    if stat.st_mode & 0o022 != 0 {
        return Err(Error::environment(format!(
            "the {what} {shown} is writable by its group or by others (mode {:o}): whoever can write it can \
             change what fslab does as root; `chmod go-w {shown}`",
            stat.st_mode & 0o7777
        )));
    }
    Ok(())
}

/// Refuse (exit 2) what `fd` holds unless it is of `kind`, saying what it is.
fn expect(fd: &OwnedFd, stat: &Stat, kind: FileType, path: &Path, what: &str) -> Result<()> {
    if FileType::from_raw_mode(stat.st_mode) == kind {
        return Ok(());
    }
    let wanted = if kind == FileType::Directory { "a folder" } else { "a regular file" };
    let found = fd
        .try_clone()
        .and_then(|fd| File::from(fd).metadata())
        .map_or("something else", |m| crate::error::file_type_words(&m.file_type()));
    Err(Error::usage(format!("{what} {}: not {wanted} but {found}; name the {what} itself", path.display())))
}

fn too_large(size: u64, max: u64, path: &Path) -> Result<()> {
    if size <= max {
        return Ok(());
    }
    Err(Error::usage(format!(
        "{}: over {}, more than fslab reads of such a file; give a smaller one",
        path.display(),
        crate::units::bytes_short(max)
    )))
}

/// Opening below a held folder failed: a symlink on the way is refused
/// (exit 3), the rest as its errno says.
fn refused_below(path: &Path, what: &str, e: rustix::io::Errno) -> Error {
    match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::XDEV => Error::environment(format!(
            "{}: a symbolic link in the {what}, which fslab does not follow below a folder it checked",
            path.display()
        )),
        e => Error::io(path, "open", e.into()),
    }
}

fn same_inode(checked: &Stat, fd: &OwnedFd, path: &Path) -> Result<()> {
    let now = rustix::fs::fstat(fd).map_err(|e| Error::io(path, "stat", e.into()))?;
    if (now.st_dev, now.st_ino) != (checked.st_dev, checked.st_ino) {
        return Err(Error::failed(format!("{}: changed while fslab opened it; try again", path.display())));
    }
    Ok(())
}

fn raw(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_fd().as_raw_fd()
}
