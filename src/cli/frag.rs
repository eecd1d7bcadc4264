//! `fslab frag PATH...`: fragmentation of every regular file under each
//! path, walked in parallel (see `layout::tree`).

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::{FragArgs, Out, SCHEMA, format, write_error};
use crate::error::{Error, ErrorKind, Result};
use crate::layout::tree::{self, TreeOptions, TreeReport};
use crate::{text, units};

/// The most threads a walk uses: it waits on the disk and on directory
/// locks, and past a few dozen threads more only add start-up time and
/// contention (20000 took over a minute for 53 files).
const MAX_THREADS: usize = 64;

/// Run `fslab frag`.
pub fn run(args: &FragArgs) -> Result<ExitCode> {
    if args.threads == Some(0) {
        return Err(Error::usage("--threads 0: give at least one thread"));
    }
    let mut refused = Vec::new();
    for path in &args.paths {
        // A named symlink is followed (the walk follows none below), but
        // only by the rule for every path fslab is given (`ledger::walk`):
        // another user's is refused (exit 2), naming it and its owner.
        if let Err(e) = super::store_place::named_file(path) {
            refused.push(e);
            continue;
        }
        match std::fs::metadata(path) {
            Err(e) => refused.push(Error::io(path, "stat", e)),
            Ok(meta) if !meta.is_dir() && !meta.is_file() => refused.push(Error::usage(format!(
                "{}: is {}, not a directory or regular file; `fslab frag` walks directories and maps regular files",
                crate::text::path(path),
                crate::error::file_type_words(&meta.file_type())
            ))),
            Ok(_) => {}
        }
    }
    if let Some(first) = refused.first() {
        // Bad input is refused before any walking, so the figures are never
        // those of a partial set of what was asked for.
        for e in &refused {
            eprintln!("fslab: {e}");
        }
        return Err(Error { kind: first.kind, message: format!("{} path(s) cannot be walked", refused.len()) });
    }
    let mut threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads > MAX_THREADS {
        eprintln!("fslab: --threads {threads}: using {MAX_THREADS}, the most a walk uses");
        threads = MAX_THREADS;
    }
    let disk = crate::plan::disk::named(args.disk.disk.as_deref(), args.disk.disk_profile.as_deref())?;
    let options = TreeOptions { threads, top: args.top, largest: 0, cross_mounts: args.cross_mounts, disk };
    let report = tree::scan(&args.paths, &options).map_err(|e| Error::failed(format!("starting the walk: {e}")))?;

    let mut out = Out::stdout();
    let disk = options.disk.as_ref().map(|d| d.name.as_str());
    let written = if args.json { print_json(&mut out, &report, disk) } else { print_text(&mut out, &report, args, disk) };
    if let Err(e) = written.and_then(|_| out.flush()) {
        write_error(e)?;
        return Ok(ExitCode::SUCCESS);
    }
    if !args.json {
        for e in &report.errors {
            eprintln!("fslab: {}: {}", text::escape(&e.path), e.error);
        }
        let unlisted = report.summary.errors.saturating_sub(report.errors.len() as u64);
        if unlisted > 0 {
            eprintln!("fslab: ... and {unlisted} more errors");
        }
    }
    // Nothing mapped and every failure an unsupported ioctl: this file
    // system cannot be inspected here.
    if report.summary.files == 0 && report.summary.errors > 0 && report.errors.iter().all(|e| e.unsupported) {
        return Ok(ExitCode::from(ErrorKind::Environment.exit_code()));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_json(out: &mut Out, report: &TreeReport, disk: Option<&str>) -> std::io::Result<()> {
    let mut value = json!({
        "schema": SCHEMA,
        "summary": report.summary,
        "histogram": report.histogram,
        "worst": report.worst,
        "errors": report.errors,
    });
    if let Some(disk) = disk {
        value["disk"] = json!(disk);
    }
    serde_json::to_writer(out.writer(), &value).map_err(std::io::Error::other)?;
    out.writer().write_all(b"\n")
}

fn print_text(out: &mut Out, report: &TreeReport, args: &FragArgs, disk: Option<&str>) -> std::io::Result<()> {
    let s = &report.summary;
    let w = out.writer();
    writeln!(w, "files              {}", s.files)?;
    writeln!(w, "bytes              {} ({})", s.bytes, format::bytes(s.bytes))?;
    writeln!(w, "extents            {} ({} records)", s.extents, s.records)?;
    write!(w, "fragmented files   {} ({} have more extents than perfection)", s.fragmented_files, units::share(s.fragmented_files, s.files))?;
    if s.perfection_unknown_files > 0 {
        write!(w, "; perfection unknown for {}", s.perfection_unknown_files)?;
    }
    writeln!(w)?;
    writeln!(w, "layout score       {} by files, {} by bytes", format::score(s.layout_score_files), format::score(s.layout_score_bytes))?;
    // The seeks between files and their median distance: a sum of
    // distances (103.7 TiB over /usr's 6 GiB) is no distance anything
    // travels, so it stays in the JSON only.
    let median = s.next_file_seek_median_bytes.map_or(String::new(), |m| format!(", median {}", format::bytes(m)));
    writeln!(
        w,
        "next file          {} contiguous over {} pairs in directory order; {} seeks between files{median}",
        units::share(s.next_file_pairs - s.next_file_seeks, s.next_file_pairs),
        s.next_file_pairs,
        s.next_file_seeks,
    )?;
    if let (Some(m), Some(disk)) = (&s.modelled, disk) {
        let how = " (directory order)";
        write!(w, "modelled read      {}", super::map::modelled_words(&m.figures, disk, how))?;
        writeln!(w)?;
        if m.unmodelled_files > 0 {
            let files = if m.unmodelled_files == 1 { "file" } else { "files" };
            writeln!(w, "{:19}{} {files} not modelled: {}", "", m.unmodelled_files, m.unmodelled_why.join("; "))?;
        }
    }
    writeln!(w, "errors             {}", s.errors)?;
    if !report.histogram.is_empty() {
        writeln!(w, "\nextents per file        files")?;
        for b in &report.histogram {
            let range = if b.extents_min == b.extents_max {
                b.extents_min.to_string()
            } else {
                format!("{}-{}", b.extents_min, b.extents_max)
            };
            writeln!(w, "{range:>16}  {:>11}  {:>6}", b.files, units::share(b.files, s.files))?;
        }
    }
    if !report.worst.is_empty() {
        // The headings over their columns: right-aligned over the
        // figures, the path left-aligned over the paths.
        writeln!(w, "\nworst {} files:", args.top.min(report.worst.len()))?;
        // With --disk, each file's own modelled read and its ratio to the
        // same bytes in one piece, before the path.
        let modelled = |f: &crate::layout::tree::WorstFile| {
            let m = f.modelled.as_ref()?;
            let read = m.modelled_read_s.map_or_else(|| "-".to_string(), |s| crate::compare::format::value(s, "s"));
            let ratio = m.modelled_read_ratio.map_or_else(|| "-".to_string(), super::map::ratio_words);
            Some(format!("{read:>9}  {ratio:>7}  "))
        };
        let heads = if disk.is_some() { format!("{:>9}  {:>7}  ", "read", "ratio") } else { String::new() };
        writeln!(w, "{:>12}  {:>10}  {:>6}  {:>9}  {heads}path", "extents", "perfection", "layout", "size")?;
        for f in &report.worst {
            writeln!(
                w,
                "{:>12}  {:>10}  {:>6}  {:>9}  {}{}",
                f.extents,
                format::opt(f.perfection),
                format::score(f.layout_score),
                format::bytes(f.size),
                modelled(f).unwrap_or_default(),
                text::escape(&f.path)
            )?;
        }
    }
    Ok(())
}
