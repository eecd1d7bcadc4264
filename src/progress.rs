//! How a run says on stderr how it is going, for a person at a terminal, a
//! log under nohup or CI, or a program wrapping fslab (`--progress`).
//!
//! `bar` is indicatif's line, redrawn in place, on a terminal only; `lines`
//! says a line as each case starts and ends, with the run's clock and an
//! estimate of what is left, and a line a minute while nothing else was
//! said (a long aging, a guest); `json` says the same as one JSON object a
//! line (`case_start`, `case_end`, `case_running`, `wait`, `waited`,
//! `run_end`); `none` says no case. `auto`, the default, is the bar on a
//! terminal and lines elsewhere. A wait for another run's lock
//! ([`waiting`]) and its end ([`waited`]) are said in the run's mode from
//! wherever they happen (in words under `none`, as before the run chose
//! one). Every line is written whole, in one write,
//! and the last comes before the run's results reach stdout.

use std::io::{IsTerminal as _, Write as _};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

/// How progress is said (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// The bar on a terminal, lines elsewhere.
    Auto,
    /// A bar redrawn in place (drawn only on a terminal).
    Bar,
    /// A line as each case starts and ends, and each minute nothing else was said.
    Lines,
    /// The same as one JSON object a line.
    Json,
    /// No progress (a wait for a lock is still said).
    None,
}

impl Mode {
    /// The mode itself, `auto` made the bar or lines by what stderr is.
    pub fn resolved(self) -> Mode {
        match self {
            Mode::Auto if std::io::stderr().is_terminal() => Mode::Bar,
            Mode::Auto => Mode::Lines,
            other => other,
        }
    }
}

/// After this long with nothing said while a case runs, a line says so.
const QUIET: Duration = Duration::from_secs(60);

/// What a run's progress knows: the mode in force and the bar, for a wait
/// said from below the harness, and when anything was last said.
struct Saying {
    mode: Mode,
    bar: Option<ProgressBar>,
    last: Instant,
}

/// The run under way's way of saying things; `None` outside a run.
static SAYING: Mutex<Option<Saying>> = Mutex::new(None);

fn saying() -> MutexGuard<'static, Option<Saying>> {
    SAYING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Write `line` (without its newline) to stderr in one write, the bar
