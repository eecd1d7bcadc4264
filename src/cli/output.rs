//! Where a command's output goes: stdout, or a file named with `-o` or
//! `--svg`.
//!
//! The design decision: a file is written whole or not at all. The bytes
//! go to a temporary file beside the target (the same directory, so the
//! same file system, so the rename is atomic), are synced, and only then
//! renamed over it; a failure or a crash leaves the old file or none,
//! never a partial one that looks finished. A closed stdout, in contrast,
//! is not an error: `fslab ... | head` is a reader that has seen enough.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

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

/// Write `bytes` to `path` through a temporary file beside it and a
/// rename. On failure the temporary file is removed and the error names
/// `path` and `what` was being written (`write`, `write SVG`).
pub(crate) fn write_whole(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // A path without a file name (`/`, `..`) still gets a temporary file,
    // and the rename over a directory then fails with the system's reason.
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.fslab-tmp-{}", std::process::id()));
    let written = File::create(&temp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Error::io(path, what, e)
    })
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
    fn a_failed_rename_removes_the_temporary_file_and_names_the_target() {
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
