//! Loop devices by ioctl: attach a file fslab holds open, ask a device
//! which file backs it, detach it.
//!
//! The image is attached by its descriptor (`LOOP_CONFIGURE`), never by a
//! path that could be swapped between its creation and the attach; the
//! free device comes from `/dev/loop-control` (`LOOP_CTL_GET_FREE`). This is
//! what `losetup --find --direct-io=on` does, minus the path (or, without
//! direct I/O, `losetup --find`).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::OpenOptionsExt;

const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
/// `BLKGETDISKSEQ`, `_IOR(0x12, 128, __u64)`.
const BLKGETDISKSEQ: libc::c_ulong = 0x8008_1280;
/// Detach when the last opener closes the device.
const LO_FLAGS_AUTOCLEAR: u32 = 4;
/// The device reads and writes its backing file with O_DIRECT.
const LO_FLAGS_DIRECT_IO: u32 = 16;

/// `struct loop_info64` from `<linux/loop.h>`, 232 bytes (the kernel reads
/// and writes the fields fslab never looks at).
#[repr(C)]
#[allow(dead_code)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` from `<linux/loop.h>`.
#[repr(C)]
#[allow(dead_code)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

fn zeroed_info() -> LoopInfo64 {
    LoopInfo64 {
        lo_device: 0,
        lo_inode: 0,
        lo_rdevice: 0,
        lo_offset: 0,
        lo_sizelimit: 0,
        lo_number: 0,
        lo_encrypt_type: 0,
        lo_encrypt_key_size: 0,
        lo_flags: 0,
        lo_file_name: [0; 64],
        lo_crypt_name: [0; 64],
        lo_encrypt_key: [0; 32],
        lo_init: [0; 2],
    }
}

/// A loop device fslab attached: its number and an open descriptor, which
/// keeps it attached (it detaches itself on the last close, so a killed run
/// leaves it attached no longer than its mount).
#[derive(Debug)]
pub struct AttachedLoop {
    /// N of `/dev/loopN`.
    pub number: u32,
    /// The open device.
    pub device: File,
}

/// Attach the file behind `backing` to a free loop device, with autoclear,
/// and with direct I/O when `direct_io` (else the device reads and writes
/// its file through the page cache, one request at a time). A device
/// another process takes between "which is free" and the attach is skipped
/// for the next free one.
pub fn attach(backing: impl AsFd, direct_io: bool) -> io::Result<AttachedLoop> {
    let control = OpenOptions::new().read(true).write(true).custom_flags(libc::O_CLOEXEC).open("/dev/loop-control")?;
    let mut last = io::Error::other("no free loop device");
    for _ in 0..16 {
        // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a number.
        let number = unsafe { libc::ioctl(control.as_raw_fd(), LOOP_CTL_GET_FREE as _) };
        if number < 0 {
            return Err(io::Error::last_os_error());
        }
        let path = format!("/dev/loop{number}");
        let device = OpenOptions::new().read(true).write(true).custom_flags(libc::O_CLOEXEC).open(&path)?;
        let mut config = LoopConfig {
            fd: backing.as_fd().as_raw_fd() as u32,
            block_size: 0,
            info: zeroed_info(),
            reserved: [0; 8],
        };
        config.info.lo_flags = LO_FLAGS_AUTOCLEAR | if direct_io { LO_FLAGS_DIRECT_IO } else { 0 };
        // SAFETY: LOOP_CONFIGURE reads one struct loop_config, which lives
        // for the call; both descriptors are open for its whole length.
        let rc = unsafe { libc::ioctl(device.as_raw_fd(), LOOP_CONFIGURE as _, &config as *const LoopConfig) };
        if rc == 0 {
            return Ok(AttachedLoop { number: number as u32, device });
        }
        last = io::Error::last_os_error();
        if last.raw_os_error() != Some(libc::EBUSY) {
            return Err(last);
        }
    }
    Err(last)
}

/// The device and inode numbers (as `stat` gives them) of the file backing
/// the loop device open as `device`; `None` when nothing is attached.
pub fn backing(device: impl AsFd) -> io::Result<Option<(u64, u64)>> {
    let mut info = zeroed_info();
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 through the
    // pointer, which points at a live value of that type.
    let rc = unsafe { libc::ioctl(device.as_fd().as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info as *mut LoopInfo64) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ENXIO) { Ok(None) } else { Err(e) };
    }
    Ok(Some((info.lo_device, info.lo_inode)))
}

