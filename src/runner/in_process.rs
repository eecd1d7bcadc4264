//! The in-process runner: the work runs on the harness's own thread, as
//! every case has so far.

use std::path::Path;

use super::{Runner, WorkSpec};
use crate::error::Result;
use crate::scenario::{Work, WorkOutcome};
use crate::ledger::Ledger;

/// Run the work right here, on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcess;

impl Runner for InProcess {
    fn name(&self) -> &'static str {
        "in-process"
    }

    fn run(&self, _spec: &WorkSpec, work: &mut dyn Work, dir: &Path, ledger: &Ledger) -> Result<WorkOutcome> {
        work.run(dir, ledger)
    }
}
