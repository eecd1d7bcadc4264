//! Reading what a command's process group writes into pipes, with an end
//! that does not wait on anyone else: once the group is gone, a pipe is
//! read until its end, or a short while ([`GRACE`]) if something still
//! holds it open. A process that escaped the group (`setsid CMD &`, a
//! daemon) and holds one of the pipes is then named and ended.
//!
//! The design decision: a pipe's end of file comes only when every
//! writer has closed it, and a process outside the group is out of reach
//! of the group's kill; so fslab never waits for the end of file alone.
//! It learns that the command ended from the process (its wait), reads
//! on with a deadline, and finds the holders left by `/proc/PID/fd`
//! (the pipe's inode), which only the command's own descendants can hold
//! (the pipes are close-on-exec in fslab). Those it ends with SIGKILL, by
//! process id, just after seeing them hold the pipe: they were started
//! by the command, keep the scratch file system (or a crash state) busy,
//! and would keep writing to it after the case; and the case is failed,
//! naming each (pid and command line), since what it measured went on
//! past the command's end.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a pipe is read, and its holders waited for, after the group
/// writing into it is gone.
pub(super) const GRACE: Duration = Duration::from_secs(2);

/// When the group writing into a pipe was seen gone (unset while it
/// runs), shared with the threads reading its pipes.
#[derive(Debug, Clone, Default)]
pub(super) struct GroupEnd(Arc<Mutex<Option<Instant>>>);

impl GroupEnd {
    /// Say the group is gone now.
    pub(super) fn set(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(Instant::now);
    }

    /// When the group was seen gone.
    pub(super) fn at(&self) -> Option<Instant> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When reading after the group's end stops.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.at().map(|at| at + GRACE)
    }
}

/// When a pipe read after the group's end stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Until {
    /// At its end of file, or [`GRACE`] after the group's end.
    Closed,
    /// As soon as it is empty after the group's end (fslab holds its
    /// writing end too), or [`GRACE`] after it.
    Empty,
}

/// Read `from` (made non-blocking here) until `until` says, handing each
/// chunk read to `each`: an error reading it, if any.
pub(super) fn read(from: &File, end: &GroupEnd, until: Until, each: &mut dyn FnMut(&[u8])) -> std::io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(from.as_fd())?;
    rustix::fs::fcntl_setfl(from.as_fd(), flags | rustix::fs::OFlags::NONBLOCK)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut pause = Duration::from_millis(1);
    loop {
        // Read the deadline before the pipe: bytes written before the
        // group's end are in the pipe by then.
        let deadline = end.deadline();
        match (&*from).read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                each(&buf[..n]);
                pause = Duration::from_millis(1);
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if deadline.is_some() && until == Until::Empty || deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(());
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The pipe `file` is one end of, as `/proc/PID/fd` links name it.
pub(super) fn pipe_name(file: &File) -> std::io::Result<String> {
    Ok(format!("pipe:[{}]", file.metadata()?.ino()))
}

/// Wait until no process but fslab holds any of the pipes `names`, or
/// until `deadline`; then end each one still holding one, by SIGKILL to
/// its process id: each named (`pid N (COMMAND LINE)`).
pub(super) fn end_escaped(names: &[String], deadline: Instant) -> Vec<String> {
    let mut pause = Duration::from_millis(1);
    loop {
        let held = holders(names);
        if held.is_empty() {
            return Vec::new();
        }
        if Instant::now() >= deadline {
            return held
                .into_iter()
                .map(|(pid, shown)| {
                    let ended = rustix::process::Pid::from_raw(pid)
                        .map(|p| rustix::process::kill_process(p, rustix::process::Signal::KILL));
                    match ended {
                        Some(Ok(())) | Some(Err(rustix::io::Errno::SRCH)) => format!("pid {pid} ({shown}), ended"),
                        Some(Err(e)) => format!("pid {pid} ({shown}), which could not be ended: {e}"),
                        None => format!("pid {pid} ({shown})"),
                    }
                })
                .collect();
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// The processes other than fslab holding any of the pipes `names` open:
/// their pids and command lines.
fn holders(names: &[String]) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else { return found };
    for entry in procs.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        let holds = fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| names.iter().any(|n| l.as_os_str() == n.as_str())));
        if holds {
            found.push((pid, command_line(pid)));
        }
    }
    found
}

/// The command line of process `pid`, bounded, for messages.
fn command_line(pid: i32) -> String {
    let words = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let line = words.split(|b| *b == 0).filter(|w| !w.is_empty()).map(String::from_utf8_lossy).collect::<Vec<_>>().join(" ");
    let line: String = line.chars().take(120).collect();
    crate::text::escape(&line).into_owned()
}

/// The failure of a case whose `what` left `escaped` holding its pipes.
pub(super) fn escaped_failure(what: &str, escaped: &[String]) -> String {
    format!(
        "{what} left {} running outside its process group, holding its output ({}); a command must not leave processes \
         behind (setsid, daemons): wait for them, or close their output",
        if escaped.len() == 1 { "a process".to_string() } else { format!("{} processes", escaped.len()) },
        escaped.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_an_escaped_process_holds_is_read_until_the_grace_and_the_process_named_and_ended() {
        let (reader, writer) = super::super::check::pipe().unwrap();
        let name = pipe_name(&reader).unwrap();
        let mut command = std::process::Command::new("sh");
        command.args(["-c", "echo before; setsid sleep 1000 & echo after"]).stdout(writer);
        crate::sys::process::kill_with_parent(&mut command);
        let started = Instant::now();
        let status = command.status().unwrap();
        assert!(status.success());
        drop(command);
        let end = GroupEnd::default();
        end.set();
        let mut kept = Vec::new();
        read(&reader, &end, Until::Closed, &mut |b| kept.extend_from_slice(b)).unwrap();
        assert_eq!(String::from_utf8_lossy(&kept), "before\nafter\n");
        let escaped = end_escaped(std::slice::from_ref(&name), end.deadline().unwrap());
        assert!(started.elapsed() < GRACE + Duration::from_secs(3), "{:?}", started.elapsed());
        assert_eq!(escaped.len(), 1, "{escaped:?}");
        assert!(escaped[0].contains("sleep 1000") && escaped[0].ends_with("ended"), "{escaped:?}");
        // Gone (the kill is sent; its holder lets go as it dies).
        assert!(end_escaped(&[name], Instant::now() + Duration::from_secs(5)).is_empty());
    }

    #[test]
    fn a_pipe_whose_writers_all_closed_ends_at_once() {
        let (reader, writer) = super::super::check::pipe().unwrap();
        let name = pipe_name(&reader).unwrap();
        let status = std::process::Command::new("sh").args(["-c", "echo hi"]).stdout(writer).status().unwrap();
        assert!(status.success());
        let end = GroupEnd::default();
        end.set();
        let started = Instant::now();
        let mut kept = Vec::new();
        read(&reader, &end, Until::Closed, &mut |b| kept.extend_from_slice(b)).unwrap();
        assert_eq!(kept, b"hi\n");
        assert!(end_escaped(&[name], end.deadline().unwrap()).is_empty());
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
