//! Tracepoints through tracefs: journal commits (jbd2, the xfs log) and
//! the block requests issued to one device, with their seeks — what seed
//! 002's author counted with an ftrace script and seekwatcher plots.
//!
//! The design decision: every session uses a private tracefs instance
//! (`instances/<name>`), with its own buffer, events, filters and
//! `tracing_on`, so it neither disturbs nor is disturbed by anyone else's
//! tracing; events are filtered in the kernel (`dev == N`) and the
//! instance's `trace_pipe` is streamed and counted as it arrives, so
//! memory stays bounded however long the run.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::layout::mounts;
use super::{Probe, ProbeCtx, Reading, Running};
use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::ledger::{Ledger, Resource, Token};

mod modelled;
mod parse;

pub use modelled::{QUEUE_DEPTH, TraceModel};

use parse::{
    BLOCK_RQ_ISSUE, Counter, EVENTS, JBD2_END, JBD2_START, WINDOW_END, XFS_LOG_FORCE, XLOG_ICLOG_SYNC, feed,
    lost_in_stats,
};

/// Per-CPU ring buffer of the instance, in KiB: 8 MiB holds ~100,000
/// block events per CPU, far more than arrive between two reads...
const BUFFER_KB: usize = 8192;
/// ...but `buffer_size_kb` is per CPU, so on a big machine the total is
/// capped at this, with at least `MIN_BUFFER_KB` per CPU.
const TOTAL_BUFFER_KB: usize = 65536;
const MIN_BUFFER_KB: usize = 1024;
/// Nap between reads of an empty `trace_pipe`. A nap rather than poll(2):
/// rustix's poll is not among our features, and a nap needs no unsafe
/// code; 20 ms is far inside what the buffer holds and keeps `stop`
/// prompt.
const POLL: Duration = Duration::from_millis(20);
/// How long [`TraceSession::split`] waits for its marker to come through
/// `trace_pipe` (it takes a poll or two).
const SPLIT_WAIT: Duration = Duration::from_secs(10);

/// The system's tracefs, where it is mounted by convention. Other tracefs
/// mounts are not used: one may be another fslab run's private mount,
/// gone when that run ends.
pub fn find_tracefs() -> Option<PathBuf> {
    const KNOWN: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
    let all: Vec<PathBuf> =
        mounts::all().into_iter().filter(|m| m.fs_type == "tracefs").map(|m| m.mount_point).collect();
    KNOWN.iter().map(Path::new).find(|known| all.iter().any(|p| p == known)).map(Path::to_path_buf)
}

/// What to trace, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRequest {
    /// A mounted tracefs.
    pub tracefs: PathBuf,
    /// Name of the private instance to create (unique per run).
    pub instance: String,
    /// The device to count, as the kernel encodes it
    /// ([`BlockDevice::dev_t_kernel`](super::blockstat::BlockDevice::dev_t_kernel)):
    /// the scratch file system's device, which is also the disk its block
    /// requests go to for a loop device.
    pub dev_t_kernel: u64,
    /// The drive to replay the block requests on, and what to call their
    /// stream (`work`, `cold_read`); none to count them only.
    pub model: Option<(crate::model::Profile, &'static str)>,
}

impl TraceRequest {
    /// The instance's directory; record it for cleanup before `start`.
    pub fn instance_dir(&self) -> PathBuf {
        self.tracefs.join("instances").join(&self.instance)
    }
}

/// What a session counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceCounts {
    /// jbd2 commits finished (`jbd2_end_commit`); `None` when the kernel
    /// has no jbd2 events (jbd2 not loaded).
    pub journal_commits: Option<u64>,
    /// jbd2 commits started.
    pub journal_commit_starts: Option<u64>,
    /// xfs log forces (`xfs_log_force`: fsync, sync and friends).
    pub xfs_log_forces: Option<u64>,
    /// xfs log buffer writes (`xlog_iclog_sync`).
    pub xfs_log_writes: Option<u64>,
    /// Block requests issued to the device.
    pub block_requests: u64,
    /// Of which reads (`R` in rwbs).
    pub read_requests: u64,
    /// Of which writes (`W` in rwbs).
    pub write_requests: u64,
    /// Of which flushes or FUA writes (`F` in rwbs).
    pub flush_requests: u64,
    /// Requests with data that did not start where the previous one ended.
    pub seeks: u64,
    /// Sum of the distances of those seeks.
    pub seek_distance_bytes: u64,
    /// Events the kernel could not keep (buffer overrun or dropped).
    pub lost_events: u64,
    /// Why the counts cannot be trusted beyond lost events (the reader
    /// failed), if they cannot.
    pub error: Option<String>,
    /// The block requests replayed through the disk model, when asked.
    pub model: Option<TraceModel>,
}

