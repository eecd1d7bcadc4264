//! What a run selector names: the words `fslab show`, `export`, `report`
//! and `compare` take for a run.
//!
//! In order: an existing file is either a `--json` output of `fslab run` or
//! `exec` (one run) or an SQLite store (every run in it, pooled); `last` is
//! the newest run in the store; then a run id, a tag (every run carrying
//! it, pooled, so repeats from several runs add up), and a unique prefix of
//! a run id.

use std::path::Path;

use super::{Store, StoredPlan};
use crate::error::{Error, Result};
use crate::record::RunRecord;

/// The runs a selector named.
#[derive(Debug, Clone)]
pub struct Selection {
    /// How to name them in output: the id, `tag NAME`, `plan ID`, or the
    /// path.
    pub label: String,
    /// The runs, oldest first.
    pub runs: Vec<RunRecord>,
    /// The plan named, when the selector named one: `runs` are then its
    /// shards' runs, each with the plan's cases it still holds.
    pub plan: Option<StoredPlan>,
}

/// Resolve `selector` against the store at `location` (see the module
/// doc for the order). Naming nothing is a usage error that says what
/// exists.
pub fn resolve(location: &str, selector: &str) -> Result<Selection> {
    let path = Path::new(selector);
    if path.is_file() {
        return from_file(path, selector);
    }
    let mut store = open_for_reading(location)?;
    let label = |l: String, runs: Vec<RunRecord>| Ok(Selection { label: l, runs, plan: None });
    if selector == "last" {
        let ids = store.ids()?;
        let Some(id) = ids.last() else {
            return Err(Error::usage(format!("`last`: the store {} holds no run yet", store.location())));
        };
        return label(id.clone(), vec![load(&mut store, id)?]);
    }
    if let Some(run) = store.load(selector)? {
        return label(selector.to_string(), vec![run]);
    }
    if let Some(plan) = store.plan(selector)? {
        return plan_selection(&mut store, plan);
    }
    let tagged = store.ids_tagged(selector)?;
    if !tagged.is_empty() {
        let runs = tagged.iter().map(|id| load(&mut store, id)).collect::<Result<Vec<_>>>()?;
        return label(format!("tag {selector}"), runs);
    }
    let ids = store.ids()?;
    let prefixed: Vec<&String> = ids.iter().filter(|id| id.starts_with(selector)).collect();
    match prefixed.as_slice() {
        [one] => {
            let id = (*one).clone();
            let run = load(&mut store, &id)?;
            label(id, vec![run])
        }
        [] => Err(Error::usage(format!(
            "`{selector}` is no run id, tag or file in the store {} (`fslab runs` lists what it holds)",
            store.location()
        ))),
        many => Err(Error::usage(format!(
            "`{selector}` starts {} run ids ({}, ...): give more of the id",
            many.len(),
            many[0]
        ))),
    }
}

/// The plan `id` in the store at `location`: its shards' runs (a plan
/// file names it by its id).
pub fn resolve_plan(location: &str, id: &str) -> Result<Selection> {
    let mut store = open_for_reading(location)?;
    match store.plan(id)? {
        Some(plan) => plan_selection(&mut store, plan),
        None => Err(Error::usage(format!(
            "plan {id}: the store {} holds none of its cases (run its shards with `fslab run --plan PLAN --store {}`)",
            store.location(),
            store.location()
        ))),
    }
}

/// `plan`'s selection: every run of its shards that still holds a case of
/// it (a shard run again took the cases of the run before).
fn plan_selection(store: &mut Store, mut plan: StoredPlan) -> Result<Selection> {
    let (rows, _) = store.plan_rows(&plan.id)?;
    plan.runs.clone_from(&rows);
    let mut runs = Vec::new();
    for row in rows {
        let run = load(store, &row.run_id)?;
        if !run.cases.is_empty() {
            runs.push(run);
        }
    }
    if runs.is_empty() {
        return Err(Error::usage(format!("plan {}: the store {} holds none of its cases yet", plan.id, store.location())));
    }
    Ok(Selection { label: format!("plan {}", plan.id), runs, plan: Some(plan) })
}

/// Open a store that must already exist when it is a file: reading never
/// creates an empty store.
pub fn open_for_reading(location: &str) -> Result<Store> {
    if super::is_postgres(location) {
        return Store::open(location);
    }
    let path = Path::new(location);
    if !path.exists() {
        let root_hint = super::location::not_found_hint(location).map(|h| format!("; {h}")).unwrap_or_default();
        return Err(Error::usage(format!(
            "no store at {location}: runs are stored there by `fslab run` and `fslab exec`; give --store PATH \
             to read another{root_hint}"
        )));
    }
    Store::open_existing(path)
}

fn load(store: &mut Store, id: &str) -> Result<RunRecord> {
    store.load(id)?.ok_or_else(|| Error::failed(format!("run {id} vanished from the store while being read")))
}

/// A run's JSON output, or an SQLite store (every run in it), at `path`,
/// named `label` in output: a path with no symlink in it (the command line
/// follows links by its rules first), opened without following one.
pub fn from_file(path: &Path, label: &str) -> Result<Selection> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let open = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(path);
    let mut file = open.map_err(|e| Error::io(path, "open", e))?;
    let mut head = [0u8; 16];
    let n = std::io::Read::read(&mut file, &mut head).map_err(|e| Error::io(path, "read", e))?;
    let label = label.to_string();
    if head[..n].starts_with(b"SQLite format 3\0") {
        let mut store = Store::open_existing(path)?;
        let ids = store.ids()?;
        if ids.is_empty() {
            return Err(Error::usage(format!("{label}: the store holds no run yet")));
        }
        let runs = ids.iter().map(|id| load(&mut store, id)).collect::<Result<Vec<_>>>()?;
        return Ok(Selection { label, runs, plan: None });
    }
    let neither = |why: &dyn std::fmt::Display| {
        Error::usage(format!("{label}: neither an fslab store nor the --json output of `fslab run` or `fslab exec` ({why})"))
    };
    let mut bytes = head[..n].to_vec();
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(|e| Error::io(path, "read", e))?;
    let text = String::from_utf8(bytes).map_err(|_| neither(&"not UTF-8 text"))?;
    #[derive(serde::Deserialize)]
    struct Output {
        schema: String,
        run: RunRecord,
    }
    let output: Output = serde_json::from_str(&text).map_err(|e| neither(&e))?;
    if output.schema != crate::SCHEMA {
        return Err(Error::usage(format!(
            "{label}: schema `{}`, this fslab reads `{}`",
            output.schema,
            crate::SCHEMA
        )));
    }
    let mut run = output.run;
    for case in &mut run.cases {
        case.figures.upgrade_units();
    }
    Ok(Selection { label, runs: vec![run], plan: None })
}
