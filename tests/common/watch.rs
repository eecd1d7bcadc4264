//! A spawned fslab whose deadlines count only the time it works.
//!
//! A run waits for the machine's locks (the sysctl lock, an aged image's
//! key lock) while another fslab on the machine holds them: another suite,
//! a user's run. A test's deadline ("mounted within 30 s") is about fslab's
//! own work, so its clock stops while fslab says it waits: from a `wait`
//! event to the `waited` event after it (`--progress json`; in words,
//! `fslab: waiting for ...` to `fslab: got ...`, as other commands and
//! `--progress lines|none` say them). Give `run`, `exec` and `hunt`
//! `--progress json` so the events come whatever the run's other output.

use std::io::{BufRead as _, Read as _};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether a line of fslab's stderr says a lock wait begins (`Some(true)`),
/// ends (`Some(false)`), or neither.
pub fn says_wait(line: &str) -> Option<bool> {
    if line.starts_with('{') {
        let event: serde_json::Value = serde_json::from_str(line).ok()?;
        return match event["event"].as_str()? {
            "wait" => Some(true),
            "waited" => Some(false),
            _ => None,
        };
    }
    if line.starts_with("fslab: waiting for ") {
        Some(true)
    } else if line.starts_with("fslab: got ") && line.contains(" after ") {
        Some(false)
    } else {
        None
    }
}

/// The working clock: time since the spawn less the lock waits said.
struct Clock {
    spawned: Instant,
    waited: Duration,
    waiting_since: Option<Instant>,
    lines: Vec<String>,
}

impl Clock {
    fn heard(&mut self, line: String) {
        match says_wait(&line) {
            Some(true) => {
                self.waiting_since.get_or_insert_with(Instant::now);
            }
            Some(false) => {
                if let Some(since) = self.waiting_since.take() {
                    self.waited += since.elapsed();
                }
            }
            None => {}
        }
        self.lines.push(line);
    }

    fn worked(&self) -> Duration {
        // One reading of the clock: while a wait goes on, this stands still.
        let now = Instant::now();
        let waiting = self.waiting_since.map_or(Duration::ZERO, |since| now - since);
        (now - self.spawned).saturating_sub(self.waited + waiting)
    }
}

/// A spawned fslab, its stderr read as it comes (so a full pipe never
/// holds it up), its working clock kept; killed if dropped still running.
pub struct Watched {
    child: Child,
    clock: Arc<Mutex<Clock>>,
    stderr: Option<JoinHandle<()>>,
    stdout: Option<JoinHandle<Vec<u8>>>,
}

impl Watched {
    /// Spawn `command`, its stderr piped here; a piped stdout is read
    /// here too and comes back from [`finish`](Self::finish).
    pub fn spawn(command: &mut Command) -> Watched {
        let mut child = command.stderr(Stdio::piped()).spawn().expect("start fslab");
        let clock = Clock { spawned: Instant::now(), waited: Duration::ZERO, waiting_since: None, lines: Vec::new() };
        let clock = Arc::new(Mutex::new(clock));
        let from = child.stderr.take().unwrap();
        let to = clock.clone();
        let stderr = std::thread::spawn(move || {
            for line in std::io::BufReader::new(from).lines().map_while(Result::ok) {
                to.lock().unwrap_or_else(PoisonError::into_inner).heard(line);
            }
        });
        let stdout = child.stdout.take().map(|mut from| {
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let _ = from.read_to_end(&mut all);
                all
            })
        });
        Watched { child, clock, stderr: Some(stderr), stdout }
    }

    fn clock(&self) -> std::sync::MutexGuard<'_, Clock> {
        self.clock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long it has worked: time since the spawn, less its lock waits.
    pub fn worked(&self) -> Duration {
        self.clock().worked()
    }

    /// Whether it says now that it waits for a lock.
    pub fn waiting(&self) -> bool {
        self.clock().waiting_since.is_some()
    }

    /// Its stderr lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.clock().lines.clone()
    }

    /// Whether some stderr line so far holds `pred`.
    pub fn said(&self, pred: impl Fn(&str) -> bool) -> bool {
        self.clock().lines.iter().any(|l| pred(l))
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has ended.
    pub fn ended(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().unwrap()
    }

    /// Poll `ready` until it holds; panic saying `what` (with its stderr)
    /// once fslab has worked `limit` without it, or ended.
    pub fn until(&mut self, limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
        while !ready() {
            if let Some(status) = self.ended() {
                if ready() {
                    return;
                }
                panic!("{what}: fslab ended ({status})\n--- stderr\n{}", self.lines().join("\n"));
            }
            let worked = self.worked();
            assert!(worked < limit, "{what}: not within {limit:?} of fslab's work ({worked:?})\n--- stderr\n{}", self.lines().join("\n"));
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// [`until`](Self::until) a line of its stderr holds `pred`.
    pub fn until_said(&mut self, limit: Duration, what: &str, pred: impl Fn(&str) -> bool) {
        let clock = self.clock.clone();
        self.until(limit, what, || clock.lock().unwrap_or_else(PoisonError::into_inner).lines.iter().any(|l| pred(l)));
    }

    /// SIGKILL it and reap it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Wait for its end: its output (stdout empty unless piped) and how
    /// long it worked.
    pub fn finish(mut self) -> (Output, Duration) {
        let status = self.child.wait().unwrap();
        if let Some(reader) = self.stderr.take() {
            reader.join().unwrap();
        }
        let stdout = self.stdout.take().map(|r| r.join().unwrap()).unwrap_or_default();
        let clock = self.clock();
        let stderr = clock.lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes();
        let worked = clock.worked();
        drop(clock);
        (Output { status, stdout, stderr }, worked)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.kill();
        }
    }
}
