//! Block-layer counters of one device: deltas of `/sys/class/block/NAME/stat`
//! around the measured work (Documentation/block/stat.rst).
//!
//! The design decision: devices are named by their sysfs name and found
//! from a device number, never from a `/dev` path, so a partition, a loop
//! device and the disk under it are read the same way; `/sys/class/block`
//! lists partitions too, which `/sys/block` does not.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::layout::mounts;
use super::{Probe, ProbeCtx, Reading, Running};
use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::units::MIB;

/// Bytes per sector as the stat file counts them: always 512, whatever the
/// device's logical block size (stat.rst: "standard UNIX 512-byte sectors").
pub const SECTOR_BYTES: u64 = 512;

/// A block device (disk, partition, loop device) as sysfs names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// The sysfs name, e.g. `vda`, `sda1`, `loop3`.
    pub name: String,
    /// Major device number.
    pub major: u32,
    /// Minor device number.
    pub minor: u32,
}

impl BlockDevice {
    /// The device called `name` in `/sys/class/block`.
    pub fn from_name(name: &str) -> Result<BlockDevice> {
        let path = sys_class(name).join("dev");
        let text = fs::read_to_string(&path).map_err(|e| Error::io(&path, "read the device number", e))?;
        let (major, minor) = parse_dev(&text)
            .ok_or_else(|| Error::failed(format!("{}: not a `major:minor` pair: {text:?}", path.display())))?;
        Ok(BlockDevice { name: name.to_string(), major, minor })
    }

    /// The block device numbered `major:minor`.
    pub fn from_dev(major: u32, minor: u32) -> Result<BlockDevice> {
        let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let target = fs::read_link(&link).map_err(|e| Error::io(&link, "find the block device", e))?;
        let name = target
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| Error::failed(format!("{}: odd link target {}", link.display(), target.display())))?;
        Ok(BlockDevice { name: name.to_string(), major, minor })
    }

    /// The block device of the file system holding `path`, or `None` when
    /// that file system has no block device of its own (tmpfs, overlay,
    /// proc, NFS...).
    ///
    /// btrfs gives every subvolume an anonymous device number (major 0),
    /// and not even the one mountinfo shows for the mount, so for btrfs the
    /// device is the source of the mount the path is under; for a
    /// multi-device btrfs that is the device it was mounted by.
    pub fn holding(path: &Path) -> Result<Option<BlockDevice>> {
        let st = rustix::fs::stat(path).map_err(|e| Error::io(path, "stat", e.into()))?;
        let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        if Path::new(&format!("/sys/dev/block/{major}:{minor}")).exists() {
            return BlockDevice::from_dev(major, minor).map(Some);
        }
        let Some(mount) = mounts::find_by_device(major, minor).or_else(|| mount_under(path)) else {
            return Ok(None);
        };
        if mount.fs_type != "btrfs" {
            return Ok(None);
        }
        let source = Path::new(&mount.source);
        let Ok(src) = rustix::fs::stat(source) else { return Ok(None) };
        if rustix::fs::FileType::from_raw_mode(src.st_mode) != rustix::fs::FileType::BlockDevice {
            return Ok(None);
        }
        BlockDevice::from_dev(rustix::fs::major(src.st_rdev), rustix::fs::minor(src.st_rdev)).map(Some)
    }

    /// The disk this partition belongs to, or the device itself when it is
    /// not a partition (or sysfs cannot say).
    pub fn whole_disk(&self) -> BlockDevice {
        let dir = sys_class(&self.name);
        if !dir.join("partition").exists() {
            return self.clone();
        }
        // /sys/class/block/sda1 links to .../block/sda/sda1: the parent
        // directory is the disk.
        let parent = fs::canonicalize(&dir)
            .ok()
            .and_then(|p| p.parent().and_then(|d| d.file_name()).and_then(|n| n.to_str().map(String::from)));
        parent.and_then(|name| BlockDevice::from_name(&name).ok()).unwrap_or_else(|| self.clone())
    }

    /// The device's counters now.
    pub fn read(&self) -> io::Result<BlockStat> {
        let path = sys_class(&self.name).join("stat");
        let text = fs::read_to_string(&path)?;
        BlockStat::parse(&text).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{}: unexpected format {text:?}", path.display()))
        })
    }

    /// The device number as the kernel encodes `dev_t` inside (major in the
    /// bits above 20): what tracepoints' `dev` fields hold and filter on.
    pub fn dev_t_kernel(&self) -> u64 {
        (u64::from(self.major) << 20) | u64::from(self.minor)
    }
}

