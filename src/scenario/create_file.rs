//! `create-file` (seed 003): one big file made six ways, then scanned cold
//! with 64 KiB reads and mapped.
//!
//! The seed made a 32 GB file on xfs with `xfs_mkfile` and with `dd` (1 GB
//! and small writes), dropped the cache and scanned each with `dd bs=64k`:
//! the `xfs_mkfile` file had 3,979 extents and scanned 13% slower than the
//! `dd` files, which had 4.
//!
//! The methods, each writing zeros (as `dd if=/dev/zero` did) and leaving
//! the file exactly `size` bytes long:
//! - `fallocate`: `posix_fallocate` of the whole size; on ext2/ext3, which
//!   have no `fallocate(2)`, glibc emulates it by writing into every block,
//!   and the figure `fallocate_emulated` says so.
//! - `write-1g`: buffered writes of up to 1 GiB each (`dd bs=1024M`).
//! - `write-64k`: buffered 64 KiB writes (the seed's small-writes `dd`).
//! - `mkfile`: what `xfs_mkfile` does. The one in xfsprogs 6.1 (this
//!   machine's) is a shell script around `xfs_io -ftd -c "pwrite -S0
//!   -b256k 0 SIZE" -c "truncate SIZE"`; traced, that is
//!   `open(O_RDWR|O_CREAT|O_TRUNC|O_DIRECT, 0600)`, an `XFS_IOC_FSGEOMETRY`
//!   query, one 256 KiB `pwrite` of zeros per block at rising offsets, and
//!   `ftruncate(SIZE)`. That is reproduced here natively, without the
//!   geometry query (it only informs xfs_io and changes nothing on disk).
//!   xfsprogs 2.7.8 (December 2005) made `xfs_mkfile` this script (its
//!   changelog says so, and the script still carries a 2005 copyright), so
//!   the seed's 2011 run most likely did this same I/O. The C program it
//!   replaced did it by other calls: `O_WRONLY|O_CREAT|O_TRUNC|O_DIRECT`,
//!   `XFS_IOC_DIOINFO` to fit a 256 KiB buffer within the device's
//!   direct-I/O limits, sequential `write`s with the last rounded up to the
//!   minimum direct-I/O size, and an `ftruncate` only when that overshot.
//!   Either way the file is allocated 256 KiB at a time as each direct
//!   write arrives, where buffered writes let the file system allocate
//!   large runs at writeback. On a fresh scratch xfs this kernel keeps
//!   those 256 KiB pieces contiguous (as many extents as `dd`'s file), so
//!   the seed's fragmentation needs its aged 2.7 TB file system.
//! - `odirect-64k`: `O_DIRECT` 64 KiB writes (`dd oflag=direct bs=64k`).
//! - `truncate-fill`: the design decision here. The file is first
//!   `ftruncate`d to its full size (sparse), then filled in place from
//!   offset 0 with buffered 64 KiB writes, as a program that sets a file's
//!   length before writing it does (`truncate -s`, then `dd conv=notrunc`).
//!   Unlike `write-64k`, no write ever extends the file, so xfs's
//!   speculative preallocation beyond end of file never comes into play.
//!
//! Every method writes from one zeroed buffer allocated before the measured
//! work, one system call per block. `create_s` times the writing (and the
//! `close`) only, as `dd` reported it; data left dirty is flushed by the
//! harness's `syncfs` and counted as `sync_s`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

use super::params::{ParamKind, ParamSpec, Params};
use super::seeds::{self, Judged, Preset, PresetCondition, Shown, Test, Verdict};
use super::{Case, Scenario, Seeded, Work, WorkOutcome};
use crate::error::{Error, Result};
use crate::units::short_number;
use crate::record::{Better, FigureSpec, Kind};
use crate::ledger::Ledger;
use crate::sys::aligned::AlignedBuf;
use crate::sys::prealloc::{self, Prealloc};

const METHODS: [&str; 6] = ["fallocate", "write-1g", "write-64k", "mkfile", "odirect-64k", "truncate-fill"];

const PARAMS: [ParamSpec; 2] = [
    ParamSpec {
        name: "size",
        kind: ParamKind::Size,
        small: "256M",
        full: "32G",
        seed: "32 GB",
        about: "length of the file made",
    },
    ParamSpec {
        name: "method",
        kind: ParamKind::Choice(&METHODS),
        small: "write-1g",
        full: "write-1g",
        seed: "mkfile (xfs_mkfile), write-1g (dd bs=1024M), write-64k (dd with small writes)",
        about: "how the file is made: posix_fallocate; buffered 1 GiB or 64 KiB writes; xfs_mkfile's O_DIRECT \
                256 KiB pwrites then ftruncate; O_DIRECT 64 KiB writes; ftruncate to size, then buffered 64 KiB writes",
    },
];

