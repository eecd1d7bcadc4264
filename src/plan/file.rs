//! A plan written down (`fslab plan`): the run's flags as given and its
//! cases in order, each with its shard key, under an id that is a hash of
//! all of it, so the same flags give the same file, byte for byte, and
//! many machines can each run a share of it (`fslab run --plan`).
//!
//! The request is kept as the flags themselves (`run_args`, canonical:
//! one `--flag=value` per value, in the command's own order), not as a
//! second, serialised form of it: a machine rebuilds the harness's plan by
//! reading them with the one parser that reads `fslab run`'s, so the two
//! cannot drift. That parser is this build's, so a plan records fslab's
//! version and a plan from another is refused (exit 2).
//!
//! A case's shard key is the key of the aged or filled image it starts
//! from when it starts from one, else its own key: cases that share an
//! image share a key, so they land in one shard and a machine ages that
//! image once.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{PlannedCase, RunPlan, case_key};
use crate::error::{Error, Result};
use crate::site::DeviceIdentity;

/// A plan as its file holds it (`{"schema":"fslab/1","plan":{...}}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanFile {
    /// The first 16 hex digits of SHA-256 over the rest ([`PlanFile::id_of`]).
    pub id: String,
    /// The fslab that wrote it (its version and commit): only it runs it.
    pub fslab: String,
    /// The flags of `fslab run` that decide the cases, canonical.
    pub run_args: Vec<String>,
    /// The scenarios whose seeds are judged at the end (`--preset seeds`),
    /// in order; empty without a preset.
    pub verdicts: Vec<String>,
    /// The cases, in the run's order.
    pub cases: Vec<FileCase>,
    /// What the `--device` the planner gave up is ([`DeviceIdentity`]):
    /// `run --plan` formats only that disk, named there again with
    /// `--destroy-data-on`. Absent for a plan that formats no device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceIdentity>,
}

/// A planned case and the key that decides its shard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileCase {
    /// The case.
    #[serde(flatten)]
    pub case: PlannedCase,
    /// The aged or filled image's cache key when the case starts from
    /// one, else the case's key.
    pub shard_key: String,
}

/// The largest plan file read: a preset's 121 cases take about 100 KiB.
pub const MAX_PLAN_FILE: u64 = 16 << 20;

impl PlanFile {
    /// The file of `plan`, planned from `run_args` by fslab `fslab` (its
    /// version and commit); `device` is the identity of the `--device` it
    /// formats, if any.
    pub fn of(plan: &RunPlan, run_args: Vec<String>, fslab: &str, device: Option<DeviceIdentity>) -> Result<PlanFile> {
        let mut cases = Vec::with_capacity(plan.cases.len());
        for case in &plan.cases {
            let work = plan.work(case)?;
            let key = crate::harness::start_key(&plan.harness, plan.target(case), plan.condition(case), work.as_ref(), case.repeat)?;
            cases.push(FileCase { shard_key: key.unwrap_or_else(|| case.key.clone()), case: case.clone() });
        }
        let verdicts = if plan.verdicts { plan.scenarios.iter().map(|s| s.to_string()).collect() } else { Vec::new() };
        let mut file = PlanFile { id: String::new(), fslab: fslab.to_string(), run_args, verdicts, cases, device };
        file.id = file.id_of();
        Ok(file)
    }

    /// The id its content gives: SHA-256 over the JSON array of its other
    /// fields (the cases' parameters already canonical), the device's
    /// identity last when it has one.
    pub fn id_of(&self) -> String {
        let mut fields = serde_json::json!([self.fslab, self.run_args, self.verdicts, self.cases]);
        if let (Some(device), Some(fields)) = (&self.device, fields.as_array_mut()) {
            fields.push(serde_json::json!(device));
        }
        let text = fields.to_string();
        let mut hex = crate::age_cache::image_copy::hex(&Sha256::digest(text.as_bytes()));
        hex.truncate(16);
        hex
    }

    /// Read a plan file's text to run it with fslab `fslab` (its version
    /// and commit), `shown` naming it: refused (exit 2) when it is no plan,
    /// another fslab's, or changed since it was written.
    pub fn parse(text: &[u8], shown: &str, fslab: &str) -> Result<PlanFile> {
        let plan = PlanFile::read(text, shown)?;
        if plan.fslab != fslab {
            return Err(Error::usage(format!(
                "{shown}: a plan of fslab {}, and this is fslab {}: a plan is run by the fslab that wrote it (its \
                 flags are read by that build's parser); run it with that fslab, or plan again with this one",
                plan.fslab, fslab
            )));
        }
        Ok(plan)
    }

    /// Read a plan file's text to read what it planned (`status`, a plan
    /// as RUN), whichever fslab wrote it: refused (exit 2) when it is no
    /// plan or was changed since it was written.
    pub fn read(text: &[u8], shown: &str) -> Result<PlanFile> {
        #[derive(Deserialize)]
        struct Document {
            schema: String,
            plan: PlanFile,
        }
        let document: Document = serde_json::from_slice(text)
            .map_err(|e| Error::usage(format!("{shown}: not a plan `fslab plan` wrote ({e})")))?;
        if document.schema != crate::SCHEMA {
            return Err(Error::usage(format!("{shown}: schema `{}`, this fslab reads `{}`", document.schema, crate::SCHEMA)));
        }
        let plan = document.plan;
        if plan.id != plan.id_of() {
            return Err(Error::usage(format!(
                "{shown}: plan {} was changed after `fslab plan` wrote it (its content gives id {}); plan again",
                plan.id,
                plan.id_of()
            )));
        }
        for c in &plan.cases {
            let key = case_key(&c.case.scenario, &c.case.params, &c.case.target, &c.case.conditions, c.case.repeat);
            if key != c.case.key {
                return Err(Error::usage(format!("{shown}: case {} has the key {key} by its content; plan again", c.case.key)));
            }
        }
        Ok(plan)
    }

    /// Whether its cases format a device (`--device` among its flags).
    pub fn formats_device(&self) -> bool {
        self.run_args.iter().any(|a| a.starts_with("--device="))
    }

    /// Refuse (exit 2) to format `device` (its flags' `--device`, as this
    /// machine resolves it) unless it is the disk the plan records, by
    /// what the disk says of itself ([`crate::site::identity`]).
    pub fn check_device(&self, device: &std::path::Path, shown: &str) -> Result<()> {
        let Some(planned) = &self.device else {
            return Err(Error::usage(format!(
                "{shown}: formats --device {} but records no identity of it; plan again",
                crate::text::path(device)
            )));
        };
        let here = crate::site::identity::identity(device)?;
        if here != *planned {
            return Err(Error::usage(format!(
                "--device {}: not the disk the plan was made for: the plan's is {planned}, this one is {here}; \
                 nothing was formatted. Run this plan where its disk is, or plan again naming this one",
                crate::text::path(device)
            )));
        }
        Ok(())
    }

    /// The place of case `c` as tables name it (`xfs@192M`).
    pub fn place(c: &PlannedCase) -> String {
        if c.condition.is_empty() { c.target.clone() } else { format!("{}@{}", c.target, c.condition) }
    }

    /// Where the case keyed `key` with repeat `repeat` is in the plan.
    pub fn position(&self, key: &str, repeat: u32) -> Option<usize> {
        self.cases.iter().position(|c| c.case.key == key && c.case.repeat == repeat)
    }
}
