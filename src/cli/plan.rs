//! `fslab plan RUN-FLAGS -o PLAN`: the cases `fslab run` would measure
//! with these flags, written down ([`crate::plan::PlanFile`]) for shards
//! of it to run on many machines; and how `run --plan` reads it back.
//!
//! A plan keeps the flags that decide cases as given, canonical (each
//! given flag as `--long=value`, a value apiece, in the command's own
//! order, scenarios first), so the same flags in any order give the same
//! file. The flags that say how one machine runs ([`LOCAL`]) are not kept:
//! `run --plan` takes them, and refuses every other flag (exit 2, named).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::{Cli, Command, PlanArgs, RunArgs};
use crate::error::{Error, Result};
use crate::plan::{self, Host, PlanFile};
use crate::record::{Case, PlanRef, RunRecord};
use crate::store::Selection;

/// The flags (clap ids) of `fslab run` that say how this machine runs a
/// plan, not which cases it has: never kept in a plan; with `--plan` only
/// these (and `--shard`) may be given.
/// `--destroy-data-on` is one of them: the agreement to lose a disk is given
/// on the machine whose disk it is, never carried there by a plan.
const LOCAL: &[&str] =
    &["scratch", "age_cache", "kernel_cache", "destroy_data_on", "location", "no_store", "tag", "json", "progress", "wide"];

/// Of [`LOCAL`], those `fslab plan` has no use for: refused there, so none
/// is lost unsaid (`plan` uses --scratch and the caches to plan, and
/// --json prints the plan).
const RUN_ONLY: &[&str] = &["location", "no_store", "tag", "progress", "wide"];

/// Run `fslab plan`.
pub fn run(args: &PlanArgs, given: &ArgMatches) -> Result<ExitCode> {
    if let Some(flag) = first_given(given, "plan", |id| RUN_ONLY.contains(&id)) {
        return Err(Error::usage(format!(
            "{flag}: a plan keeps the cases, not how one machine runs them; give {flag} to `fslab run --plan`"
        )));
    }
    super::run::check_named(&args.run)?;
    let run_args = recorded(given)?;
    let planned = plan::run::plan(&args.run.request(), &Host)?;
    let device = args.run.target.device.as_deref().map(crate::site::identity::identity).transpose()?;
    let file = PlanFile::of(&planned, run_args, crate::VERSION, device)?;
    let document = crate::json_document("plan", &file);
    super::output::write_whole(&args.output, &document, "write plan")?;
    let rendered = if args.run.target.json {
        document
    } else {
        let images = distinct(file.cases.iter().map(|c| c.shard_key.as_str()));
        format!(
            "plan {}: {} cases ({} shard keys) written to {}\nrun a shard of it: fslab run --plan {} --shard K/N --store URL\n",
            file.id,
            file.cases.len(),
            images,
            crate::text::path(&args.output),
            crate::text::path(&args.output),
        )
        .into_bytes()
    };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> usize {
    items.collect::<std::collections::BTreeSet<_>>().len()
}

/// The flags given on the command line (`given`, `plan`'s matches) that
/// decide cases, canonical: scenarios first, then each flag in the
/// command's order as `--long=value`, one per value.
fn recorded(given: &ArgMatches) -> Result<Vec<String>> {
    let command = <Cli as clap::CommandFactory>::command();
    let plan = command.find_subcommand("plan").expect("fslab has `plan`");
    let (mut scenarios, mut flags) = (Vec::new(), Vec::new());
    for arg in plan.get_arguments() {
        let id = arg.get_id().as_str();
        if LOCAL.contains(&id) || id == "output" || given.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let long = arg.get_long().map(|l| format!("--{l}"));
        if !arg.get_action().takes_values() {
            flags.extend(long);
            continue;
        }
        for value in given.get_raw_occurrences(id).into_iter().flatten().flatten() {
            let value = value.to_str().ok_or_else(|| {
                Error::usage(format!("{}: {value:?} is not UTF-8, which a plan cannot keep", long.as_deref().unwrap_or(id)))
            })?;
            match &long {
                Some(long) => flags.push(format!("{long}={value}")),
                None => scenarios.push(value.to_string()),
            }
        }
    }
    scenarios.extend(flags);
    Ok(scenarios)
}

/// The long name of the first flag given on the command line (`given`,
/// the matches of subcommand `sub`) whose id `pick` accepts.
fn first_given(given: &ArgMatches, sub: &str, pick: impl Fn(&str) -> bool) -> Option<String> {
    let command = <Cli as clap::CommandFactory>::command();
    let sub = command.find_subcommand(sub)?;
    sub.get_arguments()
        .filter(|arg| pick(arg.get_id().as_str()) && given.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine))
        .map(|arg| arg.get_long().map_or_else(|| arg.get_value_names().map_or_else(String::new, |v| v.join(" ")), |l| format!("--{l}")))
        .next()
}

