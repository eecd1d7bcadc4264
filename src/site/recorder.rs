//! The recorder: a `qemu-storage-daemon` between the loop device and the
//! image, whose `blklogwrites` node writes every request the device
//! completes into a write log (the dm-log-writes format, `crate::crash`),
//! and whose FUSE export is the one file the loop device is attached to.
//!
//! ```text
//! loop device (buffered) -> FUSE export (a file) -> blklogwrites -> image
//!                                                               \-> raw (size = cap) -> writes.log
//! ```
//!
//! Measured here (QEMU 7.2.22, kernel 6.18): a loop device with direct I/O
//! over the FUSE export corrupts data (fio's verify found 10 bad 4 KiB
//! blocks of 64 MiB at queue depth 16, and mkfs.ext4 left a file system
//! e2fsck refuses, with or without `blklogwrites`): 7.2's export reads the
//! next request into the buffer a write in progress still points at, when
//! requests overlap. A buffered loop device writes its file under the
//! file's lock, one request at a time, and the overlap never comes (0 bad
//! blocks, four writers in four blkio cgroups at once). So the loop device
//! is attached without direct I/O. Every other choice is forced too:
//! `discard=unmap` on the image and the `blklogwrites` node (7.2's export
//! turns the loop device's punch, which write-zeroes becomes, into a
//! discard, which the default `discard=ignore` drops: mkfs.ext4's zeroed
//! journal kept its old bytes); `writethrough` off (on, every write is
//! followed by a flush: the log's flushes would be the export's, not the
//! file system's); `cache.no-flush=on` on the image and log files (the
//! host's disk need not keep them over a power cut; the log's FLUSH
//! entries are the device's flushes all the same, and 4 KiB writes with
//! an fsync every 8 ran at 3,155-10,395 IO/s instead of 3,052-4,385);
//! `allow-other=off`
//! (only root, whose daemon it is, may open the export). The loop device
//! flushes its file as `fsync`, which the export turns into a flush of the
//! node, which `blklogwrites` logs as a FLUSH entry after the image's own
//! flush; a FUA write, which the loop device cannot do, reaches the log as
//! the write then a flush.
//!
//! The daemon is started by the path checked here (root's, in folders only
//! root can write), with no environment, in its own process group (so a
//! Ctrl-C reaches fslab, which stops it in order), killed with fslab if
//! fslab dies (`PR_SET_PDEATHSIG`), and written into the ledger as a
//! `Child` as soon as its pid exists; its FUSE mount and every file it
//! opens are in the ledger before it starts. It is ended by its pid only.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType};

use super::held::Held;
use crate::error::{Error, Result};
use crate::ledger::folder::OwnedDir;
use crate::ledger::walk::{Refusal, Rules, Walked, walk};
use crate::ledger::{Resource, Token};

/// The daemon's program name.
pub const PROGRAM: &str = "qemu-storage-daemon";

/// How long the daemon has to mount its export, and to stop.
const PATIENCE: Duration = Duration::from_secs(10);

/// How much of the daemon's stderr an error quotes.
const QUOTED: u64 = 16 << 10;

/// The recorder's program, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Daemon {
    /// Its canonical path.
    pub path: PathBuf,
    /// Its `--version` line.
    pub version: String,
}

/// Find `qemu-storage-daemon` (on PATH, then in the sbin folders) and
/// check it: a regular file root owns and no one else may write, reached
/// through folders only root can write (sticky ones aside) and no symlink
/// but root's; then that FUSE is there. Exit 3 otherwise, saying what to
/// install or change.
pub fn find_daemon() -> Result<Daemon> {
    let found = super::fs_type::find_program(PROGRAM).ok_or_else(|| {
        Error::environment(format!(
            "{PROGRAM} is not installed, and recording writes (--crash-record) needs it: install qemu-system-common \
             (apt-get install qemu-system-common), which has it"
        ))
    })?;
    let path = checked(&found)?;
    let fuse_in_kernel = std::fs::read_to_string("/proc/filesystems").unwrap_or_default().lines().any(|l| l.ends_with("\tfuse"));
    let fuse_device = rustix::fs::stat("/dev/fuse").is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::CharacterDevice);
    if !fuse_in_kernel || !fuse_device {
        return Err(Error::environment(
            "recording writes (--crash-record) exports the image through FUSE, and this machine has no /dev/fuse or \
             no fuse in /proc/filesystems: load it (modprobe fuse)",
        ));
    }
    let out = Command::new(&path).arg("--version").env_clear().stdin(Stdio::null()).output();
    let version = out.ok().filter(|o| o.status.success()).and_then(|o| {
        String::from_utf8_lossy(&o.stdout).lines().next().map(|l| l.trim().to_string())
    });
    let version = version.ok_or_else(|| Error::environment(format!("{}: `--version` does not run; reinstall qemu-system-common", path.display())))?;
    Ok(Daemon { path, version })
}

