//! Where a command's output goes: stdout, or a file named with `-o` or
//! `--svg`.
//!
//! The design decision: a regular file is written whole or not at all. The
//! bytes go to a temporary file beside the target (the same directory, so
//! the same file system, so the rename is atomic), are synced, and only
//! then renamed over it; a failure or a crash leaves the old file or none,
//! never a partial one that looks finished. Only a regular file (or
//! nothing) is ever replaced: a FIFO or a character device named (directly
//! or through a symbolic link, as `/dev/stdout` is) is written through,
//! opened without creating or truncating anything, its write errors
//! reported (ENOSPC from `/dev/full`: exit 4); a directory, a block device,
//! a socket or a link to nothing is refused (exit 2). A symbolic link to a
//! regular file has the file it names replaced, the link kept. A closed
//! stdout, in contrast, is not an error: `fslab ... | head` is a reader
//! that has seen enough.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

use crate::error::{Error, Result};

/// A buffered, locked stdout whose write errors become fslab errors; a
/// closed pipe is reported as [`Closed`] so the caller can stop quietly.
pub(crate) struct Out {
    inner: io::BufWriter<io::StdoutLock<'static>>,
}

/// The reader went away (EPIPE): stop writing, exit 0.
#[derive(Debug)]
pub(crate) struct Closed;

impl Out {
    /// Stdout, locked for the command's whole output, in 64 KiB writes.
    pub(crate) fn stdout() -> Self {
        Out { inner: io::BufWriter::with_capacity(64 * 1024, io::stdout().lock()) }
    }

    /// Where to write; errors come back as they are, for [`write_error`].
    pub(crate) fn writer(&mut self) -> &mut impl Write {
        &mut self.inner
    }

    /// Push out what is buffered.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Write a rendered output to stdout; a reader that went away is not an
/// error.
pub(crate) fn print(rendered: &[u8]) -> std::result::Result<(), Error> {
    let mut out = Out::stdout();
    if let Err(e) = out.writer().write_all(rendered).and_then(|()| out.flush()) {
        write_error(e)?;
    }
    Ok(())
}

/// Turn a write error into `Ok(Closed)` for a broken pipe, else an error.
pub(crate) fn write_error(e: io::Error) -> std::result::Result<Closed, Error> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(Closed)
    } else {
        Err(Error::failed(format!("writing output: {}", crate::error::describe_io(&e))))
    }
}

/// What is at an output path, and so how it is written.
enum Destination {
    /// Nothing: a new file is made there.
    Absent,
    /// A regular file, at `at` (the file a symbolic link names, when the
    /// path is one), with its permission bits: replaced whole.
    Regular { at: PathBuf, mode: u32 },
    /// A FIFO or a character device, open for writing: written through.
    Stream(File),
}

/// Write `bytes` to `path`, as the module doc says: replace a regular
/// file whole, write through to a FIFO or character device, refuse
/// anything else. Errors name `path` and `what` was being written
/// (`write`, `write SVG`).
pub(crate) fn write_whole(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    match destination(path, what)? {
        Destination::Absent => replace(path, None, bytes, what),
        Destination::Regular { at, mode } => replace(&at, Some(mode), bytes, what),
        Destination::Stream(mut file) => match file.write_all(bytes) {
            Ok(()) => Ok(()),
            // The reader of a FIFO went away: as with stdout, it has seen
            // enough.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(Error::io(path, what, e)),
        },
    }
}

