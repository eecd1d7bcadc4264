//! `fslab status PLAN`: what a store holds of a plan run in shards — per
//! machine the cases done and failed, then every case missing, named (key,
//! scenario, place, repeat, and with `--shards N` the shard it is in), so
//! the shard to run again is known.
//!
//! Exit 0 when every case is stored and ok; 4 when a stored case failed
//! (its work failed, as `run` exits); 6 when none failed but cases are
//! missing (a shard not run yet, or killed): the plan is not finished.
//! 4 wins over 6.

use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;

use super::StatusArgs;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::PlanFile;
use crate::plan::shard::shard_of;
use crate::record::{Environment, Status};
use crate::store::{PlanCaseRow, PlanRunRow};

/// Exit status of a plan with cases missing and none failed.
pub const INCOMPLETE_EXIT: u8 = 6;

/// A plan's state in a store (`status` in the JSON).
#[derive(Debug, Serialize)]
struct PlanStatus {
    plan: String,
    cases: usize,
    done: usize,
    failed: usize,
    missing: usize,
    complete: bool,
    machines: Vec<MachineStatus>,
    missing_cases: Vec<CaseStatus>,
    failed_cases: Vec<CaseStatus>,
}

/// One machine's share.
#[derive(Debug, Serialize)]
struct MachineStatus {
    host: Option<String>,
    kernel: String,
    cpu: Option<String>,
    cpus: usize,
    memory_bytes: Option<u64>,
    disk: Option<String>,
    shards: Vec<String>,
    runs: Vec<String>,
    done: usize,
    failed: usize,
}

/// A case named: missing, or failed (with the run that stored it).
#[derive(Debug, Serialize)]
struct CaseStatus {
    key: String,
    scenario: String,
    place: String,
    repeat: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<String>,
}

/// Run `fslab status`.
pub fn run(args: &StatusArgs) -> Result<ExitCode> {
    let location = args.store.for_reading()?;
    let file = plan_named(&args.plan, &location)?;
    let mut store = crate::store::open_for_reading(&location)?;
    let (runs, stored) = store.plan_rows(&file.id)?;
    let status = status_of(&file, &runs, &stored, args.shards);
    let rendered = if args.json { crate::json_document("status", &status) } else { render(&status).into_bytes() };
    super::print(&rendered)?;
    Ok(if status.failed > 0 {
        ExitCode::from(ErrorKind::Failed.exit_code())
    } else if status.missing > 0 {
        ExitCode::from(INCOMPLETE_EXIT)
    } else {
        ExitCode::SUCCESS
    })
}

/// The plan `named`: its file (anyone's, as a run's file may be, only
/// read; a link to it followed as outputs follow one), else its id in the
/// store at `location`.
fn plan_named(named: &str, location: &str) -> Result<PlanFile> {
    if std::fs::symlink_metadata(named).is_ok() {
        if let Some(path) = super::store_place::named_file(Path::new(named))?.filter(|f| f.is_file()) {
            let text = read_bounded(&path)?;
            return PlanFile::read(&text, &crate::text::path(Path::new(named)));
        }
    }
    let mut store = crate::store::open_for_reading(location)?;
    match store.plan(named)? {
        Some(plan) => PlanFile::read(plan.document.as_bytes(), &format!("plan {named}")),
        None => Err(Error::usage(format!(
            "{named}: no plan file, and no plan of that id in the store {} (its shards store it when they run)",
            store.location()
        ))),
    }
}

fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path).map_err(|e| Error::io(path, "open", e))?;
    let mut text = Vec::new();
    file.take(crate::plan::MAX_PLAN_FILE + 1).read_to_end(&mut text).map_err(|e| Error::io(path, "read", e))?;
    if text.len() as u64 > crate::plan::MAX_PLAN_FILE {
        return Err(Error::usage(format!("{}: larger than any plan ({} MiB)", crate::text::path(path), crate::plan::MAX_PLAN_FILE >> 20)));
    }
    Ok(text)
}

