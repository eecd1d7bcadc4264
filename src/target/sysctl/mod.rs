//! Sysctls set for a run (`--sysctl vm.dirty_ratio=90`) and put back.
//!
//! Every key is checked before anything is made: it exists, it can be
//! read (so its old value can be saved) and written. The old value goes
//! into the ledger before the new one is written, so a killed run's change
//! is undone by the next start; a value the kernel refuses stops the run
//! at once, with what was already written put back. Runs that set sysctls
//! hold the machine's one lock exclusively for their whole life, and every
//! other measuring run holds it shared ([`lock`]): two runs changing the
//! same knob at once would each measure the other's setting and restore
//! each other's values in the wrong order, and a run measuring beside one
//! that set writeback its own way would measure that setting. The old
//! value goes first into the machine's journal ([`journal`]), so whichever
//! run next takes the lock puts it back, whatever its state folder.

mod journal;
mod lock;
mod restore;

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub use lock::{Hold, MACHINE_DIR, SysctlLock, held, lock, lock_in, try_exclusive, try_exclusive_in};
pub use restore::restore;

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
        let mut value = value.trim().to_string();
        if value.is_empty() {
            return Err(format!("`{text}` gives {key} no value; write KEY=VALUE (for example {key}=90)"));
        }
        // The kernel takes bytes as a bare number; people write sizes.
        if key.ends_with("_bytes") && value.ends_with(|c: char| c.is_ascii_alphabetic()) {
            value = crate::units::parse_bytes(&value).map_err(|e| format!("{key}: {e}"))?.to_string();
        }
        Ok(SysctlSetting { key, value })
    }
}

/// The writeback limits given two ways: setting one member makes the
/// kernel zero the other, so they are saved and put back together.
const PAIRS: [(&str, &str); 2] =
    [("vm.dirty_bytes", "vm.dirty_ratio"), ("vm.dirty_background_bytes", "vm.dirty_background_ratio")];

/// The other member of `key`'s pair, if it is one of [`PAIRS`].
pub fn partner(key: &str) -> Option<&'static str> {
    PAIRS.iter().find_map(|&(a, b)| if key == a { Some(b) } else if key == b { Some(a) } else { None })
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
        Err(e) if e.raw_os_error() == Some(libc::EACCES) && rustix::process::geteuid().is_root() => {
            Err(Error::usage(format!(
                "--sysctl {key}: it cannot be read (write-only), so its old value could not be put back; fslab does not set it"
            )))
        }
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

/// Check every setting before anything is made: one member of a pair at
/// most, and each key exists, can be read and can be written. Whether the
/// kernel takes the value is known only by writing it: [`apply`] does, and
/// stops the run at the first refusal.
pub fn check(settings: &[SysctlSetting]) -> Result<()> {
    for (i, a) in settings.iter().enumerate() {
        if let Some(b) = settings[..i].iter().find(|b| partner(&b.key) == Some(a.key.as_str())) {
            return Err(Error::usage(format!(
                "--sysctl {} and --sysctl {} set one limit two ways (the kernel keeps only the last written): give one of them",
                b.key, a.key
            )));
        }
    }
    for setting in settings {
        let key = &setting.key;
        let path = proc_path(key);
        if fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            return Err(Error::usage(format!("--sysctl {key}: a group of sysctls, not one (see `sysctl -a | grep {key}`)")));
        }
        read(key)?;
        if let Err(e) = OpenOptions::new().write(true).open(&path) {
            let read_only = fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o222 == 0);
            return Err(match e.raw_os_error() {
                Some(libc::EACCES) if read_only => {
                    Error::usage(format!("--sysctl {key}: read-only on this kernel, it cannot be set"))
                }
                Some(libc::EROFS) => Error::environment(format!(
                    "--sysctl {key}: /proc/sys is read-only here (a container?): run where sysctls can be changed, or leave --sysctl out"
                )),
                _ => Error::io(&path, "open the sysctl for writing", e),
            });
        }
    }
    Ok(())
}

