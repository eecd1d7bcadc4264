//! `mmap-fill` (seed 000): fill a sparse file through a shared mapping,
//! one store per page in a scattered order, then msync.
//!
//! The seed (ext3, 2009): a 1 GiB file made with ftruncate and filled
//! through `mmap(MAP_SHARED)` in the order page (i+23)*1000000007 mod npg
//! ended in 50,435 extents where "perfection would be 9", and read back at
//! 18 MB/s on a 70 MB/s disk; ext4 and xfs gave tens of extents, and
//! posix_fallocate before the mapping was a (slow, on ext3) workaround.
//!
//! On kernel 6.18 ext2 and ext3 are served by the ext4 driver, which
//! allocates at the store's page fault (no delayed allocation for these
//! types) but through mballoc's per-file preallocation, so the file ends
//! in 8 MiB pieces in store order rather than 4 KiB ones; btrfs is where
//! the seed's picture now appears (about one extent per page).
//!
//! With delayed allocation (ext4, xfs, btrfs) the layout is decided by
//! when writeback starts. Started by msync, it walks the file in page
//! order and gives it a few extents; started during the stores, it gives
//! blocks in the order the pages were dirtied, the stores' scattered one.
//! So the case reads the file's allocated bytes between the stores and
//! msync (`early_allocated_bytes`, by FIEMAP in the storing child). Two
//! things start writeback early: dirty pages passing the background
//! threshold (a small machine, a memory limit, `vm.dirty_background_*`),
//! and the flusher's first wake, `vm.dirty_writeback_centisecs` (5 s)
//! after the disk's first dirty inode. A disk that has not yet finished
//! any writeback has no share of the background threshold (debugfs's
//! `BdiDirtyThresh: 0 kB`), so that wake writes back everything dirty.
//! On this host the stores end long before it; in an emulated guest they
//! take 5-12 s and it often falls inside them (DESIGN, "Cases in guests").
//!
//! The one design decision: the page order is walked as an arithmetic
//! progression modulo the page count (start, step), which yields exactly
//! the seed's sequence (and the sequential and reverse ones) with an add
//! and a compare per page instead of the seed program's 64-bit division,
//! and cannot overflow at any size.

use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Instant;

use super::params::{ParamKind, ParamSpec, Params};
use super::seeds::{self, Judged, Preset, PresetCondition, Shown, Test, Verdict};
use super::{Case, Room, Scenario, Seeded, Work, WorkOutcome};
use crate::units::{bytes_short, short_number};
use crate::error::{Error, Result};
use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::ledger::Ledger;
use crate::layout::{self, extent_map::DEFAULT_BATCH};
use crate::sys::fiemap::FiemapBuffer;
use crate::sys::mmap::{self, ChildEnd, SharedMap};
use crate::sys::prealloc::{self, Prealloc};

/// The seed's multiplier, a prime, so its walk visits every page unless
/// the page count is a multiple of it.
const PRIME: u64 = 1_000_000_007;
/// The seed's offset: page i is the walk's (i+23)th step.
const OFFSET: u64 = 23;

const ORDERS: [&str; 3] = ["seed", "sequential", "reverse"];
const PRETOUCHES: [&str; 4] = ["none", "read", "write", "read-reverse"];
const PREALLOCS: [&str; 2] = ["none", "posix_fallocate"];

const PARAMS: [ParamSpec; 4] = [
    ParamSpec {
        name: "size",
        kind: ParamKind::Size,
        small: "128M",
        full: "1G",
        seed: "1 GiB",
        about: "length of the file, a whole number of pages",
    },
    ParamSpec {
        name: "order",
        kind: ParamKind::Choice(&ORDERS),
        small: "seed",
        full: "seed",
        seed: "seed (page (i+23)*1000000007 mod pages)",
        about: "the order of the one store per page",
    },
    ParamSpec {
        name: "pretouch",
        kind: ParamKind::Choice(&PRETOUCHES),
        small: "none",
        full: "none",
        seed: "none; alloctest -t read, -w write, -d read-reverse",
        about: "a pass over every page, in page order, before the stores",
    },
    ParamSpec {
        name: "prealloc",
        kind: ParamKind::Choice(&PREALLOCS),
        small: "none",
        full: "none",
        seed: "none; posix_fallocate is the seed's first workaround",
        about: "reserve the whole file after ftruncate, before mapping it",
    },
];

/// The file's name, as in the seed.
const FILE_NAME: &str = "big";

/// The scenario.
#[derive(Debug)]
pub struct MmapFill;

