//! `fslab exec`: any command as the measured work.
//!
//! The command runs with the target as its working directory (also in
//! `$FSLAB_MOUNT`), as the leader of its own process group — so a signal
//! to fslab reaches everything it started, and whatever it leaves running
//! is ended when it exits, by group id, never by name. Its stdout and
//! stderr are kept, up to [`KEPT_BYTES`] each.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

pub use crate::record::CommandOutput;

use super::WorkOutcome;
use crate::error::{Error, Result};
use crate::target::ledger::{self, Ledger, Resource};

/// How much of each output stream is kept (the rest is counted).
pub const KEPT_BYTES: usize = 1 << 20;

/// A command as measured work.
#[derive(Debug)]
pub struct CommandWork<'a> {
    /// The run's ledger, where the command's process group is recorded.
    pub ledger: &'a Ledger,
    /// The command and its arguments.
    pub argv: &'a [OsString],
}

impl super::Work for CommandWork<'_> {
    fn run(&mut self, dir: &Path) -> Result<WorkOutcome> {
        run_command(self.ledger, self.argv, dir)
    }
}

/// Run `argv` in `dir` and wait for it, recording its process group in
/// the ledger for the time it runs.
pub fn run_command(ledger: &Ledger, argv: &[OsString], dir: &Path) -> Result<WorkOutcome> {
    let (program, args) = argv.split_first().ok_or_else(|| Error::usage("no command given after --"))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .env("FSLAB_MOUNT", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    crate::sys::process::kill_with_parent(&mut command);
    let shown: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut child = command.spawn().map_err(|e| {
        let mut err = Error::io(Path::new(program), "start the command", e);
        if err.kind == crate::error::ErrorKind::Usage {
            err.message.push_str(" (is it on PATH? the command runs in the scratch mount)");
        }
        err
    })?;
    let pid = child.id();
    let token = ledger.record(Resource::Child {
        pid: pid as i32,
        start_ticks: ledger::start_ticks(pid as i32).unwrap_or(0),
    });
    let forward = crate::interrupt::ForwardTo::group(pid);
    let stdout = child.stdout.take().map(|s| std::thread::spawn(move || keep(s)));
    let stderr = child.stderr.take().map(|s| std::thread::spawn(move || keep(s)));
    let status = child.wait().map_err(|e| Error::io(Path::new(program), "wait for the command", e));
    drop(forward);
    // Anything the command left running in its group goes now: it would
    // keep the file system busy and the figures moving.
    if let Ok(token) = token {
        let _ = ledger.release(token);
    }
    let status = status?;
    let (out, out_dropped) = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let (err, err_dropped) = stderr.and_then(|h| h.join().ok()).unwrap_or_default();

    use std::os::unix::process::ExitStatusExt;
    let output = CommandOutput {
        argv: shown,
        exit_code: status.code(),
        signal: status.signal(),
        stdout: out,
        stderr: err,
        dropped_bytes: out_dropped + err_dropped,
    };
    let failure = match (status.code(), status.signal()) {
        (Some(0), _) => None,
        (Some(code), _) => Some(format!("the command exited with status {code}")),
        (_, Some(signal)) => Some(format!("the command was killed by {}", crate::interrupt::signal_name(signal))),
        _ => Some("the command ended abnormally".to_string()),
    };
    Ok(WorkOutcome { figures: Default::default(), command: Some(output), failure })
}

/// Read a stream to its end, keeping the first [`KEPT_BYTES`].
fn keep(mut stream: impl Read) -> (String, u64) {
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut buf = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = KEPT_BYTES.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buf[..room]);
                dropped += (n - room) as u64;
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_beyond_the_limit_is_counted_not_kept() {
        let data = vec![b'x'; KEPT_BYTES + 10];
        let (kept, dropped) = keep(&data[..]);
        assert_eq!(kept.len(), KEPT_BYTES);
        assert_eq!(dropped, 10);
    }
}
