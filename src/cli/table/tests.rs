use super::cell::{heading, summary};
use super::notes::missing;
use super::*;
use crate::cli::verdicts::WIDTH;
use crate::record::{Better, Case, Figures, Kind, Status};

/// A case of `scenario` on `fs` with `params`, repeat `repeat`, holding
/// `figures`.
fn case(scenario: &str, fs: &str, params: &[(&str, serde_json::Value)], repeat: u32, figures: Figures) -> Case {
    let params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let mut c = Case::new(scenario, fs, params, repeat);
    c.figures = figures;
    c
}

fn columns<'a>(params: &'a [&'a str], figures: &[&str], wide: bool) -> Columns<'a> {
    Columns { params, figures: figures.iter().map(|f| f.to_string()).collect(), more: true, wide }
}

fn assert_fits(text: &str) {
    for line in text.lines() {
        assert!(line.chars().count() <= WIDTH, "{} columns:\n{line}\n{text}", line.chars().count());
    }
}

#[test]
fn cells_are_in_mib_and_mib_per_s_and_missing_is_a_dash() {
    let mut f = Figures::new();
    f.set("extents", 3.0, "count", Better::Lower, Kind::Exact);
    f.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "needs root");
    f.set("written_bytes", 67_108_864.0, "bytes", Better::Lower, Kind::Exact);
    f.set("wall_s", 0.5, "s", Better::Lower, Kind::Timing);
    f.set("cold_read_mbps", 104.8576, "MB/s", Better::Higher, Kind::Timing);
    f.set("fio_w_write_bw_bytes", 2.0 * 1048576.0, "bytes/s", Better::Higher, Kind::Timing);
    f.set("exit_status", 0.0, "status", Better::Lower, Kind::Exact);
    // Recorded as MB/s before the units were put right; always MiB/s.
    f.set("total_mbps", 584.9, "MB/s", Better::Higher, Kind::Timing);
    let c = case("exec", "ext4", &[], 1, f);
    let one = |name| summary(&[&c], name);
    assert_eq!(one("extents"), "3");
    assert_eq!(one("journal_commits"), "-");
    assert_eq!(one("nothing"), "-");
    assert_eq!(one("written_bytes"), "64.0");
    assert_eq!(one("wall_s"), "0.500");
    assert_eq!(one("cold_read_mbps"), "100.0");
    assert_eq!(one("fio_w_write_bw_bytes"), "2.0");
    assert_eq!(one("exit_status"), "0");
    assert_eq!(one("total_mbps"), "584.9");
    let catalog = crate::harness::catalog();
    assert_eq!(heading(&catalog, "written_bytes", Some("bytes")), "MiB wr");
    assert_eq!(heading(&catalog, "cold_read_mbps", Some("MB/s")), "cold MiB/s");
    assert_eq!(heading(&catalog, "seek_distance_bytes", Some("bytes")), "seek distance MiB");
    assert_eq!(heading(&catalog, "fragmented_files", Some("count")), "fragmented files");
    assert_eq!(heading(&catalog, "drop_detected", Some("count")), "drop detected");
    assert_eq!(heading(&catalog, "proc_sys_pct_after", Some("%")), "proc sys % after");
    assert_eq!(heading(&catalog, "fio_w_write_clat_p50_s", Some("s")), "fio_w_write_clat_p50 s");
    assert_eq!(heading(&catalog, "fio_w_write_bw_bytes", Some("bytes/s")), "fio_w_write_bw MiB/s");
    assert_eq!(heading(&catalog, "fio_w_write_iops", Some("count")), "fio_w_write_iops");
}

