//! Sysctls set for a run (`--sysctl vm.dirty_ratio=90`) and put back.
//!
//! The old value goes into the ledger before the new one is written, so a
//! killed run's change is undone by the next start. Runs that set sysctls
//! take one machine-wide lock for their whole life: two runs changing the
//! same knob at once would each measure the other's setting and restore
//! each other's values in the wrong order.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;

use super::ledger::{Ledger, Resource};
use crate::error::{Error, Result};

/// One `KEY=VALUE` asked for on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysctlSetting {
    /// Dotted name, e.g. `vm.dirty_ratio`.
    pub key: String,
    /// The value to write.
    pub value: String,
}

impl std::str::FromStr for SysctlSetting {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not KEY=VALUE (for example vm.dirty_ratio=90)"))?;
        let key = key.trim().replace('/', ".");
        if key.is_empty()
            || key.split('.').any(|part| part.is_empty() || part == "..")
            || !key.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        {
            return Err(format!("`{key}` is not a sysctl name (for example vm.dirty_ratio)"));
        }
        Ok(SysctlSetting { key, value: value.trim().to_string() })
    }
}

/// `/proc/sys/...` for a dotted key.
pub fn proc_path(key: &str) -> PathBuf {
    Path::new("/proc/sys").join(key.replace('.', "/"))
}

/// The current value, without the trailing newline.
pub fn read(key: &str) -> Result<String> {
    let path = proc_path(key);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(text.trim_end_matches('\n').to_string()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::usage(format!(
            "--sysctl {key}: no such sysctl on this kernel ({} does not exist)",
            path.display()
        ))),
        Err(e) => Err(Error::io(&path, "read the sysctl", e)),
    }
}

/// Write `value` to `key`.
pub fn write(key: &str, value: &str) -> Result<()> {
    let path = proc_path(key);
    fs::write(&path, value).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) => Error::usage(format!("--sysctl {key}={value}: the kernel refused the value")),
        _ => Error::io(&path, "write the sysctl", e),
    })
}

/// The machine-wide lock held while a run's sysctls are in force.
#[derive(Debug)]
pub struct SysctlLock {
    _file: File,
}

/// Take the sysctl lock in `state_dir`, waiting for another run that
/// holds it (and saying so).
pub fn lock(state_dir: &Path) -> Result<SysctlLock> {
    fs::create_dir_all(state_dir).map_err(|e| Error::io(state_dir, "create the state folder", e))?;
    let path = state_dir.join("sysctl.lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, "open the sysctl lock", e))?;
    if rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive).is_err() {
        eprintln!("fslab: waiting for another fslab run that has sysctls set");
        rustix::fs::flock(file.as_fd(), FlockOperation::LockExclusive)
            .map_err(|e| Error::io(&path, "lock", e.into()))?;
    }
    Ok(SysctlLock { _file: file })
}

/// Set every sysctl, each recorded with its old value first. Values that
/// already hold are still recorded (restoring them is harmless).
pub fn apply(ledger: &Ledger, settings: &[SysctlSetting]) -> Result<()> {
    for setting in settings {
        let old = read(&setting.key)?;
        ledger.record(Resource::Sysctl { key: setting.key.clone(), old })?;
        write(&setting.key, &setting.value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_bad_names_are_refused() {
        let s: SysctlSetting = "vm.dirty_ratio=90".parse().unwrap();
        assert_eq!(s, SysctlSetting { key: "vm.dirty_ratio".into(), value: "90".into() });
        let s: SysctlSetting = "vm/dirty_bytes = 0".parse().unwrap();
        assert_eq!(s.key, "vm.dirty_bytes");
        assert_eq!(s.value, "0");
        assert!("vm.dirty_ratio".parse::<SysctlSetting>().is_err());
        assert!("../../etc/passwd=1".parse::<SysctlSetting>().is_err());
        assert!("vm..x=1".parse::<SysctlSetting>().is_err());
        assert_eq!(proc_path("vm.dirty_ratio"), Path::new("/proc/sys/vm/dirty_ratio"));
    }

    #[test]
    fn reading_a_missing_sysctl_is_a_usage_error() {
        let e = read("vm.no_such_knob_here").unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(read("kernel.ostype").unwrap() == "Linux");
    }
}
