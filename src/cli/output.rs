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
//! a socket or a link to nothing is refused (exit 2). A closed stdout, in
//! contrast, is not an error: `fslab ... | head` is a reader that has seen
//! enough.
//!
//! fslab writes as root, so the path is walked one component at a time
//! (`ledger::walk`): a symbolic link is followed only when it and every
//! folder above it belong to root or the invoking user (`SUDO_UID`) and no
//! one else may write those folders (sticky ones like `/tmp` excepted);
//! another user's link is refused (exit 2) with its owner named. A link to
//! a regular file has the file it names replaced, the link kept. The
//! folder found is held by descriptor, and the temporary file made and
//! renamed in it, so what was checked is what is written.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStringExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::error::{Error, Result};
use crate::ledger::walk::{Refusal, Rules, walk};

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
    /// Nothing (`mode` `None`: a new file is made) or a regular file with
    /// its permission bits: `name` in the folder held, replaced whole.
    File { folder: OwnedFd, name: OsString, mode: Option<u32> },
    /// A FIFO or a character device, open for writing: written through.
    Stream(File),
}

/// Write `bytes` to `path`, as the module doc says: replace a regular
/// file whole, write through to a FIFO or character device, refuse
/// anything else. Errors name `path` and `what` was being written
/// (`write`, `write SVG`).
pub(crate) fn write_whole(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    match destination(path, what)? {
        Destination::File { folder, name, mode } => replace(&folder, &name, mode, bytes).map_err(|e| Error::io(path, what, e)),
        Destination::Stream(mut file) => match file.write_all(bytes) {
            Ok(()) => Ok(()),
            // The reader of a FIFO went away: as with stdout, it has seen
            // enough.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            Err(e) => Err(Error::io(path, what, e)),
        },
    }
}

/// Find what `path` names without opening it for real: its folder walked
/// by the rules (`ledger::walk`), its last component opened `O_PATH`
/// without following it (no device opened, no FIFO waited on), a link
/// there followed by the same rules. A link in `/proc` (`/dev/stdout`
/// leads to `/proc/self/fd/1`) names an open file, which the kernel
/// follows: a stream is written through that very object, a regular file
/// is found again by its path and must be the same file.
fn destination(path: &Path, what: &str) -> Result<Destination> {
    let shown = crate::text::path(path);
    let refuse = |why: &str| Err(Error::usage(format!("{shown}: {what}: {why}")));
    let rules = Rules::for_named_files();
    let refused = |refusal: Refusal| refusal.into_error(path, what, rules.trusted);
    let (mut at, mut through_link, mut same_as) = (path.to_path_buf(), false, None);
    for _ in 0..40 {
        let Some(name) = at.file_name().map(OsStr::to_os_string) else {
            return refuse("a directory; give a file name");
        };
        let parent = at.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let folder = match walk(parent, rules) {
            Ok(folder) => folder,
            Err(e) if through_link && e.is_not_found() => return refuse(DANGLING),
            Err(e) => return Err(refused(e)),
        };
        let found = match rustix::fs::openat(&folder.fd, &name, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty()) {
            Ok(found) => found,
            Err(rustix::io::Errno::NOENT) if through_link => return refuse(DANGLING),
            Err(rustix::io::Errno::NOENT) => return Ok(Destination::File { folder: folder.fd, name, mode: None }),
            Err(e) => return Err(Error::io(path, what, e.into())),
        };
        let stat = rustix::fs::fstat(&found).map_err(|e| Error::io(path, what, e.into()))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => {}
            FileType::RegularFile if same_as.is_some_and(|id| id != (stat.st_dev, stat.st_ino)) => {
                return Err(Error::failed(format!("{shown}: {what}: the link changed while being followed; try again")));
            }
            FileType::RegularFile => return Ok(Destination::File { folder: folder.fd, name, mode: Some(stat.st_mode & 0o777) }),
            kind => return stream(found, kind, path, what),
        }
        let link = folder.path.join(&name);
        if stat.st_uid != 0 && stat.st_uid != rules.trusted {
            return Err(refused(Refusal::ForeignLink(link, stat.st_uid)));
        }
        if let Some(open) = folder.open {
            return Err(refused(Refusal::LinkBelowOpen(link, open)));
        }
        let text = PathBuf::from(OsString::from_vec(
            rustix::fs::readlinkat(&found, "", Vec::new()).map_err(|e| Error::io(path, what, e.into()))?.into_bytes(),
        ));
        if rustix::fs::fstatfs(&folder.fd).is_ok_and(|fs| fs.f_type == rustix::fs::PROC_SUPER_MAGIC) {
            // The open file itself, as the kernel follows the link.
            let object = match rustix::fs::openat(&folder.fd, &name, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
                Ok(object) => object,
                Err(rustix::io::Errno::NOENT) => return refuse(DANGLING),
                Err(e) => return Err(Error::io(path, what, e.into())),
            };
            let stat = rustix::fs::fstat(&object).map_err(|e| Error::io(path, what, e.into()))?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile if text.is_absolute() => same_as = Some((stat.st_dev, stat.st_ino)),
                FileType::RegularFile => return refuse("an open file that no longer has a name; name a file"),
                kind => return stream(object, kind, path, what),
            }
        }
        at = if text.is_absolute() { text } else { folder.path.join(text) };
        through_link = true;
    }
    Err(Error::io(path, what, io::Error::from_raw_os_error(libc::ELOOP)))
}

