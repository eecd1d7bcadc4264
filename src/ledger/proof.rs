//! Releasing only what fslab can prove it made. A ledger line names a
//! path; a path alone proves nothing (a crafted ledger may name `/etc`, a
//! swapped folder may stand where the run folder stood). So what fslab
//! makes in the scratch folder is recorded with a [`Proof`] — the device
//! and inode it had, the image behind a loop device, the source of a mount
//! — and a release acts only inside the run's own scratch folder, reached
//! from its held descriptor, on what still matches. Anything else is
//! refused ("not made by fslab: ..."), and left alone.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, StatxFlags};
use rustix::mount::UnmountFlags;
use serde::{Deserialize, Serialize};

use super::folder::{FileId, OwnedDir};
use crate::error::{Error, Result};

/// What fslab recorded, once it had made a resource, to know it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Proof {
    /// A file or folder: its device and inode when made.
    File(FileId),
    /// A loop device: the device and inode of the image behind it.
    Backing(FileId),
    /// A loop device once attached: the image behind it and the device's
    /// disk sequence number, which names that attachment even when the
    /// file behind it no longer answers a stat (a FUSE export whose daemon
    /// died).
    Loop {
        /// The device and inode of the file behind it.
        backing: FileId,
        /// Its `BLKGETDISKSEQ`.
        diskseq: u64,
    },
    /// A mount: what mountinfo shows as its source and type, and for a loop
    /// device the image behind that device.
    Mount {
        /// The source as given to mount (`/dev/loop3`, `nodev`).
        source: String,
        /// The file-system type (`ext4`, `tracefs`).
        fs_type: String,
        /// The image behind the loop device `source`, when it is one.
        backing: Option<FileId>,
        /// The loop device's disk sequence number, when recorded: it then
        /// decides, the image behind it aside.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diskseq: Option<u64>,
    },
}

/// A release's outcome: `Ok(None)` released (or already gone),
/// `Ok(Some(why))` refused because it cannot be proved fslab's.
pub type Outcome = Result<Option<String>>;

fn refuse(why: String) -> Outcome {
    Ok(Some(format!("not made by fslab: {why}")))
}

