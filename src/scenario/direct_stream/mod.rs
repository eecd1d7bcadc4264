//! `direct-stream` (seed 004): a dd-like loop reading 512 KiB from
//! /dev/zero and writing it with O_DIRECT, whose throughput on one ext3
//! file system fell after about 15 s (some 750 MB) from 50 MB/s at ~10%
//! system CPU to 20 MB/s at 100% of a CPU, and never came back — while
//! another ext3 file system and xfs kept streaming.
//!
//! The loop is the seed's: one aligned buffer, /dev/zero opened once, a
//! read and an O_DIRECT write of `bs` per turn, stopping at a time or a
//! byte limit, whichever comes first. `file=new` creates (truncating) and
//! appends, as the seed did; `file=overwrite` first lays the file down
//! unmeasured and then writes over it in place, so no block is allocated
//! in the measured run.
//!
//! The design decision: the drop is judged on the harness's vmstat-like
//! timeline (the device's write rate, what the seed's author read in
//! vmstat's `bo`), while the loop keeps its own cheap per-second marks of
//! bytes and the thread's system CPU. Those give the process's own system
//! CPU before and after a drop — the seed's "10% vs 100% of a single CPU"
//! — which the system-wide share cannot: on a shared machine it counts
//! everyone's work.

mod drop;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::params::{ParamKind, ParamSpec, Params};
use super::seeds::{self, Judged, Preset, Shown, Test, Verdict};
use super::{Case, Scenario, Seeded, Work, WorkOutcome};
use crate::error::{Error, Result};
use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::ledger::Ledger;
use crate::probe::timeline::TimelinePoint;
use crate::sys::aligned::{ALIGN, AlignedBuf};
use crate::sys::rusage::{self, Who};
use crate::units::bytes_short;

use drop::{Finding, Interval, RULE};

const FILE_MODES: [&str; 2] = ["new", "overwrite"];

const PARAMS: [ParamSpec; 4] = [
    ParamSpec {
        name: "bs",
        kind: ParamKind::Size,
        small: "512K",
        full: "512K",
        seed: "512 KiB",
        about: "bytes per read and per O_DIRECT write; a multiple of 4096",
    },
    ParamSpec {
        name: "seconds",
        kind: ParamKind::Count { max: 86_400 },
        small: "8",
        full: "60",
        seed: "over 30 (vmstat shows 32 s; the drop came at ~15 s)",
        about: "time limit of the stream",
    },
    ParamSpec {
        name: "bytes",
        kind: ParamKind::Size,
        small: "12G",
        full: "16G",
        seed: "no limit (the drop came after ~750 MB)",
        about: "byte limit of the stream, in whole bs blocks; it stops at whichever limit comes first",
    },
    ParamSpec {
        name: "file",
        kind: ParamKind::Choice(&FILE_MODES),
        small: "new",
        full: "new",
        seed: "new",
        about: "new: create, truncate and append; overwrite: write over a file laid down beforehand (unmeasured)",
    },
];

/// The largest block: one buffer of it is held in memory, and Linux
/// writes at most 2 GiB - 4 KiB in one call.
const MAX_BS: u64 = 1 << 30;

/// The stream's file, in the target's work directory.
const FILE_NAME: &str = "stream";

/// The scenario.
#[derive(Debug)]
pub struct DirectStream;

/// The figures it measures beyond the probes', declared once.
const FIGURES: &[FigureSpec] = &[
    // Exact when the byte limit stopped the loop; when the time limit did,
    // how far it got is a timing, and the case says so.
    FigureSpec::new("bytes_written", "bytes", Better::Higher, Kind::Exact)
        .about("bytes the loop wrote"),
    FigureSpec::new("stream_mbps", "MiB/s", Better::Higher, Kind::Timing).heading("MiB/s")
        .about("bytes written / loop seconds, in MiB (2^20 bytes) a second"),
    // Exact on ext4 and xfs; on btrfs the same O_DIRECT lay-down left 20,
    // 45 and 61 extents beside other writers, and the work does not know
    // the file system it writes on: a timing.
    FigureSpec::new("prepared_extents", "count", Better::Lower, Kind::Timing)
        .about("overwrite: extents of the file laid down before the run"),
    FigureSpec::new("drop_detected", "count", Better::Lower, Kind::Timing)
        .about("1 if the device write rate fell over 40% below its median before and stayed there to the end (one interval excepted), else 0"),
    FigureSpec::new("drop_at_s", "s", Better::Higher, Kind::Timing)
        .about("seconds into the run where the drop began"),
    FigureSpec::new("drop_depth", "ratio", Better::Higher, Kind::Timing)
        .about("median write rate after the drop over the median before"),
    FigureSpec::new("mbps_before", "MiB/s", Better::Higher, Kind::Timing)
        .about("median device write rate before the drop, MiB/s"),
    FigureSpec::new("mbps_after", "MiB/s", Better::Higher, Kind::Timing)
        .about("median device write rate from the drop to the end, MiB/s"),
    FigureSpec::new("sys_pct_before", "%", Better::Lower, Kind::Timing)
        .about("system-wide system CPU before the drop, % of all CPUs"),
    FigureSpec::new("sys_pct_after", "%", Better::Lower, Kind::Timing)
        .about("system-wide system CPU after the drop, % of all CPUs"),
    FigureSpec::new("iowait_pct_before", "%", Better::Lower, Kind::Timing)
        .about("system-wide iowait before the drop, % of all CPUs"),
    FigureSpec::new("iowait_pct_after", "%", Better::Lower, Kind::Timing)
        .about("system-wide iowait after the drop, % of all CPUs"),
    FigureSpec::new("proc_sys_pct", "%", Better::Lower, Kind::Timing).heading("loop sys %")
        .about("the loop's own system CPU over the whole stream, % of one CPU"),
    FigureSpec::new("proc_sys_pct_before", "%", Better::Lower, Kind::Timing)
        .about("the loop's own system CPU before the drop, % of one CPU"),
    FigureSpec::new("proc_sys_pct_after", "%", Better::Lower, Kind::Timing)
        .about("the loop's own system CPU after the drop, % of one CPU"),
];