/// Stream `trace_pipe` into a counter until `stop` is set, then drain it;
/// the counts up to the window's end go to `window` when its marker is read.
fn read_pipe(pipe: &Path, stop: &AtomicBool, mut counter: Counter, window: &mpsc::Sender<Counter>) -> io::Result<Counter> {
    let mut file = fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(pipe)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut carry = Vec::new();
    loop {
        // Read the flag before draining: set after tracing was turned off,
        // so the drain that follows sees every event there will be.
        let stopping = stop.load(Ordering::Acquire);
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => feed(&mut counter, &mut carry, &buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            if let Some(w) = counter.window.take() {
                let _ = window.send(*w);
            }
        }
        if stopping {
            return Ok(counter);
        }
        std::thread::sleep(POLL);
    }
}

/// A running trace of one device in a private instance.
#[derive(Debug)]
pub struct TraceSession {
    dir: PathBuf,
    /// The events the kernel has and this session enabled.
    enabled: Vec<&'static str>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<io::Result<Counter>>>,
    /// The counts up to the window's end, from the reader (waiting there
    /// when [`split`](Self::split) gave up on them).
    window: mpsc::Receiver<Counter>,
    /// Events lost before the window's end, once [`split`](Self::split).
    lost_in_window: Option<u64>,
    finished: bool,
}

