//! The kernel log (`/dev/kmsg`), read from the moment it was opened: what
//! the kernel says about a target while fslab works on it — why it refused
//! a mount option, or an I/O error on the device during a case — which no
//! system call returns.

use std::os::fd::OwnedFd;

use rustix::fs::{Mode, OFlags, SeekFrom};
use rustix::io::Errno;

/// `/dev/kmsg`, positioned past every record logged before it was opened.
#[derive(Debug)]
pub struct KernelLog(OwnedFd);

impl KernelLog {
    /// Open the log at its end; `None` when it cannot be read (not root,
    /// or `kernel.dmesg_restrict`).
    pub fn from_now() -> Option<KernelLog> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::open("/dev/kmsg", flags, Mode::empty()).ok()?;
        rustix::fs::seek(&fd, SeekFrom::End(0)).ok()?;
        Some(KernelLog(fd))
    }

    /// Hand every record logged since the last read to `each`, as its level
    /// (`0` emergency … `7` debug) and the first line of its message.
    /// Returns whether records were overwritten before they could be read.
    pub fn read_new(&mut self, mut each: impl FnMut(u8, &str)) -> bool {
        let mut lost = false;
        let mut buf = vec![0u8; 8192];
        loop {
            match rustix::io::read(&self.0, &mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if let Some((level, message)) = parse_record(&String::from_utf8_lossy(&buf[..n])) {
                        each(level, message);
                    }
                }
                // Overwritten before they were read: go on with the oldest
                // one left.
                Err(Errno::PIPE) => lost = true,
                Err(Errno::INTR) => {}
                Err(_) => break, // EAGAIN: read to the end
            }
        }
        lost
    }
}

/// A record's level and first message line: `PRIORITY,SEQ,USEC,FLAGS;TEXT`,
/// then ` KEY=VALUE` lines; the priority holds facility * 8 + level.
pub fn parse_record(record: &str) -> Option<(u8, &str)> {
    let (prefix, rest) = record.split_once(';')?;
    let level = prefix.split(',').next()?.parse::<u32>().ok()? & 7;
    Some((level as u8, rest.split('\n').next().unwrap_or(rest).trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_gives_its_level_and_first_line() {
        assert_eq!(parse_record("3,100,5,-;loop1: writeback error\n SUBSYSTEM=block\n"), Some((3, "loop1: writeback error")));
        // Facility 1 (user), level 4.
        assert_eq!(parse_record("12,7,9,-;hello"), Some((4, "hello")));
        assert_eq!(parse_record("no header"), None);
    }
}
