//! The page cache's dirty and writeback peaks during the work, from
//! `/proc/meminfo`: how much the work let pile up before writeback caught
//! it — the condition seed 000's fragmentation grew in.
//!
//! The design decision: the timeline already records dirty and writeback
//! bytes, but once per interval (a second by default), which misses a
//! peak that builds and drains in between; this probe samples every
//! [`PERIOD`] on a thread of its own and keeps only the two maxima, so it
//! costs a few microseconds a sample and no memory. The figures are
//! machine-wide (the page cache is shared), so they are timings.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::timeline::{Meminfo, parse_meminfo};
use super::{Probe, ProbeCtx, Reading, Running};
use crate::record::{Better, FigureSpec, Kind};

/// How often `/proc/meminfo` is read.
pub const PERIOD: Duration = Duration::from_millis(20);

/// The figures, declared once.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("dirty_peak_bytes", "bytes", Better::Lower, Kind::Timing)
        .heading("dirty peak MiB")
        .about("most dirty page cache seen during the work and its sync (whole machine, sampled every 20 ms)"),
    FigureSpec::new("writeback_peak_bytes", "bytes", Better::Lower, Kind::Timing)
        .heading("wb peak MiB")
        .about("most page cache under writeback seen during the work and its sync (whole machine)"),
];

/// The probe.
#[derive(Debug)]
pub struct DirtyPeak;

impl Probe for DirtyPeak {
    fn name(&self) -> &'static str {
        "dirty-peak"
    }

    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }

    fn start<'a>(&self, _ctx: &ProbeCtx<'a>) -> Box<dyn Running + 'a> {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new().name("fslab-meminfo".into()).spawn(move || watch(&stopped)).ok();
        Box::new(Watching { stop, thread })
    }
}

/// A running watch of `/proc/meminfo`.
struct Watching {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<Option<Meminfo>>>,
}

impl Running for Watching {
    fn stop(self: Box<Self>) -> Reading {
        let _ = self.stop.send(());
        let peak = self.thread.and_then(|t| t.join().ok()).flatten();
        let mut reading = Reading::default();
        let why = "/proc/meminfo could not be read";
        let values = [peak.map(|p| p.dirty_bytes as f64), peak.map(|p| p.writeback_bytes as f64)];
        for (spec, value) in FIGURES.iter().zip(values) {
            reading.figures.put(spec, value, why);
        }
        reading
    }
}

/// Sample until told to stop (or dropped); the maxima seen, `None` if no
/// sample could be read.
fn watch(stopped: &mpsc::Receiver<()>) -> Option<Meminfo> {
    let mut peak: Option<Meminfo> = None;
    loop {
        if let Some(now) = std::fs::read_to_string("/proc/meminfo").ok().as_deref().and_then(parse_meminfo) {
            let p = peak.get_or_insert(now);
            p.dirty_bytes = p.dirty_bytes.max(now.dirty_bytes);
            p.writeback_bytes = p.writeback_bytes.max(now.writeback_bytes);
        }
        if !matches!(stopped.recv_timeout(PERIOD), Err(mpsc::RecvTimeoutError::Timeout)) {
            return peak;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// 32 MiB written and left unsynced sit dirty far longer than the
    /// test takes (background writeback starts at 10% of memory, expiry
    /// after 30 s), so at least one sample sees them. Dirty pages are the
    /// machine's: the test holds the sysctl lock shared, as a measuring
    /// run does, so no fslab run lowers the writeback thresholds under it,
    /// and tries three times, since another's `sync` (a cold read's) can
    /// write the file out before the first sample.
    #[test]
    fn a_dirty_file_raises_the_peak() {
        let dir = crate::test_temp::dir("");
        let ledger = crate::ledger::Ledger::create(dir.path(), "meminfo-test").unwrap();
        let _measuring = crate::ledger::sysctl::lock(crate::ledger::sysctl::Hold::Shared).unwrap();
        let ctx = ProbeCtx {
            ledger: &ledger,
            case_id: "meminfo-test-1",
            fs_type: "unknown",
            caps: Default::default(),
            scratch: None,
            backing: None,
            tracefs: Err("not asked"),
            interval: Duration::from_secs(1),
            cgroup: None,
            disk: &crate::model::builtin::find(crate::model::builtin::DEFAULT).unwrap(),
        };
        let mut peaks = Vec::new();
        let reading = loop {
            let running = DirtyPeak.start(&ctx);
            let mut file = std::fs::File::create(dir.path().join(format!("dirty-{}", peaks.len()))).unwrap();
            file.write_all(&vec![7u8; 32 << 20]).unwrap();
            std::thread::sleep(PERIOD * 3);
            let reading = running.stop();
            peaks.push(reading.figures.value("dirty_peak_bytes").unwrap());
            if peaks.last().is_some_and(|p| *p >= (24 << 20) as f64) || peaks.len() == 3 {
                break reading;
            }
        };
        assert!(peaks.iter().any(|p| *p >= (24 << 20) as f64), "peaks of {peaks:?} bytes miss 32 MiB of dirty pages");
        assert!(reading.figures.value("writeback_peak_bytes").is_some());
        assert_eq!(reading.figures.get("dirty_peak_bytes").unwrap().unit, "bytes");
    }
}
