//! `fslab show RUN`: print a stored run again, as `fslab run` printed it
//! (or its JSON); and the tables every run prints.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::table::{self, Columns};
use super::verdicts::wrap;
use super::ShowArgs;
use crate::error::Result;
use crate::record::catalog::{EXEC_TABLE, TABLE_COMMON};
use crate::record::{Case, RunRecord};

/// Run `fslab show`.
pub fn run(args: &ShowArgs) -> Result<ExitCode> {
    let selection = args.store.resolve_one(&args.run)?;
    let selection = if args.json { selection } else { super::shown::selection(selection)? };
    let mut rendered = Vec::new();
    for record in &selection.runs {
        if args.json {
            rendered.extend(super::exec::render_json(record));
        } else {
            if !rendered.is_empty() {
                rendered.push(b'\n');
            }
            rendered.extend(render_text(record, args.wide, args.why).into_bytes());
        }
    }
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// A line per target made with options beyond fslab's own (`--mkfs-opt`,
/// `--mount-opt`, a preset's variant), and the run's sysctls, so the
/// header says how every target was made and what it ran under (memory
/// limits and per-case sysctls are in each place's name, `xfs@256M`; an
/// aged or filled start in the starting state); the record has the whole
/// argument lists.
fn target_options(record: &RunRecord) -> String {
    let mut s = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for case in &record.cases {
        if seen.contains(&case.fs.as_str()) {
            continue;
        }
        seen.push(&case.fs);
        let target = &case.target;
        let extra = mkfs_extra(&target.fs_type, &target.mkfs_args);
        let mut parts = Vec::new();
        if !extra.is_empty() {
            parts.push(format!("mkfs.{} {}", target.fs_type, shell_words::join(extra)));
        }
        if let Some(opts) = &target.mount_opts {
            parts.push(format!("mount -o {opts}"));
        }
        if !parts.is_empty() {
            s.push_str(&wrap(&format!("{} made with {}", case.fs, parts.join(", ")), 2));
        }
    }
    if !record.sysctls.is_empty() {
        let set: Vec<String> = record.sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&wrap(&format!("sysctls for the whole run: {}", set.join(", ")), 2));
    }
    // Each condition the places vary, with its values in the run's order.
    let mut varied: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, value) in record.cases.iter().flat_map(|c| &c.conditions) {
        let name = if name == "memory" { "memory limit" } else { name.as_str() };
        match varied.iter_mut().find(|(n, _)| *n == name) {
            Some((_, values)) if !values.contains(&value.as_str()) => values.push(value),
            Some(_) => {}
            None => varied.push((name, vec![value.as_str()])),
        }
    }
    if !varied.is_empty() {
        let said: Vec<String> = varied.iter().map(|(name, values)| format!("{name} {}", values.join(", "))).collect();
        s.push_str(&wrap(&format!("places (fs@conditions) under: {}", said.join("; ")), 2));
    }
    s
}

/// The mkfs arguments of a target of `fs_type` beyond fslab's own (the
/// user's `--mkfs-opt`, a preset's variant): what sets it apart.
pub(super) fn mkfs_extra<'a>(fs_type: &str, args: &'a [String]) -> &'a [String] {
    let base = fs_type.parse::<crate::site::FsType>().map(|fs| fs.base_mkfs_args()).unwrap_or_default();
    args.strip_prefix(base.as_slice()).unwrap_or(args)
}

/// The figures of an aged or filled target's starting state, in order.
const START_TABLE: &[&str] = &[
    "start_fill",
    "start_free_bytes",
    "start_free_extents",
    "start_free_largest_bytes",
    "start_fragmented_share",
    "start_files",
    "start_layout_score",
];

