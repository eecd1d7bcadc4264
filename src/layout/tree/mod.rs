//! Fragmentation of every regular file under a tree, walked in parallel.
//!
//! The walk is syscall-bound (openat, fstat, FIEMAP, close per file), so it
//! runs on a rayon pool: a task reads one directory with getdents on its
//! own descriptor and hands its regular files out in batches, in directory
//! order; subdirectories become tasks of their own, opened relative to
//! their parent. Nothing per file is kept beyond the `--top` list and the
//! first few errors, and a directory reader maps batches itself once enough
//! are queued, so memory stays bounded however wide the tree.
//!
//! Contiguity "between consecutive files in directory order" — seed 001's
//! "seek after every block" — is exact across batches: each batch reports
//! the device offsets of its first and last file with data, and a
//! per-directory chain joins them in order as batches finish.

use std::collections::BTreeMap;
use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
use serde::Serialize;

use super::extent_map::DEFAULT_BATCH;
use super::{FsInfo, LayoutFigures, map_open_file};
use crate::error::describe_io;
use crate::sys::fiemap::FiemapBuffer;

/// Files handed to a task at once.
const BATCH_FILES: usize = 128;
/// Errors kept with their paths; the rest are only counted.
pub const LISTED_ERRORS: usize = 100;

/// The names of one batch of files, NUL-terminated, in one allocation.
#[derive(Debug, Default)]
struct NameBatch {
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

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn iter(&self) -> impl Iterator<Item = &CStr> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(start, end)| {
            CStr::from_bytes_with_nul(&self.bytes[start..end]).expect("one NUL-terminated name per entry")
        })
    }
}

/// How to walk.
#[derive(Debug, Clone)]
pub struct TreeOptions {
    /// Worker threads.
    pub threads: usize,
    /// Length of the worst-files list.
    pub top: usize,
    /// Length of the largest-files list (0: none kept).
    pub largest: usize,
    /// Descend into other file systems.
    pub cross_mounts: bool,
}

/// Totals over the tree (`frag --json`'s `summary`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TreeSummary {
    /// Regular files mapped.
    pub files: u64,
    /// Their sizes, summed.
    pub bytes: u64,
    /// Extents by filefrag's rule, summed.
    pub extents: u64,
    /// FIEMAP records, summed.
    pub records: u64,
    /// Files with more extents than their perfection.
    pub fragmented_files: u64,
    /// Files whose perfection could not be known (not counted above).
    pub perfection_unknown_files: u64,
    /// Extents the files would have at perfection, summed over the files
    /// whose perfection is known.
    pub perfection_extents: u64,
    /// Mean layout score over files with data.
    pub layout_score_files: Option<f64>,
    /// Layout score weighted by each file's mapped bytes.
    pub layout_score_bytes: Option<f64>,
    /// Of consecutive data files in a directory (directory order), the
    /// share whose first block sits right after the previous file's last.
    pub next_file_contiguous: Option<f64>,
    /// How many such consecutive pairs there were.
    pub next_file_pairs: u64,
    /// Total device distance between a file's end and the next file's
    /// start, in bytes, over those pairs (a reader's head travel).
    pub next_file_seek_bytes: u64,
    /// Entries that could not be mapped (vanished, permission, ...).
    pub errors: u64,
}

/// Files whose extent count falls in `[extents_min, extents_max]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistogramBucket {
    /// Lowest extent count of the bucket.
    pub extents_min: u64,
    /// Highest extent count of the bucket.
    pub extents_max: u64,
    /// Files in it.
    pub files: u64,
}

/// One of the most fragmented files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorstFile {
    /// Path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Extents by filefrag's rule.
    pub extents: u64,
    /// The fewest it could have.
    pub perfection: Option<u64>,
    /// Its layout score.
    pub layout_score: Option<f64>,
}

/// One of the largest files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LargeFile {
    /// Path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// An entry that could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalkError {
    /// Path.
    pub path: String,
    /// What went wrong.
    pub error: String,
    /// The file system cannot map files at all (no FIEMAP), as opposed to
    /// this one entry failing.
    #[serde(skip)]
    pub unsupported: bool,
}

/// Why one file could not be mapped.
#[derive(Debug, Clone)]
struct FileError {
    what: String,
    unsupported: bool,
}

impl FileError {
    fn new(what: String) -> Self {
        FileError { what, unsupported: false }
    }
}

