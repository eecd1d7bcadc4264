//! The results model: what a run measured, as plain data.
//!
//! A [`RunRecord`] holds [`Case`]s; a case holds [`Figures`], a timeline,
//! kept extent maps and how its target was made. This is all that the
//! store, `compare` and `report` read: nothing here knows how a figure was
//! measured, so those modules never depend on the code that measures.
//! Everything is serde data; `run --json` and a stored run are the same
//! shape (schema `fslab/1`).

pub mod busy;
pub mod catalog;
mod command;
pub mod crash;
mod environment;
pub mod extent;
mod figures;
pub mod guest;
mod ids;
pub mod release;
pub mod requests;
mod timeline;
mod verdict;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use catalog::{Catalog, FigureSpec, ScenarioInfo, UNITS};
pub use command::CommandOutput;
pub use crash::{BadOutcome, BadState, CrashMark, CrashRecord, CrashStates, StateOutcome, must_be_zero};
pub use environment::{Disk, Environment};
pub use extent::Extent;
pub use figures::{Better, Figure, Figures, Kind};
pub use guest::{EMULATED_MARK, GuestRecord};
pub use ids::{run_id, utc_now};
pub use requests::{RequestOp, RequestPoint, RequestStream};
pub use timeline::TimelinePoint;
pub use verdict::{PlaceVerdict, Rule, Samples, Verdict, verdict_word};

/// A run's results: `run` in the `fslab/1` JSON, and what the store keeps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// Unique id: UTC start time, process id and a random part (so runs
    /// from many machines can share one store).
    pub id: String,
    /// The first of `tags` (the `fslab/1` field older readers know).
    pub tag: Option<String>,
    /// The user's names for the run (`--tag`, repeatable).
    #[serde(default)]
    pub tags: Vec<String>,
    /// When it started, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: String,
    /// The command line that made it.
    #[serde(default)]
    pub command: Vec<String>,
    /// Whether every case it planned ran (false for a run that was
    /// interrupted or killed; its finished cases are kept).
    #[serde(default = "yes")]
    pub complete: bool,
    /// What it ran on.
    pub environment: Environment,
    /// Sysctls in force, as asked.
    pub sysctls: Vec<(String, String)>,
    /// One per target (and repetition).
    pub cases: Vec<Case>,
    /// `--preset seeds`: per seed, whether this run still shows it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Verdict>,
    /// The plan it ran (`run --plan`), and which shard of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanRef>,
}

/// The plan a run ran a share of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanRef {
    /// The plan's id.
    pub id: String,
    /// The shard run (`3/8`), none when it ran the whole plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// How many cases the whole plan has.
    #[serde(default)]
    pub cases: usize,
    /// The plan file's text, kept once per plan in the store (never in the
    /// run's JSON).
    #[serde(skip)]
    pub document: String,
    /// For a plan shown as one run (`show PLAN`): how many of its cases
    /// the store holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<usize>,
    /// For a plan shown as one run: how many of the cases it lacks no run
    /// of a shard holding them ever started (their shards have not run);
    /// the others' runs were interrupted or killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<usize>,
}

fn yes() -> bool {
    true
}

/// Whether a case's work completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The work ran and succeeded.
    Ok,
    /// The target could not be made, the work failed, or a probe broke.
    Failed,
}

impl Status {
    /// The word JSON and the store use: `ok` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
        }
    }
}

/// One scenario on one target, measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    /// Scenario name (`exec` for a command).
    pub scenario: String,
    /// Target label: the fs name, or `dir`.
    pub fs: String,
    /// Parameters.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// Repetition number, from 1.
    pub repeat: u32,
    /// Outcome.
    pub status: Status,
    /// What failed, when status is failed.
    pub error: Option<String>,
    /// How the target was made.
    pub target: TargetRecord,
    /// Every figure, by name.
    pub figures: Figures,
    /// The sampler's rows.
    pub timeline: Vec<TimelinePoint>,
    /// Extent maps of the most fragmented files the work left (at most
    /// [`KEPT_MAPS`], each cut at [`KEPT_RECORDS`] records).
    #[serde(default)]
    pub maps: Vec<KeptMap>,
    /// The command's exit and output (exec only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandOutput>,
    /// The conditions the case ran under that a run can vary, by name:
    /// `memory` (the work's memory limit) and sysctl keys, each with the
    /// value as given (`256M`). Empty for a case under the machine's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub conditions: BTreeMap<String, String>,
    /// How the target started before the work when it was not fresh
    /// (`--age`, `--fill`); its measured state is in the `start_*` figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartRecord>,
    /// Set when the case was measured on a busy machine (others over
    /// [`busy::BUSY_RULE`]'s thresholds in its window): what they did
    /// (`others used 1.4 cores on average (load 7.4 → 7.9)`). Its timings
    /// are less reliable; it never fails the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<String>,
    /// The guest the case ran in (`--kernel IMAGE`); none on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestRecord>,
    /// What the case's device kept, when it was recorded
    /// (`--crash-record`): in `--json` output and the recording's own
    /// folder; the store keeps its figures (`log_*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<CrashRecord>,
    /// The block requests the work and the cold read-back issued, each a
    /// bounded sample placed at its measured and modelled time; none where
    /// they were not traced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestStream>,
    /// Its key in the plan it ran from (`run --plan`): with the run's
    /// plan id and the repeat, what the store keeps it under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_key: Option<String>,
}

