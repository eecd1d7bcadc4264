//! Giving one resource back: what a [`Resource`] is in words, its release
//! (refused unless it can be proved fslab's), and the loop devices, mounts
//! and processes a release finds and ends.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::mount::UnmountFlags;
use rustix::process::{Pid, Signal};

use super::Resource;
use super::folder::OwnedDir;
use super::proof::{self, Outcome, Proof};
use crate::error::{Error, Result};
/// A resource in words, for what cleanup prints.
pub fn describe(resource: &Resource) -> String {
    match resource {
        Resource::RunDir(p) => format!("run folder {}", p.display()),
        Resource::Image(p) => format!("image {}", p.display()),
        Resource::File(p) => format!("file {}", p.display()),
        Resource::Loop(p) => format!("loop device over {}", p.display()),
        Resource::MountPoint(p) | Resource::MountFile(p) => format!("mount point {}", p.display()),
        Resource::Mount(p) => format!("mount on {}", p.display()),
        Resource::Sysctl { key, old, partner: None, .. } => format!("sysctl {key} (back to {old})"),
        Resource::Sysctl { key, old, partner: Some((other, was)), .. } => {
            format!("sysctl {key} (back to {old}, with {other} {was})")
        }
        Resource::TraceInstance(p) => format!("trace instance {}", p.display()),
        Resource::WorkDir(p) => format!("work folder {}", p.display()),
        Resource::GuestShare(p) => format!("guest share {}", p.display()),
        Resource::Child { pid, .. } => format!("process group {pid}"),
        Resource::MemoryCgroup(p) => format!("memory cgroup {}", p.display()),
        Resource::CacheImage(p) => format!("cache entry written at {} (removed if incomplete)", p.display()),
    }
}

/// Give one resource back, if it can be proved fslab's: `proof` is what
/// was recorded once it was made, `scratch` the run's scratch folder (held,
/// and checked to be the one recorded). A resource already gone is
/// released; one that is not provably fslab's is refused (`Ok(Some(why))`).
pub fn release(resource: &Resource, proof: Option<&Proof>, scratch: Option<&OwnedDir>) -> Outcome {
    if let Resource::WorkDir(p) | Resource::GuestShare(p) = resource {
        if !super::remove::named_as_work_folder(p) {
            return Ok(Some(format!("not made by fslab: {} is not named as fslab names work folders", p.display())));
        }
        // What the work mounted over its folder hides the folder made.
        super::remove::unmount_in_work_folder(p)?;
        if let Some(outcome) = proof::work_dir_unproven(p, proof) {
            return outcome;
        }
    }
    match resource {
        Resource::RunDir(p) | Resource::MountPoint(p) => proof::remove_dir(scratch, p, proof),
        Resource::TraceInstance(p) => {
            // Only a folder named as fslab names its instances, in a
            // tracefs `instances` folder.
            let parent_ok = p.parent().and_then(|d| d.file_name()).is_some_and(|n| n == "instances");
            let name_ok = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fslab-"));
            if !(parent_ok && name_ok) {
                return Ok(Some(format!("not made by fslab: {} is not a trace instance fslab names", p.display())));
            }
            ignore_missing(fs::remove_dir(p), p, "remove").map(|()| None)
        }
        Resource::Image(p) | Resource::File(p) => proof::remove_image(scratch, p, proof),
        Resource::MountFile(p) => proof::remove_mount_file(scratch, p, proof),
        Resource::WorkDir(p) | Resource::GuestShare(p) => super::remove::remove_work_folder(p).map(|()| None),
        Resource::Loop(image) => proof::detach_loops(scratch, image, proof),
        Resource::Mount(p) => proof::unmount(scratch, p, proof),
        Resource::Sysctl { key, old, partner, journal } => {
            super::sysctl::restore(key, old, partner.as_ref(), journal.as_deref())
        }
        Resource::Child { pid, start_ticks } => {
            kill_group(*pid, *start_ticks);
            Ok(None)
        }
        Resource::MemoryCgroup(p) => super::cgroup::release(p),
        Resource::CacheImage(p) => super::cache_write::release_write(p, proof),
    }
}

