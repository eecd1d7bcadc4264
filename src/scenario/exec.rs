//! `fslab exec`: any command as the measured work.
//!
//! The command runs with the target as its working directory (also in
//! `$FSLAB_MOUNT`), as the leader of its own process group — so a signal
//! to fslab reaches everything it started, and whatever it leaves running
//! is ended when it exits, by group id, never by name; a process that
//! left the group (`setsid CMD &`) and holds its output or its mark
//! channel is found by that (`drain.rs`), named, ended by id, and fails
//! the case. Its stdout and
//! stderr are kept, up to [`KEPT_BYTES`] each, and shown as they come with
//! `--show-output`. It is told where it runs in `FSLAB_MOUNT`, `FSLAB_FS`
//! and `FSLAB_DEVICE`; its exit status, what it wrote in its own window
//! (before fslab's syncfs) and, with `--parse fio`, fio's own results are
//! figures of the case. When its device's writes are recorded it may mark
//! its own durability points (`FSLAB_CRASH_MARK`, `marks.rs`), and with
//! `--check` a command of the user's judges each crash state (`check.rs`).

mod check;
mod drain;
mod fio;
mod marks;
mod window;

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

pub use crate::record::CommandOutput;
pub use check::CommandChecker;
pub use window::FIGURES;

use super::WorkOutcome;
use super::durable::{Durable, StateChecker};
use crate::error::{Error, Result};
use crate::ledger::{Ledger, Resource};
use crate::sys::process::NotStarted;
use window::Place;

/// How much of each output stream is kept (the rest is counted).
pub const KEPT_BYTES: usize = 1 << 20;

/// The scenario name a command's cases go under.
pub const NAME: &str = "exec";

/// A command as measured work.
#[derive(Debug, Clone)]
pub struct CommandWork {
    /// The command and its arguments.
    pub argv: Vec<OsString>,
    /// Whether to read everything back with a cold cache after it.
    pub cold_read: bool,
    /// Whose results to read from the command's stdout.
    pub parse: Option<OutputParser>,
    /// Where the command's output is shown while it runs (not a parameter
    /// of the case: it changes nothing measured).
    pub echo: Echo,
    /// The shell command that judges each crash state (`--check`).
    pub check: Option<String>,
    /// How the command's durability marks are taken, for the next run
    /// only (handed when the device's writes are recorded).
    pub marks: Option<Marks>,
}

/// The way a command's marks are taken ([`Durable`], which shows itself as
/// nothing more than that it is there).
#[derive(Clone)]
pub struct Marks(pub Durable);

impl std::fmt::Debug for Marks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Marks")
    }
}

/// A program whose own report on stdout becomes figures (`--parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputParser {
    /// fio with `--output-format=json`: per job and direction, bandwidth,
    /// IOPS and the p50/p99 completion latency.
    Fio,
}

impl OutputParser {
    /// The word the command line and the case's parameters use.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputParser::Fio => "fio",
        }
    }
}

/// Where a command's output is shown live (`--show-output`); it is kept
/// for the record either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Echo {
    /// Not shown.
    #[default]
    Off,
    /// Its stdout to fslab's stdout, its stderr to fslab's stderr.
    Streams,
    /// Both to fslab's stderr, so fslab's stdout stays one JSON document.
    Stderr,
}

impl CommandWork {
    /// The parameters a command's case records: its argv (as UTF-8, lossy)
    /// and whether it is read back cold.
    pub fn params(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut params = serde_json::Map::new();
        let argv: Vec<String> = self.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        params.insert("command".into(), argv.into());
        params.insert("cold_read".into(), self.cold_read.into());
        if let Some(parser) = self.parse {
            params.insert("parse".into(), parser.as_str().into());
        }
        if let Some(check) = &self.check {
            params.insert("check".into(), check.as_str().into());
        }
        params
    }

