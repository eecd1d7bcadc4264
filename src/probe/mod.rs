//! Probes: what every case is measured with — CPU time, block-layer
//! counters, tracepoints, a timeline sampler, the page cache's dirty peak,
//! the rest of the machine's load — each behind one [`Probe`] trait and
//! listed once in [`PROBES`]; the cold cache before a read-back lives here
//! too, as the phase it is.
//!
//! The design decision: a probe is started before the work and stopped
//! after it by a harness that only loops over [`PROBES`]; each probe
//! declares its figures ([`FigureSpec`]) in its own file. A probe whose
//! [`Window`] is [`Window::Work`] is started last and stopped first, so it
//! covers the work alone; the others also cover the `syncfs` after it, so
//! what the work left dirty counts as written by it. A probe may go on
//! past that window ([`Running::stop_window`]): what the file system still
//! writes after it, up to and including the target's unmount, is work the
//! window deferred, counted as figures of their own ([`Later`]). The one
//! rule every probe keeps: a figure that could not be measured (not root,
//! no tracefs, no block device, events lost) is put in as missing with the
//! reason, never as 0. A new probe is one file plus one line in [`PROBES`].

pub mod blockstat;
pub mod cold;
pub mod cpu;
pub mod load;
pub mod meminfo;
pub mod timeline;
pub mod trace;

#[cfg(test)]
pub(crate) mod testutil;

use std::path::Path;
use std::time::Duration;

pub use blockstat::{BlockDevice, BlockStat};
pub use cold::{ColdMethod, ReadBack};
pub use cpu::{CpuClock, CpuSpan};
pub use timeline::{Sampler, TimelinePoint};
pub use trace::{ReadBackTrace, TraceCounts, TraceRequest, TraceSession};

use crate::record::{FigureSpec, Figures};
use crate::ledger::Ledger;
use crate::ledger::cgroup::CgroupAt;
use crate::site::Caps;

/// What a probe may know of the case it measures.
#[derive(Debug, Clone, Copy)]
pub struct ProbeCtx<'a> {
    /// The run's ledger, for anything a probe makes (a trace instance).
    pub ledger: &'a Ledger,
    /// A name unique to this case within the run (`RUNID-N`).
    pub case_id: &'a str,
    /// The file-system type the work lands on.
    pub fs_type: &'a str,
    /// What the target can do.
    pub caps: Caps,
    /// The block device the file system sits on, when there is one to count.
    pub scratch: Option<&'a BlockDevice>,
    /// The whole disk beneath the target.
    pub backing: Option<&'a BlockDevice>,
    /// The tracefs this run uses, or why there is none.
    pub tracefs: Result<&'a Path, &'a str>,
    /// The timeline's sampling interval.
    pub interval: Duration,
    /// The case's memory cgroup (`--memory`), whose page cache the
    /// timeline samples as the work's own.
    pub cgroup: Option<CgroupAt<'a>>,
    /// The drive the disk model replays the case's block requests on
    /// (`--disk`).
    pub disk: &'a crate::model::Profile,
}

/// Which part of a case a probe covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The work alone (wall, user and system time).
    Work,
    /// The work and the `syncfs` after it.
    WorkAndSync,
}

/// What a stopped probe hands back.
#[derive(Debug, Default)]
pub struct Reading {
    /// Its figures, measured or missing with a reason.
    pub figures: Figures,
    /// The timeline, from the probe that samples one.
    pub timeline: Option<Vec<TimelinePoint>>,
    /// Why the case counts as measured on a busy machine, from the probe
    /// that watches the rest of it (`load`).
    pub busy: Option<String>,
    /// The block requests sampled and modelled, from the probe that
    /// traces them.
    pub requests: Vec<crate::record::RequestStream>,
}

/// Something that measures a case from outside the work.
pub trait Probe: Sync {
    /// A short name (`cpu`, `trace`).
    fn name(&self) -> &'static str;
    /// Every figure it can put in, declared once.
    fn figures(&self) -> &'static [FigureSpec];
    /// What part of the case it covers.
    fn window(&self) -> Window {
        Window::WorkAndSync
    }
    /// Start measuring. Never fails: a probe that cannot run says why in
    /// the figures it hands back when stopped.
    fn start<'a>(&self, ctx: &ProbeCtx<'a>) -> Box<dyn Running + 'a>;
    /// The figures it counts after the window, up to the unmount
    /// ([`Running::stop_window`]); none by default.
    fn deferred_figures(&self) -> &'static [FigureSpec] {
        &[]
    }
}

/// A started probe.
pub trait Running {
    /// Stop and hand back what was measured.
    fn stop(self: Box<Self>) -> Reading;

    /// End the window and hand back what was measured in it, with, for a
    /// probe that counts deferred work, what goes on counting until the
    /// target is unmounted. Nothing happens between the two: what the
    /// window's reading ends with, the later one starts from. By default,
    /// [`stop`](Running::stop) and nothing later.
    fn stop_window<'s>(self: Box<Self>) -> (Reading, Option<Box<dyn Later + 's>>)
    where
        Self: 's,
    {
        (self.stop(), None)
    }
}

/// What a probe counts after the window: the work the file system left
/// for later (a journal's checkpoint, writeback it had not done), up to
/// and including the unmount.
pub trait Later {
    /// Stop, once the target is unmounted, and hand back the deferred
    /// figures, measured or missing with why.
    fn stop(self: Box<Self>) -> Figures;
}

/// Every probe, in the order their figures are listed. Those covering the
/// work alone start last and stop first.
/// The machine's load is last: of the probes covering the work and its
/// sync it starts last and stops first, so its window is the case's alone.
pub static PROBES: &[&dyn Probe] =
    &[&cpu::Cpu, &blockstat::BlockCounters, &trace::Trace, &timeline::Timeline, &meminfo::DirtyPeak, &load::HostLoad];