/// The mount `path` is under: the longest mount point that is a prefix
/// of its real path, the topmost if several are stacked there.
fn mount_under(path: &Path) -> Option<mounts::MountEntry> {
    let path = fs::canonicalize(path).ok()?;
    mounts::all()
        .into_iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.as_os_str().len())
}

fn sys_class(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// One reading of a device's stat file; after [`since`](BlockStat::since),
/// the activity between two readings. Sectors are 512 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockStat {
    /// Read requests completed.
    pub read_ios: u64,
    /// Read requests merged into another before issue.
    pub read_merges: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// Milliseconds read requests spent waiting, summed over requests.
    pub read_ticks_ms: u64,
    /// Write requests completed.
    pub write_ios: u64,
    /// Write requests merged.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds write requests spent waiting.
    pub write_ticks_ms: u64,
    /// Requests in flight at the time of reading (a level, not a counter).
    pub in_flight: u64,
    /// Milliseconds the device had at least one request in flight.
    pub io_ticks_ms: u64,
    /// Weighted milliseconds of requests in flight.
    pub time_in_queue_ms: u64,
    /// Discard requests completed (kernels from 4.18 print it).
    pub discard_ios: Option<u64>,
    /// Discard requests merged.
    pub discard_merges: Option<u64>,
    /// Sectors discarded.
    pub discard_sectors: Option<u64>,
    /// Milliseconds discard requests spent waiting.
    pub discard_ticks_ms: Option<u64>,
    /// Flush requests completed (kernels from 5.5 print it).
    pub flush_ios: Option<u64>,
    /// Milliseconds flush requests spent waiting.
    pub flush_ticks_ms: Option<u64>,
}

impl BlockStat {
    /// Parse the stat file's one line of 11, 15 or 17 numbers.
    pub fn parse(text: &str) -> Option<BlockStat> {
        let v: Vec<u64> = text.split_whitespace().map(str::parse).collect::<std::result::Result<_, _>>().ok()?;
        if v.len() < 11 {
            return None;
        }
        let opt = |i: usize, needed: usize| (v.len() >= needed).then(|| v[i]);
        Some(BlockStat {
            read_ios: v[0],
            read_merges: v[1],
            read_sectors: v[2],
            read_ticks_ms: v[3],
            write_ios: v[4],
            write_merges: v[5],
            write_sectors: v[6],
            write_ticks_ms: v[7],
            in_flight: v[8],
            io_ticks_ms: v[9],
            time_in_queue_ms: v[10],
            discard_ios: opt(11, 15),
            discard_merges: opt(12, 15),
            discard_sectors: opt(13, 15),
            discard_ticks_ms: opt(14, 15),
            flush_ios: opt(15, 17),
            flush_ticks_ms: opt(16, 17),
        })
    }