/// The file's name, as in the seed.
const FILE_NAME: &str = "testfile";
/// The seed's scan: `dd bs=64k`.
const SCAN_BYTES: usize = 64 << 10;
/// `dd bs=1024M`.
const ONE_GIB: u64 = 1 << 30;
/// `dd bs=64k`.
const SMALL_BLOCK: u64 = 64 << 10;
/// `xfs_mkfile`'s `pwrite -b256k` (and the old C program's buffer).
const MKFILE_BLOCK: u64 = 256 << 10;
/// The alignment `O_DIRECT` sizes and offsets keep here.
const DIRECT_ALIGN: u64 = 4096;

/// How the file is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    /// `posix_fallocate` of the whole size.
    Fallocate,
    /// Buffered sequential `write`s of `block` bytes.
    Write { block: u64 },
    /// `xfs_mkfile`: `O_DIRECT` 256 KiB `pwrite`s, then `ftruncate`.
    Mkfile,
    /// `O_DIRECT` sequential 64 KiB `write`s.
    DirectWrite,
    /// `ftruncate` to size, then buffered 64 KiB writes over the hole.
    TruncateFill,
}

impl Method {
    fn parse(word: &str) -> Method {
        match word {
            "fallocate" => Method::Fallocate,
            "write-1g" => Method::Write { block: ONE_GIB },
            "write-64k" => Method::Write { block: SMALL_BLOCK },
            "mkfile" => Method::Mkfile,
            "odirect-64k" => Method::DirectWrite,
            "truncate-fill" => Method::TruncateFill,
            other => unreachable!("method {other} passed the parameter check"),
        }
    }

    /// Whether it writes with `O_DIRECT` (and so needs aligned sizes).
    fn direct(self) -> bool {
        matches!(self, Method::Mkfile | Method::DirectWrite)
    }

    /// The write size, or `None` for `fallocate`, which writes nothing
    /// itself.
    fn block(self) -> Option<u64> {
        match self {
            Method::Fallocate => None,
            Method::Write { block } => Some(block),
            Method::Mkfile => Some(MKFILE_BLOCK),
            Method::DirectWrite | Method::TruncateFill => Some(SMALL_BLOCK),
        }
    }
}

/// The scenario.
#[derive(Debug)]
pub struct CreateFile;

/// The figures it measures beyond the probes', declared once.
const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("create_s", "s", Better::Lower, Kind::Timing).heading("create s")
        .about("seconds making the file (its writes and close, not the later syncfs)"),
    FigureSpec::new("create_mbps", "MiB/s", Better::Higher, Kind::Timing).heading("create MiB/s")
        .about("size / create_s in MiB (2^20 bytes) a second"),
    FigureSpec::new("fallocate_emulated", "count", Better::Lower, Kind::Exact)
        .about("fallocate only: 1 if glibc wrote every block (no fallocate(2), ext2/ext3), 0 if not"),
];

impl Scenario for CreateFile {
    fn name(&self) -> &'static str {
        "create-file"
    }
    fn about(&self) -> &'static str {
        "make one big file six ways (xfs_mkfile's O_DIRECT 256 KiB writes vs dd); extents and a cold 64 KiB scan"
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
    fn headline(&self) -> &'static [&'static str] {
        &["create_s", "create_mbps", "extents", "perfection", "layout_score", "cold_read_mbps", "cold_read_ios_per_mib"]
    }
    fn check(&self, params: &Params) -> std::result::Result<(), String> {
        let (size, method) = (params.number("size"), params.word("method"));
        if Method::parse(method).direct() && size % DIRECT_ALIGN != 0 {
            let next = size.div_ceil(DIRECT_ALIGN) * DIRECT_ALIGN;
            return Err(format!(
                "--set size={size} with method={method}: O_DIRECT writes need a size that is a multiple of \
                 {DIRECT_ALIGN} bytes; give size={next} (the next multiple)"
            ));
        }
        Ok(())
    }
    fn work(&self, params: &Params) -> Box<dyn Work> {
        Box::new(Create { size: params.number("size"), method: Method::parse(params.word("method")), buf: None, allocated: false })
    }
}

