//! `fslab bisect`: read the flags into an axis, a rule and the work of a
//! point, run the search (`crate::bisect`), and print its steps as they
//! come and its answer at the end.
//!
//! Exit codes: 0 the first bad point found; 5 undecided (the ends do not
//! differ, a point stays `can't tell`, or the change is not one step); 2
//! bad flags; 3 and 4 as for `run`; an interrupted bisect dies of its
//! signal after saying how to resume it.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use super::bisect_args::BisectArgs;
use crate::bisect::{self, Axis, Bisect, Change, Ended, Outcome, Point, Work};
use crate::error::{Error, Result};
use crate::plan::{ExecRequest, RunRequest};
use crate::scenario::exec::{CommandWork, Echo};

/// The exit code of a bisect that could not decide.
const UNDECIDED: u8 = 5;

/// Run `fslab bisect`.
pub fn run(args: &BisectArgs) -> Result<ExitCode> {
    let change = match (&args.figure, &args.verdict) {
        (Some(name), _) => Change::Figure { name: name.clone(), threshold: args.threshold },
        (None, Some(word)) => Change::Verdict { word: word.clone() },
        (None, None) => {
            return Err(Error::usage("say what changes: --figure NAME [--threshold T] or --verdict WORD"));
        }
    };
    if args.scenario.is_none() && args.command.is_empty() {
        return Err(Error::usage("say what to measure at each point: a command after --, or --scenario NAME"));
    }
    let t = &args.target;
    if t.fs.len() != 1 && t.dir.is_none() && t.device.is_none() || t.memory.len() > 1 || t.vm.vm_memory.len() > 1 {
        return Err(Error::usage(
            "a bisect follows one place: give one --fs (or --dir), and at most one --memory or --vm-memory value",
        ));
    }
    let axis = axis(args)?;
    let json = args.target.json;
    let identity = identity(args, &change);
    let store = super::exec::store(&args.target);
    let bisect = Bisect {
        axis,
        change,
        first: args.repeat,
        ceiling: args.max_repeat.max(args.repeat),
        store,
        tags: args.target.tag.clone(),
        progress: args.target.progress,
        scratch: args.target.scratch.clone(),
        identity,
        sets_sysctls: !args.target.sysctl.is_empty(),
    };
    let repo = match &bisect.axis {
        Axis::Git { repo, .. } => Some(repo.path.clone()),
        Axis::Kernels(_) => None,
    };
    let mut make = |point: &Point, tree: Option<&Path>, repeats: u32| work(args, point, tree, repeats);
    let mut say = |line: &str| {
        if json {
            eprintln!("{line}");
        } else {
            super::print(format!("{line}\n").as_bytes()).ok();
        }
    };
    let ended = bisect::drive::run(bisect, &mut make, &mut say)?;
    let rendered = if json { render_json(&ended) } else { render_text(&ended, repo.as_deref()).into_bytes() };
    super::print(&rendered)?;
    Ok(match &ended.outcome {
        Some(Outcome::Found { .. }) | None => ExitCode::SUCCESS,
        Some(_) => ExitCode::from(UNDECIDED),
    })
}

/// The axis the flags name, cut to `--good`..`--bad`.
fn axis(args: &BisectArgs) -> Result<Axis> {
    if let Some(dir) = &args.repo {
        let repo = bisect::git::Repo::open(dir)?;
        let build = args.build.clone().unwrap_or_default();
        let good = args.good.as_deref().unwrap_or_default();
        let points = repo.commits(good, args.bad.as_deref().unwrap_or("HEAD"))?;
        if points.len() < 2 {
            return Err(Error::usage("--good and --bad are next to each other: nothing to bisect"));
        }
        return Ok(Axis::Git { repo, build, points });
    }
    let kernels = crate::plan::kernel_list(&args.target.vm.kernel, &args.target.vm.kernel_cache)?;
    if kernels.len() < 2 {
        return Err(Error::usage(
            "give the axis: --kernel A,B,C... (two kernels at least, in order, the good end first) or --repo DIR --good REV --build CMD",
        ));
    }
    let points: Vec<Point> =
        kernels.iter().map(|k| Point { key: k.clone(), label: kernel_label(k), detail: None }).collect();
    let find = |name: &str, flag: &str| {
        points
            .iter()
            .position(|p| p.key == name || p.label == name)
            .ok_or_else(|| Error::usage(format!("{flag} {name}: not among the --kernel list ({})", kernels.join(", "))))
    };
    let lo = args.good.as_deref().map(|g| find(g, "--good")).transpose()?.unwrap_or(0);
    let hi = args.bad.as_deref().map(|b| find(b, "--bad")).transpose()?.unwrap_or(points.len() - 1);
    if lo >= hi {
        return Err(Error::usage(format!(
            "--good {} comes after --bad {} in the --kernel list: the good end comes first",
            points[lo].label, points[hi].label
        )));
    }
    Ok(Axis::Kernels(points[lo..=hi].to_vec()))
}

