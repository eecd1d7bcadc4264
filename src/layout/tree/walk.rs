//! The directory walk and its scheduling over the pool's threads.
//!
//! The design decision: a task reads one directory with getdents on its
//! own descriptor, in directory order, and never waits for another task.
//! Subdirectories become tasks of their own, opened relative to their
//! parent; regular files go out in numbered batches (see `batch`), and a
//! reader maps a full batch itself instead of queueing it once enough are
//! queued, so memory stays bounded however wide the tree.

use std::ffi::{CStr, CString};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

use super::TreeOptions;
use super::chain::Chain;
use super::totals::Totals;
use crate::error::describe_io;
use crate::layout::FsInfo;

/// Files handed to a task at once.
pub(super) const BATCH_FILES: usize = 128;

/// The names of one batch of files, NUL-terminated, in one allocation.
#[derive(Debug, Default)]
pub(super) struct NameBatch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl NameBatch {
    fn with_capacity(names: usize) -> Self {
        NameBatch { bytes: Vec::with_capacity(names * 16), ends: Vec::with_capacity(names) }
    }

    fn push(&mut self, name: &CStr) {
        self.bytes.extend_from_slice(name.to_bytes_with_nul());
        self.ends.push(self.bytes.len());
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &CStr> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(start, end)| {
            CStr::from_bytes_with_nul(&self.bytes[start..end]).expect("one NUL-terminated name per entry")
        })
    }
}

/// Let the walk hold a descriptor per open directory on deep, wide trees,
/// and a batch of files open on each of `threads` threads.
///
/// The descriptor table is grown here, once, to what the batches need:
/// the kernel grows a table shared by threads only after waiting out an
/// RCU grace period, which, paid at each doubling while the walk's
/// threads open their batches, cost more than the batching saved.
///
/// False when the limit leaves no room for the batches: each file is then
/// opened in its turn.
pub(super) fn raise_open_file_limit(threads: usize) -> bool {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let _ = setrlimit(Resource::Nofile, rustix::process::Rlimit { current: limit.maximum, maximum: limit.maximum });
    }
    let want = threads.saturating_mul(BATCH_FILES).saturating_add(64);
    let room = getrlimit(Resource::Nofile).current.map_or(want, |n| usize::try_from(n).unwrap_or(usize::MAX));
    if want >= room {
        return false;
    }
    if let Ok(high) = rustix::io::fcntl_dupfd_cloexec(std::io::stderr(), want as i32) {
        drop(high);
    }
    true
}

/// What every task of one walk shares.
pub(super) struct Shared {
    pub(super) options: TreeOptions,
    pub(super) totals: Mutex<Totals>,
    pub(super) fs_cache: RwLock<Vec<(u64, Arc<FsInfo>)>>,
    /// A batch's files are opened together (the descriptor limit has room).
    pub(super) open_batches: bool,
    queued_batches: AtomicUsize,
    max_queued: usize,
}

/// An open directory being walked.
pub(super) struct DirNode {
    pub(super) path: PathBuf,
    pub(super) fd: OwnedFd,
    pub(super) dev: u64,
    pub(super) chain: Mutex<Chain>,
}

impl Shared {
    /// The state of a walk with `options`, before any path is started;
    /// `open_batches` when a batch's files may be open at once.
    pub(super) fn new(options: &TreeOptions, open_batches: bool) -> Self {
        Shared {
            open_batches,
            options: options.clone(),
            totals: Mutex::new(Totals::new(options)),
            fs_cache: RwLock::new(Vec::new()),
            queued_batches: AtomicUsize::new(0),
            max_queued: 4 * options.threads.max(1),
        }
    }