impl TraceSession {
    /// Create the instance, enable the events the kernel has with a device
    /// filter, and start counting.
    pub fn start(req: &TraceRequest) -> Result<TraceSession> {
        let dir = req.instance_dir();
        fs::create_dir(&dir).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => Error::environment(format!(
                "{}: trace instance exists, left by an earlier run: run `fslab cleanup`",
                dir.display()
            )),
            _ => Error::io(&dir, "create a tracefs instance", e),
        })?;
        // From here on, Drop removes the instance whatever fails.
        let (window_tx, window) = mpsc::channel();
        let mut session = TraceSession {
            dir: dir.clone(),
            enabled: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            reader: None,
            window,
            lost_in_window: None,
            finished: false,
        };
        let set = |name: &str, value: &str| {
            let path = dir.join(name);
            fs::write(&path, value).map_err(|e| Error::io(&path, &format!("write {value:?}"), e))
        };
        set("tracing_on", "0")?;
        let cpus = fs::read_dir(dir.join("per_cpu")).map_or(1, |d| d.count()).max(1);
        let per_cpu_kb = (TOTAL_BUFFER_KB / cpus).clamp(MIN_BUFFER_KB, BUFFER_KB);
        set("buffer_size_kb", &per_cpu_kb.to_string())?;
        // Seeks are counted in issue order across CPUs; the default
        // per-CPU clock may disagree between CPUs, `global` does not.
        let _ = fs::write(dir.join("trace_clock"), "global");
        for (system, event) in EVENTS {
            let event_dir = dir.join("events").join(system).join(event);
            if !event_dir.is_dir() {
                continue;
            }
            set(&format!("events/{system}/{event}/filter"), &format!("dev == {}", req.dev_t_kernel))?;
            session.enabled.push(event);
            set(&format!("events/{system}/{event}/enable"), "1")?;
        }
        if !session.has(BLOCK_RQ_ISSUE) {
            return Err(Error::environment(format!(
                "{}: this kernel has no block/{BLOCK_RQ_ISSUE} tracepoint",
                req.tracefs.display()
            )));
        }
        let model = req.model.as_ref().map(|(disk, phase)| modelled::Modelling::new(disk, phase));
        let (pipe, stop, counter) = (dir.join("trace_pipe"), session.stop.clone(), Counter::new(req.dev_t_kernel, model));
        let reader = std::thread::Builder::new()
            .name("fslab-trace".into())
            .spawn(move || read_pipe(&pipe, &stop, counter, &window_tx))
            .map_err(|e| Error::failed(format!("cannot start the trace reader thread: {e}")))?;
        session.reader = Some(reader);
        set("tracing_on", "1")?;
        Ok(session)
    }

    fn has(&self, event: &str) -> bool {
        self.enabled.contains(&event)
    }

    /// End the window: mark it in the trace and hand back the counts up
    /// to the mark, while the session goes on counting what comes after
    /// (its [`stop`](Self::stop) then counts from the mark). The error says
    /// why the mark could not be made or did not come through.
    pub fn split(&mut self) -> std::result::Result<TraceCounts, String> {
        let marker = self.dir.join("trace_marker");
        fs::write(&marker, WINDOW_END).map_err(|e| format!("{}: {e}", marker.display()))?;
        let mut counter = self
            .window
            .recv_timeout(SPLIT_WAIT)
            .map_err(|_| format!("the window's end, marked in the trace, was not read back within {} s", SPLIT_WAIT.as_secs()))?;
        let lost = overruns(&self.dir);
        self.lost_in_window = Some(lost);
        let lost = counter.lost.max(lost);
        Ok(self.counts(&mut counter, lost, None))
    }

    /// Stop tracing, count what is left (since the [`split`](Self::split),
    /// when there was one), remove the instance.
    pub fn stop(mut self) -> TraceCounts {
        let (mut counter, error) = match self.shut_down() {
            // A mark that came through after `split` gave up: the window
            // was never taken, so this is all of it.
            Some(Ok(counter)) if self.lost_in_window.is_none() => match self.window.try_recv() {
                Ok(window) => (window.merged(counter), None),
                Err(_) => (counter, None),
            },
            Some(Ok(counter)) => (counter, None),
            Some(Err(e)) => (Counter::default(), Some(format!("reading trace_pipe failed: {e}"))),
            None => (Counter::default(), Some("the trace reader thread panicked".to_string())),
        };
        let overrun = overruns(&self.dir).saturating_sub(self.lost_in_window.unwrap_or(0));
        let lost = counter.lost.max(overrun);
        let counts = self.counts(&mut counter, lost, error);
        self.release();
        counts
    }

    /// `counter`'s counts of the events this session enabled, and what
    /// the model made of its requests.
    fn counts(&self, counter: &mut Counter, lost: u64, error: Option<String>) -> TraceCounts {
        let opt = |event: &str, n: u64| self.has(event).then_some(n);
        TraceCounts {
            journal_commits: opt(JBD2_END, counter.journal_ends),
            journal_commit_starts: opt(JBD2_START, counter.journal_starts),
            xfs_log_forces: opt(XFS_LOG_FORCE, counter.log_forces),
            xfs_log_writes: opt(XLOG_ICLOG_SYNC, counter.log_writes),
            block_requests: counter.requests,
            read_requests: counter.reads,
            write_requests: counter.writes,
            flush_requests: counter.flushes,
            seeks: counter.seeks,
            seek_distance_bytes: counter.seek_sectors * 512,
            lost_events: lost,
            error,
            model: counter.model.take().map(modelled::Modelling::finish),
        }
    }

    /// Turn tracing off and join the reader; `None` if it panicked.
    fn shut_down(&mut self) -> Option<io::Result<Counter>> {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        self.stop.store(true, Ordering::Release);
        self.reader.take().and_then(|r| r.join().ok())
    }

    /// Disable the events and remove the instance.
    fn release(&mut self) {
        self.finished = true;
        if let Err(e) = remove_instance(&self.dir) {
            eprintln!(
                "fslab: could not remove trace instance {}: {e} (run `fslab cleanup` to retry)",
                self.dir.display()
            );
        }
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.shut_down();
            self.release();
        }
    }
}

/// Events lost in the instance's buffers, over all CPUs.
fn overruns(dir: &Path) -> u64 {
    let Ok(cpus) = fs::read_dir(dir.join("per_cpu")) else { return 0 };
    cpus.filter_map(|e| fs::read_to_string(e.ok()?.path().join("stats")).ok()).map(|t| lost_in_stats(&t)).sum()
}