/// The disk sequence number of the block device open as `device`
/// (`BLKGETDISKSEQ`): unique for the machine's uptime, and new each time a
/// loop device is attached, so it names one attachment whatever becomes of
/// the file behind it.
pub fn diskseq(device: impl AsFd) -> io::Result<u64> {
    let mut seq: u64 = 0;
    // SAFETY: BLKGETDISKSEQ writes one u64 through the pointer, which
    // points at a live u64.
    let rc = unsafe { libc::ioctl(device.as_fd().as_raw_fd(), BLKGETDISKSEQ as _, &mut seq as *mut u64) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(seq) }
}

/// `/sys/block/loopN/queue/rotational` of the loop device at `device`
/// (`/dev/loopN`; anything else is refused).
fn rotational_attr(device: &std::path::Path) -> io::Result<std::path::PathBuf> {
    let name = device.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let number = name.strip_prefix("loop").filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    match (device.parent() == Some(std::path::Path::new("/dev")), number) {
        (true, Some(_)) => Ok(std::path::PathBuf::from(format!("/sys/block/{name}/queue/rotational"))),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{}: not a loop device", device.display()))),
    }
}

/// Whether the loop device at `device` (`/dev/loopN`) says it is
/// rotational. The kernel sets it at each attachment from the device under
/// the backing file's file system: a file system without one (btrfs,
/// tmpfs) gives "not rotational", which ext4's block allocator reads.
pub fn rotational(device: &std::path::Path) -> io::Result<bool> {
    Ok(std::fs::read_to_string(rotational_attr(device)?)?.trim() == "1")
}

/// Make the loop device at `device` say `rotational`, and check it does.
/// The setting lasts as long as the attachment: the next one sets its own.
pub fn set_rotational(device: &std::path::Path, rotational: bool) -> io::Result<()> {
    std::fs::write(rotational_attr(device)?, if rotational { "1" } else { "0" })?;
    if self::rotational(device)? != rotational {
        return Err(io::Error::other("the kernel kept its own rotational flag"));
    }
    Ok(())
}

/// Detach the loop device open as `device` (`LOOP_CLR_FD`). A device still
/// open elsewhere detaches on its last close.
pub fn detach(device: impl AsFd) -> io::Result<()> {
    // SAFETY: LOOP_CLR_FD takes no argument.
    let rc = unsafe { libc::ioctl(device.as_fd().as_raw_fd(), LOOP_CLR_FD as _, 0) };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_loop_device_s_rotational_flag_is_read_or_set() {
        assert_eq!(rotational_attr(std::path::Path::new("/dev/loop7")).unwrap(), std::path::Path::new("/sys/block/loop7/queue/rotational"));
        for not in ["/dev/sda", "/dev/loop", "/dev/loop1p1", "/tmp/loop3", "/dev/../dev/loop3", "loop3"] {
            assert!(rotational_attr(std::path::Path::new(not)).is_err(), "{not}");
        }
    }

    #[test]
    fn the_kernel_structs_have_their_sizes() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
        assert_eq!(std::mem::size_of::<LoopConfig>(), 8 + 232 + 64);
    }

    #[test]
    fn a_file_attached_by_its_descriptor_is_found_by_its_inode_and_detached() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        use std::os::unix::fs::MetadataExt;
        let dir = crate::test_temp::dir("");
        let image = OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("i")).unwrap();
        image.set_len(1 << 20).unwrap();
        let meta = image.metadata().unwrap();
        for direct_io in [true, false] {
            let lo = attach(&image, direct_io).unwrap();
            assert_eq!(backing(&lo.device).unwrap(), Some((meta.dev(), meta.ino())));
            let dio = std::fs::read_to_string(format!("/sys/block/loop{}/loop/dio", lo.number)).unwrap();
            let seq = std::fs::read_to_string(format!("/sys/block/loop{}/diskseq", lo.number)).unwrap();
            assert_eq!(diskseq(&lo.device).unwrap().to_string(), seq.trim());
            assert_eq!(dio.trim(), if direct_io { "1" } else { "0" }, "direct I/O as losetup --direct-io=on, or not");
            detach(&lo.device).unwrap();
            drop(lo);
        }
    }
}
