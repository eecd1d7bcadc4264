//! One run's lab: its plan, ledger, sysctls and tracefs — what
//! every case of the run is measured with.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::probe::trace;
use crate::ledger::folder::{FolderRole, OwnedDir};
use crate::ledger::{self, CleanedRun, Ledger};
use crate::ledger::cgroup::{self, MemoryController};
use crate::age_cache::{CacheEntry, ImageCache};
use crate::harness::conditions::{self, sysctl::SysctlSetting};
use crate::ledger::sysctl::{self, SysctlLock};
use crate::site::{TargetOptions, TargetSpec};

/// What to run on, and how to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Targets, in order.
    pub targets: Vec<TargetSpec>,
    /// How to make scratch targets.
    pub target_options: TargetOptions,
    /// Sysctls in force for the whole run.
    pub sysctls: Vec<SysctlSetting>,
    /// The conditions each target is measured under, in order (one
    /// default condition when the run varies none).
    pub conditions: Vec<super::Condition>,
    /// Timeline sampling interval.
    pub interval: Duration,
    /// When the files are read back with a cold cache after the work.
    pub cold_read: ColdRead,
    /// How scratch targets start when not fresh (`--age`, `--fill`).
    pub start: Option<super::StartPlan>,
    /// How guests are sized, when a condition boots a kernel in one
    /// (`--kernel IMAGE`).
    pub guest: Option<super::GuestPlan>,
    /// The modelled drive the layout's read time is for (`--disk`).
    pub disk: crate::model::Profile,
    /// Drives some scenarios are modelled on instead of `disk`, by
    /// scenario name: with `--preset seeds` and no `--disk`, each seed's
    /// own, where its report names one.
    pub scenario_disks: Vec<(String, crate::model::Profile)>,
    /// How each recorded case's crash states are judged (`--crash`).
    pub crash: Option<super::crash_states::CrashPlan>,
}

/// When a case's files are read back with a cold cache after its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColdRead {
    /// Every case (`exec --cold-read`).
    Always,
    /// The cases whose work asks for it (create-file, mmap-fill: the read
    /// rate their seeds reported).
    AsAsked,
    /// None: `hunt` judges each point on the seed's claim alone, which no
    /// read-back figure decides, and a read-back of a badly placed file
    /// is much of a point's time (a 256 MiB file in 65,536 pieces, read
    /// through the loop device's backing file: about 20 s of a point's
    /// 30-50).
    Never,
}

impl ColdRead {
    /// Whether a case whose work asks for a read-back (`wants`) gets one.
    pub fn reads(self, wants: bool) -> bool {
        match self {
            ColdRead::Always => true,
            ColdRead::AsAsked => wants,
            ColdRead::Never => false,
        }
    }
}

impl Plan {
    /// The modelled drive `scenario`'s cases are read on.
    pub fn disk_for(&self, scenario: &str) -> &crate::model::Profile {
        self.scenario_disks.iter().find(|(name, _)| name == scenario).map_or(&self.disk, |(_, p)| p)
    }

    /// Whether the run sets any sysctl, run-wide or per case (and so takes
    /// the sysctl lock for its whole life).
    pub fn sets_sysctls(&self) -> bool {
        !self.sysctls.is_empty() || self.conditions.iter().any(|c| !c.sysctls.is_empty())
    }
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
    /// The memory controller, when some case has a memory limit.
    pub(super) memory: Option<MemoryController>,
    /// The image cache, opened when the first case needs it.
    pub(super) image_cache: std::cell::OnceCell<ImageCache>,
    /// The cache entries this run's cases start from, by key.
    pub(super) bases: std::cell::RefCell<std::collections::HashMap<String, std::sync::Arc<CacheEntry>>>,
    /// Keys whose image could not be made, and why: later cases of the
    /// same start fail at once instead of aging again.
    pub(super) failed_bases: std::cell::RefCell<std::collections::HashMap<String, String>>,
    /// Keys made before the first case ([`Lab::age_ahead`]), with how and
    /// in how many seconds: the first case of each says so.
    pub(super) made_ahead: std::cell::RefCell<std::collections::HashMap<String, (crate::age_cache::Provenance, f64)>>,
    /// The run's reflink pool once a case needed it, or why it could not
    /// be made. Declared before the ledger: its open files go before the
    /// ledger unmounts it.
    pub(super) pool: std::cell::RefCell<Option<std::result::Result<crate::site::pool::Pool, String>>>,
    // Declared before the lock so the ledger (which restores sysctls) is
    // dropped first.
    ledger: Ledger,
    /// The machine's sysctl lock: exclusive for the whole run when it sets
    /// sysctls of its own (`--sysctl`), else shared, and exclusive only
    /// while a case whose condition sets sysctls runs ([`Lab::hold_for`]).
    sysctl_lock: std::cell::RefCell<Option<SysctlLock>>,
    /// Whether the run holds the lock exclusively throughout.
    sysctl_exclusive: bool,
    /// The state folder (where dead runs' ledgers are), for taking the lock
    /// again.
    state: PathBuf,
}