/// `found`, walked with root as the only owner trusted and no folder on
/// the way anyone else could change, to a regular file of root's that no
/// one else may write: its canonical path.
fn checked(found: &Path) -> Result<PathBuf> {
    let rules = Rules { trusted: 0, strict: true, create: false };
    let refused = |why: String| {
        Error::environment(format!(
            "{}: fslab runs it as root to record writes, and {why}: whoever could change it could run code as root; \
             install it from your distribution's package (root's, in /usr/bin)",
            found.display()
        ))
    };
    let Walked { path, fd, .. } = match walk(found, rules) {
        Ok(walked) => walked,
        Err(Refusal::Io(at, e)) => return Err(Error::io(&at, "look up the recorder", e)),
        Err(Refusal::OpenParent(folder) | Refusal::LinkBelowOpen(_, folder)) => return Err(refused(folder.words(0))),
        Err(Refusal::ForeignLink(link, uid)) => {
            return Err(refused(format!("it is reached through {}, a symbolic link of uid {uid}", link.display())));
        }
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| Error::io(&path, "stat", e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(refused("it is not a regular file".to_string()));
    }
    if stat.st_uid != 0 {
        return Err(refused(format!("it belongs to uid {}, not to root", stat.st_uid)));
    }
    if stat.st_mode & 0o022 != 0 {
        return Err(refused(format!("its group or others may write it (mode {:o})", stat.st_mode & 0o7777)));
    }
    Ok(path)
}

/// `prefix` then the path, with every `,` doubled (QEMU's option syntax
/// reads a single comma as the start of the next option).
pub fn qemu_path(prefix: &str, path: &Path) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut bytes = prefix.as_bytes().to_vec();
    for b in path.as_os_str().as_bytes() {
        bytes.push(*b);
        if *b == b',' {
            bytes.push(b',');
        }
    }
    OsString::from_vec(bytes)
}

/// What the daemon works on: the image, the log (already `cap_bytes`
/// long, all holes) and the empty file its export is mounted on.
#[derive(Debug, Clone)]
pub(super) struct Files {
    pub image: PathBuf,
    pub log: PathBuf,
    pub export: PathBuf,
    pub cap_bytes: u64,
}

impl Files {
    /// The daemon's arguments: the node graph of the module doc.
    pub(super) fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut blockdev = |spec: OsString| args.extend([OsString::from("--blockdev"), spec]);
        let mut image = qemu_path("driver=file,node-name=image,filename=", &self.image);
        image.push(",discard=unmap,cache.no-flush=on");
        blockdev(image);
        let mut log = qemu_path("driver=file,node-name=logfile,filename=", &self.log);
        log.push(",cache.no-flush=on");
        blockdev(log);
        blockdev(format!("driver=raw,node-name=log,file=logfile,size={}", self.cap_bytes).into());
        blockdev("driver=blklogwrites,node-name=writes,file=image,log=log,log-sector-size=512,discard=unmap".into());
        let mut export = qemu_path("type=fuse,id=device,node-name=writes,mountpoint=", &self.export);
        export.push(",writable=on,allow-other=off");
        args.extend([OsString::from("--export"), export]);
        args
    }
}

