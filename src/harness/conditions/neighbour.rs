//! A neighbour's fsync (`--neighbour-fsync INTERVAL`): beside the work,
//! another writer appends 4 KiB to a file of its own in the work's folder
//! and fsyncs it at once and then every INTERVAL (`0s`: one after
//! another), as a logger or a database next door would. Each fsync commits the journal (ext4) or forces the log (xfs,
//! btrfs's log tree) with whatever of the work is in it, so a strategy
//! that is safe only while nothing forces the log mid-work shows it:
//! a rename without fsync lands on disk before the data it names.
//!
//! The neighbour's file is made and synced with the setup (before the
//! `work_start` mark), written from a thread of fslab's own from the
//! mark to the end of the work, and removed once the work's syncfs and
//! `work_end` are past, so the layout figures and the cold read never see
//! it. Its writes and flushes are the device's like the work's: the cost
//! figures of a case with a neighbour include them (`neighbour_fsyncs`
//! says how many).

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::record::{Better, FigureSpec, Figures, Kind};

/// The neighbour's file, in the work's folder.
pub const FILE: &str = ".fslab-neighbour";

/// The bytes each of its writes appends.
const WRITE_BYTES: usize = 4096;

const FSYNCS: FigureSpec = FigureSpec::new("neighbour_fsyncs", "count", Better::Lower, Kind::Timing)
    .heading("nb fsyncs")
    .about("fsyncs the neighbour (--neighbour-fsync) made while the work ran, each after a 4 KiB append");

/// The figures, declared once.
pub const FIGURES: &[FigureSpec] = &[FSYNCS];

/// Make the neighbour's file in `dir` and sync it, with the setup.
pub fn prepare(dir: &Path) -> Result<PathBuf> {
    let path = dir.join(FILE);
    let file = writer().create_new(true).open(&path).map_err(|e| Error::io(&path, "make the neighbour's file", e))?;
    file.sync_all().map_err(|e| Error::io(&path, "fsync the neighbour's file", e))?;
    Ok(path)
}

/// A neighbour writing and fsyncing until [`Neighbour::stop`].
pub struct Neighbour {
    stop: Sender<()>,
    thread: JoinHandle<std::result::Result<u64, String>>,
}

impl Neighbour {
    /// Start writing to the file [`prepare`] made: at once, then every
    /// `every` (zero: one fsync after another).
    pub fn start(path: &Path, every: Duration) -> Result<Neighbour> {
        let file = writer().open(path).map_err(|e| Error::io(path, "open the neighbour's file", e))?;
        let (stop, stopped) = mpsc::channel::<()>();
        let shown = path.display().to_string();
        let thread = std::thread::spawn(move || {
            let block = [b'n'; WRITE_BYTES];
            let mut done = 0u64;
            loop {
                file.write_all_at(&block, done * WRITE_BYTES as u64)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| format!("the neighbour's write and fsync of {shown} failed: {e}"))?;
                done += 1;
                match stopped.recv_timeout(every) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return Ok(done),
                }
            }
        });
        Ok(Neighbour { stop, thread })
    }

    /// Stop it, and put how many fsyncs it made into `figures`: an error
    /// when one of them failed.
    pub fn stop(self, figures: &mut Figures) -> std::result::Result<(), String> {
        let _ = self.stop.send(());
        let done = self.thread.join().map_err(|_| "the neighbour's thread panicked".to_string())?;
        figures.put(&FSYNCS, done.as_ref().ok().map(|&n| n as f64), "the neighbour's fsync failed");
        done.map(drop)
    }
}

/// Remove the neighbour's file once the work is measured.
pub fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, "remove the neighbour's file", e)),
        _ => Ok(()),
    }
}

/// An open for writing that never goes through a link (`O_NOFOLLOW`).
fn writer() -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    options
}

/// Read `--neighbour-fsync`'s value: `off`, or an interval (`1s`,
/// `250ms`, `2.5s`) of up to an hour; `0s` is one fsync after another,
/// which a work of a few milliseconds still meets.
pub fn parse_interval(text: &str) -> std::result::Result<Option<Duration>, String> {
    let text = text.trim();
    let not_one = || format!("`{text}` is not an interval: give `off` or a time such as 1s or 250ms");
    if text == "off" {
        return Ok(None);
    }
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(not_one());
    };
    let seconds = number.parse::<f64>().ok().filter(|n| n.is_finite()).map(|n| n * scale).ok_or_else(not_one)?;
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(format!("`{text}`: give an interval from 0s (one fsync after another) to 3600s"));
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_read_in_seconds_or_milliseconds_and_off_is_none() {
        assert_eq!(parse_interval("off"), Ok(None));
        assert_eq!(parse_interval("1s"), Ok(Some(Duration::from_secs(1))));
        assert_eq!(parse_interval("250ms"), Ok(Some(Duration::from_millis(250))));
        assert_eq!(parse_interval("2.5s"), Ok(Some(Duration::from_millis(2500))));
        assert_eq!(parse_interval("0s"), Ok(Some(Duration::ZERO)));
        for bad in ["1", "2h", "-1s", "nans", "3601s", ""] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_neighbour_appends_and_fsyncs_until_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = prepare(dir.path()).unwrap();
        assert!(prepare(dir.path()).is_err(), "a file already there is never taken over");
        let neighbour = Neighbour::start(&path, Duration::from_millis(10)).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let mut figures = Figures::new();
        neighbour.stop(&mut figures).unwrap();
        let done = figures.value("neighbour_fsyncs").expect("counted");
        assert!(done >= 1.0, "{done}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), done as u64 * WRITE_BYTES as u64);
        remove(&path).unwrap();
        assert!(!path.exists());
    }
}