    /// The work a command's recorded parameters name.
    pub fn from_params(params: &serde_json::Map<String, serde_json::Value>) -> Result<CommandWork> {
        let argv = params
            .get("command")
            .and_then(|c| c.as_array())
            .and_then(|words| words.iter().map(|w| w.as_str().map(OsString::from)).collect::<Option<Vec<_>>>())
            .ok_or_else(|| Error::usage("exec: the parameter `command` is not a list of words"))?;
        let cold_read = params.get("cold_read").and_then(|c| c.as_bool()).unwrap_or(false);
        let parse = match params.get("parse").and_then(|p| p.as_str()) {
            None => None,
            Some("fio") => Some(OutputParser::Fio),
            Some(other) => return Err(Error::usage(format!("exec: unknown output parser `{other}` (this fslab knows fio)"))),
        };
        let check = params.get("check").and_then(|c| c.as_str()).map(str::to_string);
        Ok(CommandWork { argv, cold_read, parse, echo: Echo::Off, check, marks: None })
    }

    /// `fslab exec` of this command once: the flags that shape its work
    /// (`--cold-read`, `--parse`, `--check`), then `--` and the command
    /// (as its case records it, UTF-8).
    pub fn words(&self) -> super::WorkWords {
        let mut flags = Vec::new();
        if self.cold_read {
            flags.push("--cold-read".to_string());
        }
        if let Some(parser) = self.parse {
            flags.push(format!("--parse={}", parser.as_str()));
        }
        if let Some(check) = &self.check {
            flags.push(format!("--check={check}"));
        }
        let command = self.argv.iter().map(|a| a.to_string_lossy().into_owned());
        let last = std::iter::once("--".to_string()).chain(command).collect();
        super::WorkWords { command: vec![NAME.to_string()], flags, last, inherits_env: true }
    }
}

impl super::Work for CommandWork {
    fn run(&mut self, dir: &Path, ledger: &Ledger) -> Result<WorkOutcome> {
        let marks = self.marks.take().map(|m| m.0);
        let mut outcome = run_command(ledger, &self.argv, dir, self.echo, marks)?;
        if let (Some(OutputParser::Fio), Some(output)) = (self.parse, &outcome.command) {
            match fio::figures(&output.stdout) {
                Ok(figures) => outcome.figures.extend(figures),
                Err(why) => {
                    outcome.failure = Some(match outcome.failure.take() {
                        Some(first) => format!("{first}; {why}"),
                        None => why,
                    })
                }
            }
        }
        Ok(outcome)
    }

    fn mark_durable_with(&mut self, mark: Durable) {
        self.marks = Some(Marks(mark));
    }

    fn state_checker(&self) -> Option<Box<dyn StateChecker>> {
        self.check.as_ref().map(|command| Box::new(CommandChecker { command: command.clone() }) as Box<dyn StateChecker>)
    }

    /// A guest cannot stream the command's output as it comes: what it
    /// kept is shown when its case is back, where `--show-output` says.
    fn came_back(&mut self, case: &crate::record::Case) {
        let Some(output) = &case.command else { return };
        let (out_to, err_to) = match self.echo {
            Echo::Off => return,
            Echo::Streams => (Shown::Stdout, Shown::Stderr),
            Echo::Stderr => (Shown::Stderr, Shown::Stderr),
        };
        out_to.write(output.stdout.as_bytes());
        err_to.write(output.stderr.as_bytes());
    }
}