fn status_of(file: &PlanFile, runs: &[PlanRunRow], stored: &[PlanCaseRow], shards: Option<u32>) -> PlanStatus {
    let mut machines: Vec<MachineStatus> = Vec::new();
    let mut missing_cases = Vec::new();
    let mut failed_cases = Vec::new();
    let named = |c: &crate::plan::FileCase, run: Option<String>| CaseStatus {
        key: c.case.key.clone(),
        scenario: c.case.scenario.clone(),
        place: PlanFile::place(&c.case),
        repeat: c.case.repeat,
        shard: shards.map(|n| format!("{}/{n}", shard_of(&c.shard_key, n))),
        run,
    };
    for c in &file.cases {
        let Some(row) = stored.iter().find(|s| s.key == c.case.key && s.repeat == c.case.repeat) else {
            missing_cases.push(named(c, None));
            continue;
        };
        let Some(run) = runs.iter().find(|r| r.run_id == row.run_id) else { continue };
        let machine = match machines.iter().position(|m| m.host == run.environment.host && m.kernel == run.environment.kernel) {
            Some(at) => &mut machines[at],
            None => {
                machines.push(machine(&run.environment));
                machines.last_mut().expect("just pushed")
            }
        };
        if !machine.runs.contains(&run.run_id) {
            machine.runs.push(run.run_id.clone());
            machine.shards.push(run.shard.clone().unwrap_or_else(|| "all".into()));
        }
        if row.status == Status::Failed {
            machine.failed += 1;
            failed_cases.push(named(c, Some(row.run_id.clone())));
        } else {
            machine.done += 1;
        }
    }
    for m in &mut machines {
        m.shards.sort_by_key(|s| s.split_once('/').and_then(|(k, _)| k.parse::<u32>().ok()));
        m.shards.dedup();
    }
    let (failed, missing) = (failed_cases.len(), missing_cases.len());
    PlanStatus {
        plan: file.id.clone(),
        cases: file.cases.len(),
        done: file.cases.len() - failed - missing,
        failed,
        missing,
        complete: missing == 0,
        machines,
        missing_cases,
        failed_cases,
    }
}

fn machine(e: &Environment) -> MachineStatus {
    MachineStatus {
        host: e.host.clone(),
        kernel: e.kernel.clone(),
        cpu: e.cpu.clone(),
        cpus: e.cpus,
        memory_bytes: e.memory_bytes,
        disk: e.disk.as_ref().map(|d| d.model.clone().unwrap_or_else(|| d.name.clone())),
        shards: Vec::new(),
        runs: Vec::new(),
        done: 0,
        failed: 0,
    }
}

fn render(s: &PlanStatus) -> String {
    use std::fmt::Write as _;
    let esc = |t: &str| crate::text::escape(t).into_owned();
    let mut out = format!("plan {}: {} cases: {} done, {} failed, {} missing\n", s.plan, s.cases, s.done, s.failed, s.missing);
    for m in &s.machines {
        let memory = m.memory_bytes.map(crate::units::bytes_short).unwrap_or_else(|| "?".into());
        let _ = writeln!(
            out,
            "  {}: {} done, {} failed (shard {}; {}, {} CPUs, {memory}, kernel {}, disk {})",
            esc(m.host.as_deref().unwrap_or("unknown host")),
            m.done,
            m.failed,
            esc(&m.shards.join(", ")),
            esc(m.cpu.as_deref().unwrap_or("unknown CPU")),
            m.cpus,
            esc(&m.kernel),
            esc(m.disk.as_deref().unwrap_or("unknown")),
        );
    }
    for (what, list) in [("missing", &s.missing_cases), ("failed", &s.failed_cases)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{what}:");
        for c in list {
            let shard = c.shard.as_ref().map(|k| format!(", shard {k}")).unwrap_or_default();
            let run = c.run.as_ref().map(|r| format!(", run {}", esc(r))).unwrap_or_default();
            let _ = writeln!(out, "  {} {} on {} repeat {}{shard}{run}", c.key, esc(&c.scenario), esc(&c.place), c.repeat);
        }
    }
    out
}
