//! `FS_IOC_GETFSMAP`: who owns every block of a mounted file system — files,
//! metadata, and free space — in physical order, as `xfs_io -c fsmap` and
//! e2freefrag's online mode read it.
//!
//! The caller owns one [`FsmapBuffer`] and reads the map by repeated calls:
//! each call fills the buffer at most, and the next one starts after the last
//! record returned (the kernel header's `fsmap_advance`). Memory is the
//! buffer's, however many records the file system has.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsFd, AsRawFd};

/// `struct fsmap` from `<linux/fsmap.h>`, 64 bytes: one mapping record, and
/// also the shape of the two search keys.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FsmapRecord {
    /// Device id: a `dev_t` in the kernel's `new_encode_dev` form when the
    /// header's [`FMH_OF_DEV_T`] is set, else a file-system cookie.
    pub fmr_device: u32,
    /// `FMR_OF_*` flags.
    pub fmr_flags: u32,
    /// Byte offset of the segment on the device.
    pub fmr_physical: u64,
    /// Inode number, or a special owner (`FMR_OWN_*`) when
    /// [`FMR_OF_SPECIAL_OWNER`] is set.
    pub fmr_owner: u64,
    /// Byte offset of the segment in its file (files only).
    pub fmr_offset: u64,
    /// Length of the segment in bytes.
    pub fmr_length: u64,
    fmr_reserved: [u64; 3],
}

impl FsmapRecord {
    /// Whether this segment is free space (special owner `FMR_OWN_FREE`),
    /// the test e2freefrag's online mode applies.
    pub fn is_free(&self) -> bool {
        self.fmr_flags & FMR_OF_SPECIAL_OWNER != 0 && self.fmr_owner == FMR_OWN_FREE
    }

    /// Whether the kernel marked this the last record of the whole map.
    pub fn is_last(&self) -> bool {
        self.fmr_flags & FMR_OF_LAST != 0
    }

    /// Where the segment ends on its device, in bytes.
    pub fn end(&self) -> u64 {
        self.fmr_physical.saturating_add(self.fmr_length)
    }
}

/// `struct fsmap_head` from `<linux/fsmap.h>`, 192 bytes, followed in
/// memory by `fmh_count` records.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct RawFsmapHead {
    fmh_iflags: u32,
    fmh_oflags: u32,
    fmh_count: u32,
    fmh_entries: u32,
    fmh_reserved: [u64; 6],
    fmh_keys: [FsmapRecord; 2],
}

/// `FS_IOC_GETFSMAP` = `_IOWR('X', 59, struct fsmap_head)`.
pub const FS_IOC_GETFSMAP: libc::c_ulong = ioc_readwrite(b'X', 59, size_of::<RawFsmapHead>());

/// Header output flag: `fmr_device` values are `dev_t`s (`new_encode_dev`).
pub const FMH_OF_DEV_T: u32 = 0x1;

/// Record flag: unwritten preallocation.
pub const FMR_OF_PREALLOC: u32 = 0x1;
/// Record flag: the segment maps an attribute fork.
pub const FMR_OF_ATTR_FORK: u32 = 0x2;
/// Record flag: the segment is an extent-map (bmbt) block.
pub const FMR_OF_EXTENT_MAP: u32 = 0x4;
/// Record flag: shared with another file.
pub const FMR_OF_SHARED: u32 = 0x8;
/// Record flag: `fmr_owner` is a special value, not an inode.
pub const FMR_OF_SPECIAL_OWNER: u32 = 0x10;
/// Record flag: the last record of the whole map.
pub const FMR_OF_LAST: u32 = 0x20;

/// `FMR_OWNER(type, code)`: a special owner value.
pub const fn fmr_owner(kind: u32, code: u32) -> u64 {
    ((kind as u64) << 32) | code as u64
}

/// Special owner: free space.
pub const FMR_OWN_FREE: u64 = fmr_owner(0, 1);
/// Special owner: owner unknown.
pub const FMR_OWN_UNKNOWN: u64 = fmr_owner(0, 2);
/// Special owner: metadata.
pub const FMR_OWN_METADATA: u64 = fmr_owner(0, 3);

/// `_IOWR(ty, nr, size)` as the kernel's asm-generic ioctl.h computes it.
const fn ioc_readwrite(ty: u8, nr: u8, size: usize) -> libc::c_ulong {
    const READ_WRITE: libc::c_ulong = 3;
    (READ_WRITE << 30) | ((size as libc::c_ulong) << 16) | ((ty as libc::c_ulong) << 8) | nr as libc::c_ulong
}

