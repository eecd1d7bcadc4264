//! The copy itself, as `tar x` does it: entries in archive order, each
//! directory made, each file created, written and closed, its data written
//! in the pieces GNU tar's extractor writes (see [`Stream`]).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::{Entry, EntryKind};
use crate::age_cache::image_copy::data_regions;
use crate::error::{Error, Result};

/// tar's header and data block.
const BLOCK_BYTES: u64 = 512;
/// tar's default record: 20 blocks.
pub(super) const RECORD_BYTES: u64 = 10_240;

/// Where file data comes from.
pub(super) enum From<'a> {
    /// The synthetic tree's text pool.
    Pool(&'a [u8]),
    /// The source directory (open, and its path for messages).
    Dir(&'a OwnedFd, &'a Path),
}

/// What a copy made.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Copied {
    /// Regular files.
    pub files: u64,
    /// Directories.
    pub dirs: u64,
    /// Symlinks.
    pub symlinks: u64,
    /// Bytes of file data.
    pub bytes: u64,
}

/// The position in tar's archive stream: 512-byte headers and data
/// blocks, read in 10,240-byte records. The extractor writes a file's data
/// a record's remainder at a time, so the pieces end at record boundaries.
#[derive(Debug, Default)]
struct Stream {
    at: u64,
}

impl Stream {
    /// An entry's header block.
    fn header(&mut self) {
        self.at += BLOCK_BYTES;
    }

    /// The next piece of a file with `left` bytes still to write.
    fn piece(&mut self, left: u64) -> usize {
        let n = left.min(RECORD_BYTES - self.at % RECORD_BYTES);
        self.at += n;
        n as usize
    }

    /// A file's data ends padded to a whole block.
    fn end_data(&mut self) {
        self.at = self.at.next_multiple_of(BLOCK_BYTES);
    }
}

/// Copy `entries` into the directory `to` (at `to_path`), in order, as
/// `tar x` does. Nothing is allocated per entry unless it fails.
pub(super) fn copy(entries: &[Entry], from: From<'_>, to: &OwnedFd, to_path: &Path) -> Result<Copied> {
    let mut copied = Copied::default();
    let mut stream = Stream::default();
    let mut buf = vec![0u8; RECORD_BYTES as usize];
    let create = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOCTTY | OFlags::CLOEXEC;
    for entry in entries {
        stream.header();
        let path = entry.path.as_c_str();
        let at = || to_path.join(OsStr::from_bytes(path.to_bytes()));
        match &entry.kind {
            EntryKind::Dir => {
                rustix::fs::mkdirat(to, path, Mode::from_raw_mode(0o755))
                    .map_err(|e| Error::io(&at(), "mkdir", e.into()))?;
                copied.dirs += 1;
            }
            EntryKind::Symlink(target) => {
                rustix::fs::symlinkat(target.as_c_str(), to, path).map_err(|e| Error::io(&at(), "symlink", e.into()))?;
                copied.symlinks += 1;
            }
            EntryKind::File { len, offset } => {
                let fd = rustix::fs::openat(to, path, create, Mode::from_raw_mode(0o644))
                    .map_err(|e| Error::io(&at(), "create", e.into()))?;
                let mut out = File::from(fd);
                let written = match &from {
                    From::Pool(pool) => {
                        let data = &pool[*offset..*offset + *len as usize];
                        let mut done = 0;
                        while done < data.len() {
                            let n = stream.piece((data.len() - done) as u64);
                            out.write_all(&data[done..done + n]).map_err(|e| Error::io(&at(), "write", e))?;
                            done += n;
                        }
                        done as u64
                    }
                    From::Dir(source, source_path) => {
                        let in_source = || source_path.join(OsStr::from_bytes(path.to_bytes()));
                        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC;
                        let fd = rustix::fs::openat(source, path, flags, Mode::empty())
                            .map_err(|e| Error::io(&in_source(), "open", e.into()))?;
                        copy_file(&mut File::from(fd), &mut out, *len, &mut stream, &mut buf)
                            .map_err(|e| Error::io(&in_source(), "copy", e))?
                    }
                };
                stream.end_data();
                copied.files += 1;
                copied.bytes += written;
            }
        }
    }
    Ok(copied)
}