/// The folder holding `path` inside `scratch`, and `path`'s last name; a
/// refusal when `path` is not strictly inside it. `None` for the folder
/// when it is gone (so nothing of the run's is left in it).
fn place(scratch: Option<&OwnedDir>, path: &Path) -> std::result::Result<(Option<OwnedDir>, PathBuf), String> {
    let Some(scratch) = scratch else {
        return Err(format!("{}: the ledger names no scratch folder that is still ours", path.display()));
    };
    let Some(relative) = scratch.relative(path) else {
        return Err(format!("{} is not inside the scratch folder {}", path.display(), scratch.path().display()));
    };
    let name = PathBuf::from(relative.file_name().unwrap_or_default());
    let parent = relative.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match scratch.open_dir(parent) {
        Ok(dir) => Ok((Some(dir), name)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok((None, name)),
        Err(e) => Err(format!("{}: {}", path.display(), crate::error::describe_io(&e))),
    }
}

/// What stands at `path` in the scratch folder: its folder held, its name,
/// identity and type. `Err(Ok(None))` when nothing does (released),
/// `Err(Ok(Some(why)))` when `path` is not in the scratch folder.
type Found = (OwnedDir, PathBuf, FileId, FileType);

fn find(scratch: Option<&OwnedDir>, path: &Path) -> std::result::Result<Found, Outcome> {
    let (parent, name) = place(scratch, path).map_err(refuse)?;
    let Some(parent) = parent else { return Err(Ok(None)) };
    match parent.stat_child(&name) {
        Ok(Some((id, kind))) => Ok((parent, name, id, kind)),
        Ok(None) => Err(Ok(None)),
        Err(e) => Err(Err(Error::io(path, "stat", e))),
    }
}

/// Remove the empty folder at `path` if it is the one recorded. A folder
/// recorded but never proved (the run was killed between making it and
/// recording it) is removed only if empty, which `rmdir` ensures.
pub fn remove_dir(scratch: Option<&OwnedDir>, path: &Path, proof: Option<&Proof>) -> Outcome {
    let (parent, name, id, kind) = match find(scratch, path) {
        Ok(found) => found,
        Err(outcome) => return outcome,
    };
    if kind != FileType::Directory {
        return refuse(format!("{} is not a folder", path.display()));
    }
    if id.dev != parent.id().dev {
        // A mount of the run's own is released before its mount point; one
        // still there is not provably fslab's.
        return refuse(format!("{} has a mount on it that fslab did not release", path.display()));
    }
    match proof {
        Some(Proof::File(want)) if *want != id => {
            return refuse(format!("{} is another folder than the one made (device/inode differ)", path.display()));
        }
        Some(Proof::File(_)) | None => {}
        Some(other) => return refuse(format!("{}: a folder recorded as {other:?}", path.display())),
    }
    match rustix::fs::unlinkat(parent.fd(), &name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(rustix::io::Errno::NOTEMPTY) if proof.is_none() => {
            refuse(format!("{} is not empty and was never recorded as made", path.display()))
        }
        Err(e) => Err(Error::io(path, "remove the folder", e.into())),
    }
}

/// Delete the image at `path` if it is the file recorded.
pub fn remove_image(scratch: Option<&OwnedDir>, path: &Path, proof: Option<&Proof>) -> Outcome {
    let (parent, name, id, kind) = match find(scratch, path) {
        Ok(found) => found,
        Err(outcome) => return outcome,
    };
    match proof {
        Some(Proof::File(want)) if *want == id && kind == FileType::RegularFile => {}
        Some(Proof::File(_)) => return refuse(format!("{} is another file than the image made", path.display())),
        _ => return refuse(format!("{}: no record of the image made", path.display())),
    }
    match rustix::fs::unlinkat(parent.fd(), &name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(Error::io(path, "delete the image", e.into())),
    }
}

/// Delete the empty regular file at `path` made to mount on, if it is the
/// one recorded and nothing is mounted on it any more.
pub fn remove_mount_file(scratch: Option<&OwnedDir>, path: &Path, proof: Option<&Proof>) -> Outcome {
    let (parent, name, id, kind) = match find(scratch, path) {
        Ok(found) => found,
        Err(outcome) => return outcome,
    };
    if id.dev != parent.id().dev {
        return refuse(format!("{} has a mount on it that fslab did not release", path.display()));
    }
    match proof {
        Some(Proof::File(want)) if *want == id && kind == FileType::RegularFile => {}
        Some(_) => return refuse(format!("{} is another file than the mount point made", path.display())),
        None => return refuse(format!("{}: no record of the mount point made", path.display())),
    }
    let size = rustix::fs::statat(parent.fd(), &name, AtFlags::SYMLINK_NOFOLLOW).map(|s| s.st_size);
    if size.map_err(|e| Error::io(path, "stat", e.into()))? != 0 {
        return refuse(format!("{} is not empty: not the mount point made", path.display()));
    }
    match rustix::fs::unlinkat(parent.fd(), &name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(Error::io(path, "delete the mount point", e.into())),
    }
}

/// Loop devices whose backing file is the one recorded (`want`), as each
/// attached device says (`LOOP_GET_STATUS64`), or that are the attachment
/// `seq` names.
fn loops_backed_by(image: &Path, want: FileId, seq: Option<u64>) -> Vec<(PathBuf, std::fs::File)> {
    loops_at(image, want, seq).0
}

/// Loop devices whose backing file is at `image`: those backed by `want`
/// (or, with `seq`, the attachment of that disk sequence number), and the
/// others (another file now at that path).
fn loops_at(image: &Path, want: FileId, seq: Option<u64>) -> (Vec<(PathBuf, std::fs::File)>, Vec<PathBuf>) {
    let (mut found, mut others) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir("/sys/block") else { return (found, others) };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.as_bytes().starts_with(b"loop") {
            continue;
        }
        let Some(backing) = backing_path(&entry.path()) else { continue };
        // Every attached device is asked: the path sysfs shows follows
        // renames of the folders above the image, so only device and inode
        // decide.
        let device = Path::new("/dev").join(&name);
        let Ok(file) = std::fs::File::open(&device) else { continue };
        // The attachment recorded, still over the path recorded.
        let attachment =
            seq.is_some() && backing == image.as_os_str().as_bytes() && crate::sys::loop_dev::diskseq(&file).ok() == seq;
        let now = crate::sys::loop_dev::backing(&file).ok().flatten();
        if attachment || now == Some((want.dev, want.ino)) {
            found.push((device, file));
        } else if now.is_some()
            && backing == image.as_os_str().as_bytes()
            && backing_path(&entry.path()).is_some_and(|again| again == backing)
        {
            // Another file, attached, and still over the path: a device
            // caught detaching itself (autoclear on its last close) or
            // taken again for another image between the two looks is not.
            others.push(device);
        }
    }
    (found, others)
}

