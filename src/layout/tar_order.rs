//! The order `tar cf` reads a tree in, for everyone who must read or map a
//! tree the way the seeds' tar did: the cold read-back
//! ([`crate::probe::cold`]) and tree-copy's source listing and read-order
//! map.
//!
//! The design decision: this walk is tar's, not a sorted or parallel one —
//! depth first, each directory's entries in readdir order, each directory
//! visited before what it holds, symlinks not followed, one file system —
//! because the figures built on it measure how well a file system laid
//! files out for the order it hands them out in, and readdir order is that
//! order. It lives in `layout` because both the probes and the scenarios
//! may depend on `layout`.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// One entry of the walk.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// Its path: the walk's root joined with `rel`.
    pub path: &'a Path,
    /// Its path relative to the walk's root.
    pub rel: &'a Path,
    /// Its own metadata (lstat: a symlink is described, not followed).
    pub meta: &'a fs::Metadata,
}

/// Why the walk itself stopped: a directory could not be read or an entry
/// could not be stat'ed. Callers turn it into their own error type, so
/// each keeps the messages it always gave.
#[derive(Debug)]
pub struct Failure {
    /// The directory or entry.
    pub path: PathBuf,
    /// What was being done: `read directory` or `stat`.
    pub op: &'static str,
    /// The error.
    pub source: io::Error,
}

impl From<Failure> for io::Error {
    /// `PATH: ERROR`, of the same kind.
    fn from(f: Failure) -> io::Error {
        io::Error::new(f.source.kind(), format!("{}: {}", f.path.display(), f.source))
    }
}

impl From<Failure> for crate::error::Error {
    /// `PATH: OP: ERROR`, classified as any I/O error is.
    fn from(f: Failure) -> crate::error::Error {
        crate::error::Error::io(&f.path, f.op, f.source)
    }
}

/// Call `visit` with every entry below `root` (not `root` itself) that is
/// on device `dev` (the root's, normally), in tar order, stopping at the
/// first error. An entry on another device is a mount point: it is neither
/// visited nor entered.
pub fn walk<E: From<Failure>>(
    root: &Path,
    dev: u64,
    visit: &mut dyn FnMut(&Entry) -> Result<(), E>,
) -> Result<(), E> {
    walk_dir(root, Path::new(""), dev, visit)
}

fn walk_dir<E: From<Failure>>(
    dir: &Path,
    rel: &Path,
    dev: u64,
    visit: &mut dyn FnMut(&Entry) -> Result<(), E>,
) -> Result<(), E> {
    // The names first, as tar's savedir does, so no directory stays open
    // while its subdirectories are walked.
    let names = fs::read_dir(dir)
        .and_then(|entries| entries.map(|e| e.map(|e| e.file_name())).collect::<io::Result<Vec<_>>>())
        .map_err(|source| Failure { path: dir.to_path_buf(), op: "read directory", source })?;
    for name in names {
        let path = dir.join(&name);
        let rel = rel.join(&name);
        let meta = fs::symlink_metadata(&path).map_err(|source| Failure { path: path.clone(), op: "stat", source })?;
        if meta.dev() != dev {
            continue; // a mount point: another file system
        }
        visit(&Entry { path: &path, rel: &rel, meta: &meta })?;
        if meta.is_dir() {
            walk_dir(&path, &rel, dev, visit)?;
        }
    }
    Ok(())
}

/// Open a regular file the walk found, for reading, without following a
/// symlink swapped in since its lstat.
pub fn open(path: &Path) -> io::Result<File> {
    File::options().read(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// What `tar -cf - . | tar -tf -` lists under `root`, each name without
/// its leading `./` (directories keep their trailing `/`): the order the
/// tests hold the walk to.
#[cfg(test)]
pub(crate) fn tar_listing(root: &Path) -> Vec<String> {
    let listing = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("tar -cf - -C '{}' . | tar -tf -", root.display()))
        .output()
        .unwrap();
    assert!(listing.status.success());
    String::from_utf8(listing.stdout).unwrap().lines().map(|l| l.trim_start_matches("./").to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_come_before_their_entries_in_tars_order() {
        // Not /tmp: a tmpfs lists a directory in an order of its own, and
        // the point is to follow whatever order the file system has.
        let dir = crate::test_temp::dir("");
        let root = dir.path();
        for d in ["src", "src/lib", "doc"] {
            fs::create_dir(root.join(d)).unwrap();
            for i in 0..15 {
                fs::write(root.join(format!("{d}/file{i:02}.c")), "x").unwrap();
            }
        }
        std::os::unix::fs::symlink("src", root.join("link")).unwrap();
        let mut ours = Vec::new();
        let dev = fs::symlink_metadata(root).unwrap().dev();
        walk::<io::Error>(root, dev, &mut |entry| {
            assert_eq!(entry.path, root.join(entry.rel));
            ours.push(entry.rel.to_path_buf());
            Ok(())
        })
        .unwrap();
        let tars: Vec<PathBuf> = tar_listing(root)
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| PathBuf::from(l.trim_end_matches('/')))
            .collect();
        assert_eq!(ours.len(), 3 + 45 + 1);
        assert_eq!(ours, tars);
    }

    #[test]
    fn a_failure_keeps_its_path_in_either_error_type() {
        let missing = Path::new("/var/tmp/fslab-test-no-such-dir");
        let io: io::Error = walk::<io::Error>(missing, 0, &mut |_| Ok(())).unwrap_err();
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
        assert!(io.to_string().starts_with("/var/tmp/fslab-test-no-such-dir: "), "{io}");
        let ours = walk::<crate::error::Error>(missing, 0, &mut |_| Ok(())).unwrap_err();
        assert!(ours.message.starts_with("/var/tmp/fslab-test-no-such-dir: read directory: "), "{}", ours.message);
    }
}