/// The daemon, running.
#[derive(Debug)]
pub(super) struct Running {
    child: Child,
    token: Token,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Running {
    /// Start `daemon` on `files` with `folder` (the run folder holding the
    /// export's file) as its working folder, and wait until its export is
    /// mounted. Its FUSE mount must already be in the ledger; the daemon
    /// goes there as soon as it has a pid.
    pub(super) fn start(held: &mut Held, daemon: &Path, folder: &OwnedDir, files: &Files) -> Result<Running> {
        let mut command = Command::new(daemon);
        command
            .args(files.args())
            .env_clear()
            .current_dir(folder.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        crate::sys::process::kill_with_parent(&mut command);
        let record = |pid| held.record(Resource::child(pid));
        let (mut child, token) = crate::sys::process::spawn_recorded(&mut command, record).map_err(|not| match not {
            crate::sys::process::NotStarted::Record(e) => e,
            crate::sys::process::NotStarted::Spawn(e) => Error::io(daemon, "start the recorder", e),
        })?;
        let mut pipe = child.stderr.take().expect("piped");
        let stderr = std::thread::spawn(move || {
            let mut said = Vec::new();
            let _ = (&mut pipe).take(QUOTED).read_to_end(&mut said);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            String::from_utf8_lossy(&said).trim().to_string()
        });
        let mut running = Running { child, token, stderr: Some(stderr) };
        running.wait_for_export(folder, &files.export)?;
        Ok(running)
    }

    /// Wait until the export is mounted on its file (the file's device is
    /// no longer its folder's), failing if the daemon ends first or takes
    /// longer than [`PATIENCE`].
    fn wait_for_export(&mut self, folder: &OwnedDir, export: &Path) -> Result<()> {
        let name = export.file_name().unwrap_or_default();
        let deadline = Instant::now() + PATIENCE;
        loop {
            let stat = rustix::fs::statat(folder.fd(), name, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| Error::io(export, "stat the recorder's export", e.into()))?;
            if stat.st_dev != folder.id().dev {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait().map_err(|e| Error::io(export, "wait for the recorder", e))? {
                return Err(Error::failed(format!("the recorder ended ({status}) before its export was mounted: {}", self.said())));
            }
            if Instant::now() >= deadline {
                return Err(Error::failed(format!(
                    "the recorder did not mount its export on {} within {} s: {}",
                    export.display(),
                    PATIENCE.as_secs(),
                    self.said()
                )));
            }
            crate::interrupt::check()?;
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Ask the daemon to end (SIGTERM: it completes what is in flight,
    /// flushes, and unmounts its export), wait for it, and give its ledger
    /// entry back. One that has not ended within [`PATIENCE`] is killed,
    /// and that fails.
    pub(super) fn stop(mut self, held: &mut Held) -> Result<()> {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                _ => break None,
            }
        };
        let outcome = match status {
            Some(status) if status.success() => Ok(()),
            Some(status) => Err(Error::failed(format!("the recorder ended with {status}: {}", self.said()))),
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(Error::failed(format!("the recorder did not end within {} s of SIGTERM and was killed", PATIENCE.as_secs())))
            }
        };
        held.release_one(self.token)?;
        outcome
    }

    /// What the daemon said on stderr (once it has closed it).
    fn said(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let said = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        if said.is_empty() { "it said nothing".to_string() } else { format!("it said: {said}") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_node_graph_logs_every_write_under_a_cap() {
        let files = Files {
            image: "/s/run-ext4/ext4.img".into(),
            log: "/s/run,ext4-rec1/writes.log".into(),
            export: "/s/run-ext4/device".into(),
            cap_bytes: 1 << 30,
        };
        let args: Vec<String> = files.args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args,
            [
                "--blockdev",
                "driver=file,node-name=image,filename=/s/run-ext4/ext4.img,discard=unmap,cache.no-flush=on",
                "--blockdev",
                "driver=file,node-name=logfile,filename=/s/run,,ext4-rec1/writes.log,cache.no-flush=on",
                "--blockdev",
                "driver=raw,node-name=log,file=logfile,size=1073741824",
                "--blockdev",
                "driver=blklogwrites,node-name=writes,file=image,log=log,log-sector-size=512,discard=unmap",
                "--export",
                "type=fuse,id=device,node-name=writes,mountpoint=/s/run-ext4/device,writable=on,allow-other=off",
            ]
        );
    }

    #[test]
    fn a_program_only_root_can_change_is_the_only_one_run() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        use std::os::unix::fs::{PermissionsExt, chown};
        let dir = crate::test_temp::dir("");
        let program = dir.path().join(PROGRAM);
        std::fs::write(&program, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(checked(&program).unwrap(), std::fs::canonicalize(&program).unwrap());
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o775)).unwrap();
        let e = checked(&program).unwrap_err();
        assert!(e.message.contains("may write it (mode 775)"), "{}", e.message);
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        chown(&program, Some(65534), None).unwrap();
        let e = checked(&program).unwrap_err();
        assert!(e.message.contains("belongs to uid 65534"), "{}", e.message);
        chown(&program, Some(0), None).unwrap();
        // A folder on the way nobody owns: swappable by nobody.
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chown(&theirs, Some(65534), None).unwrap();
        let inside = theirs.join(PROGRAM);
        std::fs::copy(&program, &inside).unwrap();
        let e = checked(&inside).unwrap_err();
        assert!(e.message.contains("belongs to uid 65534"), "{}", e.message);
        // A link nobody made.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&program, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
        let e = checked(&link).unwrap_err();
        assert!(e.message.contains("symbolic link of uid 65534"), "{}", e.message);
    }
}