/// Run `argv` in `dir` and wait for it, recording its process group in
/// the ledger for the time it runs; its output is shown live as `echo`
/// says, and the lines it writes to `FSLAB_CRASH_MARK` are marked with
/// `marks` when given. The outcome's figures are its exit status and its
/// own window's writes.
pub fn run_command(ledger: &Ledger, argv: &[OsString], dir: &Path, echo: Echo, marks: Option<Durable>) -> Result<WorkOutcome> {
    let (program, args) = argv.split_first().ok_or_else(|| Error::usage("no command given after --"))?;
    let place = Place::of(dir);
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .envs(place.env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    crate::sys::process::kill_with_parent(&mut command);
    let end = drain::GroupEnd::default();
    let channel = marks.map(|m| marks::Channel::open(m, &end)).transpose()?;
    if let Some(channel) = &channel {
        let (name, value) = channel.env();
        command.env(name, value);
    }
    let shown: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let window = place.open_window();
    let record = |pid| ledger.record(Resource::child(pid));
    let (mut child, token) = crate::sys::process::spawn_recorded(&mut command, record).map_err(|not| match not {
        NotStarted::Record(e) => e,
        NotStarted::Spawn(e) => {
            let mut err = Error::io(Path::new(program), "start the command", e);
            if err.kind == crate::error::ErrorKind::Usage {
                err.message.push_str(" (is it on PATH? the command runs in the scratch mount)");
            }
            err
        }
    })?;
    let pid = child.id();
    let forward = crate::interrupt::ForwardTo::group(pid);
    let (out_to, err_to) = match echo {
        Echo::Off => (None, None),
        Echo::Streams => (Some(Shown::Stdout), Some(Shown::Stderr)),
        Echo::Stderr => (Some(Shown::Stderr), Some(Shown::Stderr)),
    };
    let mut pipes: Vec<String> = channel.iter().map(|c| c.name().to_string()).collect();
    let mut reader = |stream: Option<File>, to: Option<Shown>| {
        let stream = stream?;
        pipes.extend(drain::pipe_name(&stream).ok());
        let end = end.clone();
        Some(std::thread::spawn(move || keep(&stream, &end, to)))
    };
    let stdout = reader(child.stdout.take().map(|s| File::from(std::os::fd::OwnedFd::from(s))), out_to);
    let stderr = reader(child.stderr.take().map(|s| File::from(std::os::fd::OwnedFd::from(s))), err_to);
    let status = child.wait().map_err(|e| Error::io(Path::new(program), "wait for the command", e));
    let mut figures = crate::record::Figures::new();
    window.close(place.device.as_ref(), &mut figures);
    drop(forward);
    // Anything the command left running in its group goes now: it would
    // keep the file system busy and the figures moving.
    let _ = ledger.release(token);
    // What is left in the pipes is read, for a short while only: a
    // process that escaped the group may hold them open.
    end.set();
    let (out, out_dropped) = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let (err, err_dropped) = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    // Before the channel closes: a reader of it would see its end, and go.
    let escaped = drain::end_escaped(&pipes, end.deadline().unwrap_or_else(std::time::Instant::now));
    let marked = channel.map_or(Ok(()), marks::Channel::close);
    let status = status?;

    use std::os::unix::process::ExitStatusExt;
    window::put_exit_status(status.code(), status.signal(), &mut figures);
    let output = CommandOutput {
        argv: shown,
        exit_code: status.code(),
        signal: status.signal(),
        stdout: out,
        stderr: err,
        dropped_bytes: out_dropped + err_dropped,
    };
    let ended = match (status.code(), status.signal()) {
        (Some(0), _) => None,
        (Some(code), _) => Some(format!("the command exited with status {code}")),
        (_, Some(signal)) => Some(format!("the command was killed by {}", crate::interrupt::signal_name(signal))),
        _ => Some("the command ended abnormally".to_string()),
    };
    let escaped = (!escaped.is_empty()).then(|| drain::escaped_failure("the command", &escaped));
    let failures: Vec<String> = ended.into_iter().chain(marked.err()).chain(escaped).collect();
    let failure = (!failures.is_empty()).then(|| failures.join("; "));
    Ok(WorkOutcome { figures, command: Some(output), failure })
}

/// Where one of the command's streams is shown.
#[derive(Debug, Clone, Copy)]
enum Shown {
    Stdout,
    Stderr,
}

impl Shown {
    /// Write `bytes` through now (a closed stream is not the command's
    /// failure: it is kept all the same).
    fn write(self, bytes: &[u8]) {
        let _ = match self {
            Shown::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Shown::Stderr => std::io::stderr().lock().write_all(bytes),
        };
    }
}

/// Read a stream until its end (or a short while after the command's
/// group is gone, `end`), keeping the first [`KEPT_BYTES`] and showing
/// everything as it comes when `shown` says where.
fn keep(stream: &File, end: &drain::GroupEnd, shown: Option<Shown>) -> (String, u64) {
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let _ = drain::read(stream, end, drain::Until::Closed, &mut |chunk| {
        if let Some(to) = shown {
            to.write(chunk);
        }
        let room = KEPT_BYTES.saturating_sub(kept.len()).min(chunk.len());
        kept.extend_from_slice(&chunk[..room]);
        dropped += (chunk.len() - room) as u64;
    });
    (String::from_utf8_lossy(&kept).into_owned(), dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_beyond_the_limit_is_counted_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, vec![b'x'; KEPT_BYTES + 10]).unwrap();
        let (kept, dropped) = keep(&File::open(&path).unwrap(), &drain::GroupEnd::default(), None);
        assert_eq!(kept.len(), KEPT_BYTES);
        assert_eq!(dropped, 10);
    }
}