/// How a kernel is named in lines: a Debian kernel's name, a file's
/// name, or `host`.
fn kernel_label(given: &str) -> String {
    if let Some(name) = given.strip_prefix(crate::distro::PREFIX) {
        return name.to_string();
    }
    let name = Path::new(given).file_name().map_or(given.to_string(), |n| n.to_string_lossy().into_owned());
    name.strip_prefix("vmlinuz-").unwrap_or(&name).to_string()
}

/// What decides the answer, for the bisect's id: the rule, the work and
/// the flags that shape the targets.
fn identity(args: &BisectArgs, change: &Change) -> String {
    let t = &args.target;
    format!(
        "{change:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        args.scenario,
        args.set,
        args.command,
        args.build,
        t.fs,
        t.dir,
        t.mkfs_opt,
        t.mount_opt,
        t.sysctl,
        t.memory,
        t.size,
        t.age.as_ref().map(|a| format!("{a:?}")),
        t.fill,
        t.disk.disk,
    )
}

/// The work at `point`: the command (with `{tree}` made the build tree's
/// path) or the scenario, under the point's kernel on a kernel axis.
fn work(args: &BisectArgs, point: &Point, tree: Option<&Path>, repeats: u32) -> Result<Work> {
    let mut target = args.target.request();
    if args.repo.is_none() {
        target.vm.kernel = vec![point.key.clone()];
    }
    if let Some(scenario) = &args.scenario {
        return Ok(Work::Scenario(RunRequest {
            scenarios: vec![scenario.clone()],
            target,
            set: args.set.clone(),
            repeat: repeats,
            scale: crate::scenario::params::Scale::Small,
            preset: None,
        }));
    }
    let argv: Vec<OsString> = args.command.iter().map(|a| with_tree(a, tree)).collect();
    let work = CommandWork { argv, cold_read: false, parse: None, echo: Echo::Off, check: None, marks: None };
    Ok(Work::Exec(ExecRequest { target, repeat: repeats, warmup: 0, work }))
}

/// `arg` with `{tree}` replaced by the build tree's path.
fn with_tree(arg: &OsString, tree: Option<&Path>) -> OsString {
    let (Some(tree), Some(text)) = (tree, arg.to_str()) else {
        return arg.clone();
    };
    OsString::from(text.replace("{tree}", &tree.to_string_lossy()))
}

/// The answer for people.
fn render_text(ended: &Ended, repo: Option<&Path>) -> String {
    let search = &ended.search;
    let points = search.points();
    let mut s = String::new();
    let line = |s: &mut String, what: &str, i: usize| {
        let p = &points[i];
        let detail = p.detail.as_deref().map(|d| format!("  {}", bisect::drive::clip(d, 50))).unwrap_or_default();
        let _ = writeln!(s, "  {what:<11} {}{detail}  {}", p.label, figures(search, i));
    };
    let measured = (0..points.len()).filter(|&i| search.samples(i).measured() > 0).count();
    match &ended.outcome {
        None => {
            let (lo, hi) = search.bracket();
            let _ = writeln!(
                s,
                "\nbisect {} interrupted: the change lies after {} and by {}; run the same command again to go on from the store",
                ended.id, points[lo].label, points[hi].label
            );
        }
        Some(Outcome::Found { last_good, first_bad, skipped, note }) => {
            let _ = writeln!(s, "\nbisect {}: {}", ended.id, rule(search));
            if skipped.is_empty() {
                line(&mut s, "first bad", *first_bad);
            } else {
                let names: Vec<&str> = skipped.iter().map(|&i| points[i].label.as_str()).collect();
                let _ = writeln!(
                    s,
                    "  the change is in one of {} (skipped: could not be measured) or {}",
                    names.join(", "),
                    points[*first_bad].label
                );
                line(&mut s, "bad", *first_bad);
            }
            line(&mut s, "last good", *last_good);
            if let Some(told) = search.confirmation() {
                let _ = writeln!(s, "  told apart: {told}");
            }
            if let Some(note) = note {
                let _ = writeln!(s, "  note: {note}");
            }
            let _ = writeln!(s, "  {} steps between the ends; {measured} points measured", search.steps());
            if let Some(repo) = repo {
                let _ = writeln!(s, "  see it: git -C {} show {}", repo.display(), points[*first_bad].key);
            }
        }
        Some(Outcome::Ends(why)) => {
            let _ = writeln!(s, "\nbisect {}: can't tell, {why}", ended.id);
            line(&mut s, "good end", 0);
            line(&mut s, "bad end", points.len() - 1);
        }
        Some(Outcome::CantTell { point, why }) => {
            let _ = writeln!(s, "\nbisect {}: can't tell at {}: {why}", ended.id, points[*point].label);
            let (lo, hi) = search.bracket();
            let _ = writeln!(
                s,
                "  the change lies after {} and by {} ({measured} points measured)",
                points[lo].label, points[hi].label
            );
        }
        Some(Outcome::NotOneStep { points: which, why }) => {
            let names: Vec<&str> = which.iter().map(|&i| points[i].label.as_str()).collect();
            let _ = writeln!(s, "\nbisect {}: not one step ({}): {why}", ended.id, names.join(", "));
        }
    }
    s
}