/// The walk's result.
#[derive(Debug, Clone, Serialize)]
pub struct TreeReport {
    /// Totals.
    pub summary: TreeSummary,
    /// Files by extent count, power-of-two buckets, empty ones left out.
    pub histogram: Vec<HistogramBucket>,
    /// The most fragmented files, most extents first.
    pub worst: Vec<WorstFile>,
    /// The largest files, fragmented or not, largest first (ties by path);
    /// only asked for by the run harness, which keeps their maps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub largest: Vec<LargeFile>,
    /// The first [`LISTED_ERRORS`] errors (all are counted in `summary`).
    pub errors: Vec<WalkError>,
}

/// Walk every path and report. Paths that cannot be walked at all are
/// reported as errors in the result, like any other entry.
pub fn scan(paths: &[PathBuf], options: &TreeOptions) -> std::io::Result<TreeReport> {
    raise_open_file_limit();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .thread_name(|i| format!("fslab-walk-{i}"))
        .build()
        .map_err(std::io::Error::other)?;
    let shared = Shared {
        options: options.clone(),
        file_mounts: file_mount_points(),
        totals: Mutex::new(Totals::new(options)),
        fs_cache: RwLock::new(Vec::new()),
        queued_batches: AtomicUsize::new(0),
        max_queued: 4 * options.threads.max(1),
    };
    pool.scope(|scope| {
        for path in paths {
            shared.start(scope, path);
        }
    });
    let totals = shared.totals.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(totals.report())
}

/// Let the walk hold a descriptor per open directory on deep, wide trees.
fn raise_open_file_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let _ = setrlimit(Resource::Nofile, rustix::process::Rlimit { current: limit.maximum, maximum: limit.maximum });
    }
}

struct Shared {
    options: TreeOptions,
    file_mounts: Vec<(u64, u64, CString)>,
    totals: Mutex<Totals>,
    fs_cache: RwLock<Vec<(u64, Arc<FsInfo>)>>,
    queued_batches: AtomicUsize,
    max_queued: usize,
}

/// An open directory being walked.
struct DirNode {
    path: PathBuf,
    fd: OwnedFd,
    dev: u64,
    /// Names in this directory that are themselves mount points (a file
    /// bind-mounted over a file); almost always empty.
    mounted_files: Vec<CString>,
    chain: Mutex<Chain>,
}

/// Regular files that are mount points, by the directory holding them:
/// (that directory's device, its inode, the file's name). Read once from
/// mountinfo, so that the walk can take a file's device from its
/// directory's — and skip an fstat per file — everywhere else.
fn file_mount_points() -> Vec<(u64, u64, CString)> {
    super::mounts::all()
        .into_iter()
        .filter(|m| std::fs::symlink_metadata(&m.mount_point).is_ok_and(|md| md.is_file()))
        .filter_map(|m| {
            let parent = std::fs::metadata(m.mount_point.parent()?).ok()?;
            let name = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(m.mount_point.file_name()?)).ok()?;
            Some((std::os::unix::fs::MetadataExt::dev(&parent), std::os::unix::fs::MetadataExt::ino(&parent), name))
        })
        .collect()
}

/// Joins per-batch edges in directory order.
#[derive(Default)]
struct Chain {
    next: u64,
    ready: BTreeMap<u64, Option<Edges>>,
    carry_end: Option<u64>,
}

/// The first data file's start and the last data file's end in a batch.
#[derive(Debug, Clone, Copy)]
struct Edges {
    first_start: Option<u64>,
    last_end: Option<u64>,
}

/// What the next file's start is compared with.
#[derive(Debug, Default, Clone, Copy)]
struct PairCounts {
    pairs: u64,
    contiguous: u64,
    seek_bytes: u64,
}

impl PairCounts {
    fn pair(&mut self, previous_end: Option<u64>, next_start: Option<u64>) {
        if let (Some(end), Some(start)) = (previous_end, next_start) {
            self.pairs += 1;
            if end == start {
                self.contiguous += 1;
            }
            self.seek_bytes = self.seek_bytes.saturating_add(end.abs_diff(start));
        }
    }
}

impl Chain {
    /// Record batch `index`'s edges (None: no file with data) and fold all
    /// batches now in order into `counts`.
    fn finish_batch(&mut self, index: u64, edges: Option<Edges>, counts: &mut PairCounts) {
        self.ready.insert(index, edges);
        while let Some(edges) = self.ready.remove(&self.next) {
            if let Some(edges) = edges {
                counts.pair(self.carry_end, edges.first_start);
                self.carry_end = edges.last_end;
            }
            self.next += 1;
        }
    }
}