    /// What happened between `earlier` and `self`. Counters saturate at 0
    /// (a device re-created in between would otherwise wrap); `in_flight`
    /// is a level, so it is the later value.
    pub fn since(&self, earlier: &BlockStat) -> BlockStat {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let o = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        BlockStat {
            read_ios: d(self.read_ios, earlier.read_ios),
            read_merges: d(self.read_merges, earlier.read_merges),
            read_sectors: d(self.read_sectors, earlier.read_sectors),
            read_ticks_ms: d(self.read_ticks_ms, earlier.read_ticks_ms),
            write_ios: d(self.write_ios, earlier.write_ios),
            write_merges: d(self.write_merges, earlier.write_merges),
            write_sectors: d(self.write_sectors, earlier.write_sectors),
            write_ticks_ms: d(self.write_ticks_ms, earlier.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: d(self.io_ticks_ms, earlier.io_ticks_ms),
            time_in_queue_ms: d(self.time_in_queue_ms, earlier.time_in_queue_ms),
            discard_ios: o(self.discard_ios, earlier.discard_ios),
            discard_merges: o(self.discard_merges, earlier.discard_merges),
            discard_sectors: o(self.discard_sectors, earlier.discard_sectors),
            discard_ticks_ms: o(self.discard_ticks_ms, earlier.discard_ticks_ms),
            flush_ios: o(self.flush_ios, earlier.flush_ios),
            flush_ticks_ms: o(self.flush_ticks_ms, earlier.flush_ticks_ms),
        }
    }

    /// Bytes read.
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors * SECTOR_BYTES
    }

    /// Bytes written.
    pub fn written_bytes(&self) -> u64 {
        self.write_sectors * SECTOR_BYTES
    }

    /// Read requests per MiB read: 256 for a 4 KiB-per-request scan of a
    /// fragmented file, a handful for a contiguous one whatever the disk.
    /// `None` when nothing was read.
    pub fn read_ios_per_mib(&self) -> Option<f64> {
        ios_per_mib(self.read_ios, self.read_bytes())
    }
}

/// Requests per MiB moved; `None` when no bytes were.
pub fn ios_per_mib(ios: u64, bytes: u64) -> Option<f64> {
    (bytes > 0).then(|| ios as f64 / (bytes as f64 / MIB))
}

/// Declares the block-layer figures once for each prefix (`""` for the
/// scratch device, `"backing_"` for the disk under its image).
macro_rules! block_figures {
    ($p:literal, $what:literal, [$wr:literal, $rd:literal, $wios:literal, $rios:literal]) => {
        &[
            FigureSpec::new(concat!($p, "written_bytes"), "bytes", Better::Lower, Kind::Timing)
                .heading($wr)
                .about(concat!("bytes written to ", $what)),
            FigureSpec::new(concat!($p, "read_bytes"), "bytes", Better::Lower, Kind::Timing)
                .heading($rd)
                .about(concat!("bytes read from ", $what)),
            FigureSpec::new(concat!($p, "write_ios"), "count", Better::Lower, Kind::Timing)
                .heading($wios)
                .about(concat!("write I/Os completed by ", $what)),
            FigureSpec::new(concat!($p, "read_ios"), "count", Better::Lower, Kind::Timing)
                .heading($rios)
                .about(concat!("read I/Os completed by ", $what)),
            FigureSpec::new(concat!($p, "write_merges"), "count", Better::Lower, Kind::Timing)
                .about(concat!("writes merged into others on ", $what)),
            FigureSpec::new(concat!($p, "read_merges"), "count", Better::Lower, Kind::Timing)
                .about(concat!("reads merged into others on ", $what)),
            FigureSpec::new(concat!($p, "flushes"), "count", Better::Lower, Kind::Timing)
                .about(concat!("cache flushes sent to ", $what)),
            FigureSpec::new(concat!($p, "io_ticks_ms"), "ms", Better::Lower, Kind::Timing)
                .about(concat!("time ", $what, " was busy")),
            FigureSpec::new(concat!($p, "read_ios_per_mib"), "I/Os per MiB", Better::Lower, Kind::Timing)
                .about(concat!("read I/Os per MiB read from ", $what, ": fragmentation as a reader meets it")),
        ]
    };
}

/// The scratch device's figures.
pub const FIGURES: &[FigureSpec] = block_figures!("", "the scratch device", ["MiB wr", "MiB rd", "wr I/Os", "rd I/Os"]);

