//! Making and deleting the aging's files under one directory of the file
//! system, by descriptor: every path is walked from that directory one
//! component at a time with `O_NOFOLLOW`, so no symlink on the target —
//! a git repository can hold any — is ever followed, and no `..` or
//! absolute path is accepted. File data comes from one reused 1 MiB buffer
//! of seeded non-zero bytes, written with plain write(2); nothing is
//! fsynced per file (a phase ends with one syncfs).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::error::{Error, Result};
use crate::layout::fsinfo::magic::BTRFS;
use crate::scenario::tree_copy::synthetic::SplitMix;

/// The size of the data buffer every file is written from.
const BUFFER_BYTES: usize = 1 << 20;

const DIR_FLAGS: OFlags =
    OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// The aging directory (`root/NAME`) and the buffer files are written from.
pub struct Writer {
    base: OwnedFd,
    base_path: PathBuf,
    buffer: Vec<u8>,
    /// The last parent directory opened, by relative path.
    cached: Option<(Vec<u8>, OwnedFd)>,
}

/// The file system's fill level and size from `statfs` on `fd`: blocks
/// no file's data can take count as used.
///
/// That is `f_blocks - f_bfree` everywhere (metadata used, ext4's
/// root-reserved blocks free: fslab writes as root) except on btrfs,
/// whose `f_bfree` also counts the empty part of its metadata chunks. On
/// a 2.8 GiB image aged to 80% that way, 540 MiB of duplicated metadata
/// chunks held 3.7 MiB, data had 58 MiB left, and a 256 MiB file met
/// ENOSPC where the level said 20% was free. There `f_bavail` is the room
/// data has.
pub fn level_of(fd: impl AsFd) -> io::Result<(f64, u64, u64)> {
    let st = rustix::fs::fstatfs(fd)?;
    let frsize = st.f_frsize as u64;
    if st.f_blocks == 0 {
        return Ok((0.0, 0, frsize));
    }
    let free = if st.f_type as i64 == BTRFS { st.f_bavail } else { st.f_bfree };
    let used = st.f_blocks.saturating_sub(free);
    Ok((used as f64 / st.f_blocks as f64, st.f_blocks * frsize, frsize.max(512)))
}

impl Writer {
    /// Open (making it if missing) the directory `name` under the mounted
    /// file system's root directory `root`.
    pub fn open(root: &Path, name: &str) -> Result<Writer> {
        let at = |e: rustix::io::Errno, what: &str| Error::io(root, what, e.into());
        let root_fd = rustix::fs::open(root, DIR_FLAGS, Mode::empty()).map_err(|e| at(e, "open the file system's root"))?;
        match rustix::fs::mkdirat(&root_fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(at(e, &format!("make {name}/"))),
        }
        let base = rustix::fs::openat(&root_fd, name, DIR_FLAGS, Mode::empty())
            .map_err(|e| at(e, &format!("open {name}/ (it must be a directory, not a symlink)")))?;
        let mut rng = SplitMix::new(0x6167_6564_2062_7566);
        let buffer = (0..BUFFER_BYTES).map(|_| (rng.next_u64() as u8).max(1)).collect();
        Ok(Writer { base, base_path: root.join(name), buffer, cached: None })
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.base_path
    }

    /// Fill level, total bytes and block size of the file system.
    pub fn level(&self) -> Result<(f64, u64, u64)> {
        level_of(&self.base).map_err(|e| Error::io(&self.base_path, "statvfs", e))
    }

    /// Write back everything of this file system (syncfs).
    pub fn syncfs(&self) -> Result<()> {
        rustix::fs::syncfs(&self.base).map_err(|e| Error::io(&self.base_path, "syncfs", e.into()))
    }