/// lifted meanwhile; a stderr that cannot take it is no reason to stop.
fn write_line(bar: Option<&ProgressBar>, line: &str) {
    let whole = format!("{line}\n");
    let write = || {
        let _ = std::io::stderr().lock().write_all(whole.as_bytes());
    };
    match bar {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// Say a line of the run's in its mode (`json`: `event` as one line;
/// `none` says nothing).
fn say(mode: Mode, line: impl FnOnce() -> String, event: impl FnOnce() -> serde_json::Value) {
    let mut guard = saying();
    let bar = guard.as_ref().and_then(|s| s.bar.clone());
    match mode {
        Mode::Json => write_line(None, &event().to_string()),
        Mode::None => return,
        _ => write_line(bar.as_ref(), &line()),
    }
    if let Some(s) = guard.as_mut() {
        s.last = Instant::now();
    }
}

/// A wait for a lock that another run holds.
pub struct Wait<'a> {
    /// The lock, in words with its path.
    pub what: &'a str,
    /// Who holds it (`pid 4242 (uid 0, fslab run ...)`), when known.
    pub holders: &'a [String],
    /// How long this wait has gone on.
    pub waited: Duration,
}

/// Say a wait (the waiter calls this at once, then each minute): in
/// words, or as a `wait` event under `--progress json`.
pub fn waiting(wait: &Wait<'_>) {
    let words = || {
        let who = if wait.holders.is_empty() { "another run, about to release it".to_string() } else { wait.holders.join("; ") };
        let secs = wait.waited.as_secs();
        let so_far = if secs >= 60 { format!(" (waiting {}m{:02}s)", secs / 60, secs % 60) } else { String::new() };
        format!("fslab: waiting for {}, held by {who}{so_far}; Ctrl-C stops", crate::text::escape(wait.what))
    };
    let event = || json!({"event": "wait", "what": wait.what, "holders": wait.holders, "waited_s": wait.waited.as_secs()});
    say_about_a_lock(words, event);
}

/// Say that a wait [`waiting`] said has ended, the lock `what` taken after
/// `waited`: in words, or as a `waited` event under `--progress json`. A
/// program wrapping fslab (the tests' deadlines) can then tell the time a
/// run spent waiting for another run from the time it spent working.
pub fn waited(what: &str, waited: Duration) {
    let words = || format!("fslab: got {} after {}", crate::text::escape(what), span(waited.as_secs_f64()));
    let event = || json!({"event": "waited", "what": what, "waited_s": round(waited.as_secs_f64())});
    say_about_a_lock(words, event);
}

/// Say a line about a lock in the run's mode, in words under `none` (and
/// outside a run).
fn say_about_a_lock(line: impl FnOnce() -> String, event: impl FnOnce() -> serde_json::Value) {
    let mode = saying().as_ref().map_or(Mode::Lines, |s| s.mode);
    say(if mode == Mode::None { Mode::Lines } else { mode }, line, event);
}

/// One case as progress names it.
#[derive(Debug, Clone)]
pub struct CaseName {
    /// Its scenario (`exec` for a command).
    pub scenario: String,
    /// Its place: target and conditions (`xfs@120M`).
    pub place: String,
    /// Its repeat, from 1.
    pub repeat: u32,
    /// How the run words it (`mmap-fill on xfs@120M`).
    pub what: String,
}

/// The case under way.
struct Current {
    name: CaseName,
    number: usize,
    started: Instant,
    phase: String,
}

/// A run's count of cases and its clock.
struct State {
    mode: Mode,
    planned: usize,
    done: usize,
    failed: usize,
    started: Instant,
    /// When the first case started: the estimate counts from there, not
    /// from a wait for a lock before it.
    first_case: Option<Instant>,
    current: Option<Current>,
    /// Each planned case's time limit in seconds, in order (0: none): a
    /// case that runs for a set time takes that long whatever the pace.
    limits: Vec<f64>,
}

impl State {
    /// How cases are said: not at all under the bar, which shows them.
    fn case_mode(&self) -> Mode {
        if self.mode == Mode::Bar { Mode::None } else { self.mode }
    }

    /// `[3/121] 0:41 `: the case's number and the run's clock.
    fn head(&self, number: usize, now: Instant) -> String {
        format!("[{number}/{}] {} ", self.planned.max(number), clock(now - self.started))
    }

    /// Seconds the cases not yet measured should take: each its time
    /// limit, if it has one, plus the time the cases so far took beyond
    /// theirs, on average.
    fn left(&self, now: Instant) -> Option<f64> {
        let first = self.first_case?;
        if self.done == 0 {
            return None;
        }
        let limit = |i: usize| self.limits.get(i).copied().unwrap_or(0.0);
        let limited: f64 = (0..self.done).map(limit).sum();
        let beyond = ((now - first).as_secs_f64() - limited).max(0.0) / self.done as f64;
        Some((self.done..self.planned.max(self.done)).map(|i| beyond + limit(i)).sum())
    }

    /// The line and event a case running quietly for [`QUIET`] is due, if
    /// it is: nothing said since `last`.
    fn running(&self, last: Instant, now: Instant) -> Option<(String, serde_json::Value)> {
        let current = self.current.as_ref()?;
        if now.saturating_duration_since(last) < QUIET {
            return None;
        }
        let seconds = (now - current.started).as_secs_f64();
        let line = format!(
            "{}{} r{}: {}, {} so far",
            self.head(current.number, now),
            crate::text::escape(&current.name.what),
            current.name.repeat,
            current.phase,
            span(seconds)
        );
        let mut event = self.event("case_running", current, now);
        event["phase"] = json!(current.phase);
        event["seconds"] = json!(round(seconds));
        Some((line, event))
    }

    /// An event about `current`, its common fields filled.
    fn event(&self, kind: &str, current: &Current, now: Instant) -> serde_json::Value {
        json!({
            "event": kind,
            "case": current.number,
            "of": self.planned.max(current.number),
            "scenario": current.name.scenario,
            "place": current.name.place,
            "repeat": current.name.repeat,
            "elapsed_s": round((now - self.started).as_secs_f64()),
        })
    }
}

/// A run's progress, said in its mode until [`Progress::finish`].
pub struct Progress {
    state: Arc<Mutex<State>>,
    bar: Option<ProgressBar>,
    ticker: Option<(Sender<()>, JoinHandle<()>)>,
}

impl Progress {
    /// Start saying a run of `planned` cases in `mode` (resolved here).
    pub fn start(mode: Mode, planned: usize) -> Progress {
        let mode = mode.resolved();
        let now = Instant::now();
        *saying() = Some(Saying { mode, bar: None, last: now });
        let state = State { mode, planned, done: 0, failed: 0, started: now, first_case: None, current: None, limits: Vec::new() };
        let state = Arc::new(Mutex::new(state));
        let ticker = matches!(mode, Mode::Lines | Mode::Json).then(|| tick(state.clone()));
        Progress { state, bar: None, ticker }
    }

    /// Case number `done + 1` starts.
    pub fn case_started(&mut self, name: CaseName) {
        let now = Instant::now();
        let mut state = lock(&self.state);
        let number = state.done + 1;
        state.first_case.get_or_insert(now);
        let current = Current { name, number, started: now, phase: "starting".into() };
        let mode = state.mode;
        if mode == Mode::Bar && self.bar.is_none() {
            let bar = bar(state.planned);
            if let Some(s) = saying().as_mut() {
                s.bar = Some(bar.clone());
            }
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_message(current.name.what.clone());
        }
        let line = || format!("{}{} r{} started", state.head(number, now), crate::text::escape(&current.name.what), current.name.repeat);
        say(state.case_mode(), line, || state.event("case_start", &current, now));
        state.current = Some(current);
    }

    /// The case under way went on to `phase` (`making`, `running`...).
    pub fn phase(&self, phase: &str) {
        let mut state = lock(&self.state);
        if let Some(current) = state.current.as_mut() {
            current.phase = phase.to_string();
            if let Some(bar) = &self.bar {
                bar.set_message(format!("{}: {phase}", current.name.what));
            }
        }
    }

    /// The case under way ended, failed with `error` or not.
    pub fn case_ended(&mut self, failed: Option<&str>) {
        let now = Instant::now();
        let mut state = lock(&self.state);
        let Some(current) = state.current.take() else { return };
        state.done += 1;
        state.failed += usize::from(failed.is_some());
        let seconds = (now - current.started).as_secs_f64();
        let left = state.left(now);
        let status = if failed.is_some() { "failed" } else { "ok" };
        let line = || {
            let about = left.filter(|s| *s > 0.0).map(|s| format!(", about {} left", estimate(s))).unwrap_or_default();
            let what = crate::text::escape(&current.name.what);
            format!("{}{what} r{} {status} in {}{about}", state.head(current.number, now), current.name.repeat, span(seconds))
        };
        let event = || {
            let mut event = state.event("case_end", &current, now);
            event["status"] = json!(status);
            event["seconds"] = json!(round(seconds));
            event["left_s"] = json!(left.map(round));
            event["error"] = json!(failed);
            event
        };
        say(state.case_mode(), line, event);
        if let Some(bar) = &self.bar {
            bar.set_prefix(left.filter(|s| *s > 0.0).map(|s| format!(", about {} left", estimate(s))).unwrap_or_default());
            bar.inc(1);
        }
    }

    /// Say `line` on stdout (`stderr`: on stderr) without tearing the bar.
    pub fn say(&self, line: &str, stderr: bool) {
        let print = || {
            if stderr {
                write_line(None, line);
            } else {
                println!("{line}");
            }
        };
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// The run now plans `planned` cases.
    pub fn set_planned(&self, planned: usize) {
        lock(&self.state).planned = planned;
        if let Some(bar) = &self.bar {
            bar.set_length(planned as u64);
        }
    }

    /// The planned cases' time limits, in order (`None`: the case runs
    /// until its work is done): what the estimate of the time left counts
    /// them at.
    pub fn set_limits(&self, limits: impl IntoIterator<Item = Option<Duration>>) {
        lock(&self.state).limits = limits.into_iter().map(|l| l.map_or(0.0, |d| d.as_secs_f64())).collect();
    }

    /// The run `run` ended (`complete`: every case planned was measured,
    /// and nothing stopped it): say so, last of all its progress.
    pub fn finish(mut self, run: &str, complete: bool) {
        self.stop();
        let now = Instant::now();
        let state = lock(&self.state);
        let seconds = (now - state.started).as_secs_f64();
        let line = || {
            let failed = if state.failed > 0 { format!(", {} failed", state.failed) } else { String::new() };
            let head = state.head(state.done.max(1), now);
            if complete {
                format!("{head}done: {} in {}{failed}", cases(state.done), span(seconds))
            } else {
                format!("{head}stopped: {} of {} in {}{failed}", state.done, cases(state.planned), span(seconds))
            }
        };
        let event = || {
            json!({"event": "run_end", "run": run, "cases": state.done, "failed": state.failed,
                   "planned": state.planned, "complete": complete, "seconds": round(seconds)})
        };
        say(state.case_mode(), line, event);
    }

    /// Stop the ticker and the bar, and say nothing more from below.
    fn stop(&mut self) {
        if let Some((stop, thread)) = self.ticker.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some(s) = saying().as_mut() {
            s.bar = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
        *saying() = None;
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The thread saying a line while a case runs and nothing else was said
/// for [`QUIET`]; it ends when its sender is used or dropped.
fn tick(state: Arc<Mutex<State>>) -> (Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(Duration::from_secs(1)) {
            let state = lock(&state);
            let last = saying().as_ref().map_or_else(Instant::now, |s| s.last);
            if let Some((line, event)) = state.running(last, Instant::now()) {
                say(state.case_mode(), || line, || event);
            }
        }
    });
    (stop, thread)
}

/// The bar: `⠁ [3/121] mmap-fill on xfs@120M: running (41s, about 8 min left)`,
/// the estimate [`State::left`]'s, set as each case ends.
fn bar(planned: usize) -> ProgressBar {
    let bar = ProgressBar::new(planned as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed}{prefix})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// `1 case`, `121 cases`.
fn cases(n: usize) -> String {
    format!("{n} case{}", if n == 1 { "" } else { "s" })
}

/// Seconds to a tenth, for JSON.
fn round(seconds: f64) -> f64 {
    (seconds * 10.0).round() / 10.0
}

/// A run's clock: `0:41`, `12:05`, `1:02:09`.
fn clock(elapsed: Duration) -> String {
    let s = elapsed.as_secs();
    if s >= 3600 { format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) } else { format!("{}:{:02}", s / 60, s % 60) }
}

/// A duration measured: `12.3 s`, `2 min 5 s`, `1 h 3 min`.
fn span(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if seconds < 59.95 {
        format!("{seconds:.1} s")
    } else if s < 3600 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{} h {} min", s / 3600, s / 60 % 60)
    }
}

/// A duration guessed, in round words: `40 s`, `8 min`, `1 h 5 min`.
fn estimate(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s < 60 {
        format!("{} s", s.max(1))
    } else if s < 3600 {
        format!("{} min", (s + 30) / 60)
    } else {
        format!("{} h {} min", s / 3600, s / 60 % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> CaseName {
        CaseName { scenario: "mmap-fill".into(), place: "xfs@120M".into(), repeat: 1, what: "mmap-fill on xfs@120M".into() }
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(clock(Duration::from_secs(41)), "0:41");
        assert_eq!(clock(Duration::from_secs(725)), "12:05");
        assert_eq!(clock(Duration::from_secs(3729)), "1:02:09");
        assert_eq!((span(12.34), span(59.9), span(125.0), span(3780.0)), ("12.3 s".into(), "59.9 s".into(), "2 min 5 s".into(), "1 h 3 min".into()));
        assert_eq!((estimate(0.2), estimate(40.4), estimate(479.0), estimate(3900.0)), ("1 s".into(), "40 s".into(), "8 min".into(), "1 h 5 min".into()));
    }

    #[test]
    fn a_case_quiet_for_a_minute_is_said_and_one_said_recently_is_not() {
        let now = Instant::now();
        let ago = |s: u64| now.checked_sub(Duration::from_secs(s)).unwrap_or(now);
        let current = Current { name: name(), number: 3, started: ago(125), phase: "aging (once: the image is cached)".into() };
        let state = State { mode: Mode::Lines, planned: 121, done: 2, failed: 0, started: ago(170), first_case: Some(ago(160)), current: Some(current), limits: Vec::new() };
        assert!(state.running(ago(59), now).is_none(), "said 59 s ago");
        let (line, event) = state.running(ago(61), now).expect("due after a quiet minute");
        if now.checked_sub(Duration::from_secs(170)).is_some() {
            assert_eq!(line, "[3/121] 2:50 mmap-fill on xfs@120M r1: aging (once: the image is cached), 2 min 5 s so far");
            assert_eq!(event["seconds"], 125.0);
        }
        assert_eq!((event["event"].as_str(), event["case"].as_u64(), event["of"].as_u64()), (Some("case_running"), Some(3), Some(121)));
        // Two cases took 160 s: 119 more take about 9,520 s.
        let left = state.left(now).unwrap();
        assert!((left - 9520.0).abs() < 1.0, "{left}");
        let idle = State { current: None, ..state };
        assert!(idle.running(ago(600), now).is_none(), "no case, no line");
    }

    #[test]
    fn cases_with_a_time_limit_are_counted_at_their_limit() {
        // Two quick cases took 4 s; five 20-second streams are still to
        // come: about 5 x (2 + 20) s, not 5 x 2 s.
        let now = Instant::now();
        let Some(first) = now.checked_sub(Duration::from_secs(4)) else { return };
        let mut limits = vec![0.0, 0.0];
        limits.extend([20.0; 5]);
        let state = State { mode: Mode::Lines, planned: 7, done: 2, failed: 0, started: first, first_case: Some(first), current: None, limits };
        let left = state.left(now).unwrap();
        assert!((left - 110.0).abs() < 0.5, "{left}");
        // Once the streams ran, their limit is not counted as the pace.
        let state = State { done: 6, ..state };
        let Some(first) = now.checked_sub(Duration::from_secs(92)) else { return };
        let left = State { first_case: Some(first), ..state }.left(now).unwrap();
        assert!((left - 22.0).abs() < 0.5, "{left}");
    }
}
