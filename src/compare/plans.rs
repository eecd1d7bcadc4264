//! The plans a side's runs ran shares of (`compare PLAN ...`, or a tag
//! over shard runs): how many of each plan's cases the side holds. A plan
//! whose shards have not all run is incomplete though every run of it
//! finished, and the comparison says so, as it does of a killed run.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::record::RunRecord;

/// One plan's share of a side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanShare {
    /// The plan's id.
    pub id: String,
    /// Its cases (key and repeat) the side's runs hold.
    pub stored: usize,
    /// Its cases in all.
    pub cases: usize,
}

impl PlanShare {
    /// Whether some of the plan's cases are not held.
    pub fn incomplete(&self) -> bool {
        self.stored < self.cases
    }
}

/// The plans `runs` ran shares of, in the order first met.
pub fn of(runs: &[RunRecord]) -> Vec<PlanShare> {
    let mut shares: Vec<(PlanShare, BTreeSet<(String, u32)>)> = Vec::new();
    for run in runs {
        let Some(plan) = &run.plan else { continue };
        let at = match shares.iter().position(|(s, _)| s.id == plan.id) {
            Some(at) => at,
            None => {
                shares.push((PlanShare { id: plan.id.clone(), stored: 0, cases: plan.cases }, BTreeSet::new()));
                shares.len() - 1
            }
        };
        let (share, held) = &mut shares[at];
        share.cases = share.cases.max(plan.cases);
        held.extend(run.cases.iter().filter_map(|c| Some((c.plan_key.clone()?, c.repeat))));
        share.stored = held.len();
    }
    shares.into_iter().map(|(s, _)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Case, PlanRef};

    fn shard_run(plan: &str, keys: &[&str]) -> RunRecord {
        let cases = keys
            .iter()
            .map(|k| {
                let mut c = Case::new("replace-files", "ext4", serde_json::Map::new(), 1);
                c.plan_key = Some(k.to_string());
                c
            })
            .collect();
        RunRecord { plan: Some(PlanRef { id: plan.into(), cases: 8, ..PlanRef::default() }), ..super::super::tests::run(plan, cases) }
    }

    #[test]
    fn a_plan_counts_each_case_once_over_its_shards_runs() {
        let runs = [shard_run("p", &["a", "b"]), shard_run("p", &["b", "c"]), super::super::tests::run("r", Vec::new())];
        let shares = of(&runs);
        assert_eq!(shares, vec![PlanShare { id: "p".into(), stored: 3, cases: 8 }]);
        assert!(shares[0].incomplete());
    }
}