/// The figures it measures beyond the probes', declared once.
const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("prealloc_s", "s", Better::Lower, Kind::Timing)
        .about("seconds in posix_fallocate (before the mapping; not in total_mbps)"),
    FigureSpec::new("prealloc_emulated", "count", Better::Lower, Kind::Exact)
        .about("1 when glibc emulated posix_fallocate by writing every block, 0 when the fs reserved it"),
    FigureSpec::new("pretouch_s", "s", Better::Lower, Kind::Timing)
        .about("seconds of the pass over every page before the stores"),
    FigureSpec::new("touch_s", "s", Better::Lower, Kind::Timing).heading("touch s")
        .about("seconds of the stores, one per page"),
    FigureSpec::new("touch_us_per_page", "us", Better::Lower, Kind::Timing)
        .about("microseconds per store, as alloctest prints it"),
    FigureSpec::new("page_hits", "count", Better::Lower, Kind::Exact)
        .about("stores that found their page already written (alloctest's 'hit' lines; 0 for a permutation)"),
    // Writeback that began during the stores decides it (a flusher woken
    // by another writer, a memory limit): 107 to 123 MiB of 128 on ext4
    // beside other writers, so a timing.
    FigureSpec::new("early_allocated_bytes", "bytes", Better::Lower, Kind::Timing).heading("MiB early")
        .about("bytes of the file that had blocks when the stores ended, before msync: allocated in the stores' \
             order, at each page fault (no delayed allocation) or by writeback that began during the stores"),
    FigureSpec::new("msync_s", "s", Better::Lower, Kind::Timing).heading("msync s")
        .about("seconds in msync(MS_SYNC)"),
    FigureSpec::new("munmap_s", "s", Better::Lower, Kind::Timing).heading("munmap s")
        .about("seconds in munmap"),
    FigureSpec::new("close_s", "s", Better::Lower, Kind::Timing).heading("close s")
        .about("seconds in close"),
    FigureSpec::new("total_mbps", "MiB/s", Better::Higher, Kind::Timing).heading("total MiB/s")
        .about("MiB/s from the start of the pretouch (or the stores) to after close, as alloctest prints it \
             (the exit of the process that made the stores not counted)"),
];

impl Scenario for MmapFill {
    fn name(&self) -> &'static str {
        "mmap-fill"
    }
    fn about(&self) -> &'static str {
        "fill a file through mmap(MAP_SHARED) in a scattered page order, then msync; extents vs perfection"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &PARAMS
    }
    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }
    fn seeded(&self) -> Option<&dyn Seeded> {
        Some(self)
    }
    /// The seed's point first (extents against perfection, and how much
    /// was allocated before msync, which says why: a table too narrow for
    /// every figure keeps them), then alloctest's own lines but munmap's
    /// and close's, which read 0.01 s and 0.000 s on every file system
    /// here (`--wide` shows them), so that a run under `--memory` keeps
    /// its peak in 120 columns.
    fn headline(&self) -> &'static [&'static str] {
        &[
            "extents",
            "perfection",
            "early_allocated_bytes",
            "touch_s",
            "msync_s",
            "total_mbps",
            "cold_read_mbps",
            "cold_read_ios_per_mib",
        ]
    }
    fn check(&self, params: &Params) -> std::result::Result<(), String> {
        let size = params.number("size");
        let page = mmap::page_size() as u64;
        if size % page != 0 {
            let down = size / page * page;
            return Err(format!(
                "--set size={size}: must be a whole number of pages ({page} bytes); give {} or {}",
                down.max(page),
                down + page
            ));
        }
        if usize::try_from(size).is_err() {
            return Err(format!("--set size={size}: too large to map on this machine"));
        }
        let pages = size / page;
        if params.word("order") == "seed" && pages % PRIME == 0 {
            return Err(format!(
                "--set size={size}: {pages} pages is a multiple of {PRIME}, so the seed's order would not visit \
                 every page; give another size or order=sequential"
            ));
        }
        Ok(())
    }
    fn work(&self, params: &Params) -> Box<dyn Work> {
        Box::new(Fill {
            size: params.number("size"),
            order: Order::parse(params.word("order")),
            pretouch: Pretouch::parse(params.word("pretouch")),
            prealloc: params.word("prealloc") == "posix_fallocate",
        })
    }
}