/// The figures of the whole disk beneath the target: every user of that
/// disk counts, not the work alone.
pub const BACKING_FIGURES: &[FigureSpec] = block_figures!("backing_", "the disk under the target", ["", "", "", ""]);

/// What the scratch device still wrote after the window, up to and
/// including the unmount: a journal's checkpoint (ext4 `data=journal`
/// writes its data a second time there), metadata and writeback the
/// work's syncfs did not ask for. Timings: when the file system does it
/// decides how much falls after the window.
pub const DEFERRED_FIGURES: &[FigureSpec] = &[
    FigureSpec::new("deferred_written_bytes", "bytes", Better::Lower, Kind::Timing)
        .heading("+deferred MiB")
        .about("bytes the scratch device wrote after the work and its syncfs, up to and including the unmount"),
    FigureSpec::new("deferred_write_ios", "count", Better::Lower, Kind::Timing)
        .heading("+deferred I/Os")
        .about("write I/Os the scratch device completed after the work and its syncfs, up to the unmount"),
    FigureSpec::new("deferred_flushes", "count", Better::Lower, Kind::Timing)
        .heading("+deferred flushes")
        .about("cache flushes sent to the scratch device after the work and its syncfs, up to the unmount"),
];

/// Put a delta's figures into `figures`: `specs` is [`FIGURES`] or
/// [`BACKING_FIGURES`]. Without a delta (no counters for that device) the
/// same figures are there, missing for `why_missing`.
pub fn add_figures(delta: Option<&BlockStat>, specs: &[FigureSpec], why_missing: &str, figures: &mut Figures) {
    // Counted exactly, but shaped by when writeback, merging and readahead
    // happened to run: two runs of one workload differ, so every one is a
    // `timing` (compared over repeats). Flushes too: the journal issues
    // them for its commits, and how many commits the work's syncs need
    // depends on what writeback committed before them (42 for 20 fsyncs
    // alone, 217 to 403 for 200 under load).
    let nothing_read = "nothing was read from the device";
    let count = |n: u64| (Some(n as f64), "");
    for spec in specs {
        let Some(d) = delta else {
            figures.put(spec, None, why_missing);
            continue;
        };
        let (value, why) = match spec.name.trim_start_matches("backing_") {
            "written_bytes" => count(d.written_bytes()),
            "read_bytes" => count(d.read_bytes()),
            "write_ios" => count(d.write_ios),
            "read_ios" => count(d.read_ios),
            "write_merges" => count(d.write_merges),
            "read_merges" => count(d.read_merges),
            "flushes" => (d.flush_ios.map(|n| n as f64), NO_FLUSH),
            "io_ticks_ms" => count(d.io_ticks_ms),
            "read_ios_per_mib" => (d.read_ios_per_mib(), nothing_read),
            other => unreachable!("block figure {other} is declared but not measured"),
        };
        figures.put(spec, value, why);
    }
}

/// The probe: deltas of `/sys/block/DEV/stat` for the scratch device and
/// the disk beneath it.
#[derive(Debug)]
pub struct BlockCounters;

/// Counters read when the probe started.
struct Started {
    devices: [Option<BlockDevice>; 2],
    before: [Option<BlockStat>; 2],
}

impl Probe for BlockCounters {
    fn name(&self) -> &'static str {
        "block"
    }

    fn figures(&self) -> &'static [FigureSpec] {
        // The backing disk's figures are declared too (see BACKING_FIGURES),
        // but this is the list readers look names up in first.
        FIGURES
    }

    fn start<'a>(&self, ctx: &ProbeCtx<'a>) -> Box<dyn Running + 'a> {
        let devices = [ctx.scratch.cloned(), ctx.backing.cloned()];
        let before = devices.each_ref().map(|d| d.as_ref().and_then(|d| d.read().ok()));
        Box::new(Started { devices, before })
    }

    fn deferred_figures(&self) -> &'static [FigureSpec] {
        DEFERRED_FIGURES
    }
}

/// Why a flush count is missing.
const NO_FLUSH: &str = "this kernel's block stat has no flush counter (before 5.5)";

