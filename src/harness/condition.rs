//! The conditions a run varies per case, beside the target: a memory
//! limit (`--memory 192M,1G`), sysctls given as a list
//! (`--sysctl vm.dirty_background_bytes=16M,64M`), and how full and aged
//! the target starts (`--fill 50%,80%`, a preset's aged start). Each is a matrix axis,
//! as `--fs` is; a case carries its values in `Case::conditions`, which its
//! key and its place (`xfs@192M`) include.
//!
//! With `--kernel`, the kernel is an axis too: `host` (this machine's
//! kernel, no guest) or an image booted in a guest per case, whose size
//! (`--vm-memory`) is another axis; a case records the kernel's release as
//! its `kernel` condition, so labels read `ext4@6.1.0-56-amd64`.
//!
//! The design decision: a `--sysctl` with one value stays run-wide, set
//! once for the whole run and recorded in the run's `sysctls` as before,
//! so runs made before conditions existed still compare with new ones;
//! only a list of values makes a per-case condition.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::harness::conditions::sysctl::SysctlSetting;
use crate::vm::prepare::GuestKernel;

/// Which kernel a case runs under (`--kernel`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelChoice {
    /// This machine's own kernel, with its release: no guest.
    Host(String),
    /// A kernel booted in a guest for the case.
    Guest(Arc<GuestKernel>),
}

impl KernelChoice {
    /// The kernel's release (`6.1.0-56-amd64`): the case's `kernel`
    /// condition.
    pub fn release(&self) -> &str {
        match self {
            KernelChoice::Host(release) => release,
            KernelChoice::Guest(kernel) => &kernel.release,
        }
    }
}

/// One sysctl of a case: the setting written, and its value as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseSysctl {
    /// What is written (sizes already in bytes).
    pub setting: SysctlSetting,
    /// The value as the user gave it (`16M`), for the record.
    pub shown: String,
}

/// The conditions of one case; the default is the machine's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Condition {
    /// The work's memory limit: as given (`256M`) and in bytes.
    pub memory: Option<(String, u64)>,
    /// Sysctls set for this case alone, put back after it.
    pub sysctls: Vec<CaseSysctl>,
    /// An aging profile for this case's target, as given (`churn`),
    /// replacing the run's `--age`.
    pub age: Option<String>,
    /// A fill level for this case's target, as given (`80%`), replacing
    /// the run's `--fill`.
    pub fill: Option<String>,
    /// The kernel, when the run names kernels (`--kernel`).
    pub kernel: Option<KernelChoice>,
    /// A guest's memory when the run varies it (`--vm-memory 512M,4G`):
    /// as given, and in bytes.
    pub vm_memory: Option<(String, u64)>,
    /// What is done about crashes: `record` (`--crash-record`: every
    /// write the device completes is logged). The device is slower for
    /// it, so such a case is a place of its own (`ext4@crash=record`),
    /// never compared with an unrecorded one.
    pub crash: Option<String>,
    /// A neighbour's fsync beside the work (`--neighbour-fsync`): the
    /// interval as given, and as a duration.
    pub neighbour_fsync: Option<(String, std::time::Duration)>,
}

impl Condition {
    /// Whether the case runs in a guest (`--kernel IMAGE`), not on this
    /// machine's kernel.
    pub fn in_guest(&self) -> bool {
        matches!(self.kernel, Some(KernelChoice::Guest(_)))
    }

    /// The case's `conditions`: `memory` and each sysctl key, with the
    /// values as given.
    pub fn as_map(&self) -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        if let Some((shown, _)) = &self.memory {
            map.insert("memory".to_string(), shown.clone());
        }
        for s in &self.sysctls {
            map.insert(s.setting.key.clone(), s.shown.clone());
        }
        if let Some(age) = &self.age {
            map.insert("age".to_string(), age.clone());
        }
        if let Some(fill) = &self.fill {
            map.insert("fill".to_string(), fill.clone());
        }
        if let Some(kernel) = &self.kernel {
            map.insert("kernel".to_string(), kernel.release().to_string());
        }
        if let Some((shown, _)) = &self.vm_memory {
            map.insert("vm_memory".to_string(), shown.clone());
        }
        if let Some(crash) = &self.crash {
            map.insert("crash".to_string(), crash.clone());
        }
        if let Some((shown, _)) = &self.neighbour_fsync {
            map.insert("neighbour_fsync".to_string(), shown.clone());
        }
        map
    }

    /// Where a case on the target `label` runs under this condition, as
    /// its record will name it (`xfs@192M`), for progress lines.
    pub fn place(&self, label: &str) -> String {
        let mut case = crate::record::Case::new("", label, serde_json::Map::new(), 1);
        case.conditions = self.as_map();
        case.place()
    }
}

