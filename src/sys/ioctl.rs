//! Small single-value ioctls.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// `FIGETBSZ` (`_IO(0x00, 2)`): the block size the file system uses for
/// this file, as filefrag asks for it.
pub const FIGETBSZ: libc::c_ulong = 2;

/// The file system block size of the file behind `fd`, by `FIGETBSZ`.
pub fn block_size(fd: impl AsFd) -> io::Result<u32> {
    let mut size: libc::c_int = 0;
    // SAFETY: FIGETBSZ writes one int through the pointer, which points at a
    // live, properly aligned c_int; the fd is borrowed for the whole call.
    let rc = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), FIGETBSZ as _, &mut size) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    u32::try_from(size).map_err(|_| io::Error::other("FIGETBSZ returned a negative block size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figetbsz_on_a_regular_file() {
        let file = tempfile::tempfile().unwrap();
        let bs = block_size(&file).unwrap();
        assert!(bs.is_power_of_two() && bs >= 512, "{bs}");
    }
}