impl Scenario for DirectStream {
    fn name(&self) -> &'static str {
        "direct-stream"
    }
    fn about(&self) -> &'static str {
        "stream O_DIRECT writes of 512 KiB from /dev/zero; does throughput drop and stay down?"
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
        &["stream_mbps", "bytes_written", "sys_s", "proc_sys_pct", "drop_detected", "drop_at_s", "drop_depth", "proc_sys_pct_after"]
    }
    /// O_DIRECT needs whole 4 KiB blocks, and a limit below one block
    /// would write nothing.
    fn check(&self, params: &Params) -> std::result::Result<(), String> {
        let bs = params.number("bs");
        if bs % ALIGN as u64 != 0 {
            let below = bs / ALIGN as u64 * ALIGN as u64;
            let above = below + ALIGN as u64;
            let choices = if below == 0 {
                bytes_short(above)
            } else {
                format!("{} or {}", bytes_short(below), bytes_short(above))
            };
            return Err(format!(
                "bs={bs} ({}) is not a multiple of 4096, which O_DIRECT needs: give bs={choices}",
                bytes_short(bs)
            ));
        }
        if bs > MAX_BS {
            return Err(format!("bs={} is over the 1 GiB the loop holds in one buffer: give bs=1G or less", bytes_short(bs)));
        }
        let bytes = params.number("bytes");
        if bytes < bs {
            return Err(format!(
                "bytes={} is less than one bs block ({}): give bytes={} or more",
                bytes_short(bytes),
                bytes_short(bs),
                bytes_short(bs)
            ));
        }
        Ok(())
    }
    fn work(&self, params: &Params) -> Box<dyn Work> {
        let bs = params.number("bs");
        Box::new(Stream {
            bs: bs as usize,
            blocks: params.number("bytes") / bs,
            seconds: params.number("seconds"),
            overwrite: params.word("file") == "overwrite",
            prepared_extents: None,
            limited_by_time: false,
            marks: Vec::new(),
        })
    }
}

impl Seeded for DirectStream {
    fn seed(&self) -> &'static str {
        "004"
    }
    /// vmstat's write rate and the loop's system CPU (the seed's "10% of a
    /// single CPU" to 100%), over the stream and before and after a drop.
    fn printed(&self) -> &'static [&'static str] {
        &["stream_mbps", "proc_sys_pct", "mbps_before", "mbps_after", "proc_sys_pct_before", "proc_sys_pct_after"]
    }
    fn reported(&self) -> &'static str {
        "ext3: a sustained drop after about 15 s, 50 to 20 MB/s, system CPU 10% to 100% of a CPU; xfs kept streaming"
    }
    /// Sized by time, as the seed's stream was: 20 s (its drop came at
    /// about 15 s, and the detector needs 7 whole intervals), on a file
    /// whose byte limit ([`Seeded::preset_sized`]) is what the scratch disk
    /// can hold. A fixed 8 GiB ended in 4.5 s on a fast disk, too short to
    /// judge.
    fn preset(&self) -> Preset {
        // "a megaraid hardware raid-5 on 5x15000RPM scsi 320 disks", 2004:
        // one disk of its array.
        let disk = Some("scsi-15k-2004");
        Preset { settings: &[("file", "new"), ("seconds", "20")], variants: &[], conditions: &[], disk }
    }
    /// The byte limit: 40% of what the scratch disk has free (its image is
    /// sized for it and must fit), at most [`PRESET_MAX_BYTES`], in whole
    /// GiB, at least 1 GiB.
    fn preset_sized(&self, free_bytes: u64) -> Vec<(&'static str, String)> {
        let bytes = (free_bytes / 10 * 4).min(PRESET_MAX_BYTES) >> 30;
        vec![("bytes", format!("{}G", bytes.max(1)))]
    }
    /// Judged on every place by [`shows_at`], with each place's system CPU
    /// per GiB written beside the run's least as evidence.
    fn verdict(&self, cases: &[&Case]) -> Verdict {
        let least = least_sys_per_gib(cases);
        seeds::judge_places(self.name(), self.seed(), CLAIM, cases, |place| {
            let mut judged = shows_at(place);
            judged.also.extend(sys_beside_least(place, least.as_ref()));
            judged
        })
    }
}

