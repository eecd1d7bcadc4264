//! A cold cache, and the read-back that follows it: every file of a tree
//! read whole, in the order `tar cf` reads it (seed 001).
//!
//! The design decision: the walk is tar's, not a sorted or parallel one —
//! depth first, each directory's entries in readdir order, symlinks not
//! followed, one file system — because the read-back measures how well the
//! file system laid files out for the order it hands them out in, and
//! readdir order is that order. The walk itself is
//! [`crate::layout::tar_order`], which tree-copy shares.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;

use super::blockstat::ios_per_mib;
use crate::error::{Error, Result};
use crate::layout::tar_order;
use crate::record::{Better, FigureSpec, Figures, Kind};

/// How the cache was made cold before a read-back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ColdMethod {
    /// Unmount and mount the scratch file system (done by the target): all
    /// its data and metadata leave the cache, as in seed 001.
    Remount,
    /// `sync` then `echo 3 > /proc/sys/vm/drop_caches` (root): data and
    /// inode/dentry caches of every file system.
    DropCaches,
    /// `POSIX_FADV_DONTNEED` on every file: clean data pages only;
    /// metadata stays cached, so the read-back is a little warm.
    Fadvise,
}

impl ColdMethod {
    /// The name recorded with the figures.
    pub fn as_str(self) -> &'static str {
        match self {
            ColdMethod::Remount => "remount",
            ColdMethod::DropCaches => "drop_caches",
            ColdMethod::Fadvise => "fadvise",
        }
    }
}

/// Write back all dirty data, then drop clean page cache, dentries and
/// inodes (`drop_caches` only drops clean objects, hence the sync). Root.
pub fn drop_caches() -> io::Result<()> {
    rustix::fs::sync();
    fs::write("/proc/sys/vm/drop_caches", "3")
}

/// `POSIX_FADV_DONTNEED` on every regular file under `dir`; the number of
/// files advised. Pages still dirty stay cached (the kernel only starts
/// their writeback), so the caller syncs first when the tree was just
/// written.
pub fn fadvise_tree(dir: &Path) -> Result<u64> {
    let mut files = 0;
    walk(dir, &mut |path, file| {
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .map_err(|e| Error::io(path, "fadvise(DONTNEED)", e.into()))?;
        files += 1;
        Ok(())
    })?;
    Ok(files)
}

/// What a read-back read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadBack {
    /// Regular files read (empty ones included).
    pub files: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Seconds the whole walk took, directory reads included, as tar's
    /// "real".
    pub wall_s: f64,
    /// User CPU seconds of the read-back ("user").
    pub user_s: f64,
    /// System CPU seconds of the read-back ("sys").
    pub sys_s: f64,
}

/// The read size of a read-back unless a scenario asks for its seed's:
/// 1 MiB rather than tar's 10 KiB records. The device sees the same
/// requests either way (the page cache's readahead, not the read size,
/// decides them), and a big read keeps our syscalls out of user and
/// system time.
pub const DEFAULT_READ_BYTES: usize = 1 << 20;

/// Read every regular file under `dir` completely, in tar order, with
/// reads of `read_bytes`.
pub fn read_tree(dir: &Path, read_bytes: usize) -> Result<ReadBack> {
    let clock = super::cpu::CpuClock::start();
    let mut buf = vec![0u8; read_bytes.max(1)];
    let (mut files, mut bytes) = (0, 0);
    walk(dir, &mut |path, mut file| {
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => bytes += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, "read", e)),
            }
        }
        files += 1;
        Ok(())
    })?;
    let span = clock.stop();
    Ok(ReadBack { files, bytes, wall_s: span.wall_s, user_s: span.user_s, sys_s: span.sys_s })
}

