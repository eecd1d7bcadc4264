//! Where aged or filled targets started (`--age`, `--fill`): one row per
//! cache entry a run's cases were copied from, with the state measured
//! before the work. Every case from one entry starts the same, so its
//! first case stands for the rest.

use std::fmt::{self, Write as _};

use super::escape;
use crate::record::{Case, RunRecord};
use crate::units::bytes;

/// The starting-state table, when some run's targets were aged or filled.
pub(super) fn write_start(out: &mut String, runs: &[RunRecord]) -> fmt::Result {
    let mut rows: Vec<(&RunRecord, &Case)> = Vec::new();
    for run in runs {
        for case in &run.cases {
            let Some(start) = &case.start else { continue };
            let seen = rows.iter().any(|(r, c)| r.id == run.id && c.start.as_ref().is_some_and(|s| s.cache_key == start.cache_key));
            if !seen {
                rows.push((run, case));
            }
        }
    }
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(out, r#"<h3>Starting state</h3>"#)?;
    // The run column only when the page holds several runs.
    let several = runs.len() > 1;
    let run_head = if several { "<th>run</th>" } else { "" };
    writeln!(
        out,
        r#"<table class="start"><thead><tr>{run_head}<th>place</th><th>how</th><th>fill</th><th>free</th><th>free extents</th><th>largest free</th><th>free in &lt;1 MiB</th><th>files</th></tr></thead><tbody>"#
    )?;
    for (run, case) in rows {
        let start = case.start.as_ref().expect("chosen for it");
        let value = |name: &str| case.figures.value(name);
        let pct = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{:.1}%", v * 100.0));
        let size = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| bytes(v as u64));
        let count = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{v:.0}"));
        let run_cell = if several { format!("<td><code>{}</code></td>", escape(&run.id)) } else { String::new() };
        writeln!(
            out,
            "<tr>{run_cell}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&case.place()),
            escape(&start.describe()),
            pct(value("start_fill")),
            size(value("start_free_bytes")),
            count(value("start_free_extents")),
            size(value("start_free_largest_bytes")),
            pct(value("start_fragmented_share")),
            count(value("start_files")),
        )?;
    }
    writeln!(out, "</tbody></table>")
}
