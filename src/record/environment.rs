//! What a run was measured on: kernel, tools, CPU, memory, disk — kept
//! with every run so that two runs can be compared knowing what differed.

use serde::{Deserialize, Serialize};

/// The machine and software a run was measured on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Environment {
    /// fslab's own version.
    pub fslab_version: String,
    /// The machine's host name (`uname -n`): which machine of many ran a
    /// plan's shard; none in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `uname -r`.
    pub kernel: String,
    /// `uname -m`.
    pub machine: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu: Option<String>,
    /// Online CPUs.
    pub cpus: usize,
    /// Total memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Version lines of the mkfs tools present, by program.
    pub tools: serde_json::Map<String, serde_json::Value>,
    /// The disk under the scratch folder.
    pub disk: Option<Disk>,
}

/// A block device's identity and queue settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Disk {
    /// Kernel name (`vda`, `nvme0n1`).
    pub name: String,
    /// Model string, when the driver gives one.
    pub model: Option<String>,
    /// Whether the kernel thinks it spins.
    pub rotational: Option<bool>,
    /// The active I/O scheduler.
    pub scheduler: Option<String>,
}

