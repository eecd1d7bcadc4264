//! Parsing `trace_pipe` lines of the traced events and counting them,
//! with bounded memory: one line at a time, nothing kept per event.
//!
//! The design decision: lines are parsed from the events' print formats
//! (what `trace_pipe` prints), not from binary records, because the text
//! format is stable across kernels and needs no per-kernel struct
//! layouts; each event is matched by name anywhere in the line, so the
//! `task-pid [cpu] flags timestamp:` header may take any form.

/// A line longer than this is no line of ours; it is dropped, so a
/// runaway line cannot grow memory.
const MAX_LINE: usize = 4096;

use super::modelled::Modelling;

pub(super) const JBD2_START: &str = "jbd2_start_commit";
pub(super) const JBD2_END: &str = "jbd2_end_commit";
pub(super) const XFS_LOG_FORCE: &str = "xfs_log_force";
pub(super) const XLOG_ICLOG_SYNC: &str = "xlog_iclog_sync";
pub(super) const BLOCK_RQ_ISSUE: &str = "block_rq_issue";
/// What a session writes into its instance's `trace_marker` where the
/// measured window ends: events before it are the window's, after it the
/// deferred work's. `trace_pipe` prints it as `tracing_mark_write: ` and
/// this text.
pub(super) const WINDOW_END: &str = "fslab: end of the window";
/// The events a session enables when the kernel has them, by subsystem.
pub(super) const EVENTS: [(&str, &str); 5] = [
    ("jbd2", JBD2_START),
    ("jbd2", JBD2_END),
    ("xfs", XFS_LOG_FORCE),
    ("xfs", XLOG_ICLOG_SYNC),
    ("block", BLOCK_RQ_ISSUE),
];

/// One parsed event of interest.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Event<'a> {
    JournalStart { dev: (u32, u32) },
    JournalEnd { dev: (u32, u32) },
    LogForce { dev: (u32, u32) },
    LogWrite { dev: (u32, u32) },
    Request { dev: (u32, u32), rwbs: &'a str, sector: u64, nr_sector: u64, ts: Option<f64> },
}

/// Parse one line of `trace_pipe`; `None` for anything else.
fn parse_line(line: &str) -> Option<Event<'_>> {
    let (name, rest, ts) = split_event(line)?;
    let dev_after = |key: &str| rest.strip_prefix(key).and_then(|r| parse_dev(r.split_whitespace().next()?));
    match name {
        JBD2_START => Some(Event::JournalStart { dev: dev_after("dev ")? }),
        JBD2_END => Some(Event::JournalEnd { dev: dev_after("dev ")? }),
        XFS_LOG_FORCE => Some(Event::LogForce { dev: dev_after("dev ")? }),
        XLOG_ICLOG_SYNC => Some(Event::LogWrite { dev: dev_after("dev ")? }),
        BLOCK_RQ_ISSUE => {
            // `7,3 WS 4096 () 123456 + 8 be,0,4 [dd]`: the command in
            // parentheses is hex bytes, so its first ") " ends it.
            let mut words = rest.split_whitespace();
            let dev = parse_dev(words.next()?)?;
            let rwbs = words.next()?;
            let tail = &rest[rest.find(") ")? + 2..];
            let mut words = tail.split_whitespace();
            let sector = words.next()?.parse().ok()?;
            (words.next()? == "+").then_some(())?;
            let nr_sector = words.next()?.parse().ok()?;
            Some(Event::Request { dev, rwbs, sector, nr_sector, ts })
        }
        _ => None,
    }
}

/// The event name, its text and the time stamped before it (seconds),
/// found as the first `NAME: ` whose NAME is one of ours; trace_pipe puts
/// `task-pid [cpu] flags ts: ` before it.
fn split_event(line: &str) -> Option<(&str, &str, Option<f64>)> {
    let mut from = 0;
    while let Some(i) = line[from..].find(": ") {
        let at = from + i;
        let start = line[..at].rfind(char::is_whitespace).map_or(0, |p| p + 1);
        let name = &line[start..at];
        if EVENTS.iter().any(|(_, e)| *e == name) {
            let ts = line[..start].trim_end().strip_suffix(':').and_then(|h| h.rsplit(char::is_whitespace).next()?.parse().ok());
            return Some((name, &line[at + 2..], ts));
        }
        from = at + 2;
    }
    None
}

