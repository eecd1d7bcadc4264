//! `fslab runs`: the runs a store holds, a line each, oldest first, each
//! with how its targets were set up (`-o sync`, `aged churn`, `mem 256M`),
//! in 120 columns (`--wide`: every list whole).

use std::fmt::Write as _;
use std::process::ExitCode;

use super::RunsArgs;
use super::verdicts::WIDTH;
use crate::error::Result;
use crate::store::{RunSummary, SetupSummary, Store};
use crate::text;

/// Run `fslab runs`.
pub fn run(args: &RunsArgs) -> Result<ExitCode> {
    let mut store: Store = crate::store::open_for_reading(&args.store.for_reading()?)?;
    let runs = store.runs(args.tag.as_deref())?;
    let rendered = if args.json { render_json(&runs) } else { render_text(&runs, store.location(), args.wide).into_bytes() };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// The lines of `fslab runs`: a heading, then a run a line. Unless `wide`,
/// every line fits [`WIDTH`]: the lists (scenarios first, then targets,
/// set-up, tags: least telling first) are cut with `…` to what is left,
/// never below their heading's width; ids, times, counts and states are
/// never cut.
fn render_text(runs: &[RunSummary], location: &str, wide: bool) -> String {
    let mut s = String::new();
    if runs.is_empty() {
        let _ = writeln!(s, "no runs in {}", text::escape(location));
        return s;
    }
    let mut columns = [
        Column::new("run", true),
        Column::new("started", true),
        Column::new("cases", false),
        Column::new("state", true),
        Column::new("tags", true),
        Column::new("targets", true),
        Column::new("scenarios", true),
        Column::new("setup", true),
    ];
    for r in runs {
        let state = if !r.complete {
            "incomplete"
        } else if r.failed > 0 {
            "failures"
        } else {
            "complete"
        };
        let cases = if r.failed > 0 { format!("{}/{}", r.cases - r.failed, r.cases) } else { r.cases.to_string() };
        let cells = [
            r.id.clone(),
            r.started_at.clone(),
            cases,
            state.to_string(),
            r.tags.join(","),
            r.targets.join(","),
            r.scenarios.join(","),
            setup_words(r).join(", "),
        ];
        // What the store holds is shown, not obeyed: a tag another user
        // wrote has its control characters escaped.
        for (column, cell) in columns.iter_mut().zip(cells) {
            column.cells.push(text::escape(&cell).into_owned());
        }
    }
    let mut widths: Vec<usize> = columns.iter().map(Column::width).collect();
    let mut total = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    // scenarios, targets, setup, tags: cut in this order while too wide,
    // each to its heading's width at least; then, should ids and counts
    // alone leave too little, to a letter and `…`.
    for least_of in [|heading: usize| heading.max(MIN_CUT), |_| 2] {
        for i in [6, 5, 7, 4] {
            if wide || total <= WIDTH {
                break;
            }
            let least = least_of(columns[i].heading.chars().count()).min(widths[i]);
            let cut = (total - WIDTH).min(widths[i] - least);
            widths[i] -= cut;
            total -= cut;
        }
    }
    let mut cut_any = false;
    for row in 0..=runs.len() {
        let mut line = String::new();
        for (column, &width) in columns.iter().zip(&widths) {
            let text = if row == 0 { column.heading.to_string() } else { fit(&column.cells[row - 1], width) };
            cut_any |= row > 0 && text != column.cells[row - 1];
            if column.left {
                let _ = write!(line, "{text:<width$}  ");
            } else {
                let _ = write!(line, "{text:>width$}  ");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    if cut_any {
        let _ = writeln!(s, "(lists cut with … to fit {WIDTH} columns; --wide shows them whole)");
    }
    s
}

/// The narrowest a cut list gets: a few letters of its first item.
const MIN_CUT: usize = 8;

/// One column of `fslab runs`: its heading, cells, alignment.
struct Column {
    heading: &'static str,
    cells: Vec<String>,
    left: bool,
}

impl Column {
    fn new(heading: &'static str, left: bool) -> Column {
        Column { heading, cells: Vec::new(), left }
    }

    /// The widest of its heading and cells.
    fn width(&self) -> usize {
        self.cells.iter().map(|c| c.chars().count()).chain([self.heading.chars().count()]).max().unwrap_or(0)
    }
}

/// `text` in at most `width` columns: whole, or cut with `…` as its last,
/// after the last whole item of the list that fits (`ext2,ext3,…`), else
/// mid-word.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    let items = match kept.rfind(',') {
        Some(at) if at > 0 => kept[..=at].trim_end(),
        _ => kept.as_str(),
    };
    format!("{items}…")
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
        let mut mkfs_args: Vec<String> = fs_type.parse::<crate::site::FsType>().unwrap().base_mkfs_args();
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
        let text = render_text(&[sync], "store", false);
        assert!(text.lines().next().unwrap().ends_with("  setup") && text.lines().nth(1).unwrap().ends_with("  -o sync"), "{text}");
    }

    #[test]
    fn a_cut_list_keeps_whole_items() {
        assert_eq!(fit("ext2,ext3,ext4,xfs", 12), "ext2,ext3,…");
        assert_eq!(fit("mem 120M, mem 160M", 12), "mem 120M,…");
        assert_eq!(fit("mmap-fill,tree-copy", 8), "mmap-fi…");
        assert_eq!(fit("xfs", 8), "xfs");
    }

    #[test]
    fn long_lists_are_cut_to_120_columns_and_ids_never() {
        let mut long = summary(
            vec![setup("ext2", &["-b", "1024", "-E", "stride=16,stripe_width=64"], Some("sync,noatime,data=journal,commit=60"), &[("memory", "256M")])],
            &[("vm.dirty_ratio", "5"), ("vm.dirty_background_ratio", "2")],
        );
        long.tags = vec!["a-very-long-tag-naming-the-experiment".into(), "second-tag".into()];
        long.targets = ["ext2", "ext3", "ext4", "xfs", "btrfs"].map(String::from).to_vec();
        long.scenarios = ["mmap-fill", "tree-copy", "replace-files", "create-file", "direct-stream"].map(String::from).to_vec();
        long.id = "20261123T070000Z-123456-abcdef01".into();
        let short = summary(vec![setup("xfs", &[], None, &[])], &[]);
        let text = render_text(&[long.clone(), short], "store", false);
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "{} columns: {line}\n{text}", line.chars().count());
        }
        assert!(text.lines().nth(1).unwrap().starts_with("20261123T070000Z-123456-abcdef01  "), "{text}");
        assert!(text.contains('…') && text.contains("--wide"), "{text}");
        let wide = render_text(&[long], "store", true);
        let line = wide.lines().nth(1).unwrap();
        assert!(line.chars().count() > WIDTH, "{wide}");
        for whole in ["a-very-long-tag-naming-the-experiment,second-tag", "ext2,ext3,ext4,xfs,btrfs", "-o sync,noatime,data=journal,commit=60", "vm.dirty_background_ratio=2"] {
            assert!(line.contains(whole), "{whole} in {wide}");
        }
        assert!(!wide.contains('…'), "{wide}");
    }
}
