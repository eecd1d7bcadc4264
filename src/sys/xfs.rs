//! `XFS_IOC_FSGEOMETRY_V1`: the XFS geometry any user may ask for on any
//! file of the file system (no root, no device access).

use std::io;
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd};

/// `struct xfs_fsop_geom_v1` from xfsprogs' `xfs_fs.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct RawGeometryV1 {
    blocksize: u32,
    rtextsize: u32,
    agblocks: u32,
    agcount: u32,
    logblocks: u32,
    sectsize: u32,
    inodesize: u32,
    imaxpct: u32,
    datablocks: u64,
    rtblocks: u64,
    rtextents: u64,
    logstart: u64,
    uuid: [u8; 16],
    sunit: u32,
    swidth: u32,
    version: i32,
    flags: u32,
    logsectsize: u32,
    rtsectsize: u32,
    dirblocksize: u32,
}

/// `XFS_IOC_FSGEOMETRY_V1` = `_IOR('X', 100, struct xfs_fsop_geom_v1)`.
pub const XFS_IOC_FSGEOMETRY_V1: libc::c_ulong =
    (2 << 30) | ((size_of::<RawGeometryV1>() as libc::c_ulong) << 16) | ((b'X' as libc::c_ulong) << 8) | 100;

/// The parts of the XFS geometry fslab uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XfsGeometry {
    /// File system block size in bytes.
    pub block_size: u32,
    /// Blocks per allocation group.
    pub ag_blocks: u32,
    /// Number of allocation groups.
    pub ag_count: u32,
    /// Blocks in the data section.
    pub data_blocks: u64,
}

/// The geometry of the XFS file system holding `fd`'s file.
pub fn geometry(fd: impl AsFd) -> io::Result<XfsGeometry> {
    let mut raw = RawGeometryV1::default();
    // SAFETY: the ioctl writes one xfs_fsop_geom_v1 through the pointer,
    // which points at a live repr(C) struct of exactly that layout.
    let rc = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), XFS_IOC_FSGEOMETRY_V1 as _, &mut raw) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(XfsGeometry {
        block_size: raw.blocksize,
        ag_blocks: raw.agblocks,
        ag_count: raw.agcount,
        data_blocks: raw.datablocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_xfs_fs_h() {
        assert_eq!(size_of::<RawGeometryV1>(), 112);
        assert_eq!(XFS_IOC_FSGEOMETRY_V1, 0x8070_5864);
    }
}