/// The loop, its limits, and what it saw.
struct Stream {
    bs: usize,
    /// The byte limit in whole blocks.
    blocks: u64,
    seconds: u64,
    overwrite: bool,
    prepared_extents: Option<u64>,
    /// Whether the last run ended at its time limit, short of its bytes.
    limited_by_time: bool,
    /// Bytes written and the thread's system seconds, at the start, at
    /// every whole second, and at the end.
    marks: Vec<Mark>,
}

/// Where the loop was at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mark {
    t_s: f64,
    bytes: u64,
    sys_s: f64,
}

/// A read or write that moved fewer bytes than asked: the loop cannot
/// go on in whole blocks, so it is an error naming the file.
fn short(path: &Path, what: &str, done: usize, wanted: usize, offset: u64) -> Error {
    Error::failed(format!("{}: short {what}: {done} of {wanted} bytes at offset {offset}", path.display()))
}

/// This thread's system CPU seconds so far (NaN if getrusage failed,
/// which makes the spans using it missing rather than wrong).
fn thread_sys_s() -> f64 {
    rusage::cpu_times(Who::Thread).map(|t| t.sys_s).unwrap_or(f64::NAN)
}

impl Stream {
    fn path(dir: &Path) -> PathBuf {
        dir.join(FILE_NAME)
    }

    /// The seed's loop: read `bs` from /dev/zero into one aligned buffer,
    /// write it O_DIRECT to `out`, until `blocks` are written or
    /// `seconds` have passed (when given). Between the two syscalls only
    /// the clock is read; everything else happens once a second.
    fn stream(&mut self, out: &mut File, path: &Path, seconds: Option<u64>, keep_marks: bool) -> Result<u64> {
        let zero_path = Path::new("/dev/zero");
        let mut zero = File::open(zero_path).map_err(|e| Error::io(zero_path, "open", e))?;
        let mut buf = AlignedBuf::zeroed(self.bs);
        let start = Instant::now();
        if keep_marks {
            // A mark a second, and room enough that pushing never allocates
            // in the loop of a run of usual length.
            self.marks = Vec::with_capacity(self.seconds.min(4096) as usize + 2);
            self.marks.push(Mark { t_s: 0.0, bytes: 0, sys_s: thread_sys_s() });
        }
        let mut next_tick = start + Duration::from_secs(1);
        let mut ticks = 0u64;
        let mut written = 0u64;
        for _ in 0..self.blocks {
            let n = zero.read(buf.as_mut_slice()).map_err(|e| Error::io(zero_path, "read", e))?;
            if n != self.bs {
                return Err(short(zero_path, "read", n, self.bs, written));
            }
            let n = out.write(buf.as_slice()).map_err(|e| Error::io(path, "write", e))?;
            if n != self.bs {
                return Err(short(path, "write", n, self.bs, written));
            }
            written += self.bs as u64;
            let now = Instant::now();
            if now >= next_tick {
                crate::interrupt::check()?;
                while next_tick <= now {
                    next_tick += Duration::from_secs(1);
                    ticks += 1;
                }
                if keep_marks {
                    let t_s = now.duration_since(start).as_secs_f64();
                    self.marks.push(Mark { t_s, bytes: written, sys_s: thread_sys_s() });
                }
                if seconds.is_some_and(|s| ticks >= s) {
                    break;
                }
            }
        }
        if keep_marks {
            let t_s = start.elapsed().as_secs_f64();
            if self.marks.last().is_none_or(|m| m.bytes != written) {
                self.marks.push(Mark { t_s, bytes: written, sys_s: thread_sys_s() });
            }
        }
        Ok(written)
    }