/// Remove an instance a run left (it may have been killed mid-trace):
/// tracing off, events off, then rmdir, which frees its buffers. A missing
/// instance is not an error.
///
/// The kernel refuses the rmdir (EBUSY) while any file of the instance is
/// open, and a child another thread is forking holds copies of our
/// descriptors until its exec, so EBUSY is retried for a while.
pub fn remove_instance(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let _ = fs::write(dir.join("tracing_on"), "0");
    let _ = fs::write(dir.join("events/enable"), "0");
    let mut tries = 0;
    loop {
        match fs::remove_dir(dir) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// The trace figures, declared once; `log_forces` only for xfs.
///
/// Every one is a timing. How many commits a workload makes is decided by
/// when the journal's timer fired and when writeback ran, not by the
/// workload alone: an fsync finds its file's blocks already committed when
/// the flusher allocated them first (200 files written, then each fsynced,
/// made 16 to 201 jbd2 commits on ext4 and 42 to 203 log writes on xfs
/// across five repeats beside a second core's load). Lost events depend
/// on whether the reader kept up.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("journal_commits", "count", Better::Lower, Kind::Timing)
        .heading("commits")
        .about("journal commits: jbd2 commits on ext3/ext4, log buffer writes on xfs"),
    FigureSpec::new("log_forces", "count", Better::Lower, Kind::Timing).about("xfs log forces"),
    FigureSpec::new("block_requests", "count", Better::Lower, Kind::Timing)
        .about("block requests issued to the scratch device"),
    FigureSpec::new("seeks", "count", Better::Lower, Kind::Timing)
        .about("requests that did not start where the previous one ended"),
    FigureSpec::new("seek_distance_bytes", "bytes", Better::Lower, Kind::Timing)
        .about("total distance between consecutive requests"),
    FigureSpec::new("trace_lost_events", "count", Better::Lower, Kind::Timing)
        .about("trace events the kernel dropped (the counts are missing when any were)"),
    FigureSpec::new("modelled_work_s", "s", Better::Lower, Kind::Timing).heading("model s").about(
        "the block requests of the work and its syncfs replayed by the disk model in issue order, one at a time, on the \
         run's --disk drive (the case's target.disk): its seconds from the first issue to the last completion; a timing, \
         since the requests follow when writeback ran",
    ),
    FigureSpec::new("modelled_seeks", "count", Better::Lower, Kind::Timing)
        .heading("model seeks")
        .about("the arm's moves to another cylinder in that replay"),
];

/// The cold read-back's requests replayed as the work's are, declared once.
pub const COLD_FIGURES: &[FigureSpec] = &[
    FigureSpec::new("modelled_cold_read_s", "s", Better::Lower, Kind::Timing).heading("cold model s").about(
        "the cold read-back's block requests replayed by the disk model in issue order, one at a time, on the run's \
         --disk drive: its seconds; a timing, since readahead decides the requests",
    ),
    FigureSpec::new("modelled_cold_read_seeks", "count", Better::Lower, Kind::Timing)
        .heading("cold model seeks")
        .about("the arm's moves to another cylinder in that replay"),
];

/// The journal commits the file system made after the window, up to and
/// including the unmount: a checkpoint's, the timer's, the unmount's own.
pub const DEFERRED_FIGURES: &[FigureSpec] = &[FigureSpec::new("deferred_journal_commits", "count", Better::Lower, Kind::Timing)
    .heading("+deferred")
    .about("journal commits after the work and its syncfs, up to and including the unmount")];

fn spec(name: &str) -> &'static FigureSpec {
    FIGURES.iter().find(|f| f.name == name).expect("declared above")
}

/// Why counts cannot be used: none (`why_missing`), a failed reader, or
/// lost events.
fn unusable(counts: Option<&TraceCounts>, why_missing: &str) -> Option<String> {
    match counts {
        None => Some(why_missing.to_string()),
        Some(TraceCounts { error: Some(e), .. }) => Some(e.clone()),
        Some(c) if c.lost_events > 0 => Some(format!("the trace buffer overflowed: {} events lost", c.lost_events)),
        Some(_) => None,
    }
}

/// The journal commits of `counts` on a file system of `fs_type`, or why
/// there are none.
fn journal_commits(counts: Option<&TraceCounts>, fs_type: &str, why_missing: &str) -> (Option<f64>, String) {
    if let Some(reason) = unusable(counts, why_missing) {
        return (None, reason);
    }
    let (value, why) = match fs_type {
        "ext3" | "ext4" => (counts.and_then(|c| c.journal_commits), "this kernel has no jbd2 tracepoints"),
        // An xfs "commit" is a write of a log buffer to disk.
        "xfs" => (counts.and_then(|c| c.xfs_log_writes), "this kernel has no xfs/xlog_iclog_sync tracepoint"),
        _ => return (None, format!("no journal tracepoints for {fs_type}")),
    };
    (value.map(|v| v as f64), why.to_string())
}

