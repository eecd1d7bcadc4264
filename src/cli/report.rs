//! `fslab report RUN -o FILE.html`: one self-contained HTML page of a run
//! (or of every run a tag or store names), with the comparison against a
//! base when `--compare BASE` is given; `--history` draws the runs as a
//! series instead (the page of `fslab history --report`).

use std::process::ExitCode;

use super::ReportArgs;
use crate::compare::{self, Side, render};
use crate::error::{Error, Result};
use crate::report::html::{Compared, Regressed};

/// Run `fslab report`.
pub fn run(args: &ReportArgs) -> Result<ExitCode> {
    if args.output.extension().is_none_or(|e| e != "html" && e != "htm") {
        return Err(Error::usage(format!(
            "-o {}: the report is one HTML file; give a name ending in .html",
            args.output.display()
        )));
    }
    let page = if args.history { history(args)? } else { page(args)? };
    super::output::write_whole(&args.output, &page, "write")?;
    eprintln!("fslab: wrote {} ({} KiB)", args.output.display(), page.len().div_ceil(1024));
    Ok(ExitCode::SUCCESS)
}

/// The page of a run, with its comparison when asked.
fn page(args: &ReportArgs) -> Result<Vec<u8>> {
    let options = super::compare::options(&args.compare_options)?;
    let selection = args.store.resolve_one(&args.run)?;
    let base = match &args.compare {
        Some(base) => Some(args.store.resolve_one(base)?),
        None => None,
    };
    let compared = base.as_ref().map(|base| {
        let comparison = compare::compare(
            Side { label: &base.label, runs: &base.runs },
            Side { label: &selection.label, runs: &selection.runs },
            &options,
        );
        Compared {
            base_label: &base.label,
            base_runs: &base.runs,
            new_label: &selection.label,
            summary_html: render::html_summary(&comparison),
            table_html: render::html_table(&comparison),
            regressed: Regressed::of(&comparison.rows),
        }
    });
    let title = format!("fslab report: {}", selection.label);
    Ok(crate::report::html::render(&crate::harness::catalog(), &selection.runs, &title, compared.as_ref()))
}

/// The page of `report --history SERIES`.
fn history(args: &ReportArgs) -> Result<Vec<u8>> {
    let threshold = super::history::threshold(&args.compare_options.threshold).map_err(Error::usage)?;
    let (label, runs) = super::history::runs_of(&args.store, &args.run, None, None)?;
    let host_figures = args.compare_options.host_figures;
    let (all, _) = super::history::series_of(&label, &runs, &[], threshold, host_figures)?;
    Ok(crate::report::history::page(&label, &runs, &all).into_bytes())
}
