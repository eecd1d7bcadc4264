//! `fslab export RUN --csv|--json`: a stored run as a file other tools
//! read. JSON is exactly `fslab run --json`'s shape (so `show`, `compare`
//! and `report` take the file back); CSV is one row per figure.
//!
//! With `-o FILE` the output is written beside FILE and renamed over it
//! only when whole, so a failure never leaves a partial file that looks
//! finished.

use std::process::ExitCode;

use super::ExportArgs;
use crate::error::{Error, Result};
use crate::record::{Case, RunRecord};

/// Run `fslab export`.
pub fn run(args: &ExportArgs) -> Result<ExitCode> {
    let selection = args.store.resolve_one(&args.run)?;
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
        Some(path) => {
            if path.file_name().is_none() {
                return Err(Error::usage(format!("-o {}: give a file name", path.display())));
            }
            super::output::write_whole(path, &rendered, "write")?
        }
        None => super::print(&rendered)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The header of the CSV export: the case and figure, then how the
/// case's target was made and started (mkfs arguments and mount options
/// as given to the tools, the case's conditions and the run's sysctls as
/// `key=value;...`, the aging profile, the fill as a fraction), so a
/// spreadsheet can tell set-ups apart; last the case's busy-machine note
/// (empty on a quiet machine), so noisy timings can be filtered out, and
/// the guest it ran in (`6.1.0-56-amd64 tcg`: release and acceleration;
/// empty on the host), so emulated timings can be too.
const CSV_HEADER: &str = "run,case,scenario,fs,params,repeat,status,figure,value,unit,better,kind,missing,\
                          mkfs_args,mount_opts,conditions,sysctls,age,fill,busy,guest\n";

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
            let setup = setup_cells(run, case);
            let guest = case.guest.as_ref().map(crate::record::GuestRecord::summary).unwrap_or_default();
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
                    &setup[0],
                    &setup[1],
                    &setup[2],
                    &setup[3],
                    &setup[4],
                    &setup[5],
                    case.busy.as_deref().unwrap_or(""),
                    &guest,
                ];
                let cells: Vec<String> = fields.iter().map(|c| csv_cell(c)).collect();
                out.push_str(&cells.join(","));
                out.push('\n');
            }
        }
    }
    out.into_bytes()
}

/// A case's set-up cells: mkfs arguments, mount options, conditions, the
/// run's sysctls, aging profile and fill (empty when there is none).
fn setup_cells(run: &RunRecord, case: &Case) -> [String; 6] {
    let pairs = |list: Vec<String>| list.join(";");
    let start = case.start.as_ref();
    [
        shell_words::join(&case.target.mkfs_args),
        case.target.mount_opts.clone().unwrap_or_default(),
        pairs(case.conditions.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        pairs(run.sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        start.and_then(|s| s.age.clone()).unwrap_or_default(),
        start.and_then(|s| s.fill).map(|f| f.to_string()).unwrap_or_default(),
    ]
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
    fn the_guest_column_names_a_guest_s_release_and_acceleration_and_is_empty_on_the_host() {
        let mut run: RunRecord = serde_json::from_value(serde_json::json!({
            "id": "r", "tag": null, "started_at": "", "command": [], "complete": true, "sysctls": [], "cases": [],
            "environment": {"fslab_version": "0.1.0", "kernel": "6.18.44", "machine": "x86_64", "cpu": null, "cpus": 2,
                            "memory_bytes": null, "tools": {}, "disk": null}
        }))
        .unwrap();
        for guest in [None, Some(crate::record::guest::tests::guest(true))] {
            let mut case = Case::new("replace-files", "ext4", serde_json::Map::new(), 1);
            case.figures.set("wall_s", 1.5, "s", crate::record::Better::Lower, crate::record::Kind::Timing);
            case.guest = guest;
            run.cases.push(case);
        }
        let csv = String::from_utf8(render_csv(&[run])).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].ends_with(",busy,guest"), "{csv}");
        assert!(lines[1].ends_with(",,") && lines[2].ends_with(",,6.1.0-56-amd64 tcg"), "{csv}");
        assert!(lines.iter().all(|l| l.split(',').count() == lines[0].split(',').count()), "{csv}");
    }
}