/// Put the trace figures into `figures` for a file system of `fs_type`.
/// With no counts (not root, no tracefs) every figure is missing for
/// `why_missing`; when events were lost, so are the counts made from them:
/// a count with holes in it is no count.
pub fn add_figures(counts: Option<&TraceCounts>, fs_type: &str, why_missing: &str, figures: &mut Figures) {
    let unusable = unusable(counts, why_missing);
    // A counted value, or why it is missing.
    let pick = |value: Option<u64>, why: &str| match &unusable {
        Some(reason) => (None, reason.clone()),
        None => (value.map(|v| v as f64), why.to_string()),
    };
    let mut put = |name: &str, (value, why): (Option<f64>, String)| figures.put(spec(name), value, &why);
    put("journal_commits", journal_commits(counts, fs_type, why_missing));
    if fs_type == "xfs" {
        put("log_forces", pick(counts.and_then(|c| c.xfs_log_forces), "this kernel has no xfs/xfs_log_force tracepoint"));
    }
    put("block_requests", pick(counts.map(|c| c.block_requests), ""));
    put("seeks", pick(counts.map(|c| c.seeks), ""));
    put("seek_distance_bytes", pick(counts.map(|c| c.seek_distance_bytes), ""));
    // The lost count itself is kept when the others are not.
    let lost = match counts {
        Some(TraceCounts { error: None, lost_events, .. }) => (Some(*lost_events as f64), String::new()),
        _ => (None, unusable.unwrap_or_default()),
    };
    put("trace_lost_events", lost);
}

/// Put the model's seconds and seeks for `counts`' requests into `figures`
/// as `seconds` and `seeks`, or why they are missing: no counts, counts
/// with holes (a stream with requests lost has no cost), no drive asked
/// for, or a request the drive cannot hold.
fn add_modelled(counts: Option<&TraceCounts>, why_missing: &str, [seconds, seeks]: [&FigureSpec; 2], figures: &mut Figures) {
    let (modelled, why) = match (unusable(counts, why_missing), counts.and_then(|c| c.model.as_ref())) {
        (Some(reason), _) => (None, reason),
        (None, None) => (None, "no drive was given to model".to_string()),
        (None, Some(TraceModel { modelled: Err(e), .. })) => (None, format!("the disk model cannot replay the requests: {e}")),
        (None, Some(TraceModel { modelled: Ok(m), .. })) => (Some(m), String::new()),
    };
    figures.put(seconds, modelled.map(|m| m.seconds), &why);
    figures.put(seeks, modelled.map(|m| m.seeks as f64), &why);
}

/// What a stopped trace of the work's window reads: the trace figures,
/// the model's, and the sampled requests when the counts can be used.
fn window_reading(counts: Option<&TraceCounts>, fs_type: &str, why_missing: &str) -> Reading {
    let mut reading = Reading::default();
    add_figures(counts, fs_type, why_missing, &mut reading.figures);
    add_modelled(counts, why_missing, [spec("modelled_work_s"), spec("modelled_seeks")], &mut reading.figures);
    reading.requests.extend(stream(counts));
    reading
}

/// The sampled requests of `counts`, unless lost events left holes in them.
fn stream(counts: Option<&TraceCounts>) -> Option<crate::record::RequestStream> {
    counts.filter(|c| unusable(Some(c), "").is_none()).and_then(|c| c.model.as_ref()).map(|m| m.stream.clone())
}

/// A tracefs for a run: the system's, or a private mount made (and
/// recorded in `ledger`) under `scratch` as `RUNID-tracefs`. The error
/// says why there is none.
pub fn tracefs_for_run(ledger: &Ledger, run_id: &str) -> std::result::Result<PathBuf, &'static str> {
    if !rustix::process::geteuid().is_root() {
        return Err("tracepoints need root");
    }
    if let Some(root) = find_tracefs() {
        return Ok(root);
    }
    // In the run's scratch folder, held and checked, when it has one.
    crate::site::mount_tracefs(ledger, run_id).map_err(|_| "tracefs is not available")
}

/// The probe: journal commits and block requests of the scratch device,
/// in a private tracefs instance recorded in the ledger.
#[derive(Debug)]
pub struct Trace;

/// A trace that runs, or why none does, and what to release after.
struct Tracing<'a> {
    session: std::result::Result<TraceSession, String>,
    fs_type: String,
    ledger: &'a Ledger,
    token: Option<Token>,
}

impl Probe for Trace {
    fn name(&self) -> &'static str {
        "trace"
    }

    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }

    fn deferred_figures(&self) -> &'static [FigureSpec] {
        DEFERRED_FIGURES
    }

    fn start<'a>(&self, ctx: &ProbeCtx<'a>) -> Box<dyn Running + 'a> {
        Box::new(Tracing::begin(ctx, "", "work"))
    }
}

