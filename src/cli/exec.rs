//! `fslab exec -- COMMAND`: run any command on fresh scratch file systems
//! (or in a directory) with every probe around it, and print one row per
//! target.
//!
//! The table is rendered to bytes after all targets ran; progress goes to
//! stderr while they run (only on a terminal).

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::keep::Keeper;
use super::{ExecArgs, TargetArgs};
use crate::error::{Error, Result};
use crate::scenario::{self, Lab, Phase, Plan, RunRecord, Status};
use crate::target::{self, TargetOptions, TargetSpec};

/// Run `fslab exec`.
pub fn run(args: &ExecArgs) -> Result<ExitCode> {
    let plan = plan(&args.target, args.cold_read)?;
    let (lab, header, mut keeper) = start(plan, &args.target)?;
    let targets = lab.plan().targets.clone();
    let bar = ProgressBar::new(targets.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut cases = Vec::new();
    let params = params(args);
    for spec in &targets {
        if crate::interrupt::pending().is_some() {
            break;
        }
        let label = spec.label();
        let progress = |phase: Phase| bar.set_message(format!("{label}: {}", phase.as_str()));
        let mut work = scenario::exec::CommandWork { ledger: lab.ledger(), argv: &args.command };
        let case = lab.measure(spec, "exec", params.clone(), 1, &progress, &mut work);
        keeper.keep(&case);
        cases.push(case);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let planned = targets.len();
    finish(lab, Finished { header, cases, verdicts: Vec::new(), planned, keeper }, &args.target)
}

/// Open the store, then the lab, and record the run's start. The store
/// comes first so a bad `--store` costs nothing; a store that cannot take
/// the header closes the lab again before the error goes up.
pub(super) fn start(plan: Plan, args: &TargetArgs) -> Result<(Lab, RunRecord, Keeper)> {
    // What the machine cannot do is said before any store is touched.
    crate::target::check(&plan.targets)?;
    let mut keeper = Keeper::open(args)?;
    let lab = Lab::open(plan)?;
    // Sorted and without repeats, as the store gives them back.
    let tags: Vec<String> = args.tag.iter().cloned().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let header = RunRecord {
        id: lab.id.clone(),
        tag: tags.first().cloned(),
        tags,
        started_at: lab.started_at.clone(),
        command: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
        complete: false,
        environment: scenario::Environment::read(&lab.plan().target_options.scratch),
        sysctls: lab.plan().sysctls.iter().map(|s| (s.key.clone(), s.value.clone())).collect(),
        cases: Vec::new(),
        verdicts: Vec::new(),
    };
    if let Err(e) = keeper.begin(&header) {
        let _ = lab.close();
        return Err(e);
    }
    Ok((lab, header, keeper))
}

/// What a run hands to [`finish`].
pub(super) struct Finished {
    /// The record [`start`] made, without cases.
    pub header: RunRecord,
    /// The cases measured, in order.
    pub cases: Vec<scenario::Case>,
    /// `--preset`'s verdicts.
    pub verdicts: Vec<scenario::Verdict>,
    /// How many cases were planned (fewer ran if interrupted).
    pub planned: usize,
    /// The store side.
    pub keeper: Keeper,
}

/// End a run: mark it in the store, release everything, then print the
/// record (JSON, or its tables); exit 4 if any case failed or
/// the store could not keep it. Releasing comes before printing, so a
/// closed stdout or an interruption never leaves anything behind.
pub(super) fn finish(
    lab: Lab,
    done: Finished,
    args: &TargetArgs,
) -> Result<ExitCode> {
    let Finished { header, cases, verdicts, planned, keeper } = done;
    let complete = cases.len() == planned && crate::interrupt::pending().is_none();
    let record = RunRecord { cases, verdicts, complete, ..header };
    let kept = keeper.finish(complete, &record.verdicts);
    let closed = lab.close();
    crate::interrupt::check()?;
    closed?;
    let mut rendered = if args.json { render_json(&record) } else { super::show::render_text(&record).into_bytes() };
    if let (false, Ok(Some(location))) = (args.json, &kept) {
        let _ = writeln!(rendered, "\nstored as run {} in {location}", record.id);
    }
    super::print(&rendered)?;
    if let Err(e) = kept {
        eprintln!("fslab: {e}");
        return Ok(e.exit_code());
    }
    let failed = record.cases.iter().any(|c| c.status == Status::Failed);
    Ok(if failed { ExitCode::from(crate::error::ErrorKind::Failed.exit_code()) } else { ExitCode::SUCCESS })
}

/// Turn the arguments into a plan, refusing contradictions with the flag
/// named.
pub(super) fn plan(args: &TargetArgs, cold_read: bool) -> Result<Plan> {
    let mut target_options = TargetOptions {
        scratch: args.scratch.clone(),
        size_bytes: args.size,
        ..Default::default()
    };
    for (fs, value) in &args.mkfs_opt {
        let words = shell_words::split(value)
            .map_err(|e| Error::usage(format!("--mkfs-opt {fs}={value}: {e} (quote as in a shell)")))?;
        target_options.mkfs_args.entry(*fs).or_default().extend(words);
    }
    for (fs, value) in &args.mount_opt {
        let opts = target_options.mount_opts.entry(*fs).or_default();
        if !opts.is_empty() {
            opts.push(',');
        }
        opts.push_str(value);
    }
    let fs_list = if args.fs.is_empty() && args.dir.is_none() && args.device.is_none() {
        target::fs_type::ALL.to_vec()
    } else {
        args.fs.clone()
    };
    let targets: Vec<TargetSpec> = match (&args.dir, &args.device) {
        (Some(dir), None) => vec![TargetSpec::Dir(dir.clone())],
        (None, Some(device)) => {
            let named = args.destroy_data_on.as_ref();
            let same = named.is_some_and(|n| {
                std::fs::canonicalize(n).ok().zip(std::fs::canonicalize(device).ok()).is_some_and(|(a, b)| a == b)
            });
            if !same {
                return Err(Error::usage(format!(
                    "--device {} would be formatted: name the same device with --destroy-data-on {} to agree",
                    device.display(),
                    device.display()
                )));
            }
            if fs_list.is_empty() {
                return Err(Error::usage("--device needs --fs to say what to make on it"));
            }
            fs_list.iter().map(|fs| TargetSpec::Device { fs: *fs, device: device.clone() }).collect()
        }
        (None, None) => fs_list.iter().map(|fs| TargetSpec::Scratch(*fs)).collect(),
        (Some(_), Some(_)) => unreachable!("clap keeps --dir and --device apart"),
    };
    if args.interval <= 0.0 || !args.interval.is_finite() {
        return Err(Error::usage(format!("--interval {}: give a positive number of seconds", args.interval)));
    }
    Ok(Plan {
        targets,
        target_options,
        sysctls: args.sysctl.clone(),
        interval: Duration::from_secs_f64(args.interval),
        cold_read,
    })
}

fn params(args: &ExecArgs) -> serde_json::Map<String, serde_json::Value> {
    let mut params = serde_json::Map::new();
    let argv: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    params.insert("command".into(), argv.into());
    params.insert("cold_read".into(), args.cold_read.into());
    params
}

/// `{"schema":"fslab/1","run":{...}}`, pretty, with a final newline.
pub(super) fn render_json(record: &RunRecord) -> Vec<u8> {
    crate::json_document("run", record)
}


