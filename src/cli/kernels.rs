//! `fslab kernels IMAGE...`: what each kernel image can do here as a
//! guest, as text or JSON (`kernels: [...]`).

use std::fmt::Write as _;
use std::process::ExitCode;

use super::KernelsArgs;
use crate::error::Result;
use crate::vm::kernel::{self, KernelReport};

/// Run `fslab kernels`.
pub fn run(args: &KernelsArgs) -> Result<ExitCode> {
    let reports: Vec<KernelReport> =
        args.images.iter().map(|image| kernel::report(image, args.kernel_modules.as_deref())).collect::<Result<_>>()?;
    let rendered = if args.json {
        crate::json_document("kernels", &reports)
    } else {
        reports.iter().map(render_text).collect::<Vec<_>>().join("\n").into_bytes()
    };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn render_text(r: &KernelReport) -> String {
    let mut s = String::new();
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