/// An aged or filled target's starting point: which cache entry the image
/// was copied from, and whether this case paid for making it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StartRecord {
    /// The aging profile with every parameter (`churn:delete=50%,...`),
    /// when the target was aged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
    /// The fill asked for (`--fill`), as a fraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<f64>,
    /// The cache entry's key: sha256 of what the image was made of.
    pub cache_key: String,
    /// sha256 of the image's content when it entered the cache.
    pub image_hash: String,
    /// Whether the image came from the cache (aging paid before this case).
    pub cache_hit: bool,
    /// Seconds this case spent making the image (mkfs, aging, filling,
    /// storing it): 0 on a cache hit. Kept out of the figures, so
    /// `compare` never calls a cache hit an improvement.
    #[serde(default)]
    pub aging_seconds: f64,
    /// Seconds this case waited for another run that was making the same
    /// image (then it came from the cache): 0 when it did not wait.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waited_seconds: f64,
    /// Which of several independently aged images (`--age-images`) the
    /// case started from, counting from 1; 0 when the start has one.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub image: u32,
    /// What aging said of itself (a free-space target reached or not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The free-space histogram measured before the work, power-of-two
    /// buckets by size as `fslab free` prints them (empty ones left out):
    /// every case from one cache entry starts with the same one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub free_histogram: Vec<FreeBucketCount>,
}

/// One bucket of a free-space histogram: extents of `min_bytes` up to
/// twice that.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreeBucketCount {
    /// The smallest extent size in the bucket, bytes.
    pub min_bytes: u64,
    /// Free extents in the bucket.
    pub extents: u64,
    /// Their bytes.
    pub bytes: u64,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

fn is_zero_u32(value: &u32) -> bool {
    *value == 0
}

impl StartRecord {
    /// How the target was shaped: `aged churn:..., then filled to 80%`.
    pub fn how(&self) -> String {
        let mut parts = Vec::new();
        if let Some(age) = &self.age {
            parts.push(format!("aged {age}"));
        }
        if let Some(fill) = self.fill {
            parts.push(format!("filled to {:.0}%", fill * 100.0));
        }
        parts.join(", then ")
    }

    /// One line for people: `aged churn:..., then filled to 80%; image
    /// 3fa2c1d09b7e from the cache`.
    pub fn describe(&self) -> String {
        let short: String = self.cache_key.chars().take(12).collect();
        let made = match (self.cache_hit, self.waited_seconds > 0.0) {
            (true, false) => "from the cache".to_string(),
            (true, true) => format!("from the cache, made by another run while this one waited {:.1} s", self.waited_seconds),
            (false, _) => format!("made in {:.1} s", self.aging_seconds),
        };
        format!("{}; image {short} {made}", self.how())
    }
}

/// How many files' extent maps a case keeps: the report draws them, and a
/// tree of thousands of files must not make a run record of gigabytes.
pub const KEPT_MAPS: usize = 3;

/// Records kept per map; a file with more is marked `truncated` (its
/// figures still count every record).
pub const KEPT_RECORDS: usize = 65_536;

/// The extent map of one file a case left, kept with the case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptMap {
    /// Path below the work directory.
    pub path: String,
    /// File size in bytes.
    pub size: u64,
    /// File-system block size in bytes.
    pub block_size: u32,
    /// Size of the file system in bytes (the strip's colour scale).
    pub device_bytes: u64,
    /// Extents by filefrag's rule (all of them, kept or not).
    pub extents: u64,
    /// Whether `extent_list` stops short of the file's last record.
    pub truncated: bool,
    /// The records, in logical order.
    pub extent_list: Vec<Extent>,
}

impl Case {
    /// A case not yet measured: ok, with no figures, target or timeline.
    pub fn new(scenario: &str, fs: &str, params: serde_json::Map<String, serde_json::Value>, repeat: u32) -> Case {
        Case {
            scenario: scenario.to_string(),
            fs: fs.to_string(),
            params,
            repeat,
            status: Status::Ok,
            error: None,
            target: TargetRecord::default(),
            figures: Figures::new(),
            timeline: Vec::new(),
            maps: Vec::new(),
            command: None,
            conditions: BTreeMap::new(),
            start: None,
            busy: None,
            guest: None,
            crash: None,
            requests: Vec::new(),
            plan_key: None,
        }
    }
}