/// For a run whose targets started aged or filled: what they started from
/// (said once), a row per target and image with the starting state, and
/// each image's cache key. Every case from one cache entry starts the
/// same, so the first case of each entry stands for all.
fn starting_state(catalog: &crate::record::Catalog, record: &RunRecord) -> String {
    let mut s = String::new();
    let mut firsts: Vec<&Case> = Vec::new();
    for case in &record.cases {
        let Some(start) = &case.start else { continue };
        if !firsts.iter().any(|c| c.start.as_ref().is_some_and(|f| f.cache_key == start.cache_key)) {
            firsts.push(case);
        }
    }
    let Some(first) = firsts.first().and_then(|c| c.start.as_ref()) else { return s };
    s.push('\n');
    s.push_str(&wrap(&format!("starting state ({}), measured before the work:", first.how()), 2));
    let columns = Columns { figures: START_TABLE.iter().map(|f| f.to_string()).collect(), ..Columns::default() };
    s.push_str(&table::render_cases(catalog, &firsts, &columns));
    for case in &firsts {
        let start = case.start.as_ref().expect("chosen for it");
        let key: String = start.cache_key.chars().take(12).collect();
        let made = if start.cache_hit {
            "from the cache (aging 0 s)".to_string()
        } else {
            format!("made by this run (aging {:.1} s)", start.aging_seconds)
        };
        let copy = case.target.image_copy.as_deref().map(|c| format!("; the case's image: a {c}")).unwrap_or_default();
        s.push_str(&wrap(&format!("  {} image {key} {made}{copy}", case.place()), 4));
        for note in &start.notes {
            s.push_str(&wrap(&format!("    {note}"), 6));
        }
    }
    s
}

/// A run's tables: one per scenario, in the order the run took them, with
/// the parameters, the seed's figures, then the common ones, as many as
/// fit (all with `wide`); `exec` cases get exec's columns, then what the
/// command reported (`--parse`); for a run across kernels, each deciding
/// figure per kernel side by side (`across`); a footnote naming the cases
/// measured on a busy machine; the verdicts last: on one screen, or with `why` every
/// place's evidence.
pub(super) fn render_text(record: &RunRecord, wide: bool, why: bool) -> String {
    let mut s = String::new();
    let mut head = format!("run {}  (kernel {})", record.id, record.environment.kernel);
    if !record.tags.is_empty() {
        let _ = write!(head, "  tags: {}", record.tags.join(", "));
    }
    match record.plan.as_ref().and_then(|p| Some((p.stored?, p.cases, p.not_run.unwrap_or(0)))) {
        Some((stored, cases, not_run)) => head.push_str(&plan_stored(stored, cases, not_run)),
        None if !record.complete => head.push_str("  INCOMPLETE: interrupted or killed; its finished cases follow"),
        None => {}
    }
    s.push_str(&wrap(&head, 2));
    s.push_str(&target_options(record));
    let catalog = crate::harness::catalog();
    s.push_str(&starting_state(&catalog, record));
    let mut names: Vec<&str> = Vec::new();
    for case in &record.cases {
        if !names.contains(&case.scenario.as_str()) {
            names.push(&case.scenario);
        }
    }
    for name in names {
        let cases: Vec<&Case> = record.cases.iter().filter(|c| c.scenario == name).collect();
        let mut columns = Columns { more: true, wide, ..Columns::default() };
        match catalog.scenario(name) {
            Some(scenario) => {
                let seed = scenario.seed.map(|seed| format!(" (seed {seed})")).unwrap_or_default();
                s.push('\n');
                s.push_str(&wrap(&format!("{}{seed}: {}", scenario.name, scenario.about), 2));
                columns.params = scenario.params.as_slice();
                columns.figures = scenario.headline.iter().chain(TABLE_COMMON).map(|f| f.to_string()).collect();
            }
            // `exec`, or a scenario this fslab does not know (a store
            // written by another version).
            None => {
                if name != "exec" {
                    let _ = writeln!(s, "\n{name}:");
                }
                columns.figures = EXEC_TABLE.iter().map(|f| f.to_string()).collect();
                // What the command reported of itself (`--parse fio`).
                for case in &cases {
                    for (figure, _) in case.figures.iter().filter(|(n, _)| catalog.figure(n).is_none()) {
                        if !columns.figures.iter().any(|f| f == figure) {
                            columns.figures.push(figure.to_string());
                        }
                    }
                }
            }
        }
        s.push_str(&table::render_cases(&catalog, &cases, &columns));
        s.push_str(&table::failures(&cases));
    }
    // A run across kernels: each deciding figure per kernel, side by side.
    s.push_str(&super::across::render(&catalog, record, wide));
    // Once for the run, under its last table: which cases ran on a busy
    // machine.
    s.push_str(&table::busy(&record.cases.iter().collect::<Vec<_>>()));
    // Once too: what the mark on emulated cases' timings means.
    s.push_str(&table::emulated(&record.cases.iter().collect::<Vec<_>>()));
    s.push_str(&recordings(&record.cases));
    s.push_str(&super::crash_table::render(&record.cases));
    if why {
        s.push_str(&super::verdicts::render_why(&record.verdicts));
    } else {
        s.push_str(&super::verdicts::render(&record.verdicts, &record.cases));
    }
    s
}

