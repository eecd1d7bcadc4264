//! `fslab report RUN -o FILE.html`: one self-contained HTML page of a run
//! (or of every run a tag or store names), with the comparison against a
//! base when `--compare BASE` is given.

use std::process::ExitCode;

use super::ReportArgs;
use crate::compare::{self, Side, render};
use crate::error::{Error, Result};

/// Run `fslab report`.
pub fn run(args: &ReportArgs) -> Result<ExitCode> {
    if args.output.extension().is_none_or(|e| e != "html" && e != "htm") {
        return Err(Error::usage(format!(
            "-o {}: the report is one HTML file; give a name ending in .html",
            args.output.display()
        )));
    }
    let options = super::compare::options(&args.compare_options)?;
    let selection = crate::store::resolve(&args.store.location, &args.run)?;
    let compared = match &args.compare {
        Some(base) => {
            let base = crate::store::resolve(&args.store.location, base)?;
            let comparison = compare::compare(
                Side { label: &base.label, runs: &base.runs },
                Side { label: &selection.label, runs: &selection.runs },
                &options,
            );
            Some(render::html_table(&comparison))
        }
        None => None,
    };
    let title = format!("fslab report: {}", selection.label);
    let page = crate::report::html::render(&crate::harness::catalog(), &selection.runs, &title, compared.as_deref());
    super::output::write_whole(&args.output, &page, "write")?;
    eprintln!("fslab: wrote {} ({} KiB)", args.output.display(), page.len().div_ceil(1024));
    Ok(ExitCode::SUCCESS)
}