/// The refusal of a link that names nothing.
const DANGLING: &str = "a symbolic link to nothing; name a file, or remove the link";

/// `found` (an `O_PATH` descriptor of a `kind` that is not a regular
/// file or a link) opened to be written through when it is a FIFO or a
/// character device; refused when it is something fslab never writes its
/// output onto.
fn stream(found: OwnedFd, kind: FileType, path: &Path, what: &str) -> Result<Destination> {
    let refuse = |why: &str| Err(Error::usage(format!("{}: {what}: {why}", crate::text::path(path))));
    match kind {
        FileType::Fifo | FileType::CharacterDevice => {}
        FileType::Directory => return refuse("a directory; give a file name"),
        FileType::BlockDevice => return refuse("a block device; fslab never writes its output onto a disk, give a file name"),
        _ => return refuse("a socket or another special file; give a file name"),
    }
    // Reopened through the descriptor, so what is written to is what was
    // looked at; non-blocking only for the open, so a FIFO nobody reads
    // is an error, not a wait.
    let reopen = format!("/proc/self/fd/{}", found.as_raw_fd());
    let flags = OFlags::WRONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(reopen.as_str(), flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NXIO) if kind == FileType::Fifo => {
            return Err(Error::environment(format!(
                "{}: {what}: no process reads this FIFO; start its reader first",
                crate::text::path(path)
            )));
        }
        Err(e) => return Err(Error::io(path, what, e.into())),
    };
    let blocking = rustix::fs::fcntl_getfl(&fd).and_then(|f| rustix::fs::fcntl_setfl(&fd, f - OFlags::NONBLOCK));
    blocking.map_err(|e| Error::io(path, what, e.into()))?;
    Ok(Destination::Stream(File::from(fd)))
}

/// Write `bytes` into a new temporary file in `folder` and rename it over
/// `name` there; `mode` is the permission bits of the file replaced. On
/// failure the temporary file is removed.
fn replace(folder: &OwnedFd, name: &OsStr, mode: Option<u32>, bytes: &[u8]) -> io::Result<()> {
    let (temp, mut file) = temporary(folder, name, mode)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| match mode {
            // The mode asked at creation went through the umask.
            Some(mode) => file.set_permissions(std::fs::Permissions::from_mode(mode)),
            None => Ok(()),
        })
        .and_then(|()| file.sync_all())
        .and_then(|()| rustix::fs::renameat(folder, &temp, folder, name).map_err(io::Error::from));
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(folder, &temp, AtFlags::empty());
        return Err(e);
    }
    // The rename itself lasts once the folder is synced; it is done
    // either way, so a folder that cannot be synced is no error.
    if let Ok(synced) = rustix::fs::openat(folder, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()) {
        let _ = rustix::fs::fsync(synced);
    }
    Ok(())
}

/// A new file in `folder`, made with `O_EXCL` (so never through a link
/// someone put at its name) under a name no one can guess ahead.
fn temporary(folder: &OwnedFd, name: &OsStr, mode: Option<u32>) -> io::Result<(OsString, File)> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for attempt in 0..16u32 {
        let mut temp = OsString::from(".");
        temp.push(name);
        temp.push(format!(".fslab-tmp-{}-{:08x}", std::process::id(), seed.wrapping_add(attempt.wrapping_mul(0x9E37_79B9))));
        match rustix::fs::openat(folder, &temp, flags, Mode::from_raw_mode(mode.unwrap_or(0o666))) {
            Ok(fd) => return Ok((temp, File::from(fd))),
            Err(rustix::io::Errno::EXIST) => last = io::Error::from(io::ErrorKind::AlreadyExists),
            Err(e) => return Err(e.into()),
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
