//! Reading a write log in the dm-log-writes format, as QEMU's
//! `blklogwrites` driver writes it (and the kernel's dm-log-writes target
//! and fstests' `replay-log` read and write it).
//!
//! The format, all little-endian: sector 0 holds the super block (`magic`
//! 0x6a736677736872, `version` 1, `nr_entries` u64, `sectorsize` u32);
//! from sector 1 on, each entry is one sector whose first 32 bytes are
//! `sector`, `nr_sectors`, `flags` and `data_len` (u64 each), the rest of
//! the sector zero, then — unless it is a discard — `nr_sectors` sectors of
//! the data written. `sector` and `nr_sectors` count the log's sectors
//! (`sectorsize` bytes). Flags: FLUSH 1, FUA 2, DISCARD 4, MARK 8; a mark
//! carries its name inline, `data_len` bytes after the header. QEMU's
//! driver writes a zero-length FLUSH entry for each flush the device
//! completed, a discard as a DISCARD entry with no data, and a
//! write-zeroes as a plain entry whose data is zeros; it writes no FUA
//! flag (a FUA write reaches it as a write then a flush) and no marks.
//!
//! The design decision: the log is read whole once, its entries' places
//! kept (32 bytes each, their data left in the file), and every entry is
//! checked as fstests checks one (no all-zero header, a zero-padded
//! sector, known flags) and to lie inside the file; a log that fails is
//! refused with the entry and offset named, never replayed in part. The
//! super block's `nr_entries` is what the driver last wrote (at each flush
//! and every 4096 entries), so a finished recording, whose device ended
//! with a flush, has its every entry counted there.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The super block's magic number ("rhswfsj" as bytes, little-endian).
pub const MAGIC: u64 = 0x006a_7366_7773_6872;

/// The only format version there is.
pub const VERSION: u64 = 1;

/// The sector size fslab's logs use (`log-sector-size=512`, QEMU's
/// default), the only one it reads: a log of another sector size is
/// refused rather than guessed at.
pub const SECTOR: u64 = 512;

/// A flush the device completed: every write completed before it is on
/// stable storage.
pub const FLUSH: u64 = 1;
/// A write with forced unit access (QEMU writes none: see the module doc).
pub const FUA: u64 = 2;
/// A discard of `nr_sectors` sectors (no data in the log).
pub const DISCARD: u64 = 4;
/// A named mark (QEMU writes none).
pub const MARK: u64 = 8;

const KNOWN_FLAGS: u64 = FLUSH | FUA | DISCARD | MARK;

/// The header bytes of an entry.
const HEADER: usize = 32;

/// One entry of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Where the write landed on the device, in sectors.
    pub sector: u64,
    /// How many sectors it wrote (or discarded).
    pub nr_sectors: u64,
    /// Its flags (`FLUSH`, `FUA`, `DISCARD`, `MARK`).
    pub flags: u64,
    /// Where its data starts in the log, in bytes (for a write).
    pub data_at: u64,
    /// A mark's name length (`data_len`); 0 for the rest.
    pub data_len: u64,
}

impl Entry {
    /// Whether it is a flush.
    pub fn is_flush(&self) -> bool {
        self.flags & FLUSH != 0
    }

    /// Whether it is a discard (the range reads as zeros after it).
    pub fn is_discard(&self) -> bool {
        self.flags & DISCARD != 0
    }

    /// Whether it is a mark.
    pub fn is_mark(&self) -> bool {
        self.flags & MARK != 0
    }

    /// Bytes of data it carries in the log (0 for a flush, discard or mark).
    pub fn data_bytes(&self) -> u64 {
        if self.is_discard() || self.is_mark() { 0 } else { self.nr_sectors * SECTOR }
    }

    /// Where it lands on the device, in bytes.
    pub fn offset(&self) -> u64 {
        self.sector * SECTOR
    }
}

/// What a log holds, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Entries.
    pub entries: u64,
    /// Flush entries.
    pub flushes: u64,
    /// Discard entries.
    pub discards: u64,
    /// Bytes of data the writes carried.
    pub write_bytes: u64,
    /// Bytes the log takes, from its start to the end of its last entry.
    pub log_bytes: u64,
}

/// A write log, opened and checked.
#[derive(Debug)]
pub struct WriteLog {
    path: PathBuf,
    file: File,
    entries: Vec<Entry>,
    end: u64,
    len: u64,
}

