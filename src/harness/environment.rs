//! What a run was measured on: kernel, tools, CPU, memory, disk. Kept with
//! every run so that two runs can be compared knowing what differed.

use std::path::Path;
use std::process::Command;

use crate::record::{Disk, Environment};

/// Read the environment; `scratch` is where images live (its disk is
/// described).
pub fn read_environment(scratch: &Path) -> Environment {
    let uname = rustix::system::uname();
    let mut tools = serde_json::Map::new();
    for (program, flag) in [("mke2fs", "-V"), ("mkfs.xfs", "-V"), ("mkfs.btrfs", "--version")] {
        if let Some(version) = tool_version(program, flag) {
            tools.insert(program.to_string(), version.into());
        }
    }
    Environment {
        fslab_version: concat!(env!("CARGO_PKG_VERSION"), " (", env!("FSLAB_GIT_COMMIT"), ")").to_string(),
        host: Some(uname.nodename().to_string_lossy().into_owned()),
        kernel: uname.release().to_string_lossy().into_owned(),
        machine: uname.machine().to_string_lossy().into_owned(),
        cpu: cpu_model(),
        cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        memory_bytes: memory_bytes(),
        tools,
        disk: disk_under(scratch),
    }
}

fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

fn memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The first line a tool prints for its version flag (mke2fs prints it on
/// stderr).
fn tool_version(program: &str, flag: &str) -> Option<String> {
    let path = crate::site::fs_type::find_program(program)?;
    let out = Command::new(path).arg(flag).output().ok()?;
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    let text = String::from_utf8_lossy(&text);
    text.lines().next().map(|l| l.trim().to_string())
}

fn disk_under(path: &Path) -> Option<Disk> {
    // The nearest existing ancestor (the scratch folder may not exist yet).
    let existing = path.ancestors().find(|p| p.exists())?;
    let device = crate::probe::blockstat::BlockDevice::holding(existing).ok()??.whole_disk();
    let queue = Path::new("/sys/class/block").join(&device.name).join("queue");
    let read = |p: &Path| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    let scheduler = read(&queue.join("scheduler")).and_then(|s| {
        s.split_whitespace().find(|w| w.starts_with('[')).map(|w| w.trim_matches(['[', ']']).to_string())
    });
    Some(Disk {
        model: read(&Path::new("/sys/class/block").join(&device.name).join("device/model")).filter(|m| !m.is_empty()),
        rotational: read(&queue.join("rotational")).map(|r| r == "1"),
        scheduler,
        name: device.name,
    })
}
