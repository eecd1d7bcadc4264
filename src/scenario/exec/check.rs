//! `exec --crash MODEL --check CMD`: the user's checker, run by `/bin/sh
//! -c` in each recovered crash state, judges it by its exit status (0
//! good, anything else bad).
//!
//! It runs as the command does (as fslab runs, so as root under sudo), in
//! the mounted state's copy of the work folder (read-write: a state is
//! thrown away after it is judged), with `FSLAB_MOUNT`, `FSLAB_FS` and
//! `FSLAB_DEVICE` as the command had them for the state, and
//! `FSLAB_CRASH_DURABLE` naming a file that lists, one a line, the names
//! the command marked durable whose flush the state holds. It leads its
//! own process group, recorded in the ledger while it runs; it gets
//! SIGKILL when fslab dies, its group is ended when it exits, and after
//! [`TIMEOUT`] it is ended and the state judged bad; a signal to fslab
//! ends it at once. Its stdout and stderr go into one pipe; a bad state
//! keeps their first and last lines. The pipe is read a short while
//! after its group is gone: a process the checker left outside its group
//! (`setsid CMD &`) that holds it is named and ended, and the judging
//! ends with that error (the case fails: a state cannot be judged while
//! something the checker started may still change it).
//! A checker the shell cannot start (exit 126 or 127: not found, not
//! executable) is an error of the run, not a verdict on a state.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::window::Place;
use crate::error::{Error, Result};
use crate::ledger::Resource;
use crate::scenario::durable::{Looked, StateAt, StateChecker};

/// The shell a checker runs in.
const SHELL: &str = "/bin/sh";
/// How long one state's checker may run before it is ended.
pub const TIMEOUT: Duration = Duration::from_secs(120);
/// A bad state keeps this many of its checker's first lines, and as many
/// of its last.
const LINES_KEPT: usize = 8;
/// The longest line kept, in characters.
const LINE_CHARS: usize = 200;
/// The most output read from one checker (the rest is drained, unread).
const READ_BYTES: usize = 1 << 20;

/// The user's checker of crash states.
#[derive(Debug, Clone)]
pub struct CommandChecker {
    /// The shell command.
    pub command: String,
}

impl CommandChecker {
    /// Refuse, before anything is made, a checker the shell cannot read
    /// (`sh -n -c`: syntax only, nothing run), or a machine without the
    /// shell.
    pub fn validate(command: &str) -> Result<()> {
        if command.trim().is_empty() {
            return Err(Error::usage("--check: the checker is empty; give a shell command, e.g. --check 'test -s FILE'"));
        }
        let out = Command::new(SHELL)
            .args(["-n", "-c", command])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::environment(format!("--check runs its command with {SHELL}, which could not start: {e}")))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(Error::usage(format!("--check: {SHELL} cannot read the checker `{command}`: {said}")))
    }
}

impl StateChecker for CommandChecker {
    fn check(&self, dir: &Path, at: &StateAt<'_>) -> Result<Looked> {
        let durable = durable_file(at.durable)?;
        let (reader, writer) = pipe().map_err(|e| Error::failed(format!("--check: making a pipe: {e}")))?;
        let mut command = Command::new(SHELL);
        let to_both = writer.try_clone().map_err(|e| Error::failed(format!("--check: copying a pipe: {e}")))?;
        command
            .args(["-c", &self.command])
            .current_dir(dir)
            .envs(Place::of(dir).env())
            .env("FSLAB_CRASH_DURABLE", proc_path(&durable))
            .stdin(Stdio::null())
            .stdout(to_both)
            .stderr(writer)
            .process_group(0);
        crate::sys::process::kill_with_parent(&mut command);
        let record = |pid| at.ledger.record(Resource::child(pid));
        let spawned = crate::sys::process::spawn_recorded(&mut command, record);
        // The pipe's writing ends are the checker's alone from here: its
        // output ends when its group has closed them.
        drop(command);
        let (mut child, token) = spawned.map_err(|not| match not {
            crate::sys::process::NotStarted::Record(e) => e,
            crate::sys::process::NotStarted::Spawn(e) => Error::environment(format!("--check: {SHELL} could not start: {e}")),
        })?;
        let end = super::drain::GroupEnd::default();
        let name = super::drain::pipe_name(&reader).map_err(|e| Error::failed(format!("--check: reading a pipe: {e}")));
        let ends = end.clone();
        let output = std::thread::spawn(move || {
            let mut kept = Vec::new();
            let _ = super::drain::read(&reader, &ends, super::drain::Until::Closed, &mut |chunk| {
                let room = READ_BYTES.saturating_sub(kept.len()).min(chunk.len());
                kept.extend_from_slice(&chunk[..room]);
            });
            kept
        });
        let started = Instant::now();
        let waited = wait_until(&mut child, started + TIMEOUT);
        // Whatever it left running goes (and, past its time or on a
        // signal to fslab, itself).
        let _ = at.ledger.release(token);
        let status = match waited {
            Ok(Some(status)) => Some(status),
            Ok(None) => {
                let _ = child.wait();
                None
            }
            Err(e) => return Err(Error::failed(format!("--check: waiting for the checker: {e}"))),
        };
        // Its output is read a short while more: a process that escaped
        // its group may hold the pipe open (then it is named and ended).
        end.set();
        let output = output.join().unwrap_or_default();
        let escaped = super::drain::end_escaped(&[name?], end.deadline().unwrap_or_else(Instant::now));
        crate::interrupt::check()?;
        if !escaped.is_empty() {
            return Err(Error::failed(format!("--check: {}", super::drain::escaped_failure("the checker", &escaped))));
        }
        let said = bounded(&String::from_utf8_lossy(&output));
        let Some(status) = status else {
            return Ok(Looked::Verdict(Some(with_output(format!("ran past its {} s and was ended", TIMEOUT.as_secs()), &said))));
        };
        Ok(Looked::Verdict(match (status.code(), status.signal()) {
            (Some(0), _) => None,
            (Some(code @ (126 | 127)), _) => {
                return Err(Error::usage(format!(
                    "--check: the checker could not start ({SHELL} exited with status {code}: a program not found or not \
                     executable): `{}` said: {}",
                    self.command,
                    said.replace('\n', " / ")
                )));
            }
            (Some(code), _) => Some(with_output(format!("exited with status {code}"), &said)),
            (_, Some(signal)) => Some(with_output(format!("was killed by {}", crate::interrupt::signal_name(signal)), &said)),
            _ => Some(with_output("ended abnormally".to_string(), &said)),
        }))
    }