    /// Split `path` into parent and name, with the parent open in
    /// `self.cached` (made, with its parents, when `create`).
    fn parent<'p>(&mut self, path: &'p [u8], create: bool) -> io::Result<&'p [u8]> {
        let (dir, name) = match path.iter().rposition(|&b| b == b'/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => (&path[..0], path),
        };
        check_component(name)?;
        if self.cached.as_ref().is_some_and(|(p, _)| p == dir) {
            return Ok(name);
        }
        self.cached = None;
        let mut fd = rustix::fs::openat(&self.base, ".", DIR_FLAGS, Mode::empty())?;
        for part in dir.split(|&b| b == b'/') {
            if dir.is_empty() {
                break;
            }
            check_component(part)?;
            fd = match rustix::fs::openat(&fd, part, DIR_FLAGS, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    rustix::fs::mkdirat(&fd, part, Mode::from_raw_mode(0o755))?;
                    rustix::fs::openat(&fd, part, DIR_FLAGS, Mode::empty())?
                }
                other => other?,
            };
        }
        self.cached = Some((dir.to_vec(), fd));
        Ok(name)
    }

    fn dir_fd(&self) -> &OwnedFd {
        &self.cached.as_ref().expect("parent() opened it").1
    }

    /// Make the directory `path` (its parent must exist).
    pub fn mkdir(&mut self, path: &[u8]) -> io::Result<()> {
        let name = self.parent(path, false)?;
        rustix::fs::mkdirat(self.dir_fd(), name, Mode::from_raw_mode(0o755))?;
        Ok(())
    }

    /// Create the new file `path` (parents made as needed when `parents`)
    /// with `mode`, opened never through a symlink.
    fn create_file(&mut self, path: &[u8], mode: u32, parents: bool) -> io::Result<File> {
        let name = self.parent(path, parents)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(self.dir_fd(), name, flags, Mode::from_raw_mode(mode))?))
    }

    /// Create `path` with `size` bytes from the buffer; the bytes written.
    pub fn create(&mut self, path: &[u8], size: u64) -> io::Result<u64> {
        let mut file = self.create_file(path, 0o644, false)?;
        let mut left = size;
        while left > 0 {
            let n = left.min(BUFFER_BYTES as u64) as usize;
            file.write_all(&self.buffer[..n])?;
            left -= n as u64;
        }
        Ok(size)
    }

    /// Create `path` (and missing parents) with `len` bytes read from
    /// `source`; the bytes written.
    pub fn create_from(&mut self, path: &[u8], mode: u32, source: &mut impl Read, len: u64) -> io::Result<u64> {
        let mut file = self.create_file(path, mode, true)?;
        let mut left = len;
        while left > 0 {
            let n = left.min(BUFFER_BYTES as u64) as usize;
            source.read_exact(&mut self.buffer[..n])?;
            file.write_all(&self.buffer[..n])?;
            left -= n as u64;
        }
        Ok(len)
    }

    /// Make the symlink `path` → `target` (never followed; parents made).
    pub fn symlink(&mut self, path: &[u8], target: &[u8]) -> io::Result<()> {
        let name = self.parent(path, true)?;
        rustix::fs::symlinkat(target, self.dir_fd(), name)?;
        Ok(())
    }

    /// Delete the file or symlink `path`.
    pub fn remove(&mut self, path: &[u8]) -> io::Result<()> {
        let name = self.parent(path, false)?;
        rustix::fs::unlinkat(self.dir_fd(), name, AtFlags::empty())?;
        Ok(())
    }

    /// Delete the empty directory `path`.
    pub fn rmdir(&mut self, path: &[u8]) -> io::Result<()> {
        let name = self.parent(path, false)?;
        let done = rustix::fs::unlinkat(self.dir_fd(), name, AtFlags::REMOVEDIR);
        // The directory (or one under it) may be the cached one.
        self.cached = None;
        done?;
        Ok(())
    }

    /// Delete the now empty parent directories of `path`, up to (not
    /// including) the first component, as git checkout does.
    pub fn prune_parents(&mut self, path: &[u8]) {
        let mut end = path.len();
        while let Some(i) = path[..end].iter().rposition(|&b| b == b'/') {
            if i == 0 || !path[..i].contains(&b'/') {
                break;
            }
            if self.rmdir(&path[..i]).is_err() {
                break;
            }
            end = i;
        }
    }
}

/// A path component fslab writes: not empty, `.` or `..`.
fn check_component(part: &[u8]) -> io::Result<()> {
    if part.is_empty() || part == b"." || part == b".." || part.contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a path component is empty, `.` or `..`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_written_through_a_symlink() {
        let dir = crate::test_temp::dir("writer");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("age")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("age/evil")).unwrap();
        let mut w = Writer::open(&root, "age").unwrap();
        assert!(w.create(b"evil/x", 10).is_err());
        assert!(w.create_from(b"evil/deeper/x", 0o644, &mut &b"hello"[..], 5).is_err());
        assert!(w.symlink(b"evil/link", b"/etc").is_err());
        assert!(w.create(b"../x", 1).is_err() && w.create(b"a/../../x", 1).is_err());
        // The symlink itself is a name like any other: replaced, never followed.
        assert!(w.create(b"evil", 1).is_err(), "O_EXCL|O_NOFOLLOW refuses the existing link");
        w.remove(b"evil").unwrap();
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // Parents are made where asked, and files hold the buffer's bytes.
        assert_eq!(w.create_from(b"a/b/c", 0o755, &mut &b"hello"[..], 5).unwrap(), 5);
        assert_eq!(std::fs::read(root.join("age/a/b/c")).unwrap(), b"hello");
        assert_eq!(w.create(b"a/big", (1 << 20) + 7).unwrap(), (1 << 20) + 7);
        assert!(std::fs::read(root.join("age/a/big")).unwrap().iter().all(|&b| b != 0));
        w.remove(b"a/b/c").unwrap();
        w.prune_parents(b"a/b/c");
        assert!(!root.join("age/a/b").exists() && root.join("age/a").is_dir());
        // The aging directory itself must not be a symlink.
        std::fs::remove_dir_all(root.join("age")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("age")).unwrap();
        assert!(Writer::open(&root, "age").is_err());
    }
}
