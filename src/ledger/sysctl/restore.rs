//! Putting a saved sysctl value back, as a ledger's release.
//!
//! The writeback limits come in pairs, `vm.dirty_bytes`/`vm.dirty_ratio`
//! and `vm.dirty_background_bytes`/`vm.dirty_background_ratio`: writing
//! one member zeroes the other, and the kernel refuses `0` for a `_bytes`
//! member. So a pair is saved whole and put back by writing the member
//! that was set (non-zero) before, which zeroes the other as it was.
//!
//! A value that can never be put back (the key is gone, it is read-only,
//! the kernel refuses the old value) is reported once, with what to do,
//! and its ledger entry dropped: keeping it would only repeat the same
//! failure at every later start.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::{proc_path, read};
use crate::error::{Error, Result};

/// Put `key` back to `old` (and, for a pair, its partner to the value
/// saved with it), as a ledger's entry asks; `journal` is the machine
/// journal's entry for the change (none in ledgers older than the
/// journal). A change the journal no longer has open was put back already
/// (by whoever took the exclusive lock after the run died): nothing is
/// written. Otherwise only the holder of the exclusive lock writes.
/// `Ok(Some(why))` when it never can be put back: the caller reports that
/// once and drops the entry.
pub fn restore(key: &str, old: &str, partner: Option<&(String, String)>, journal: Option<&str>) -> Result<Option<String>> {
    if let Some(id) = journal {
        if !super::journal::is_open(id)? {
            return Ok(None);
        }
    }
    if !super::lock::held() {
        return Err(Error::environment(format!(
            "sysctl {key} is not put back yet: a running fslab holds the machine's sysctl lock and may have it set; it is put back by the next start or `fslab cleanup` after that run ends"
        )));
    }
    let outcome = put_back(key, old, partner);
    if let (Some(id), Ok(_)) = (journal, &outcome) {
        super::journal::settle(id)?;
    }
    outcome
}

/// Write `old` back to `key` (a pair as a pair), under the exclusive lock.
pub(super) fn put_back(key: &str, old: &str, partner: Option<&(String, String)>) -> Result<Option<String>> {
    let outcome = match partner {
        Some((partner_key, partner_old)) => restore_pair((key, old), (partner_key, partner_old)),
        None => write_back(key, old),
    };
    match outcome {
        Ok(()) => Ok(None),
        Err(Failure::Never(why)) => Ok(Some(format!("{why}; its ledger entry is dropped"))),
        Err(Failure::Later(e)) => Err(e),
    }
}

/// Why a value was not put back.
#[derive(Debug)]
enum Failure {
    /// It never can be: said once, then forgotten.
    Never(String),
    /// It may work later (`fslab cleanup` retries).
    Later(Error),
}

/// Both members of a pair back as saved: the `_bytes` member if it was
/// set, else the ratio (which zeroes the bytes).
fn restore_pair(first: (&str, &str), second: (&str, &str)) -> std::result::Result<(), Failure> {
    let (bytes, ratio) = if first.0.ends_with("_bytes") { (first, second) } else { (second, first) };
    if bytes.1 != "0" {
        write_back(bytes.0, bytes.1)?;
    } else {
        write_back(ratio.0, ratio.1)?;
        // `dirty_ratio` zeroes `dirty_bytes` only when its value changes:
        // step away and back when it already had the saved value.
        if read(bytes.0).map_err(Failure::Later)? != "0" {
            write_back(ratio.0, if ratio.1 == "1" { "2" } else { "1" })?;
            write_back(ratio.0, ratio.1)?;
        }
    }
    let now = (read(bytes.0).map_err(Failure::Later)?, read(ratio.0).map_err(Failure::Later)?);
    if (now.0.as_str(), now.1.as_str()) != (bytes.1, ratio.1) {
        return Err(Failure::Later(Error::failed(format!(
            "{} and {} read {} and {} after putting back {} and {}",
            bytes.0, ratio.0, now.0, now.1, bytes.1, ratio.1
        ))));
    }
    Ok(())
}

fn write_back(key: &str, value: &str) -> std::result::Result<(), Failure> {
    let path = proc_path(key);
    let Err(e) = fs::write(&path, value) else { return Ok(()) };
    let read_only = fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o222 == 0);
    let root = rustix::process::geteuid().is_root();
    Err(match e.raw_os_error() {
        Some(libc::ENOENT) => Failure::Never(format!(
            "sysctl {key} no longer exists on this kernel, so it cannot be put back to {value}; if it comes back, `sysctl -w {key}={value}` does it"
        )),
        Some(libc::EACCES) if root && read_only => Failure::Never(format!(
            "sysctl {key} is read-only on this kernel, so it cannot be put back to {value} (nor was it changed); nothing to do"
        )),
        Some(libc::EINVAL) => {
            let hint = match super::partner(key) {
                Some(ratio) if value == "0" && key.ends_with("_bytes") => {
                    format!(" ({key}=0 is written by setting {ratio} to the ratio wanted, e.g. `sysctl -w {ratio}=10`)")
                }
                _ => String::new(),
            };
            Failure::Never(format!(
                "the kernel refuses {value} for sysctl {key}, so it cannot be put back; check `sysctl {key}` and set it by hand{hint}"
            ))
        }
        _ => Failure::Later(Error::io(&path, "put the sysctl back", e)),
    })
}
