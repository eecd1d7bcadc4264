//! `fslab export RUN --csv|--json`: a stored run as a file other tools
//! read. JSON is exactly `fslab run --json`'s shape (so `show`, `compare`
//! and `report` take the file back); CSV is one row per figure.
//!
//! With `-o FILE` the output is written beside FILE and renamed over it
//! only when whole, so a failure never leaves a partial file that looks
//! finished.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use super::ExportArgs;
use crate::error::{Error, Result};
use crate::record::RunRecord;

/// Run `fslab export`.
pub fn run(args: &ExportArgs) -> Result<ExitCode> {
    let selection = crate::store::resolve(&args.store.location, &args.run)?;
    let rendered = if args.csv {
        render_csv(&selection.runs)
    } else {
        match selection.runs.as_slice() {
            [one] => super::exec::render_json(one),
            many => {
                return Err(Error::usage(format!(
                    "{} names {} runs; JSON export takes one (give a run id), CSV takes many",
                    selection.label,
                    many.len()
                )));
            }
        }
    };
    match &args.output {
        Some(path) => write_whole(path, &rendered)?,
        None => super::print(&rendered)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Write `bytes` to a temporary file beside `path`, then rename it over
/// `path`.
pub(super) fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().ok_or_else(|| Error::usage(format!("-o {}: give a file name", path.display())))?;
    let temp = path.with_file_name(format!(".{}.{}.part", name.to_string_lossy(), std::process::id()));
    let written = std::fs::File::create(&temp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Error::io(path, "write", e)
    })
}

/// The header of the CSV export.
const CSV_HEADER: &str =
    "run,case,scenario,fs,params,repeat,status,figure,value,unit,better,kind,missing\n";

/// One row per figure of every case of every run.
fn render_csv(runs: &[RunRecord]) -> Vec<u8> {
    let mut out = String::from(CSV_HEADER);
    for run in runs {
        for (n, case) in run.cases.iter().enumerate() {
            let params: Vec<String> = case
                .params
                .iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                })
                .collect();
            for (name, f) in case.figures.iter() {
                let value = f.value.map(|v| v.to_string()).unwrap_or_default();
                let fields = [
                    run.id.as_str(),
                    &n.to_string(),
                    &case.scenario,
                    &case.fs,
                    &params.join(";"),
                    &case.repeat.to_string(),
                    case.status.as_str(),
                    name,
                    &value,
                    &f.unit,
                    f.better.as_str(),
                    f.kind.as_str(),
                    f.missing.as_deref().unwrap_or(""),
                ];
                let cells: Vec<String> = fields.iter().map(|c| csv_cell(c)).collect();
                out.push_str(&cells.join(","));
                out.push('\n');
            }
        }
    }
    out.into_bytes()
}

/// A CSV cell (RFC 4180): quoted when it holds a comma, quote or line
/// break, with quotes doubled.
fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_cell("ext4"), "ext4");
        assert_eq!(csv_cell("size=1M;order=seed"), "size=1M;order=seed");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn a_failed_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing-folder").join("out.csv");
        assert!(write_whole(&target, b"x").is_err());
        let whole = dir.path().join("out.csv");
        write_whole(&whole, b"whole\n").unwrap();
        assert_eq!(std::fs::read(&whole).unwrap(), b"whole\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