impl std::fmt::Debug for Lab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lab").field("id", &self.id).finish_non_exhaustive()
    }
}

/// Release what dead runs left (fslab's start-up duty and `fslab cleanup`).
/// Their sysctls are put back only under the machine's sysctl lock, taken
/// exclusively: if a live run holds it, the changes wait for whoever takes
/// it next, and any left are reported as not yet put back. With `wait`
/// (`cleanup --wait`, root only), the lock is queued for as a run queues
/// for it, past the turnstile, so a stream of runs that each hold it
/// shared cannot keep the put-back waiting for ever.
pub fn cleanup_dead_runs(wait: bool) -> Result<Vec<CleanedRun>> {
    let state = ledger::state_dir();
    let root = rustix::process::geteuid().is_root();
    let lock = if wait && root { sysctl::lock(sysctl::Hold::Exclusive)? } else { sysctl::try_exclusive() };
    let put_back = if lock.is_some() { sysctl::put_back_left() } else { Ok(Vec::new()) };
    let mut cleaned = ledger::cleanup_dead(&state)?;
    match put_back {
        Ok(lines) if !lines.is_empty() => cleaned.insert(0, CleanedRun { ledger: journal_path(), released: lines, ..Default::default() }),
        Ok(_) => {}
        Err(e) => cleaned.insert(0, CleanedRun { ledger: journal_path(), failed: vec![e.message], ..Default::default() }),
    }
    Ok(cleaned)
}

/// The machine's sysctl journal, as `cleanup` names it.
fn journal_path() -> PathBuf {
    std::path::Path::new(sysctl::MACHINE_DIR).join("sysctl.journal")
}

/// Take the machine's sysctl lock as `hold`, then, holding it exclusively,
/// put back what dead runs left — in the machine's journal (whatever their
/// state folder) and in this state folder's ledgers — before this run
/// reads "old" values: no later start can then put them back under this
/// run's own. A dead run's sysctl that cannot be put back now stops the
/// run (exit 3). Shared, it only waits out runs that change sysctls.
fn lock_sysctls(state: &std::path::Path, hold: sysctl::Hold) -> Result<Option<SysctlLock>> {
    let Some(lock) = sysctl::lock(hold)? else { return Ok(None) };
    if hold == sysctl::Hold::Shared {
        return Ok(Some(lock));
    }
    for line in sysctl::put_back_left()? {
        eprintln!("fslab: {line}");
    }
    let cleaned = ledger::cleanup_dead(state)?;
    let mut stuck = Vec::new();
    for run in cleaned.iter().filter(|r| !r.is_empty()) {
        eprint!("fslab: a dead run left resources: {run}");
        // `ledger::give_back::describe` names a sysctl entry `sysctl KEY (...)`.
        stuck.extend(run.failed.iter().filter(|f| f.starts_with("sysctl ")));
    }
    if let Some(first) = stuck.first() {
        return Err(Error::environment(format!(
            "a dead run's sysctl is not back to its old value ({first}), so the value now is not the machine's own: fix that, then run `fslab cleanup`"
        )));
    }
    Ok(Some(lock))
}

impl Lab {
    /// Check, before anything is made, that the plan can run here: every
    /// target, and every sysctl (root, the key exists, can be read and
    /// written).
    pub fn check(plan: &Plan) -> Result<()> {
        crate::site::check(&plan.targets)?;
        let root = rustix::process::geteuid().is_root();
        if plan.conditions.iter().any(|c| c.memory.is_some()) {
            if !root {
                return Err(Error::environment("--memory needs root (it makes a memory cgroup): run as root, or leave --memory out"));
            }
            cgroup::memory_controller()?;
        }
        if !plan.sets_sysctls() {
            return Ok(());
        }
        if !root {
            return Err(Error::environment("--sysctl needs root: run as root, or leave --sysctl out"));
        }
        for condition in &plan.conditions {
            let mut all = plan.sysctls.clone();
            all.extend(condition.sysctls.iter().map(|s| s.setting.clone()));
            conditions::sysctl::check(&all)?;
        }
        conditions::sysctl::check(&plan.sysctls)
    }

    /// Check the plan can run here, then start the run: ledger, sysctls,
    /// tracefs. Nothing is made before every target passed its checks.
    pub fn open(plan: Plan) -> Result<Lab> {
        Lab::open_in(plan, &ledger::state_dir())
    }