/// Call `visit` with every regular file under `root` (or `root` itself if
/// it is one), opened for reading, in tar order.
fn walk(root: &Path, visit: &mut dyn FnMut(&Path, File) -> Result<()>) -> Result<()> {
    let meta = fs::symlink_metadata(root).map_err(|e| Error::io(root, "stat", e))?;
    if meta.is_file() {
        return visit(root, open(root)?);
    }
    tar_order::walk(root, meta.dev(), &mut |entry| {
        if entry.meta.is_file() {
            visit(entry.path, open(entry.path)?)?;
        }
        Ok(())
    })
}

/// [`tar_order::open`], failing with the path and what was being done.
fn open(path: &Path) -> Result<File> {
    tar_order::open(path).map_err(|e| Error::io(path, "open", e))
}

/// The read-back's figures, declared once.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("cold_read_s", "s", Better::Lower, Kind::Timing)
        .heading("cold s")
        .about("time to read every file back with a cold cache, in tar order"),
    FigureSpec::new("cold_read_user_s", "s", Better::Lower, Kind::Timing).heading("cold user s"),
    FigureSpec::new("cold_read_sys_s", "s", Better::Lower, Kind::Timing).heading("cold sys s"),
    FigureSpec::new("cold_read_mbps", "MiB/s", Better::Higher, Kind::Timing)
        .heading("cold MiB/s")
        .about("bytes read back / cold_read_s, in MiB (2^20 bytes) a second"),
    FigureSpec::new("cold_read_bytes", "bytes", Better::Lower, Kind::Exact),
    FigureSpec::new("cold_read_ios", "count", Better::Lower, Kind::Timing)
        .about("read I/Os the device completed during the read-back"),
    FigureSpec::new("cold_read_ios_per_mib", "I/Os per MiB", Better::Lower, Kind::Timing)
        .heading("cold rd/MiB")
        .about("read I/Os per MiB read back: fragmentation as a reader meets it"),
];

/// More than any one read I/O carries (a device's `max_sectors_kb` is
/// rarely above 4 MiB): a read-back with fewer I/Os than its bytes need at
/// this size did not come from the device.
const MAX_IO_BYTES: u64 = 16 << 20;

