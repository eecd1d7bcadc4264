//! Copying an image and naming its content: what the aged-image cache and
//! a scratch target started from a cache entry both need.
//!
//! The design decision: an image is mostly holes, so both the copy and the
//! hash walk only its data, as `SEEK_DATA`/`SEEK_HOLE` find it. A copy is a
//! reflink (`FICLONE`) where the file system can share blocks, else a
//! sparse copy (`copy_file_range` per data region, the length set last),
//! so a hole stays a hole. An image a loop device will read with direct
//! I/O is written with direct I/O: it leaves no dirty copy in the page
//! cache to flush before the case (nor clean pages to drop when it goes).
//! The content hash treats a hole and a block of zeros alike, so a copy
//! hashes as its source whatever the copy kept sparse.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

use rustix::fs::{Mode, OFlags, SeekFrom};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use super::read_ahead::{read_ahead, shrank};
use crate::sys::aligned::ALIGN;

/// The block the content hash works in: 1 MiB.
pub const HASH_BLOCK: u64 = 1 << 20;

/// How a copy was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// The destination shares the source's blocks (`FICLONE`).
    Reflink,
    /// The data regions were copied; this many bytes of them.
    Sparse {
        /// Bytes of data copied (holes excluded).
        data_bytes: u64,
    },
}

/// The data regions of `file` (`[start, end)` byte ranges, in order) as
/// `SEEK_DATA`/`SEEK_HOLE` report them; a file system without them reports
/// the whole file as one region.
pub fn data_regions(file: &File) -> io::Result<Vec<(u64, u64)>> {
    let len = file.metadata()?.len();
    let mut regions = Vec::new();
    let mut at = 0;
    while at < len {
        let start = match rustix::fs::seek(file, SeekFrom::Data(at)) {
            Ok(start) => start,
            Err(Errno::NXIO) => break, // only a hole is left
            Err(e) => return Err(e.into()),
        };
        let end = rustix::fs::seek(file, SeekFrom::Hole(start))?.min(len);
        if end > start {
            regions.push((start, end));
        }
        at = end.max(start + 1);
    }
    Ok(regions)
}

/// Bytes in `regions`.
pub fn region_bytes(regions: &[(u64, u64)]) -> u64 {
    regions.iter().map(|(start, end)| end - start).sum()
}

/// Make `dst` (open for writing, empty or of `src`'s length and all holes)
/// hold exactly `src`'s bytes: a reflink when the file system can, else a
/// sparse copy. `dst` ends as long as `src`.
///
/// With `keep_dio_align` (an image a loop device will be attached to with
/// direct I/O), a reflink is kept only if it leaves the file's direct-I/O
/// alignment (`STATX_DIOALIGN`) as it was: xfs raises it to its block size
/// for a file with shared extents, which gives the loop device 4096-byte
/// sectors, on which a 1 KiB-block ext4 or a 512-byte-sector xfs no longer
/// mounts and every case would run on other geometry than a fresh image.
/// Such a reflink is undone and the copy made sparse, through memory.
pub fn copy_image(src: &File, dst: &File, keep_dio_align: bool) -> io::Result<Copied> {
    let before = dio_align(dst);
    match rustix::fs::ioctl_ficlone(dst, src) {
        Ok(()) if !keep_dio_align || dio_align(dst) <= before => Ok(Copied::Reflink),
        Ok(()) => {
            // Undone, and copied through memory: copy_file_range would
            // share the blocks again on the same file system.
            dst.set_len(0)?;
            let data_bytes = sparse_copy(src, dst, Transfer::ReadWrite)?;
            if dio_align(dst) > before {
                return Err(io::Error::other(
                    "the copied image kept the larger direct-I/O alignment of a reflinked file; put the scratch folder on another file system (ext4, or xfs without reflink)",
                ));
            }
            Ok(Copied::Sparse { data_bytes })
        }
        // No block sharing here (ext4), across file systems, or not a
        // file the file system can share.
        Err(Errno::OPNOTSUPP | Errno::XDEV | Errno::INVAL | Errno::NOTTY) => {
            let how = if keep_dio_align { Transfer::Direct } else { Transfer::InKernel };
            Ok(Copied::Sparse { data_bytes: sparse_copy(src, dst, how)? })
        }
        Err(e) => Err(e.into()),
    }
}