#[test]
fn repeats_fold_into_one_row_with_median_range_and_n() {
    let mut cases = Vec::new();
    for strategy in ["fsync-each", "writeback-batch"] {
        for fs in ["ext4", "xfs"] {
            for (repeat, wall) in [(1, 0.030), (2, 0.010), (3, 0.020)] {
                let mut f = Figures::new();
                f.set("wall_s", wall, "s", Better::Lower, Kind::Timing);
                f.set("journal_commits", 21.0, "count", Better::Lower, Kind::Exact);
                f.set("flushes", 40.0 + f64::from(repeat), "count", Better::Lower, Kind::Exact);
                cases.push(case("replace-files", fs, &[("strategy", strategy.into())], repeat, f));
            }
        }
    }
    let refs: Vec<&Case> = cases.iter().collect();
    let text = render_cases(&crate::harness::catalog(), &refs, &columns(&["strategy"], &["wall_s", "journal_commits", "flushes"], false));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "a heading and a row per target and parameter set:\n{text}");
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["fs", "strategy", "n", "status", "wall", "s", "commits", "flushes"]);
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["ext4", "fsync-each", "3", "ok", "0.020", "[0.010–0.030]", "21", "42", "[41–43]"],
        "timings as median [min–max], an exact figure that agrees as its value:\n{text}"
    );
    assert!(lines[4].starts_with("xfs   writeback-batch"), "{text}");
    // A parameter every row shares is said once, above the table.
    let one: Vec<&Case> = cases.iter().filter(|c| c.params["strategy"] == "fsync-each").collect();
    let text = render_cases(&crate::harness::catalog(), &one, &columns(&["strategy"], &["wall_s"], false));
    assert!(text.starts_with("parameters: strategy fsync-each\nfs    n  status"), "{text}");
    assert!(!text.contains('#'), "no repeat-number column:\n{text}");
    // One repeat failed: the row says so and sums up the others.
    cases[0].status = Status::Failed;
    let refs: Vec<&Case> = cases.iter().collect();
    let text = render_cases(&crate::harness::catalog(), &refs, &columns(&["strategy"], &["wall_s"], false));
    assert!(text.lines().nth(1).unwrap().contains(" 2/3 ok  0.015 [0.010–0.020]"), "{text}");
}

#[test]
fn not_measured_is_said_once_per_reason_for_the_places_it_holds() {
    let mut cases = Vec::new();
    for fs in ["ext4", "xfs", "btrfs"] {
        for repeat in 1..=3 {
            let mut f = Figures::new();
            f.set("touch_s", 1.0, "s", Better::Lower, Kind::Timing);
            f.set_missing("prealloc_s", "s", Better::Lower, Kind::Timing, "no prealloc asked");
            f.set_missing("pretouch_s", "s", Better::Lower, Kind::Timing, "no prealloc asked");
            if fs == "btrfs" {
                f.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "no journal tracepoints for btrfs");
            } else {
                f.set("journal_commits", 2.0, "count", Better::Lower, Kind::Exact);
            }
            // Held but not shown: says nothing.
            f.set_missing("seeks", "count", Better::Lower, Kind::Timing, "no tracefs");
            cases.push(case("mmap-fill", fs, &[], repeat, f));
        }
    }
    let refs: Vec<&Case> = cases.iter().collect();
    let shown: Vec<String> = ["touch_s", "prealloc_s", "pretouch_s", "journal_commits"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        missing(&refs, &shown),
        "not measured: prealloc_s, pretouch_s on ext4, xfs, btrfs (no prealloc asked)\n\
         not measured: journal_commits on btrfs (no journal tracepoints for btrfs)\n"
    );
    let text = render_cases(&crate::harness::catalog(), &refs, &columns(&[], &["touch_s", "prealloc_s", "journal_commits"], false));
    assert_eq!(text.matches("not measured").count(), 2, "{text}");
    assert!(text.contains("(2 more figures with --wide)"), "pretouch_s and seeks are held, not listed:\n{text}");
    let wide = render_cases(&crate::harness::catalog(), &refs, &columns(&[], &["touch_s"], true));
    assert!(wide.lines().next().unwrap().contains("seeks"), "{wide}");
    assert!(wide.contains("not measured: seeks on ext4, xfs, btrfs (no tracefs)"), "{wide}");
    // One reason, different figures at different places: still one line.
    let root = |fs: &str, names: &[&str]| {
        let mut f = Figures::new();
        for name in names {
            f.set_missing(name, "count", Better::Lower, Kind::Exact, "needs root");
        }
        case("exec", fs, &[], 1, f)
    };
    let (a, b, c) = (root("ext4", &["seeks"]), root("xfs", &["journal_commits", "seeks"]), root("ext2", &["seeks"]));
    let shown: Vec<String> = ["journal_commits", "seeks"].iter().map(|s| s.to_string()).collect();
    assert_eq!(missing(&[&a, &b, &c], &shown), "not measured: seeks on ext4, ext2; journal_commits, seeks on xfs (needs root)\n");
    // A long list wraps under its own indent.
    let long: Vec<String> = (0..30).map(|i| format!("figure_number_{i}")).collect();
    let mut f = Figures::new();
    for name in &long {
        f.set_missing(name, "count", Better::Lower, Kind::Exact, "why");
    }
    let c = case("x", "ext4", &[], 1, f);
    let text = missing(&[&c], &long);
    assert!(text.lines().count() > 1 && text.lines().skip(1).all(|l| l.starts_with("  ")), "{text}");
    assert_fits(&text);
}