    fn about(&self) -> String {
        format!("the command `{}`: a state is good when it exits 0", self.command)
    }

    fn whole(&self) -> bool {
        true
    }
}

/// The names durable at a state, one a line, in a file only this process
/// holds (a memory file: nothing is left on disk, whatever ends fslab).
fn durable_file(names: &[String]) -> Result<std::fs::File> {
    let fail = |e: std::io::Error| Error::failed(format!("--check: writing the list of durable names: {e}"));
    let fd = rustix::fs::memfd_create("fslab-crash-durable", rustix::fs::MemfdFlags::CLOEXEC).map_err(|e| fail(e.into()))?;
    let mut file = std::fs::File::from(fd);
    for name in names {
        writeln!(file, "{name}").map_err(fail)?;
    }
    Ok(file)
}

/// A pipe, both ends close-on-exec: (reading, writing).
pub(super) fn pipe() -> std::io::Result<(std::fs::File, std::fs::File)> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    Ok((std::fs::File::from(read), std::fs::File::from(write)))
}

/// The path another process of fslab's user opens `file` by, while fslab
/// holds it: `/proc/PID/fd/N`, so a program that closes the descriptors
/// it inherited still finds it.
pub(super) fn proc_path(file: &impl AsRawFd) -> OsString {
    format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd()).into()
}

/// Wait for `child` until `deadline`, or a signal to fslab: its status,
/// or `None` when it still runs then.
fn wait_until(child: &mut std::process::Child, deadline: Instant) -> std::io::Result<Option<std::process::ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline || crate::interrupt::pending().is_some() {
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// `what`, then the output under it when there is any.
fn with_output(what: String, output: &str) -> String {
    if output.is_empty() { what } else { format!("{what}; its output:\n{output}") }
}

/// `text`'s first and last [`LINES_KEPT`] lines, each at most
/// [`LINE_CHARS`] characters, saying how many were left out between.
fn bounded(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| if l.chars().count() > LINE_CHARS { format!("{}...", l.chars().take(LINE_CHARS).collect::<String>()) } else { l.to_string() })
        .collect();
    if lines.len() <= 2 * LINES_KEPT {
        return lines.join("\n");
    }
    let left_out = lines.len() - 2 * LINES_KEPT;
    let mut kept = lines[..LINES_KEPT].to_vec();
    kept.push(format!("... ({left_out} lines left out) ..."));
    kept.extend_from_slice(&lines[lines.len() - LINES_KEPT..]);
    kept.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Ledger;

    fn check(command: &str, durable: &[String]) -> Result<Looked> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("here"), b"x").unwrap();
        let ledger = Ledger::for_tests();
        CommandChecker { command: command.into() }.check(dir.path(), &StateAt { ledger: &ledger, durable })
    }

    #[test]
    fn its_exit_status_judges_and_it_sees_the_folder_and_the_durable_names() {
        assert_eq!(check("test -e here", &[]).unwrap(), Looked::Verdict(None));
        let names = ["a".to_string(), "b c".to_string()];
        let looked = check("cat \"$FSLAB_CRASH_DURABLE\"; echo err >&2; exit 3", &names).unwrap();
        assert_eq!(looked, Looked::Verdict(Some("exited with status 3; its output:\na\nb c\nerr".into())));
        let looked = check("kill -9 $$", &[]).unwrap();
        assert_eq!(looked, Looked::Verdict(Some("was killed by SIGKILL".into())));
    }

    #[test]
    fn a_checker_that_cannot_start_is_an_error_and_one_the_shell_cannot_read_is_refused() {
        let e = check("no-such-program-here", &[]).unwrap_err();
        assert!(e.message.contains("could not start") && e.message.contains("no-such-program-here"), "{e}");
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(CommandChecker::validate("if then").unwrap_err().message.contains("cannot read"));
        assert!(CommandChecker::validate(" ").is_err());
        CommandChecker::validate("sqlite3 db 'PRAGMA integrity_check' | grep -qx ok").unwrap();
    }

    #[test]
    fn long_output_keeps_its_first_and_last_lines() {
        let text: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let kept = bounded(&text);
        assert!(kept.starts_with("1\n2\n") && kept.ends_with("99\n100"), "{kept}");
        assert!(kept.contains("(84 lines left out)"), "{kept}");
        assert_eq!(bounded(&"x".repeat(300)).len(), LINE_CHARS + 3);
    }
}
