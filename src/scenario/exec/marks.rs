//! A command's own durability points: when its device's writes are
//! recorded, the command finds in `FSLAB_CRASH_MARK` a path to write
//! lines to (a pipe fslab reads while the command runs), and each line
//! `NAME` marks `durable:NAME` at the write log's entry count when fslab
//! read it.
//!
//! The contract: write the line after the fsync (fdatasync, syncfs, sync
//! FILE) that made NAME durable has returned. The log's count includes a
//! flush once that flush has completed, and a sync call returns only after
//! its flush; the line is read after it was written, so the count read
//! then includes the sync's flush, and perhaps later ones (the mark is
//! then later than the sync, never earlier: a state is held to NAME from
//! the last flush before the mark). A name is 1 to 255 bytes of UTF-8
//! without control characters; empty lines are skipped; anything else
//! fails the case, saying what was written. The path is
//! `/proc/PID/fd/N` of fslab's own end, so a program that closes the
//! descriptors it inherited still finds it; a line is one `write` of at
//! most 4096 bytes, so lines from processes writing at once never mix.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::scenario::durable::Durable;

/// The environment variable naming the channel.
pub const ENV: &str = "FSLAB_CRASH_MARK";
/// The longest name, in bytes.
const NAME_BYTES: usize = 255;
/// The lines a failed case quotes.
const QUOTED: usize = 3;

/// An open channel, read while the command runs.
pub(super) struct Channel {
    writer: File,
    end: String,
    reader: JoinHandle<Vec<String>>,
}

impl Channel {
    /// Open the pipe and start reading it: each good line is marked with
    /// `durable`.
    pub(super) fn open(durable: Durable) -> Result<Channel> {
        let (reader, writer) = super::check::pipe().map_err(|e| Error::failed(format!("{ENV}: making a pipe: {e}")))?;
        // The line fslab ends the channel with: nothing a command writes
        // as a name (a NUL byte), and unique to this run and channel.
        let end = format!("\0fslab-end-{}-{:?}", std::process::id(), std::time::SystemTime::now());
        let ending = end.clone();
        let reader = std::thread::spawn(move || read_marks(BufReader::new(reader), &ending, &*durable));
        Ok(Channel { writer, end, reader })
    }

    /// The variable the command gets.
    pub(super) fn env(&self) -> (&'static str, std::ffi::OsString) {
        (ENV, super::check::proc_path(&self.writer))
    }

    /// End the channel once the command and its group are gone: every line
    /// they wrote is read first. What was wrong with them, if anything.
    pub(super) fn close(mut self) -> std::result::Result<(), String> {
        let ended = writeln!(self.writer, "{}", self.end);
        if let Err(e) = ended {
            return Err(format!("{ENV}: ending the channel: {e}"));
        }
        let errors = self.reader.join().unwrap_or_else(|_| vec!["reading the channel failed".to_string()]);
        match errors.len() {
            0 => Ok(()),
            n => {
                let quoted = errors.iter().take(QUOTED).cloned().collect::<Vec<_>>().join("; ");
                let more = if n > QUOTED { format!(" (and {} more)", n - QUOTED) } else { String::new() };
                Err(format!("the command's durability marks ({ENV}) were not all names: {quoted}{more}"))
            }
        }
    }
}

/// Read lines from `from` until the line ending with `end`, marking each
/// name with `durable`: what was wrong, in order.
fn read_marks(mut from: impl BufRead, end: &str, durable: &dyn Fn(&str) -> Result<()>) -> Vec<String> {
    let mut errors = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) => {
                errors.push("the channel closed before fslab ended it".to_string());
                return errors;
            }
            Ok(_) => {}
            Err(e) => {
                errors.push(format!("reading the channel: {e}"));
                return errors;
            }
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        // A last line without its newline comes just before fslab's own.
        let (text, last) = match line.strip_suffix(end.as_bytes()) {
            Some(before) => (before, true),
            None => (&line[..], false),
        };
        if !text.is_empty() {
            match name_of(text) {
                Ok(name) => {
                    if let Err(e) = durable(name) {
                        errors.push(e.to_string());
                    }
                }
                Err(why) => errors.push(why),
            }
        }
        if last {
            return errors;
        }
    }
}

/// The name a line holds, or what is wrong with it.
fn name_of(line: &[u8]) -> std::result::Result<&str, String> {
    let shown = || crate::text::escape(&String::from_utf8_lossy(&line[..line.len().min(60)])).into_owned();
    let name = std::str::from_utf8(line).map_err(|_| format!("the line `{}` is not UTF-8", shown()))?;
    if line.len() > NAME_BYTES {
        return Err(format!("the line `{}...` is {} bytes (a name is at most {NAME_BYTES})", shown(), line.len()));
    }
    if name.chars().any(char::is_control) {
        return Err(format!("the line `{}` holds a control character", shown()));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn marked() -> (Durable, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        let durable: Durable = Arc::new(move |name: &str| {
            into.lock().unwrap().push(name.to_string());
            Ok(())
        });
        (durable, seen)
    }

    #[test]
    fn each_line_written_to_the_path_is_a_mark_and_closing_reads_them_all() {
        let (durable, seen) = marked();
        let channel = Channel::open(durable).unwrap();
        let (_, path) = channel.env();
        let shell = format!("echo db > {0}; printf 'wal\\n\\n' > {0}; printf 'last' > {0}", path.to_string_lossy());
        assert!(std::process::Command::new("sh").args(["-c", &shell]).status().unwrap().success());
        channel.close().unwrap();
        assert_eq!(*seen.lock().unwrap(), ["db", "wal", "last"]);
    }

    #[test]
    fn a_line_that_is_not_a_name_fails_with_what_was_written() {
        let (durable, seen) = marked();
        let channel = Channel::open(durable).unwrap();
        let (_, path) = channel.env();
        let long = "y".repeat(300);
        let shell = format!("echo ok > {0}; printf 'a\\tb\\n' > {0}; echo {long} > {0}", path.to_string_lossy());
        assert!(std::process::Command::new("sh").args(["-c", &shell]).status().unwrap().success());
        let why = channel.close().unwrap_err();
        assert!(why.contains("control character") && why.contains("300 bytes") && why.contains(ENV), "{why}");
        assert_eq!(*seen.lock().unwrap(), ["ok"]);
    }
}
