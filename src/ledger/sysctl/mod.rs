//! Sysctls set for a run (`--sysctl vm.dirty_ratio=90`) and put back:
//! the machine-wide side (reading, the lock, the journal, restoring);
//! checking and writing a setting is the harness's
//! (`harness::conditions::sysctl`).
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

pub mod journal;
mod lock;
mod restore;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use lock::{Hold, MACHINE_DIR, Pinned, SysctlLock, held, lock, lock_in, pin_shared, try_exclusive, try_exclusive_in};
pub use restore::restore;

use crate::error::{Error, Result};

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
    fn reading_a_missing_sysctl_is_a_usage_error() {
        let e = read("vm.no_such_knob_here").unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(read("kernel.ostype").unwrap() == "Linux");
    }
}