/// `7,3` (jbd2, block) or `7:3` (xfs).
fn parse_dev(word: &str) -> Option<(u32, u32)> {
    let (major, minor) = word.split_once([',', ':'])?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Counts events of one device, line by line, and replays its block
/// requests through the disk model when asked.
#[derive(Debug, Default)]
pub(super) struct Counter {
    pub(super) dev: (u32, u32),
    pub(super) journal_starts: u64,
    pub(super) journal_ends: u64,
    pub(super) log_forces: u64,
    pub(super) log_writes: u64,
    pub(super) requests: u64,
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) flushes: u64,
    pub(super) seeks: u64,
    pub(super) seek_sectors: u64,
    pub(super) prev_end: Option<u64>,
    /// From trace_pipe's own `CPU:N [LOST M EVENTS]` lines.
    pub(super) lost: u64,
    /// The counts up to the [`WINDOW_END`] marker, once it was read and
    /// until it is handed on; the counts above then start again from it.
    pub(super) window: Option<Box<Counter>>,
    /// Whether the marker was read (it splits the counts once).
    pub(super) split: bool,
    /// The replay of the requests counted here: of the window's alone
    /// when it was split off.
    pub(super) model: Option<Modelling>,
}

impl Counter {
    /// A counter of the device the kernel numbers `dev_t_kernel`, its
    /// requests replayed by `model` when given.
    pub(super) fn new(dev_t_kernel: u64, model: Option<Modelling>) -> Counter {
        let dev = ((dev_t_kernel >> 20) as u32, (dev_t_kernel & 0xf_ffff) as u32);
        Counter { dev, model, ..Counter::default() }
    }

    /// The counts of `self` and of `after` (counted from where `self`
    /// stopped) together.
    pub(super) fn merged(self, after: Counter) -> Counter {
        Counter {
            dev: self.dev,
            journal_starts: self.journal_starts + after.journal_starts,
            journal_ends: self.journal_ends + after.journal_ends,
            log_forces: self.log_forces + after.log_forces,
            log_writes: self.log_writes + after.log_writes,
            requests: self.requests + after.requests,
            reads: self.reads + after.reads,
            writes: self.writes + after.writes,
            flushes: self.flushes + after.flushes,
            seeks: self.seeks + after.seeks,
            seek_sectors: self.seek_sectors + after.seek_sectors,
            prev_end: after.prev_end,
            lost: self.lost + after.lost,
            window: None,
            split: true,
            model: self.model,
        }
    }

    fn line(&mut self, line: &str) {
        if let Some(n) = lost_in(line) {
            self.lost += n;
            return;
        }
        if !self.split && is_window_end(line) {
            let after = Counter { dev: self.dev, split: true, ..Counter::default() };
            self.window = Some(Box::new(std::mem::replace(self, after)));
            return;
        }
        // The kernel filter already keeps other devices out; checking
        // again costs nothing and keeps a failed filter from miscounting.
        match parse_line(line) {
            Some(Event::JournalStart { dev }) if dev == self.dev => self.journal_starts += 1,
            Some(Event::JournalEnd { dev }) if dev == self.dev => self.journal_ends += 1,
            Some(Event::LogForce { dev }) if dev == self.dev => self.log_forces += 1,
            Some(Event::LogWrite { dev }) if dev == self.dev => self.log_writes += 1,
            Some(Event::Request { dev, rwbs, sector, nr_sector, ts }) if dev == self.dev => {
                self.request(rwbs, sector, nr_sector);
                if let Some(model) = self.model.as_mut() {
                    model.request(rwbs, sector, nr_sector, ts);
                }
            }
            _ => {}
        }
    }

    /// One issued request. Seeks are counted over requests that move data,
    /// in issue order: a request is a seek when it does not start where
    /// the previous one ended (a flush has no position and is skipped).
    fn request(&mut self, rwbs: &str, sector: u64, nr_sector: u64) {
        self.requests += 1;
        self.reads += u64::from(rwbs.contains('R'));
        self.writes += u64::from(rwbs.contains('W'));
        self.flushes += u64::from(rwbs.contains('F'));
        if nr_sector == 0 {
            return;
        }
        if let Some(prev_end) = self.prev_end
            && sector != prev_end
        {
            self.seeks += 1;
            self.seek_sectors += sector.abs_diff(prev_end);
        }
        self.prev_end = Some(sector + nr_sector);
    }
}