#[test]
fn no_two_columns_share_a_heading() {
    let catalog = crate::harness::catalog();
    let mut f = Figures::new();
    f.set("files", 20.0, "count", Better::Lower, Kind::Exact);
    f.set("start_files", 7.0, "count", Better::Lower, Kind::Exact);
    f.set("strategy", 1.0, "count", Better::Lower, Kind::Exact);
    let c = case("replace-files", "ext4", &[("files", 20.into()), ("strategy", "fsync-each".into())], 1, f.clone());
    let d = case("replace-files", "ext4", &[("files", 10.into()), ("strategy", "none".into())], 1, f);
    let text = render_cases(&catalog, &[&c, &d], &columns(&["files", "strategy"], &["files", "strategy"], false));
    let head = text.lines().next().unwrap();
    assert_eq!(head.split("  ").map(str::trim).filter(|h| !h.is_empty()).collect::<Vec<_>>(),
        ["fs", "files", "strategy", "status", "files left", "figure strategy"], "{text}");
}

/// Every figure the catalog declares, with wide values, on every scenario
/// and on exec, repeated: the default tables fit; `--wide` shows all.
#[test]
fn real_tables_fit_the_width_with_repeats_and_every_figure_measured() {
    let catalog = crate::harness::catalog();
    let mut lists: Vec<(String, Vec<&str>, Vec<String>)> = catalog
        .scenarios
        .iter()
        .map(|s| {
            let figures = s.headline.iter().chain(crate::record::catalog::TABLE_COMMON).map(|f| f.to_string()).collect();
            (s.name.to_string(), s.params.clone(), figures)
        })
        .collect();
    lists.push(("exec".into(), vec![], crate::record::catalog::EXEC_TABLE.iter().map(|f| f.to_string()).collect()));
    for (scenario, params, figures) in &lists {
        let mut cases = Vec::new();
        for fs in ["ext4", "xfs", "btrfs-mixed"] {
            for repeat in 1..=3u32 {
                let mut f = Figures::new();
                for (i, spec) in catalog.figures.iter().enumerate() {
                    let value = 1234.5678 * f64::from(repeat) * (i % 7 + 1) as f64;
                    f.set(spec.name, if spec.unit == "bytes" { value * 1e6 } else { value }, spec.unit, spec.better, spec.kind);
                }
                let values: Vec<(&str, serde_json::Value)> = params.iter().map(|p| (*p, "small".into())).collect();
                cases.push(case(scenario, fs, &values, repeat, f));
            }
        }
        let refs: Vec<&Case> = cases.iter().collect();
        let text = render_cases(&catalog, &refs, &columns(params, &figures.iter().map(String::as_str).collect::<Vec<_>>(), false));
        assert_fits(&text);
        assert_eq!(text.lines().filter(|l| l.contains(" ok ")).count(), 3, "{scenario}:\n{text}");
        let mut lines = text.lines();
        if !params.is_empty() {
            assert_eq!(lines.next(), Some(format!("parameters: {}", params.join(" small, ") + " small").as_str()), "{text}");
        }
        let head = lines.next().unwrap();
        assert!(head.split("  ").filter(|h| !h.trim().is_empty()).count() >= 4, "{scenario}: too few figures:\n{text}");
        let wide = render_cases(&catalog, &refs, &columns(params, &[], true));
        // Every figure, a block per row since a row of them would be wider.
        assert_fits(&wide);
        for name in cases.iter().flat_map(|c| c.figures.iter().map(|(n, _)| n)).filter(|n| !n.starts_with("start_")) {
            assert!(wide.lines().any(|l| l.split_whitespace().next() == Some(name)), "{scenario}: --wide shows {name}:\n{wide}");
        }
        assert!(!wide.contains("more figures with --wide"), "{wide}");
    }
}