impl Seeded for MmapFill {
    fn seed(&self) -> &'static str {
        "000"
    }
    /// alloctest's lines (touch, msync; munmap and close read 0.01 s and
    /// 0.000 s everywhere, so they are left to `show --wide`), filefrag's
    /// extents and the read-back rate (18 MB/s of 70).
    fn printed(&self) -> &'static [&'static str] {
        &["extents", "touch_s", "msync_s", "total_mbps", "cold_read_mbps"]
    }
    /// 1 GiB in 50,435 extents is 21 KiB each; its dd read 18.4 MB/s, and
    /// 70 / 18.4 is 3.8.
    fn reported(&self) -> &'static str {
        "ext3, 2009: mean extent 21 KiB (50,435 extents where 9 would do); read at 18.4 MB/s of 70 (3.8× slower)"
    }
    fn preset(&self) -> Preset {
        // "a 7200rpm disk that can do 70MB/s sequential".
        let disk = Some("hdd-7200-2009");
        Preset { settings: &[("prealloc", "none,posix_fallocate")], variants: &[], conditions: PRESET_CONDITIONS, disk }
    }
    /// Judged on every place by [`shows_at`].
    fn verdict(&self, cases: &[&Case]) -> Verdict {
        seeds::judge_places(self.name(), self.seed(), CLAIM, cases, shows_at)
    }
    /// [`shows_at`] judges the file filled without preallocation; the
    /// preallocated one is the seed's workaround, said beside it.
    fn hunt_holds(&self) -> &'static [(&'static str, &'static str, &'static str)] {
        &[("prealloc", "none", "posix_fallocate, the seed's workaround, is evidence beside the claim, not part of it")]
    }
}

/// The seed's machine, as the preset's conditions: its 1 GiB file was a
/// sixth of the machine's 6 GiB and its writeback began at 5% of memory,
/// a third of the file, while here the preset's 128 MiB file is a two
/// hundredth of the memory and writeback waits for 10% of it. So the
/// preset adds, beside the machine's own condition: a memory limit just
/// below the file's size (its last pages are stored only after earlier
/// ones were reclaimed, and so written, in the order they were made), one
/// just above it (the file fits: where the seed's RHEL kernel kept its
/// file whole), and writeback starting at a quarter of the file, as the
/// seed's did. Below is 120M, not further: the stores past the limit wait
/// on reclaim (measured on xfs: 5 s at 120M, 21 s at 112M, 72 s at 96M, for
/// 23,706, 25,136 and 27,446 extents), so 120M shows as much and keeps the
/// preset within minutes. The limits are for the preset's 128 MiB; a
/// larger `--set size` moves the file past both, which the places' names
/// then say.
const PRESET_CONDITIONS: &[PresetCondition] = &[
    PresetCondition { memory: Some("120M"), sysctls: &[], age: None, fill: None },
    PresetCondition { memory: Some("160M"), sysctls: &[], age: None, fill: None },
    PresetCondition { memory: None, sysctls: &[("vm.dirty_background_bytes", "32M")], age: None, fill: None },
];

/// What seed 000 reported, kept as one line of the verdict's evidence.
const CLAIM: &str = "ext3 in 2009: a 1 GiB file in 50,435 extents where perfection was 9, 21 KiB each, \
                     read back at 18 MB/s of 70; posix_fallocate first avoided it";

/// The extents per perfect extent at which the stores' order shows in the
/// layout: the seed had 5,600; a fresh file system that allocates in
/// large windows adds a few per window boundary (this kernel's ext3 makes
/// 8 × perfection in 8 MiB pieces), never ten times as many.
const EXTENT_FACTOR: f64 = 10.0;

/// The mean extent size below which the extents cost a reader: at a few
/// hundred MB/s and a few milliseconds a seek, extents of several MiB
/// are read at nearly full speed, while the seed's 21 KiB ones cut it
/// to a quarter.
const MEAN_EXTENT_BYTES: f64 = 1024.0 * 1024.0;

