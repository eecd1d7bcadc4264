//! Errors the kernel logs about a case's device while the case runs.
//!
//! A write the device could not store does not always come back to the
//! program: writeback fails long after `write` returned, a loop device
//! over an image on a full disk fails its bios ("critical space allocation
//! error, dev loop0"), ext4 says "failed to convert unwritten extents --
//! potential data loss" and goes on. `syncfs` reports some of this, not
//! all (an error seen by another opener is consumed there), and there is
//! no per-device error counter for loop devices. So the harness reads
//! `/dev/kmsg` for the case's window: every record at error level or worse
//! (`KERN_ERR` = 3 and below) that names the case's device as a word fails
//! the case, with the first such line as its reason.
//!
//! Left out: records about "operation not supported" (a WRITE_ZEROES or
//! discard the device cannot do; the kernel falls back, nothing is lost).
//! Without read access to `/dev/kmsg` (not root, with
//! `kernel.dmesg_restrict=1`) there is no watch, and only `syncfs` speaks.

use crate::ledger::kmsg;

/// `KERN_ERR`: this level and the more severe ones count.
const ERROR_LEVEL: u8 = 3;
/// Messages at error level that report no lost data.
const HARMLESS: &[&str] = &["operation not supported error"];
/// The lines kept for the reason.
const KEPT_LINES: usize = 3;

/// A watch on the kernel log from the moment it was started.
pub(super) struct KernelLog {
    log: kmsg::KernelLog,
    devices: Vec<String>,
}

impl KernelLog {
    /// Watch for errors about `devices` (kernel names: `loop3`, `sdb`)
    /// from now on; `None` without devices or without read access to the
    /// kernel log.
    pub(super) fn watch(devices: Vec<String>) -> Option<KernelLog> {
        if devices.is_empty() {
            return None;
        }
        Some(KernelLog { log: kmsg::KernelLog::from_now()?, devices })
    }

    /// Why the case must fail, if the kernel logged errors about its
    /// device since [`watch`](KernelLog::watch): how many, and the first
    /// few lines.
    pub(super) fn failure(&mut self) -> Option<String> {
        let mut found: Vec<String> = Vec::new();
        let mut count = 0usize;
        let devices = &self.devices;
        let lost = self.log.read_new(|level, message| {
            if is_error_about(level, message, devices) {
                count += 1;
                if found.len() < KEPT_LINES {
                    found.push(message.chars().take(240).collect());
                }
            }
        });
        if count == 0 {
            return None;
        }
        let more = if count > found.len() { format!(" (and {} more)", count - found.len()) } else { String::new() };
        let lost = if lost { "; some kernel log records were overwritten before they were read" } else { "" };
        Some(format!(
            "the kernel logged {count} error{} about {} during the case: {}{more}{lost}; what was written there \
             may be lost",
            if count == 1 { "" } else { "s" },
            self.devices.join(", "),
            found.join(" | "),
        ))
    }
}

/// Whether a record at `level` saying `message` is an error that names one
/// of `devices` as a whole word.
fn is_error_about(level: u8, message: &str, devices: &[String]) -> bool {
    level <= ERROR_LEVEL
        && !HARMLESS.iter().any(|h| message.contains(h))
        && devices.iter().any(|d| names_word(message, d))
}

/// Whether `word` occurs in `text` with no letter, digit or `_` on
/// either side (`loop1` is not in `loop10`, nor in `loop1p2`).
fn names_word(text: &str, word: &str) -> bool {
    let part_of_name = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        !part_of_name(text[..at].chars().next_back()) && !part_of_name(text[at + word.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devices() -> Vec<String> {
        vec!["loop1".to_string()]
    }

    /// The message of a raw `/dev/kmsg` record if the watch counts it.
    fn error_about<'a>(record: &'a str, devices: &[String]) -> Option<&'a str> {
        let (level, message) = kmsg::parse_record(record)?;
        is_error_about(level, message, devices).then_some(message)
    }

    #[test]
    fn errors_that_name_the_device_count_and_others_do_not() {
        // Lines this kernel logged for a loop device over an image on a
        // full tmpfs.
        for line in [
            "3,100,5,-;critical space allocation error, dev loop1, sector 394288 op 0x1:(WRITE) flags 0x0",
            "3,101,5,-;loop1: writeback error on inode 131, offset 0, sector 153680",
            "0,102,5,-;EXT4-fs (loop1): failed to convert unwritten extents to written extents -- potential data loss!",
            "3,103,5,-;Buffer I/O error on device loop1, logical block 22529\n SUBSYSTEM=block\n DEVICE=b7:1",
            "1,104,5,-;XFS (loop1): Filesystem has been shut down due to log error (0x2).",
        ] {
            assert!(error_about(line, &devices()).is_some(), "{line}");
        }
        for line in [
            "5,200,5,-;XFS (loop1): Mounting V5 Filesystem",
            "4,201,5,-;EXT4-fs warning (device loop1): ext4_end_bio:368: I/O error 3 writing to inode 12",
            "3,202,5,-;critical space allocation error, dev loop10, sector 1",
            "3,203,5,-;I/O error, dev loop1p2, sector 8",
            "3,204,5,-;operation not supported error, dev loop1, sector 8 op 0x9:(WRITE_ZEROES)",
            "not a record",
        ] {
            assert!(error_about(line, &devices()).is_none(), "{line}");
        }
        // Facility bits above the level are ignored (kernel messages are
        // facility 0; user ones written to /dev/kmsg are not).
        assert!(error_about("11,300,5,-;loop1: writeback error", &devices()).is_some());
        assert_eq!(error_about("3,1,2,-;loop1: x\n K=V", &devices()), Some("loop1: x"));
    }

    #[test]
    fn a_watch_sees_errors_logged_after_it_started_and_not_before() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipping: writing to /dev/kmsg needs root");
            return;
        }
        // A name no device has.
        let name = format!("fslabtest{}", std::process::id());
        let log = |text: &str| std::fs::write("/dev/kmsg", format!("<3>{text}\n")).unwrap();
        log(&format!("{name}: an error before the watch"));
        let mut watch = KernelLog::watch(vec![name.clone()]).expect("root reads /dev/kmsg");
        assert_eq!(watch.failure(), None);
        log(&format!("{name}: an error during the case"));
        let failure = watch.failure().expect("the error is seen");
        assert!(failure.contains("1 error about") && failure.contains("during the case"), "{failure}");
        assert!(!failure.contains("before the watch"), "{failure}");
    }
}
