//! What a guest (`--kernel`) needs made in the run's scratch folder, each
//! written into the ledger before it exists and proved once made, so a
//! killed run leaves nothing `cleanup` cannot find: the guest's run folder
//! (`RUN-LABEL`), its scratch disk (`disk.img`, sparse, the guest's
//! `/dev/vda`), its initramfs (`initramfs.cpio`), its console
//! (`console.log`) and the share it writes its output into
//! (`fslab-share`, removed with whatever the guest left there); with
//! `--crash`, the write log of its disk (`fslab-log/writes.log`, sparse,
//! as long as the cap), in a folder of its own that the guest sees
//! read-only. The QEMU process itself is ledgered by `vm::guest` when it
//! starts.

use std::fs::File;
use std::path::PathBuf;

use crate::ledger::folder::OwnedDir;
use super::held::Held;
use crate::ledger::{Ledger, Resource};
use super::mounted;
use crate::ledger::proof::Proof;
use super::scratch::make_file;
use crate::age_cache::image_copy;
use crate::crash::WriteLog;
use crate::crash::replay::apply;
use crate::error::{Error, Result};

/// The files of one guest, held in the ledger until released.
#[derive(Debug)]
pub struct GuestFiles<'l> {
    held: Held<'l>,
    /// The guest's run folder.
    pub dir: PathBuf,
    /// The scratch disk image (raw, sparse).
    pub disk: PathBuf,
    /// The initramfs archive, empty until written through [`initramfs_file`](Self::initramfs_file).
    pub initramfs: PathBuf,
    /// The console file QEMU writes.
    pub console: PathBuf,
    /// The output share's host folder.
    pub share: PathBuf,
    /// The disk's write log and the folder shared read-only around it,
    /// when the guest's writes are logged.
    pub log: Option<(PathBuf, PathBuf)>,
    folder: OwnedDir,
    initramfs_file: Option<File>,
}

impl<'l> GuestFiles<'l> {
    /// Make them for run `run_id`, the folder named after `label`
    /// (`ext4@6.1.0-56-amd64`), the disk `disk_bytes` long, and a write
    /// log of at most `log_cap` bytes when given.
    pub fn make(ledger: &'l Ledger, run_id: &str, label: &str, disk_bytes: u64, log_cap: Option<u64>) -> Result<GuestFiles<'l>> {
        let mut held = Held::new(ledger);
        let label: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
        let folder = mounted::make_folder(&mut held, run_id, &format!("{label}-vm"))?;
        let (disk, _, _) = make_file(&mut held, &folder, "disk.img", disk_bytes, Resource::Image)?;
        let (initramfs, initramfs_file, _) = make_file(&mut held, &folder, "initramfs.cpio", 0, Resource::File)?;
        let (console, _, _) = make_file(&mut held, &folder, "console.log", 0, Resource::File)?;
        let share = make_share(&mut held, &folder, "fslab-share")?.path().to_path_buf();
        let log = match log_cap {
            Some(cap) => {
                let log_dir = make_share(&mut held, &folder, "fslab-log")?;
                let (log, _, _) = make_file(&mut held, &log_dir, "writes.log", cap, Resource::File)?;
                Some((log, log_dir.path().to_path_buf()))
            }
            None => None,
        };
        Ok(GuestFiles {
            held,
            dir: folder.path().to_path_buf(),
            disk,
            initramfs,
            console,
            share,
            log,
            folder,
            initramfs_file: Some(initramfs_file),
        })
    }

    /// The initramfs, open for writing (once).
    pub fn initramfs_file(&mut self) -> Result<File> {
        self.initramfs_file.take().ok_or_else(|| Error::failed("the guest's initramfs was written twice"))
    }

    /// What the host reads of the disk's write log once the guest has
    /// ended (`None` when its writes were not logged), touching bytes
    /// only: the host never mounts an image a guest wrote. The log is
    /// checked against its cap, then replayed whole onto an empty image
    /// of the disk's length (`replayed.img`, in the ledger while it
    /// exists), whose content must be the disk's: a log that does not
    /// rebuild the disk cannot rebuild its crash states either.
    pub fn read_log(&mut self) -> Result<Option<LoggedDisk>> {
        let Some((log_path, _)) = self.log.clone() else { return Ok(None) };
        fn io<'a>(path: &'a std::path::Path, what: &'static str) -> impl FnOnce(std::io::Error) -> Error + 'a {
            move |e| Error::io(path, what, e)
        }
        let disk = File::open(&self.disk).map_err(io(&self.disk, "open the guest's disk"))?;
        let (end_sha256, disk_bytes) = image_copy::content_hash(&disk).map_err(io(&self.disk, "hash the guest's disk"))?;
        let log_file = File::open(&log_path).map_err(io(&log_path, "open the guest's write log"))?;
        let cap_bytes = log_file.metadata().map_err(io(&log_path, "stat the guest's write log"))?.len();
        if super::recorded::log_full(&log_file, cap_bytes) {
            return Ok(Some(LoggedDisk { end_sha256, needed_bytes: Some(cap_bytes + 1), replayed_sha256: None }));
        }
        let log = WriteLog::read(&log_path, log_file)?;
        let (path, replayed, _) = make_file(&mut self.held, &self.folder, "replayed.img", disk_bytes, Resource::Image)?;
        let token = self.held.newest();
        let rebuilt = apply(&log, log.entries(), &replayed)
            .and_then(|()| image_copy::content_hash(&replayed).map_err(io(&path, "hash the image rebuilt")));
        drop(replayed);
        self.held.release_one(token)?;
        let (replayed_sha256, _) = rebuilt?;
        Ok(Some(LoggedDisk { end_sha256, needed_bytes: None, replayed_sha256: Some(replayed_sha256) }))
    }

    /// Release everything, newest first; what fails stays in the ledger.
    pub fn release(mut self) -> Result<()> {
        self.held.release()
    }
}

/// What the host read of a guest's write log ([`GuestFiles::read_log`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedDisk {
    /// The content hash of the disk as the guest left it.
    pub end_sha256: String,
    /// Set when the log reached its cap: at least this many bytes were
    /// needed (one more than the cap).
    pub needed_bytes: Option<u64>,
    /// The content hash of the log replayed whole onto an empty disk; it
    /// equals `end_sha256` for a whole log.
    pub replayed_sha256: Option<String>,
}

