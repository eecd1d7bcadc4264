//! Folders fslab makes and deletes in as root — the scratch and state
//! folders, the caches, a store's folder — held open by descriptor, and
//! checked to be ours alone.
//!
//! The design decision: a folder anyone else may write is a folder where
//! anyone else may swap a path for a symlink between fslab's checks and its
//! use, and make root format or delete what the symlink names. So such
//! folders must belong to the effective user and be writable by nobody else
//! (refused otherwise, before anything is made), each is resolved once to
//! its canonical path and opened without following another user's symlink
//! (each component opened `O_NOFOLLOW` from the one before: `walk.rs`), and
//! every path below it is reached from that descriptor (`openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), never by a path resolved
//! again.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use serde::{Deserialize, Serialize};

use super::walk::{OpenFolder, Refusal, Rules, Walked, walk};
use crate::error::{Error, Result};

/// A file's identity: device and inode number, as `stat` gives them.
/// Recorded when fslab makes a file or folder, and required to match
/// before it deletes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl FileId {
    /// The identity of the file open as `fd`.
    pub fn of(fd: impl AsFd) -> io::Result<FileId> {
        let stat = rustix::fs::fstat(fd)?;
        Ok(FileId { dev: stat.st_dev, ino: stat.st_ino })
    }
}

/// Which of fslab's own folders, for the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderRole {
    /// `--scratch`: images and mount points.
    Scratch,
    /// The state folder (`FSLAB_STATE_DIR`): ledgers and locks.
    State,
    /// `--age-cache`: the aged images cases start from.
    Cache,
    /// `--kernel-cache` (`/var/cache/fslab/kernels`): the vmlinux
    /// unpacked from each bzImage guests boot.
    KernelCache,
    /// A store's folder: the default's (`/var/lib/fslab`, or the user's
    /// XDG data folder) and any SQLite `--store`'s.
    Store,
}

impl FolderRole {
    fn name(self) -> &'static str {
        match self {
            FolderRole::Scratch => "scratch folder",
            FolderRole::State => "state folder",
            FolderRole::Cache => "age cache folder",
            FolderRole::KernelCache => "kernel cache folder",
            FolderRole::Store => "store folder",
        }
    }

    /// What fslab does in the folder, and what another writer could make
    /// of it: why it must be the user's alone.
    fn stakes(self) -> (&'static str, &'static str) {
        match self {
            FolderRole::Store => ("writes your runs into it", "swap the store for one of their own"),
            _ => ("makes, formats and deletes in it", "swap what fslab formats or deletes"),
        }
    }

    fn other(self) -> &'static str {
        match self {
            FolderRole::Scratch => "pick another with --scratch DIR",
            FolderRole::State => "pick another with FSLAB_STATE_DIR=DIR",
            FolderRole::Cache => "pick another with --age-cache DIR",
            FolderRole::KernelCache => "pick another with --kernel-cache DIR",
            FolderRole::Store => "keep runs elsewhere with --store PATH or FSLAB_STORE=PATH",
        }
    }
}

/// A folder held open, with its canonical path and identity.
#[derive(Debug)]
pub struct OwnedDir {
    path: PathBuf,
    fd: OwnedFd,
    id: FileId,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

impl OwnedDir {
    /// Open fslab's `role` folder at `path`, making it (mode 0700, and any
    /// missing parents) when absent; refuse one that is not ours alone.
    pub fn open_or_make(path: &Path, role: FolderRole) -> Result<OwnedDir> {
        Self::open_checked(path, role, true)
    }

    /// Open fslab's existing `role` folder (for cleanup); `None` when there
    /// is none. One that is not ours alone is refused.
    pub fn open_existing(path: &Path, role: FolderRole) -> Result<Option<OwnedDir>> {
        match Self::open_checked(path, role, false) {
            Err(e) if e.message.contains(NOT_FOUND) => Ok(None),
            other => other.map(Some),
        }
    }