/// A plan file read (`path`, held to the rule for files a user names for
/// root to act on: root's or the user's, reached through no one else's
/// link), checked ([`PlanFile::parse`]).
pub(super) fn read(path: &Path) -> Result<PlanFile> {
    let file = crate::ledger::given::open_file(path, "plan")?;
    PlanFile::parse(&file.read(plan::MAX_PLAN_FILE)?, &crate::text::path(path), crate::VERSION)
}

/// `run --plan`'s flags: the plan's own `run_args`, read by `fslab run`'s
/// parser, with this command line's [`LOCAL`] flags (`current`); any
/// other flag given beside `--plan` is refused (exit 2), named.
pub(super) fn planned_args(file: &PlanFile, shown: &Path, current: &RunArgs, given: &ArgMatches) -> Result<RunArgs> {
    if let Some(flag) = first_given(given, "run", |id| !LOCAL.contains(&id) && id != "plan" && id != "shard") {
        return Err(Error::usage(format!(
            "{flag} with --plan: the plan decides the cases; give {flag} to `fslab plan`, or run without --plan"
        )));
    }
    let destroy = current.target.destroy_data_on.as_ref();
    match (file.formats_device(), destroy) {
        (true, None) => {
            let device = file.run_args.iter().find_map(|a| a.strip_prefix("--device=")).unwrap_or_default();
            return Err(Error::usage(format!(
                "{}: its cases format --device {device}, erasing everything on it: name it on this machine with \
                 --destroy-data-on {device} to agree",
                crate::text::path(shown),
                device = crate::text::escape(device)
            )));
        }
        (false, Some(_)) => {
            return Err(Error::usage(format!(
                "--destroy-data-on with --plan: {} formats no device; leave it out",
                crate::text::path(shown)
            )));
        }
        _ => {}
    }
    let agreed = destroy.map(|d| {
        let mut flag = OsString::from("--destroy-data-on=");
        flag.push(d);
        flag
    });
    let argv = [OsString::from("fslab"), OsString::from("run")]
        .into_iter()
        .chain(file.run_args.iter().map(OsString::from))
        .chain(agreed);
    let parsed = <Cli as clap::Parser>::try_parse_from(argv).map_err(|e| {
        Error::usage(format!("{}: its flags no longer read: {}", crate::text::path(shown), e.to_string().trim()))
    })?;
    let Command::Run(parsed) = parsed.command else { unreachable!("parsed as `fslab run`") };
    let mut planned = parsed.run;
    // Every flag of LOCAL, from this command line.
    let (target, here) = (&mut planned.target, &current.target);
    target.scratch.clone_from(&here.scratch);
    target.age_cache.clone_from(&here.age_cache);
    target.vm.kernel_cache.clone_from(&here.vm.kernel_cache);
    target.store.location.clone_from(&here.store.location);
    target.no_store = here.no_store;
    target.tag.clone_from(&here.tag);
    target.json = here.json;
    target.progress = here.progress;
    planned.wide = current.wide;
    Ok(planned)
}