/// One convention of units: every figure the catalog declares carries a
/// unit of the list, sizes in bytes and rates in MiB/s (fio's own
/// bandwidth alone in bytes/s, as fio prints it).
#[test]
fn every_declared_figure_has_a_unit_of_the_convention() {
    let catalog = crate::harness::catalog();
    for spec in &catalog.figures {
        assert!(crate::record::UNITS.contains(&spec.unit), "{}: unit {:?} is not one of {:?}", spec.name, spec.unit, crate::record::UNITS);
        if spec.name.ends_with("_mbps") {
            assert_eq!(spec.unit, "MiB/s", "{}", spec.name);
        }
        if spec.name.ends_with("_bytes") {
            assert_eq!(spec.unit, "bytes", "{}", spec.name);
        }
    }
}

/// A heading says its unit: a size's names MiB, a rate's MiB/s, a count of
/// pages `pg` (the memory cgroup's and the page cache's figures most of
/// all: `peak MiB`, `cg dirty MiB`, `scanned pg`); and no two figures one
/// table can show share a heading (the starting state's have a table of
/// their own).
#[test]
fn headings_carry_their_unit_and_no_two_figures_share_one() {
    let catalog = crate::harness::catalog();
    let mut seen: Vec<(String, &str)> = Vec::new();
    for spec in catalog.figures.iter().filter(|s| !s.name.starts_with("start_")) {
        let shown = heading(&catalog, spec.name, Some(spec.unit));
        let wanted = match spec.unit {
            "bytes" => Some("MiB"),
            "MiB/s" | "bytes/s" => Some("MiB/s"),
            _ if spec.name.ends_with("_pages") => Some("pg"),
            _ => None,
        };
        if let Some(unit) = wanted {
            assert!(shown.split(' ').any(|w| w == unit), "{}: heading {shown:?} does not say {unit}", spec.name);
        }
        if let Some((other, _)) = seen.iter().find(|(h, n)| *h == shown && *n != spec.name) {
            panic!("{} and {other:?}'s figure share the heading {shown:?}", spec.name);
        }
        seen.push((shown, spec.name));
    }
    for memory in ["memory_peak_bytes", "memory_limit_bytes", "memory_dirty_bytes", "memory_writeback_bytes", "dirty_peak_bytes", "writeback_peak_bytes"] {
        assert!(heading(&catalog, memory, Some("bytes")).ends_with(" MiB"), "{memory}");
    }
}