/// Find what `path` is without opening it for real: an `O_PATH` open
/// lets the kernel resolve links (with its own rules for links in shared
/// folders, `fs.protected_symlinks`) and opens no device and waits on no
/// FIFO; only what will be written through is then opened, as the very
/// object found.
fn destination(path: &Path, what: &str) -> Result<Destination> {
    let refuse = |why: &str| Err(Error::usage(format!("{}: {what}: {why}", path.display())));
    let found = match rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => {
            return match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    refuse("a symbolic link to nothing; name a file, or remove the link")
                }
                _ => Ok(Destination::Absent),
            };
        }
        Err(rustix::io::Errno::ACCESS) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            return Err(Error::environment(format!(
                "{}: {what}: the kernel does not follow this symbolic link (fs.protected_symlinks: another \
                 user's link in a shared folder); name the file it points to",
                path.display()
            )));
        }
        Err(e) => return Err(Error::io(path, what, e.into())),
    };
    let stat = rustix::fs::fstat(&found).map_err(|e| Error::io(path, what, e.into()))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    match kind {
        FileType::RegularFile => Ok(Destination::Regular { at: regular_file_at(path, &stat, what)?, mode: stat.st_mode & 0o777 }),
        FileType::Fifo | FileType::CharacterDevice => {
            // Reopened through the descriptor, so what is written to is
            // what was looked at; non-blocking only for the open, so a
            // FIFO nobody reads is an error, not a wait.
            let reopen = format!("/proc/self/fd/{}", found.as_raw_fd());
            let flags = OFlags::WRONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let fd = match rustix::fs::open(reopen.as_str(), flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NXIO) if kind == FileType::Fifo => {
                    return Err(Error::environment(format!(
                        "{}: {what}: no process reads this FIFO; start its reader first",
                        path.display()
                    )));
                }
                Err(e) => return Err(Error::io(path, what, e.into())),
            };
            let blocking = rustix::fs::fcntl_getfl(&fd).and_then(|f| rustix::fs::fcntl_setfl(&fd, f - OFlags::NONBLOCK));
            blocking.map_err(|e| Error::io(path, what, e.into()))?;
            Ok(Destination::Stream(File::from(fd)))
        }
        FileType::Directory => refuse("a directory; give a file name"),
        FileType::BlockDevice => refuse("a block device; fslab never writes its output onto a disk, give a file name"),
        _ => refuse("a socket or another special file; give a file name"),
    }
}

/// Where the regular file `path` found is: `path` itself, or, when
/// `path` is a symbolic link, the file it names, checked to be the very
/// file found (same device and inode), so that file is replaced and the
/// link kept.
fn regular_file_at(path: &Path, found: &rustix::fs::Stat, what: &str) -> Result<PathBuf> {
    let is_link = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, what, e))?.file_type().is_symlink();
    if !is_link {
        return Ok(path.to_path_buf());
    }
    let target = std::fs::canonicalize(path).map_err(|e| Error::io(path, what, e))?;
    let same = std::fs::metadata(&target).is_ok_and(|m| m.dev() == found.st_dev && m.ino() == found.st_ino);
    if !same {
        return Err(Error::failed(format!("{}: {what}: the link changed while being followed; try again", path.display())));
    }
    Ok(target)
}

/// Write `bytes` into a new temporary file beside `path` and rename it
/// over `path`; `mode` is the permission bits of the file replaced. On
/// failure the temporary file is removed.
fn replace(path: &Path, mode: Option<u32>, bytes: &[u8], what: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (temp, mut file) = temporary(dir, &name, mode).map_err(|e| Error::io(path, what, e))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| match mode {
            // The mode asked at creation went through the umask.
            Some(mode) => file.set_permissions(std::fs::Permissions::from_mode(mode)),
            None => Ok(()),
        })
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(Error::io(path, what, e));
    }
    // The rename itself lasts once the folder is synced; it is done
    // either way, so a folder that cannot be synced is no error.
    if let Ok(folder) = File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// A new file beside the target, made with `O_EXCL` (so never through a
/// link someone put at its name) under a name no one can guess ahead.
fn temporary(dir: &Path, name: &str, mode: Option<u32>) -> io::Result<(PathBuf, File)> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for attempt in 0..16u32 {
        let temp = dir.join(format!(".{name}.fslab-tmp-{}-{:08x}", std::process::id(), seed.wrapping_add(attempt.wrapping_mul(0x9E37_79B9))));
        match OpenOptions::new().write(true).create_new(true).mode(mode.unwrap_or(0o666)).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing-folder").join("out.csv");
        assert!(write_whole(&target, b"x", "write").is_err());
        let whole = dir.path().join("out.csv");
        write_whole(&whole, b"whole\n", "write").unwrap();
        assert_eq!(std::fs::read(&whole).unwrap(), b"whole\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_directory_is_refused_before_any_temporary_file_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        let e = write_whole(&target, b"x", "write SVG").unwrap_err();
        assert!(e.message.starts_with(&format!("{}: write SVG: ", target.display())), "{}", e.message);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("taken")]);
    }
}