/// Copy up to `len` bytes (the size when listed) from `input` to `out` in
/// the stream's pieces; a file that shrank since is copied as it is now.
/// Holes stay holes, as a tar that knows sparse files (bsdtar, GNU tar
/// `--sparse`) keeps them: only data regions are read and written, and the
/// length is set last. Returns the bytes the copy covers, holes included.
fn copy_file(input: &mut File, out: &mut File, len: u64, stream: &mut Stream, buf: &mut [u8]) -> io::Result<u64> {
    let now = input.metadata()?.len().min(len);
    for (start, end) in data_regions(input)? {
        let (start, end) = (start.min(now), end.min(now));
        input.seek(SeekFrom::Start(start))?;
        out.seek(SeekFrom::Start(start))?;
        let mut done = start;
        while done < end {
            let n = stream.piece(end - done);
            let got = read_up_to(input, &mut buf[..n])?;
            out.write_all(&buf[..got])?;
            done += got as u64;
            if got < n {
                return Ok(done); // it shrank while copied
            }
        }
    }
    out.set_len(now)?;
    Ok(now)
}

/// Fill `buf` unless the file ends first; the bytes read.
fn read_up_to(input: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Read every file of a directory source once (its data regions: a hole
/// is never read), so the measured copy reads it from the cache as the
/// seed's did.
pub(super) fn warm(root: &Path, entries: &[Entry]) -> Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    for entry in entries {
        if let EntryKind::File { .. } = entry.kind {
            let path = root.join(OsStr::from_bytes(entry.path.to_bytes()));
            let mut file = File::open(&path).map_err(|e| Error::io(&path, "open", e))?;
            for (start, end) in data_regions(&file).map_err(|e| Error::io(&path, "find the data of", e))? {
                file.seek(SeekFrom::Start(start)).map_err(|e| Error::io(&path, "seek", e))?;
                let mut left = end - start;
                while left > 0 {
                    let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let got = read_up_to(&mut file, &mut buf[..want]).map_err(|e| Error::io(&path, "read", e))?;
                    if got == 0 {
                        break;
                    }
                    left -= got as u64;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_stay_holes_and_the_length_is_kept() {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let dir = crate::test_temp::dir("");
        let source = dir.path().join("sparse");
        let f = File::create(&source).unwrap();
        f.write_all_at(&[7u8; 100_000], 1 << 20).unwrap();
        f.set_len(64 << 30).unwrap();
        let mut out = File::create(dir.path().join("copy")).unwrap();
        let mut buf = vec![0u8; RECORD_BYTES as usize];
        let covered = copy_file(&mut File::open(&source).unwrap(), &mut out, 64 << 30, &mut Stream::default(), &mut buf).unwrap();
        assert_eq!(covered, 64 << 30);
        let meta = out.metadata().unwrap();
        assert_eq!(meta.len(), 64 << 30);
        assert!(meta.blocks() * 512 < 4 << 20, "a 64 GiB hole was written: {} bytes allocated", meta.blocks() * 512);
        let mut back = vec![0u8; 100_002];
        File::open(dir.path().join("copy")).unwrap().read_exact_at(&mut back, (1 << 20) - 1).unwrap();
        assert_eq!((back[0], back[1], back[100_000], back[100_001]), (0, 7, 7, 0));
    }

    #[test]
    fn writes_end_at_tar_record_boundaries() {
        let mut s = Stream::default();
        s.header();
        let pieces: Vec<usize> = std::iter::from_fn(|| Some(s.piece(20_000))).take(2).collect();
        assert_eq!(pieces, [10_240 - 512, 10_240]);
        s.at = 512 + 20_000;
        s.end_data();
        assert_eq!(s.at, 20_992);
        s.header();
        assert_eq!(s.piece(100), 100);
        assert_eq!(s.piece(u64::MAX), 10_240 - 21_504 % 10_240 - 100);
    }
}