/// Why the scratch device's figures are missing when it has no counters.
const NO_SCRATCH_COUNTERS: &str = "no block-layer counters for the scratch device";

impl Started {
    /// The window's figures, and the scratch device's counters they end
    /// with.
    fn window(self) -> (Reading, Option<BlockDevice>, Option<BlockStat>) {
        let mut reading = Reading::default();
        let after = self.devices.each_ref().map(|d| d.as_ref().and_then(|d| d.read().ok()));
        let sides = [(FIGURES, NO_SCRATCH_COUNTERS), (BACKING_FIGURES, "no block-layer counters for the disk under it")];
        for (i, (specs, why)) in sides.into_iter().enumerate() {
            let delta = self.before[i].as_ref().zip(after[i].as_ref()).map(|(b, a)| a.since(b));
            add_figures(delta.as_ref(), specs, why, &mut reading.figures);
        }
        let [scratch, _] = self.devices;
        (reading, scratch, after[0])
    }
}

impl Running for Started {
    fn stop(self: Box<Self>) -> Reading {
        self.window().0
    }

    fn stop_window<'s>(self: Box<Self>) -> (Reading, Option<Box<dyn super::Later + 's>>)
    where
        Self: 's,
    {
        let (reading, device, before) = self.window();
        (reading, Some(Box::new(Deferred { device, before })))
    }
}

/// The scratch device's counters from the window's end on.
struct Deferred {
    device: Option<BlockDevice>,
    before: Option<BlockStat>,
}

impl super::Later for Deferred {
    fn stop(self: Box<Self>) -> Figures {
        let after = self.device.as_ref().and_then(|d| d.read().ok());
        let delta = self.before.zip(after).map(|(b, a)| a.since(&b));
        let mut figures = Figures::new();
        add_deferred_figures(delta.as_ref(), NO_SCRATCH_COUNTERS, &mut figures);
        figures
    }
}