/// Make `dst` (empty, open for writing; on another file system than
/// `src`, where no reflink can be) hold `src`'s bytes, holes kept: `src`
/// read with `O_DIRECT` by [`READERS`] threads (an image written through a
/// direct-I/O loop device, or stored by an earlier run, is on the disk, not
/// in the page cache, and the copy leaves none of it there), `dst` written
/// direct where it takes it. The bytes of data copied.
///
/// What the run's pool copies each entry with: reading through the page
/// cache instead took 9.3 s for a 2.4 GiB entry not cached, where direct
/// reads and writes took 3.5 s and the sync after 0.7 s.
pub fn copy_from_disk(src: &File, dst: &File) -> io::Result<u64> {
    let direct = open_direct(src);
    copy_sparse(src, dst, Transfer::Direct, Reading { direct: direct.as_ref(), readers: READERS })
}

/// `file` opened again with `O_DIRECT` (through `/proc/self/fd`), when its
/// file system allows.
fn open_direct(file: &File) -> Option<File> {
    let proc = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::open(proc.as_str(), OFlags::RDONLY | OFlags::DIRECT | OFlags::CLOEXEC, Mode::empty()).ok().map(File::from)
}

/// How a copy through memory reads its source: the same file opened
/// `O_DIRECT` while it answers, and by how many threads.
#[derive(Debug, Clone, Copy)]
struct Reading<'a> {
    direct: Option<&'a File>,
    readers: usize,
}

/// Through the page cache, one thread reading ahead.
const BUFFERED: Reading<'static> = Reading { direct: None, readers: 1 };

/// How a sparse copy moves a region's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transfer {
    /// `copy_file_range`: in the kernel, no copy through memory (and a
    /// file system that can share blocks may share them).
    InKernel,
    /// `pread`/`pwrite` through a buffer: never shares a block.
    ReadWrite,
    /// As `ReadWrite`, the writes with `O_DIRECT` (buffered where the file
    /// system refuses it, and for a tail not a multiple of its alignment).
    Direct,
}

/// The block a zero-skipping copy leaves a hole for, when all zeros.
const ZERO_BLOCK: usize = 4096;

/// Make `dst` (empty, open for writing) hold `src`'s bytes with every
/// aligned 4 KiB block of zeros a hole, so a copy of `dst` later moves
/// only what is not zero (an xfs image's log is written as zeros by mkfs:
/// 64 of its 69 MiB at 512 MiB). The bytes written.
pub fn copy_without_zeros(src: &File, dst: &File) -> io::Result<u64> {
    let len = src.metadata()?.len();
    let regions = data_regions(src)?;
    let mut written = 0;
    read_ahead(src, None, &chunks(&regions), 1, |at, chunk| {
        for (from, to) in nonzero_runs(chunk, at) {
            dst.write_all_at(&chunk[from..to], at + from as u64)?;
            written += (to - from) as u64;
        }
        Ok(())
    })?;
    dst.set_len(len)?;
    Ok(written)
}

/// The runs of `chunk` (read at offset `at`) that are not whole aligned
/// [`ZERO_BLOCK`]s of zeros, as `[from, to)` within it.
fn nonzero_runs(chunk: &[u8], at: u64) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    while from < chunk.len() {
        // Block edges fall on the file's multiples of ZERO_BLOCK.
        let to = (from + ZERO_BLOCK - ((at as usize + from) % ZERO_BLOCK)).min(chunk.len());
        let block = &chunk[from..to];
        let whole = block.len() == ZERO_BLOCK;
        if !whole || block.iter().any(|&b| b != 0) {
            match runs.last_mut() {
                Some(last) if last.1 == from => last.1 = to,
                _ => runs.push((from, to)),
            }
        }
        from = to;
    }
    runs
}

/// Bytes moved per read and write of a copy through memory.
const COPY_CHUNK: usize = 8 << 20;

/// The file's direct-I/O offset alignment (`STATX_DIOALIGN`); 0 when the
/// kernel or file system does not say.
fn dio_align(file: &File) -> u32 {
    use rustix::fs::{AtFlags, StatxFlags};
    match rustix::fs::statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
        Ok(st) if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 => st.stx_dio_offset_align,
        _ => 0,
    }
}

/// Copy `src`'s data regions into `dst` at the same offsets, `how`, then
/// set `dst`'s length; the bytes of data copied.
fn sparse_copy(src: &File, dst: &File, how: Transfer) -> io::Result<u64> {
    copy_sparse(src, dst, how, BUFFERED)
}

