//! The bytes replace-files writes, and the checker that reads them back
//! from a crash state.
//!
//! Every file is [`WRITES`] writes of [`WRITE_BYTES`], made of 64-byte
//! records that each name the file, the generation (1: before the work, 2:
//! the work's) and their own offset, so one read tells a file's whole old
//! contents from its whole new ones, and either from a mix, zeros, or a
//! wrong length.

use std::io::Read;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::super::durable::{FileJudged, FileState, Looked, StateAt, StateChecker};
use crate::error::{Error, Result};

/// Each file: 16 writes of 1 KiB, as the seed's write_file.
pub(super) const WRITES: usize = 16;
/// The size of each write.
pub(super) const WRITE_BYTES: usize = 1024;
/// A file's length.
pub(super) const FILE_BYTES: usize = WRITES * WRITE_BYTES;
/// The generation the setup writes.
pub(super) const OLD: u32 = 1;
/// The generation the work writes.
pub(super) const NEW: u32 = 2;

/// Bytes per record.
const RECORD: usize = 64;

/// The `index`th write of generation `generation` of the file `name`.
pub(super) fn block(name: &str, generation: u32, index: usize) -> [u8; WRITE_BYTES] {
    let mut out = [b'.'; WRITE_BYTES];
    for (i, record) in out.chunks_exact_mut(RECORD).enumerate() {
        let offset = index * WRITE_BYTES + i * RECORD;
        let text = format!("{name} gen {generation} at {offset}");
        let n = text.len().min(RECORD - 1);
        record[..n].copy_from_slice(&text.as_bytes()[..n]);
        record[RECORD - 1] = b'\n';
    }
    out
}

/// What `bytes` are, as the file `name`'s contents.
pub(super) fn classify(name: &str, bytes: &[u8]) -> FileState {
    if bytes.is_empty() {
        return FileState::Empty;
    }
    if bytes.len() != FILE_BYTES {
        return FileState::Torn;
    }
    let whole = |generation| (0..WRITES).all(|i| bytes[i * WRITE_BYTES..(i + 1) * WRITE_BYTES] == block(name, generation, i));
    if whole(NEW) {
        FileState::New
    } else if whole(OLD) {
        FileState::Old
    } else {
        FileState::Torn
    }
}

/// The checker of replace-files' crash states.
pub(super) struct Checker {
    /// Every name the work replaces, in its order.
    pub names: Vec<String>,
    /// The name its new contents are written under before the rename,
    /// for the strategies that rename.
    pub renames: bool,
}

/// `name` in the folder open as `dir`, read whole without following a
/// link: `None` when it is not there (or not a regular file).
fn read_in(dir: &std::fs::File, name: &str, path: &Path) -> Result<Option<Vec<u8>>> {
    let fd = match rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(None),
        Err(e) => return Err(Error::io(&path.join(name), "open", e.into())),
    };
    let mut file = std::fs::File::from(fd);
    if !file.metadata().map_err(|e| Error::io(&path.join(name), "stat", e))?.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(FILE_BYTES);
    file.read_to_end(&mut bytes).map_err(|e| Error::io(&path.join(name), "read", e))?;
    Ok(Some(bytes))
}

impl StateChecker for Checker {
    fn check(&self, dir: &Path, _at: &StateAt<'_>) -> Result<Looked> {
        let folder = std::fs::File::open(dir).map_err(|e| Error::io(dir, "open the work folder", e))?;
        let mut judged = Vec::with_capacity(self.names.len());
        for name in &self.names {
            let state = read_in(&folder, name, dir)?.map_or(FileState::Missing, |b| classify(name, &b));
            let new_somewhere = state == FileState::New
                || (self.renames
                    && read_in(&folder, &format!("{name}.dpkg-new"), dir)?.is_some_and(|b| classify(name, &b) == FileState::New));
            judged.push(FileJudged { name: name.clone(), state, existed: name.starts_with("exist_"), new_somewhere });
        }
        Ok(Looked::Files(judged))
    }

    fn about(&self) -> String {
        "replace-files: each file old, new, empty, torn or missing; durability points".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(name: &str, generation: u32) -> Vec<u8> {
        (0..WRITES).flat_map(|i| block(name, generation, i)).collect()
    }

    #[test]
    fn each_record_names_file_generation_and_offset() {
        let b = block("exist_3", NEW, 2);
        assert_eq!(&b[..RECORD], format!("{:.<63}\n", "exist_3 gen 2 at 2048").as_bytes());
        assert_eq!(&b[RECORD..RECORD + 21], b"exist_3 gen 2 at 2112");
    }

    #[test]
    fn old_new_empty_and_torn_are_told_apart() {
        assert_eq!(classify("exist_1", &contents("exist_1", OLD)), FileState::Old);
        assert_eq!(classify("exist_1", &contents("exist_1", NEW)), FileState::New);
        assert_eq!(classify("exist_1", b""), FileState::Empty);
        // Another file's contents, a mix, zeros, a short or long file.
        assert_eq!(classify("exist_1", &contents("exist_2", NEW)), FileState::Torn);
        let mut mixed = contents("exist_1", OLD);
        mixed[WRITE_BYTES..2 * WRITE_BYTES].copy_from_slice(&block("exist_1", NEW, 1));
        assert_eq!(classify("exist_1", &mixed), FileState::Torn);
        assert_eq!(classify("exist_1", &vec![0; FILE_BYTES]), FileState::Torn);
        assert_eq!(classify("exist_1", &contents("exist_1", NEW)[..4096]), FileState::Torn);
        let mut long = contents("exist_1", NEW);
        long.push(b'x');
        assert_eq!(classify("exist_1", &long), FileState::Torn);
    }

    #[test]
    fn the_checker_finds_new_contents_under_the_temporary_name_and_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("exist_1"), contents("exist_1", OLD)).unwrap();
        std::fs::write(d.join("exist_1.dpkg-new"), contents("exist_1", NEW)).unwrap();
        std::fs::write(d.join("new_1"), b"").unwrap();
        std::os::unix::fs::symlink(d.join("exist_1.dpkg-new"), d.join("new_2")).unwrap();
        let names: Vec<String> = ["exist_1", "new_1", "new_2", "new_3"].map(String::from).to_vec();
        let judged = crate::scenario::durable::files_in(&Checker { names: names.clone(), renames: true }, d);
        let seen: Vec<(FileState, bool, bool)> = judged.iter().map(|j| (j.state, j.existed, j.new_somewhere)).collect();
        assert_eq!(
            seen,
            [
                (FileState::Old, true, true),
                (FileState::Empty, false, false),
                (FileState::Missing, false, false),
                (FileState::Missing, false, false)
            ]
        );
        let in_place = crate::scenario::durable::files_in(&Checker { names, renames: false }, d);
        assert!(!in_place[0].new_somewhere, "in place, only the name itself counts");
    }
}
