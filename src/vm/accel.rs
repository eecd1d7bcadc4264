//! Which acceleration a guest gets here. KVM needs the processor's
//! hardware virtualisation (`vmx` or `svm`) and a usable `/dev/kvm`. A
//! `/dev/kvm` served by PVM (`kvm_pvm`, a paravirtual KVM for hosts that
//! are themselves guests) cannot boot a stock kernel: it is named, and the
//! guest runs under TCG, QEMU's software emulation. Under TCG exact figures
//! (extents, commits, I/O counts) carry over; times are inflated and
//! uneven, so a case's timings are marked emulated.

use std::path::Path;

use serde::Serialize;

/// How the guest's processor runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "accel", rename_all = "snake_case")]
pub enum Accel {
    /// Hardware virtualisation through `/dev/kvm`.
    Kvm,
    /// QEMU's software emulation, and why KVM is not used.
    Tcg {
        /// In words: "no /dev/kvm", "/dev/kvm is PVM (kvm_pvm) ...".
        why: String,
    },
}

impl Accel {
    /// QEMU's name for it (`-accel kvm|tcg`).
    pub fn qemu_name(&self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg { .. } => "tcg",
        }
    }

    /// Whether times measured in the guest are emulated (inflated,
    /// uneven) and must stay out of timing verdicts.
    pub fn emulated(&self) -> bool {
        matches!(self, Accel::Tcg { .. })
    }

    /// One line for `fslab kernels` and the case record.
    pub fn describe(&self) -> String {
        match self {
            Accel::Kvm => "kvm (hardware virtualisation)".to_string(),
            Accel::Tcg { why } => format!("tcg (software emulation: {why}; timings are emulated)"),
        }
    }
}

/// What the host shows, read from `/proc`, `/sys` and `/dev`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// `/proc/cpuinfo` flags include `vmx` or `svm`.
    pub hardware_virt: bool,
    /// `/dev/kvm` exists and opens read-write.
    pub kvm_device: bool,
    /// `/sys/module/kvm_pvm` exists: `/dev/kvm` is PVM's.
    pub pvm: bool,
}

impl HostFacts {
    /// Read them from this host.
    pub fn read() -> HostFacts {
        HostFacts::read_from(Path::new("/"))
    }

    /// Read them below `root` (a test's fake `/proc`, `/sys`, `/dev`).
    pub fn read_from(root: &Path) -> HostFacts {
        let cpuinfo = std::fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
        let hardware_virt = cpuinfo
            .lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "vmx" || f == "svm"));
        let kvm_device = std::fs::OpenOptions::new().read(true).write(true).open(root.join("dev/kvm")).is_ok();
        let pvm = root.join("sys/module/kvm_pvm").exists();
        HostFacts { hardware_virt, kvm_device, pvm }
    }

    /// The acceleration these facts allow.
    pub fn accel(&self) -> Accel {
        let why = if self.pvm {
            "/dev/kvm is PVM (kvm_pvm), which cannot boot a stock kernel"
        } else if !self.kvm_device {
            "no usable /dev/kvm"
        } else if !self.hardware_virt {
            "the processor shows no vmx or svm"
        } else {
            return Accel::Kvm;
        };
        Accel::Tcg { why: why.to_string() }
    }
}

/// The acceleration a guest gets on this host.
pub fn detect() -> Accel {
    HostFacts::read().accel()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvm_only_with_hardware_virtualisation_a_device_and_no_pvm() {
        let kvm = HostFacts { hardware_virt: true, kvm_device: true, pvm: false };
        assert_eq!(kvm.accel(), Accel::Kvm);
        assert!(!kvm.accel().emulated());
        let pvm = HostFacts { hardware_virt: false, kvm_device: true, pvm: true };
        assert!(pvm.accel().describe().contains("PVM"), "{}", pvm.accel().describe());
        assert_eq!(pvm.accel().qemu_name(), "tcg");
        assert!(pvm.accel().emulated());
        let none = HostFacts { hardware_virt: true, kvm_device: false, pvm: false };
        assert!(none.accel().describe().contains("no usable /dev/kvm"));
        let no_flags = HostFacts { hardware_virt: false, kvm_device: true, pvm: false };
        assert!(no_flags.accel().describe().contains("no vmx or svm"));
    }

    #[test]
    fn facts_are_read_from_cpuinfo_dev_and_sys() {
        let dir = crate::test_temp::dir("");
        let root = dir.path();
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::create_dir_all(root.join("dev")).unwrap();
        std::fs::create_dir_all(root.join("sys/module/kvm_pvm")).unwrap();
        std::fs::write(root.join("proc/cpuinfo"), "processor\t: 0\nflags\t\t: fpu sse2 svm lm\n").unwrap();
        std::fs::write(root.join("dev/kvm"), "").unwrap();
        assert_eq!(HostFacts::read_from(root), HostFacts { hardware_virt: true, kvm_device: true, pvm: true });
        std::fs::remove_dir(root.join("sys/module/kvm_pvm")).unwrap();
        assert_eq!(HostFacts::read_from(root).accel(), Accel::Kvm);
    }

    #[test]
    fn this_host_names_pvm_when_it_has_it() {
        if Path::new("/sys/module/kvm_pvm").exists() {
            assert!(detect().describe().contains("PVM"));
        }
    }
}