impl WriteLog {
    /// Read the log at `path` (open as `file`): its super block, then
    /// every entry it counts, each checked.
    pub fn read(path: &Path, file: File) -> Result<WriteLog> {
        let len = file.metadata().map_err(|e| Error::io(path, "stat the write log", e))?.len();
        let mut super_block = [0u8; 28];
        file.read_exact_at(&mut super_block, 0).map_err(|e| Error::io(path, "read the write log's super block", e))?;
        let word = |at: usize| u64::from_le_bytes(super_block[at..at + 8].try_into().expect("8 bytes"));
        let bad = |why: String| Error::failed(format!("{}: not a whole write log: {why}", path.display()));
        if word(0) != MAGIC {
            return Err(bad(format!("its magic is {:#x}, not {MAGIC:#x} (the driver writes its super block at each flush, and this log saw none)", word(0))));
        }
        if word(8) != VERSION {
            return Err(bad(format!("version {}, where fslab reads version {VERSION}", word(8))));
        }
        let count = word(16);
        let sector_size = u32::from_le_bytes(super_block[24..28].try_into().expect("4 bytes"));
        if u64::from(sector_size) != SECTOR {
            return Err(bad(format!("sector size {sector_size}, where fslab reads {SECTOR}-byte logs (log-sector-size=512)")));
        }
        // Each entry takes at least a sector: a count the file cannot hold
        // is refused before anything is allocated for it.
        if count > len / SECTOR {
            return Err(bad(format!("its super block counts {count} entries, more than its {len} bytes can hold")));
        }
        let mut entries = Vec::with_capacity(count as usize);
        let mut at = SECTOR;
        let mut sector = [0u8; SECTOR as usize];
        for index in 0..count {
            if at + SECTOR > len {
                return Err(bad(format!("entry {index} would start at byte {at}, past its end ({len})")));
            }
            file.read_exact_at(&mut sector, at).map_err(|e| Error::io(path, "read the write log", e))?;
            let entry = parse_entry(&sector, at + SECTOR).map_err(|why| bad(format!("entry {index} at byte {at}: {why}")))?;
            at += SECTOR + entry.data_bytes();
            if at > len {
                return Err(bad(format!("entry {index}'s data runs to byte {at}, past its end ({len})")));
            }
            entries.push(entry);
        }
        Ok(WriteLog { path: path.to_path_buf(), file, entries, end: at, len })
    }

    /// Its entries, in the order the device completed them.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes from its start to the end of its last entry.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The file's length when it was read (for a log written under a
    /// cap into a file as long as the cap, the cap).
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// Its counts.
    pub fn summary(&self) -> Summary {
        self.summary_from(0)
    }

    /// Its counts from entry `first` on (the log's length still from its
    /// start): what a device was sent after its first `first` requests.
    pub fn summary_from(&self, first: usize) -> Summary {
        let counted = self.entries.get(first..).unwrap_or_default();
        let mut s = Summary { entries: counted.len() as u64, log_bytes: self.end, ..Summary::default() };
        for e in counted {
            s.flushes += u64::from(e.is_flush());
            s.discards += u64::from(e.is_discard());
            s.write_bytes += e.data_bytes();
        }
        s
    }

    /// Read `len` bytes of `entry`'s data from `skip` bytes into it.
    pub fn read_data(&self, entry: &Entry, skip: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, entry.data_at + skip)
            .map_err(|e| Error::io(&self.path, "read a write's data from the write log", e))
    }

    /// The name of a mark entry.
    pub fn mark_name(&self, entry: &Entry) -> Result<String> {
        let mut sector = [0u8; SECTOR as usize];
        self.file
            .read_exact_at(&mut sector, entry.data_at - SECTOR)
            .map_err(|e| Error::io(&self.path, "read the write log", e))?;
        let len = (entry.data_len as usize).min(SECTOR as usize - HEADER);
        Ok(String::from_utf8_lossy(&sector[HEADER..HEADER + len]).into_owned())
    }
}