    /// The loop's own system CPU over `[from_s, to_s]`, % of one CPU, from
    /// the marks nearest inside those bounds (give or take a tenth of a
    /// second: the timeline's clock starts a moment before the loop's).
    fn proc_sys_pct(&self, from_s: f64, to_s: f64) -> Option<f64> {
        let first = self.marks.iter().find(|m| m.t_s >= from_s - 0.1)?;
        let last = self.marks.iter().rev().find(|m| m.t_s <= to_s + 0.1)?;
        let span = last.t_s - first.t_s;
        let pct = 100.0 * (last.sys_s - first.sys_s) / span;
        (span >= 0.5 && pct.is_finite()).then_some(pct)
    }
}

impl Work for Stream {
    /// `file=overwrite`: lay the whole file down with the same loop, make
    /// it durable, and count its extents.
    fn prepare(&mut self, dir: &Path, _ledger: &Ledger) -> Result<()> {
        if !self.overwrite {
            return Ok(());
        }
        let path = Self::path(dir);
        let mut out = open(&path, true)?;
        self.stream(&mut out, &path, None, false)?;
        out.sync_all().map_err(|e| Error::io(&path, "fsync", e))?;
        drop(out);
        self.prepared_extents = Some(extents_under(dir)?);
        Ok(())
    }

    fn run(&mut self, dir: &Path, _ledger: &Ledger) -> Result<WorkOutcome> {
        let path = Self::path(dir);
        let mut out = open(&path, !self.overwrite)?;
        let started = Instant::now();
        let written = self.stream(&mut out, &path, Some(self.seconds), true)?;
        let loop_s = started.elapsed().as_secs_f64();
        drop(out);
        let mut outcome = WorkOutcome::default();
        let f = &mut outcome.figures;
        let limited_by_time = written < self.blocks.saturating_mul(self.bs as u64);
        self.limited_by_time = limited_by_time;
        let written_kind = if limited_by_time { Kind::Timing } else { Kind::Exact };
        f.put(&FIGURES[0].with_kind(written_kind), Some(written as f64), "");
        let (rate, why) = crate::units::rate(written as f64, loop_s);
        f.put(&FIGURES[1], rate, &why);
        let sys = self.proc_sys_pct(0.0, f64::INFINITY);
        f.set_opt("proc_sys_pct", sys, "%", Better::Lower, Kind::Timing, "the stream ran under half a second");
        if self.overwrite {
            f.put(&FIGURES[2], self.prepared_extents.map(|n| n as f64), "not mapped");
        }
        Ok(outcome)
    }

    /// O_DIRECT writes allocate as they go (and overwrite within a file
    /// laid down the same way).
    fn allocates_itself(&self) -> bool {
        true
    }

    /// A stream its time limit ended wrote what the disk managed by then.
    fn amount_timed(&self) -> bool {
        self.limited_by_time
    }

    /// A fortieth of its time limit, between 0.1 s and 1 s: the preset's
    /// 20 s stream samples every 0.5 s, so one its byte limit ends in 5 s
    /// (6 GiB at 1 GiB/s onto a loop device's page cache) still has the
    /// 8 intervals the rule needs.
    fn timeline_interval(&self) -> Option<std::time::Duration> {
        (self.seconds > 0).then(|| std::time::Duration::from_secs_f64((self.seconds as f64 / 40.0).clamp(0.1, 1.0)))
    }

    /// Its `seconds`: the stream ends then, or sooner at its byte limit.
    fn time_limit(&self) -> Option<std::time::Duration> {
        (self.seconds > 0).then(|| std::time::Duration::from_secs(self.seconds))
    }

    fn space_needed(&self) -> u64 {
        // Overwrite writes within the file it laid down: no more room.
        self.blocks * self.bs as u64
    }

    fn review(&mut self, timeline: &[TimelinePoint], figures: &mut Figures) {
        add_drop_figures(timeline, figures, |from, to| self.proc_sys_pct(from, to));
    }
}

/// The stream's file, O_DIRECT and write-only; `create` makes (or
/// truncates) it, otherwise it must be there and is written from its
/// first byte.
fn open(path: &Path, create: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).custom_flags(libc::O_DIRECT).mode(0o644);
    if create {
        options.create(true).truncate(true);
    }
    options.open(path).map_err(|e| Error::io(path, "open O_DIRECT", e))
}

/// Extents of everything under `dir`, counted as the harness's `extents`
/// figure counts them.
fn extents_under(dir: &Path) -> Result<u64> {
    let options = crate::layout::tree::TreeOptions { threads: 1, top: 0, largest: 0, cross_mounts: false, disk: None };
    let report = crate::layout::tree::scan(&[dir.to_path_buf()], &options)
        .map_err(|e| Error::io(dir, "map the laid-down file", e))?;
    Ok(report.summary.extents)
}

