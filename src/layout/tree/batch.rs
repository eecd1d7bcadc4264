//! Mapping one batch of a directory's files, in directory order, into a
//! `Totals` of its own and the batch's edges for the directory's chain.
//!
//! The design decision: a file costs one FIEMAP and one fstat, which says
//! at once whether it is still a regular file, on which device, and its
//! size; nothing reads the size twice. Its open and close go with the
//! batch's others, one system call for each (`sys::uring`), where the
//! kernel allows it; elsewhere they are the plain calls. The inode-flags
//! ioctl that tells an ext4 block-mapped file from an extent-mapped one is
//! skipped when FIEMAP already said (ext4 marks a block-mapped file's
//! extents merged) or when both give the same perfection.

use std::cell::RefCell;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use super::chain::{Edges, PairCounts};
use super::modelled::{BatchData, file_figures};
use super::totals::Totals;
use super::walk::{BATCH_FILES, DirNode, NameBatch, Shared, os_name};
use crate::error::describe_io;
use crate::layout::extent_map::DEFAULT_BATCH;
use crate::layout::modelled::{ModelledFigures, Readable, readable};
use crate::layout::{FsInfo, LayoutFigures, map_open_file_sized};
use crate::sys::fiemap::{FIEMAP_EXTENT_MERGED, FiemapBuffer};
use crate::sys::uring::BatchFiles;

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

/// One regular file, mapped.
struct Mapped {
    size: u64,
    figures: LayoutFigures,
    perfection: Option<u64>,
    /// Why its data cannot be modelled (`--disk`), if so.
    unplaced: Option<&'static str>,
}

impl Shared {
    /// The file system of device `dev`, probed once per walk through `fd`.
    fn fs_info(&self, dev: u64, fd: impl AsFd) -> std::io::Result<Arc<FsInfo>> {
        if let Some((_, info)) = self.fs_cache.read().unwrap_or_else(|e| e.into_inner()).iter().find(|(d, _)| *d == dev) {
            return Ok(Arc::clone(info));
        }
        let info = Arc::new(FsInfo::probe(fd)?);
        self.fs_cache.write().unwrap_or_else(|e| e.into_inner()).push((dev, Arc::clone(&info)));
        Ok(info)
    }

    /// Map a batch of files of one directory, in order, and fold the results.
    pub(super) fn map_batch(&self, node: &DirNode, index: u64, names: NameBatch) {
        thread_local! {
            static BUFFER: RefCell<FiemapBuffer> = RefCell::new(FiemapBuffer::new(DEFAULT_BATCH));
            static FILES: RefCell<BatchFiles> = RefCell::new(BatchFiles::new(BATCH_FILES));
        }
        FILES.with_borrow_mut(|files| {
            BUFFER.with_borrow_mut(|buffer| self.map_batch_with(node, index, &names, buffer, files))
        });
    }