/// The path sysfs shows behind the loop device at `block` (`/sys/block/loopN`),
/// without a trailing " (deleted)"; `None` when nothing is attached.
pub(super) fn backing_path(block: &Path) -> Option<Vec<u8>> {
    let mut backing = std::fs::read(block.join("loop/backing_file")).ok()?;
    if backing.last() == Some(&b'\n') {
        backing.pop();
    }
    if backing.ends_with(b" (deleted)") {
        backing.truncate(backing.len() - b" (deleted)".len());
    }
    Some(backing)
}

/// Detach every loop device over the recorded image, and wait until they
/// are gone (one still open elsewhere only detaches on its last close).
pub fn detach_loops(scratch: Option<&OwnedDir>, image: &Path, proof: Option<&Proof>) -> Outcome {
    let (want, seq) = match proof {
        Some(Proof::Backing(want)) => (*want, None),
        Some(Proof::Loop { backing, diskseq }) => (*backing, Some(*diskseq)),
        _ => return refuse(format!("loop device over {}: no record of the image behind it", image.display())),
    };
    if let Err(why) = place(scratch, image) {
        return refuse(why);
    }
    let (ours, others) = loops_at(image, want, seq);
    if ours.is_empty() && !others.is_empty() {
        let names: Vec<String> = others.iter().map(|d| d.display().to_string()).collect();
        return refuse(format!("{} over {} is backed by another file than the image made", names.join(", "), image.display()));
    }
    for (device, file) in ours {
        match crate::sys::loop_dev::detach(&file) {
            Ok(()) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENXIO)) => {}
            Err(e) => return Err(Error::io(&device, "detach the loop device", e)),
        }
    }
    wait_detached(image, || loops_backed_by(image, want, seq).into_iter().next().map(|(device, _)| device)).map(|()| None)
}