impl<'a> Tracing<'a> {
    /// A session on the case's device in the instance `fslab-CASE` +
    /// `suffix`, its requests replayed on the run's drive as the stream
    /// `phase`; or why there is none.
    fn begin(ctx: &ProbeCtx<'a>, suffix: &str, phase: &'static str) -> Tracing<'a> {
        let mut tracing = Tracing { session: Err(String::new()), fs_type: ctx.fs_type.to_string(), ledger: ctx.ledger, token: None };
        tracing.session = match (ctx.tracefs, ctx.scratch.filter(|_| ctx.caps.trace)) {
            (Err(why), _) => Err(why.to_string()),
            (Ok(_), None) => Err("no block device to trace".to_string()),
            (Ok(root), Some(device)) => {
                let request = TraceRequest {
                    tracefs: root.to_path_buf(),
                    instance: format!("fslab-{}{suffix}", ctx.case_id),
                    dev_t_kernel: device.dev_t_kernel(),
                    model: Some((ctx.disk.clone(), phase)),
                };
                match ctx.ledger.record(Resource::TraceInstance(request.instance_dir())) {
                    Err(e) => Err(e.to_string()),
                    Ok(token) => {
                        tracing.token = Some(token);
                        TraceSession::start(&request).map_err(|e| e.to_string())
                    }
                }
            }
        };
        tracing
    }
}

/// The cold read-back, traced on its own: its block requests replayed on
/// the run's drive (`modelled_cold_read_*`) and sampled as the stream
/// `cold_read`. The case's own session may still be counting what the
/// window deferred (a target fslab cannot remount); this one has an
/// instance of its own, `fslab-CASE-cold`.
pub struct ReadBackTrace<'a>(Tracing<'a>);

impl<'a> ReadBackTrace<'a> {
    /// Start tracing before the read-back; never fails (what cannot be
    /// traced is said in the figures).
    pub fn start(ctx: &ProbeCtx<'a>) -> ReadBackTrace<'a> {
        ReadBackTrace(Tracing::begin(ctx, "-cold", "cold_read"))
    }

    /// Stop after the read-back: its modelled figures, measured or missing
    /// with why, and its sampled requests.
    pub fn stop(self) -> Reading {
        let Tracing { session, ledger, token, .. } = self.0;
        let mut reading = Reading::default();
        let (counts, why) = match session {
            Ok(session) => (Some(session.stop()), String::new()),
            Err(why) => (None, why),
        };
        add_modelled(counts.as_ref(), &why, [&COLD_FIGURES[0], &COLD_FIGURES[1]], &mut reading.figures);
        reading.requests.extend(stream(counts.as_ref()));
        release(ledger, token);
        reading
    }
}

impl Running for Tracing<'_> {
    fn stop(self: Box<Self>) -> Reading {
        let reading = match self.session {
            Ok(session) => window_reading(Some(&session.stop()), &self.fs_type, ""),
            Err(why) => window_reading(None, &self.fs_type, &why),
        };
        release(self.ledger, self.token);
        reading
    }

    /// The window's counts up to a mark in the trace, and the same session
    /// counting on past it; a session that cannot be split ends with the
    /// window, and what comes later is missing with why.
    fn stop_window<'s>(self: Box<Self>) -> (Reading, Option<Box<dyn super::Later + 's>>)
    where
        Self: 's,
    {
        let Tracing { session, fs_type, ledger, token } = *self;
        let (reading, later) = match session {
            Ok(mut session) => match session.split() {
                Ok(window) => (window_reading(Some(&window), &fs_type, ""), Ok(session)),
                Err(why) => (window_reading(Some(&session.stop()), &fs_type, ""), Err(why)),
            },
            Err(why) => (window_reading(None, &fs_type, &why), Err(why)),
        };
        (reading, Some(Box::new(Tracing { session: later, fs_type, ledger, token })))
    }
}

/// The ledger entry of a session that removed its instance (a release of
/// a removed instance is a no-op).
fn release(ledger: &Ledger, token: Option<Token>) {
    if let Some(token) = token {
        let _ = ledger.release(token);
    }
}

/// After the window: the same session, counting from its mark.
impl super::Later for Tracing<'_> {
    fn stop(self: Box<Self>) -> Figures {
        let mut figures = Figures::new();
        let (value, why) = match self.session {
            Ok(session) => journal_commits(Some(&session.stop()), &self.fs_type, ""),
            Err(why) => journal_commits(None, &self.fs_type, &why),
        };
        figures.put(&DEFERRED_FIGURES[0], value, &why);
        release(self.ledger, self.token);
        figures
    }
}

#[cfg(test)]
mod tests;
