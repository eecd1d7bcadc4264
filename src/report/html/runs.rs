//! The page's first section: the runs shown, one row each, and the
//! machines they ran on.
//!
//! The design decision: a machine is described once for all the runs
//! that share it (kernel, CPU, tools, fslab and sysctls alike), so a page
//! comparing machines says how they differ and a page of many runs on one
//! machine does not repeat it.

use std::fmt::{self, Write as _};

use super::{escape, plural};
use crate::record::RunRecord;
use crate::units::bytes;

/// The runs, one row each, then what they ran on: once for each machine
/// and software they ran on, naming its runs when there are several.
pub(super) fn write_runs(out: &mut String, runs: &[RunRecord]) -> fmt::Result {
    writeln!(out, r#"<section class="runs" id="runs">"#)?;
    writeln!(out, "<h2>{}</h2>", if runs.len() == 1 { "Run" } else { "Runs" })?;
    writeln!(
        out,
        r#"<table class="runs"><thead><tr><th>run</th><th>started</th><th>tags</th><th>status</th><th>command line</th></tr></thead><tbody>"#
    )?;
    for run in runs {
        let (badge, word) = if run.complete { ("ok", "complete") } else { ("bad", "incomplete") };
        let tip =
            if run.complete { "every planned case ran" } else { "interrupted or killed: only its finished cases are shown" };
        writeln!(
            out,
            r#"<tr class="run" data-run="{id}" data-complete="{complete}"><td><code>{id}</code></td><td>{started}</td><td>{tags}</td><td><span class="badge {badge}" title="{tip}">{word}</span></td><td><code>{command}</code></td></tr>"#,
            id = escape(&run.id),
            complete = run.complete,
            started = escape(&run.started_at),
            tags = escape(&run.tags.join(", ")),
            command = escape(&shell_words::join(&run.command)),
        )?;
    }
    writeln!(out, "</tbody></table>")?;
    let cases: Vec<&crate::record::Case> = runs.iter().flat_map(|r| &r.cases).collect();
    if let Some(footnote) = crate::record::busy::BusyCases::of(&cases).footnote() {
        writeln!(out, r#"<p class="note busy">{}</p>"#, escape(&footnote))?;
    }
    // Once for the page: what the mark on emulated timings means.
    if let Some(footnote) = crate::record::guest::emulated_footnote(&cases) {
        writeln!(out, r#"<p class="note emulated">{}</p>"#, escape(&footnote))?;
    }
    // Runs on the same machine and software share one description.
    let mut groups: Vec<(&RunRecord, Vec<&str>)> = Vec::new();
    for run in runs {
        match groups.iter_mut().find(|(first, _)| same_environment(first, run)) {
            Some((_, ids)) => ids.push(&run.id),
            None => groups.push((run, vec![&run.id])),
        }
    }
    if let [(run, _)] = &groups[..] {
        writeln!(out, r#"<h3>Machine</h3>"#)?;
        write_environment(out, run)?;
    } else {
        for (run, ids) in &groups {
            let named: Vec<String> = ids.iter().map(|id| format!("<code>{}</code>", escape(id))).collect();
            let of = if ids.len() == 1 { "run" } else { "runs" };
            writeln!(out, r#"<h3>Machine of {of} {}</h3>"#, named.join(", "))?;
            write_environment(out, run)?;
        }
    }
    super::start::write_start(out, runs)?;
    writeln!(out, "</section>")
}

/// Whether two runs ran on the same machine and software, sysctls
/// included.
fn same_environment(a: &RunRecord, b: &RunRecord) -> bool {
    let environment = |r: &RunRecord| serde_json::to_value(&r.environment).ok();
    environment(a) == environment(b) && a.sysctls == b.sysctls
}

/// What one run ran on: kernel, CPU, memory, disk, tool versions, sysctls.
fn write_environment(out: &mut String, run: &RunRecord) -> fmt::Result {
    let env = &run.environment;
    writeln!(out, r#"<dl class="env">"#)?;
    let mut row = |key: &str, value: &str| writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(key), escape(value));
    row("kernel", &format!("Linux {} ({})", env.kernel, env.machine))?;
    let cpu = env.cpu.as_deref().unwrap_or("unknown model");
    row("CPU", &format!("{cpu} · {}", plural(env.cpus, "CPU online", "CPUs online")))?;
    row("memory", &env.memory_bytes.map_or_else(|| "unknown".to_string(), bytes))?;
    if let Some(disk) = &env.disk {
        let mut text = disk.name.clone();
        if let Some(model) = &disk.model {
            let _ = write!(text, " ({model})");
        }
        match disk.rotational {
            Some(true) => text.push_str(" · rotational"),
            Some(false) => text.push_str(" · non-rotational"),
            None => {}
        }
        if let Some(scheduler) = &disk.scheduler {
            let _ = write!(text, " · scheduler {scheduler}");
        }
        row("disk under scratch", &text)?;
    }
    let tools: Vec<String> = env.tools.values().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect();
    if !tools.is_empty() {
        row("fs tools", &tools.join(" · "))?;
    }
    row("fslab", &env.fslab_version)?;
    let sysctls: Vec<String> = run.sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect();
    row("sysctls", &if sysctls.is_empty() { "none set: the machine's own".to_string() } else { sysctls.join(", ") })?;
    writeln!(out, "</dl>")
}
