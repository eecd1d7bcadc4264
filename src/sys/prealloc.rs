//! Preallocation the way programs get it: `fallocate(2)` where the file
//! system has it, and glibc's `posix_fallocate(3)`, which on file systems
//! without it (ext2, ext3) writes a byte into every block instead — the
//! slow fallback seed 000 warns about.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// How the space was reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prealloc {
    /// The file system reserved it (`fallocate(2)`).
    Native,
    /// glibc wrote into every block because the file system has no
    /// fallocate.
    Emulated,
}

/// `posix_fallocate(3)` of `[offset, offset + len)`: tries `fallocate(2)`
/// and falls back to glibc's block-by-block writes when it is not
/// supported; says which happened.
pub fn posix_fallocate(fd: impl AsFd, offset: u64, len: u64) -> io::Result<Prealloc> {
    let fd = fd.as_fd();
    match rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), offset, len) {
        Ok(()) => return Ok(Prealloc::Native),
        Err(rustix::io::Errno::OPNOTSUPP) => {}
        Err(e) => return Err(e.into()),
    }
    let (offset, len) = (to_off(offset)?, to_off(len)?);
    // SAFETY: a plain libc call on a borrowed, open descriptor.
    let rc = unsafe { libc::posix_fallocate(fd.as_raw_fd(), offset, len) };
    if rc == 0 { Ok(Prealloc::Emulated) } else { Err(io::Error::from_raw_os_error(rc)) }
}

fn to_off(n: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(n).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_as_long_as_asked_either_way() {
        let file = tempfile::tempfile().unwrap();
        posix_fallocate(&file, 0, 1 << 20).unwrap();
        assert_eq!(file.metadata().unwrap().len(), 1 << 20);
    }
}
