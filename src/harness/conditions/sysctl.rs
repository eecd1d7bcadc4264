//! Sysctls set for a run (`--sysctl vm.dirty_ratio=90`): checked before
//! anything is made, then written, each old value first into the ledger
//! and the machine's journal ([`crate::ledger::sysctl`], which holds the
//! lock and puts values back).

use std::fs::{self, OpenOptions};
use std::os::unix::fs::PermissionsExt;

use crate::error::{Error, Result};
use crate::ledger::sysctl::{journal, partner, proc_path, read};
use crate::ledger::{Ledger, Resource, Token};

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
pub fn apply(ledger: &Ledger, settings: &[SysctlSetting]) -> Result<Vec<Token>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
