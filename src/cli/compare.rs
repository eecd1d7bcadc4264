//! `fslab compare BASE NEW`: regression verdicts between two runs, tags or
//! stores, as a gate CI can act on: exit 1 when anything gated regressed
//! (a figure, or a case that newly failed); exit 5 when nothing did but
//! the repeats cannot decide a gated figure that moved past its threshold
//! for the worse (`--allow-undecided`: 0); exit 2 when the sides share no
//! case, or the gate no figure, as a gate that compared nothing must not
//! pass.
//!
//! Gates come from `--gate` and from a `--gate-file`, which is read only
//! when named (nothing is read from the current folder on its own): it
//! may be anyone's, like a run's file, but a symbolic link to it is
//! followed only as outputs follow one, and only a regular file of at most
//! [`MAX_GATE_FILE`] bytes is read.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::process::ExitCode;

use super::{CompareArgs, CompareOptionArgs};
use crate::compare::{self, CompareOptions, Decision, Gate, Side, gate, render};
use crate::error::{Error, Result};
use crate::store::Selection;

/// Exit status of a comparison the repeats cannot decide.
pub const UNDECIDED_EXIT: u8 = 5;

/// The largest gate file read (a gate is a line).
pub const MAX_GATE_FILE: u64 = 1 << 20;

/// Run `fslab compare`.
pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    let mut options = options(&args.options)?;
    let gates = gates(args)?;
    let (base, new) = (args.store.resolve(&args.base)?, args.store.resolve(&args.new)?);
    check_known(&gates, &base, &new)?;
    options.gates = gates;
    // Text and markdown show what the stores hold escaped; JSON keeps it.
    let (base, new) = if args.json { (base, new) } else { (super::shown::selection(base)?, super::shown::selection(new)?) };
    let comparison = compare::compare(
        Side { label: &base.label, runs: &base.runs },
        Side { label: &new.label, runs: &new.runs },
        &options,
    );
    if comparison.cases_in_common == 0 {
        return Err(Error::usage(format!(
            "{} and {} have no case in common, so nothing can be compared: {} has {}; {} has {} \
             (compare runs of the same scenarios on the same targets){}",
            base.label,
            new.label,
            base.label,
            compare::summarise_cases(&base.runs),
            new.label,
            compare::summarise_cases(&new.runs),
            differs(&comparison)
        )));
    }
    let gated_none = !options.gates.is_empty() && !comparison.rows.iter().any(|r| r.gated);
    if gated_none && comparison.newly_failed.is_empty() {
        let named: Vec<&str> = options.gates.iter().map(|g| g.figure.as_str()).collect();
        return Err(Error::usage(format!(
            "the gate ({}) compared nothing: no case both sides ran measured {} on both sides; gate a figure \
             these runs have (fslab compare --all lists them)",
            named.join(", "),
            if named.len() == 1 { "it" } else { "any of them" }
        )));
    }
    let rendered = if args.json {
        render::json(&comparison)
    } else if args.markdown {
        render::markdown(&comparison, args.all).into_bytes()
    } else {
        render::text(&comparison, args.all).into_bytes()
    };
    super::print(&rendered)?;
    Ok(match comparison.decision {
        Decision::Regression => ExitCode::from(1),
        Decision::Undecided if !args.allow_undecided => ExitCode::from(UNDECIDED_EXIT),
        Decision::Undecided | Decision::Pass => ExitCode::SUCCESS,
    })
}

/// `; they also differ in: ext4 conditions: none → memory=256M` (a
/// condition is part of a case's key, so it alone can leave the sides
/// nothing in common), or nothing when the setups are the same.
fn differs(comparison: &compare::Comparison) -> String {
    if comparison.differs.is_empty() {
        return String::new();
    }
    let said: Vec<String> = comparison.differs.iter().map(|d| format!("{}: {} → {}", d.what, d.base, d.new)).collect();
    format!("; their setups differ in: {}", said.join("; "))
}

/// The judging options from the flags, refused with the flag named when
/// they make no sense.
pub(super) fn options(args: &CompareOptionArgs) -> Result<CompareOptions> {
    let flag = |flag: &str, text: &str, why: String| Error::usage(format!("{flag} {text}: {why}"));
    let threshold = gate::threshold(&args.threshold).map_err(|why| flag("--threshold", &args.threshold, why))?;
    let alpha = gate::share(&args.alpha).map_err(|why| flag("--alpha", &args.alpha, why))?;
    if alpha <= 0.0 || alpha >= 0.5 {
        return Err(Error::usage(format!("--alpha {}: give a level between 0 and 0.5, such as 0.05", args.alpha)));
    }
    Ok(CompareOptions { threshold, alpha, host_figures: args.host_figures, ..CompareOptions::default() })
}

/// The gates of `--gate-file` then `--gate`, each figure once.
fn gates(args: &CompareArgs) -> Result<Vec<Gate>> {
    let mut gates = Vec::new();
    if let Some(path) = &args.gate_file {
        let shown = crate::text::path(path);
        gates = gate::parse_file(&read_gate_file(path)?, &shown).map_err(Error::usage)?;
    }
    for value in &args.gate {
        gates.extend(gate::parse(value, "--gate").map_err(|why| Error::usage(format!("--gate {why}")))?);
    }
    gate::merge(gates).map_err(Error::usage)
}

/// Refuse a gate on a figure this fslab does not declare and neither
/// side measured (fio's figures are named by their jobs), naming the
/// nearest known one.
fn check_known(gates: &[Gate], base: &Selection, new: &Selection) -> Result<()> {
    if gates.is_empty() {
        return Ok(());
    }
    let catalog = crate::harness::catalog();
    let mut known: Vec<&str> = catalog.figures.iter().map(|f| f.name).collect();
    let cases = base.runs.iter().chain(&new.runs).flat_map(|r| &r.cases);
    known.extend(cases.flat_map(|c| c.figures.iter().map(|(name, _)| name)));
    known.sort_unstable();
    known.dedup();
    gate::check_known(gates, &known).map_err(Error::usage)
}

/// A gate file's text: followed to the file only by the rules for named
/// files (another user's link is refused), opened without following a
/// link or waiting on a FIFO, and read only when it is a regular file of
/// at most [`MAX_GATE_FILE`] bytes of UTF-8.
fn read_gate_file(path: &Path) -> Result<String> {
    let shown = crate::text::path(path);
    let refuse = |why: &str| Error::usage(format!("--gate-file {shown}: {why}"));
    let found = super::store_place::named_file(path)?.ok_or_else(|| refuse("no such file; give the path of a gate file"))?;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&found)
        .map_err(|e| Error::io(path, "open the gate file", e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, "read the gate file", e))?;
    if !meta.is_file() {
        return Err(refuse(&format!("{}, not a regular file; give a file of gates", crate::error::file_type_words(&meta.file_type()))));
    }
    let mut bytes = Vec::new();
    (&mut file).take(MAX_GATE_FILE + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, "read the gate file", e))?;
    if bytes.len() as u64 > MAX_GATE_FILE {
        return Err(refuse(&format!("over {MAX_GATE_FILE} bytes; a gate file holds a gate a line")));
    }
    String::from_utf8(bytes).map_err(|_| refuse("not UTF-8 text; a gate file holds a gate a line"))
}