/// The id of the plan whose file is at `path` (a path with no link in
/// it), or `None` when it is no plan's file (a store, a run's JSON).
pub(super) fn id_in(path: &Path) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Document {
        plan: Id,
    }
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    let text = read_bounded(path).ok()?;
    if !text.starts_with(b"{") {
        return None;
    }
    serde_json::from_slice::<Document>(&text).ok().map(|d| d.plan.id)
}

/// The text of a plan file at `path` (a path with no link in it, opened
/// without following one), refused (exit 2) past the largest plan.
pub(super) fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let open = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path);
    let file = open.map_err(|e| Error::io(path, "open", e))?;
    let mut text = Vec::new();
    file.take(plan::MAX_PLAN_FILE + 1).read_to_end(&mut text).map_err(|e| Error::io(path, "read", e))?;
    if text.len() as u64 > plan::MAX_PLAN_FILE {
        return Err(Error::usage(format!("{}: larger than any plan ({} MiB)", crate::text::path(path), plan::MAX_PLAN_FILE >> 20)));
    }
    Ok(text)
}

/// How many of `file`'s cases missing from `stored` (key, repeat) no run
/// of `runs` was to measure: the whole plan's run holds every case, a
/// shard's (`K/N`) those whose shard key falls in K of N.
fn not_run(file: &PlanFile, stored: &BTreeSet<(String, u32)>, runs: &[crate::store::PlanRunRow]) -> usize {
    let held = |shard_key: &str| {
        runs.iter().any(|r| match r.shard.as_deref().and_then(|s| s.split_once('/')) {
            None => true,
            Some((k, n)) => match (k.parse::<u32>(), n.parse::<u32>()) {
                (Ok(k), Ok(n)) if n > 0 => plan::shard::shard_of(shard_key, n) == k,
                _ => true,
            },
        })
    };
    file.cases.iter().filter(|c| !stored.contains(&(c.case.key.clone(), c.case.repeat)) && !held(&c.shard_key)).count()
}

/// `selection` as one run when it names a plan: every stored case of the
/// plan in the plan's order, judged as the whole plan is (its seeds'
/// verdicts over all of them, as an unsharded run judges), under the
/// plan's id, complete when every case is stored; the first shard's
/// machine stands for the run's. Any other selection as it is.
pub(super) fn as_one(selection: Selection) -> Result<Selection> {
    let Some(stored_plan) = &selection.plan else { return Ok(selection) };
    let file = PlanFile::read(stored_plan.document.as_bytes(), &selection.label)?;
    let mut cases: Vec<Case> = selection.runs.iter().flat_map(|r| r.cases.iter().cloned()).collect();
    let stored_keys: BTreeSet<(String, u32)> = cases.iter().filter_map(|c| Some((c.plan_key.clone()?, c.repeat))).collect();
    let stored = stored_keys.len();
    cases.sort_by_key(|c| c.plan_key.as_deref().and_then(|key| file.position(key, c.repeat)).unwrap_or(usize::MAX));
    let first = selection.runs.first().ok_or_else(|| Error::usage(format!("{}: no case stored", selection.label)))?;
    let tags: Vec<String> = selection.runs.iter().flat_map(|r| r.tags.iter().cloned()).collect::<BTreeSet<_>>().into_iter().collect();
    let record = RunRecord {
        id: file.id.clone(),
        tag: tags.first().cloned(),
        tags,
        started_at: selection.runs.iter().map(|r| r.started_at.clone()).min().unwrap_or_default(),
        command: ["fslab", "run"].into_iter().map(String::from).chain(file.run_args.iter().cloned()).collect(),
        complete: cases.len() == file.cases.len(),
        environment: first.environment.clone(),
        sysctls: first.sysctls.clone(),
        verdicts: plan::verdicts_of(&file.verdicts, &cases),
        cases,
        plan: Some(PlanRef {
            id: file.id.clone(),
            cases: file.cases.len(),
            stored: Some(stored),
            not_run: Some(not_run(&file, &stored_keys, &stored_plan.runs)),
            ..PlanRef::default()
        }),
    };
    Ok(Selection { label: selection.label, runs: vec![record], plan: selection.plan })
}