/// The seed's claim on one place's cases: the file filled in the seed's
/// order without preallocation ends in at least [`EXTENT_FACTOR`] ×
/// perfection's extents, averaging under [`MEAN_EXTENT_BYTES`]. The
/// preallocated file's extents are evidence (the seed's workaround), not
/// part of the claim.
fn shows_at(cases: &[&Case]) -> Judged {
    let seed_way = |prealloc: &'static str| seeds::with_params(cases, &[("order", "seed"), ("pretouch", "none"), ("prealloc", prealloc)]);
    let figure = |prealloc: &'static str, name: &str| seeds::median(&seed_way(prealloc), name);
    let (Some(extents), Some(perfection), Some(bytes)) =
        (figure("none", "extents"), figure("none", "perfection"), figure("none", "bytes"))
    else {
        return Judged::unknown("extents", "no case in the seed's order without preallocation with its layout");
    };
    let mean = bytes / extents.max(1.0);
    let tests = vec![
        Test::at_least("extents", "extents/perfection", extents / perfection.max(1.0), EXTENT_FACTOR, Shown::Times),
        Test::below("bytes", "mean extent", mean, MEAN_EXTENT_BYTES, Shown::Bytes),
    ];
    let each = if mean < MEAN_EXTENT_BYTES { format!("{:.0} KiB", mean / 1024.0) } else { bytes_short(mean as u64) };
    let noun = if extents == 1.0 { "extent" } else { "extents" };
    let mut evidence = format!("{} {noun} where {} would do, {each} each", short_number(extents), short_number(perfection));
    // What the extents cost a reader, on the seed's kind of disk.
    if let Some(read) = seeds::modelled_read(&seed_way("none"), figure("none", "modelled_read_ratio"), "in one piece") {
        evidence = format!("the file {read}: {evidence}");
    }
    if let Some(with) = figure("posix_fallocate", "extents") {
        evidence += &format!("; {} with posix_fallocate", short_number(with));
    }
    Judged::by(tests, false, "extents", extents, Some(perfection), evidence)
}

/// The order of the stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Seed,
    Sequential,
    Reverse,
}

impl Order {
    fn parse(word: &str) -> Order {
        match word {
            "sequential" => Order::Sequential,
            "reverse" => Order::Reverse,
            _ => Order::Seed,
        }
    }

    /// The order as a walk over `pages` pages (more than 0): the first page
    /// and the step, both below `pages`. The seed's page i is
    /// ((i+23)*PRIME) mod pages, so it starts at 23*PRIME and steps PRIME.
    fn walk(self, pages: u64) -> (u64, u64) {
        match self {
            Order::Seed => {
                let start = (u128::from(OFFSET) * u128::from(PRIME) % u128::from(pages)) as u64;
                (start, PRIME % pages)
            }
            Order::Sequential => (0, 1 % pages),
            Order::Reverse => (pages - 1, pages - 1),
        }
    }
}

/// The pass before the stores, as alloctest's flags make it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pretouch {
    None,
    /// `-t`: read a byte of every page, first to last.
    Read,
    /// `-w`: rewrite a byte of every page with itself, first to last.
    Write,
    /// `-d`: read a byte of every page, last to first.
    ReadReverse,
}

impl Pretouch {
    fn parse(word: &str) -> Pretouch {
        match word {
            "read" => Pretouch::Read,
            "write" => Pretouch::Write,
            "read-reverse" => Pretouch::ReadReverse,
            _ => Pretouch::None,
        }
    }
}

/// Walk every page of `map` once. alloctest folds what it reads into one
/// byte and, after the pass, stores that byte at the file's start (so the
/// reads are not optimised away); that store dirties page 0 before any
/// other, so it is kept. In write mode the folded byte is 0 throughout and
/// each page's first byte is stored back unchanged.
fn pretouch(map: &SharedMap, how: Pretouch) {
    let pages = map.pages();
    let mut folded = 0u8;
    for i in 0..pages {
        let page = if how == Pretouch::ReadReverse { pages - 1 - i } else { i };
        if how == Pretouch::Write {
            map.write_byte(page, map.read_byte(page) ^ folded);
        } else {
            folded ^= map.read_byte(page);
        }
    }
    map.write_byte(0, folded);
}

/// One store per page of `map` in `order`: load the word at the page's
/// start, then store the store's number into it. Returns how many loads
/// found a word already written (the seed's "hit").
fn touch(map: &SharedMap, order: Order) -> u64 {
    let pages = map.pages();
    let (start, step) = order.walk(pages as u64);
    let (mut page, step) = (start as usize, step as usize);
    let mut hits = 0u64;
    for i in 0..pages {
        // The seed stores an int; past 2^31 pages the number wraps as it
        // would there.
        hits += u64::from(map.load_then_store(page, i as i32) != 0);
        page += step;
        if page >= pages {
            page -= pages;
        }
    }
    hits
}

struct Fill {
    size: u64,
    order: Order,
    pretouch: Pretouch,
    prealloc: bool,
}

fn io(path: &Path, what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |e| Error::io(&path, what, e)
}