    /// Walk `path` once, component by component, to its canonical form and
    /// a descriptor ([`walk`], strictly: every folder on the way root's or
    /// ours and written by no one else), then check what was opened.
    fn open_checked(path: &Path, role: FolderRole, create: bool) -> Result<OwnedDir> {
        let me = rustix::process::geteuid().as_raw();
        let open_parent = |folder: &OpenFolder| {
            Error::environment(format!(
                "{} {}: the folder {} above it belongs to uid {} (mode {:o}): whoever else can write there can move the {} away and put another in its place; use a folder whose parents only root or you can write (a sticky one like /var/tmp is fine), or {}",
                role.name(),
                path.display(),
                folder.path.display(),
                folder.uid,
                folder.mode,
                role.name(),
                role.other()
            ))
        };
        let rules = Rules { trusted: me, strict: true, create };
        let Walked { path: canonical, fd, .. } = walk(path, rules).map_err(|e| match e {
            Refusal::Io(at, e) if e.raw_os_error() == Some(libc::ENOENT) => {
                Error::environment(format!("{} {}: {NOT_FOUND} ({})", role.name(), path.display(), at.display()))
            }
            Refusal::Io(at, e) => Error::io(&at, role.name(), e),
            Refusal::OpenParent(folder) | Refusal::LinkBelowOpen(_, folder) => open_parent(&folder),
            Refusal::ForeignLink(at, uid) => foreign_link(role, path, &format!("reached through {}, a symlink", at.display()), uid),
        })?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&canonical, "stat", e.into()))?;
        let shown = canonical.display();
        if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
            return Err(Error::environment(format!("{} {shown} is not a folder: {}", role.name(), role.other())));
        }
        let (does, could) = role.stakes();
        if stat.st_uid != me {
            return Err(Error::environment(format!(
                "{} {shown} belongs to uid {}, not to you (uid {me}): fslab {does}, so no one else may own it; `chown {me} {shown}` if it is meant to be yours, or {}",
                role.name(),
                stat.st_uid,
                role.other()
            )));
        }
        if stat.st_mode & 0o022 != 0 {
            return Err(Error::environment(format!(
                "{} {shown} is writable by its group or by others (mode {:o}): whoever can write there can {could}; `chmod go-w {shown}`, or {}",
                role.name(),
                stat.st_mode & 0o7777,
                role.other()
            )));
        }
        let fd = rustix::fs::openat(&fd, ".", DIR_FLAGS, Mode::empty()).map_err(|e| Error::io(&canonical, "open", e.into()))?;
        Ok(OwnedDir { path: canonical, fd, id: FileId { dev: stat.st_dev, ino: stat.st_ino } })
    }

    /// Where the file `path` names lies, in a `role` folder of ours alone:
    /// its folder checked as [`OwnedDir::open_or_make`] checks (and made,
    /// with `create`), and a symlink in the file's place followed only when
    /// it is root's or ours, into a folder held to the same rule. The
    /// file's canonical path, with no link left in it, so that what opens
    /// it by name (SQLite) finds what was checked; nothing need be there
    /// yet. `None` when the folder is missing and `create` is false.
    pub fn file_in(path: &Path, role: FolderRole, create: bool) -> Result<Option<PathBuf>> {
        let me = rustix::process::geteuid().as_raw();
        let mut at = path.to_path_buf();
        for _ in 0..40 {
            let Some(name) = at.file_name().map(Path::new) else {
                return Err(Error::usage(format!("{} {}: give a file name, not a folder", role.name(), path.display())));
            };
            let parent = at.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let dir = if create { Self::open_or_make(parent, role)? } else {
                match Self::open_existing(parent, role)? {
                    Some(dir) => dir,
                    None => return Ok(None),
                }
            };
            let stat = match rustix::fs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Err(rustix::io::Errno::NOENT) => return Ok(Some(dir.path.join(name))),
                other => other.map_err(|e| Error::io(&dir.path.join(name), "stat", e.into()))?,
            };
            if FileType::from_raw_mode(stat.st_mode) != FileType::Symlink {
                return Ok(Some(dir.path.join(name)));
            }
            if stat.st_uid != 0 && stat.st_uid != me {
                return Err(foreign_link(role, path, &format!("{} is a symlink", dir.path.join(name).display()), stat.st_uid));
            }
            let target = rustix::fs::readlinkat(&dir.fd, name, Vec::new()).map_err(|e| Error::io(&dir.path.join(name), "readlink", e.into()))?;
            let target = PathBuf::from(std::ffi::OsString::from_vec(target.into_bytes()));
            at = if target.is_absolute() { target } else { dir.path.join(target) };
        }
        Err(Error::io(path, role.name(), io::Error::from_raw_os_error(libc::ELOOP)))
    }

    /// Reopen a folder a ledger recorded, by its canonical `path`, and
    /// insist it is the same folder (`id`) and still ours alone.
    pub fn reopen(path: &Path, id: FileId, role: FolderRole) -> Result<OwnedDir> {
        let dir = Self::open_checked(path, role, false)?;
        if dir.id != id || dir.path != path {
            return Err(Error::failed(format!(
                "{} {} is not the folder the run recorded (another device/inode)",
                role.name(),
                path.display()
            )));
        }
        Ok(dir)
    }

    /// Its canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its device and inode.
    pub fn id(&self) -> FileId {
        self.id
    }

    /// Its descriptor, for `*at` calls.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Make the new folder `name` in it (mode 0700; an existing one is an
    /// error) and hold it open.
    pub fn make_child(&self, name: &str) -> io::Result<OwnedDir> {
        rustix::fs::mkdirat(&self.fd, name, Mode::RWXU)?;
        self.open_dir(Path::new(name))
    }

    /// Open the folder at `relative` below it: never through a symlink,
    /// never above it. A mount on the last component is entered.
    pub fn open_dir(&self, relative: &Path) -> io::Result<OwnedDir> {
        let fd = rustix::fs::openat2(&self.fd, relative, DIR_FLAGS, Mode::empty(), ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS)?;
        let id = FileId::of(&fd)?;
        Ok(OwnedDir { path: self.path.join(relative), fd, id })
    }

    /// `path` relative to this folder when it lies strictly below it, with
    /// no `..` or `.` on the way; `None` otherwise.
    pub fn relative(&self, path: &Path) -> Option<PathBuf> {
        let rest = path.strip_prefix(&self.path).ok()?;
        let plain = rest.components().all(|c| matches!(c, Component::Normal(_)));
        (plain && rest.components().next().is_some()).then(|| rest.to_path_buf())
    }

    /// The identity and type of `name` in this folder, not following a
    /// symlink; `None` when absent.
    pub fn stat_child(&self, name: &Path) -> io::Result<Option<(FileId, FileType)>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some((FileId { dev: st.st_dev, ino: st.st_ino }, FileType::from_raw_mode(st.st_mode)))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