/// Wait until `attached` finds no loop device over `image` any more: one
/// still open somewhere is only marked to detach on its last close, and
/// released means gone. Five seconds at most.
pub fn wait_detached(image: &Path, attached: impl Fn() -> Option<PathBuf>) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(device) = attached() {
        if Instant::now() >= deadline {
            return Err(Error::failed(format!(
                "{} is still attached to {}: something holds it open; it detaches when closed",
                device.display(),
                image.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Unmount what is mounted at `path` if it is the mount recorded: found
/// from the held scratch folder without following symlinks, a mount when
/// its mount id differs from its parent folder's, checked against the
/// proof by that id in mountinfo (no path is compared: folders above may
/// have been renamed), and unmounted through the held parent folder.
/// Busy, it is retried for five seconds, then detached lazily.
pub fn unmount(scratch: Option<&OwnedDir>, path: &Path, proof: Option<&Proof>) -> Outcome {
    let Some(Proof::Mount { source, fs_type, backing, diskseq }) = proof else {
        return refuse(format!("mount on {}: no record of what was mounted", path.display()));
    };
    let (parent, name) = match place(scratch, path) {
        Ok(p) => p,
        Err(why) => return refuse(why),
    };
    let Some(parent) = parent else { return Ok(None) };
    // Not synced: a FUSE mount whose daemon died answers no getattr, and
    // the mount id is the kernel's own.
    let mount_id = |fd: BorrowedFd| {
        rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH | AtFlags::STATX_DONT_SYNC, StatxFlags::MNT_ID)
            .map(|s| s.stx_mnt_id)
            .map_err(|e| Error::io(path, "statx", e.into()))
    };
    let parent_mount = mount_id(parent.fd())?;
    // A folder, or a file a FUSE export of one file is mounted on.
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
    let fd = match rustix::fs::openat2(parent.fd(), &name, flags, Mode::empty(), resolve) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => return Err(Error::io(path, "open the mount point", e.into())),
    };
    let mnt_id = mount_id(fd.as_fd())?;
    drop(fd); // an open descriptor would keep the mount busy
    if mnt_id == parent_mount {
        return Ok(None); // nothing is mounted on it
    }
    let Some(mount) = crate::layout::mounts::find_by_id(mnt_id) else { return Ok(None) };
    let same_device = rustix::fs::stat(source.as_str())
        .is_ok_and(|st| (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)) == (mount.major, mount.minor));
    if (mount.source != *source && !same_device) || mount.fs_type != *fs_type {
        return refuse(format!("{} has {} ({}) mounted on it, not {source}", path.display(), mount.source, mount.fs_type));
    }
    if let Some(seq) = diskseq {
        if std::fs::File::open(source).ok().and_then(|f| crate::sys::loop_dev::diskseq(&f).ok()) != Some(*seq) {
            return refuse(format!("{source} mounted on {} is no longer the loop device attached for it", path.display()));
        }
    } else if let Some(want) = backing {
        let behind = std::fs::File::open(source).ok().and_then(|f| crate::sys::loop_dev::backing(&f).ok().flatten());
        if behind != Some((want.dev, want.ino)) {
            return refuse(format!("{source} mounted on {} is no longer the loop device over its image", path.display()));
        }
    }
    let target = format!("/proc/self/fd/{}/{}", parent.fd().as_raw_fd(), name.display());
    super::give_back::unmount_patiently(Path::new(&target), UnmountFlags::empty())
        .map(|()| None)
        .map_err(|(what, e)| Error::io(path, what, e.into()))
}

/// The work folder at `path` (in a user's `--dir`, outside any scratch
/// folder) is released only if it is still the one made: `Some(outcome)`
/// decides without removing anything more than an empty folder — gone
/// (released), another folder (refused), recorded but never proved (the
/// run was killed before: removed only if empty) — and `None` lets the
/// release go on.
pub fn work_dir_unproven(path: &Path, proof: Option<&Proof>) -> Option<Outcome> {
    use std::os::unix::fs::MetadataExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(Ok(None)),
        Err(e) => return Some(Err(Error::io(path, "stat the work folder", e))),
    };
    let id = FileId { dev: meta.dev(), ino: meta.ino() };
    match proof {
        Some(Proof::File(want)) if *want == id && meta.is_dir() => None,
        Some(_) => Some(refuse(format!("{} is another folder than the work folder made", path.display()))),
        None => Some(match std::fs::remove_dir(path) {
            Ok(()) => Ok(None),
            Err(_) => refuse(format!("{}: a work folder never recorded as made, and not empty", path.display())),
        }),
    }
}

/// A refusal as an error, for a live run's own releases: what it made
/// itself is no longer what stands there.
pub fn refused_is_error(outcome: Outcome) -> Result<()> {
    match outcome? {
        None => Ok(()),
        Some(why) => Err(Error::failed(why)),
    }
}

/// The proof of a file or folder open as `fd`.
pub fn file_proof(fd: impl AsFd, path: &Path) -> Result<Proof> {
    FileId::of(fd).map(Proof::File).map_err(|e: io::Error| Error::io(path, "stat", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::folder::FolderRole;
    use crate::ledger::cleanup_dead;
    use serde_json::json;

    fn id_of(path: &Path) -> serde_json::Value {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(path).unwrap();
        json!({"dev": m.dev(), "ino": m.ino()})
    }

    /// A dead run's ledger of `lines` in a new state folder.
    fn write_ledger(state: &Path, lines: &[serde_json::Value]) {
        std::fs::create_dir_all(state).unwrap();
        let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
        std::fs::write(state.join("crafted.ledger"), text).unwrap();
    }

    #[test]
    fn a_crafted_ledger_naming_what_fslab_did_not_make_does_nothing() {
        let dir = crate::test_temp::dir("");
        let scratch = OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let precious = outside.join("precious");
        std::fs::write(&precious, b"keep me").unwrap();
        // A folder and an image in the scratch folder that are not the ones
        // the ledger proves (as if swapped after the run made its own).
        let swapped = scratch.path().join("run-ext4");
        std::fs::create_dir(&swapped).unwrap();
        let image = swapped.join("ext4.img");
        std::fs::write(&image, b"not ours").unwrap();
        let empty_outside = dir.path().join("empty");
        std::fs::create_dir(&empty_outside).unwrap();
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let proved = |entry: usize, proof: serde_json::Value| json!({"proved": {"entry": entry, "proof": proof}});
        write_ledger(
            &dir.path().join("state"),
            &[
                json!({"owner": {"pid": 1, "start_ticks": 1, "format": 2}}),
                json!({"scratch": {"path": s(scratch.path()), "id": id_of(scratch.path())}}),
                json!({"make": {"run_dir": s(&outside)}}),
                proved(0, json!({"file": id_of(&outside)})),
                json!({"make": {"image": s(&precious)}}),
                proved(1, json!({"file": id_of(&precious)})),
                json!({"make": {"run_dir": s(&swapped)}}),
                proved(2, json!({"file": id_of(&outside)})),
                json!({"make": {"image": s(&image)}}),
                proved(3, json!({"file": id_of(&precious)})),
                json!({"make": {"mount_point": s(&empty_outside)}}),
                json!({"make": {"loop": s(&precious)}}),
                proved(5, json!({"backing": id_of(&precious)})),
                json!({"make": {"mount": "/"}}),
                proved(6, json!({"mount": {"source": "/dev/sda", "fs_type": "ext4", "backing": null}})),
                json!({"make": {"mount": s(&swapped)}}),
                json!({"make": {"trace_instance": s(&empty_outside)}}),
                json!({"make": {"work_dir": s(&outside)}}),
                proved(9, json!({"file": id_of(&precious)})),
                json!({"make": {"work_dir": s(&outside)}}),
            ],
        );
        let cleaned = cleanup_dead(&dir.path().join("state")).unwrap();
        assert_eq!(cleaned.len(), 1);
        let run = &cleaned[0];
        assert_eq!(run.refused.len(), 11, "{run:#?}");
        assert!(run.refused.iter().all(|r| r.contains("not made by fslab")), "{run:#?}");
        assert!(run.released.is_empty() && run.failed.is_empty(), "{run:#?}");
        assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
        assert!(image.exists() && swapped.exists() && empty_outside.exists());
        // Refused entries are dropped: reported once, not at every start.
        assert!(cleanup_dead(&dir.path().join("state")).unwrap().is_empty());
    }

    #[test]
    fn a_mount_file_is_removed_only_empty_and_as_made() {
        let dir = crate::test_temp::dir("");
        let scratch = OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap();
        let file = scratch.path().join("device");
        std::fs::write(&file, b"").unwrap();
        let made = Proof::File(FileId::of(std::fs::File::open(&file).unwrap()).unwrap());
        // Written into since: not the empty file a mount went on.
        std::fs::write(&file, b"data").unwrap();
        let why = remove_mount_file(Some(&scratch), &file, Some(&made)).unwrap().unwrap();
        assert!(why.contains("is not empty"), "{why}");
        std::fs::write(&file, b"").unwrap();
        let other = Proof::File(FileId { dev: 0, ino: 1 });
        let why = remove_mount_file(Some(&scratch), &file, Some(&other)).unwrap().unwrap();
        assert!(why.contains("another file"), "{why}");
        assert!(remove_mount_file(Some(&scratch), &file, None).unwrap().is_some(), "no record, no removal");
        assert_eq!(remove_mount_file(Some(&scratch), &file, Some(&made)).unwrap(), None);
        assert!(!file.exists());
        // Gone already: released.
        assert_eq!(remove_mount_file(Some(&scratch), &file, Some(&made)).unwrap(), None);
    }

    #[test]
    fn a_mount_on_a_file_is_unmounted_as_one_on_a_folder() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = crate::test_temp::dir("");
        let scratch = OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap();
        let source = dir.path().join("source");
        std::fs::write(&source, b"bound").unwrap();
        let target = scratch.path().join("device");
        std::fs::write(&target, b"").unwrap();
        let bind = |from: &Path, to: &Path| rustix::mount::mount_bind(from, to).unwrap();
        bind(&source, &target);
        let mount = crate::layout::mounts::find_by_mount_point(&target).expect("the bind mount");
        let proof = Proof::Mount { source: mount.source.clone(), fs_type: mount.fs_type.clone(), backing: None, diskseq: None };
        let outcome = unmount(Some(&scratch), &target, Some(&proof));
        let left = crate::layout::mounts::find_by_mount_point(&target).is_some();
        if left {
            let _ = rustix::mount::unmount(&target, rustix::mount::UnmountFlags::DETACH);
        }
        assert_eq!(outcome.unwrap(), None);
        assert!(!left, "still mounted");
        assert_eq!(std::fs::read(&target).unwrap(), b"", "the file under it is back");
    }

    #[test]
    fn a_loop_device_is_known_by_its_attachment_over_the_path_recorded() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = crate::test_temp::dir("");
        let scratch = OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap();
        let image = scratch.path().join("image");
        std::fs::File::create(&image).unwrap().set_len(1 << 20).unwrap();
        let out = std::process::Command::new("losetup").args(["--find", "--show"]).arg(&image).output().unwrap();
        let device = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let name = device.trim_start_matches("/dev/");
        let seq: u64 = std::fs::read_to_string(format!("/sys/block/{name}/diskseq")).unwrap().trim().parse().unwrap();
        // Detached at the end whatever the test found, if still this
        // attachment (the number may be another test's by then).
        struct Detach(String, u64);
        impl Drop for Detach {
            fn drop(&mut self) {
                let Ok(file) = std::fs::File::open(&self.0) else { return };
                if crate::sys::loop_dev::diskseq(&file).ok() == Some(self.1) {
                    let _ = crate::sys::loop_dev::detach(&file);
                }
            }
        }
        let _detach = Detach(device.clone(), seq);
        let attached = || std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).is_ok();
        // Neither the file (a stat that fails, as a dead FUSE export's
        // does) nor the attachment: refused, and left alone.
        let nobody = FileId { dev: 0, ino: 1 };
        let why = detach_loops(Some(&scratch), &image, Some(&Proof::Loop { backing: nobody, diskseq: seq + 1000 })).unwrap();
        assert!(why.is_some_and(|w| w.contains("backed by another file")));
        // The attachment, but recorded over another path: not this one.
        let elsewhere = scratch.path().join("elsewhere");
        assert_eq!(detach_loops(Some(&scratch), &elsewhere, Some(&Proof::Loop { backing: nobody, diskseq: seq })).unwrap(), None);
        assert!(attached(), "a loop device over another path was detached");
        // The attachment over the path recorded: detached, whatever its
        // file says.
        assert_eq!(detach_loops(Some(&scratch), &image, Some(&Proof::Loop { backing: nobody, diskseq: seq })).unwrap(), None);
        assert!(!attached(), "{device} is still attached");
    }

    #[test]
    fn a_ledger_of_an_older_fslab_is_refused_whole_reported_once_and_dropped() {
        let dir = crate::test_temp::dir("");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("precious"), b"keep me").unwrap();
        let s = outside.to_str().unwrap();
        write_ledger(
            &dir.path().join("state"),
            &[
                json!({"owner": {"pid": 1, "start_ticks": 1}}),
                json!({"make": {"run_dir": s}}),
                json!({"make": {"work_dir": s}}),
                json!({"make": {"loop": format!("{s}/precious")}}),
            ],
        );
        let cleaned = cleanup_dead(&dir.path().join("state")).unwrap();
        assert_eq!(cleaned[0].refused.len(), 3, "{cleaned:#?}");
        assert!(cleaned[0].refused[0].contains("older fslab"), "{cleaned:#?}");
        assert!(cleaned[0].released.is_empty());
        assert_eq!(std::fs::read(outside.join("precious")).unwrap(), b"keep me");
        assert!(cleanup_dead(&dir.path().join("state")).unwrap().is_empty(), "reported once");
    }
}
