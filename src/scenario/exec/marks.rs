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
//! fails the case, saying what was written (the first few lines wrong,
//! and how many). A line is read into at most 256 bytes; the rest of a
//! longer one is skipped unread into memory. The path is `/proc/PID/fd/N`
//! of fslab's own end, so a program that closes the descriptors it
//! inherited still finds it; a line is one `write` of at most 4096
//! bytes, so lines from processes writing at once never mix.
//!
//! The channel's end: fslab holds the pipe's writing end itself (the
//! path must stay open), so it never sees an end of file, and it reads
//! no line of its own to know the end (a process that reads the path
//! would take it). It learns from the process that the command's group
//! is gone, then reads what is left until the pipe is empty
//! (`drain.rs`); a last line without its newline counts.

use std::fs::File;
use std::thread::JoinHandle;

use super::drain::{self, GroupEnd, Until};
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
    name: String,
    reader: JoinHandle<Errors>,
}

impl Channel {
    /// Open the pipe and start reading it until `end` says the command's
    /// group is gone: each good line is marked with `durable`.
    pub(super) fn open(durable: Durable, end: &GroupEnd) -> Result<Channel> {
        let fail = |e: std::io::Error| Error::failed(format!("{ENV}: making a pipe: {e}"));
        let (reader, writer) = super::check::pipe().map_err(fail)?;
        let name = drain::pipe_name(&reader).map_err(fail)?;
        let end = end.clone();
        let reader = std::thread::spawn(move || {
            let mut lines = Lines::default();
            let read = drain::read(&reader, &end, Until::Empty, &mut |chunk| lines.feed(chunk, &*durable));
            lines.finish(&*durable);
            if let Err(e) = read {
                lines.errors.push(format!("reading the channel: {e}"));
            }
            lines.errors
        });
        Ok(Channel { writer, name, reader })
    }

    /// The variable the command gets.
    pub(super) fn env(&self) -> (&'static str, std::ffi::OsString) {
        (ENV, super::check::proc_path(&self.writer))
    }

    /// The pipe, as `/proc/PID/fd` names it.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// End the channel once the command and its group are gone (and its
    /// [`GroupEnd`] is set): every line they wrote is read first. What was
    /// wrong with them, if anything.
    pub(super) fn close(self) -> std::result::Result<(), String> {
        let errors = self.reader.join().unwrap_or_else(|_| {
            let mut errors = Errors::default();
            errors.push("reading the channel failed".to_string());
            errors
        });
        match errors.count {
            0 => Ok(()),
            n => {
                let quoted = errors.first.join("; ");
                let more = if n > QUOTED as u64 { format!(" (and {} more)", n - QUOTED as u64) } else { String::new() };
                Err(format!("the command's durability marks ({ENV}) were not all names: {quoted}{more}"))
            }
        }
    }
}

/// What was wrong: the first [`QUOTED`], and how many in all.
#[derive(Debug, Default)]
struct Errors {
    first: Vec<String>,
    count: u64,
}

impl Errors {
    fn push(&mut self, why: String) {
        if self.first.len() < QUOTED {
            self.first.push(why);
        }
        self.count += 1;
    }
}

/// Lines being read: the current one's first bytes (one more than a name
/// may hold, so a longer one is told), and how many more it had.
#[derive(Debug, Default)]
struct Lines {
    line: Vec<u8>,
    more: u64,
    errors: Errors,
}

impl Lines {
    /// Take `chunk`, marking each line it ends.
    fn feed(&mut self, mut chunk: &[u8], durable: &dyn Fn(&str) -> Result<()>) {
        while !chunk.is_empty() {
            let (part, ended) = match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            let room = (NAME_BYTES + 1).saturating_sub(self.line.len()).min(part.len());
            self.line.extend_from_slice(&part[..room]);
            self.more += (part.len() - room) as u64;
            chunk = &chunk[part.len() + usize::from(ended)..];
            if ended {
                self.line_ended(durable);
            }
        }
    }

    /// The channel's end: a last line without its newline counts.
    fn finish(&mut self, durable: &dyn Fn(&str) -> Result<()>) {
        self.line_ended(durable);
    }