impl Seeded for CreateFile {
    fn seed(&self) -> &'static str {
        "003"
    }
    /// xfs_bmap's extents and dd's scan rate.
    fn printed(&self) -> &'static [&'static str] {
        &["extents", "cold_read_mbps"]
    }
    /// 3,979 / 4 is 995.
    fn reported(&self) -> &'static str {
        "xfs, 2011, aged 2.7 TB: mkfile/dd extents 995× (3,979 vs 4); mkfile's file scanned 13% slower"
    }
    fn preset(&self) -> Preset {
        Preset {
            settings: &[("method", "fallocate,write-1g,write-64k,mkfile,odirect-64k,truncate-fill")],
            variants: &[],
            conditions: &AGED,
            // A 2011 array scanned at 968 MB/s: no drive of the model's.
            disk: None,
        }
    }
    /// Judged on every place by [`shows_at`].
    fn verdict(&self, cases: &[&Case]) -> Verdict {
        seeds::judge_places(self.name(), self.seed(), CLAIM, cases, shows_at)
    }
}

/// The seed's file system had been in use and was large and partly full:
/// an aged target, 80% full (`--age churn --fill 80%`), where xfs's
/// direct writes again leave several times the extents buffered ones do.
const AGED: [PresetCondition; 1] = [PresetCondition { memory: None, sysctls: &[], age: Some("churn"), fill: Some("80%") }];

/// What seed 003 reported, kept as one line of the verdict's evidence.
const CLAIM: &str = "xfs in 2011 (an aged 2.7 TB file system): a 32 GB xfs_mkfile file in 3,979 extents, \
                     dd's in 4, scanned 13% slower";

/// How many times the dd ways' extents mkfile's file must have: the seed
/// had 1,000 ×; a fresh file system splits any big file at allocation
/// group or block group ends, which gives every way a few extents and
/// can give mkfile's direct writes one or two more, never four times.
const DD_FACTOR: f64 = 4.0;

/// The fewest extents that cost a scan anything: a handful of extents in
/// a file of GiBs are a seek per several hundred MiB.
const FEWEST_EXTENTS: f64 = 10.0;

/// The dd ways of seed 003: one big buffered write, and 64 KiB ones.
const DD_WAYS: [&str; 2] = ["write-1g", "write-64k"];

/// The seed's claim on one place's cases: the file made the
/// `xfs_mkfile` way has at least [`DD_FACTOR`] × the extents of the most
/// fragmented dd way's, and at least [`FEWEST_EXTENTS`].
fn shows_at(cases: &[&Case]) -> Judged {
    let extents = |method| seeds::median(&seeds::with_params(cases, &[("method", method)]), "extents");
    let dd: Vec<(&str, f64)> = DD_WAYS.iter().filter_map(|&way| Some((way, extents(way)?))).collect();
    let Some(mkfile) = extents("mkfile") else {
        return Judged::unknown("extents", "no mkfile case with its extents");
    };
    let Some(worst_dd) = dd.iter().map(|&(_, n)| n).reduce(f64::max) else {
        return Judged::unknown("extents", "no dd-way case (write-1g, write-64k) with its extents");
    };
    let tests = vec![
        Test::at_least("extents", "mkfile/dd extents", mkfile / worst_dd.max(1.0), DD_FACTOR, Shown::Times),
        Test::at_least("extents", "mkfile extents", mkfile, FEWEST_EXTENTS, Shown::Count),
    ];
    let dd_text: Vec<String> = dd.iter().map(|(way, n)| format!("{way} {}", short_number(*n))).collect();
    let noun = if mkfile == 1.0 { "extent" } else { "extents" };
    let mut evidence = format!("mkfile {} {noun}, {}", short_number(mkfile), dd_text.join(", "));
    // What those extents cost a scan (the seed's 13%), against the dd way
    // with the most, on a modelled disk.
    let read = |way| seeds::median(&seeds::with_params(cases, &[("method", way)]), "modelled_read_s");
    let (worst_way, _) = dd.iter().copied().fold(dd[0], |a, b| if b.1 > a.1 { b } else { a });
    let ratio = read("mkfile").zip(read(worst_way)).filter(|(_, dd)| *dd > 0.0).map(|(m, dd)| m / dd);
    if let Some(cost) = seeds::modelled_read(cases, ratio, &format!("{worst_way}'s")) {
        evidence = format!("mkfile's file {cost}: {evidence}");
    }
    Judged::by(tests, false, "extents", mkfile, Some(worst_dd), evidence)
}