    fn map_batch_with(
        &self,
        node: &DirNode,
        index: u64,
        names: &NameBatch,
        buffer: &mut FiemapBuffer,
        files: &mut BatchFiles,
    ) {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        // Each file is opened in its turn where the descriptor limit has no
        // room for every thread's batch, or a batch ran out all the same.
        let mut opened = None;
        if self.open_batches {
            let mut all = Vec::with_capacity(names.len());
            files.open_all(node.fd.as_fd(), names.iter(), flags, &mut all);
            if all.iter().any(|r| matches!(r, Err(Errno::MFILE | Errno::NFILE))) {
                files.close_all(all.into_iter().flatten());
            } else {
                opened = Some(all);
            }
        }
        let mut local = Totals::new(&self.options);
        let mut counts = PairCounts::default();
        let mut edges: Option<Edges> = None;
        let mut fs: Option<(u64, Arc<FsInfo>)> = None;
        let profile = self.options.disk.as_ref();
        let mut data = BatchData::default();
        for (i, name) in names.iter().enumerate() {
            let mark = data.mark();
            let alone;
            let fd = match &opened {
                Some(all) => &all[i],
                None => {
                    alone = rustix::fs::openat(&node.fd, name, flags, Mode::empty());
                    &alone
                }
            };
            match self.map_one(node, fd, buffer, &mut fs, profile.map(|_| &mut data)) {
                Ok(Some(Mapped { size, figures, perfection, unplaced })) => {
                    if figures.records > 0 {
                        Edges::add_file(&mut edges, figures.first_physical, figures.last_physical_end, &mut counts);
                    }
                    let read = profile.map(|p| (data.end_file(mark, unplaced, p), p));
                    // A file's own modelled read only for the worst list.
                    let modelled = || {
                        read.map(|(spans, p)| match spans {
                            Ok(spans) => file_figures(spans, p),
                            Err(why) => ModelledFigures { modelled_missing: Some(why), ..ModelledFigures::default() },
                        })
                    };
                    local.file(size, &figures, perfection, || node.path.join(os_name(name)), modelled);
                }
                Ok(None) => data.forget(mark),
                Err(e) => {
                    data.forget(mark);
                    local.error(&node.path.join(os_name(name)), &e.what, e.unsupported);
                }
            }
        }
        let dir = node.chain.lock().unwrap_or_else(|e| e.into_inner()).finish_batch(index, edges, data, &mut counts, profile);
        local.pairs.add(&counts);
        if let Some(dir) = dir {
            local.directory(dir);
        }
        self.totals.lock().unwrap_or_else(|e| e.into_inner()).merge(local);
        files.close_all(opened.into_iter().flatten().flatten());
    }

    /// Map one file, opened as `fd`, its data for the model going to
    /// `data` when given; `Ok(None)` for entries that turned out not to be
    /// regular files on this file system.
    fn map_one(
        &self,
        node: &DirNode,
        fd: &Result<OwnedFd, Errno>,
        buffer: &mut FiemapBuffer,
        fs: &mut Option<(u64, Arc<FsInfo>)>,
        mut data: Option<&mut BatchData>,
    ) -> Result<Option<Mapped>, FileError> {
        let fd = fd.as_ref().map_err(|e| match *e {
            Errno::NOENT => FileError::new("vanished during the walk".to_string()),
            e => FileError::new(format!("open: {}", describe_io(&e.into()))),
        })?;
        // One fstat a file: its type (getdents said regular, but it may have
        // been swapped since), its device (a file that is a mount point
        // itself is another file system's) and its size, read before the
        // map as filefrag reads it.
        let st = rustix::fs::fstat(fd).map_err(|e| FileError::new(format!("stat: {}", describe_io(&e.into()))))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
            || (st.st_dev != node.dev && !self.options.cross_mounts)
        {
            return Ok(None);
        }
        let (size, dev) = (st.st_size.max(0) as u64, st.st_dev);
        let info = match fs {
            Some((known, info)) if *known == dev => Arc::clone(info),
            _ => {
                let info =
                    self.fs_info(dev, fd).map_err(|e| FileError::new(format!("statfs: {}", describe_io(&e))))?;
                *fs = Some((dev, Arc::clone(&info)));
                info
            }
        };
        let mut unplaced = None;
        // Whether ext4 marked the extents merged: a block-mapped inode.
        let mut merged = None;
        let acc = map_open_file_sized(fd, info.block_size, size, buffer, false, |e, step| {
            merged = Some(merged.unwrap_or(false) || e.flags & FIEMAP_EXTENT_MERGED != 0);
            if let Some(data) = data.as_deref_mut() {
                match readable(e, &step) {
                    Readable::Read(span) => data.push(span),
                    Readable::Nothing => {}
                    Readable::Unplaced(why) => {
                        unplaced.get_or_insert(why);
                    }
                }
            }
            Ok(())
        })
        .map_err(|e| FileError {
            unsupported: matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOTTY)),
            what: format!("FIEMAP: {}", describe_io(&e)),
        })?;
        let perfection = info.rule_for_size(fd, Some(size), merged).perfection(size);
        let figures = acc.finish(size);
        Ok(Some(Mapped { size, figures, perfection, unplaced }))
    }
}