/// Whether `line` is the session's own [`WINDOW_END`] marker.
fn is_window_end(line: &str) -> bool {
    line.split_once("tracing_mark_write: ").is_some_and(|(_, text)| text.trim_end() == WINDOW_END)
}

/// `CPU:1 [LOST 42 EVENTS]` → 42.
fn lost_in(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (_, rest) = rest.split_once(" [LOST ")?;
    rest.strip_suffix(" EVENTS]")?.parse().ok()
}

/// Feed whole lines of `bytes` to `counter`, keeping an unfinished last
/// line in `carry` for the next read.
pub(super) fn feed(counter: &mut Counter, carry: &mut Vec<u8>, bytes: &[u8]) {
    carry.extend_from_slice(bytes);
    let mut start = 0;
    while let Some(nl) = carry[start..].iter().position(|&b| b == b'\n') {
        counter.line(&String::from_utf8_lossy(&carry[start..start + nl]));
        start += nl + 1;
    }
    carry.drain(..start);
    if carry.len() > MAX_LINE {
        carry.clear();
    }
}

/// Lost events in one CPU's `per_cpu/cpuN/stats`: `overrun` (overwritten
/// before being read) plus `dropped events` (refused when full).
pub(super) fn lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix("overrun:").or_else(|| l.strip_prefix("dropped events:")))
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_print_formats() {
        assert_eq!(
            parse_line("jbd2_start_commit: dev 7,3 transaction 5 sync 0"),
            Some(Event::JournalStart { dev: (7, 3) })
        );
        assert_eq!(
            parse_line(
                "  jbd2/loop3-8-1234  [001] ..... 2525.81: jbd2_end_commit: dev 7,3 transaction 5 sync 0 head 4"
            ),
            Some(Event::JournalEnd { dev: (7, 3) })
        );
        assert_eq!(
            parse_line("block_rq_issue: 7,3 WS 4096 () 123456 + 8 be,0,4 [dd]"),
            Some(Event::Request { dev: (7, 3), rwbs: "WS", sector: 123456, nr_sector: 8, ts: None })
        );
        // Older kernels: no ioprio; a header with a comm holding ": ".
        assert_eq!(
            parse_line("   kworker/u4:2-91  [000] d..1.  12.5: block_rq_issue: 254,0 FF 0 () 0 + 0 [kworker/u4:2]"),
            Some(Event::Request { dev: (254, 0), rwbs: "FF", sector: 0, nr_sector: 0, ts: Some(12.5) })
        );
        assert_eq!(
            parse_line("xfs_log_force: dev 7:3 lsn 0x100000002 caller xfs_file_fsync+0x1a4/0x2a0 [xfs]"),
            Some(Event::LogForce { dev: (7, 3) })
        );
        assert_eq!(
            parse_line("kworker-1 [000] ..... 1.0: xlog_iclog_sync: dev 7:3 state XLOG_STATE_SYNCING refcnt 0"),
            Some(Event::LogWrite { dev: (7, 3) })
        );
        assert_eq!(parse_line("block_rq_complete: 7,3 WS () 123456 + 8 [0]"), None);
        assert_eq!(parse_line("block_rq_issue: 7,3 WS 4096 () x + 8 [dd]"), None);
        assert_eq!(parse_line("jbd2_end_commit: dev seven"), None);
        assert_eq!(parse_line(""), None);
        assert_eq!(lost_in("CPU:1 [LOST 42 EVENTS]"), Some(42));
        assert_eq!(lost_in("CPU:1 [LOST EVENTS]"), None);
    }

    #[test]
    fn seeks_over_requests_in_issue_order() {
        let mut c = Counter::new(7 << 20 | 3, None);
        // 100+8 ends at 108, where the next starts; it ends at 116, so
        // 200 seeks 84 sectors forward; the flush has no position; the
        // read at 0 seeks 216 back from 216.
        for (rwbs, sector, n) in [("W", 100, 8), ("WS", 108, 8), ("R", 200, 16), ("FF", 0, 0), ("RA", 0, 8)] {
            c.request(rwbs, sector, n);
        }
        assert_eq!((c.requests, c.reads, c.writes, c.flushes), (5, 2, 2, 1));
        assert_eq!(c.seeks, 2);
        assert_eq!(c.seek_sectors, 84 + 216);
        // Lines of another device do not count.
        c.line("block_rq_issue: 7,4 W 4096 () 5000 + 8 [dd]");
        c.line("jbd2_end_commit: dev 7,4 transaction 1 sync 0 head 1");
        assert_eq!((c.requests, c.journal_ends), (5, 0));
        c.line("jbd2_end_commit: dev 7,3 transaction 1 sync 0 head 1");
        assert_eq!(c.journal_ends, 1);
    }

    #[test]
    fn lines_split_across_reads_are_joined_and_runaways_dropped() {
        let mut c = Counter::new(7 << 20 | 3, None);
        let mut carry = Vec::new();
        let text = b"jbd2_end_commit: dev 7,3 transaction 1 sync 0 head 1\nCPU:0 [LOST 3 EVENTS]\njbd2_end_commit: dev 7,3 trans";
        feed(&mut c, &mut carry, &text[..20]);
        feed(&mut c, &mut carry, &text[20..]);
        assert_eq!((c.journal_ends, c.lost), (1, 3));
        feed(&mut c, &mut carry, b"action 2 sync 0 head 1\n");
        assert_eq!(c.journal_ends, 2);
        assert!(carry.is_empty());
        feed(&mut c, &mut carry, &[b'x'; MAX_LINE + 1]);
        assert!(carry.is_empty());
    }

    #[test]
    fn the_window_s_end_splits_the_counts() {
        let mut c = Counter::new(7 << 20 | 3, None);
        c.line("jbd2_end_commit: dev 7,3 transaction 1 sync 0 head 1");
        c.line("block_rq_issue: 7,3 W 4096 () 100 + 8 [dd]");
        // Another marker text is nobody's window end.
        c.line("fslab-1 [000] ..... 9.1: tracing_mark_write: something else");
        assert!(c.window.is_none());
        c.line(&format!("fslab-1 [000] ..... 9.2: tracing_mark_write: {WINDOW_END}"));
        c.line("jbd2_end_commit: dev 7,3 transaction 2 sync 0 head 1");
        c.line("jbd2_end_commit: dev 7,3 transaction 3 sync 0 head 1");
        // A second marker does not split again.
        c.line(&format!("fslab-1 [000] ..... 9.3: tracing_mark_write: {WINDOW_END}"));
        let window = c.window.take().expect("split");
        assert_eq!((window.journal_ends, window.requests), (1, 1));
        assert_eq!((c.journal_ends, c.requests, c.dev), (2, 0, (7, 3)));
        // A session whose split was not waited for counts both parts.
        let whole = window.merged(c);
        assert_eq!((whole.journal_ends, whole.requests), (3, 1));
    }

    #[test]
    fn the_window_s_requests_are_modelled_with_their_times_and_what_follows_is_not() {
        let disk = crate::model::builtin::find("hdd-7200").unwrap();
        let mut c = Counter::new(7 << 20 | 3, Some(Modelling::new(&disk, "work")));
        c.line("   dd-77  [001] ..... 2525.500000: block_rq_issue: 7,3 W 4096 () 1000 + 8 be,0,4 [dd]");
        c.line("   dd-77  [001] ..... 2525.750000: block_rq_issue: 7,3 R 4096 () 5000 + 8 be,0,4 [dd]");
        c.line("   dd-77  [001] ..... 2525.800000: block_rq_issue: 7,4 R 4096 () 9000 + 8 be,0,4 [dd]");
        c.line(&format!("fslab-1 [000] ..... 2526.0: tracing_mark_write: {WINDOW_END}"));
        c.line("   kworker-9  [000] ..... 2527.000000: block_rq_issue: 7,3 W 4096 () 2000 + 8 be,0,4 [kworker]");
        assert!(c.model.is_none(), "after the window nothing is modelled");
        let window = c.window.take().expect("split");
        let model = window.model.expect("the window's replay").finish();
        let stream = &model.stream;
        assert_eq!((stream.requests, stream.measured_s, stream.points.len()), (2, 0.25, 2), "{stream:?}");
        let read = stream.points[1];
        assert_eq!((read.t_s, read.offset, read.op), (0.25, 5000 * 512, crate::record::RequestOp::Read));
        assert_eq!(model.modelled.unwrap().requests, 2);
    }

    #[test]
    fn overruns_and_drops_are_summed_from_stats() {
        let stats = "entries: 10\noverrun: 7\ncommit overrun: 100\nbytes: 400\ndropped events: 2\nread events: 5\n";
        assert_eq!(lost_in_stats(stats), 9);
    }
}