/// A folder `name` in `folder` shared with the guest, removed with
/// whatever is in it.
fn make_share(held: &mut Held, folder: &OwnedDir, name: &str) -> Result<OwnedDir> {
    let path = folder.path().join(name);
    let token = held.record(Resource::GuestShare(path.clone()))?;
    let share = folder.make_child(name).map_err(|e| Error::io(&path, "create the guest's share", e))?;
    held.prove(token, Proof::File(share.id()))?;
    Ok(share)
}

#[cfg(test)]
mod tests {
    use crate::ledger::folder::FolderRole;
    use crate::ledger;
    use super::*;

    #[test]
    fn a_killed_runs_guest_files_are_all_removed_by_cleanup_and_nothing_outside() {
        let dir = crate::test_temp::dir("");
        let state = dir.path().join("state");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let ledger = Ledger::create(&state, "run1").unwrap();
        ledger.set_scratch(OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
        let mut files = GuestFiles::make(&ledger, "run1", "ext4@6.1.0-56-amd64", 1 << 30, Some(64 << 20)).unwrap();
        let (log, _) = files.log.clone().unwrap();
        assert_eq!(std::fs::metadata(&log).unwrap().len(), 64 << 20);
        assert_eq!(std::fs::metadata(&files.disk).unwrap().len(), 1 << 30);
        use std::io::Write;
        files.initramfs_file().unwrap().write_all(b"070701").unwrap();
        // What a guest may leave in its share: files, folders, a symlink out.
        std::fs::create_dir(files.share.join("sub")).unwrap();
        std::fs::write(files.share.join("sub/stdout"), "{}").unwrap();
        std::os::unix::fs::symlink(&outside, files.share.join("link")).unwrap();
        let folder = files.dir.clone();
        assert!(folder.join("console.log").exists());
        // The run dies: nothing is released by it.
        std::mem::forget(files);
        ledger.abandon();
        let cleaned = ledger::cleanup_dead(&state).unwrap();
        assert_eq!(cleaned.len(), 1);
        assert!(cleaned[0].failed.is_empty() && cleaned[0].refused.is_empty(), "{}", cleaned[0]);
        assert_eq!(cleaned[0].released.len(), 7, "{}", cleaned[0]);
        assert!(cleaned[0].released.iter().any(|r| r.starts_with("guest share")), "{}", cleaned[0]);
        assert!(!folder.exists());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    }

    #[test]
    fn the_host_replays_a_guests_log_and_tells_a_disk_it_does_not_rebuild() {
        use crate::crash::log::tests::{QEMU_LOG, qemu_log_image};
        let dir = crate::test_temp::dir("");
        let ledger = Ledger::create(&dir.path().join("state"), "run3").unwrap();
        ledger.set_scratch(OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
        let image = qemu_log_image();
        let mut files = GuestFiles::make(&ledger, "run3", "ext4", image.len() as u64, Some(64 << 20)).unwrap();
        let (log, _) = files.log.clone().unwrap();
        std::fs::write(&log, QEMU_LOG).unwrap();
        std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(64 << 20).unwrap();
        std::fs::write(&files.disk, &image).unwrap();
        let read = files.read_log().unwrap().unwrap();
        assert_eq!(read.needed_bytes, None);
        assert_eq!(read.replayed_sha256.as_deref(), Some(read.end_sha256.as_str()));
        // A write the log does not hold.
        let mut other = image.clone();
        other[70_000] = 1;
        std::fs::write(&files.disk, &other).unwrap();
        let read = files.read_log().unwrap().unwrap();
        assert_ne!(read.replayed_sha256.as_deref(), Some(read.end_sha256.as_str()));
        // A log whose data reaches its cap: what it holds is not read.
        std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(QEMU_LOG.len() as u64 + (1 << 20)).unwrap();
        let read = files.read_log().unwrap().unwrap();
        assert_eq!(read.needed_bytes, Some(QEMU_LOG.len() as u64 + (1 << 20) + 1));
        assert!(!files.dir.join("replayed.img").exists());
        files.release().unwrap();
    }

    #[test]
    fn a_live_run_releases_its_guest_files() {
        let dir = crate::test_temp::dir("");
        let ledger = Ledger::create(&dir.path().join("state"), "run2").unwrap();
        ledger.set_scratch(OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
        let files = GuestFiles::make(&ledger, "run2", "xfs", 1 << 20, None).unwrap();
        let folder = files.dir.clone();
        std::fs::write(files.share.join("status"), "0").unwrap();
        files.release().unwrap();
        assert!(!folder.exists());
    }
}
