//! A run's lifecycle: open the store, then the lab, record the header;
//! measure cases one by one, each stored the moment it is measured; then
//! mark the run complete (or not), release everything, and hand the whole
//! record back for printing.
//!
//! The store comes first so a bad `--store` costs nothing; what the
//! machine cannot do is said before any store is touched; releasing comes
//! before printing, so a closed stdout or an interruption never leaves
//! anything behind. A release that fails does not cost the results: they
//! are stored already, and the caller prints them before the failure.

use super::{Condition, Keeper, Lab, Phase, Plan, read_environment};
use crate::error::{Error, Result};
use crate::progress::{CaseName, Mode, Progress};
use crate::record::{Case, PlanRef, RunRecord, Status, Verdict};
use crate::scenario::WorkSpec;
use crate::scenario::Work;
use crate::site::TargetSpec;

/// One run under way.
pub struct Run {
    lab: Lab,
    keeper: Keeper,
    header: RunRecord,
    cases: Vec<Case>,
    planned: usize,
    progress: Progress,
    /// The plan key the next measured case is stored under (`run --plan`).
    key: Option<String>,
}

/// A run ended: its whole record, and where it was stored (or why it was
/// not stored whole).
pub struct Finished {
    /// The record, cases and verdicts included.
    pub record: RunRecord,
    /// The store's location, `None` with `--no-store`, or the error that
    /// kept the run from being stored whole.
    pub stored: std::result::Result<Option<String>, Error>,
    /// What could not be released at the end (said after the results, and
    /// exit 4), or nothing.
    pub released: std::result::Result<(), Error>,
}

impl Run {
    /// Start a run of `planned` cases, its progress said as `progress`
    /// says: check the targets, open the store (`None`: keep nothing),
    /// then the lab, and record the header; `from` is the plan file it
    /// runs a share of, if any.
    pub fn start(plan: Plan, store: Option<&str>, tags: &[String], planned: usize, progress: Mode, from: Option<PlanRef>) -> Result<Run> {
        // What the machine cannot do is said before any store is touched.
        Lab::check(&plan)?;
        // A wait for the machine's sysctl lock is said the run's way.
        let progress = Progress::start(progress, planned);
        let mut keeper = Keeper::open(store)?;
        let lab = Lab::open(plan)?;
        // Sorted and without repeats, as the store gives them back.
        let tags: Vec<String> = tags.iter().cloned().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        let header = RunRecord {
            id: lab.id.clone(),
            tag: tags.first().cloned(),
            tags,
            started_at: lab.started_at.clone(),
            command: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
            complete: false,
            environment: read_environment(&lab.plan().target_options.scratch),
            sysctls: lab.plan().sysctls.iter().map(|s| (s.key.clone(), s.value.clone())).collect(),
            cases: Vec::new(),
            verdicts: Vec::new(),
            plan: from,
        };
        if let Err(e) = keeper.begin(&header) {
            let _ = lab.close();
            return Err(e);
        }
        Ok(Run { lab, keeper, header, cases: Vec::new(), planned, progress, key: None })
    }

    /// The run's lab.
    pub fn lab(&self) -> &Lab {
        &self.lab
    }

    /// The cases measured so far, in order.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// Say `line` on stdout (`stderr`: on stderr) without tearing the
    /// progress bar: how `hunt` prints each step as it goes.
    pub fn say(&self, line: &str, stderr: bool) {
        self.progress.say(line, stderr);
    }

    /// Change how many cases the run plans: a hunt knows only at its end
    /// how many points it measured, and a run is complete when it measured
    /// all it planned.
    pub fn set_planned(&mut self, planned: usize) {
        self.planned = planned;
        self.progress.set_planned(planned);
    }

    /// The planned cases' time limits, in order ([`Progress::set_limits`]).
    pub fn set_limits(&self, limits: impl IntoIterator<Item = Option<std::time::Duration>>) {
        self.progress.set_limits(limits);
    }

    /// Whether the user asked the run to stop: no more cases then.
    pub fn interrupted(&self) -> bool {
        crate::interrupt::pending().is_some()
    }

    /// Store the next case measured under the plan key `key`, when the run
    /// runs a plan (`run --plan`): with the plan's id and its repeat, what
    /// a rerun of it replaces.
    pub fn key_next(&mut self, key: &str) {
        self.key = self.header.plan.as_ref().map(|_| key.to_string());
    }

    /// Make the aged images `cases` start from, several at once, before
    /// the first case ([`Lab::age_ahead`]); said on stderr.
    pub fn age_ahead(&self, cases: &[super::CaseStart]) {
        self.lab.age_ahead(cases, &|line| self.progress.say(line, true));
    }

    /// Measure `work` (built from `job`) on `spec` under `condition` as
    /// repetition `repeat`, store the case and keep it; `what` names it in
    /// progress (`mmap-fill on xfs@120M`).
    pub fn measure(
        &mut self,
        spec: &TargetSpec,
        job: &WorkSpec,
        condition: &Condition,
        repeat: u32,
        what: &str,
        work: &mut dyn Work,
    ) {
        let place = condition.place(&spec.label());
        self.progress.case_started(CaseName { scenario: job.scenario.clone(), place, repeat, what: what.to_string() });
        let progress = &self.progress;
        let mut case = self.lab.measure(spec, job, condition, repeat, &|phase: Phase| progress.phase(phase.as_str()), work);
        case.plan_key = self.key.take();
        self.keeper.keep(&case);
        let failed = (case.status == Status::Failed).then(|| case.error.as_deref().unwrap_or("no reason given"));
        self.progress.case_ended(failed);
        self.cases.push(case);
    }

    /// End the run: mark it in the store, release everything, and return
    /// the record with what could not be released. An interruption is the
    /// error.
    pub fn finish(self, verdicts: Vec<Verdict>) -> Result<Finished> {
        let Run { lab, keeper, header, cases, planned, progress, .. } = self;
        let complete = cases.len() == planned && crate::interrupt::pending().is_none();
        let record = RunRecord { cases, verdicts, complete, ..header };
        let stored = keeper.finish(complete, &record.verdicts);
        let released = lab.close();
        // Said last, before the results reach stdout.
        progress.finish(&record.id, complete);
        crate::interrupt::check()?;
        Ok(Finished { record, stored, released })
    }
}
