//! How one case and one run become rows, and back: the SQL the store
//! runs, written once for both backends.

use super::{Sql, Value, from_json, int, text, to_json};
use crate::error::{Error, Result};
use crate::record::{Better, Figure, Figures, Kind};
use crate::record::{Case, KeptMap, PlanRef, RunRecord, Status, TargetRecord};

pub(super) fn insert_case(sql: &mut dyn Sql, run_id: &str, ordinal: usize, case: &Case) -> Result<()> {
    // A case of a plan is kept once: the same case stored before (by a
    // shard that failed or was killed, then run again) goes, in this same
    // transaction.
    let mut plan_id = None;
    if let Some(key) = &case.plan_key {
        let rows = sql.query("SELECT plan_id FROM runs WHERE id = ?", &[Value::text(run_id)])?;
        plan_id = rows.first().and_then(|r| r[0].as_str()).map(str::to_string);
        if let Some(plan) = &plan_id {
            sql.execute(
                "DELETE FROM cases WHERE plan_id = ? AND plan_key = ? AND repeat = ?",
                &[Value::text(plan), Value::text(key), int(u64::from(case.repeat))],
            )?;
        }
    }
    let rows = sql.query(
        "INSERT INTO cases (run_id, ordinal, case_key, scenario, fs, params, repeat, status, error, fs_type, device, \
         mkfs_args, mount_opts, cold_method, command_output, conditions, memory_cgroup, start, image_copy, \
         busy, guest, disk, plan_id, plan_key, crash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         RETURNING id",
        &[
            Value::text(run_id),
            int(ordinal as u64),
            Value::text(&case.key()),
            Value::text(&case.scenario),
            Value::text(&case.fs),
            Value::text(&to_json(&case.params)),
            int(u64::from(case.repeat)),
            Value::text(case.status.as_str()),
            Value::Text(case.error.clone()),
            Value::text(&case.target.fs_type),
            Value::Text(case.target.device.clone()),
            Value::text(&to_json(&case.target.mkfs_args)),
            Value::Text(case.target.mount_opts.clone()),
            Value::Text(case.target.cold_method.clone()),
            Value::Text(case.command.as_ref().map(to_json)),
            Value::text(&to_json(&case.conditions)),
            Value::Text(case.target.memory_cgroup.clone()),
            Value::Text(case.start.as_ref().map(to_json)),
            Value::Text(case.target.image_copy.clone()),
            Value::Text(case.busy.clone()),
            Value::Text(case.guest.as_ref().map(to_json)),
            Value::Text(case.target.disk.clone()),
            Value::Text(plan_id.clone()),
            Value::Text(plan_id.as_ref().and(case.plan_key.clone())),
            Value::Text(case.crash.as_ref().map(to_json)),
        ],
    )?;
    let case_id = rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_i64)
        .ok_or_else(|| Error::failed("the store gave no id for a new case"))?;
    for (n, (name, f)) in case.figures.iter().enumerate() {
        sql.execute(
            "INSERT INTO figures (case_id, ordinal, name, value, unit, better, kind, missing) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                Value::Int(Some(case_id)),
                int(n as u64),
                Value::text(name),
                Value::Real(f.value),
                Value::text(&f.unit),
                Value::text(f.better.as_str()),
                Value::text(f.kind.as_str()),
                Value::Text(f.missing.clone()),
            ],
        )?;
    }
    sql.execute(
        "INSERT INTO timelines (case_id, points) VALUES (?, ?)",
        &[Value::Int(Some(case_id)), Value::text(&to_json(&case.timeline))],
    )?;
    if !case.requests.is_empty() {
        sql.execute(
            "INSERT INTO request_streams (case_id, streams) VALUES (?, ?)",
            &[Value::Int(Some(case_id)), Value::text(&to_json(&case.requests))],
        )?;
    }
    for (n, map) in case.maps.iter().enumerate() {
        sql.execute(
            "INSERT INTO extent_maps (case_id, ordinal, path, size, block_size, device_bytes, extents, truncated, \
             extent_list) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                Value::Int(Some(case_id)),
                int(n as u64),
                Value::text(&map.path),
                int(map.size),
                int(u64::from(map.block_size)),
                int(map.device_bytes),
                int(map.extents),
                int(u64::from(map.truncated)),
                Value::text(&to_json(&map.extent_list)),
            ],
        )?;
    }
    Ok(())
}

pub(super) fn tags_of(sql: &mut dyn Sql, run_id: &str) -> Result<Vec<String>> {
    let rows = sql.query("SELECT tag FROM run_tags WHERE run_id = ? ORDER BY tag", &[Value::text(run_id)])?;
    Ok(rows.iter().map(|r| text(&r[0])).collect())
}