#[test]
fn an_emulated_case_s_timings_are_marked_and_the_mark_is_said_once() {
    // replace-files on the host and in a TCG guest, two repeats each: the
    // guest's wall and sync times carry the mark, its commits do not, and
    // the host's row has none; the footnote follows the run once.
    let figures = |wall: f64, commits: f64| {
        let mut f = Figures::new();
        f.set("journal_commits", commits, "count", Better::Lower, Kind::Exact);
        f.set("wall_s", wall, "s", Better::Lower, Kind::Timing);
        f.set("fsync_s", wall / 2.0, "s", Better::Lower, Kind::Timing);
        f
    };
    let params = [("strategy", serde_json::Value::from("fsync-each"))];
    let mut cases = Vec::new();
    for repeat in 1..=2 {
        let mut host = case("replace-files", "ext4", &params, repeat, figures(0.2 * f64::from(repeat), 21.0));
        host.conditions.insert("kernel".into(), "6.18.44".into());
        let mut guest = case("replace-files", "ext4", &params, repeat, figures(3.0 * f64::from(repeat), 21.0));
        guest.conditions.insert("kernel".into(), "6.1.0-56-amd64".into());
        guest.conditions.insert("vm_memory".into(), "512M".into());
        guest.guest = Some(crate::record::guest::tests::guest(true));
        cases.extend([host, guest]);
    }
    let refs: Vec<&Case> = cases.iter().collect();
    let catalog = crate::harness::catalog();
    let table = render_cases(&catalog, &refs, &columns(&["strategy"], &["journal_commits", "wall_s", "fsync_s"], false));
    let lines: Vec<&str> = table.lines().collect();
    let host = lines.iter().find(|l| l.starts_with("ext4@6.18.44 ")).unwrap();
    let guest = lines.iter().find(|l| l.starts_with("ext4@6.1.0-56-amd64,vm=512M ")).unwrap();
    assert!(!host.contains('†'), "{table}");
    assert!(guest.ends_with("4.500 [3.000–6.000]†  2.250 [1.500–3.000]†") && guest.contains(" 21 "), "{table}");
    assert_eq!(guest.matches('†').count(), 2, "the exact commits are not marked: {table}");
    let mut run: crate::record::RunRecord = serde_json::from_value(serde_json::json!({
        "id": "20261123T120000Z-1-00000001", "tag": null, "started_at": "2026-11-23T12:00:00Z", "command": ["fslab"],
        "complete": true, "sysctls": [], "cases": [],
        "environment": {"fslab_version": "0.1.0", "kernel": "6.18.44", "machine": "x86_64", "cpu": null, "cpus": 2,
                        "memory_bytes": null, "tools": {}, "disk": null}
    }))
    .unwrap();
    run.cases = cases.clone();
    let text = crate::cli::show::render_text(&run, false, false);
    let footnote = "† emulated (TCG): timings measure the emulator; exact figures carry over (why: /dev/kvm is PVM, which \
                    cannot boot a stock kernel); its writeback timers ran 10 times longer, as its work did: \
                    vm.dirty_writeback_centisecs=5000, vm.dirty_expire_centisecs=30000.";
    assert_eq!(text.replace("\n  ", " ").matches(footnote).count(), 1, "{text}");
    assert_fits(&text);
    run.cases.retain(|c| c.guest.is_none());
    assert!(!crate::cli::show::render_text(&run, false, false).contains('†'));
}

#[test]
fn small_times_say_their_unit_and_a_wide_table_becomes_blocks_within_the_width() {
    let mut f = Figures::new();
    f.set("wall_s", 0.882, "s", Better::Lower, Kind::Timing);
    f.set("fio_w_write_clat_p50_s", 16.8e-6, "s", Better::Lower, Kind::Timing);
    f.set("fio_w_write_clat_p99_s", 0.005_12, "s", Better::Lower, Kind::Timing);
    for i in 0..60 {
        f.set(&format!("some_long_figure_name_{i}_bytes"), 1048576.0 * f64::from(i), "bytes", Better::Lower, Kind::Exact);
    }
    let c = case("exec", "ext4", &[], 1, f);
    assert_eq!(summary(&[&c], "fio_w_write_clat_p50_s"), "16.8 µs", "never 0.000");
    assert_eq!(summary(&[&c], "fio_w_write_clat_p99_s"), "5.12 ms");
    assert_eq!(summary(&[&c], "wall_s"), "0.882");
    let text = render_cases(&crate::harness::catalog(), &[&c], &columns(&[], &["wall_s"], true));
    assert_fits(&text);
    let line = |name: &str| text.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{name}:\n{text}"));
    assert_eq!(line("fio_w_write_clat_p50_s").split_whitespace().collect::<Vec<_>>(), ["fio_w_write_clat_p50_s", "16.8", "µs"]);
    assert_eq!(line("wall_s").split_whitespace().collect::<Vec<_>>(), ["wall_s", "882", "ms"]);
    assert_eq!(line("some_long_figure_name_59_bytes").split_whitespace().collect::<Vec<_>>(), ["some_long_figure_name_59_bytes", "59.0", "MiB"]);
    assert!(text.starts_with("fs ext4, status ok\n"), "{text}");
}
