//! Runners: where the measured part of a case executes — in this process
//! today (a `--memory` limit moves the process into the case's memory
//! cgroup around the runner, see `harness::measure`); a VM guest is the
//! next kind, one file behind [`Runner`].
//!
//! The design decision: a runner gets both the work, built here for the
//! unmeasured steps (prepare, review), and the [`WorkSpec`] it was built
//! from, so a runner that executes elsewhere can build the same work
//! again from a scenario name and parameters (`scenario::work_for`).

mod in_process;

use std::path::Path;

pub use in_process::InProcess;

use crate::error::Result;
pub use crate::scenario::WorkSpec;
use crate::scenario::{Work, WorkOutcome};
use crate::ledger::Ledger;

/// Where a case's measured work runs.
pub trait Runner: Sync {
    /// A short name for the record (`in-process`).
    fn name(&self) -> &'static str;

    /// Run the measured part of `work` (built from `spec`) in `dir`. The
    /// CPU probe counts the calling thread and its waited-for children,
    /// so a runner either works on this thread or waits for a child.
    /// Processes the work starts are recorded in `ledger`.
    fn run(&self, spec: &WorkSpec, work: &mut dyn Work, dir: &Path, ledger: &Ledger) -> Result<WorkOutcome>;
}