impl Shared {
    fn start<'s>(&'s self, scope: &rayon::Scope<'s>, path: &Path) {
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
                        mounted_files: Vec::new(),
                        chain: Mutex::default(),
                    });
                    let mut batch = NameBatch::with_capacity(1);
                    batch.push(&name);
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
                let ino = std::os::unix::fs::MetadataExt::ino(&meta);
                let node = Arc::new(DirNode {
                    path: path.to_path_buf(),
                    fd,
                    dev,
                    mounted_files: self.mounted_files_in(dev, ino),
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
        let (dev, ino) = match rustix::fs::fstat(&fd) {
            Ok(st) => (st.st_dev, st.st_ino),
            Err(e) => return self.error(&path, &describe_io(&e.into())),
        };
        if dev != parent.dev && !self.options.cross_mounts {
            return;
        }
        let mounted_files = self.mounted_files_in(dev, ino);
        let node = Arc::new(DirNode { path, fd, dev, mounted_files, chain: Mutex::default() });
        self.walk_dir(scope, node);
    }

    /// Names of the files mounted over in directory (`dev`, `ino`).
    fn mounted_files_in(&self, dev: u64, ino: u64) -> Vec<CString> {
        self.file_mounts.iter().filter(|(d, i, _)| *d == dev && *i == ino).map(|(_, _, n)| n.clone()).collect()
    }

    fn fs_info(&self, dev: u64, fd: impl AsFd) -> std::io::Result<Arc<FsInfo>> {
        if let Some((_, info)) = self.fs_cache.read().unwrap_or_else(|e| e.into_inner()).iter().find(|(d, _)| *d == dev) {
            return Ok(Arc::clone(info));
        }
        let info = Arc::new(FsInfo::probe(fd)?);
        self.fs_cache.write().unwrap_or_else(|e| e.into_inner()).push((dev, Arc::clone(&info)));
        Ok(info)
    }

    /// Map a batch of files of one directory, in order, and fold the results.
    fn map_batch(&self, node: &DirNode, index: u64, names: NameBatch) {
        thread_local! {
            static BUFFER: RefCell<FiemapBuffer> = RefCell::new(FiemapBuffer::new(DEFAULT_BATCH));
        }
        BUFFER.with_borrow_mut(|buffer| self.map_batch_with(node, index, &names, buffer));
    }

    fn map_batch_with(&self, node: &DirNode, index: u64, names: &NameBatch, buffer: &mut FiemapBuffer) {
        let mut local = Totals::new(&self.options);
        let mut counts = PairCounts::default();
        let mut edges: Option<Edges> = None;
        let mut fs: Option<(u64, Arc<FsInfo>)> = None;
        for name in names.iter() {
            match self.map_one(node, name, buffer, &mut fs) {
                Ok(Some((size, figures, perfection))) => {
                    if figures.records > 0 {
                        match edges.as_mut() {
                            Some(e) => {
                                counts.pair(e.last_end, figures.first_physical);
                                e.last_end = figures.last_physical_end;
                            }
                            None => {
                                edges = Some(Edges {
                                    first_start: figures.first_physical,
                                    last_end: figures.last_physical_end,
                                })
                            }
                        }
                    }
                    local.file(size, &figures, perfection, || node.path.join(os_name(name)));
                }
                Ok(None) => {}
                Err(e) => local.error(&node.path.join(os_name(name)), &e.what, e.unsupported),
            }
        }
        node.chain.lock().unwrap_or_else(|e| e.into_inner()).finish_batch(index, edges, &mut counts);
        local.pairs.pairs += counts.pairs;
        local.pairs.contiguous += counts.contiguous;
        local.pairs.seek_bytes = local.pairs.seek_bytes.saturating_add(counts.seek_bytes);
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).merge(local);
    }

    /// Map one file; `Ok(None)` for entries that turned out not to be
    /// regular files on this file system.
    #[allow(clippy::type_complexity)]
    fn map_one(
        &self,
        node: &DirNode,
        name: &CStr,
        buffer: &mut FiemapBuffer,
        fs: &mut Option<(u64, Arc<FsInfo>)>,
    ) -> Result<Option<(u64, LayoutFigures, Option<u64>)>, FileError> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&node.fd, name, flags, Mode::empty()).map_err(|e| match e {
            rustix::io::Errno::NOENT => FileError::new("vanished during the walk".to_string()),
            e => FileError::new(format!("open: {}", describe_io(&e.into()))),
        })?;
        // getdents said regular file, and the file's device is its
        // directory's unless it is a mount point itself; only those get an
        // fstat. The others' size comes from lseek(SEEK_END) once mapped,
        // for less than an fstat (about a tenth of the walk on 100,000
        // small files). Mapping first also makes a file system without
        // FIEMAP fail as such, not on lseek (procfs has no SEEK_END).
        let mut size = None;
        let mut dev = node.dev;
        if node.mounted_files.iter().any(|n| n.as_c_str() == name) {
            let st = rustix::fs::fstat(&fd).map_err(|e| FileError::new(format!("stat: {}", describe_io(&e.into()))))?;
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
                || (st.st_dev != node.dev && !self.options.cross_mounts)
            {
                return Ok(None);
            }
            size = Some(st.st_size as u64);
            dev = st.st_dev;
        }
        let info = match fs {
            Some((known, info)) if *known == dev => Arc::clone(info),
            _ => {
                let info =
                    self.fs_info(dev, &fd).map_err(|e| FileError::new(format!("statfs: {}", describe_io(&e))))?;
                *fs = Some((dev, Arc::clone(&info)));
                info
            }
        };
        let acc = map_open_file(&fd, info.block_size, buffer, false, |_, _| Ok(())).map_err(|e| FileError {
            unsupported: matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOTTY)),
            what: format!("FIEMAP: {}", describe_io(&e)),
        })?;
        let size = match size {
            Some(size) => size,
            None => match rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)) {
                Ok(size) => size,
                // Swapped for a FIFO or socket since the directory was read.
                Err(rustix::io::Errno::SPIPE) => return Ok(None),
                Err(e) => return Err(FileError::new(format!("lseek: {}", describe_io(&e.into())))),
            },
        };
        let perfection = info.rule_for_size(&fd, Some(size)).perfection(size);
        let figures = acc.finish(size);
        Ok(Some((size, figures, perfection)))
    }
}

