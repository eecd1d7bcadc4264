//! `fslab list`: every scenario, its parameters with small and full
//! defaults and the seed's value, and the figures it adds; `--ages` the
//! aging profiles, `--disks` the disk model's drives ([`super::disks`]).

use std::fmt::Write as _;
use std::process::ExitCode;

use super::ListArgs;
use super::verdicts::wrap;
use crate::error::Result;
use crate::scenario::SCENARIOS;
use crate::scenario::params::ParamKind;

/// Run `fslab list`.
pub fn run(args: &ListArgs) -> Result<ExitCode> {
    if args.disks {
        return super::disks::run(args);
    }
    if args.ages {
        if args.json {
            return Err(crate::error::Error::usage("--ages prints text only: leave --json out"));
        }
        super::print(crate::age::describe_profiles().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let rendered = if args.json { render_json() } else { render_text().into_bytes() };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn kind(kind: ParamKind) -> String {
    match kind {
        ParamKind::Size => "size".into(),
        ParamKind::Count { .. } => "count".into(),
        ParamKind::Choice(words) => words.join("|"),
        ParamKind::ChoiceOrPath(words) => format!("{}|PATH", words.join("|")),
    }
}

/// Every scenario as text, each line wrapped at the tables' width, what
/// continues a line indented under it.
fn render_text() -> String {
    let mut s = String::new();
    for scenario in SCENARIOS {
        let seed = scenario.seeded().map(|s| format!(" (seed {})", s.seed())).unwrap_or_default();
        s.push_str(&wrap(&format!("{}{seed}: {}", scenario.name(), scenario.about()), 2));
        for p in scenario.params() {
            let range = match p.kind {
                ParamKind::Count { max } => format!(" (1 to {max})"),
                _ => String::new(),
            };
            let _ = writeln!(s, "  --set {}=<{}>{range}", p.name, kind(p.kind));
            s.push_str(&wrap(&format!("      {}", p.about), 6));
            s.push_str(&wrap(&format!("      small: {}  full: {}  seed: {}", p.small, p.full, p.seed), 8));
        }
        for f in scenario.figures() {
            s.push_str(&wrap(&format!("  figure {}: {}", f.name, f.about), 4));
        }
        s.push('\n');
    }
    s
}

fn render_json() -> Vec<u8> {
    let scenarios: Vec<serde_json::Value> = SCENARIOS
        .iter()
        .map(|sc| {
            let params: Vec<serde_json::Value> = sc
                .params()
                .iter()
                .map(|p| {
                    serde_json::json!({"name": p.name, "kind": kind(p.kind), "small": p.small,
                        "full": p.full, "seed": p.seed, "about": p.about})
                })
                .collect();
            let figures: Vec<serde_json::Value> =
                sc.figures().iter().map(|f| serde_json::json!({"name": f.name, "about": f.about})).collect();
            serde_json::json!({"name": sc.name(), "seed": sc.seeded().map(|s| s.seed()), "about": sc.about(),
                "params": params, "figures": figures})
        })
        .collect();
    crate::json_document("scenarios", &scenarios)
}