/// The run `id`, from a store of schema `version` (a version-1 store's
/// cases have no conditions and no memory cgroup).
pub(super) fn load_run(sql: &mut dyn Sql, id: &str, version: i64) -> Result<Option<RunRecord>> {
    let plan = if version >= 8 { "plan_id, shard, (SELECT cases FROM plans WHERE plans.id = runs.plan_id)" } else { "NULL, NULL, NULL" };
    let rows = sql.query(
        &format!("SELECT id, started_at, complete, command, environment, sysctls, verdicts, {plan} FROM runs WHERE id = ?"),
        &[Value::text(id)],
    )?;
    let Some(row) = rows.into_iter().next() else { return Ok(None) };
    let tags = tags_of(sql, id)?;
    let mut run = RunRecord {
        id: text(&row[0]),
        tag: tags.first().cloned(),
        tags,
        started_at: text(&row[1]),
        complete: row[2].as_i64() == Some(1),
        command: from_json(&text(&row[3]), "command line")?,
        environment: from_json(&text(&row[4]), "run environment")?,
        sysctls: from_json(&text(&row[5]), "sysctl list")?,
        cases: Vec::new(),
        verdicts: from_json(&text(&row[6]), "verdict list")?,
        plan: row[7].as_str().map(|plan| PlanRef {
            id: plan.to_string(),
            shard: row[8].as_str().map(str::to_string),
            cases: row[9].as_i64().and_then(|n| usize::try_from(n).ok()).unwrap_or(0),
            ..PlanRef::default()
        }),
    };
    let conditions = if version >= 2 { "conditions, memory_cgroup" } else { "NULL, NULL" };
    let start = if version >= 3 { "start, image_copy" } else { "NULL, NULL" };
    let busy = if version >= 4 { "busy" } else { "NULL" };
    let guest = if version >= 5 { "guest" } else { "NULL" };
    let disk = if version >= 6 { "disk" } else { "NULL" };
    let plan_key = if version >= 8 { "plan_key" } else { "NULL" };
    let crash = if version >= 9 { "crash" } else { "NULL" };
    let cases = sql.query(
        &format!(
            "SELECT id, scenario, fs, params, repeat, status, error, fs_type, device, mkfs_args, mount_opts, \
             cold_method, command_output, {conditions}, {start}, {busy}, {guest}, {disk}, {plan_key}, {crash} FROM cases WHERE run_id = ? \
             ORDER BY ordinal"
        ),
        &[Value::text(id)],
    )?;
    for c in cases {
        let case_id = c[0].clone();
        let mut case = Case::new(&text(&c[1]), &text(&c[2]), from_json(&text(&c[3]), "case's parameters")?, 0);
        case.repeat = c[4].as_i64().and_then(|r| u32::try_from(r).ok()).unwrap_or(0);
        case.status = if c[5].as_str() == Some(Status::Failed.as_str()) { Status::Failed } else { Status::Ok };
        case.error = c[6].as_str().map(str::to_string);
        case.target = TargetRecord {
            fs_type: text(&c[7]),
            device: c[8].as_str().map(str::to_string),
            mkfs_args: from_json(&text(&c[9]), "mkfs argument list")?,
            mount_opts: c[10].as_str().map(str::to_string),
            cold_method: c[11].as_str().map(str::to_string),
            memory_cgroup: c[14].as_str().map(str::to_string),
            image_copy: c[16].as_str().map(str::to_string),
            disk: c[19].as_str().map(str::to_string),
        };
        if let Some(conditions) = c[13].as_str() {
            case.conditions = from_json(conditions, "case's conditions")?;
        }
        case.start = c[15].as_str().map(|t| from_json(t, "case's starting point")).transpose()?;
        case.busy = c[17].as_str().map(str::to_string);
        case.guest = c[18].as_str().map(|t| from_json(t, "case's guest")).transpose()?;
        case.command = c[12].as_str().map(|t| from_json(t, "command output")).transpose()?;
        case.plan_key = c[20].as_str().map(str::to_string);
        case.crash = c[21].as_str().map(|t| from_json(t, "case's crash record")).transpose()?;
        case.figures = load_figures(sql, &case_id)?;
        let points = sql.query("SELECT points FROM timelines WHERE case_id = ?", std::slice::from_ref(&case_id))?;
        if let Some(p) = points.first() {
            case.timeline = from_json(&text(&p[0]), "timeline")?;
        }
        // The table came with version 7.
        if version >= 7 {
            let streams = sql.query("SELECT streams FROM request_streams WHERE case_id = ?", std::slice::from_ref(&case_id))?;
            if let Some(s) = streams.first() {
                case.requests = from_json(&text(&s[0]), "request streams")?;
            }
        }
        let maps = sql.query(
            "SELECT path, size, block_size, device_bytes, extents, truncated, extent_list FROM extent_maps \
             WHERE case_id = ? ORDER BY ordinal",
            &[case_id],
        )?;
        for m in maps {
            let n = |v: &Value| v.as_i64().and_then(|i| u64::try_from(i).ok()).unwrap_or(0);
            case.maps.push(KeptMap {
                path: text(&m[0]),
                size: n(&m[1]),
                block_size: u32::try_from(n(&m[2])).unwrap_or(0),
                device_bytes: n(&m[3]),
                extents: n(&m[4]),
                truncated: n(&m[5]) == 1,
                extent_list: from_json(&text(&m[6]), "extent list")?,
            });
        }
        run.cases.push(case);
    }
    Ok(Some(run))
}

fn load_figures(sql: &mut dyn Sql, case_id: &Value) -> Result<Figures> {
    let rows = sql.query(
        "SELECT name, value, unit, better, kind, missing FROM figures WHERE case_id = ? ORDER BY ordinal",
        std::slice::from_ref(case_id),
    )?;
    let mut figures = Figures::new();
    for r in rows {
        let better = r[3].as_str().and_then(Better::from_word).unwrap_or(Better::Lower);
        let kind = r[4].as_str().and_then(Kind::from_word).unwrap_or(Kind::Timing);
        let figure = Figure {
            value: r[1].as_f64(),
            unit: text(&r[2]).into(),
            better,
            kind,
            missing: r[5].as_str().map(str::to_string),
        };
        figures.insert_figure(&text(&r[0]), figure);
    }
    figures.upgrade_units();
    Ok(figures)
}
