//! The conditions a run varies per case, beside the target: a memory
//! limit (`--memory 192M,1G`), sysctls given as a list
//! (`--sysctl vm.dirty_background_bytes=16M,64M`), and how full and aged
//! the target starts (`--fill 50%,80%`, a preset's aged start). Each is a matrix axis,
//! as `--fs` is; a case carries its values in `Case::conditions`, which its
//! key and its place (`xfs@192M`) include.
//!
//! The design decision: a `--sysctl` with one value stays run-wide, set
//! once for the whole run and recorded in the run's `sysctls` as before,
//! so runs made before conditions existed still compare with new ones;
//! only a list of values makes a per-case condition.

use std::collections::BTreeMap;

use crate::target::sysctl::SysctlSetting;

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
}

impl Condition {
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
