//! Removing a `--dir` work folder as root without leaving it.
//!
//! The measured command runs as root inside the work folder and may leave
//! anything there: a bind mount of `/home`, a symlink to `/etc`, a file
//! system mounted over the folder itself. A plain `rm -rf` walks into all
//! of them. So the release first unmounts what the kernel's mount table
//! shows at or below the folder (deepest first), then empties it through
//! directory descriptors it holds: every entry is looked at with
//! `statx(AT_SYMLINK_NOFOLLOW)` relative to its parent's descriptor,
//! directories are opened `O_NOFOLLOW | O_DIRECTORY` and descended into
//! only when they are on the folder's own mount (same device and mount
//! id), and everything is removed with `unlinkat`, which deletes a symlink
//! and never what it names. What lies on another mount is left alone and
//! reported, and the folder itself is then kept: its ledger entry stays
//! for `fslab cleanup` to retry once the mount is gone.

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, StatxFlags, CWD};
use rustix::io::Errno;
use rustix::mount::UnmountFlags;

use crate::error::{Error, Result};

/// Unmount what is mounted at or below the work folder at `path` (the
/// measured command's mounts), so that what stands at the path is the
/// folder that was made and its proof can be checked. Only a path named
/// as fslab names work folders is looked at.
pub fn unmount_in_work_folder(path: &Path) -> Result<()> {
    let (parent, name) = work_folder_parts(path)?;
    match open_parent(parent) {
        Ok(parent_fd) => unmount_at_or_below(&real_path(&parent_fd).unwrap_or_else(|| parent.to_path_buf()).join(name)),
        Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(Error::io(parent, "open the folder holding the work folder", e.into())),
    }
}

/// Whether `path` is named as fslab names work folders: `--dir/fslab-RUN`,
/// by its absolute path. A ledger naming anything else did not come from
/// a run.
pub fn named_as_work_folder(path: &Path) -> bool {
    path.is_absolute() && path.file_name().is_some_and(|n| n.as_bytes().starts_with(b"fslab-"))
}

/// The folder holding a work folder and its name, refusing a path that is
/// not named as one.
fn work_folder_parts(path: &Path) -> Result<(&Path, &OsStr)> {
    match (named_as_work_folder(path), path.parent(), path.file_name()) {
        (true, Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(Error::failed(format!("{}: not a work folder fslab made; not removed", path.display()))),
    }
}

/// Remove the work folder at `path` and everything below it that lies on
/// its own file system mount, after unmounting what is mounted below it.
/// A folder already gone is removed; one that is no longer a folder (a
/// symlink put in its place) is refused.
pub fn remove_work_folder(path: &Path) -> Result<()> {
    let (parent, name) = work_folder_parts(path)?;
    let parent_fd = match open_parent(parent) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(Error::io(parent, "open the folder holding the work folder", e.into())),
    };
    // The kernel's name for the folder, as mountinfo spells mount points.
    let real = real_path(&parent_fd).unwrap_or_else(|| parent.to_path_buf()).join(name);
    unmount_at_or_below(&real)?;
    let name = c_name(name);
    let dir = match open_dir_at(&parent_fd, &name) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(Errno::LOOP) | Err(Errno::NOTDIR) => {
            return Err(Error::failed(format!(
                "{}: no longer a folder (something replaced the work folder with a symlink or a file); left alone: remove it by hand",
                path.display()
            )));
        }
        Err(e) => return Err(Error::io(path, "open the work folder", e.into())),
    };
    let own = Identity::of(&dir).map_err(|e| Error::io(path, "stat the work folder", e.into()))?;
    if Identity::of(&parent_fd).ok() != Some(own) {
        return Err(refused(path, &[real]));
    }
    let mut skipped = Vec::new();
    empty(&dir, own, path, &mut skipped)?;
    if !skipped.is_empty() {
        return Err(refused(path, &skipped));
    }
    match rustix::fs::unlinkat(&parent_fd, &name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(Error::io(path, "remove the work folder", e.into())),
    }
}