/// The drop figures, from the timeline's device write rate and CPU shares,
/// and `proc_sys` (the loop's own system CPU over a span of seconds).
fn add_drop_figures(timeline: &[TimelinePoint], figures: &mut Figures, proc_sys: impl Fn(f64, f64) -> Option<f64>) {
    let (finding, series) = match drop::intervals(timeline) {
        Some(series) => (drop::detect(&series.iter().map(|i| i.mbps).collect::<Vec<_>>(), &RULE), series),
        None => {
            set_all_missing(figures, "no device write rate in the timeline", true);
            return;
        }
    };
    let d = match finding {
        Finding::TooShort { intervals, needed } => {
            let why = format!(
                "{intervals} whole timeline intervals, and the rule needs {needed}: run longer (seconds, bytes) or sample more often (--interval)"
            );
            set_all_missing(figures, &why, true);
            return;
        }
        // Drawn from the throughput series, so a timing figure: a fast
        // run may be too short to judge where a slower one is not.
        Finding::NoDrop => {
            figures.set("drop_detected", 0.0, "count", Better::Lower, Kind::Timing);
            set_all_missing(figures, "no sustained drop", false);
            return;
        }
        Finding::Drop(d) => d,
    };
    let (before, after): (&[Interval], &[Interval]) = series.split_at(d.index);
    let at_s = after[0].start_s;
    let end_s = after[after.len() - 1].end_s;
    figures.set("drop_detected", 1.0, "count", Better::Lower, Kind::Timing);
    figures.set("drop_at_s", at_s, "s", Better::Higher, Kind::Timing);
    figures.set("drop_depth", d.depth(), "ratio", Better::Higher, Kind::Timing);
    figures.set("mbps_before", d.before, "MiB/s", Better::Higher, Kind::Timing);
    figures.set("mbps_after", d.after, "MiB/s", Better::Higher, Kind::Timing);
    let pct = |f: &mut Figures, name: &str, v: Option<f64>| {
        f.set_opt(name, v, "%", Better::Lower, Kind::Timing, "no CPU split for that span");
    };
    pct(figures, "sys_pct_before", drop::mean_over(before, |i| i.sys_pct));
    pct(figures, "sys_pct_after", drop::mean_over(after, |i| i.sys_pct));
    pct(figures, "iowait_pct_before", drop::mean_over(before, |i| i.iowait_pct));
    pct(figures, "iowait_pct_after", drop::mean_over(after, |i| i.iowait_pct));
    pct(figures, "proc_sys_pct_before", proc_sys(0.0, at_s));
    pct(figures, "proc_sys_pct_after", proc_sys(at_s, end_s));
}

/// The figures that describe a drop, missing for `why`; `drop_detected`
/// too when `undecided`.
fn set_all_missing(figures: &mut Figures, why: &str, undecided: bool) {
    if undecided {
        figures.set_missing("drop_detected", "count", Better::Lower, Kind::Timing, why);
    }
    for (name, unit, better) in [
        ("drop_at_s", "s", Better::Higher),
        ("drop_depth", "ratio", Better::Higher),
        ("mbps_before", "MiB/s", Better::Higher),
        ("mbps_after", "MiB/s", Better::Higher),
        ("sys_pct_before", "%", Better::Lower),
        ("sys_pct_after", "%", Better::Lower),
        ("iowait_pct_before", "%", Better::Lower),
        ("iowait_pct_after", "%", Better::Lower),
        ("proc_sys_pct_before", "%", Better::Lower),
        ("proc_sys_pct_after", "%", Better::Lower),
    ] {
        figures.set_missing(name, unit, better, Kind::Timing, why);
    }
}

/// The most the preset's stream writes: 20 s at 2.4 GiB/s, past any disk
/// here (xfs streamed 1.2 to 1.8 GiB/s).
const PRESET_MAX_BYTES: u64 = 48 << 30;

/// The loop's own system CPU must rise by at least this factor across a
/// drop for it to be the seed's (10% to 100% of a CPU): writing less and
/// burning more.
const SYS_RISE: f64 = 1.25;

/// What seed 004 reported, kept as one line of the verdict's evidence.
const CLAIM: &str = "ext3: a new file's 512 KiB O_DIRECT stream fell after about 15 s from 50 MB/s at 10% \
                     system CPU to 20 MB/s at 100% of a CPU and never came back; xfs kept streaming";