/// The free bytes a `size` file filled through a mapping needs: the file
/// and a sixteenth more for the block maps and metadata.
fn room_for(size: u64) -> u64 {
    size.saturating_add(size / 16)
}

/// Refuse to start when the file system cannot hold the file: a store
/// that finds no free block at its page fault is a SIGBUS, which ends the
/// storing child and fails the case, so it is better not begun. Returns
/// the free bytes found, for the message if the stores fault anyway.
fn ensure_room(file: &File, path: &Path, size: u64) -> Result<u64> {
    let st = rustix::fs::fstatvfs(file).map_err(|e| Error::io(path, "statvfs", e.into()))?;
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    if free < room_for(size) {
        return Err(Error::failed(format!(
            "the file system has {} free, too little for a {} file filled through a mapping: \
             give a larger --size or a smaller --set size",
            crate::units::bytes(free),
            crate::units::bytes(size)
        )));
    }
    Ok(free)
}

/// The figure called `name`, as declared above.
fn spec(name: &str) -> &'static FigureSpec {
    FIGURES.iter().find(|f| f.name == name).expect("declared above")
}

/// The figures of the stores and after, missing when the stores did not
/// finish.
const STORE_FIGURES: [&str; 9] = [
    "pretouch_s",
    "touch_s",
    "touch_us_per_page",
    "page_hits",
    "early_allocated_bytes",
    "msync_s",
    "munmap_s",
    "close_s",
    "total_mbps",
];

/// Why the stores' child ended before it finished, for the case's error.
fn stores_failed(end: ChildEnd, size: u64, free: u64) -> String {
    match end {
        ChildEnd::Signal(libc::SIGBUS) => format!(
            "a store into the mapping raised SIGBUS: the file system could not back a page the stores \
             dirtied (out of space — {} were free for the {} file, and delayed allocation reserves more \
             than the data for scattered stores — or an I/O error; see the kernel log); give a larger \
             --size or a smaller --set size",
            crate::units::bytes(free),
            crate::units::bytes(size)
        ),
        ChildEnd::Signal(signal) => {
            format!("the process storing into the mapping was killed by {}", crate::interrupt::signal_name(signal))
        }
        ChildEnd::Exit(mmap::CHILD_PANICKED | mmap::CHILD_OUT_OF_RANGE) => {
            "the process storing into the mapping panicked (a bug in fslab: please report it)".to_string()
        }
        ChildEnd::Exit(status) => format!("the process storing into the mapping ended with status {status}"),
    }
}

impl Work for Fill {
    fn run(&mut self, dir: &Path, _ledger: &Ledger) -> Result<WorkOutcome> {
        let path = dir.join(FILE_NAME);
        // O_RDWR|O_CREAT as the seed, without O_TRUNC: ftruncate sets the
        // length next.
        let file: File = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o666)
            .open(&path)
            .map_err(io(&path, "create"))?;
        file.set_len(self.size).map_err(io(&path, "ftruncate"))?;
        let free = ensure_room(&file, &path, self.size)?;
        let mut figures = Figures::new();
        let seconds = |f: &mut Figures, name: &str, s: f64| f.put(spec(name), Some(s), "");
        if self.prealloc {
            let started = Instant::now();
            let how = prealloc::posix_fallocate(&file, 0, self.size).map_err(io(&path, "posix_fallocate"))?;
            seconds(&mut figures, "prealloc_s", started.elapsed().as_secs_f64());
            let emulated = f64::from(u8::from(how == Prealloc::Emulated));
            figures.put(spec("prealloc_emulated"), Some(emulated), "");
        } else {
            for name in ["prealloc_s", "prealloc_emulated"] {
                figures.put(spec(name), None, "no preallocation (prealloc=none)");
            }
        }
        let len = usize::try_from(self.size).map_err(|_| Error::failed("the file is too large to map"))?;
        let map = SharedMap::new(&file, len).map_err(io(&path, "mmap"))?;