/// Put the read-back's figures into `figures`: `cold_read_s`,
/// `cold_read_mbps`, `cold_read_bytes`, and with the device's read I/Os
/// during the read-back, `cold_read_ios` and `cold_read_ios_per_mib`.
/// Returns the method's name, which the caller stores with the case.
pub fn add_figures(rb: &ReadBack, method: ColdMethod, read_ios: Option<u64>, figures: &mut Figures) -> &'static str {
    let no_data = "the tree has no data to read";
    let no_device = "no block device under the tree to count read I/Os on";
    // A read-back the device did not serve (unwritten extents and holes
    // read as zeros without it: 6 read I/Os for 256 MiB, fewer than even
    // 16 MiB I/Os could carry) measured no reading: no rate.
    let (mbps, rate_why) = match (rb.bytes, read_ios) {
        (0, _) => (None, no_data.to_string()),
        (bytes, Some(n)) if n.saturating_mul(MAX_IO_BYTES) < bytes => {
            (None, format!("{n} read I/Os cannot have carried {}: the device did not serve the read-back (unwritten extents and holes read as zeros)", crate::units::bytes(bytes)))
        }
        (bytes, _) => crate::units::rate(bytes as f64, rb.wall_s),
    };
    // Read I/Os follow the layout, but readahead's timing merges or splits
    // a few: timing, not exact.
    let (per_mib, why) = match read_ios {
        None => (None, no_device),
        Some(n) => (ios_per_mib(n, rb.bytes), no_data),
    };
    let values = [
        (Some(rb.wall_s), ""),
        (Some(rb.user_s), ""),
        (Some(rb.sys_s), ""),
        (mbps, rate_why.as_str()),
        (Some(rb.bytes as f64), ""),
        (read_ios.map(|n| n as f64), no_device),
        (per_mib, why),
    ];
    for (spec, (value, why)) in FIGURES.iter().zip(values) {
        figures.put(spec, value, why);
    }
    method.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::testutil::{root_or_skip, run};
    use std::io::Write;
    use std::path::PathBuf;
    use std::sync::Mutex;

    /// drop_caches empties every file's cache: the residency tests take
    /// turns so one's "was cached" check is not undone by the other.
    static CACHE: Mutex<()> = Mutex::new(());

    fn scratch() -> tempfile::TempDir {
        // Not /tmp: a tmpfs keeps its pages however it is advised.
        crate::test_temp::dir("")
    }

    fn write_file(path: &Path, len: usize) {
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut f = File::create(path).unwrap();
        f.write_all(&data).unwrap();
        f.sync_all().unwrap();
    }

    /// Bytes of `path` in the page cache, as fincore(1) counts them.
    fn resident_bytes(path: &Path) -> u64 {
        let out = run("fincore", &["--bytes", "--noheadings", "--output", "RES", path.to_str().unwrap()]);
        out.trim().parse().unwrap_or_else(|_| panic!("fincore said {out:?}"))
    }

    fn read_whole(path: &Path) {
        let mut v = Vec::new();
        File::open(path).unwrap().read_to_end(&mut v).unwrap();
    }

    #[test]
    fn method_names() {
        assert_eq!(ColdMethod::DropCaches.as_str(), "drop_caches");
        assert_eq!(ColdMethod::Remount.as_str(), "remount");
        assert_eq!(serde_json::to_value(ColdMethod::Fadvise).unwrap(), "fadvise");
        assert_eq!(serde_json::to_value(ColdMethod::DropCaches).unwrap(), "drop_caches");
    }

    #[test]
    fn a_read_back_with_no_device_io_or_too_short_has_no_rate_and_says_why() {
        // 1 GiB of unwritten extents read as zeros in 0.13 s: 8,049 "MiB/s"
        // of no reading.
        let rb = ReadBack { files: 1, bytes: 1 << 30, wall_s: 0.127, user_s: 0.0, sys_s: 0.12 };
        let mut f = Figures::new();
        add_figures(&rb, ColdMethod::Remount, Some(0), &mut f);
        let rate = f.get("cold_read_mbps").unwrap();
        assert_eq!(rate.value, None);
        assert!(rate.missing.as_deref().unwrap().contains("0 read I/Os cannot have carried 1.0 GiB"), "{rate:?}");
        assert_eq!(f.value("cold_read_bytes"), Some((1u64 << 30) as f64));
        let mut f = Figures::new();
        add_figures(&rb, ColdMethod::Remount, Some(6), &mut f);
        assert_eq!(f.value("cold_read_mbps"), None, "6 I/Os for 1 GiB");
        let quick = ReadBack { files: 1, bytes: 1 << 20, wall_s: 0.0002, user_s: 0.0, sys_s: 0.0 };
        let mut f = Figures::new();
        add_figures(&quick, ColdMethod::Remount, Some(2), &mut f);
        assert!(f.get("cold_read_mbps").unwrap().missing.as_deref().unwrap().contains("under the 1 ms"));
    }

    #[test]
    fn figures_from_a_read_back() {
        let rb = ReadBack { files: 3, bytes: 50_000_000, wall_s: 0.5, user_s: 0.01, sys_s: 0.2 };
        let mut f = Figures::new();
        assert_eq!(add_figures(&rb, ColdMethod::Remount, Some(100), &mut f), "remount");
        // 50e6 bytes in 0.5 s: 100e6 bytes a second, 95.37 MiB/s.
        let rate = f.get("cold_read_mbps").unwrap();
        assert_eq!(rate.unit, "MiB/s");
        assert!((rate.value.unwrap() - 95.367431640625).abs() < 1e-9, "{rate:?}");
        assert_eq!(f.get("cold_read_mbps").unwrap().better, Better::Higher);
        assert_eq!(f.value("cold_read_s"), Some(0.5));
        assert_eq!(f.value("cold_read_bytes"), Some(5e7));
        // 50e6 bytes are 47.68 MiB: 100 / 47.68 = 2.097 I/Os per MiB.
        let per_mib = f.value("cold_read_ios_per_mib").unwrap();
        assert!((per_mib - 2.097152).abs() < 1e-9, "{per_mib}");

        let empty = ReadBack { files: 2, bytes: 0, wall_s: 0.001, user_s: 0.0, sys_s: 0.0 };
        let mut f = Figures::new();
        add_figures(&empty, ColdMethod::Fadvise, None, &mut f);
        assert_eq!(f.value("cold_read_mbps"), None);
        assert!(f.get("cold_read_mbps").unwrap().missing.is_some());
        assert_eq!(f.value("cold_read_ios"), None);
        assert_eq!(f.value("cold_read_bytes"), Some(0.0));
    }

    #[test]
    fn read_tree_reads_regular_files_only_and_exactly() {
        let dir = scratch();
        let root = dir.path().join("tree");
        fs::create_dir_all(root.join("sub/deeper")).unwrap();
        write_file(&root.join("a"), 3000);
        write_file(&root.join("sub/b"), (1 << 20) + 5); // crosses the buffer's end
        File::create(root.join("sub/deeper/empty")).unwrap();
        // Outside the tree, reachable only through symlinks.
        write_file(&dir.path().join("outside"), 77_777);
        std::os::unix::fs::symlink(dir.path().join("outside"), root.join("link-to-file")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("sub/link-to-dir")).unwrap();
        let rb = read_tree(&root, DEFAULT_READ_BYTES).unwrap();
        assert_eq!((rb.files, rb.bytes), (3, 3000 + (1 << 20) + 5));
        assert!(rb.wall_s > 0.0);
        assert_eq!(read_tree(&root.join("a"), 1000).unwrap().bytes, 3000);
        let err = read_tree(&root.join("missing"), DEFAULT_READ_BYTES).unwrap_err();
        assert!(err.message.contains("missing"), "{}", err.message);
    }

    #[test]
    fn the_order_is_tars() {
        let dir = scratch();
        let root = dir.path();
        for d in ["src", "src/lib", "doc"] {
            fs::create_dir(root.join(d)).unwrap();
            for i in 0..15 {
                write_file(&root.join(format!("{d}/file{i:02}.c")), 10);
            }
        }
        let mut ours = Vec::new();
        walk(root, &mut |path, _| {
            ours.push(path.strip_prefix(root).unwrap().to_path_buf());
            Ok(())
        })
        .unwrap();
        let tars: Vec<PathBuf> = crate::layout::tar_order::tar_listing(root)
            .iter()
            .filter(|l| !l.is_empty() && !l.ends_with('/'))
            .map(PathBuf::from)
            .collect();
        assert_eq!(ours.len(), 45);
        assert_eq!(ours, tars);
        // The order is the file system's, not the names'.
        let mut sorted = ours.clone();
        sorted.sort();
        assert_ne!(ours, sorted);
    }

    #[test]
    fn fadvise_empties_the_cache_of_every_file() {
        let _turn = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch();
        fs::create_dir(dir.path().join("d")).unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("d/b"));
        write_file(&a, 256 * 1024);
        write_file(&b, 64 * 1024);
        read_whole(&a);
        read_whole(&b);
        assert_eq!(resident_bytes(&a), 256 * 1024);
        assert_eq!(fadvise_tree(dir.path()).unwrap(), 2);
        assert_eq!(resident_bytes(&a), 0);
        assert_eq!(resident_bytes(&b), 0);
    }

    #[test]
    fn drop_caches_empties_the_cache() {
        if !root_or_skip("drop_caches_empties_the_cache") {
            return;
        }
        let _turn = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let dir = scratch();
        let a = dir.path().join("a");
        write_file(&a, 128 * 1024);
        read_whole(&a);
        assert_eq!(resident_bytes(&a), 128 * 1024);
        drop_caches().unwrap();
        assert_eq!(resident_bytes(&a), 0);
    }
}
