//! What a guest (`--kernel`) needs made in the run's scratch folder, each
//! written into the ledger before it exists and proved once made, so a
//! killed run leaves nothing `cleanup` cannot find: the guest's run folder
//! (`RUN-LABEL`), its scratch disk (`disk.img`, sparse, the guest's
//! `/dev/vda`), its initramfs (`initramfs.cpio`), its console
//! (`console.log`) and the share it writes its output into
//! (`fslab-share`, removed with whatever the guest left there). The QEMU
//! process itself is ledgered by `vm::guest` when it starts.

use std::fs::File;
use std::path::PathBuf;

use crate::ledger::folder::OwnedDir;
use super::held::Held;
use crate::ledger::{Ledger, Resource};
use super::mounted;
use crate::ledger::proof::Proof;
use super::scratch::make_file;
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
    initramfs_file: Option<File>,
}

impl<'l> GuestFiles<'l> {
    /// Make them for run `run_id`, the folder named after `label`
    /// (`ext4@6.1.0-56-amd64`), the disk `disk_bytes` long.
    pub fn make(ledger: &'l Ledger, run_id: &str, label: &str, disk_bytes: u64) -> Result<GuestFiles<'l>> {
        let mut held = Held::new(ledger);
        let label: String = label.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
        let folder = mounted::make_folder(&mut held, run_id, &format!("{label}-vm"))?;
        let (disk, _, _) = make_file(&mut held, &folder, "disk.img", disk_bytes, Resource::Image)?;
        let (initramfs, initramfs_file, _) = make_file(&mut held, &folder, "initramfs.cpio", 0, Resource::File)?;
        let (console, _, _) = make_file(&mut held, &folder, "console.log", 0, Resource::File)?;
        let share = make_share(&mut held, &folder)?;
        Ok(GuestFiles {
            held,
            dir: folder.path().to_path_buf(),
            disk,
            initramfs,
            console,
            share,
            initramfs_file: Some(initramfs_file),
        })
    }

    /// The initramfs, open for writing (once).
    pub fn initramfs_file(&mut self) -> Result<File> {
        self.initramfs_file.take().ok_or_else(|| Error::failed("the guest's initramfs was written twice"))
    }

    /// Release everything, newest first; what fails stays in the ledger.
    pub fn release(mut self) -> Result<()> {
        self.held.release()
    }
}

fn make_share(held: &mut Held, folder: &OwnedDir) -> Result<PathBuf> {
    let path = folder.path().join("fslab-share");
    let token = held.record(Resource::GuestShare(path.clone()))?;
    let share = folder.make_child("fslab-share").map_err(|e| Error::io(&path, "create the guest's share", e))?;
    held.prove(token, Proof::File(share.id()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use crate::ledger::folder::FolderRole;
    use crate::ledger;
    use super::*;

    #[test]
    fn a_killed_runs_guest_files_are_all_removed_by_cleanup_and_nothing_outside() {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
        let state = dir.path().join("state");
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let ledger = Ledger::create(&state, "run1").unwrap();
        ledger.set_scratch(OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
        let mut files = GuestFiles::make(&ledger, "run1", "ext4@6.1.0-56-amd64", 1 << 30).unwrap();
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
        assert_eq!(cleaned[0].released.len(), 5, "{}", cleaned[0]);
        assert!(cleaned[0].released.iter().any(|r| r.starts_with("guest share")), "{}", cleaned[0]);
        assert!(!folder.exists());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    }

    #[test]
    fn a_live_run_releases_its_guest_files() {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
        let ledger = Ledger::create(&dir.path().join("state"), "run2").unwrap();
        ledger.set_scratch(OwnedDir::open_or_make(&dir.path().join("scratch"), FolderRole::Scratch).unwrap()).unwrap();
        let files = GuestFiles::make(&ledger, "run2", "xfs", 1 << 20).unwrap();
        let folder = files.dir.clone();
        std::fs::write(files.share.join("status"), "0").unwrap();
        files.release().unwrap();
        assert!(!folder.exists());
    }
}