/// Set every sysctl, each recorded with its old value first (a pair's with
/// both members'). Values that already hold are still recorded (putting
/// them back is harmless). Call with the sysctl lock held, after dead
/// runs' values were put back, so what is read is the machine's own.
/// Returns the ledger entries, in order, for a caller that puts them back
/// early (a case's own sysctls).
pub fn apply(ledger: &Ledger, settings: &[SysctlSetting]) -> Result<Vec<super::ledger::Token>> {
    let mut tokens = Vec::new();
    for setting in settings {
        let old = read(&setting.key)?;
        let partner = match partner(&setting.key) {
            Some(other) => Some((other.to_string(), read(other)?)),
            None => None,
        };
        let journal = Some(journal::record(&setting.key, &old, partner.as_ref())?);
        tokens.push(ledger.record(Resource::Sysctl { key: setting.key.clone(), old, partner, journal })?);
        write(&setting.key, &setting.value)?;
    }
    Ok(tokens)
}

/// Put back, newest first, every change the machine's journal still has
/// open: what runs that died left set. Call right after taking the lock
/// exclusively, before reading any "old" value. Returns what was put back
/// (or can never be), a line each; a value that cannot be put back now is
/// an error (exit 3): the value now is not the machine's own.
pub fn put_back_left() -> Result<Vec<String>> {
    let mut said = Vec::new();
    for change in journal::left_open()? {
        match restore::put_back(&change.key, &change.old, change.partner.as_ref()) {
            Ok(None) => said.push(format!(
                "put back sysctl {} to {}, left set by pid {}, which ended without putting it back",
                change.key, change.old, change.pid
            )),
            Ok(Some(never)) => said.push(never),
            Err(e) => {
                return Err(Error::environment(format!(
                    "sysctl {} was left changed by pid {}, which ended, and cannot be put back to {} now ({}): the value now is not the machine's own; fix that, then run `fslab cleanup`",
                    change.key, change.pid, change.old, e.message
                )));
            }
        }
        journal::settle(&change.id)?;
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_bad_names_are_refused() {
        let e = "vm.dirty_ratio=".parse::<SysctlSetting>().unwrap_err();
        assert!(e.contains("no value"), "{e}");
        assert!("vm.dirty_ratio= ".parse::<SysctlSetting>().is_err());
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
    fn byte_limits_take_sizes() {
        let s: SysctlSetting = "vm.dirty_background_bytes=64M".parse().unwrap();
        assert_eq!(s.value, (64u64 << 20).to_string());
        assert!("vm.dirty_bytes=64Q".parse::<SysctlSetting>().is_err());
        // Only byte counts: other values pass as given.
        let s: SysctlSetting = "kernel.domainname=x".parse().unwrap();
        assert_eq!(s.value, "x");
        assert_eq!(partner("vm.dirty_ratio"), Some("vm.dirty_bytes"));
        assert_eq!(partner("vm.dirty_background_bytes"), Some("vm.dirty_background_ratio"));
        assert_eq!(partner("vm.swappiness"), None);
    }

    #[test]
    fn reading_a_missing_sysctl_is_a_usage_error() {
        let e = read("vm.no_such_knob_here").unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(read("kernel.ostype").unwrap() == "Linux");
    }

    #[test]
    fn unsettable_keys_are_refused_before_anything_is_written() {
        let check_one = |text: &str| check(&[text.parse().unwrap()]).unwrap_err();
        let e = check_one("vm.no_such_knob_here=1");
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        let e = check_one("vm=1");
        assert!(e.message.contains("group"), "{e}");
        let e = check(&["vm.dirty_bytes=64M".parse().unwrap(), "vm.dirty_ratio=20".parse().unwrap()]).unwrap_err();
        assert!(e.message.contains("two ways"), "{e}");
        if rustix::process::geteuid().is_root() {
            let e = check_one("kernel.ostype=Plan9");
            assert_eq!(e.kind, crate::error::ErrorKind::Usage, "{e}");
            assert!(e.message.contains("read-only"), "{e}");
            check(&["vm.dirty_ratio=30".parse().unwrap()]).unwrap();
        }
    }
}