/// Put [`DEFERRED_FIGURES`] from the scratch device's counters after the
/// window into `figures`; without them, every one missing for `why`.
pub fn add_deferred_figures(delta: Option<&BlockStat>, why: &str, figures: &mut Figures) {
    let [bytes, ios, flushes] = [&DEFERRED_FIGURES[0], &DEFERRED_FIGURES[1], &DEFERRED_FIGURES[2]];
    let Some(d) = delta else {
        for spec in DEFERRED_FIGURES {
            figures.put(spec, None, why);
        }
        return;
    };
    figures.put(bytes, Some(d.written_bytes() as f64), "");
    figures.put(ios, Some(d.write_ios as f64), "");
    figures.put(flushes, d.flush_ios.map(|n| n as f64), NO_FLUSH);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::testutil::{LoopDevice, root_or_skip, run};

    const LINE_17: &str = "  283345    36573 15010483   255573   251490    54992 70238438   224260        0    50156   489379    32358       24 102210600     8257    27659     1288\n";

    #[test]
    fn parses_17_fields() {
        let s = BlockStat::parse(LINE_17).unwrap();
        assert_eq!((s.read_ios, s.read_merges, s.read_sectors, s.read_ticks_ms), (283345, 36573, 15010483, 255573));
        assert_eq!((s.write_ios, s.write_merges, s.write_sectors, s.write_ticks_ms), (251490, 54992, 70238438, 224260));
        assert_eq!((s.in_flight, s.io_ticks_ms, s.time_in_queue_ms), (0, 50156, 489379));
        assert_eq!(s.discard_ios, Some(32358));
        assert_eq!(s.discard_merges, Some(24));
        assert_eq!(s.discard_sectors, Some(102210600));
        assert_eq!(s.discard_ticks_ms, Some(8257));
        assert_eq!((s.flush_ios, s.flush_ticks_ms), (Some(27659), Some(1288)));
    }

    #[test]
    fn parses_11_and_15_fields_and_rejects_short_or_bad_lines() {
        let s = BlockStat::parse("1 2 3 4 5 6 7 8 9 10 11").unwrap();
        assert_eq!((s.read_ios, s.time_in_queue_ms, s.in_flight), (1, 11, 9));
        assert_eq!((s.discard_ios, s.flush_ios), (None, None));
        let s = BlockStat::parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15").unwrap();
        assert_eq!((s.discard_ios, s.discard_ticks_ms), (Some(12), Some(15)));
        assert_eq!((s.flush_ios, s.flush_ticks_ms), (None, None));
        assert_eq!(BlockStat::parse("1 2 3 4 5 6 7 8 9 10"), None);
        assert_eq!(BlockStat::parse("1 2 3 4 5 6 7 8 9 10 x"), None);
    }

    #[test]
    fn delta_saturates_and_keeps_the_later_in_flight() {
        let a = BlockStat::parse("10 1 80 5 20 2 160 7 3 100 200 1 0 8 1 4 2").unwrap();
        let b = BlockStat::parse("12 1 2128 9 25 4 2208 9 1 150 260 1 0 8 1 6 3").unwrap();
        let d = b.since(&a);
        assert_eq!((d.read_ios, d.read_sectors, d.write_ios, d.write_merges), (2, 2048, 5, 2));
        assert_eq!(d.in_flight, 1);
        assert_eq!((d.io_ticks_ms, d.flush_ios, d.flush_ticks_ms), (50, Some(2), Some(1)));
        assert_eq!(d.read_bytes(), 1 << 20);
        assert_eq!(d.read_ios_per_mib(), Some(2.0));
        // A counter that went backwards (device re-created) gives 0, not a wrap.
        assert_eq!(a.since(&b).read_ios, 0);
        let old = BlockStat::parse("1 2 3 4 5 6 7 8 9 10 11").unwrap();
        assert_eq!(b.since(&old).flush_ios, None);
    }

    #[test]
    fn figures_are_in_bytes_with_the_prefix_and_missing_not_zero() {
        let d = BlockStat::parse("4 0 2048 1 3 1 16 2 0 5 6").unwrap();
        let mut f = Figures::new();
        add_figures(Some(&d), BACKING_FIGURES, "", &mut f);
        assert_eq!(f.value("backing_read_bytes"), Some(1048576.0));
        assert_eq!(f.value("backing_written_bytes"), Some(8192.0));
        assert_eq!(f.value("backing_write_merges"), Some(1.0));
        assert_eq!(f.value("backing_read_ios_per_mib"), Some(4.0));
        assert_eq!(f.get("backing_io_ticks_ms").unwrap().kind, Kind::Timing);
        assert_eq!(f.value("backing_flushes"), None);
        assert!(f.get("backing_flushes").unwrap().missing.is_some());
        let mut f = Figures::new();
        add_figures(Some(&BlockStat::default()), FIGURES, "", &mut f);
        assert_eq!(f.value("read_ios_per_mib"), None);
        assert_eq!(f.value("read_bytes"), Some(0.0));
        // No counters: the very same names, every one missing with the reason.
        let mut none = Figures::new();
        add_figures(None, BACKING_FIGURES, "no counters", &mut none);
        let names = |f: &Figures| f.iter().map(|(n, _)| n.to_string()).collect::<Vec<_>>();
        let mut some = Figures::new();
        add_figures(Some(&d), BACKING_FIGURES, "", &mut some);
        assert_eq!(names(&none), names(&some));
        assert!(none.iter().all(|(_, f)| f.value.is_none() && f.missing.as_deref() == Some("no counters")));
    }

    #[test]
    fn dev_t_uses_the_kernel_encoding() {
        let d = BlockDevice { name: "loop3".into(), major: 7, minor: 3 };
        assert_eq!(d.dev_t_kernel(), 7 * 1048576 + 3);
    }

    #[test]
    fn the_root_disk_is_found_and_read() {
        let Some(dev) = BlockDevice::holding(Path::new("/")).unwrap() else {
            eprintln!("skipping: / is not on a block device here");
            return;
        };
        assert_eq!(BlockDevice::from_name(&dev.name).unwrap(), dev);
        let disk = dev.whole_disk();
        assert!(Path::new("/sys/block").join(&disk.name).exists(), "{disk:?} is a whole disk");
        let a = disk.read().unwrap();
        let b = disk.read().unwrap();
        assert!(a.read_ios > 0, "a booted disk has been read: {a:?}");
        assert!(b.read_ios >= a.read_ios && b.write_sectors >= a.write_sectors);
        assert!(BlockDevice::from_name("no-such-disk").is_err());
        assert_eq!(BlockDevice::holding(Path::new("/proc")).unwrap(), None);
    }

    #[test]
    fn a_partition_names_its_disk() {
        if !root_or_skip("a_partition_names_its_disk") {
            return;
        }
        let lo = LoopDevice::partitioned(64, 16);
        let disk = BlockDevice::from_dev(lo.major, lo.minor).unwrap();
        let part_name = format!("{}p1", disk.name);
        let part = BlockDevice::from_name(&part_name).unwrap();
        // Loop partitions get extended numbers (major 259), so the link
        // in sysfs, not the number, says which disk they belong to.
        assert_ne!((part.major, part.minor), (disk.major, disk.minor));
        assert_eq!(part.whole_disk(), disk);
        assert_eq!(disk.whole_disk(), disk);
        // A partition has a stat file of its own.
        let size: u64 = fs::read_to_string(sys_class(&part_name).join("size")).unwrap().trim().parse().unwrap();
        assert_eq!(size, 16 * 2048);
        assert!(part.read().is_ok());
    }

    #[test]
    fn a_btrfs_mount_is_traced_to_its_device_through_the_anonymous_dev() {
        if !root_or_skip("a_btrfs_mount_is_traced_to_its_device") {
            return;
        }
        let mut lo = LoopDevice::new(256);
        let mnt = lo.format_and_mount("btrfs", &["-q", "-f"], None);
        let st = rustix::fs::stat(&mnt).unwrap();
        // The premise: btrfs hands out an anonymous device number.
        assert_eq!(rustix::fs::major(st.st_dev), 0);
        fs::create_dir(mnt.join("sub")).unwrap();
        fs::write(mnt.join("sub/file"), "x").unwrap();
        let dev = BlockDevice::holding(&mnt.join("sub/file")).unwrap().expect("btrfs is on the loop device");
        assert_eq!((dev.major, dev.minor), (lo.major, lo.minor));
        assert_eq!(dev.whole_disk(), dev);
    }

    #[test]
    fn direct_writes_to_a_loop_device_show_on_it_and_on_its_backing_disk() {
        if !root_or_skip("direct_writes_to_a_loop_device") {
            return;
        }
        let lo = LoopDevice::new(64);
        let dev = BlockDevice::from_dev(lo.major, lo.minor).unwrap();
        assert_eq!(format!("/dev/{}", dev.name), lo.device);
        let backing = BlockDevice::holding(&lo.image).unwrap().expect("the image is on a disk").whole_disk();
        let (a, ba) = (dev.read().unwrap(), backing.read().unwrap());
        run(
            "dd",
            &["if=/dev/urandom", &format!("of={}", lo.device), "bs=1M", "count=1", "oflag=direct", "status=none"],
        );
        let (d, bd) = (dev.read().unwrap().since(&a), backing.read().unwrap().since(&ba));
        assert!(d.write_sectors >= 2048, "{d:?}");
        assert!(d.write_ios >= 1);
        // The loop device runs with direct I/O, so its writes reach the
        // disk before dd returns rather than sitting in the page cache.
        assert!(bd.write_sectors >= 2048, "backing {backing:?}: {bd:?}");
        let mut f = Figures::new();
        add_figures(Some(&d), FIGURES, "", &mut f);
        assert!(f.value("written_bytes").unwrap() >= 1048576.0);
    }
}