        // The stores, msync and munmap run in a child, so a page the file
        // system cannot back (SIGBUS) ends that child and this case, not
        // fslab. Only loads, stores, those two calls and clock reads
        // happen there.
        // The file's blocks are read between the stores and msync, in the
        // child (the FIEMAP buffer is made here, before the fork) and
        // outside every timed span: what was allocated in the stores'
        // order, at a page fault or by writeback that began during them.
        let (how, order) = (self.pretouch, self.order);
        let mut fiemap = FiemapBuffer::new(DEFAULT_BATCH);
        let fd = file.as_fd();
        let stores = map
            .fill_in_child(move |map| {
                let t_start = Instant::now();
                if how != Pretouch::None {
                    pretouch(map, how);
                }
                let t_touch = Instant::now();
                let hits = touch(map, order);
                let t_touched = Instant::now();
                let early = layout::allocated_bytes(fd, &mut fiemap).map_err(|e| e.raw_os_error());
                (t_start, t_touch, t_touched, hits, early, Instant::now())
            })
            .map_err(io(&path, "start the process that stores into the mapping of"))?;
        let ((t_start, t_touch, t_touched, hits, early, t_mapped), flushed) = match stores {
            Ok(done) => done,
            Err(end) => {
                drop(map);
                drop(file);
                for name in STORE_FIGURES {
                    figures.put(spec(name), None, "the stores did not finish (see the case's error)");
                }
                let failure = stores_failed(end, self.size, free);
                return Ok(WorkOutcome { figures, failure: Some(failure), ..WorkOutcome::default() });
            }
        };
        flushed.synced().map_err(io(&path, "msync"))?;
        flushed.unmapped().map_err(io(&path, "munmap"))?;
        let (t_synced, t_unmapped) = (flushed.synced, flushed.unmapped);
        // This process's own copy of the mapping was never touched: its
        // unmapping is not the seed's and not timed. The close is.
        drop(map);
        let t_closing = Instant::now();
        drop(file);
        let t_closed = Instant::now();

