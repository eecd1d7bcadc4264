//! One planned case: what is measured, where, under what, which repeat,
//! and its key.
//!
//! The key is the first 16 hex digits of SHA-256 over the case's own
//! canonical text: a JSON array of its scenario, its parameters (object
//! keys sorted at every depth), its target's label, its conditions (as
//! the case records them, sorted by name) and its repeat. Nothing else
//! goes in — not its place in the list, not the other cases, not the
//! machine — so the same request gives the same keys on any machine and
//! build, and a case keeps its key when others are added beside it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::harness::Condition;
use crate::scenario::WorkSpec;

/// A case of a plan, as a plain serialisable record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedCase {
    /// The stable key ([`case_key`]).
    pub key: String,
    /// The scenario's name, or `exec` for a command.
    pub scenario: String,
    /// Its parameters, canonical (object keys sorted at every depth), as
    /// the case will record them.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The target's label (`xfs`, `ext2-1k`, `dir`).
    pub target: String,
    /// The condition's label: what follows the `@` of the case's place
    /// (`192M`, `age=churn,fill=80%`); empty under the machine's own.
    pub condition: String,
    /// The conditions as the case records them (`memory`, sysctl keys,
    /// `age`, `fill`, `kernel`, `vm_memory`).
    pub conditions: BTreeMap<String, String>,
    /// The repeat, from 1.
    pub repeat: u32,
    /// Where the target is in its plan's list of targets.
    pub target_index: usize,
    /// Where the condition is in its plan's list of conditions.
    pub condition_index: usize,
}

impl PlannedCase {
    /// The case of `scenario` with `params` on the target `target` (its
    /// index and label) under `condition` (its index and itself), repeat
    /// `repeat`, keyed.
    pub fn new(
        scenario: &str,
        params: &serde_json::Map<String, serde_json::Value>,
        target: (usize, String),
        condition: (usize, &Condition),
        repeat: u32,
    ) -> PlannedCase {
        let params = match canonical(&serde_json::Value::Object(params.clone())) {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("an object stays an object"),
        };
        let conditions = condition.1.as_map();
        let place = condition.1.place("");
        let label = place.strip_prefix('@').unwrap_or_default().to_string();
        PlannedCase {
            key: case_key(scenario, &params, &target.1, &conditions, repeat),
            scenario: scenario.to_string(),
            params,
            target: target.1,
            condition: label,
            conditions,
            repeat,
            target_index: target.0,
            condition_index: condition.0,
        }
    }

    /// The work of the case as data, as the run measures and records it.
    pub fn work_spec(&self) -> WorkSpec {
        WorkSpec { scenario: self.scenario.clone(), params: self.params.clone() }
    }
}

/// A case's key: the first 16 hex digits of SHA-256 over the JSON array
/// `[scenario, params, target, conditions, repeat]`, object keys sorted.
pub fn case_key(
    scenario: &str,
    params: &serde_json::Map<String, serde_json::Value>,
    target: &str,
    conditions: &BTreeMap<String, String>,
    repeat: u32,
) -> String {
    let text = canonical(&serde_json::json!([scenario, params, target, conditions, repeat])).to_string();
    let mut hex = crate::age_cache::image_copy::hex(&Sha256::digest(text.as_bytes()));
    hex.truncate(16);
    hex
}

/// `value` with the keys of every object in it sorted (serde_json keeps
/// insertion order here), so equal data gives equal text.
fn canonical(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let sorted: BTreeMap<&String, serde_json::Value> = map.iter().map(|(k, v)| (k, canonical(v))).collect();
            serde_json::Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        serde_json::Value::Array(list) => serde_json::Value::Array(list.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, serde_json::Value)]) -> serde_json::Map<String, serde_json::Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn a_key_is_16_hex_digits_of_the_case_alone_whatever_the_order_of_its_parameters() {
        let a = params(&[("size", 1024.into()), ("order", "seed".into())]);
        let b = params(&[("order", "seed".into()), ("size", 1024.into())]);
        let none = BTreeMap::new();
        let key = case_key("mmap-fill", &a, "xfs", &none, 1);
        assert_eq!(key.len(), 16);
        assert!(key.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{key}");
        assert_eq!(key, case_key("mmap-fill", &b, "xfs", &none, 1));
        // Written down once, so a key that changes across builds fails
        // here: `printf '%s' '["mmap-fill",{"order":"seed","size":1024},"xfs",{},1]' | sha256sum`.
        assert_eq!(key, "bdeef15e97a5b49f");
        // Each part of the case moves it.
        let memory = BTreeMap::from([("memory".to_string(), "192M".to_string())]);
        let others = [
            case_key("create-file", &a, "xfs", &none, 1),
            case_key("mmap-fill", &params(&[("size", 2048.into()), ("order", "seed".into())]), "xfs", &none, 1),
            case_key("mmap-fill", &a, "ext4", &none, 1),
            case_key("mmap-fill", &a, "xfs", &memory, 1),
            case_key("mmap-fill", &a, "xfs", &none, 2),
        ];
        for other in others {
            assert_ne!(other, key);
        }
    }

    #[test]
    fn a_planned_case_names_its_condition_as_its_place_does() {
        let memory = Condition { memory: Some(("192M".into(), 192 << 20)), ..Condition::default() };
        let case = PlannedCase::new("mmap-fill", &params(&[("size", 1.into())]), (0, "xfs".into()), (1, &memory), 2);
        assert_eq!((case.target.as_str(), case.condition.as_str(), case.repeat, case.condition_index), ("xfs", "192M", 2, 1));
        let plain = PlannedCase::new("mmap-fill", &params(&[("size", 1.into())]), (0, "xfs".into()), (0, &Condition::default()), 1);
        assert_eq!(plain.condition, "");
        let json = serde_json::to_string(&case).unwrap();
        assert_eq!(serde_json::from_str::<PlannedCase>(&json).unwrap(), case);
    }
}