fn os_name(name: &CStr) -> &std::ffi::OsStr {
    std::os::unix::ffi::OsStrExt::from_bytes(name.to_bytes())
}

/// 1.0 in the fixed point layout scores are summed in: 2^48, finer than
/// any score (a ratio of block counts below 2^40) needs.
const SCORE_ONE: u64 = 1 << 48;

/// Running totals; one per batch, merged into one for the walk.
struct Totals {
    summary: TreeSummary,
    // Scores are summed in fixed point (units of 2^-SCORE_BITS) so that the
    // totals, being integers, do not depend on the order batches merge in:
    // the same tree gives the same figures, bit for bit, on every run.
    score_sum: u128,
    score_files: u64,
    weighted_score_sum: u128,
    score_weight: u128,
    pairs: PairCounts,
    histogram: [u64; 66],
    top: usize,
    worst: Vec<WorstFile>,
    largest_top: usize,
    largest: Vec<LargeFile>,
    errors: Vec<WalkError>,
}

impl Totals {
    fn new(options: &TreeOptions) -> Self {
        Totals {
            summary: TreeSummary::default(),
            score_sum: 0,
            score_files: 0,
            weighted_score_sum: 0,
            score_weight: 0,
            pairs: PairCounts::default(),
            histogram: [0; 66],
            top: options.top,
            worst: Vec::new(),
            largest_top: options.largest,
            largest: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn error(&mut self, path: &Path, what: &str, unsupported: bool) {
        self.summary.errors += 1;
        if self.errors.len() < LISTED_ERRORS {
            self.errors.push(WalkError { path: path.to_string_lossy().into_owned(), error: what.to_string(), unsupported });
        }
    }

    fn file(&mut self, size: u64, f: &LayoutFigures, perfection: Option<u64>, path: impl FnOnce() -> PathBuf) {
        let s = &mut self.summary;
        s.files += 1;
        s.bytes += size;
        s.extents += f.extents;
        s.records += f.records;
        match perfection {
            Some(p) => {
                s.perfection_extents += p;
                if f.extents > p {
                    s.fragmented_files += 1;
                }
            }
            None => s.perfection_unknown_files += 1,
        }
        if let Some(score) = f.layout_score {
            let fixed = (score * SCORE_ONE as f64).round() as u128;
            self.score_sum += fixed;
            self.score_files += 1;
            self.weighted_score_sum += fixed * u128::from(f.mapped_bytes);
            self.score_weight += u128::from(f.mapped_bytes);
        }
        self.histogram[bucket(f.extents)] += 1;
        // Only files in more than one extent can be "worst", and the path
        // is only built for a file that beats the current last entry of a
        // list: with most files in one extent, building it for every file
        // cost more than mapping them.
        let worst = self.top > 0 && f.extents > 1 && could_enter(&self.worst, self.top, f.extents, f.layout_score);
        let large = self.largest_top > 0 && could_be_largest(&self.largest, self.largest_top, size);
        if !worst && !large {
            return;
        }
        let path = path().to_string_lossy().into_owned();
        if large {
            self.offer_large(LargeFile { path: path.clone(), size });
        }
        if worst {
            self.offer(WorstFile { path, size, extents: f.extents, perfection, layout_score: f.layout_score });
        }
    }

    /// Keep `candidate` if it is among the `largest_top` largest.
    fn offer_large(&mut self, candidate: LargeFile) {
        let at = self.largest.partition_point(|l| by_size(l, &candidate) != std::cmp::Ordering::Greater);
        if at < self.largest_top {
            self.largest.insert(at, candidate);
            self.largest.truncate(self.largest_top);
        }
    }

    /// Keep `candidate` if it is among the `top` worst, sorted worst first.
    fn offer(&mut self, candidate: WorstFile) {
        let at = self.worst.partition_point(|w| rank(w, &candidate) != std::cmp::Ordering::Greater);
        if at < self.top {
            self.worst.insert(at, candidate);
            self.worst.truncate(self.top);
        }
    }

    fn merge(&mut self, other: Totals) {
        let (a, b) = (&mut self.summary, &other.summary);
        a.files += b.files;
        a.bytes += b.bytes;
        a.extents += b.extents;
        a.records += b.records;
        a.fragmented_files += b.fragmented_files;
        a.perfection_unknown_files += b.perfection_unknown_files;
        a.perfection_extents += b.perfection_extents;
        self.score_sum += other.score_sum;
        self.score_files += other.score_files;
        self.weighted_score_sum += other.weighted_score_sum;
        self.score_weight += other.score_weight;
        self.pairs.pairs += other.pairs.pairs;
        self.pairs.contiguous += other.pairs.contiguous;
        self.pairs.seek_bytes = self.pairs.seek_bytes.saturating_add(other.pairs.seek_bytes);
        for (x, y) in self.histogram.iter_mut().zip(other.histogram) {
            *x += y;
        }
        for w in other.worst {
            self.offer(w);
        }
        for l in other.largest {
            self.offer_large(l);
        }
        let room = LISTED_ERRORS.saturating_sub(self.errors.len());
        self.errors.extend(other.errors.into_iter().take(room));
        self.summary.errors += other.summary.errors;
    }

    fn report(mut self) -> TreeReport {
        let s = &mut self.summary;
        let one = SCORE_ONE as f64;
        s.layout_score_files = (self.score_files > 0).then(|| self.score_sum as f64 / one / self.score_files as f64);
        s.layout_score_bytes =
            (self.score_weight > 0).then(|| self.weighted_score_sum as f64 / one / self.score_weight as f64);
        s.next_file_pairs = self.pairs.pairs;
        s.next_file_seek_bytes = self.pairs.seek_bytes;
        s.next_file_contiguous =
            (self.pairs.pairs > 0).then(|| self.pairs.contiguous as f64 / self.pairs.pairs as f64);
        let histogram = self
            .histogram
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| {
                let (extents_min, extents_max) = bucket_range(i);
                HistogramBucket { extents_min, extents_max, files: *n }
            })
            .collect();
        TreeReport { summary: self.summary, histogram, worst: self.worst, largest: self.largest, errors: self.errors }
    }
}

/// Worst first: more extents, then lower layout score, then path.
fn rank(a: &WorstFile, b: &WorstFile) -> std::cmp::Ordering {
    b.extents
        .cmp(&a.extents)
        .then_with(|| a.layout_score.unwrap_or(1.0).total_cmp(&b.layout_score.unwrap_or(1.0)))
        .then_with(|| a.path.cmp(&b.path))
}

/// Whether a file of `extents` and `score` could rank into a list of
/// `top`: the list has room, or it is at least as bad as the last entry
/// (a tie is then settled by path, so the answer is the same whichever
/// thread saw which file first).
fn could_enter(worst: &[WorstFile], top: usize, extents: u64, score: Option<f64>) -> bool {
    match worst.last() {
        Some(last) if worst.len() >= top => {
            extents > last.extents
                || (extents == last.extents
                    && score.unwrap_or(1.0).total_cmp(&last.layout_score.unwrap_or(1.0)).is_le())
        }
        _ => true,
    }
}

/// Largest first, then path.
fn by_size(a: &LargeFile, b: &LargeFile) -> std::cmp::Ordering {
    b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path))
}