/// How a case's target was made, for the record.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TargetRecord {
    /// File-system type the work landed on.
    pub fs_type: String,
    /// Block device, if fslab made or was given one.
    pub device: Option<String>,
    /// mkfs arguments.
    pub mkfs_args: Vec<String>,
    /// Mount options.
    pub mount_opts: Option<String>,
    /// How the cache was emptied before the read-back, if there was one.
    pub cold_method: Option<String>,
    /// The memory cgroup the work ran in (`--memory`): its interface, the
    /// limit file written, and its path (`v1 memory.limit_in_bytes
    /// /sys/fs/cgroup/memory/fslab-RUN-1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cgroup: Option<String>,
    /// How the image was started when not by mkfs: `reflink of cache entry
    /// KEY` / `sparse copy of cache entry KEY (N MiB of data)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_copy: Option<String>,
    /// The modelled drive (`--disk`) the case's `modelled_*` figures are
    /// for: a disk profile's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
}

impl Case {
    /// The key `compare` matches cases by: scenario, target label and the
    /// parameters in name order, so the repeat number, mount options and
    /// sysctls (what a comparison varies) do not split them.
    pub fn key(&self) -> String {
        let sorted: std::collections::BTreeMap<&String, &serde_json::Value> = self.params.iter().collect();
        let params = serde_json::to_string(&sorted).expect("plain data serialises");
        if self.conditions.is_empty() {
            // Keys of cases under the machine's own conditions are what
            // they were before conditions existed, so old runs compare.
            return format!("{} {} {}", self.scenario, self.fs, params);
        }
        let conditions = serde_json::to_string(&self.conditions).expect("plain data serialises");
        format!("{} {} {} {}", self.scenario, self.fs, params, conditions)
    }

    /// Where the case ran, as tables and verdicts name it: the target's
    /// label, then the values of its conditions (`xfs@256M`,
    /// `ext4@256M,vm.dirty_ratio=5`, `ext4@6.1.0-56-amd64,vm=512M` for a
    /// guest's kernel release and memory); the label alone without
    /// conditions.
    pub fn place(&self) -> String {
        self.place_without("")
    }

    /// Where the case ran with one of its conditions left out: `ext4`
    /// for `ext4@6.1.0-57-amd64` without `kernel`, `ext4@vm=512M` for
    /// `ext4@6.1.0-57-amd64,vm=512M`; a survey across kernels draws a
    /// line per such place.
    pub fn place_without(&self, condition: &str) -> String {
        let shown: Vec<String> = self
            .conditions
            .iter()
            .filter(|(name, _)| name.as_str() != condition)
            .map(|(name, value)| match name.as_str() {
                "memory" | "kernel" => value.clone(),
                "vm_memory" => format!("vm={value}"),
                _ => format!("{name}={value}"),
            })
            .collect();
        if shown.is_empty() {
            return self.fs.clone();
        }
        format!("{}@{}", self.fs, shown.join(","))
    }
}

/// A run called `id` holding `cases`, on a plain x86_64 machine of one
/// core: what unit tests build their runs from.
#[cfg(test)]
pub fn test_run(id: &str, cases: Vec<Case>) -> RunRecord {
    let environment = Environment {
        fslab_version: "test".into(),
        host: None,
        kernel: "6.1".into(),
        machine: "x86_64".into(),
        cpu: None,
        cpus: 1,
        memory_bytes: None,
        tools: serde_json::Map::new(),
        disk: None,
    };
    RunRecord {
        id: id.into(),
        tag: None,
        tags: Vec::new(),
        started_at: String::new(),
        command: Vec::new(),
        complete: true,
        environment,
        sysctls: Vec::new(),
        cases,
        verdicts: Vec::new(),
        plan: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_keys_ignore_parameter_order_and_repeat() {
        let mut a = Case::new("mmap-fill", "ext4", serde_json::Map::new(), 1);
        a.params.insert("size".into(), "128M".into());
        a.params.insert("order".into(), "seed".into());
        let mut b = Case::new("mmap-fill", "ext4", serde_json::Map::new(), 3);
        b.params.insert("order".into(), "seed".into());
        b.params.insert("size".into(), "128M".into());
        assert_eq!(a.key(), b.key());
        b.fs = "xfs".into();
        assert_ne!(a.key(), b.key());
    }

    #[test]
    fn conditions_keep_old_keys_and_name_the_place() {
        let mut a = Case::new("mmap-fill", "xfs", serde_json::Map::new(), 1);
        let plain = a.key();
        assert_eq!(a.place(), "xfs");
        a.conditions.insert("memory".into(), "256M".into());
        assert_ne!(a.key(), plain);
        assert_eq!(a.place(), "xfs@256M");
        a.conditions.insert("vm.dirty_ratio".into(), "5".into());
        assert_eq!(a.place(), "xfs@256M,vm.dirty_ratio=5");
        a.conditions.insert("kernel".into(), "6.1.0-57-amd64".into());
        assert_eq!(a.place(), "xfs@6.1.0-57-amd64,256M,vm.dirty_ratio=5");
        assert_eq!(a.place_without("kernel"), "xfs@256M,vm.dirty_ratio=5");
        a.conditions.clear();
        a.conditions.insert("kernel".into(), "6.18.44".into());
        assert_eq!((a.place(), a.place_without("kernel")), ("xfs@6.18.44".to_string(), "xfs".to_string()));
    }
}
