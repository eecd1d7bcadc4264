//! One run's lab: its plan, ledger, sysctls, tracefs and runner — what
//! every case of the run is measured with.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::probe::trace;
use crate::runner::{InProcess, Runner};
use crate::target::ledger::{self, CleanedRun, Ledger};
use crate::target::sysctl::{self, SysctlLock, SysctlSetting};
use crate::target::{TargetOptions, TargetSpec};

/// What to run on, and how to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Targets, in order.
    pub targets: Vec<TargetSpec>,
    /// How to make scratch targets.
    pub target_options: TargetOptions,
    /// Sysctls in force for the whole run.
    pub sysctls: Vec<SysctlSetting>,
    /// Timeline sampling interval.
    pub interval: Duration,
    /// Read everything back with a cold cache after the work.
    pub cold_read: bool,
}

/// One run: its ledger, sysctls and tracing.
pub struct Lab {
    /// The run's id.
    pub id: String,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    pub(super) plan: Plan,
    pub(super) tracefs: std::result::Result<PathBuf, &'static str>,
    pub(super) cases_started: std::cell::Cell<u32>,
    pub(super) runner: Box<dyn Runner>,
    // Declared before the lock so the ledger (which restores sysctls) is
    // dropped first.
    ledger: Ledger,
    _sysctl_lock: Option<SysctlLock>,
}

impl std::fmt::Debug for Lab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lab").field("id", &self.id).field("runner", &self.runner.name()).finish_non_exhaustive()
    }
}

/// Release what dead runs left (fslab's start-up duty and `fslab cleanup`).
pub fn cleanup_dead_runs() -> Result<Vec<CleanedRun>> {
    ledger::cleanup_dead(&ledger::state_dir())
}

impl Lab {
    /// Check the plan can run here, then start the run: ledger, sysctls,
    /// tracefs. Nothing is made before every target passed its checks.
    pub fn open(plan: Plan) -> Result<Lab> {
        Lab::open_in(plan, &ledger::state_dir())
    }

    /// [`open`](Lab::open) with the ledger in `state` (tests use a folder
    /// of their own).
    pub fn open_in(plan: Plan, state: &std::path::Path) -> Result<Lab> {
        crate::interrupt::install();
        crate::target::check(&plan.targets)?;
        let root = rustix::process::geteuid().is_root();
        if !plan.sysctls.is_empty() && !root {
            return Err(Error::environment("--sysctl needs root: run as root, or leave --sysctl out"));
        }
        for setting in &plan.sysctls {
            sysctl::read(&setting.key)?;
        }
        let id = crate::record::run_id();
        let sysctl_lock = if plan.sysctls.is_empty() { None } else { Some(sysctl::lock(state)?) };
        let ledger = Ledger::create(state, &id)?;
        sysctl::apply(&ledger, &plan.sysctls)?;
        let tracefs = trace::tracefs_for_run(&ledger, &plan.target_options.scratch, &id);
        Ok(Lab {
            id,
            started_at: crate::record::utc_now(),
            plan,
            tracefs,
            cases_started: std::cell::Cell::new(0),
            runner: Box::new(InProcess),
            ledger,
            _sysctl_lock: sysctl_lock,
        })
    }

    /// The plan this lab runs.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The run's ledger, for work that starts processes or makes files
    /// that must be released.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Finish the run: release everything and report what could not be,
    /// every item of it.
    pub fn close(self) -> Result<()> {
        let errors = self.ledger.release_all();
        if errors.is_empty() {
            return Ok(());
        }
        let what: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        Err(Error::failed(format!(
            "the results are kept, but the run could not release everything it made: {}; end what still uses it \
             (a process the work left behind), then run `fslab cleanup`",
            what.join("; ")
        )))
    }
}
