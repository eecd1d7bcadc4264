//! A crash state's file system checker (`e2fsck -f -n`, `xfs_repair -n`,
//! `btrfs check --readonly`), started on the unmounted state's device and
//! waited for later, so that it runs while the next state is made.
//!
//! The checker runs after the mount's recovery: `xfs_repair -n` refuses a
//! dirty log, and what a crash leaves for recovery is no damage. Started
//! through the ledger's tool command, it dies with fslab; a check dropped
//! before it is waited for (an error, Ctrl-C) is ended then, by its own
//! process id.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Child, Stdio};

use super::FsType;
use super::held::Held;
use super::mounted::os;
use crate::error::{Error, Result};

/// The read-only checker of `fs` and its arguments.
fn checker(fs: FsType) -> (&'static str, &'static [&'static str]) {
    match fs {
        // No prefetch threads and a small buffer hash: the same check, and
        // at 512 MiB 7-15 ms where the defaults (sized for the machine's
        // memory) took 13-39 ms; no slower at 30,000 files.
        FsType::Xfs => ("xfs_repair", &["-n", "-P", "-o", "bhash=1024"]),
        FsType::Btrfs => ("btrfs", &["check", "--readonly"]),
        _ => ("e2fsck", &["-f", "-n"]),
    }
}

/// A checker running on one state's device.
pub(super) struct Check {
    /// `None` once waited for.
    child: Option<Child>,
    fs: FsType,
}

impl Check {
    /// Start `fs`'s read-only checker on `device`, its output kept.
    pub(super) fn start(held: &Held, fs: FsType, device: &Path) -> Result<Check> {
        let (program, args) = checker(fs);
        let path = super::fs_type::find_program(program)
            .ok_or_else(|| Error::environment(format!("{program} is not installed: install the {} package", fs.package())))?;
        let argv: Vec<OsString> = args.iter().map(|a| os(a)).chain([device.as_os_str().to_owned()]).collect();
        let child = held
            .ledger
            .tool_command(&path)
            .args(&argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(&path, "run", e))?;
        Ok(Check { child: Some(child), fs })
    }

    /// Wait for the checker: `None` when it found the file system clean,
    /// else its exit status and last lines.
    pub(super) fn finish(mut self) -> Result<Option<String>> {
        let (program, args) = checker(self.fs);
        let child = self.child.take().expect("a check is waited for once");
        let out = child.wait_with_output().map_err(|e| Error::io(Path::new(program), "wait for", e))?;
        if out.status.success() {
            return Ok(None);
        }
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).rev().take(3).collect();
        let shown: Vec<&str> = tail.into_iter().rev().collect();
        let status = out.status.code().map_or_else(|| "a signal".to_string(), |c| format!("exit {c}"));
        Ok(Some(format!("{program} {} ended with {status}: {}", args.join(" "), shown.join(" / "))))
    }
}

impl Drop for Check {
    /// A check never waited for (the judging ended early) is ended: it
    /// holds the state's loop device open.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Ledger;
    use std::os::unix::fs::FileExt;

    /// A 64 MiB ext4 image made by mke2fs in `dir`.
    fn ext4_image(dir: &Path) -> std::path::PathBuf {
        let image = dir.join("state.img");
        let made = std::process::Command::new("mke2fs")
            .args(["-q", "-F", "-t", "ext4"])
            .arg(&image)
            .arg("64M")
            .status()
            .expect("mke2fs runs");
        assert!(made.success());
        image
    }

    #[test]
    fn a_check_says_clean_or_what_it_found_and_one_never_waited_for_is_ended() {
        let dir = crate::test_temp::dir("");
        let ledger = Ledger::for_tests();
        let held = Held::new(&ledger);
        let image = ext4_image(dir.path());
        assert_eq!(Check::start(&held, FsType::Ext4, &image).unwrap().finish().unwrap(), None);
        // The first block group's descriptors overwritten: damage e2fsck -n
        // reports (exit 4, or 8 where it cannot go on).
        let file = std::fs::OpenOptions::new().write(true).open(&image).unwrap();
        file.write_all_at(&[0xa5; 4096], 4096).unwrap();
        drop(file);
        let found = Check::start(&held, FsType::Ext4, &image).unwrap().finish().unwrap().expect("damage found");
        assert!(found.starts_with("e2fsck -f -n ended with exit "), "{found}");
        // Dropped before it is waited for: its process is ended and reaped.
        let check = Check::start(&held, FsType::Ext4, &image).unwrap();
        let pid = check.child.as_ref().unwrap().id();
        drop(check);
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the dropped check's process {pid} is still there");
    }
}