    fn line_ended(&mut self, durable: &dyn Fn(&str) -> Result<()>) {
        let total = self.line.len() as u64 + self.more;
        if total > 0 {
            match name_of(&self.line, total) {
                Ok(name) => {
                    if let Err(e) = durable(name) {
                        self.errors.push(e.to_string());
                    }
                }
                Err(why) => self.errors.push(why),
            }
        }
        self.line.clear();
        self.more = 0;
    }
}

/// The name a line holds (its first bytes `line`, `total` bytes in all),
/// or what is wrong with it.
fn name_of(line: &[u8], total: u64) -> std::result::Result<&str, String> {
    let shown = || crate::text::escape(&String::from_utf8_lossy(&line[..line.len().min(60)])).into_owned();
    if total > NAME_BYTES as u64 {
        return Err(format!("the line `{}...` is {total} bytes (a name is at most {NAME_BYTES})", shown()));
    }
    let name = std::str::from_utf8(line).map_err(|_| format!("the line `{}` is not UTF-8", shown()))?;
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
        let end = GroupEnd::default();
        let channel = Channel::open(durable, &end).unwrap();
        let (_, path) = channel.env();
        let shell = format!("echo db > {0}; printf 'wal\\n\\n' > {0}; printf 'last' > {0}", path.to_string_lossy());
        assert!(std::process::Command::new("sh").args(["-c", &shell]).status().unwrap().success());
        end.set();
        channel.close().unwrap();
        assert_eq!(*seen.lock().unwrap(), ["db", "wal", "last"]);
    }

    #[test]
    fn a_line_that_is_not_a_name_fails_with_what_was_written() {
        let (durable, seen) = marked();
        let end = GroupEnd::default();
        let channel = Channel::open(durable, &end).unwrap();
        let (_, path) = channel.env();
        let long = "y".repeat(300);
        let shell = format!("echo ok > {0}; printf 'a\\tb\\n' > {0}; echo {long} > {0}", path.to_string_lossy());
        assert!(std::process::Command::new("sh").args(["-c", &shell]).status().unwrap().success());
        end.set();
        let why = channel.close().unwrap_err();
        assert!(why.contains("control character") && why.contains("300 bytes") && why.contains(ENV), "{why}");
        assert_eq!(*seen.lock().unwrap(), ["ok"]);
    }

    #[test]
    fn an_over_long_line_is_skipped_unkept_and_bad_lines_are_counted_not_kept() {
        let (durable, seen) = marked();
        let mut lines = Lines::default();
        // A 64 MiB line, fed as a pipe gives it, then a good name.
        let chunk = vec![b'z'; 1 << 20];
        for _ in 0..64 {
            lines.feed(&chunk, &*durable);
            assert!(lines.line.capacity() <= 4 * (NAME_BYTES + 1), "{}", lines.line.capacity());
        }
        lines.feed(b"\nok\n", &*durable);
        // 100,000 lines with a control character: three kept, all counted.
        for _ in 0..100_000 {
            lines.feed(b"a\x01\n", &*durable);
        }
        lines.finish(&*durable);
        assert_eq!(*seen.lock().unwrap(), ["ok"]);
        assert_eq!((lines.errors.first.len(), lines.errors.count), (QUOTED, 100_001));
        assert!(lines.errors.first[0].contains(&format!("{} bytes", 64u64 << 20)), "{:?}", lines.errors.first);
    }

    #[test]
    fn a_process_that_reads_the_channel_cannot_keep_it_from_ending() {
        let (durable, seen) = marked();
        let end = GroupEnd::default();
        let channel = Channel::open(durable, &end).unwrap();
        let (_, path) = channel.env();
        // A reader left running takes whatever it can; the channel still
        // ends once the group is gone.
        let mut thief = std::process::Command::new("cat").arg(&path).stdout(std::process::Stdio::null()).spawn().unwrap();
        let shell = format!("echo one > {0}", path.to_string_lossy());
        assert!(std::process::Command::new("sh").args(["-c", &shell]).status().unwrap().success());
        end.set();
        let started = std::time::Instant::now();
        let closed = std::thread::spawn(move || channel.close());
        while !closed.is_finished() && started.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = thief.kill();
        let _ = thief.wait();
        assert!(closed.is_finished(), "the channel did not end within 10 s with a reader on it");
        closed.join().unwrap().unwrap();
        assert!(seen.lock().unwrap().len() <= 1);
    }
}