/// The error for a folder kept because something below it is on another
/// mount: removing it would need crossing that mount.
fn refused(path: &Path, mounts: &[PathBuf]) -> Error {
    let list: Vec<String> = mounts.iter().map(|p| p.display().to_string()).collect();
    Error::failed(format!(
        "{}: not removed, because {} still mounted there and removing would delete through the mount: unmount it, then run `fslab cleanup`",
        path.display(),
        if list.len() == 1 { format!("{} is", list[0]) } else { format!("{} are", list.join(", ")) }
    ))
}

/// The device and mount a file lies on: what "the folder's own file
/// system" means. Two mounts of one file system (a bind mount of a folder
/// beside `--dir`) share the device but not the mount id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: (u32, u32),
    /// 0 on kernels before 5.8, which do not report it (the device is
    /// then all that is compared).
    mount_id: u64,
}

impl Identity {
    /// Of an open file.
    fn of(fd: impl AsFd) -> rustix::io::Result<Identity> {
        look(fd, c"", AtFlags::EMPTY_PATH).map(|(identity, _)| identity)
    }
}

/// The identity of `name` in `dir`, and whether it is a directory.
fn look(dir: impl AsFd, name: &CStr, flags: AtFlags) -> rustix::io::Result<(Identity, bool)> {
    let st = rustix::fs::statx(dir, name, flags | AtFlags::NO_AUTOMOUNT, StatxFlags::TYPE | StatxFlags::MNT_ID)?;
    let mount_id = if st.stx_mask & StatxFlags::MNT_ID.bits() != 0 { st.stx_mnt_id } else { 0 };
    let is_dir = u32::from(st.stx_mode) & libc::S_IFMT == libc::S_IFDIR;
    Ok((Identity { dev: (st.stx_dev_major, st.stx_dev_minor), mount_id }, is_dir))
}

/// Remove everything in `dir` that is on mount `own`; what is not (a mount
/// point) is left and named in `skipped`. `path` names `dir` in messages.
fn empty(dir: &OwnedFd, own: Identity, path: &Path, skipped: &mut Vec<PathBuf>) -> Result<()> {
    let mut names = Vec::new();
    let mut reader = rustix::fs::Dir::read_from(dir).map_err(|e| Error::io(path, "read the folder", e.into()))?;
    while let Some(entry) = reader.read() {
        let entry = entry.map_err(|e| Error::io(path, "read the folder", e.into()))?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            names.push(name.to_owned());
        }
    }
    for name in names {
        let child = path.join(OsStr::from_bytes(name.as_bytes()));
        let (identity, is_dir) = match look(dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(found) => found,
            Err(Errno::NOENT) => continue,
            Err(e) => return Err(Error::io(&child, "stat", e.into())),
        };
        if identity != own {
            skipped.push(child);
            continue;
        }
        if is_dir {
            match open_dir_at(dir, &name) {
                Ok(sub) => {
                    // Checked again on the descriptor itself: something may
                    // have been mounted there since the look above.
                    if Identity::of(&sub).ok() != Some(own) {
                        skipped.push(child);
                        continue;
                    }
                    let before = skipped.len();
                    empty(&sub, own, &child, skipped)?;
                    if skipped.len() > before {
                        continue; // kept: something below it is on another mount
                    }
                    unlink(dir, &name, AtFlags::REMOVEDIR, &child, skipped)?;
                }
                Err(Errno::NOENT) => {}
                // No longer a directory: remove whatever it is now, itself.
                Err(Errno::LOOP) | Err(Errno::NOTDIR) => unlink(dir, &name, AtFlags::empty(), &child, skipped)?,
                Err(e) => return Err(Error::io(&child, "open the folder", e.into())),
            }
        } else {
            unlink(dir, &name, AtFlags::empty(), &child, skipped)?;
        }
    }
    Ok(())
}