/// The seed's claim on one place's `file=new` cases: a sustained drop
/// (the detector's rule: a fall of over 40% below the median before,
/// lasting to the end, one interval excepted) in most repeats, with the
/// loop's own system CPU rising by [`SYS_RISE`] across it — writing less
/// while burning more. A drop with flat CPU is the device slowing, not
/// the seed's allocator.
fn shows_at(cases: &[&Case]) -> Judged {
    let new = seeds::with_params(cases, &[("file", "new")]);
    let Some(drop) = seeds::median(&new, "drop_detected") else {
        let reason = new.iter().find_map(|c| c.figures.get("drop_detected").and_then(|f| f.missing.clone()));
        return Judged::unknown("drop_detected", reason.unwrap_or_else(|| "no successful file=new case".into()));
    };
    let mbps = seeds::median(&new, "stream_mbps").map_or("?".into(), |v| format!("{v:.0}"));
    let mut tests = vec![Test::at_least("drop_detected", "repeats with a sustained drop", drop, 0.5, Shown::Share)];
    if drop < 0.5 {
        return Judged::by(tests, false, "drop_detected", drop, None, format!("no sustained drop, {mbps} MiB/s"));
    }
    let fig = |n: &str| seeds::median(&new, n).map_or("?".into(), |v| format!("{v:.2}"));
    let (before, after) = (seeds::median(&new, "proc_sys_pct_before"), seeds::median(&new, "proc_sys_pct_after"));
    let rise = match (before, after) {
        (Some(b), Some(a)) if b > 0.0 => a / b,
        (Some(_), Some(a)) if a > 0.0 => f64::INFINITY,
        _ => 1.0,
    };
    tests.push(Test::at_least("proc_sys_pct_after", "the loop's system CPU after/before", rise, SYS_RISE, Shown::Times));
    let evidence = format!(
        "a drop at {} s, depth {}, the loop's system CPU {} -> {} %",
        fig("drop_at_s"),
        fig("drop_depth"),
        fig("proc_sys_pct_before"),
        fig("proc_sys_pct_after"),
    );
    Judged::by(tests, false, "drop_detected", drop, None, evidence)
}

/// A place's system CPU per GiB written (medians over its `file=new`
/// cases), and what it wrote.
fn sys_per_gib(cases: &[&Case]) -> Option<(f64, f64)> {
    let new = seeds::with_params(cases, &[("file", "new")]);
    let (sys, bytes) = (seeds::median(&new, "sys_s")?, seeds::median(&new, "bytes_written")?);
    (bytes > 0.0).then(|| (sys / (bytes / GIB), bytes))
}

const GIB: f64 = (1u64 << 30) as f64;