/// `conditions` once per neighbour of `neighbours` (as given, `off` or
/// `1s`, with the interval), the neighbour varying fastest; `off` is a
/// case without one.
pub fn with_neighbours(conditions: Vec<Condition>, neighbours: &[(String, Option<std::time::Duration>)]) -> Vec<Condition> {
    if neighbours.is_empty() {
        return conditions;
    }
    conditions
        .into_iter()
        .flat_map(|c| {
            neighbours.iter().map(move |(shown, every)| Condition {
                neighbour_fsync: every.map(|every| (shown.clone(), every)),
                ..c.clone()
            })
        })
        .collect()
}

/// `conditions` once per fill level of `fills` (as given, `80%`), fill
/// varying fastest; `conditions` as they are when `fills` is empty.
pub fn with_fills(conditions: Vec<Condition>, fills: &[String]) -> Vec<Condition> {
    if fills.is_empty() {
        return conditions;
    }
    conditions
        .into_iter()
        .flat_map(|c| fills.iter().map(move |f| Condition { fill: Some(f.clone()), ..c.clone() }))
        .collect()
}

/// `conditions` once per kernel of `kernels`, kernel varying slowest; a
/// guest's once per `vm_memory` value (a host kernel has no guest to size).
/// `conditions` as they are when `kernels` is empty.
pub fn with_kernels(conditions: Vec<Condition>, kernels: &[KernelChoice], vm_memory: &[(String, u64)]) -> Vec<Condition> {
    if kernels.is_empty() {
        return conditions;
    }
    let mut out = Vec::new();
    for kernel in kernels {
        let sizes: Vec<Option<(String, u64)>> = match kernel {
            KernelChoice::Guest(_) if vm_memory.len() > 1 => vm_memory.iter().cloned().map(Some).collect(),
            _ => vec![None],
        };
        for c in &conditions {
            for size in &sizes {
                out.push(Condition { kernel: Some(kernel.clone()), vm_memory: size.clone(), ..c.clone() });
            }
        }
    }
    out
}

/// Every combination of the memory values (none: the machine's own) and
/// the values of each sysctl axis, memory varying slowest; one default
/// condition when nothing varies.
pub fn matrix(memory: &[(String, u64)], sysctl_axes: &[Vec<CaseSysctl>]) -> Vec<Condition> {
    let mut out = if memory.is_empty() {
        vec![Condition::default()]
    } else {
        memory.iter().map(|m| Condition { memory: Some(m.clone()), ..Condition::default() }).collect()
    };
    for axis in sysctl_axes {
        out = out
            .into_iter()
            .flat_map(|c| {
                axis.iter().map(move |s| {
                    let mut next = c.clone();
                    next.sysctls.push(s.clone());
                    next
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_vary_slowest_and_only_guests_take_each_vm_size() {
        let guest = KernelChoice::Guest(Arc::new(GuestKernel::for_tests("6.1.0-56-amd64")));
        let host = KernelChoice::Host("6.18.44".into());
        let sizes = [("512M".to_string(), 512 << 20), ("4G".to_string(), 4 << 30)];
        let all = with_kernels(vec![Condition::default()], &[guest.clone(), host], &sizes);
        let mut case = crate::record::Case::new("s", "xfs", serde_json::Map::new(), 1);
        let places: Vec<String> = all
            .iter()
            .map(|c| {
                case.conditions = c.as_map();
                case.place()
            })
            .collect();
        assert_eq!(places, ["xfs@6.1.0-56-amd64,vm=512M", "xfs@6.1.0-56-amd64,vm=4G", "xfs@6.18.44"]);
        // One size is the guest's, not a condition.
        let one = with_kernels(vec![Condition::default()], &[guest], &sizes[..1]);
        assert_eq!(one[0].vm_memory, None);
        assert_eq!(with_kernels(vec![Condition::default()], &[], &sizes), vec![Condition::default()]);
    }

    fn sysctl(key: &str, value: &str) -> CaseSysctl {
        CaseSysctl { setting: SysctlSetting { key: key.into(), value: value.into() }, shown: value.into() }
    }

    #[test]
    fn the_matrix_is_every_combination() {
        assert_eq!(matrix(&[], &[]), vec![Condition::default()]);
        let memory = [("192M".to_string(), 192 << 20), ("1G".to_string(), 1 << 30)];
        let axis = vec![sysctl("vm.dirty_ratio", "5"), sysctl("vm.dirty_ratio", "40")];
        let all = matrix(&memory, &[axis]);
        assert_eq!(all.len(), 4);
        let places: Vec<String> =
            all.iter().map(|c| c.as_map().into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).collect();
        assert_eq!(
            places,
            [
                "memory=192M,vm.dirty_ratio=5",
                "memory=192M,vm.dirty_ratio=40",
                "memory=1G,vm.dirty_ratio=5",
                "memory=1G,vm.dirty_ratio=40"
            ]
        );
    }
}
