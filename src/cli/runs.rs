//! `fslab runs`: the runs a store holds, a line each, oldest first, each
//! with how its targets were set up (`-o sync`, `aged churn`, `mem 256M`).

use std::fmt::Write as _;
use std::process::ExitCode;

use super::RunsArgs;
use crate::error::Result;
use crate::store::{RunSummary, SetupSummary, Store};

/// Run `fslab runs`.
pub fn run(args: &RunsArgs) -> Result<ExitCode> {
    let mut store: Store = crate::store::open_for_reading(&args.store.location)?;
    let runs = store.runs(args.tag.as_deref())?;
    let rendered = if args.json { render_json(&runs) } else { render_text(&runs, store.location()).into_bytes() };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

fn render_text(runs: &[RunSummary], location: &str) -> String {
    let mut s = String::new();
    if runs.is_empty() {
        let _ = writeln!(s, "no runs in {location}");
        return s;
    }
    let _ = writeln!(
        s,
        "{:<36}  {:<20}  {:>5}  {:<10}  {:<16}  {:<24}  {:<16}  setup",
        "run", "started", "cases", "state", "tags", "targets", "scenarios"
    );
    for r in runs {
        let state = if !r.complete {
            "incomplete"
        } else if r.failed > 0 {
            "failures"
        } else {
            "complete"
        };
        let cases = if r.failed > 0 { format!("{}/{}", r.cases - r.failed, r.cases) } else { r.cases.to_string() };
        let _ = writeln!(
            s,
            "{:<36}  {:<20}  {:>5}  {:<10}  {:<16}  {:<24}  {:<16}  {}",
            r.id,
            r.started_at,
            cases,
            state,
            r.tags.join(","),
            r.targets.join(","),
            r.scenarios.join(","),
            setup_words(r).join(", ")
        );
    }
    s
}

/// What a run's set-up was beyond fslab's defaults, in words a person
/// scans a list for: mkfs arguments beyond fslab's own (`mkfs -b 1024`),
/// mount options (`-o sync`), memory limits (`mem 256M`), sysctls, aging
/// and fill (`aged churn`, `fill 80%`); `defaults` when none.
fn setup_words(run: &RunSummary) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut add = |word: String| {
        if !words.contains(&word) {
            words.push(word);
        }
    };
    for setup in &run.setups {
        for word in setup_of(setup) {
            add(word);
        }
    }
    for (key, value) in &run.sysctls {
        add(format!("{key}={value}"));
    }
    if words.is_empty() {
        words.push("defaults".into());
    }
    words
}

/// One set-up's words.
fn setup_of(setup: &SetupSummary) -> Vec<String> {
    let mut words = Vec::new();
    let extra = super::show::mkfs_extra(&setup.fs_type, &setup.mkfs_args);
    if !extra.is_empty() {
        words.push(format!("mkfs {}", shell_words::join(extra)));
    }
    if let Some(opts) = &setup.mount_opts {
        words.push(format!("-o {opts}"));
    }
    for (name, value) in &setup.conditions {
        words.push(match name.as_str() {
            "memory" => format!("mem {value}"),
            "age" => format!("aged {}", value.split(':').next().unwrap_or(value)),
            "fill" => format!("fill {value}"),
            _ => format!("{name}={value}"),
        });
    }
    if let Some(age) = &setup.age {
        words.push(format!("aged {}", age.split(':').next().unwrap_or(age)));
    }
    if let Some(fill) = setup.fill {
        words.push(format!("fill {:.0}%", fill * 100.0));
    }
    words
}

fn render_json(runs: &[RunSummary]) -> Vec<u8> {
    crate::json_document("runs", runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(fs_type: &str, extra: &[&str], mount_opts: Option<&str>, conditions: &[(&str, &str)]) -> SetupSummary {
        let mut mkfs_args: Vec<String> = fs_type.parse::<crate::target::FsType>().unwrap().base_mkfs_args();
        mkfs_args.extend(extra.iter().map(|a| a.to_string()));
        SetupSummary {
            fs_type: fs_type.into(),
            mkfs_args,
            mount_opts: mount_opts.map(str::to_string),
            conditions: conditions.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            age: None,
            fill: None,
        }
    }

    fn summary(setups: Vec<SetupSummary>, sysctls: &[(&str, &str)]) -> RunSummary {
        RunSummary {
            id: "20261123T070000Z-1-abcdef01".into(),
            started_at: "2026-11-23T07:00:00Z".into(),
            tags: vec![],
            complete: true,
            kernel: "6.1".into(),
            cases: 2,
            failed: 0,
            scenarios: vec!["replace-files".into()],
            targets: vec!["ext4".into(), "xfs".into()],
            sysctls: sysctls.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            setups,
        }
    }

    #[test]
    fn the_setup_column_names_what_differs_from_fslab_s_defaults() {
        let plain = summary(vec![setup("ext4", &[], None, &[]), setup("xfs", &[], None, &[])], &[]);
        assert_eq!(setup_words(&plain), ["defaults"]);
        let sync = summary(vec![setup("ext4", &[], Some("sync"), &[]), setup("xfs", &[], None, &[])], &[]);
        assert_eq!(setup_words(&sync), ["-o sync"]);
        let mut aged = setup("ext2", &["-b", "1024"], None, &[("memory", "256M"), ("age", "churn:delete=50%"), ("fill", "80%")]);
        aged.age = Some("churn:delete=50%".into());
        aged.fill = Some(0.8);
        let varied = summary(vec![aged, setup("xfs", &[], None, &[("memory", "1G")])], &[("vm.dirty_ratio", "5")]);
        assert_eq!(
            setup_words(&varied),
            ["mkfs -b 1024", "aged churn", "fill 80%", "mem 256M", "mem 1G", "vm.dirty_ratio=5"]
        );
        let text = render_text(&[sync], "store");
        assert!(text.lines().next().unwrap().ends_with("  setup") && text.lines().nth(1).unwrap().ends_with("  -o sync"), "{text}");
    }
}