/// `unlinkat` one entry; gone already is fine, busy (a mount point that
/// appeared since it was looked at) is skipped.
fn unlink(dir: &OwnedFd, name: &CStr, flags: AtFlags, path: &Path, skipped: &mut Vec<PathBuf>) -> Result<()> {
    match rustix::fs::unlinkat(dir, name, flags) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(Errno::BUSY) => {
            skipped.push(path.to_path_buf());
            Ok(())
        }
        Err(e) => Err(Error::io(path, "remove", e.into())),
    }
}

fn open_dir_at(dir: impl AsFd, name: &CStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
}

/// Open the folder holding the work folder. Its path was resolved when the
/// run began, so a symlink in it now is one put there since, and refused;
/// kernels without `openat2` (before 5.6) only refuse one as its last part.
fn open_parent(parent: &Path) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(CWD, parent, flags, Mode::empty(), resolve) {
        Err(Errno::NOSYS) => rustix::fs::openat(CWD, parent, flags | OFlags::NOFOLLOW, Mode::empty()),
        other => other,
    }
}

/// Where the kernel says an open directory is (`/proc/self/fd/N`).
fn real_path(fd: &OwnedFd) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok().filter(|p| p.is_absolute())
}

fn c_name(name: &OsStr) -> CString {
    // A file name holds no NUL byte.
    CString::new(name.as_bytes()).unwrap_or_default()
}

/// Unmount every mount whose mount point is `folder` or below it, deepest
/// (and, on one mount point, newest) first; a busy one is detached lazily
/// after five seconds, which takes it out of the tree at once. What cannot
/// be unmounted stops the release before anything is removed.
fn unmount_at_or_below(folder: &Path) -> Result<()> {
    // Unmounting one mount can reveal none new, but a mount propagated
    // back by a shared peer could reappear: look again, a few times.
    for _ in 0..4 {
        let mut below: Vec<(usize, PathBuf)> = crate::layout::mounts::all()
            .into_iter()
            .map(|m| m.mount_point)
            .filter(|p| p.starts_with(folder))
            .enumerate()
            .collect();
        if below.is_empty() {
            return Ok(());
        }
        below.sort_by_key(|(index, p)| std::cmp::Reverse((p.components().count(), *index)));
        for (_, mount_point) in below {
            unmount_one(&mount_point, folder)?;
        }
    }
    let left: Vec<PathBuf> =
        crate::layout::mounts::all().into_iter().map(|m| m.mount_point).filter(|p| p.starts_with(folder)).collect();
    if left.is_empty() { Ok(()) } else { Err(refused(folder, &left)) }
}

fn unmount_one(mount_point: &Path, folder: &Path) -> Result<()> {
    // Not (or no longer) a mount point is done: a stacked one went with the
    // one above it, or it was unmounted meanwhile.
    super::give_back::unmount_patiently(mount_point, UnmountFlags::NOFOLLOW)
        .map_err(|(_, e)| unmount_failed(mount_point, folder, e))
}