    /// The walk's totals, once every task has finished.
    pub(super) fn into_totals(self) -> Totals {
        self.totals.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// Walk `path` (a directory, or a single file) within `scope`.
    pub(super) fn start<'s>(&'s self, scope: &rayon::Scope<'s>, path: &Path) {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => return self.error(path, &describe_io(&e)),
        };
        let dev = std::os::unix::fs::MetadataExt::dev(&meta);
        if meta.is_file() {
            // A single file: a directory of one, as far as contiguity goes.
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            let name = match path.file_name() {
                Some(n) => CString::new(std::os::unix::ffi::OsStrExt::as_bytes(n)).ok(),
                None => None,
            };
            let fd = rustix::fs::open(parent, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty());
            match (fd, name) {
                (Ok(fd), Some(name)) => {
                    // The file's own device: a file root may be a mount point.
                    let node = Arc::new(DirNode {
                        path: parent.to_path_buf(),
                        fd,
                        dev,
                        chain: Mutex::default(),
                    });
                    let mut batch = NameBatch::with_capacity(1);
                    batch.push(&name);
                    self.close_dir(&node, 1);
                    self.map_batch(&node, 0, batch);
                }
                (Err(e), _) => self.error(parent, &describe_io(&e.into())),
                (_, None) => self.error(path, "not a file name"),
            }
            return;
        }
        if !meta.is_dir() {
            return self.error(path, "not a regular file or directory");
        }
        match rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()) {
            Ok(fd) => {
                let node = Arc::new(DirNode {
                    path: path.to_path_buf(),
                    fd,
                    dev,
                    chain: Mutex::default(),
                });
                scope.spawn(move |scope| self.walk_dir(scope, node));
            }
            Err(e) => self.error(path, &describe_io(&e.into())),
        }
    }

    fn error(&self, path: &Path, what: &str) {
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).error(path, what, false);
    }

    /// Directory `node` has `batches` batches in all: its modelled read is
    /// added once the last of them is in (`--disk`).
    fn close_dir(&self, node: &DirNode, batches: u64) {
        let dir = node.chain.lock().unwrap_or_else(|e| e.into_inner()).close(batches, self.options.disk.as_ref());
        if let Some(dir) = dir {
            self.totals.lock().unwrap_or_else(|e| e.into_inner()).directory(dir);
        }
    }

    /// Read one directory in order; spawn its subdirectories and batches.
    fn walk_dir<'s>(&'s self, scope: &rayon::Scope<'s>, node: Arc<DirNode>) {
        let mut buf = Vec::<u8>::with_capacity(32 * 1024);
        let mut batch = NameBatch::with_capacity(BATCH_FILES);
        let mut batch_index = 0u64;
        let mut reader = RawDir::new(&node.fd, buf.spare_capacity_mut());
        while let Some(entry) = reader.next() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    self.error(&node.path, &format!("reading directory: {}", describe_io(&e.into())));
                    break;
                }
            };
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => match rustix::fs::statat(&node.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(e) => {
                        self.error(&node.path.join(os_name(name)), &describe_io(&e.into()));
                        continue;
                    }
                },
                kind => kind,
            };
            match kind {
                FileType::RegularFile => {
                    batch.push(name);
                    if batch.len() == BATCH_FILES {
                        let full = std::mem::replace(&mut batch, NameBatch::with_capacity(BATCH_FILES));
                        self.dispatch(scope, &node, batch_index, full);
                        batch_index += 1;
                    }
                }
                FileType::Directory => {
                    let name = name.to_owned();
                    let parent = Arc::clone(&node);
                    scope.spawn(move |scope| self.open_subdir(scope, &parent, &name));
                }
                // Symbolic links are never followed; devices, FIFOs and
                // sockets have no extents.
                _ => {}
            }
        }
        self.close_dir(&node, batch_index + u64::from(batch.len() > 0));
        if batch.len() > 0 {
            self.map_batch(&node, batch_index, batch);
        }
    }

    /// Run a full batch as its own task, or here when enough are queued.
    fn dispatch<'s>(&'s self, scope: &rayon::Scope<'s>, node: &Arc<DirNode>, index: u64, names: NameBatch) {
        if self.queued_batches.load(Ordering::Relaxed) >= self.max_queued {
            return self.map_batch(node, index, names);
        }
        self.queued_batches.fetch_add(1, Ordering::Relaxed);
        let node = Arc::clone(node);
        scope.spawn(move |_| {
            self.queued_batches.fetch_sub(1, Ordering::Relaxed);
            self.map_batch(&node, index, names);
        });
    }

    fn open_subdir<'s>(&'s self, scope: &rayon::Scope<'s>, parent: &DirNode, name: &CStr) {
        let path = parent.path.join(os_name(name));
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(&parent.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) => return self.error(&path, &describe_io(&e.into())),
        };
        let dev = match rustix::fs::fstat(&fd) {
            Ok(st) => st.st_dev,
            Err(e) => return self.error(&path, &describe_io(&e.into())),
        };
        if dev != parent.dev && !self.options.cross_mounts {
            return;
        }
        let node = Arc::new(DirNode { path, fd, dev, chain: Mutex::default() });
        self.walk_dir(scope, node);
    }
}

/// A name from getdents as a path component.
pub(super) fn os_name(name: &CStr) -> &std::ffi::OsStr {
    std::os::unix::ffi::OsStrExt::from_bytes(name.to_bytes())
}
