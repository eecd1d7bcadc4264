//! `fslab kernels IMAGE...`: what each kernel image can do here as a
//! guest, as text or JSON (`kernels: [...]`); `debian:NAME` is Debian's
//! packaged kernel, fetched into the kernel cache first. `fslab kernels
//! --list debian[:RANGE]`: the kernels apt knows, oldest first, as a
//! table or JSON (`kernels_available: [...]`).

use std::fmt::Write as _;
use std::process::ExitCode;

use serde::Serialize;

use super::KernelsArgs;
use crate::distro::{self, Listed, Meta};
use crate::error::Result;
use crate::vm::kernel::{self, KernelReport};

/// One kernel reported: as given, Debian's package when it is one, and
/// what it can do.
#[derive(Debug, Serialize)]
struct Reported {
    /// The kernel as given (`debian:6.1.0-57` for each kernel a Debian
    /// name, list or range names).
    given: String,
    /// The package a Debian kernel was unpacked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    debian: Option<Meta>,
    #[serde(flatten)]
    report: KernelReport,
}

/// Run `fslab kernels`.
pub fn run(args: &KernelsArgs) -> Result<ExitCode> {
    if let Some(which) = &args.list {
        let listed = distro::list(which, &args.kernel_cache)?;
        let rendered = if args.json { crate::json_document("kernels_available", &listed) } else { render_list(&listed).into_bytes() };
        super::print(&rendered)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut reports = Vec::new();
    for given in &args.images {
        if !distro::is_debian(given) {
            let report = kernel::report(given, args.kernel_modules.as_deref())?;
            reports.push(Reported { given: given.clone(), debian: None, report });
            continue;
        }
        for entry in distro::kernels(given, &args.kernel_cache)? {
            let report = kernel::report(&entry.image.to_string_lossy(), args.kernel_modules.as_deref())?;
            reports.push(Reported { given: entry.given(), debian: Some(entry.meta), report });
        }
    }
    let rendered = if args.json {
        crate::json_document("kernels", &reports)
    } else {
        reports.iter().map(render_text).collect::<Vec<_>>().join("\n").into_bytes()
    };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// The list as a table: name, package version, size, where the cache
/// holds it.
fn render_list(listed: &[Listed]) -> String {
    let rows: Vec<[String; 4]> = listed
        .iter()
        .map(|l| {
            let cached = l.cached.as_deref().map_or_else(|| "no".to_string(), crate::text::path);
            let (name, version) = (crate::text::escape(&l.package.name), crate::text::escape(&l.package.version));
            [name.into_owned(), version.into_owned(), crate::units::bytes(l.package.size_bytes), cached]
        })
        .collect();
    let heading = ["name", "package version", "size", "cached"].map(String::from);
    let width = |i: usize| rows.iter().chain([&heading]).map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut s = format!("Debian's kernels apt knows, oldest first: {}\n", listed.len());
    for row in [&heading].into_iter().chain(&rows) {
        let _ = writeln!(s, "  {:<w0$}  {:<w1$}  {:>w2$}  {}", row[0], row[1], row[2], row[3]);
    }
    s.push_str("  fetch and check one: fslab kernels debian:NAME; run under it: fslab run SCENARIO --kernel debian:NAME\n");
    s
}

fn render_text(reported: &Reported) -> String {
    let r = &reported.report;
    let mut s = String::new();
    if let Some(meta) = &reported.debian {
        let _ = writeln!(
            s,
            "{}: {} {} ({}, SHA256 {})",
            crate::text::escape(&reported.given),
            crate::text::escape(&meta.package),
            crate::text::escape(&meta.version),
            crate::units::bytes(meta.size_bytes),
            meta.sha256
        );
    }
    let release = r.image.release.as_deref().unwrap_or("release unknown");
    let format = match (r.boots_by, r.image.compression) {
        ("pvh", _) => "vmlinux, boots by PVH entry".to_string(),
        (_, Some(c)) => format!("bzImage ({c}); unpacked to a vmlinux, it boots faster by PVH entry"),
        _ => "bzImage".to_string(),
    };
    let _ = writeln!(s, "{}: {release}, {format}", r.image.path.display());
    let _ = writeln!(s, "  modules        {} ({} modules, release {})", r.modules_dir.display(), r.modules, r.modules_release);
    for need in &r.guest_needs {
        let load = if need.load.is_empty() { String::new() } else { format!(": {}", need.load.join(" ")) };
        let _ = writeln!(s, "  {:<14} {}{load}", need.name, need.how);
    }
    for fs in &r.file_systems {
        let how = match (fs.available, fs.load.is_empty()) {
            (false, _) => format!("not available (missing {})", fs.missing.join(", ")),
            (true, true) => "built in".to_string(),
            (true, false) => format!("modules {}", fs.load.join(" ")),
        };
        let _ = writeln!(s, "  fs {:<11} {how}", fs.fs);
    }
    let _ = writeln!(s, "  acceleration   {}", r.accel.describe());
    let _ = writeln!(s, "  qemu           {}", r.qemu.as_deref().unwrap_or("missing: install qemu-system-x86"));
    let _ = writeln!(
        s,
        "  busybox        {}",
        if r.busybox_static { "static, /bin/busybox" } else { "missing: install busybox-static" }
    );
    let _ = writeln!(s, "  ready          {}", if r.ready { "yes" } else { "no" });
    s
}
