//! Where a case ran when it ran in a guest (`--kernel IMAGE`): the
//! kernel, the virtual machine's size and how it was accelerated. Under
//! software emulation (TCG) the case's timings measure the emulator as
//! much as the kernel, so `compare` leaves them out of its verdicts; the
//! exact figures (extents, commits, I/O counts) carry over unchanged.

use serde::{Deserialize, Serialize};

/// The guest a case ran in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestRecord {
    /// The kernel image as given (`--kernel PATH`).
    pub kernel: String,
    /// The guest kernel's release (`6.1.0-56-amd64`), as it reported it.
    pub release: String,
    /// How QEMU ran it: `kvm` or `tcg`.
    pub accel: String,
    /// Whether the CPU was emulated (TCG): every timing figure of the
    /// case is then the emulator's, not the kernel's.
    pub emulated: bool,
    /// Why there was no hardware acceleration, when `emulated`
    /// (`/dev/kvm is PVM, which cannot boot a stock kernel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_emulated: Option<String>,
    /// The guest's memory, as given (`512M`).
    pub memory: String,
    /// The guest's memory in bytes.
    pub memory_bytes: u64,
    /// Its virtual CPUs.
    pub cpus: u32,
    /// The guest's uptime when its init started (the kernel's own boot),
    /// when the console said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_s: Option<f64>,
    /// Seconds from QEMU's start to its exit.
    pub wall_s: f64,
    /// The QEMU that ran it (`QEMU emulator version 7.2.x`).
    pub qemu: String,
}