    /// [`open`](Lab::open) with the ledger in `state` (tests use a folder
    /// of their own).
    pub fn open_in(mut plan: Plan, state: &std::path::Path) -> Result<Lab> {
        crate::interrupt::install();
        Lab::check(&plan)?;
        let root = rustix::process::geteuid().is_root();
        // fslab's own folders: made if absent, refused unless they are this
        // user's alone — before anything is made in them. The scratch
        // folder is resolved once, here, to the canonical path every later
        // step (and a later cleanup) uses.
        let state_dir = OwnedDir::open_or_make(state, FolderRole::State)?;
        let open_scratch = || OwnedDir::open_or_make(&plan.target_options.scratch, FolderRole::Scratch);
        let scratch = if plan.targets.iter().any(|t| t.needs_scratch()) {
            Some(open_scratch()?)
        } else if root && trace::find_tracefs().is_none() {
            // Only for a tracefs of the run's own: without a scratch folder
            // that is ours alone, the run goes on without tracepoints.
            open_scratch().ok()
        } else {
            None
        };
        if let Some(dir) = &scratch {
            plan.target_options.scratch = dir.path().to_path_buf();
        }
        // The aged-image cache folder is checked (and made) with fslab's
        // other folders, before anything is made: one not ours alone stops
        // the run here (exit 3), not in its first case.
        let image_cache = std::cell::OnceCell::new();
        let shaped = plan.start.as_ref().is_some_and(|s| s.age.is_some() || s.fill.is_some())
            || plan.conditions.iter().any(|c| c.age.is_some() || c.fill.is_some());
        if shaped && plan.targets.iter().any(|t| t.needs_scratch()) {
            let dir = plan.start.as_ref().and_then(|s| s.cache_dir.clone());
            let dir = dir.unwrap_or_else(|| crate::age_cache::default_dir(&plan.target_options.scratch));
            let _ = image_cache.set(ImageCache::open(&dir)?);
        }
        let id = crate::record::run_id();
        // A run's own sysctls hold the lock exclusively throughout; a
        // condition's only while its cases run, so a long run with one such
        // condition (the preset's) does not shut out every other run.
        let exclusive = !plan.sysctls.is_empty();
        let hold = if exclusive { sysctl::Hold::Exclusive } else { sysctl::Hold::Shared };
        let state = state_dir.path().to_path_buf();
        let sysctl_lock = lock_sysctls(&state, hold)?;
        let memory = if plan.conditions.iter().any(|c| c.memory.is_some()) { Some(cgroup::memory_controller()?) } else { None };
        let ledger = Ledger::create_in(state_dir, &id)?;
        if let Some(dir) = scratch {
            ledger.set_scratch(dir)?;
        }
        // A value the kernel refuses ends the run here, before any target
        // is made; the ledger puts back what was already written.
        conditions::sysctl::apply(&ledger, &plan.sysctls)?;
        let tracefs = trace::tracefs_for_run(&ledger, &id);
        Ok(Lab {
            id,
            started_at: crate::record::utc_now(),
            plan,
            tracefs,
            cases_started: std::cell::Cell::new(0),
            memory,
            image_cache,
            bases: std::cell::RefCell::new(std::collections::HashMap::new()),
            failed_bases: std::cell::RefCell::new(std::collections::HashMap::new()),
            made_ahead: std::cell::RefCell::new(std::collections::HashMap::new()),
            pool: std::cell::RefCell::new(None),
            ledger,
            sysctl_lock: std::cell::RefCell::new(sysctl_lock),
            sysctl_exclusive: exclusive,
            state,
        })
    }

    /// Hold the machine's sysctl lock as a case under `condition` needs it:
    /// exclusively while the case sets sysctls (and the run does not hold
    /// it so already), taken past the turnstile like any run's, after
    /// which the dead runs' sysctls are put back; `Ok(true)` when it was
    /// taken so and [`Lab::back_to_shared`] must follow the case.
    pub(super) fn hold_for(&self, condition: &super::Condition) -> Result<bool> {
        if condition.sysctls.is_empty() || self.sysctl_exclusive {
            return Ok(false);
        }
        let mut slot = self.sysctl_lock.borrow_mut();
        if slot.is_none() {
            return Ok(false);
        }
        // Let go of the shared hold first: two runs upgrading at once must
        // not wait on each other.
        *slot = None;
        match lock_sysctls(&self.state, sysctl::Hold::Exclusive) {
            Ok(lock) => {
                *slot = lock;
                Ok(true)
            }
            Err(e) => {
                *slot = lock_sysctls(&self.state, sysctl::Hold::Shared).ok().flatten();
                Err(e)
            }
        }
    }

    /// After a case [`Lab::hold_for`] took the lock exclusively for (its
    /// sysctls put back): hold it shared again.
    pub(super) fn back_to_shared(&self) {
        let mut slot = self.sysctl_lock.borrow_mut();
        *slot = None;
        match lock_sysctls(&self.state, sysctl::Hold::Shared) {
            Ok(lock) => *slot = lock,
            Err(e) => eprintln!("fslab: taking the machine's sysctl lock again, shared: {e}"),
        }
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
        // The pool's open files first, or its unmount would be refused.
        drop(self.pool.borrow_mut().take());
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