/// A device number in the kernel's `new_encode_dev` form, as GETFSMAP
/// reports `fmr_device` when [`FMH_OF_DEV_T`] is set.
pub const fn encode_dev(major: u32, minor: u32) -> u32 {
    (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)
}

const HEADER_WORDS: usize = size_of::<RawFsmapHead>() / 8;
const RECORD_WORDS: usize = size_of::<FsmapRecord>() / 8;

/// A reusable GETFSMAP buffer: the header with its two keys and room for
/// `capacity` records, allocated once. A query starts with
/// [`start`](Self::start) and goes on with [`next_batch`](Self::next_batch)
/// until it returns no records.
pub struct FsmapBuffer {
    // u64 words keep the header and the records 8-byte aligned.
    words: Vec<u64>,
    capacity: usize,
    /// Records the last call returned (valid after a successful call).
    entries: usize,
    /// No call made yet since `start`: the keys are the initial ones.
    fresh: bool,
    /// The map is exhausted: the last call saw `FMR_OF_LAST` or nothing.
    done: bool,
}

impl FsmapBuffer {
    /// A buffer that takes up to `capacity` records per call.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize);
        let mut buffer = FsmapBuffer {
            words: vec![0; HEADER_WORDS + capacity * RECORD_WORDS],
            capacity,
            entries: 0,
            fresh: true,
            done: false,
        };
        buffer.start();
        buffer
    }

    /// How many records one call can return.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Begin a query over the whole map of every device of the file system:
    /// the low key all zeros, the high key all ones but its length, exactly
    /// as e2freefrag and `xfs_io -c fsmap` set them. (XFS refuses a high key
    /// with a length of all ones with EINVAL, whatever the header comment
    /// says; measured on Linux 6.18.)
    pub fn start(&mut self) {
        self.words.fill(0);
        let all = FsmapRecord {
            fmr_device: u32::MAX,
            fmr_flags: u32::MAX,
            fmr_physical: u64::MAX,
            fmr_owner: u64::MAX,
            fmr_offset: u64::MAX,
            fmr_length: 0,
            fmr_reserved: [0; 3],
        };
        let head = RawFsmapHead {
            fmh_count: u32::try_from(self.capacity).unwrap_or(u32::MAX),
            fmh_keys: [FsmapRecord::default(), all],
            ..RawFsmapHead::default()
        };
        // SAFETY: `words` holds at least HEADER_WORDS u64s, so a RawFsmapHead
        // (repr(C), 192 bytes, align 8) fits at its start; the write is aligned.
        unsafe { self.words.as_mut_ptr().cast::<RawFsmapHead>().write(head) };
        self.entries = 0;
        self.fresh = true;
        self.done = false;
    }

    /// The header's output flags (`FMH_OF_*`) from the last call.
    pub fn oflags(&self) -> u32 {
        self.head().fmh_oflags
    }

    /// `FS_IOC_GETFSMAP` on `fd` (any file or directory of the file system):
    /// the next records of the query, in the kernel's order (device, then
    /// physical offset). An empty slice means the map is exhausted.
    pub fn next_batch(&mut self, fd: impl AsFd) -> io::Result<&[FsmapRecord]> {
        if self.done {
            return Ok(&[]);
        }
        if !self.fresh {
            self.advance()?;
        }
        let base = self.words.as_mut_ptr();
        // SAFETY: FS_IOC_GETFSMAP reads the header and its keys and writes
        // the header and at most fmh_count (= capacity) records right after
        // it; the buffer was sized for exactly that many and stays borrowed
        // mutably for the call.
        let rc = unsafe { libc::ioctl(fd.as_fd().as_raw_fd(), FS_IOC_GETFSMAP as _, base) };
        if rc < 0 {
            self.done = true;
            return Err(io::Error::last_os_error());
        }
        self.fresh = false;
        self.entries = (self.head().fmh_entries as usize).min(self.capacity);
        self.done = self.records().last().is_none_or(FsmapRecord::is_last);
        Ok(self.records())
    }

    /// Stream the whole map through `visit`, one call per
    /// [`capacity`](Self::capacity) records, starting afresh. Returns the
    /// header's output flags.
    pub fn for_each(&mut self, fd: impl AsFd, mut visit: impl FnMut(&FsmapRecord, u32)) -> io::Result<u32> {
        let fd = fd.as_fd();
        self.start();
        loop {
            let batch = self.next_batch(fd)?;
            if batch.is_empty() {
                break;
            }
            let oflags = self.oflags();
            for record in self.records() {
                visit(record, oflags);
            }
        }
        Ok(self.oflags())
    }

    /// `fsmap_advance`: the next query starts after the last record returned.
    /// Refuses to go on when that would not move forward, so a kernel that
    /// repeated itself cannot make the caller loop forever.
    fn advance(&mut self) -> io::Result<()> {
        let last = *self.records().last().expect("advance follows a non-empty batch");
        if last == self.head().fmh_keys[0] {
            return Err(io::Error::other("GETFSMAP did not advance (the kernel returned its low key again)"));
        }
        // SAFETY: the header is initialised and aligned at the buffer's start
        // (see `start`); this is the only live reference into the buffer.
        let head = unsafe { &mut *self.words.as_mut_ptr().cast::<RawFsmapHead>() };
        head.fmh_keys[0] = last;
        head.fmh_entries = 0;
        Ok(())
    }

    fn head(&self) -> &RawFsmapHead {
        // SAFETY: the buffer starts with an initialised (written in `start`,
        // then updated by the kernel), 8-aligned RawFsmapHead.
        unsafe { &*self.words.as_ptr().cast::<RawFsmapHead>() }
    }

    fn records(&self) -> &[FsmapRecord] {
        // SAFETY: records start HEADER_WORDS words in, are 8-aligned, and
        // `entries` never exceeds `capacity`, so they lie inside the buffer;
        // every byte of it is initialised (zeroed, then written by the kernel).
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().add(HEADER_WORDS).cast::<FsmapRecord>(), self.entries) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_and_opcode_match_the_kernel() {
        // <linux/fsmap.h>: struct fsmap is 64 bytes, struct fsmap_head 192
        // (16 + 48 + 2 * 64); checked against the header with a C program.
        assert_eq!(size_of::<FsmapRecord>(), 64);
        assert_eq!(size_of::<RawFsmapHead>(), 192);
        assert_eq!(std::mem::offset_of!(FsmapRecord, fmr_physical), 8);
        assert_eq!(std::mem::offset_of!(FsmapRecord, fmr_length), 32);
        assert_eq!(std::mem::offset_of!(RawFsmapHead, fmh_keys), 64);
        // FS_IOC_GETFSMAP _IOWR('X', 59, struct fsmap_head), as printed by
        // the C macro on x86_64.
        assert_eq!(FS_IOC_GETFSMAP, 0xC0C0_583B);
    }

    #[test]
    fn flags_and_owners_match_the_kernel() {
        assert_eq!(FMH_OF_DEV_T, 0x1);
        assert_eq!(FMR_OF_SPECIAL_OWNER, 0x10);
        assert_eq!(FMR_OF_LAST, 0x20);
        assert_eq!(FMR_OWN_FREE, 1);
        assert_eq!(FMR_OWN_UNKNOWN, 2);
        assert_eq!(FMR_OWN_METADATA, 3);
        // ext4's "static fs metadata" owner as seen from GETFSMAP: FMR_OWNER('X', 1).
        assert_eq!(fmr_owner(u32::from(b'X'), 1), 0x58_0000_0001);
    }

    #[test]
    fn dev_t_encoding_is_new_encode_dev() {
        assert_eq!(encode_dev(7, 0), 0x700);
        assert_eq!(encode_dev(259, 3), 0x10303);
        assert_eq!(encode_dev(8, 0x123), 0x0010_0823);
    }

    #[test]
    fn free_and_last_are_read_from_flags_and_owner() {
        let mut r = FsmapRecord { fmr_flags: FMR_OF_SPECIAL_OWNER, fmr_owner: FMR_OWN_FREE, ..Default::default() };
        assert!(r.is_free() && !r.is_last());
        r.fmr_flags |= FMR_OF_LAST;
        assert!(r.is_last());
        // An inode numbered 1 is not free space.
        r.fmr_flags = 0;
        assert!(!r.is_free());
    }

    #[test]
    fn a_file_system_without_getfsmap_says_so() {
        // A regular file on whatever the temp dir is: either the ioctl works
        // (xfs, ext4 as root) or it fails; it never hangs or returns junk.
        let file = tempfile::tempfile().unwrap();
        let mut buffer = FsmapBuffer::new(4);
        match buffer.for_each(&file, |r, _| assert!(r.fmr_length > 0)) {
            Ok(_) => {}
            Err(e) => assert!(e.raw_os_error().is_some(), "{e}"),
        }
    }
}