/// Detach every loop device whose backing file is at `image`, by path
/// alone, and wait until they are gone: for loop devices a test attached
/// itself with losetup, never for what a ledger names.
pub fn detach_loops_over(image: &Path) -> Result<()> {
    for device in loops_over(image) {
        let out = Command::new("losetup").arg("-d").arg(&device).output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) if loops_over(image).contains(&device) => {
                return Err(Error::failed(format!(
                    "losetup -d {}: {}",
                    device.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                )));
            }
            Ok(_) => {}
            Err(e) => return Err(Error::io(Path::new("losetup"), "run", e)),
        }
    }
    // `losetup -d` succeeds at once on a device still open somewhere.
    proof::wait_detached(image, || loops_over(image).into_iter().next())
}

fn ignore_missing(result: io::Result<()>, path: &Path, what: &str) -> Result<()> {
    match result {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(Error::io(path, what, e)),
        _ => Ok(()),
    }
}

/// Loop devices whose backing file is `image`, from sysfs.
pub fn loops_over(image: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let want = image.as_os_str().as_bytes();
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir("/sys/block") else { return found };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.as_bytes().starts_with(b"loop") {
            continue;
        }
        if proof::backing_path(&entry.path()).is_some_and(|backing| backing == want) {
            found.push(Path::new("/dev").join(&name));
        }
    }
    found
}

/// Unmount `path` if something is mounted there, waiting up to five
/// seconds while it is busy, then detaching lazily so the mount is gone
/// from the namespace even if a stray process still holds a file.
pub fn unmount(path: &Path) -> Result<()> {
    if crate::layout::mounts::find_by_mount_point(path).is_none() {
        return Ok(());
    }
    unmount_patiently(path, UnmountFlags::empty()).map_err(|(what, e)| Error::io(path, what, e.into()))
}

/// Unmount `target` with `flags`: while it is busy, retry for five
/// seconds, then detach it lazily (it leaves the namespace at once, and
/// goes when its last user does). Not, or no longer, a mount point is
/// done. An error names the step that failed (`unmount` or `detach the
/// busy mount`).
pub(super) fn unmount_patiently(target: &Path, flags: UnmountFlags) -> std::result::Result<(), (&'static str, Errno)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match rustix::mount::unmount(target, flags) {
            Ok(()) | Err(Errno::INVAL) | Err(Errno::NOENT) => return Ok(()),
            Err(Errno::BUSY) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(Errno::BUSY) => {
                return rustix::mount::unmount(target, flags | UnmountFlags::DETACH)
                    .map_err(|e| ("detach the busy mount", e));
            }
            Err(e) => return Err(("unmount", e)),
        }
    }
}

/// A process's start time in clock ticks since boot (`/proc/PID/stat`
/// field 22), the second half of its identity.
pub fn start_ticks(pid: i32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces or ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// SIGKILL the process group a measured command led, if it is still
/// ours: the leader alive with the recorded start time, or the leader gone
/// (its pid stays reserved while group members live, so they are ours);
/// then wait, up to [`GROUP_GONE`], until no member is left, so "released"
/// means gone and not merely signalled (a killed process on a loaded
/// machine can take a while to exit, holding its folder meanwhile).
fn kill_group(pid: i32, recorded: u64) {
    let Some(pid) = Pid::from_raw(pid) else { return };
    match start_ticks(pid.as_raw_nonzero().get()) {
        Some(ticks) if ticks != recorded => {} // a different process now
        _ => {
            if rustix::process::kill_process_group(pid, Signal::KILL).is_ok() {
                let deadline = std::time::Instant::now() + GROUP_GONE;
                while rustix::process::test_kill_process_group(pid).is_ok() && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
    }
}

/// How long a release waits for a killed group's members to exit (a
/// zombie no one reaps still counts as a member, so the wait is bounded).
const GROUP_GONE: std::time::Duration = std::time::Duration::from_secs(2);