/// The entry whose header sector is `sector`, its data starting at
/// `data_at`; why not, when it is no entry.
fn parse_entry(sector: &[u8; SECTOR as usize], data_at: u64) -> std::result::Result<Entry, String> {
    let word = |at: usize| u64::from_le_bytes(sector[at..at + 8].try_into().expect("8 bytes"));
    let entry = Entry { sector: word(0), nr_sectors: word(8), flags: word(16), data_at, data_len: word(24) };
    if entry.flags & !KNOWN_FLAGS != 0 {
        return Err(format!("unknown flags {:#x}", entry.flags));
    }
    if entry.flags == 0 && entry.nr_sectors == 0 {
        return Err("an all-zero header (no entry was written here)".to_string());
    }
    // The rest of the sector is zero, but for a mark's inline name.
    let padding = if entry.is_mark() { HEADER + entry.data_len as usize } else { HEADER };
    if padding > sector.len() || sector[padding..].iter().any(|&b| b != 0) {
        return Err("its sector is not zero after its header".to_string());
    }
    if entry.nr_sectors.checked_mul(SECTOR).and_then(|b| b.checked_add(entry.sector * SECTOR)).is_none() {
        return Err(format!("{} sectors at sector {} pass any device", entry.nr_sectors, entry.sector));
    }
    Ok(entry)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A log QEMU 7.2.22's `blklogwrites` wrote (`log-sector-size=512`,
    /// `discard=unmap`), exported through `qemu-storage-daemon`'s FUSE
    /// export over a 128 KiB image, by
    /// `xfs_io -c "pwrite -S 0xa1 4096 4096" -c fsync -c "pwrite -S 0xb2 0 512"
    /// -c "fpunch 4096 1024" -c "fzero 65536 8192" -c "pwrite -S 0xc3 65536 512" EXPORT`
    /// and the close of the file (a flush).
    pub(crate) const QEMU_LOG: &[u8] = include_bytes!("testdata/blklogwrites-qemu-7.2.log");

    /// The image that log leaves on an image of zeros.
    pub(crate) fn qemu_log_image() -> Vec<u8> {
        let mut image = vec![0u8; 128 << 10];
        image[4096 + 1024..8192].fill(0xa1);
        image[..512].fill(0xb2);
        image[65536..65536 + 512].fill(0xc3);
        image
    }

    /// `bytes` as a log file in a fresh folder, read.
    pub(crate) fn log_of(bytes: &[u8]) -> (tempfile::TempDir, Result<WriteLog>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("writes.log");
        std::fs::write(&path, bytes).unwrap();
        let log = WriteLog::read(&path, File::open(&path).unwrap());
        (dir, log)
    }

    #[test]
    fn the_drivers_log_reads_entry_by_entry() {
        let (_dir, log) = log_of(QEMU_LOG);
        let log = log.unwrap();
        let seen: Vec<(u64, u64, u64)> = log.entries().iter().map(|e| (e.sector, e.nr_sectors, e.flags)).collect();
        assert_eq!(
            seen,
            [
                (8, 8, 0),        // the 4 KiB of 0xa1
                (0, 0, FLUSH),    // fsync
                (0, 1, 0),        // the 512 bytes of 0xb2
                (8, 2, DISCARD),  // the punched KiB
                (128, 16, 0),     // the zeroed 8 KiB, logged as zeros
                (128, 1, 0),      // the 512 bytes of 0xc3
                (0, 0, FLUSH),    // the close
            ]
        );
        let s = log.summary();
        assert_eq!((s.entries, s.flushes, s.discards), (7, 2, 1));
        assert_eq!(s.write_bytes, 4096 + 512 + 8192 + 512);
        assert_eq!(s.log_bytes, QEMU_LOG.len() as u64, "the last entry ends where the file does");
        let mut first = [0u8; 16];
        log.read_data(&log.entries()[0], 4080, &mut first).unwrap();
        assert_eq!(first, [0xa1; 16]);
        let mut zeros = [1u8; 8192];
        log.read_data(&log.entries()[4], 0, &mut zeros).unwrap();
        assert!(zeros.iter().all(|&b| b == 0));
    }

    #[test]
    fn a_damaged_log_is_refused_naming_where() {
        let message = |bytes: &[u8]| log_of(bytes).1.unwrap_err().message;
        let mut bad_magic = QEMU_LOG.to_vec();
        bad_magic[0] ^= 1;
        assert!(message(&bad_magic).contains("magic"), "{}", message(&bad_magic));
        let mut bad_size = QEMU_LOG.to_vec();
        bad_size[24..28].copy_from_slice(&4096u32.to_le_bytes());
        assert!(message(&bad_size).contains("sector size 4096"), "{}", message(&bad_size));
        // Cut inside the last entry's data.
        let cut = &QEMU_LOG[..QEMU_LOG.len() - 1024];
        assert!(message(cut).contains("entry 5"), "{}", message(cut));
        // Flags no driver writes.
        let mut odd = QEMU_LOG.to_vec();
        odd[512 + 16] = 0x10;
        assert!(message(&odd).contains("entry 0 at byte 512: unknown flags 0x10"), "{}", message(&odd));
        // A header whose sector is not zero-padded.
        let mut unpadded = QEMU_LOG.to_vec();
        unpadded[512 + 40] = 1;
        assert!(message(&unpadded).contains("not zero after its header"), "{}", message(&unpadded));
        // A count no file of its size can hold.
        let mut many = QEMU_LOG.to_vec();
        many[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(message(&many).contains("more than its"), "{}", message(&many));
    }

    #[test]
    fn a_kernel_style_mark_reads_with_its_name() {
        // One mark, as dm-log-writes writes it: the name inline after the
        // header, no data sectors.
        let mut bytes = vec![0u8; 2 * SECTOR as usize];
        bytes[..8].copy_from_slice(&MAGIC.to_le_bytes());
        bytes[8..16].copy_from_slice(&VERSION.to_le_bytes());
        bytes[16..24].copy_from_slice(&1u64.to_le_bytes());
        bytes[24..28].copy_from_slice(&512u32.to_le_bytes());
        bytes[512 + 16..512 + 24].copy_from_slice(&MARK.to_le_bytes());
        bytes[512 + 24..512 + 32].copy_from_slice(&4u64.to_le_bytes());
        bytes[512 + 32..512 + 36].copy_from_slice(b"sync");
        let (_dir, log) = log_of(&bytes);
        let log = log.unwrap();
        assert!(log.entries()[0].is_mark());
        assert_eq!(log.mark_name(&log.entries()[0]).unwrap(), "sync");
        assert_eq!(log.summary().write_bytes, 0);
    }
}
