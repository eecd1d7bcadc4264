//! Rebuilding the device as it was at a point of its write log: the image
//! from before the work, then the log's first N entries applied in order.
//!
//! The design decision: replay is a pure function of (before-image, log,
//! N): a write puts its data at its sector, a discard makes its range read
//! as zeros (a hole punched, or zeros written where the file system cannot
//! punch: the FUSE export answers a discard by punching the image, so the
//! recorder's own image reads zeros there too), and flushes and marks
//! change nothing. The same three always give the same bytes.

use std::fs::File;
use std::os::unix::fs::FileExt;

use rustix::fs::FallocateFlags;

use super::log::{Entry, WriteLog};
use crate::age_cache::image_copy::{self, Copied};
use crate::error::{Error, Result};

/// The most of one write's data held in memory at once.
const CHUNK: u64 = 1 << 20;

/// Apply `entries` (entries of `log`) to the image open as `image`, in
/// order.
pub fn apply(log: &WriteLog, entries: &[Entry], image: &File) -> Result<()> {
    let mut buf = Vec::new();
    for entry in entries {
        if entry.is_discard() {
            zero(image, entry.offset(), entry.nr_sectors * super::log::SECTOR)
                .map_err(|e| Error::io(log.path(), "zero a discarded range in the image rebuilt", e))?;
            continue;
        }
        let len = entry.data_bytes();
        let mut done = 0;
        while done < len {
            let n = CHUNK.min(len - done);
            buf.resize(n as usize, 0);
            log.read_data(entry, done, &mut buf)?;
            image
                .write_all_at(&buf, entry.offset() + done)
                .map_err(|e| Error::io(log.path(), "write a logged write into the image rebuilt", e))?;
            done += n;
        }
    }
    Ok(())
}

/// Make `out` (a new, empty file) the device as it was after the log's
/// first `upto` entries: a copy of `before` (a reflink where the file
/// system can, else a sparse copy), then those entries applied. How the
/// copy was made.
pub fn materialise(before: &File, log: &WriteLog, upto: usize, out: &File) -> Result<Copied> {
    let Some(entries) = log.entries().get(..upto) else {
        return Err(Error::usage(format!(
            "{}: entry {upto} asked for, but the log holds {}",
            log.path().display(),
            log.entries().len()
        )));
    };
    let copied = image_copy::copy_image(before, out, true)
        .map_err(|e| Error::io(log.path(), "copy the image from before the work", e))?;
    apply(log, entries, out)?;
    Ok(copied)
}

/// Make `len` bytes at `offset` read as zeros: a hole punched, or zeros
/// written where the file system punches none.
fn zero(image: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let punch = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
    match rustix::fs::fallocate(image, punch, offset, len) {
        Err(rustix::io::Errno::OPNOTSUPP) => {
            let zeros = vec![0u8; CHUNK.min(len) as usize];
            let mut done = 0;
            while done < len {
                let n = CHUNK.min(len - done) as usize;
                image.write_all_at(&zeros[..n], offset + done)?;
                done += n as u64;
            }
            Ok(())
        }
        other => other.map_err(Into::into),
    }
}

#[cfg(test)]
mod tests {
    use super::super::log::tests::{QEMU_LOG, log_of, qemu_log_image};
    use super::*;

    /// A new file `name` in `dir`, 128 KiB of zeros (a hole).
    fn zeros(dir: &std::path::Path, name: &str) -> File {
        let f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.join(name)).unwrap();
        f.set_len(128 << 10).unwrap();
        f
    }

    /// The device after `upto` entries of `log`, rebuilt from zeros into
    /// the new file `name`: its bytes.
    fn rebuilt(dir: &std::path::Path, log: &WriteLog, upto: usize, name: &str) -> Result<Vec<u8>> {
        let before = zeros(dir, &format!("{name}.before"));
        let out = File::options().read(true).write(true).create_new(true).open(dir.join(name)).unwrap();
        materialise(&before, log, upto, &out)?;
        Ok(std::fs::read(dir.join(name)).unwrap())
    }

    #[test]
    fn the_whole_log_rebuilds_the_image_the_driver_left() {
        let (dir, log) = log_of(QEMU_LOG);
        let log = log.unwrap();
        let whole = log.entries().len();
        assert_eq!(rebuilt(dir.path(), &log, whole, "out.img").unwrap(), qemu_log_image());
        // Again, from the same three: the same bytes.
        assert_eq!(rebuilt(dir.path(), &log, whole, "again.img").unwrap(), qemu_log_image());
    }

    #[test]
    fn a_dropped_entry_gives_another_image() {
        let (dir, log) = log_of(QEMU_LOG);
        let log = log.unwrap();
        let whole = qemu_log_image();
        // Left out in turn: each write of data and the discard show; the
        // flushes change nothing, nor do the zeros entry 4 wrote over zeros.
        let shows = [true, false, true, true, false, true, false];
        assert_eq!(log.entries().len(), shows.len());
        for (skip, shows) in shows.into_iter().enumerate() {
            let image = zeros(dir.path(), &format!("skip{skip}.img"));
            let kept: Vec<Entry> =
                log.entries().iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, e)| *e).collect();
            apply(&log, &kept, &image).unwrap();
            let got = std::fs::read(dir.path().join(format!("skip{skip}.img"))).unwrap();
            assert_eq!(got != whole, shows, "entry {skip} left out: {:?}", log.entries()[skip]);
        }
    }

    #[test]
    fn states_in_between_are_the_prefixes() {
        let (dir, log) = log_of(QEMU_LOG);
        let log = log.unwrap();
        let mut want = vec![0u8; 128 << 10];
        want[4096..8192].fill(0xa1);
        assert_eq!(rebuilt(dir.path(), &log, 2, "two.img").unwrap(), want, "after the first write and its flush");
        let e = rebuilt(dir.path(), &log, 8, "past.img").unwrap_err();
        assert!(e.message.contains("entry 8 asked for, but the log holds 7"), "{}", e.message);
    }
}
