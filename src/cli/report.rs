//! `fslab report RUN -o FILE.html`: one self-contained HTML page of a run
//! (or of every run a tag or store names), with the comparison against a
//! base when `--compare BASE` is given.

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
    let page = crate::report::html::render(&crate::harness::catalog(), &selection.runs, &title, compared.as_ref());
    super::output::write_whole(&args.output, &page, "write")?;
    eprintln!("fslab: wrote {} ({} KiB)", args.output.display(), page.len().div_ceil(1024));
    Ok(ExitCode::SUCCESS)
}