fn unmount_failed(mount_point: &Path, folder: &Path, e: Errno) -> Error {
    Error::io(mount_point, "unmount", e.into()).context(format!(
        "the work folder {} was not removed (removing would delete through what the measured work mounted there); unmount it, then run `fslab cleanup`",
        folder.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A test folder holding `source/keep`, the decoy that must survive;
    /// whatever is still mounted below the folder is detached on drop.
    struct Decoy {
        top: tempfile::TempDir,
        source: PathBuf,
    }

    impl Decoy {
        fn new() -> Decoy {
            let top = crate::test_temp::dir("");
            let source = top.path().join("source");
            fs::create_dir(&source).unwrap();
            fs::write(source.join("keep"), b"keep").unwrap();
            Decoy { top, source }
        }

        fn kept(&self) -> bool {
            fs::read(self.source.join("keep")).is_ok_and(|k| k == b"keep")
        }

        fn mounts(&self) -> Vec<PathBuf> {
            crate::layout::mounts::all().into_iter().map(|m| m.mount_point).filter(|p| p.starts_with(self.top.path())).collect()
        }
    }

    impl Drop for Decoy {
        fn drop(&mut self) {
            for _ in 0..8 {
                for mount in self.mounts().iter().rev() {
                    let _ = rustix::mount::unmount(mount, UnmountFlags::DETACH);
                }
            }
        }
    }

    fn root() -> bool {
        let root = rustix::process::geteuid().is_root();
        if !root {
            eprintln!("skipping: bind mounts need root");
        }
        root
    }

    #[test]
    fn a_tree_is_removed_and_symlinks_are_removed_not_followed() {
        let decoy = Decoy::new();
        let work = decoy.top.path().join("fslab-run");
        fs::create_dir_all(work.join("a/b/c")).unwrap();
        fs::write(work.join("a/b/c/f"), b"x").unwrap();
        fs::write(work.join("a/g"), b"y").unwrap();
        std::os::unix::fs::symlink(&decoy.source, work.join("a/link")).unwrap();
        std::os::unix::fs::symlink(decoy.source.join("keep"), work.join("filelink")).unwrap();
        remove_work_folder(&work).unwrap();
        assert!(!work.exists());
        assert!(decoy.kept());
        // Gone already: released.
        remove_work_folder(&work).unwrap();
        // Not a work folder's name, or not absolute: never touched.
        for other in [decoy.source.clone(), PathBuf::from("fslab-run")] {
            let e = remove_work_folder(&other).unwrap_err();
            assert!(e.message.contains("not a work folder"), "{e}");
        }
        assert!(decoy.kept());
    }

    #[test]
    fn a_symlink_in_place_of_the_folder_is_refused() {
        let decoy = Decoy::new();
        let work = decoy.top.path().join("fslab-run");
        std::os::unix::fs::symlink(&decoy.source, &work).unwrap();
        let e = remove_work_folder(&work).unwrap_err();
        assert!(e.message.contains("no longer a folder"), "{e}");
        assert!(decoy.kept());
    }

    #[test]
    fn a_bind_mount_below_is_unmounted_first_and_its_source_kept() {
        if !root() {
            return;
        }
        let decoy = Decoy::new();
        let work = decoy.top.path().join("fslab-run");
        let x = work.join("deep/x");
        fs::create_dir_all(&x).unwrap();
        rustix::mount::mount_bind(&decoy.source, &x).unwrap();
        // Stacked, and over the folder itself.
        rustix::mount::mount_bind(&decoy.source, &x).unwrap();
        rustix::mount::mount_bind(&decoy.source, &work).unwrap();
        remove_work_folder(&work).unwrap();
        assert!(!work.exists());
        assert!(decoy.kept());
        assert_eq!(decoy.mounts(), Vec::<PathBuf>::new());
    }

    #[test]
    fn the_walk_itself_does_not_cross_a_mount_and_a_symlinked_path_is_refused() {
        if !root() {
            return;
        }
        // A mount the table-driven unmount missed (one made after it
        // looked): the walk's own checks alone keep the source whole.
        let decoy = Decoy::new();
        let work = decoy.top.path().join("fslab-run");
        fs::create_dir_all(work.join("x")).unwrap();
        fs::write(work.join("f"), b"x").unwrap();
        rustix::mount::mount_bind(&decoy.source, work.join("x")).unwrap();
        let dir = open_dir_at(CWD, &c_name(work.as_os_str())).unwrap();
        let mut skipped = Vec::new();
        empty(&dir, Identity::of(&dir).unwrap(), &work, &mut skipped).unwrap();
        assert_eq!(skipped, vec![work.join("x")]);
        assert!(!work.join("f").exists());
        // The folder named through a symlink put in its path is refused.
        let alias = decoy.top.path().join("alias");
        std::os::unix::fs::symlink(decoy.top.path(), &alias).unwrap();
        assert!(remove_work_folder(&alias.join("fslab-run")).is_err());
        assert!(work.exists());
        assert!(decoy.kept());
    }
}
