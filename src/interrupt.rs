//! Ctrl-C, SIGTERM and SIGHUP during a run: stop the measured command,
//! let the run unwind so every resource is released, then die of the same
//! signal so the shell sees an interrupted program.
//!
//! The handler only records the signal and kills the process group of the
//! command being measured (one fslab started, known by id); everything
//! else happens on the main thread, which checks [`check`] between steps.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

use rustix::process::{Pid, Signal};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::error::{Error, Result};

static PENDING: AtomicI32 = AtomicI32::new(0);
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);
static INSTALL: Once = Once::new();

/// Start catching SIGINT, SIGTERM and SIGHUP (once per process).
pub fn install() {
    INSTALL.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::Builder::new()
            .name("fslab-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    PENDING.store(signal, Ordering::SeqCst);
                    if let Some(group) = Pid::from_raw(CHILD_GROUP.load(Ordering::SeqCst)) {
                        let _ = rustix::process::kill_process_group(group, Signal::TERM);
                    }
                }
            })
            .ok();
    });
}

/// The signal received, if any.
pub fn pending() -> Option<i32> {
    match PENDING.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// An error if a signal arrived: the caller stops and unwinds.
pub fn check() -> Result<()> {
    match pending() {
        None => Ok(()),
        Some(signal) => Err(Error::failed(format!("interrupted by {}", signal_name(signal)))),
    }
}

/// The name of a signal number, for messages.
pub fn signal_name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGBUS => "SIGBUS".into(),
        other => format!("signal {other}"),
    }
}

/// While alive, a signal to fslab is passed on to process group `pid` (a
/// measured command started as its own group leader).
#[derive(Debug)]
pub struct ForwardTo(());

impl ForwardTo {
    /// Forward to group `pid` until dropped; if a signal already arrived,
    /// pass it on at once.
    pub fn group(pid: u32) -> ForwardTo {
        CHILD_GROUP.store(pid as i32, Ordering::SeqCst);
        if pending().is_some() {
            if let Some(group) = Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process_group(group, Signal::TERM);
            }
        }
        ForwardTo(())
    }
}

impl Drop for ForwardTo {
    fn drop(&mut self) {
        CHILD_GROUP.store(0, Ordering::SeqCst);
    }
}

/// After everything is released: if a signal ended the run, die of it
/// with the default action, as an interrupted program should.
pub fn die_if_interrupted() {
    if let Some(signal) = pending() {
        let _ = signal_hook::low_level::emulate_default_handler(signal);
    }
}