/// The rule in words.
fn rule(search: &bisect::Search) -> String {
    let last = search.points().len() - 1;
    match search.change() {
        Change::Verdict { word } => format!("the verdict reads `{word}`"),
        Change::Figure { name, threshold } => {
            let (g, b) = (search.samples(0).median(), search.samples(last).median());
            match (search.samples(0).kind, g, b) {
                (Some(crate::record::Kind::Timing), ..) => {
                    let least = match threshold {
                        Some(bisect::Threshold::Relative(r)) => *r,
                        _ => bisect::judge::DEFAULT_TIMING_CHANGE,
                    };
                    format!("{name} (timing: rank-sum p < {}, a change of {:.0}% at least)", bisect::judge::ALPHA, least * 100.0)
                }
                (_, Some(g), Some(b)) => {
                    let t = bisect::judge::exact_threshold(*threshold, g, b);
                    let how = if threshold.is_some() { "as given" } else { "midway between the ends" };
                    format!("{name} (exact) past {} ({how})", bisect::judge::shown(t))
                }
                _ => name.clone(),
            }
        }
    }
}

/// A point's deciding figures, short.
fn figures(search: &bisect::Search, i: usize) -> String {
    let s = search.samples(i);
    if let Some(why) = &s.failed {
        return format!("skipped: {}", bisect::drive::clip(why, 60));
    }
    if !s.words.is_empty() {
        return s.words.join(", ");
    }
    let name = match search.change() {
        Change::Figure { name, .. } => name.as_str(),
        Change::Verdict { .. } => "",
    };
    let busy = match s.busy.len() {
        0 => String::new(),
        n if s.quiet.is_empty() => format!(", {n} busy"),
        n => format!(", {n} busy set aside"),
    };
    match (s.deciding().len(), s.median()) {
        (1, Some(v)) => format!("{name} {}{busy}", bisect::judge::shown(v)),
        (n, Some(v)) => format!("{name} {} (median of {n}{busy})", bisect::judge::shown(v)),
        _ => "not measured".into(),
    }
}

/// The bisect as `{"schema":"fslab/1","bisect":{...}}`.
fn render_json(ended: &Ended) -> Vec<u8> {
    let search = &ended.search;
    let points: Vec<serde_json::Value> = search
        .points()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let s = search.samples(i);
            serde_json::json!({
                "key": p.key, "label": p.label, "detail": p.detail,
                "values": s.quiet, "busy_values": s.busy, "words": s.words, "skipped": s.failed,
                "reading": search.reading(i).map(bisect::Reading::word),
                "beside": {"good": search.beside(i)[0].deciding(), "bad": search.beside(i)[1].deciding()},
            })
        })
        .collect();
    let outcome = match &ended.outcome {
        None => serde_json::json!({"kind": "interrupted"}),
        Some(Outcome::Found { last_good, first_bad, skipped, note }) => serde_json::json!({
            "kind": "found", "last_good": last_good, "first_bad": first_bad, "skipped": skipped, "note": note,
        }),
        Some(Outcome::Ends(why)) => serde_json::json!({"kind": "ends_agree", "why": why}),
        Some(Outcome::CantTell { point, why }) => {
            serde_json::json!({"kind": "cant_tell", "point": point, "why": why})
        }
        Some(Outcome::NotOneStep { points, why }) => {
            serde_json::json!({"kind": "not_one_step", "points": points, "why": why})
        }
    };
    let confirm = search.confirmed().map(|((lo, hi), [a, b])| {
        serde_json::json!({"last_good": lo, "first_bad": hi, "good": a.deciding(), "bad": b.deciding(), "said": search.confirmation()})
    });
    let value = serde_json::json!({
        "id": ended.id,
        "confirm": confirm,
        "rule": rule(search),
        "steps": search.steps(),
        "resumed": ended.resumed,
        "measured": ended.steps,
        "points": points,
        "outcome": outcome,
    });
    crate::json_document("bisect", &value)
}