/// One case: make `testfile` of `size` bytes by `method`.
struct Create {
    size: u64,
    method: Method,
    /// The zeroed write buffer, made in `prepare` so the measured work
    /// starts with it (as `dd` has its buffer before it copies).
    buf: Option<AlignedBuf>,
    /// Whether the run allocated every block itself: O_DIRECT writes, or
    /// a fallocate the file system did (not glibc's buffered emulation).
    allocated: bool,
}

fn io<'a>(path: &'a Path, what: &'static str) -> impl FnOnce(io::Error) -> Error + 'a {
    move |e| Error::io(path, what, e)
}

/// Sequential `write`s of `block` (the last one shorter if `size` asks),
/// one call per block.
fn write_sequential(file: &mut File, block: &[u8], size: u64) -> io::Result<()> {
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// `pwrite`s of `block` at rising offsets from 0, as xfs_io's `pwrite`
/// command issues them.
fn pwrite_sequential(file: &File, block: &[u8], size: u64) -> io::Result<()> {
    let mut offset = 0;
    while offset < size {
        let n = (size - offset).min(block.len() as u64) as usize;
        file.write_all_at(&block[..n], offset)?;
        offset += n as u64;
    }
    Ok(())
}

impl Create {
    /// Make the file; `Some(how)` for `fallocate`.
    fn make(&self, path: &Path, block: &[u8]) -> Result<Option<Prealloc>> {
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true).mode(0o644);
        if self.method.direct() {
            options.custom_flags(libc::O_DIRECT);
        }
        if self.method == Method::Mkfile {
            options.read(true).mode(0o600);
        }
        let mut file = options.open(path).map_err(io(path, "create"))?;
        let mut how = None;
        match self.method {
            Method::Fallocate => {
                how = Some(prealloc::posix_fallocate(&file, 0, self.size).map_err(io(path, "posix_fallocate"))?);
            }
            Method::Write { .. } | Method::DirectWrite => {
                write_sequential(&mut file, block, self.size).map_err(io(path, "write"))?;
            }
            Method::Mkfile => {
                pwrite_sequential(&file, block, self.size).map_err(io(path, "pwrite"))?;
                file.set_len(self.size).map_err(io(path, "ftruncate"))?;
            }
            Method::TruncateFill => {
                file.set_len(self.size).map_err(io(path, "ftruncate"))?;
                write_sequential(&mut file, block, self.size).map_err(io(path, "write"))?;
            }
        }
        drop(file);
        Ok(how)
    }
}

impl Work for Create {
    fn prepare(&mut self, _dir: &Path, _ledger: &Ledger) -> Result<()> {
        if let Some(block) = self.method.block() {
            let len = usize::try_from(block.min(self.size))
                .map_err(|_| Error::usage("--set size: too large a write buffer for this machine"))?;
            self.buf = Some(AlignedBuf::zeroed(len));
        }
        Ok(())
    }

    fn run(&mut self, dir: &Path, _ledger: &Ledger) -> Result<WorkOutcome> {
        let path = dir.join(FILE_NAME);
        let block = self.buf.as_ref().map_or(&[][..], AlignedBuf::as_slice);
        let started = Instant::now();
        let how = self.make(&path, block)?;
        let create_s = started.elapsed().as_secs_f64();
        self.buf = None;

        let mut outcome = WorkOutcome::default();
        let f = &mut outcome.figures;
        f.set("create_s", create_s, "s", Better::Lower, Kind::Timing);
        // posix_fallocate reserves blocks and writes nothing (unless glibc
        // emulated it with writes): its MiB/s, 16,861 for 256 MiB in 15
        // ms, is a rate of no data.
        let (mbps, why) = match how {
            Some(Prealloc::Native) => (None, "posix_fallocate wrote no data, it reserved blocks: no rate".to_string()),
            _ => crate::units::rate(self.size as f64, create_s),
        };
        f.set_opt("create_mbps", mbps, "MiB/s", Better::Higher, Kind::Timing, &why);
        if let Some(how) = how {
            let emulated = if how == Prealloc::Emulated { 1.0 } else { 0.0 };
            f.put(&FIGURES[2], Some(emulated), "");
        }
        self.allocated = self.method.direct() || how.is_some_and(|how| how != Prealloc::Emulated);
        Ok(outcome)
    }

    fn allocates_itself(&self) -> bool {
        self.allocated
    }

    fn wants_cold_read(&self) -> bool {
        true
    }

    fn cold_read_bytes(&self) -> usize {
        SCAN_BYTES
    }