        if self.pretouch == Pretouch::None {
            figures.put(spec("pretouch_s"), None, "no pretouch pass (pretouch=none)");
        } else {
            seconds(&mut figures, "pretouch_s", (t_touch - t_start).as_secs_f64());
        }
        let touch_s = (t_touched - t_touch).as_secs_f64();
        seconds(&mut figures, "touch_s", touch_s);
        let per_page = 1e6 * touch_s / (len / mmap::page_size()) as f64;
        figures.put(spec("touch_us_per_page"), Some(per_page), "");
        figures.put(spec("page_hits"), Some(hits as f64), "");
        // `allocated_bytes` fails without an errno only when FIEMAP made
        // no progress.
        let why = |errno: Option<i32>| {
            let why = errno.map_or("no progress".to_string(), |n| std::io::Error::from_raw_os_error(n).to_string());
            format!("FIEMAP after the stores failed: {why}")
        };
        let (early, why) = match early {
            Ok(bytes) => (Some(bytes as f64), String::new()),
            Err(errno) => (None, why(errno)),
        };
        figures.put(spec("early_allocated_bytes"), early, &why);
        seconds(&mut figures, "msync_s", (t_synced - t_mapped).as_secs_f64());
        seconds(&mut figures, "munmap_s", (t_unmapped - t_synced).as_secs_f64());
        seconds(&mut figures, "close_s", (t_closed - t_closing).as_secs_f64());
        let total_s = ((t_touched - t_start) + (t_unmapped - t_mapped) + (t_closed - t_closing)).as_secs_f64();
        let (rate, why) = crate::units::rate(self.size as f64, total_s);
        figures.put(spec("total_mbps"), rate, &why);
        Ok(WorkOutcome { figures, ..WorkOutcome::default() })
    }

    fn wants_cold_read(&self) -> bool {
        true
    }

    fn space_needed(&self) -> u64 {
        self.size
    }

    fn room_needed(&self) -> Option<Room> {
        let what = format!("--set size={} filled through a mapping, and a sixteenth more for metadata", bytes_short(self.size));
        Some(Room { bytes: room_for(self.size), what })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::params::{Scale, Setting, expand};

    /// The seed's formula, computed directly and without overflow.
    fn seed_page(i: u64, pages: u64) -> u64 {
        ((u128::from(i + OFFSET) * u128::from(PRIME)) % u128::from(pages)) as u64
    }

    fn walk_all(order: Order, pages: u64) -> Vec<u64> {
        let (mut page, step) = order.walk(pages);
        (0..pages)
            .map(|_| {
                let here = page;
                page = (page + step) % pages;
                here
            })
            .collect()
    }

    #[test]
    fn the_seed_walk_is_the_seed_formula_and_a_permutation() {
        for pages in [1, 2, 3, 7, 1000, 4096, 32_768, 100_003, 262_144] {
            let walk = walk_all(Order::Seed, pages);
            assert!(walk.iter().enumerate().all(|(i, &p)| p == seed_page(i as u64, pages)), "{pages} pages");
            let mut seen = vec![false; pages as usize];
            for &p in &walk {
                assert!(!seen[p as usize], "{pages} pages: page {p} twice");
                seen[p as usize] = true;
            }
        }
    }

    #[test]
    fn the_seed_walk_starts_where_the_hand_computation_says() {
        // 1000000007 mod 1000 = 7, so page i is (i+23)*7 mod 1000:
        // 161, 168, 175, ... and 23*7 = 161.
        assert_eq!(&walk_all(Order::Seed, 1000)[..4], &[161, 168, 175, 182]);
        // 1 GiB of 4 KiB pages: 1000000007 - 3814*262144 = 182791, and
        // 23*182791 = 4204193 = 16*262144 + 9889; then 9889+182791 =
        // 192680, and 192680+182791-262144 = 113327.
        assert_eq!(&walk_all(Order::Seed, 262_144)[..3], &[9889, 192_680, 113_327]);
        assert_eq!(walk_all(Order::Sequential, 4), [0, 1, 2, 3]);
        assert_eq!(walk_all(Order::Reverse, 4), [3, 2, 1, 0]);
        assert_eq!(walk_all(Order::Reverse, 1), [0]);
    }

    fn params(size: &str, order: &str) -> Params {
        let sets: Vec<Setting> = [format!("size={size}"), format!("order={order}")].iter().map(|s| s.parse().unwrap()).collect();
        expand(&PARAMS, &sets, Scale::Small).unwrap().remove(0)
    }

    #[test]
    fn sizes_that_are_not_whole_pages_are_refused_by_name() {
        let e = MmapFill.check(&params("10000", "seed")).unwrap_err();
        assert!(e.contains("size=10000") && e.contains("8192 or 12288"), "{e}");
        assert!(MmapFill.check(&params("128M", "seed")).is_ok());
        let multiple = (PRIME * 4096).to_string();
        let e = MmapFill.check(&params(&multiple, "seed")).unwrap_err();
        assert!(e.contains("multiple of 1000000007"), "{e}");
        assert!(MmapFill.check(&params(&multiple, "sequential")).is_ok());
    }

    #[test]
    fn every_page_holds_the_number_of_the_store_that_wrote_it() {
        let pages = 37u64;
        let page = mmap::page_size() as u64;
        for (order, pretouch, prealloc) in [
            (Order::Seed, Pretouch::None, false),
            (Order::Sequential, Pretouch::Write, true),
            (Order::Reverse, Pretouch::ReadReverse, false),
            (Order::Seed, Pretouch::Read, true),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut work = Fill { size: pages * page, order, pretouch, prealloc };
            let outcome = work.run(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
            assert_eq!(outcome.figures.value("page_hits"), Some(0.0));
            // A rate, or (37 pages are quickly stored) why there is none.
            let rate = outcome.figures.get("total_mbps").unwrap();
            assert!(rate.value.is_some() || rate.missing.as_deref().unwrap().contains("under the 1 ms"), "{rate:?}");
            assert_eq!(outcome.figures.value("prealloc_emulated").is_some(), prealloc);
            let bytes = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
            assert_eq!(bytes.len() as u64, pages * page, "{order:?}");
            let (mut p, step) = order.walk(pages);
            for i in 0..pages {
                let at = (p * page) as usize;
                let word = i32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap());
                assert_eq!(word, i as i32, "{order:?}: page {p}");
                p = (p + step) % pages;
            }
        }
    }

    #[test]
    fn a_file_larger_than_the_free_space_is_refused_before_any_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let file = File::create(&path).unwrap();
        assert!(ensure_room(&file, &path, 1 << 20).unwrap() >= 1 << 20);
        let e = ensure_room(&file, &path, 1 << 60).unwrap_err().to_string();
        assert!(e.contains("too little") && e.contains("--size"), "{e}");
    }

    fn case(fs: &str, prealloc: &str, extents: f64, perfection: f64, bytes: f64) -> Case {
        let mut figures = Figures::new();
        figures.set("extents", extents, "count", Better::Lower, Kind::Exact);
        figures.set("perfection", perfection, "count", Better::Lower, Kind::Exact);
        figures.set("bytes", bytes, "bytes", Better::Lower, Kind::Exact);
        let mut params = serde_json::Map::new();
        params.insert("size".into(), (bytes as u64).into());
        for (k, v) in [("order", "seed"), ("pretouch", "none"), ("prealloc", prealloc)] {
            params.insert(k.into(), v.into());
        }
        Case { figures, ..Case::new("mmap-fill", fs, params, 1) }
    }

    #[test]
    fn the_claim_wants_ten_times_perfection_in_extents_under_a_mebibyte() {
        let judge = |cases: &[Case]| shows_at(&cases.iter().collect::<Vec<_>>());
        let gib = f64::from(1u32 << 30);
        // The seed's own figures.
        let seed = judge(&[case("ext3", "none", 50_435.0, 9.0, gib), case("ext3", "posix_fallocate", 12.0, 9.0, gib)]);
        assert_eq!(seed.shows, Some(true));
        assert_eq!(seed.evidence, "50,435 extents where 9 would do, 21 KiB each; 12 with posix_fallocate");
        assert_eq!((seed.value, seed.against), (Some(50_435.0), Some(9.0)));
        // btrfs here at 128 MiB: one extent per page, or nearly.
        let btrfs = judge(&[case("btrfs", "none", 31_483.0, 1.0, 128.0 * 1024.0 * 1024.0)]);
        assert_eq!(btrfs.shows, Some(true));
        assert_eq!(btrfs.evidence, "31,483 extents where 1 would do, 4 KiB each");
        // This kernel's ext3 at 1 GiB: 8 MiB pieces, too few and too big.
        let pieces = judge(&[case("ext3", "none", 128.0, 9.0, gib)]);
        assert_eq!(pieces.shows, Some(false));
        assert_eq!(pieces.evidence, "128 extents where 9 would do, 8 MiB each");
        // Exactly at the thresholds: 10 x perfection shows; a mean of 1 MiB does not.
        assert_eq!(judge(&[case("xfs", "none", 90.0, 9.0, 90.0 * 1023.0 * 1024.0)]).shows, Some(true));
        assert_eq!(judge(&[case("xfs", "none", 90.0, 9.0, 90.0 * 1024.0 * 1024.0)]).shows, Some(false));
        assert_eq!(judge(&[case("xfs", "none", 89.0, 9.0, 89.0 * 4096.0)]).shows, Some(false));
        let whole = judge(&[case("xfs", "none", 1.0, 1.0, 128.0 * 1024.0 * 1024.0)]);
        assert_eq!((whole.shows, whole.evidence.as_str()), (Some(false), "1 extent where 1 would do, 128 MiB each"));
        let unknown = judge(&[case("ext4", "posix_fallocate", 10.0, 8.0, gib)]);
        assert_eq!(unknown.shows, None);
    }

    #[test]
    fn the_verdict_says_what_the_extents_cost_on_the_seeds_disk_beside_them() {
        let mut btrfs = case("btrfs", "none", 31_493.0, 1.0, 128.0 * 1024.0 * 1024.0);
        btrfs.figures.set("modelled_read_ratio", 82.0, "ratio", Better::Lower, Kind::Timing);
        btrfs.target.disk = Some("hdd-7200-2009".into());
        let judged = shows_at(&[&btrfs]);
        assert_eq!(
            judged.evidence,
            "the file reads 82× slower on hdd-7200-2009 (modelled) than in one piece: 31,493 extents where 1 would do, 4 KiB each"
        );
        // The deciding value stays beside its threshold.
        assert_eq!(judged.deciding().unwrap().0.describe(), "mean extent 4.16 KiB (shows at < 1 MiB)");
    }

    #[test]
    fn the_verdict_names_every_place_it_shows() {
        let mib = 1024.0 * 1024.0;
        let mut limited = case("xfs", "none", 30_000.0, 1.0, 256.0 * mib);
        limited.conditions.insert("memory".into(), "256M".into());
        let cases = [
            case("ext3", "none", 16.0, 2.0, 128.0 * mib),
            case("xfs", "none", 1.0, 1.0, 128.0 * mib),
            case("btrfs", "none", 31_483.0, 1.0, 128.0 * mib),
            case("btrfs", "posix_fallocate", 1.0, 1.0, 128.0 * mib),
            limited,
        ];
        let v = MmapFill.verdict(&cases.iter().collect::<Vec<_>>());
        assert_eq!(v.shows, Some(true));
        assert_eq!(
            v.evidence,
            "seed 000 shows on btrfs (31,483 extents where 1 would do, 4 KiB each; 1 with posix_fallocate) \
             and on xfs@256M (30,000 extents where 1 would do, 9 KiB each); gone on ext3, xfs"
        );
        assert!(v.claim.starts_with("ext3 in 2009: a 1 GiB file in 50,435 extents"), "{}", v.claim);
        assert_eq!(v.places.len(), 4);
    }
}
