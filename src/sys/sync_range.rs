//! `sync_file_range(2)`, which rustix does not wrap: start writeback of a
//! file's dirty pages, or wait for it, without a journal commit.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Start writeback of every dirty page (`SYNC_FILE_RANGE_WRITE`).
pub const WRITE: u32 = libc::SYNC_FILE_RANGE_WRITE;
/// Wait for writeback already under way (`SYNC_FILE_RANGE_WAIT_BEFORE`).
pub const WAIT_BEFORE: u32 = libc::SYNC_FILE_RANGE_WAIT_BEFORE;

/// `sync_file_range(fd, 0, 0, flags)`: the whole file.
pub fn whole_file(fd: impl AsFd, flags: u32) -> io::Result<()> {
    // SAFETY: a plain syscall on a descriptor the caller keeps open for the
    // call; no memory is passed.
    let rc = unsafe { libc::sync_file_range(fd.as_fd().as_raw_fd(), 0, 0, flags) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_match_the_kernel_headers() {
        assert_eq!(WRITE, 2);
        assert_eq!(WAIT_BEFORE, 1);
        let f = tempfile::tempfile().unwrap();
        whole_file(&f, WRITE).unwrap();
        whole_file(&f, WAIT_BEFORE).unwrap();
    }
}