/// [`sparse_copy`], a copy through memory reading `src` as `reading` says.
fn copy_sparse(src: &File, dst: &File, how: Transfer, reading: Reading) -> io::Result<u64> {
    let len = src.metadata()?.len();
    let regions = data_regions(src)?;
    // Direct writes where the file's alignment is one the chunks keep, or
    // is not said (btrfs): a refused write goes buffered.
    let direct = how == Transfer::Direct && dio_align(dst) <= ALIGN as u32 && set_direct(dst, true);
    let how = if how == Transfer::Direct && !direct { Transfer::ReadWrite } else { how };
    let copied = copy_regions(src, dst, &regions, how, reading);
    if direct {
        set_direct(dst, false);
    }
    copied?;
    dst.set_len(len)?;
    Ok(region_bytes(&regions))
}

/// Turn `O_DIRECT` on or off for `file`; whether that was done.
fn set_direct(file: &File, on: bool) -> bool {
    let Ok(flags) = rustix::fs::fcntl_getfl(file) else { return false };
    let flags = if on { flags | OFlags::DIRECT } else { flags - OFlags::DIRECT };
    rustix::fs::fcntl_setfl(file, flags).is_ok()
}

/// Move each of `regions` from `src` to `dst` at the same offsets.
fn copy_regions(src: &File, dst: &File, regions: &[(u64, u64)], how: Transfer, reading: Reading) -> io::Result<()> {
    if how != Transfer::InKernel {
        return copy_through_memory(src, dst, regions, how, reading);
    }
    for (i, &(start, end)) in regions.iter().enumerate() {
        let (mut from, mut to) = (start, start);
        while from < end {
            let want = usize::try_from(end - from).unwrap_or(usize::MAX).min(1 << 30);
            match rustix::fs::copy_file_range(src, Some(&mut from), dst, Some(&mut to), want) {
                Ok(0) => return Err(shrank()),
                Ok(_) => {}
                // Across file systems (a cache folder on another one than
                // the scratch folder) the kernel does not copy: through
                // memory then, from where it stopped.
                Err(Errno::XDEV | Errno::OPNOTSUPP | Errno::INVAL | Errno::NOSYS) => {
                    let rest: Vec<(u64, u64)> = std::iter::once((from, end)).chain(regions[i + 1..].iter().copied()).collect();
                    return copy_through_memory(src, dst, &rest, Transfer::ReadWrite, reading);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// Copy `regions` through memory in chunks of [`COPY_CHUNK`], read a
/// chunk ahead as `reading` says (`how`: written buffered, or direct where
/// it can be).
fn copy_through_memory(src: &File, dst: &File, regions: &[(u64, u64)], mut how: Transfer, reading: Reading) -> io::Result<()> {
    read_ahead(src, reading.direct, &chunks(regions), reading.readers, |at, chunk| write_chunk(dst, chunk, at, &mut how))
}

/// `regions` cut into pieces of at most [`COPY_CHUNK`] bytes: offset and
/// length.
fn chunks(regions: &[(u64, u64)]) -> Vec<(u64, usize)> {
    regions
        .iter()
        .flat_map(|&(start, end)| (start..end).step_by(COPY_CHUNK).map(move |at| (at, (end - at).min(COPY_CHUNK as u64) as usize)))
        .collect()
}

/// Write `chunk` at `at`; with `Transfer::Direct`, its aligned part with
/// `O_DIRECT` and a tail off the alignment (the file's last bytes)
/// buffered, from which on `how` is buffered.
fn write_chunk(dst: &File, chunk: &[u8], at: u64, how: &mut Transfer) -> io::Result<()> {
    let mut done = 0;
    if *how == Transfer::Direct {
        let head = if at % ALIGN as u64 == 0 { chunk.len() - chunk.len() % ALIGN } else { 0 };
        match dst.write_all_at(&chunk[..head], at) {
            Ok(()) => done = head,
            // Refused direct after all: buffered then.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) => return Err(e),
        }
        if done < chunk.len() {
            set_direct(dst, false);
            *how = Transfer::ReadWrite;
        }
    }
    dst.write_all_at(&chunk[done..], at + done as u64)
}

/// The content hash of an image, as lowercase hex: SHA-256 over the
/// image's length (8 bytes, little-endian), then, for each 1 MiB block
/// (aligned; the last may be shorter) that is not all zeros, its index
/// (8 bytes, little-endian) and its bytes. A hole and a block of zeros are
/// the same content, so a sparse copy hashes as its source, and only data
/// regions are read. Returns the hash and the bytes of data regions.
///
/// The file is read through the page cache, which serves a file just
/// written from memory; one thread reads while another hashes.
pub fn content_hash(file: &File) -> io::Result<(String, u64)> {
    hash_blocks(file, None)
}

/// [`content_hash`] of an image whose data is on the disk and not in the
/// page cache (written through a direct-I/O loop device): read with
/// `O_DIRECT`, a quarter of the system time of reading through the cache
/// here, and without filling the cache with it. Where the file cannot be
/// opened so, or a direct read is refused, it is read through the cache.
pub fn content_hash_from_disk(file: &File) -> io::Result<(String, u64)> {
    hash_blocks(file, open_direct(file).as_ref())
}

/// Blocks one read asks for: large reads keep a disk busy.
const BLOCKS_PER_READ: u64 = 8;

/// Threads reading at once, each a read ahead of the hash with two
/// buffers: two reads in flight hashed 1.9 GiB from the disk here in
/// 2.4–2.5 s where one took 3.0–3.4 s and three 2.9–3.2 s.
const READERS: usize = 2;

/// A read's worth of consecutive data blocks: the first one's index and how
/// many.
type Run = (u64, u64);

/// [`content_hash`] read from `file`, or from `direct` (the same file
/// opened `O_DIRECT`) while it answers, by [`READERS`] threads of their own
/// taking the runs of blocks in turn, so the disk and the hash work at
/// once; the hash takes the runs in order.
fn hash_blocks(file: &File, direct: Option<&File>) -> io::Result<(String, u64)> {
    let len = file.metadata()?.len();
    let regions = data_regions(file)?;
    let runs: Vec<(u64, usize)> = block_runs(&regions, len)
        .into_iter()
        .map(|(first, count)| {
            let start = first * HASH_BLOCK;
            (start, (((first + count) * HASH_BLOCK).min(len) - start) as usize)
        })
        .collect();
    let mut hasher = Sha256::new();
    hasher.update(len.to_le_bytes());
    read_ahead(file, direct, &runs, READERS, |start, bytes| {
        let first = start / HASH_BLOCK;
        // 1 MiB blocks, the file's last one shorter.
        for (index, block) in (first..).zip(bytes.chunks(HASH_BLOCK as usize)) {
            if !all_zero(block) {
                hasher.update(index.to_le_bytes());
                hasher.update(block);
            }
        }
        Ok(())
    })?;
    Ok((hex(&hasher.finalize()), region_bytes(&regions)))
}

/// The 1 MiB blocks of a `len`-byte file that `regions` touch, in order,
/// each once (two regions in one block share it), grouped into runs of
/// consecutive blocks of at most [`BLOCKS_PER_READ`].
fn block_runs(regions: &[(u64, u64)], len: u64) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    // The next block not yet taken.
    let mut next = 0u64;
    for &(start, end) in regions {
        let first = (start / HASH_BLOCK).max(next);
        let last = end.min(len).div_ceil(HASH_BLOCK);
        for index in first..last {
            match runs.last_mut() {
                Some((at, count)) if *at + *count == index && *count < BLOCKS_PER_READ => *count += 1,
                _ => runs.push((index, 1)),
            }
        }
        next = next.max(last);
    }
    runs
}

/// Whether every byte is zero: compared a page at a time with a page of
/// zeros (`memcmp`, fast in debug builds too), stopping at the first page
/// with data.
fn all_zero(bytes: &[u8]) -> bool {
    static ZEROS: [u8; 4096] = [0; 4096];
    bytes.chunks(ZEROS.len()).all(|page| page == &ZEROS[..page.len()])
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn tmp() -> tempfile::TempDir {
        crate::test_temp::dir("")
    }

    /// A 5 MiB + 100 byte file: data in block 0, a zero-filled block 2
    /// (written, so data), a byte in block 4, holes elsewhere.
    fn sparse_file(path: &std::path::Path) -> File {
        let mut f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path).unwrap();
        f.write_all(&[7u8; 5000]).unwrap();
        f.write_all_at(&vec![0u8; HASH_BLOCK as usize], 2 * HASH_BLOCK).unwrap();
        f.write_all_at(b"x", 4 * HASH_BLOCK + 12).unwrap();
        f.set_len(5 * HASH_BLOCK + 100).unwrap();
        f
    }

    #[test]
    fn a_sparse_copy_is_byte_identical_hashes_the_same_and_one_byte_changes_the_hash() {
        let dir = tmp();
        let src = sparse_file(&dir.path().join("src"));
        let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("dst")).unwrap();
        let copied = copy_image(&src, &dst, true).unwrap();
        assert_eq!(std::fs::read(dir.path().join("src")).unwrap(), std::fs::read(dir.path().join("dst")).unwrap());
        let (a, _) = content_hash(&src).unwrap();
        let (b, data) = content_hash(&dst).unwrap();
        assert_eq!(a, b, "{copied:?}");
        assert!(data > 0);
        // The same content written densely (holes as zeros) hashes alike.
        let dense = dir.path().join("dense");
        std::fs::write(&dense, std::fs::read(dir.path().join("src")).unwrap()).unwrap();
        assert_eq!(content_hash(&File::open(&dense).unwrap()).unwrap().0, a);
        dst.write_all_at(b"y", 4 * HASH_BLOCK + 12).unwrap();
        assert_ne!(content_hash(&dst).unwrap().0, a);
        // Length is part of the content.
        dst.write_all_at(b"x", 4 * HASH_BLOCK + 12).unwrap();
        assert_eq!(content_hash(&dst).unwrap().0, a);
        dst.set_len(6 * HASH_BLOCK).unwrap();
        assert_ne!(content_hash(&dst).unwrap().0, a);
    }

    #[test]
    fn a_copy_through_memory_is_byte_identical_and_stays_sparse() {
        let dir = tmp();
        let src = sparse_file(&dir.path().join("src"));
        let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("dst")).unwrap();
        let data = sparse_copy(&src, &dst, Transfer::ReadWrite).unwrap();
        assert_eq!(std::fs::read(dir.path().join("src")).unwrap(), std::fs::read(dir.path().join("dst")).unwrap());
        assert_eq!(data, region_bytes(&data_regions(&src).unwrap()));
        assert_eq!(region_bytes(&data_regions(&dst).unwrap()), data);
    }

    /// An image for a loop device is written with direct I/O: the same
    /// bytes, to an end off the alignment, holes kept, the descriptor
    /// buffered again after, and none of the copy left in the page cache
    /// but the tail written past the last aligned block.
    #[test]
    fn a_copy_written_direct_is_byte_identical_to_an_unaligned_end_and_leaves_no_cached_copy() {
        let dir = tmp();
        let (src_path, dst_path) = (dir.path().join("src"), dir.path().join("dst"));
        let src = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&src_path).unwrap();
        let bytes: Vec<u8> = (0..12u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        src.write_all_at(&bytes, 0).unwrap();
        src.write_all_at(&bytes[..(2 << 20) + 100], 18 << 20).unwrap();
        let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&dst_path).unwrap();
        let data = sparse_copy(&src, &dst, Transfer::Direct).unwrap();
        assert_eq!(std::fs::read(&src_path).unwrap(), std::fs::read(&dst_path).unwrap());
        assert_eq!(region_bytes(&data_regions(&dst).unwrap()), data);
        assert!(data < 15 << 20, "the hole between was copied: {data}");
        assert!(!rustix::fs::fcntl_getfl(&dst).unwrap().contains(OFlags::DIRECT));
        // A second copy, asked about before anything reads it: of its
        // pages, only the tail's (written buffered) may be cached.
        let dst2 = dir.path().join("dst2");
        let fresh = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&dst2).unwrap();
        sparse_copy(&src, &fresh, Transfer::Direct).unwrap();
        let Ok(out) =
            std::process::Command::new("fincore").args(["--bytes", "--noheadings", "--output", "RES"]).arg(&dst2).output()
        else {
            return;
        };
        let resident: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert!(resident <= 8192, "{resident} bytes of the copy are in the page cache: it was not written direct");
    }

    /// The hash's definition written out plainly, over the whole file's
    /// bytes in memory.
    fn reference_hash(bytes: &[u8]) -> String {
        let mut hasher = Sha256::new();
        hasher.update((bytes.len() as u64).to_le_bytes());
        for (index, block) in bytes.chunks(HASH_BLOCK as usize).enumerate() {
            if block.iter().any(|&b| b != 0) {
                hasher.update((index as u64).to_le_bytes());
                hasher.update(block);
            }
        }
        hex(&hasher.finalize())
    }

    #[test]
    fn the_hash_read_on_two_threads_through_the_cache_or_from_the_disk_is_the_definition() {
        let dir = tmp();
        let path = |name: &str| dir.path().join(name);
        let new = |name: &str| std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(path(name)).unwrap();
        let mut files = vec![("sparse", sparse_file(&path("sparse")))];
        // 21 blocks of data and 5 bytes: reads of 8, 8 and 6 blocks, the
        // last one short of a page.
        let dense = new("dense");
        let bytes: Vec<u8> = (0..21 * HASH_BLOCK as u32 + 5).map(|i| (i % 253) as u8 | 1).collect();
        dense.write_all_at(&bytes, 0).unwrap();
        files.push(("dense", dense));
        // Two regions in one block, one across a block's end, and data
        // after a long hole.
        let spread = new("spread");
        for at in [10, 3 * HASH_BLOCK + 100, 3 * HASH_BLOCK + 900_000, 5 * HASH_BLOCK - 7, 40 * HASH_BLOCK] {
            spread.write_all_at(&[0xa5; 4096], at).unwrap();
        }
        spread.set_len(41 * HASH_BLOCK + 4095).unwrap();
        files.push(("spread", spread));
        files.push(("empty", new("empty")));
        for (name, file) in &files {
            file.sync_all().unwrap();
            let want = reference_hash(&std::fs::read(path(name)).unwrap());
            let data = region_bytes(&data_regions(file).unwrap());
            assert_eq!(content_hash(file).unwrap(), (want.clone(), data), "{name}");
            assert_eq!(content_hash_from_disk(file).unwrap(), (want, data), "{name}, read with O_DIRECT");
        }
    }

    #[test]
    fn regions_of_an_empty_and_an_all_hole_file() {
        let dir = tmp();
        let f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("f")).unwrap();
        assert!(data_regions(&f).unwrap().is_empty());
        f.set_len(3 * HASH_BLOCK).unwrap();
        assert!(data_regions(&f).unwrap().is_empty());
        let (empty_hash, data) = content_hash(&f).unwrap();
        assert_eq!(data, 0);
        assert_eq!(empty_hash.len(), 64);
    }

    /// A copy read direct from the disk: the same bytes to an end off the
    /// alignment, holes kept, neither file left `O_DIRECT`.
    #[test]
    fn a_copy_from_the_disk_is_byte_identical_and_stays_sparse() {
        let dir = tmp();
        let (src_path, dst_path) = (dir.path().join("src"), dir.path().join("dst"));
        let src = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&src_path).unwrap();
        let bytes: Vec<u8> = (0..20u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        src.write_all_at(&bytes, 0).unwrap();
        src.write_all_at(&bytes[..(1 << 20) + 333], 40 << 20).unwrap();
        src.sync_all().unwrap();
        let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&dst_path).unwrap();
        let data = copy_from_disk(&src, &dst).unwrap();
        assert_eq!(std::fs::read(&src_path).unwrap(), std::fs::read(&dst_path).unwrap());
        assert_eq!(data, region_bytes(&data_regions(&src).unwrap()));
        assert!(region_bytes(&data_regions(&dst).unwrap()) < 25 << 20, "the hole between was copied");
        assert!(!rustix::fs::fcntl_getfl(&dst).unwrap().contains(OFlags::DIRECT));
    }

    #[test]
    fn a_copy_without_zeros_holds_the_same_bytes_and_no_block_of_zeros() {
        let dir = tmp();
        let src = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("src")).unwrap();
        // Data, a block of zeros written as data, data not block-aligned,
        // a hole, and zeros ending the file short of a block.
        src.write_all_at(&[7u8; 5000], 0).unwrap();
        src.write_all_at(&[0u8; 3 * 4096], 8192).unwrap();
        src.write_all_at(&[9u8; 10], 4096 * 5 + 3).unwrap();
        src.write_all_at(&[0u8; 100], (1 << 20) + 4096).unwrap();
        let dst = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.path().join("dst")).unwrap();
        let written = copy_without_zeros(&src, &dst).unwrap();
        let (a, b) = (std::fs::read(dir.path().join("src")).unwrap(), std::fs::read(dir.path().join("dst")).unwrap());
        assert_eq!(a, b);
        // Blocks 0-1 (5000 bytes of 7s), block 5 (the 9s), the short zero
        // tail; the three blocks of zeros are a hole.
        assert_eq!(written, 2 * 4096 + 4096 + 100);
        assert_eq!(region_bytes(&data_regions(&dst).unwrap()), 2 * 4096 + 4096 + 100);
    }
}