/// Whether a file of `size` could rank into a largest list of `top` (a tie
/// with the last entry is settled by path, as for the worst list).
fn could_be_largest(largest: &[LargeFile], top: usize, size: u64) -> bool {
    match largest.last() {
        Some(last) if largest.len() >= top => size >= last.size,
        _ => true,
    }
}

/// Histogram bucket of an extent count: 0 alone, then [2^k, 2^(k+1)-1].
fn bucket(extents: u64) -> usize {
    if extents == 0 { 0 } else { 64 - extents.leading_zeros() as usize }
}

fn bucket_range(index: usize) -> (u64, u64) {
    match index {
        0 => (0, 0),
        i => {
            let low = 1u64 << (i - 1);
            (low, low.checked_mul(2).map_or(u64::MAX, |h| h - 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_powers_of_two() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 1);
        assert_eq!((bucket(2), bucket(3)), (2, 2));
        assert_eq!((bucket(4), bucket(7), bucket(8)), (3, 3, 4));
        assert_eq!(bucket_range(0), (0, 0));
        assert_eq!(bucket_range(1), (1, 1));
        assert_eq!(bucket_range(3), (4, 7));
        assert_eq!(bucket_range(64), (1 << 63, u64::MAX));
        assert_eq!(bucket(u64::MAX), 64);
    }

    #[test]
    fn the_chain_joins_batches_in_order_whatever_order_they_finish() {
        let mut chain = Chain::default();
        let mut counts = PairCounts::default();
        let e = |s, l| Some(Edges { first_start: Some(s), last_end: Some(l) });
        // Batch 2 finishes first; nothing can be joined yet.
        chain.finish_batch(2, e(300, 400), &mut counts);
        assert_eq!(counts.pairs, 0);
        chain.finish_batch(0, e(0, 100), &mut counts);
        assert_eq!(counts.pairs, 0, "batch 0 has no predecessor");
        // Batch 1 has no data: 0's end meets 2's start (100 vs 300).
        chain.finish_batch(1, None, &mut counts);
        assert_eq!((counts.pairs, counts.contiguous, counts.seek_bytes), (1, 0, 200));
        chain.finish_batch(3, e(400, 500), &mut counts);
        assert_eq!((counts.pairs, counts.contiguous), (2, 1));
    }

    #[test]
    fn the_worst_list_keeps_the_top_n_in_order() {
        let mut t = Totals::new(&TreeOptions { threads: 1, top: 2, largest: 2, cross_mounts: false });
        let fig = |extents| LayoutFigures {
            extents,
            records: extents,
            discontinuities: 0,
            backward_jumps: 0,
            seek_distance: 0,
            layout_score: Some(0.5),
            mapped_bytes: 4096,
            holes: 0,
            hole_bytes: 0,
            flags: Default::default(),
            first_physical: None,
            last_physical_end: None,
        };
        for (name, n, size) in [("a", 3, 4096), ("b", 9, 4096), ("c", 1, 8192), ("d", 9, 4096), ("e", 5, 8192), ("f", 9, 4096)] {
            t.file(size, &fig(n), Some(1), || PathBuf::from(name));
        }
        let names: Vec<_> = t.worst.iter().map(|w| (w.path.as_str(), w.extents)).collect();
        assert_eq!(names, vec![("b", 9), ("d", 9)]);
        // The largest list takes unfragmented files too, ties by path.
        let largest: Vec<_> = t.largest.iter().map(|l| (l.path.as_str(), l.size)).collect();
        assert_eq!(largest, vec![("c", 8192), ("e", 8192)]);
        let r = t.report();
        assert_eq!(r.summary.fragmented_files, 5);
        assert_eq!(r.summary.files, 6);
    }
}