/// What a plan shown as one run holds: `stored` of its `cases`, and of
/// those it lacks, why: `not_run` are in shards no run has started, the
/// rest in runs interrupted or killed.
fn plan_stored(stored: usize, cases: usize, not_run: usize) -> String {
    let said = format!("{stored} of {cases} cases stored");
    let missing = cases.saturating_sub(stored);
    if missing == 0 {
        return format!("  plan: {said}");
    }
    let killed = missing.saturating_sub(not_run);
    let why = match (not_run, killed) {
        (_, 0) => "shards not run yet".to_string(),
        (0, _) => "interrupted or killed".to_string(),
        (n, k) => format!("{n} in shards not run yet, {k} in runs interrupted or killed"),
    };
    format!("  INCOMPLETE: {said} ({why}); the stored cases follow")
}

/// Where each recorded case's recording is kept (`--crash-record`), with
/// what its log holds; nothing for a run that recorded none.
fn recordings(cases: &[Case]) -> String {
    let mut s = String::new();
    for case in cases {
        let Some(crash) = case.crash.as_ref().filter(|c| c.kept) else { continue };
        if s.is_empty() {
            s.push_str("\nrecorded writes (writes.log replayed onto before.img rebuilds the device; recording.json says how):\n");
        }
        let _ = writeln!(
            s,
            "  {} r{}: {} entries, {} flushes, {} of log, kept in {}",
            crate::text::escape(&case.place()),
            case.repeat,
            crash.entries,
            crash.flushes,
            crate::units::bytes_short(crash.log_bytes),
            crate::text::path(std::path::Path::new(&crash.folder))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_says_how_many_of_its_cases_are_stored_and_why_the_others_are_not() {
        assert_eq!(plan_stored(8, 8, 0), "  plan: 8 of 8 cases stored");
        assert_eq!(plan_stored(3, 8, 5), "  INCOMPLETE: 3 of 8 cases stored (shards not run yet); the stored cases follow");
        assert_eq!(plan_stored(3, 8, 0), "  INCOMPLETE: 3 of 8 cases stored (interrupted or killed); the stored cases follow");
        assert!(plan_stored(3, 8, 2).contains("2 in shards not run yet, 3 in runs interrupted or killed"));
    }

    #[test]
    fn a_kept_recording_is_named_under_the_tables_and_an_unkept_one_is_not() {
        let mut kept = Case::new("exec", "ext4", serde_json::Map::new(), 2);
        kept.conditions.insert("crash".into(), "record".into());
        let record = crate::record::CrashRecord { folder: "/s/r-ext4-rec1".into(), kept: true, entries: 186, flushes: 72, log_bytes: 1 << 20, ..Default::default() };
        kept.crash = Some(record.clone());
        let mut given_back = kept.clone();
        given_back.crash = Some(crate::record::CrashRecord { kept: false, ..record });
        assert_eq!(
            recordings(&[kept, given_back.clone()]),
            "\nrecorded writes (writes.log replayed onto before.img rebuilds the device; recording.json says how):\n  \
             ext4@crash=record r2: 186 entries, 72 flushes, 1 MiB of log, kept in /s/r-ext4-rec1\n"
        );
        assert_eq!(recordings(&[given_back]), "");
    }
}