    fn space_needed(&self) -> u64 {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::params::{Scale, Setting, expand};
    use std::io::Read;

    fn params(size: &str, method: &str) -> Params {
        let sets: Vec<Setting> =
            [format!("size={size}"), format!("method={method}")].iter().map(|s| s.parse().unwrap()).collect();
        expand(&PARAMS, &sets, Scale::Small).unwrap().remove(0)
    }

    fn all_zero(path: &Path) -> bool {
        let mut file = File::open(path).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf).unwrap();
            if n == 0 {
                return true;
            }
            if buf[..n].iter().any(|&b| b != 0) {
                return false;
            }
        }
    }

    #[test]
    fn every_method_leaves_a_file_of_zeros_exactly_size_long() {
        // 1 MiB + 12 KiB: not a multiple of 64 KiB or 256 KiB, so every
        // method's last write is a short one.
        let size = (1 << 20) + 12 * 1024;
        for method in METHODS {
            let dir = tempfile::tempdir().unwrap();
            let p = params(&size.to_string(), method);
            CreateFile.check(&p).unwrap();
            let mut work = CreateFile.work(&p);
            work.prepare(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
            let outcome = match work.run(dir.path(), &crate::ledger::Ledger::for_tests()) {
                Ok(o) => o,
                // A directory on a file system without O_DIRECT.
                Err(e) if Method::parse(method).direct() && e.message.contains("nvalid argument") => continue,
                Err(e) => panic!("{method}: {e}"),
            };
            let path = dir.path().join(FILE_NAME);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), size, "{method}");
            assert!(all_zero(&path), "{method}");
            assert!(outcome.figures.value("create_s").is_some(), "{method}");
            assert_eq!(outcome.figures.get("fallocate_emulated").is_some(), method == "fallocate", "{method}");
            // Buffered writes leave the blocks to writeback; O_DIRECT and a
            // real fallocate place them themselves.
            let real_fallocate = outcome.figures.value("fallocate_emulated") == Some(0.0);
            let allocated = matches!(method, "mkfile" | "odirect-64k") || real_fallocate;
            assert_eq!(work.allocates_itself(), allocated, "{method}");
            assert!(work.wants_cold_read());
            assert_eq!(work.cold_read_bytes(), 64 * 1024);
            assert_eq!(work.space_needed(), size);
        }
    }

    #[test]
    fn buffers_are_the_method_block_or_the_whole_file_if_smaller() {
        let cases = [("write-1g", "3M", 3 << 20), ("write-64k", "3M", 64 << 10), ("mkfile", "8K", 8 << 10)];
        for (method, size, want) in cases {
            let mut work = Create { size: parse(size), method: Method::parse(method), buf: None, allocated: false };
            work.prepare(Path::new("/"), &crate::ledger::Ledger::for_tests()).unwrap();
            assert_eq!(work.buf.as_ref().unwrap().as_slice().len(), want, "{method}");
        }
        let mut work = Create { size: 1 << 20, method: Method::Fallocate, buf: None, allocated: false };
        work.prepare(Path::new("/"), &crate::ledger::Ledger::for_tests()).unwrap();
        assert!(work.buf.is_none());
    }

    #[test]
    fn a_fallocate_that_wrote_no_data_has_no_rate() {
        let dir = crate::test_temp::dir("");
        let mut work = Create { size: 64 << 20, method: Method::Fallocate, buf: None, allocated: false };
        work.prepare(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        let out = work.run(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        let rate = out.figures.get("create_mbps").unwrap();
        if out.figures.value("prealloc_emulated") == Some(0.0) {
            assert_eq!(rate.value, None, "{rate:?}");
            assert!(rate.missing.as_deref().unwrap().contains("wrote no data"), "{rate:?}");
        }
    }

    fn parse(size: &str) -> u64 {
        crate::units::parse_bytes(size).unwrap()
    }

    #[test]
    fn direct_methods_refuse_unaligned_sizes_naming_the_next_multiple() {
        for method in ["mkfile", "odirect-64k"] {
            let e = CreateFile.check(&params("10000", method)).unwrap_err();
            assert!(e.contains("size=10000") && e.contains(method) && e.contains("size=12288"), "{e}");
            CreateFile.check(&params("12288", method)).unwrap();
        }
        for method in ["fallocate", "write-1g", "write-64k", "truncate-fill"] {
            CreateFile.check(&params("10000", method)).unwrap();
        }
    }

    #[test]
    fn every_method_is_in_the_preset_and_the_small_default_is_kept() {
        let preset = CreateFile.preset();
        let listed: Vec<&str> = preset.settings[0].1.split(',').collect();
        assert_eq!(listed, METHODS);
        let p = expand(&PARAMS, &[], Scale::Small).unwrap().remove(0);
        assert_eq!(p.number("size"), 256 << 20);
        assert_eq!(p.word("method"), "write-1g");
        assert_eq!(expand(&PARAMS, &[], Scale::Full).unwrap()[0].number("size"), 32 << 30);
    }

    fn case(fs: &str, method: &str, extents: f64, perfection: f64) -> Case {
        let mut figures = crate::record::Figures::new();
        figures.set("extents", extents, "count", Better::Lower, Kind::Exact);
        figures.set("perfection", perfection, "count", Better::Lower, Kind::Exact);
        let mut params = serde_json::Map::new();
        params.insert("method".into(), method.into());
        Case { figures, ..Case::new("create-file", fs, params, 1) }
    }

    #[test]
    fn the_claim_wants_mkfile_four_times_the_dd_ways_and_ten_extents() {
        let judge = |cases: &[Case]| shows_at(&cases.iter().collect::<Vec<_>>());
        let seed = judge(&[case("xfs", "mkfile", 3979.0, 4.0), case("xfs", "write-1g", 4.0, 4.0)]);
        assert_eq!(seed.shows, Some(true));
        assert_eq!(seed.evidence, "mkfile 3979 extents, write-1g 4");
        assert_eq!((seed.value, seed.against), (Some(3979.0), Some(4.0)));
        // The worse dd way counts: 40 is 4 x 10 (shows), 39 is not.
        let both = |mkfile| judge(&[case("xfs", "mkfile", mkfile, 1.0), case("xfs", "write-1g", 2.0, 1.0), case("xfs", "write-64k", 10.0, 1.0)]);
        assert_eq!(both(40.0).shows, Some(true));
        assert_eq!(both(39.0).shows, Some(false));
        assert_eq!(both(39.0).evidence, "mkfile 39 extents, write-1g 2, write-64k 10");
        // Four times but fewer than ten: a scan does not notice.
        assert_eq!(judge(&[case("xfs", "mkfile", 9.0, 1.0), case("xfs", "write-1g", 1.0, 1.0)]).shows, Some(false));
        // Fresh xfs here: every way one extent.
        let fresh = judge(&[case("xfs", "mkfile", 1.0, 1.0), case("xfs", "write-1g", 1.0, 1.0)]);
        assert_eq!((fresh.shows, fresh.evidence.as_str()), (Some(false), "mkfile 1 extent, write-1g 1"));
        assert_eq!(judge(&[case("ext4", "mkfile", 3.0, 2.0)]).shows, None);
        assert_eq!(judge(&[case("ext4", "write-1g", 3.0, 2.0)]).shows, None);
    }

    #[test]
    fn the_verdict_says_what_mkfiles_extents_cost_a_scan_beside_them() {
        let modelled = |mut c: Case, seconds: f64| {
            c.figures.set("modelled_read_s", seconds, "s", Better::Lower, Kind::Timing);
            c.target.disk = Some("hdd-7200".into());
            c
        };
        let cases = [
            modelled(case("xfs", "mkfile", 74.0, 3.0), 1.19),
            modelled(case("xfs", "write-1g", 3.0, 3.0), 1.0),
            modelled(case("xfs", "write-64k", 2.0, 3.0), 0.5),
        ];
        let judged = shows_at(&cases.iter().collect::<Vec<_>>());
        assert_eq!(judged.evidence, "mkfile's file reads 19% slower on hdd-7200 (modelled) than write-1g's: mkfile 74 extents, write-1g 3, write-64k 2");
        // The deciding value stays beside its threshold.
        assert_eq!(judged.deciding().unwrap().0.describe(), "mkfile/dd extents 24.7× (shows at ≥ 4×)");
    }

    #[test]
    fn the_verdict_is_judged_on_every_file_system() {
        let cases =
            [case("xfs", "mkfile", 1.0, 1.0), case("xfs", "write-1g", 1.0, 1.0), case("ext4", "mkfile", 300.0, 9.0), case("ext4", "write-64k", 9.0, 9.0)];
        let v = CreateFile.verdict(&cases.iter().collect::<Vec<_>>());
        assert_eq!(v.shows, Some(true));
        assert_eq!(v.evidence, "seed 003 shows on ext4 (mkfile 300 extents, write-64k 9); gone on xfs");
    }
}
