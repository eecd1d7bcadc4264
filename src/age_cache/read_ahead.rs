//! Reading a file's pieces on threads of their own while the caller uses
//! each in order: what the content hash and a copy through memory share.
//!
//! The design decision: each reader thread takes every `readers`-th piece
//! and keeps two buffers, one being filled while the caller uses the
//! other, so the disk (or the page cache) and the caller work at once; the
//! caller takes the pieces strictly in order and gives each buffer back to
//! the thread that filled it. A reader stops when the caller stops (a
//! failed use drops the channels), and the caller stops at a failed read.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::sync_channel;

use crate::sys::aligned::{ALIGN, AlignedBuf};

/// Read each of `pieces` (a byte offset and a length) of `file`, or of
/// `direct` (the same file opened `O_DIRECT`) while it answers, on
/// `readers` threads of their own, and hand each to `use_piece` on this
/// thread, in order, with its offset. A file that ends before a piece does
/// is an error ([`shrank`]).
pub(super) fn read_ahead(
    file: &File,
    direct: Option<&File>,
    pieces: &[(u64, usize)],
    readers: usize,
    mut use_piece: impl FnMut(u64, &[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let readers = readers.max(1);
    // Whole pages, as a direct read asks for.
    let longest = pieces.iter().map(|&(_, len)| len).max().unwrap_or(0).next_multiple_of(ALIGN);
    std::thread::scope(|scope| {
        let mut lanes = Vec::new();
        for first in 0..readers.min(pieces.len()) {
            let (full, filled) = sync_channel::<io::Result<(u64, usize, AlignedBuf)>>(2);
            let (give_back, empty) = sync_channel::<AlignedBuf>(2);
            for _ in 0..2 {
                give_back.send(AlignedBuf::zeroed(longest)).expect("room for both buffers");
            }
            lanes.push((filled, give_back));
            let mine = pieces.iter().skip(first).step_by(readers);
            scope.spawn(move || {
                let mut direct = direct;
                for &(at, want) in mine {
                    // The caller stopped (a use failed): nothing more to read.
                    let Ok(mut buf) = empty.recv() else { return };
                    let read = read_run(file, &mut direct, buf.as_mut_slice(), want, at);
                    let failed = read.is_err();
                    if full.send(read.map(|()| (at, want, buf))).is_err() || failed {
                        return;
                    }
                }
            });
        }
        for turn in 0..pieces.len() {
            let (filled, give_back) = &lanes[turn % readers];
            let (at, want, buf) = filled.recv().map_err(|_| io::Error::other("a thread reading the image stopped"))??;
            use_piece(at, &buf.as_slice()[..want])?;
            // Its reader may be done and gone: the buffer is not needed.
            let _ = give_back.send(buf);
        }
        Ok(())
    })
}

/// The error of a file shorter than the pieces asked of it.
pub(super) fn shrank() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "the image shrank while it was read")
}

/// Fill the first `want` bytes of `buf` (aligned, a whole number of
/// pages long) from `file` at `offset`: through `direct` while it works (a
/// direct read the file system refuses, EINVAL, drops it for good), else
/// through the page cache. A file that ends early is an error.
pub(super) fn read_run(file: &File, direct: &mut Option<&File>, buf: &mut [u8], want: usize, offset: u64) -> io::Result<()> {
    let capacity = buf.len();
    let mut done = 0;
    while done < want {
        let at = offset + done as u64;
        let n = match *direct {
            // Whole pages are asked for; the file's end makes the read short.
            Some(d) => match d.read_at(&mut buf[done..(done + (want - done).next_multiple_of(ALIGN)).min(capacity)], at) {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    *direct = None;
                    continue;
                }
                other => other?,
            },
            None => file.read_at(&mut buf[done..want], at)?,
        };
        if n == 0 {
            return Err(shrank());
        }
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::OpenOptionsExt;

    use super::*;

    fn tmp() -> tempfile::TempDir {
        crate::test_temp::dir("")
    }

    #[test]
    fn a_file_shorter_than_its_runs_is_an_error_read_either_way() {
        let dir = tmp();
        let path = dir.path().join("short");
        std::fs::write(&path, vec![3u8; 5000]).unwrap();
        let file = File::open(&path).unwrap();
        let direct = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(&path).unwrap();
        let mut buf = AlignedBuf::zeroed(2 << 20);
        for mut how in [None, Some(&direct)] {
            let e = read_run(&file, &mut how, buf.as_mut_slice(), 9000, 0).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
            assert!(e.to_string().contains("shrank"), "{e}");
        }
        read_run(&file, &mut Some(&direct), buf.as_mut_slice(), 5000, 0).unwrap();
        assert!(buf.as_slice()[..5000].iter().all(|&b| b == 3));
    }
}
