//! What a store holds of a plan (`fslab plan`, `run --plan`): the plan's
//! file, kept once by the first shard that ran, the runs of its shards
//! with the machine each ran on, and its cases, each once under (plan id,
//! key, repeat). A store written before plans (schema < 8) holds none.

use super::{Store, Value, from_json, text};
use crate::error::Result;
use crate::record::{Environment, Status};

/// A plan as a store keeps it.
#[derive(Debug, Clone)]
pub struct StoredPlan {
    /// The plan's id.
    pub id: String,
    /// The plan file's text.
    pub document: String,
    /// The runs of its shards, oldest first, those that stored nothing
    /// too (filled in when the plan is selected as a run).
    pub runs: Vec<PlanRunRow>,
}

/// A run of a plan's shard.
#[derive(Debug, Clone)]
pub struct PlanRunRow {
    /// The run's id.
    pub run_id: String,
    /// The shard it ran (`3/8`), none for the whole plan.
    pub shard: Option<String>,
    /// Whether it ran every case it planned.
    pub complete: bool,
    /// The machine it ran on.
    pub environment: Environment,
}

/// A case of a plan, as stored.
#[derive(Debug, Clone)]
pub struct PlanCaseRow {
    /// Its key in the plan.
    pub key: String,
    /// Its repeat.
    pub repeat: u32,
    /// Whether its work succeeded.
    pub status: Status,
    /// The run that measured it.
    pub run_id: String,
}

impl Store {
    /// The plan `id`, when the store keeps it.
    pub fn plan(&mut self, id: &str) -> Result<Option<StoredPlan>> {
        if self.version < 8 {
            return Ok(None);
        }
        let mut out = None;
        self.backend.transaction(&mut |sql| {
            let rows = sql.query("SELECT id, document FROM plans WHERE id = ?", &[Value::text(id)])?;
            out = rows.first().map(|r| StoredPlan { id: text(&r[0]), document: text(&r[1]), runs: Vec::new() });
            Ok(())
        })?;
        Ok(out)
    }

    /// The runs of plan `id`'s shards, oldest first, and its stored cases.
    pub fn plan_rows(&mut self, id: &str) -> Result<(Vec<PlanRunRow>, Vec<PlanCaseRow>)> {
        let (mut runs, mut cases) = (Vec::new(), Vec::new());
        if self.version < 8 {
            return Ok((runs, cases));
        }
        self.backend.transaction(&mut |sql| {
            runs.clear();
            cases.clear();
            let args = [Value::text(id)];
            for r in sql.query("SELECT id, shard, complete, environment FROM runs WHERE plan_id = ? ORDER BY started_at, id", &args)? {
                runs.push(PlanRunRow {
                    run_id: text(&r[0]),
                    shard: r[1].as_str().map(str::to_string),
                    complete: r[2].as_i64() == Some(1),
                    environment: from_json(&text(&r[3]), "run environment")?,
                });
            }
            for c in sql.query("SELECT plan_key, repeat, status, run_id FROM cases WHERE plan_id = ?", &args)? {
                cases.push(PlanCaseRow {
                    key: text(&c[0]),
                    repeat: c[1].as_i64().and_then(|r| u32::try_from(r).ok()).unwrap_or(0),
                    status: if c[2].as_str() == Some(Status::Failed.as_str()) { Status::Failed } else { Status::Ok },
                    run_id: text(&c[3]),
                });
            }
            Ok(())
        })?;
        Ok((runs, cases))
    }
}