/// The run's least system CPU per GiB, and its place.
fn least_sys_per_gib(cases: &[&Case]) -> Option<(String, f64)> {
    seeds::places(cases)
        .into_iter()
        .filter_map(|place| Some((place.label.clone(), sys_per_gib(&place.cases)?.0)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The seed's mechanism, said whatever the rule found: a place whose
/// direct writes cost twice the system CPU per GiB of the run's cheapest
/// is writing less for more, as the seed's ext3 was.
fn sys_beside_least(place: &[&Case], least: Option<&(String, f64)>) -> Option<String> {
    let (per_gib, bytes) = sys_per_gib(place)?;
    let (label, best) = least?;
    (*best > 0.0 && per_gib >= 2.0 * best).then(|| {
        format!(
            "system CPU {:.2} s per GiB over {}, {:.1}× {label}'s {:.2} s",
            per_gib,
            bytes_short(bytes as u64),
            per_gib / best,
            best
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::params::{Scale, Setting, expand};

    fn params(sets: &[&str]) -> Params {
        let sets: Vec<Setting> = sets.iter().map(|s| s.parse().unwrap()).collect();
        expand(&PARAMS, &sets, Scale::Small).unwrap().remove(0)
    }

    #[test]
    fn check_refuses_blocks_o_direct_cannot_write_and_names_the_nearest() {
        let s = DirectStream;
        assert_eq!(s.check(&params(&[])), Ok(()));
        let e = s.check(&params(&["bs=6K"])).unwrap_err();
        assert!(e.contains("bs=6144") && e.contains("bs=4 KiB or 8 KiB"), "{e}");
        let e = s.check(&params(&["bs=1000"])).unwrap_err();
        assert!(e.contains("bs=1000") && e.contains("give bs=4 KiB"), "{e}");
        let e = s.check(&params(&["bs=2G"])).unwrap_err();
        assert!(e.contains("bs=2 GiB") && e.contains("1G or less"), "{e}");
        let e = s.check(&params(&["bs=1M", "bytes=512K"])).unwrap_err();
        assert!(e.contains("bytes=512 KiB") && e.contains("bytes=1 MiB or more"), "{e}");
    }

    fn stream(bs: usize, blocks: u64, seconds: u64, overwrite: bool) -> Stream {
        Stream { bs, blocks, seconds, overwrite, prepared_extents: None, limited_by_time: false, marks: Vec::new() }
    }

    #[test]
    fn the_byte_limit_writes_whole_blocks_and_overwrite_keeps_the_file() {
        let dir = crate::test_temp::dir("");
        let bytes = 10 * 64 * 1024 + 5000;
        let s = DirectStream;
        let p = params(&["bs=64K", &format!("bytes={bytes}"), "seconds=60"]);
        let mut work = s.work(&p);
        assert_eq!(work.space_needed(), 10 * 64 * 1024);
        work.prepare(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        let out = work.run(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        assert_eq!(out.figures.value("bytes_written"), Some(655_360.0));
        assert_eq!(out.figures.get("bytes_written").unwrap().kind, Kind::Exact, "the byte limit decided it");
        assert!(!work.amount_timed(), "the byte limit decided how much it wrote");
        // 640 KiB may go in under 1 ms: then no rate, and why.
        let rate = out.figures.get("stream_mbps").unwrap();
        assert!(rate.value.is_some_and(|v| v > 0.0) || rate.missing.as_deref().unwrap().contains("under the 1 ms"), "{rate:?}");
        assert_eq!(out.figures.get("prepared_extents"), None);
        let path = dir.path().join(FILE_NAME);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 655_360);

        // Overwrite over a longer file: it keeps its length.
        let mut over = stream(64 * 1024, 4, 60, true);
        over.prepare(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * 65_536);
        std::fs::write(&path, vec![7u8; 8 * 65_536]).unwrap();
        let out = over.run(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        assert_eq!(out.figures.value("bytes_written"), Some(4.0 * 65_536.0));
        assert!(out.figures.value("prepared_extents").is_some());
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 8 * 65_536);
        assert!(data[..4 * 65_536].iter().all(|&b| b == 0) && data[4 * 65_536..].iter().all(|&b| b == 7));
    }

    #[test]
    fn the_time_limit_stops_the_loop_and_marks_come_every_second() {
        let dir = crate::test_temp::dir("");
        let mut work = stream(4096, u64::MAX, 1, false);
        let started = Instant::now();
        let out = work.run(dir.path(), &crate::ledger::Ledger::for_tests()).unwrap();
        let took = started.elapsed().as_secs_f64();
        assert!((1.0..3.0).contains(&took), "{took}");
        let written = out.figures.value("bytes_written").unwrap();
        assert!(written > 0.0 && written % 4096.0 == 0.0, "{written}");
        assert_eq!(out.figures.get("bytes_written").unwrap().kind, Kind::Timing, "the clock decided it");
        assert!(work.amount_timed(), "the clock decided how much it wrote, so its layout is a timing");
        // Start, the one-second tick (where it stopped).
        assert_eq!(work.marks.len(), 2, "{:?}", work.marks);
        assert_eq!(work.marks[1].bytes as f64, written);
        assert!(work.marks[1].t_s >= 1.0);
        assert!(work.proc_sys_pct(0.0, 1.0).is_some_and(|p| (0.0..=101.0).contains(&p)));
    }

    fn point(t_s: f64, mbps: f64, sys: f64) -> TimelinePoint {
        TimelinePoint {
            t_s,
            read_bytes_per_s: Some(0.0),
            write_bytes_per_s: Some(mbps * crate::units::MIB),
            user_pct: 0.0,
            system_pct: sys,
            iowait_pct: 40.0,
            idle_pct: 50.0,
            dirty_bytes: 0,
            writeback_bytes: 0,
            ..Default::default()
        }
    }

    #[test]
    fn review_reports_a_drop_and_its_cpu_or_says_why_not() {
        let timeline: Vec<TimelinePoint> = (1..=10)
            .map(|t| if t <= 4 { point(t as f64, 50.0, 5.0) } else { point(t as f64, 20.0, 45.0) })
            .collect();
        let mut f = Figures::new();
        add_drop_figures(&timeline, &mut f, |from, _| Some(if from < 1.0 { 10.0 } else { 100.0 }));
        assert_eq!(f.value("drop_detected"), Some(1.0));
        assert_eq!(f.value("drop_at_s"), Some(4.0));
        assert_eq!(f.value("drop_depth"), Some(0.4));
        assert_eq!((f.value("mbps_before"), f.value("mbps_after")), (Some(50.0), Some(20.0)));
        assert_eq!((f.value("sys_pct_before"), f.value("sys_pct_after")), (Some(5.0), Some(45.0)));
        assert_eq!(f.value("iowait_pct_after"), Some(40.0));
        assert_eq!((f.value("proc_sys_pct_before"), f.value("proc_sys_pct_after")), (Some(10.0), Some(100.0)));

        let flat: Vec<TimelinePoint> = (1..=10).map(|t| point(t as f64, 50.0, 5.0)).collect();
        let mut f = Figures::new();
        add_drop_figures(&flat, &mut f, |_, _| None);
        assert_eq!(f.value("drop_detected"), Some(0.0));
        assert_eq!(f.get("drop_depth").unwrap().missing.as_deref(), Some("no sustained drop"));

        let mut f = Figures::new();
        add_drop_figures(&flat[..3], &mut f, |_, _| None);
        assert_eq!(f.value("drop_detected"), None);
        assert!(f.get("drop_detected").unwrap().missing.as_ref().unwrap().contains("3 whole timeline intervals"));
    }

    #[test]
    fn marks_give_the_loops_own_system_cpu_over_a_span() {
        let mut w = stream(4096, 1, 1, false);
        w.marks = vec![
            Mark { t_s: 0.0, bytes: 0, sys_s: 0.0 },
            Mark { t_s: 1.0, bytes: 1, sys_s: 0.1 },
            Mark { t_s: 2.0, bytes: 2, sys_s: 0.2 },
            Mark { t_s: 3.0, bytes: 3, sys_s: 1.2 },
            Mark { t_s: 3.5, bytes: 4, sys_s: 1.7 },
        ];
        assert!((w.proc_sys_pct(0.0, 2.01).unwrap() - 10.0).abs() < 1e-9);
        assert!((w.proc_sys_pct(2.0, 3.5).unwrap() - 100.0).abs() < 1e-9);
        assert_eq!(w.proc_sys_pct(3.4, 3.5), None, "too short a span");
    }

    fn case(fs: &str, drop: Option<f64>, sys: (f64, f64)) -> Case {
        let mut figures = Figures::new();
        match drop {
            Some(d) => figures.set("drop_detected", d, "count", Better::Lower, Kind::Exact),
            None => figures.set_missing("drop_detected", "count", Better::Lower, Kind::Exact, "too short"),
        }
        figures.set("stream_mbps", 400.0, "MiB/s", Better::Higher, Kind::Timing);
        if drop == Some(1.0) {
            figures.set("proc_sys_pct_before", sys.0, "%", Better::Lower, Kind::Timing);
            figures.set("proc_sys_pct_after", sys.1, "%", Better::Lower, Kind::Timing);
        }
        let mut params = serde_json::Map::new();
        params.insert("file".into(), "new".into());
        Case { figures, ..Case::new("direct-stream", fs, params, 1) }
    }

    fn verdict_of(cases: &[Case]) -> Verdict {
        let refs: Vec<&Case> = cases.iter().collect();
        DirectStream.verdict(&refs)
    }

    #[test]
    fn the_claim_wants_a_drop_with_the_loops_cpu_rising_anywhere() {
        let v = verdict_of(&[case("ext3", Some(1.0), (10.0, 95.0)), case("xfs", Some(0.0), (0.0, 0.0))]);
        assert_eq!(v.shows, Some(true), "{}", v.evidence);
        assert_eq!(
            v.evidence,
            "seed 004 shows on ext3 (a drop at ? s, depth ?, the loop's system CPU 10.00 -> 95.00 %); gone on xfs"
        );
        assert_eq!(v.places[1].evidence, "no sustained drop, 400 MiB/s");
        // 1.25 x the CPU before is rising; less is not.
        assert_eq!(verdict_of(&[case("ext3", Some(1.0), (10.0, 12.5))]).shows, Some(true));
        let flat = verdict_of(&[case("ext3", Some(1.0), (10.0, 12.4)), case("xfs", Some(0.0), (0.0, 0.0))]);
        assert_eq!(flat.shows, Some(false));
        // 12.4 against 12.5 is within the margin: marginal, said with its rule.
        assert_eq!(flat.places[0].word(), "marginal");
        let rule = flat.places[0].rule.as_ref().unwrap();
        assert_eq!(rule.shown, "the loop's system CPU after/before 1.24× (shows at ≥ 1.25×)");
        let firm = verdict_of(&[case("ext3", Some(1.0), (10.0, 10.0))]);
        assert_eq!((firm.shows, firm.places[0].word()), (Some(false), "gone"));
        // Any file system may show it: xfs dropping too is a second place.
        let both = verdict_of(&[case("ext3", Some(1.0), (10.0, 95.0)), case("xfs", Some(1.0), (10.0, 95.0))]);
        assert_eq!(both.places.iter().filter(|p| p.shows == Some(true)).count(), 2);
        let v = verdict_of(&[case("ext3", None, (0.0, 0.0)), case("xfs", Some(0.0), (0.0, 0.0))]);
        assert_eq!(v.shows, Some(false));
        assert_eq!(v.evidence, "seed 004 gone on xfs; not judged on ext3 (too short)");
        assert_eq!(verdict_of(&[case("ext3", None, (0.0, 0.0))]).shows, None);
        assert_eq!(verdict_of(&[]).shows, None);
        // Repeats: the majority decides.
        let v = verdict_of(&[
            case("ext3", Some(1.0), (10.0, 95.0)),
            case("ext3", Some(0.0), (0.0, 0.0)),
            case("ext3", Some(0.0), (0.0, 0.0)),
        ]);
        assert_eq!(v.shows, Some(false));
    }
}
