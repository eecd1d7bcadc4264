//! Bounded reads of what a guest leaves on the host: its share's files
//! and its console. A guest writes without limit (a 64 GiB sparse file
//! costs it one `ftruncate` through 9p), so fslab reads a file's start or
//! end, never more than it asked for, and says when it left some out.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// What was read of a file, and whether the file held more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capped {
    /// The bytes read.
    pub bytes: Vec<u8>,
    /// Whether the file held more than was read.
    pub cut: bool,
}

/// The regular file at `path`, open for reading: never through a symlink,
/// never waiting on a FIFO.
fn open(path: &Path) -> io::Result<File> {
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

/// The first `max` bytes of the file at `path`.
pub fn head(path: &Path, max: u64) -> io::Result<Capped> {
    let mut bytes = Vec::new();
    open(path)?.take(max + 1).read_to_end(&mut bytes)?;
    let cut = bytes.len() as u64 > max;
    bytes.truncate(max as usize);
    Ok(Capped { bytes, cut })
}

/// The last `max` bytes of the file at `path` (as long as it was when
/// opened).
pub fn tail(path: &Path, max: u64) -> io::Result<Capped> {
    let mut file = open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(Capped { bytes, cut: start > 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_start_or_end_and_whether_there_was_more() {
        let dir = crate::test_temp::dir("");
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(head(&path, 4).unwrap(), Capped { bytes: b"0123".to_vec(), cut: true });
        assert_eq!(head(&path, 10).unwrap(), Capped { bytes: b"0123456789".to_vec(), cut: false });
        assert_eq!(tail(&path, 4).unwrap(), Capped { bytes: b"6789".to_vec(), cut: true });
        assert_eq!(tail(&path, 64).unwrap(), Capped { bytes: b"0123456789".to_vec(), cut: false });
        std::os::unix::fs::symlink(&path, dir.path().join("link")).unwrap();
        assert!(head(&dir.path().join("link"), 4).is_err(), "read through a symlink");
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        assert!(tail(&dir.path().join("folder"), 4).is_err());
    }
}
