//! `fslab exec -- COMMAND`: run any command on fresh scratch file systems
//! (or in a directory) with every probe around it, and print one row per
//! target.
//!
//! The table is rendered to bytes after all targets ran; progress goes to
//! stderr while they run (only on a terminal).

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::{ExecArgs, Out, SCHEMA, write_error};
use crate::error::{Error, Result};
use crate::measure::Figures;
use crate::scenario::{self, Lab, Phase, Plan, RunRecord, Status};
use crate::target::{self, TargetOptions, TargetSpec};

/// Run `fslab exec`.
pub fn run(args: &ExecArgs) -> Result<ExitCode> {
    let plan = plan(args)?;
    let lab = Lab::open(plan)?;
    let environment = scenario::Environment::read(&lab.plan().target_options.scratch);
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
        let mut work = |dir: &std::path::Path| scenario::exec::run_command(lab.ledger(), &args.command, dir);
        cases.push(lab.measure(spec, "exec", params.clone(), 1, &progress, &mut work));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let record = RunRecord {
        id: lab.id.clone(),
        tag: args.tag.clone(),
        environment,
        sysctls: lab.plan().sysctls.iter().map(|s| (s.key.clone(), s.value.clone())).collect(),
        cases,
    };
    let closed = lab.close();
    crate::interrupt::check()?;
    closed?;

    let rendered = if args.json { render_json(&record) } else { render_text(&record).into_bytes() };
    let mut out = Out::stdout();
    if let Err(e) = out.writer().write_all(&rendered).and_then(|()| out.flush()) {
        write_error(e)?;
    }
    let failed = record.cases.iter().any(|c| c.status == Status::Failed);
    Ok(if failed { ExitCode::from(crate::error::ErrorKind::Failed.exit_code()) } else { ExitCode::SUCCESS })
}

/// Turn the arguments into a plan, refusing contradictions with the flag
/// named.
fn plan(args: &ExecArgs) -> Result<Plan> {
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
        cold_read: args.cold_read,
        tag: args.tag.clone(),
    })
}

fn params(args: &ExecArgs) -> serde_json::Map<String, serde_json::Value> {
    let mut params = serde_json::Map::new();
    let argv: Vec<String> = args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    params.insert("command".into(), argv.into());
    params.insert("cold_read".into(), args.cold_read.into());
    params
}

#[derive(Serialize)]
struct JsonOutput<'a> {
    schema: &'static str,
    run: &'a RunRecord,
}

fn render_json(record: &RunRecord) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(&JsonOutput { schema: SCHEMA, run: record }).expect("plain data serialises");
    out.push(b'\n');
    out
}

/// The columns of the text table: header, figure, how to show it.
const COLUMNS: [(&str, &str, Show); 15] = [
    ("wall s", "wall_s", Show::Seconds),
    ("user s", "user_s", Show::Seconds),
    ("sys s", "sys_s", Show::Seconds),
    ("MB wr", "written_bytes", Show::Megabytes),
    ("wr I/Os", "write_ios", Show::Count),
    ("rd I/Os", "read_ios", Show::Count),
    ("flushes", "flushes", Show::Count),
    ("commits", "journal_commits", Show::Count),
    ("files", "files", Show::Count),
    ("extents", "extents", Show::Count),
    ("perfect", "perfection", Show::Count),
    ("score", "layout_score", Show::Ratio),
    ("seeks", "seeks", Show::Count),
    ("cold MB/s", "cold_read_mbps", Show::Rate),
    ("cold rd/MiB", "cold_read_ios_per_mib", Show::Rate),
];

#[derive(Clone, Copy)]
enum Show {
    Seconds,
    Megabytes,
    Count,
    Ratio,
    Rate,
}

fn cell(figures: &Figures, name: &str, show: Show) -> String {
    match figures.value(name) {
        None => "-".to_string(),
        Some(v) => match show {
            Show::Seconds => format!("{v:.3}"),
            Show::Megabytes => format!("{:.1}", v / 1e6),
            Show::Count => format!("{v:.0}"),
            Show::Ratio => format!("{v:.3}"),
            Show::Rate => format!("{v:.1}"),
        },
    }
}

/// One row per target, then what failed and why.
fn render_text(record: &RunRecord) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "run {}  (kernel {})", record.id, record.environment.kernel);
    let mut rows: Vec<Vec<String>> = vec![
        ["fs", "status"].iter().map(|h| h.to_string()).chain(COLUMNS.iter().map(|c| c.0.to_string())).collect(),
    ];
    for case in &record.cases {
        let status = match case.status {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
        };
        let mut row = vec![case.fs.clone(), status.to_string()];
        row.extend(COLUMNS.iter().map(|(_, name, show)| cell(&case.figures, name, *show)));
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    for row in &rows {
        let mut line = String::new();
        for (i, text) in row.iter().enumerate() {
            if i < 2 {
                let _ = write!(line, "{text:<w$}  ", w = widths[i]);
            } else {
                let _ = write!(line, "{text:>w$}  ", w = widths[i]);
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    for case in record.cases.iter().filter(|c| c.status == Status::Failed) {
        let _ = writeln!(s, "\n{}: {}", case.fs, case.error.as_deref().unwrap_or("failed"));
        if let Some(command) = &case.command {
            let tail: Vec<&str> = command.stderr.lines().rev().take(10).collect();
            for line in tail.iter().rev() {
                let _ = writeln!(s, "  | {line}");
            }
        }
    }
    // Missing figures, grouped by reason, so a `-` is never a mystery.
    for case in record.cases.iter().filter(|c| c.status == Status::Ok) {
        let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
        for (name, figure) in case.figures.iter().filter(|(_, f)| f.value.is_none()) {
            let why = figure.missing.clone().unwrap_or_default();
            match reasons.iter_mut().find(|(w, _)| *w == why) {
                Some((_, names)) => names.push(name),
                None => reasons.push((why, vec![name])),
            }
        }
        for (why, names) in reasons {
            let _ = writeln!(s, "{}: not measured: {} ({why})", case.fs, names.join(", "));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Better, Kind};

    #[test]
    fn missing_figures_show_as_a_dash_and_counts_as_integers() {
        let mut f = Figures::new();
        f.set("extents", 3.0, "count", Better::Lower, Kind::Exact);
        f.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "needs root");
        assert_eq!(cell(&f, "extents", Show::Count), "3");
        assert_eq!(cell(&f, "journal_commits", Show::Count), "-");
        assert_eq!(cell(&f, "nothing", Show::Count), "-");
        f.set("written_bytes", 67_108_864.0, "bytes", Better::Lower, Kind::Exact);
        assert_eq!(cell(&f, "written_bytes", Show::Megabytes), "67.1");
    }
}