const NOT_FOUND: &str = "no such folder";

/// The refusal of another user's symlink (`what`: where it is, in words)
/// on the way to the `role` folder or file at `path`: exit 3, with the fix.
fn foreign_link(role: FolderRole, path: &Path, what: &str, uid: u32) -> Error {
    let me = rustix::process::geteuid().as_raw();
    Error::environment(format!(
        "{} {}: {what} that belongs to uid {uid}, not to root or you (uid {me}); fslab does not follow another user's symlink as root: remove it, or {}",
        role.name(),
        path.display(),
        role.other()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tmp() -> tempfile::TempDir {
        crate::test_temp::dir("")
    }

    #[test]
    fn an_absent_folder_is_made_0700_and_held_by_its_canonical_path() {
        let dir = tmp();
        let asked = dir.path().join("a/./b//c");
        let held = OwnedDir::open_or_make(&asked, FolderRole::Scratch).unwrap();
        assert_eq!(held.path(), dir.path().canonicalize().unwrap().join("a/b/c"));
        let mode = std::fs::metadata(held.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(held.relative(&held.path().join("x/mnt")), Some(PathBuf::from("x/mnt")));
        assert_eq!(held.relative(&held.path().join("x/../y")), None);
        assert_eq!(held.relative(held.path()), None);
        assert_eq!(held.relative(Path::new("/etc")), None);
    }

    #[test]
    fn a_folder_others_may_write_is_refused_with_the_fix() {
        let dir = tmp();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = OwnedDir::open_or_make(&open, FolderRole::Scratch).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Environment, "{e}");
        assert!(e.to_string().contains("chmod go-w") && e.to_string().contains("--scratch"), "{e}");
    }

    #[test]
    fn a_symlink_of_another_user_is_never_followed_and_ours_is_resolved_once() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = tmp();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let theirs = dir.path().join("theirs");
        std::os::unix::fs::symlink(&real, &theirs).unwrap();
        std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
        let e = OwnedDir::open_or_make(&theirs.join("scratch"), FolderRole::Scratch).unwrap_err();
        assert!(e.to_string().contains("uid 65534"), "{e}");
        assert!(!real.join("scratch").exists(), "made something through their symlink");
        let ours = dir.path().join("ours");
        std::os::unix::fs::symlink("real", &ours).unwrap();
        let held = OwnedDir::open_or_make(&ours.join("../ours/scratch"), FolderRole::Scratch).unwrap();
        assert_eq!(held.path(), real.canonicalize().unwrap().join("scratch"));
    }

    #[test]
    fn nothing_below_is_reached_through_a_symlink() {
        let dir = tmp();
        let held = OwnedDir::open_or_make(&dir.path().join("s"), FolderRole::State).unwrap();
        std::os::unix::fs::symlink("/etc", held.path().join("link")).unwrap();
        assert!(held.open_dir(Path::new("link")).is_err());
        assert!(held.open_dir(Path::new("../s")).is_err());
        let child = held.make_child("run").unwrap();
        assert_eq!(held.stat_child(Path::new("run")).unwrap().unwrap().0, child.id());
        assert!(held.make_child("run").is_err(), "made twice");
    }
}
