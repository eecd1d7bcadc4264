//! What a case's memory cgroup (`--memory`) saw: the limit, the peak
//! usage, and the reclaim and writeback counters of `memory.stat`, so a
//! table shows *why* a layout changed under a limit.
//!
//! v1 and v2 name the counters differently (`dirty` / `file_dirty`), and
//! v1 counts no pages scanned or reclaimed per cgroup: such a figure is
//! missing with its reason, never 0. Dirty and writeback bytes are read
//! once, when the work ends (before the sync).

use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::harness::conditions::cgroup::MemoryCgroup;
use crate::ledger::cgroup::CgroupVersion;

const LIMIT: FigureSpec = FigureSpec::new("memory_limit_bytes", "bytes", Better::Higher, Kind::Exact)
    .heading("limit MiB")
    .about("the work's memory limit (--memory): its cgroup's memory.max (v2) or memory.limit_in_bytes (v1)");
const PEAK: FigureSpec = FigureSpec::new("memory_peak_bytes", "bytes", Better::Lower, Kind::Timing)
    .heading("peak MiB")
    .about("most memory the work's cgroup used, page cache included (memory.peak, v1 memory.max_usage_in_bytes)");
const HITS: FigureSpec = FigureSpec::new("memory_limit_hits", "count", Better::Lower, Kind::Timing)
    .heading("limit hits")
    .about("times the work's cgroup reached its limit (v2 memory.events max, v1 memory.failcnt)");
const SCANNED: FigureSpec = FigureSpec::new("memory_scanned_pages", "count", Better::Lower, Kind::Timing)
    .heading("scanned pg")
    .about("pages reclaim scanned in the work's cgroup (v2 memory.stat pgscan)");
const RECLAIMED: FigureSpec = FigureSpec::new("memory_reclaimed_pages", "count", Better::Lower, Kind::Timing)
    .heading("reclaim pg")
    .about("pages reclaimed from the work's cgroup (v2 memory.stat pgsteal)");
const DIRTY: FigureSpec = FigureSpec::new("memory_dirty_bytes", "bytes", Better::Lower, Kind::Timing)
    .heading("cg dirty MiB")
    .about("dirty page cache of the work's cgroup when the work ended (v2 file_dirty, v1 dirty)");
const WRITEBACK: FigureSpec = FigureSpec::new("memory_writeback_bytes", "bytes", Better::Lower, Kind::Timing)
    .heading("cg wb MiB")
    .about("page cache of the work's cgroup under writeback when the work ended (v2 file_writeback, v1 writeback)");

/// The figures, declared once.
pub const FIGURES: &[FigureSpec] = &[LIMIT, PEAK, HITS, SCANNED, RECLAIMED, DIRTY, WRITEBACK];

/// Add the cgroup's figures to `figures`.
pub fn add_figures(cgroup: &MemoryCgroup, limit: u64, figures: &mut Figures) {
    let v = cgroup.version;
    let number = |file: &str| cgroup.read(file).ok().and_then(|s| s.parse::<f64>().ok());
    let stat = cgroup.read("memory.stat").unwrap_or_default();
    let counter = |name: &str| {
        stat.lines().find_map(|l| l.split_once(' ').filter(|(k, _)| *k == name).and_then(|(_, n)| n.trim().parse::<f64>().ok()))
    };
    let unread = |file: &str| format!("the cgroup's {file} could not be read");
    figures.put(&LIMIT, Some(limit as f64), "");
    let (peak, peak_file) = match v {
        CgroupVersion::V1 => (number("memory.max_usage_in_bytes"), "memory.max_usage_in_bytes"),
        CgroupVersion::V2 => (number("memory.peak"), "memory.peak"),
    };
    let why = match v {
        CgroupVersion::V2 => "this kernel's cgroup v2 has no memory.peak (it came in Linux 5.19)".to_string(),
        CgroupVersion::V1 => unread(peak_file),
    };
    figures.put(&PEAK, peak, &why);
    let hits = match v {
        CgroupVersion::V1 => number("memory.failcnt"),
        CgroupVersion::V2 => cgroup.read("memory.events").ok().and_then(|events| {
            events.lines().find_map(|l| l.strip_prefix("max ").and_then(|n| n.trim().parse().ok()))
        }),
    };
    figures.put(&HITS, hits, &unread(if v == CgroupVersion::V1 { "memory.failcnt" } else { "memory.events" }));
    let no_reclaim_counts = "cgroup v1's memory.stat counts no pages scanned or reclaimed per cgroup";
    match v {
        CgroupVersion::V1 => {
            figures.put(&SCANNED, None, no_reclaim_counts);
            figures.put(&RECLAIMED, None, no_reclaim_counts);
            figures.put(&DIRTY, counter("dirty"), &unread("memory.stat dirty"));
            figures.put(&WRITEBACK, counter("writeback"), &unread("memory.stat writeback"));
        }
        CgroupVersion::V2 => {
            figures.put(&SCANNED, counter("pgscan"), &unread("memory.stat pgscan"));
            figures.put(&RECLAIMED, counter("pgsteal"), &unread("memory.stat pgsteal"));
            figures.put(&DIRTY, counter("file_dirty"), &unread("memory.stat file_dirty"));
            figures.put(&WRITEBACK, counter("file_writeback"), &unread("memory.stat file_writeback"));
        }
    }
}
