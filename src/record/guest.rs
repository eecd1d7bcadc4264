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
    /// The sysctls fslab set in the guest because it was emulated
    /// (`vm.dirty_writeback_centisecs=5000`): the writeback timers,
    /// stretched as the emulator stretches the work ([`EMULATED_TIMERS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emulation_sysctls: Vec<String>,
}

/// The writeback timers an emulated guest runs with unless the run sets
/// them: ten times the kernel's defaults (5 s and 30 s).
///
/// Why: the emulator runs the guest's work 10-30 times slower than the
/// hardware (a 256 MiB mmap-fill's stores: 0.4 s here, 5-12 s in the
/// guest) while the guest's clock keeps real time, so a timer that fires
/// after the work on the hardware fires inside it in the guest. The
/// flusher's first wake, 5 s after a disk's first dirty inode, then
/// writes back a fill half done, in its stores' order, and the guest
/// reports extents the hardware would not make. Stretched tenfold, the
/// timers fall at about the same point of the work as on the hardware.
/// The journal's commit interval and xfs's log timers are the file
/// system's own and are left as they are.
pub const EMULATED_TIMERS: [(&str, &str); 2] =
    [("vm.dirty_writeback_centisecs", "5000"), ("vm.dirty_expire_centisecs", "30000")];

/// The mark a timing measured under emulation carries in tables, the
/// report and `compare`, so nobody reads an emulator's seconds as the
/// kernel's.
pub const EMULATED_MARK: &str = "†";

/// What [`EMULATED_MARK`] means: said once under the tables (and once on
/// the report page) that carry it.
pub const EMULATED_FOOTNOTE: &str = "emulated (TCG): timings measure the emulator; exact figures carry over";

/// Why `compare` judges no timing of an emulated case: said once per
/// comparison, and the reason every such row carries.
pub const EMULATED_NOT_JUDGED: &str = "timings emulated (TCG): not judged";

impl GuestRecord {
    /// The guest in a few words, as the CSV export's `guest` column and
    /// `compare`'s "what differs" name it: `6.1.0-56-amd64 tcg`.
    pub fn summary(&self) -> String {
        format!("{} {}", self.release, self.accel)
    }
}

impl super::Case {
    /// Whether the case's timings are an emulator's (it ran in a guest
    /// under TCG): its exact figures still count, its timings are not
    /// judged.
    pub fn timings_emulated(&self) -> bool {
        self.guest.as_ref().is_some_and(|g| g.emulated)
    }
}

/// `† emulated (TCG): timings measure the emulator; exact figures carry
/// over (why: /dev/kvm is PVM).`: the footnote said once under tables of
/// `cases` when some of them were emulated, the first reason given; `None`
/// when none was.
pub fn emulated_footnote(cases: &[&super::Case]) -> Option<String> {
    let emulated: Vec<&GuestRecord> = cases.iter().filter_map(|c| c.guest.as_ref()).filter(|g| g.emulated).collect();
    let first = emulated.first()?;
    let why = first.why_emulated.as_deref().map(|w| format!(" (why: {w})")).unwrap_or_default();
    let timers = match emulated.iter().find(|g| !g.emulation_sysctls.is_empty()) {
        Some(g) => format!("; its writeback timers ran 10 times longer, as its work did: {}", g.emulation_sysctls.join(", ")),
        None => String::new(),
    };
    Some(format!("{EMULATED_MARK} {EMULATED_FOOTNOTE}{why}{timers}."))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A guest record as a TCG (`emulated`) or KVM guest of 6.1 reports it.
    pub(crate) fn guest(emulated: bool) -> GuestRecord {
        GuestRecord {
            kernel: "/var/cache/fslab/kernels/vmlinux-6.1.0-56-amd64".into(),
            release: "6.1.0-56-amd64".into(),
            accel: if emulated { "tcg" } else { "kvm" }.into(),
            emulated,
            why_emulated: emulated.then(|| "/dev/kvm is PVM, which cannot boot a stock kernel".into()),
            memory: "512M".into(),
            memory_bytes: 512 << 20,
            cpus: 2,
            boot_s: Some(3.4),
            wall_s: 41.5,
            qemu: "QEMU emulator version 7.2.19".into(),
            emulation_sysctls: if emulated { EMULATED_TIMERS.map(|(k, v)| format!("{k}={v}")).to_vec() } else { Vec::new() },
        }
    }

    #[test]
    fn the_footnote_is_said_only_for_emulated_cases_with_the_first_reason() {
        let host = super::super::Case::new("replace-files", "ext4", serde_json::Map::new(), 1);
        let mut kvm = host.clone();
        kvm.guest = Some(guest(false));
        let mut tcg = host.clone();
        tcg.guest = Some(guest(true));
        assert!(!host.timings_emulated() && !kvm.timings_emulated() && tcg.timings_emulated());
        assert_eq!(emulated_footnote(&[&host, &kvm]), None);
        let note = emulated_footnote(&[&host, &tcg, &tcg]).unwrap();
        assert_eq!(
            note,
            "† emulated (TCG): timings measure the emulator; exact figures carry over (why: /dev/kvm is PVM, which cannot \
             boot a stock kernel); its writeback timers ran 10 times longer, as its work did: \
             vm.dirty_writeback_centisecs=5000, vm.dirty_expire_centisecs=30000."
        );
        assert_eq!(guest(true).summary(), "6.1.0-56-amd64 tcg");
    }
}
