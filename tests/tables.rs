//! The tables people read, end to end: a real run with repeats on two
//! file systems fits 120 columns, has a row per target and parameter set,
//! says each "not measured" reason once, and shows how its targets were
//! made in the header, in `runs`, `show` and the CSV export.

mod common;

use common::{Lab, root_or_skip};

/// Every line fits 120 columns.
fn assert_fits(text: &str) {
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "{} columns: {line}\n{text}", line.chars().count());
    }
}

/// No two columns share a heading.
fn assert_unique(headings: &[&str]) {
    let mut unique = headings.to_vec();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), headings.len(), "no two columns share a heading: {headings:?}");
}

/// The heading and rows of the table that follows `title`'s line (and its
/// shared parameters): the lines after its heading up to the first that is
/// blank or a note.
fn table_rows<'t>(text: &'t str, title: &str) -> (&'t str, Vec<&'t str>) {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(title)).skip(1).skip_while(|l| l.starts_with("parameters: "));
    let head = lines.next().unwrap_or_else(|| panic!("no table after {title}:\n{text}"));
    let rows = lines.take_while(|l| !l.is_empty() && !l.starts_with('(') && !l.starts_with("not measured")).collect();
    (head, rows)
}

#[test]
fn a_repeated_run_prints_a_row_per_target_and_parameter_set_within_120_columns() {
    if !root_or_skip("tables_repeat") {
        return;
    }
    let lab = Lab::new();
    let out = lab.expect(
        &[
            "run",
            "replace-files",
            "--scratch",
            lab.scratch().to_str().unwrap(),
            "--fs",
            "ext4,xfs",
            "--repeat",
            "2",
            "--set",
            "strategy=fsync-each,writeback-batch",
            "--mount-opt",
            "ext4=sync",
            "--tag",
            "tables",
        ],
        0,
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_fits(&text);
    assert!(text.lines().any(|l| l == "ext4 made with mount -o sync"), "the header says how ext4 was made:\n{text}");
    let (head, rows) = table_rows(&text, "replace-files (seed 002)");
    let words: Vec<&str> = head.split("  ").map(str::trim).filter(|h| !h.is_empty()).collect();
    assert_eq!(&words[..4], ["fs", "strategy", "n", "status"], "{text}");
    assert!(text.contains("\nparameters: files 20\nfs "), "the parameter every row shares, said once:\n{text}");
    assert!(words.contains(&"wall s"), "the seed's figures first: {words:?}");
    assert_unique(&words);
    assert_eq!(rows.len(), 4, "2 targets × 2 strategies:\n{text}");
    for row in &rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((cells[2], cells[3]), ("2", "ok"), "{row}");
    }
    // Timings of two repeats: median [min–max] unless they print alike.
    assert!(rows.iter().any(|r| r.contains('[') && r.contains('–')), "{text}");
    // Each reason once, however many targets and repeats share it.
    let reasons: Vec<&str> =
        text.lines().filter(|l| l.starts_with("not measured: ")).map(|l| l.rsplit_once(" (").map_or(l, |(_, why)| why)).collect();
    let mut once = reasons.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), reasons.len(), "a reason said twice:\n{text}");

    // `show --wide`: every figure, the same rows, each a block of its
    // figures (name, value, unit) since a row of them is wider than 120.
    let wide = String::from_utf8(lab.expect(&["show", "tables", "--wide"], 0).stdout).unwrap();
    assert_fits(&wide);
    let blocks: Vec<&str> = wide.lines().filter(|l| l.starts_with("fs ") && l.ends_with(", status ok")).collect();
    assert_eq!(blocks.len(), 4, "{wide}");
    assert!(blocks.iter().all(|b| b.contains(", n 2, ")), "{wide}");
    let names: Vec<&str> = wide.lines().filter_map(|l| l.strip_prefix("  ")).filter_map(|l| l.split_whitespace().next()).collect();
    for name in ["files_replaced", "files", "written_bytes", "wall_s"] {
        assert_eq!(names.iter().filter(|n| **n == name).count(), 4, "{name} once a block:\n{wide}");
    }
    assert!(!wide.contains("more figures with --wide"), "{wide}");
    // `runs` names the mount option; the CSV carries the set-up.
    let runs = String::from_utf8(lab.expect(&["runs"], 0).stdout).unwrap();
    assert!(runs.lines().nth(1).is_some_and(|l| l.ends_with("-o sync")), "{runs}");
    let csv = String::from_utf8(lab.expect(&["export", "tables", "--csv"], 0).stdout).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(&header[13..], ["mkfs_args", "mount_opts", "conditions", "sysctls", "age", "fill", "busy", "guest"], "{csv}");
    let ext4_rows: Vec<&str> = csv.lines().filter(|l| l.contains(",ext4,")).collect();
    assert!(!ext4_rows.is_empty() && ext4_rows.iter().all(|l| l.contains(",sync,")), "{csv}");
    assert!(csv.lines().filter(|l| l.contains(",xfs,")).all(|l| !l.contains(",sync,")), "{csv}");
    lab.assert_nothing_left("after the tables run");
}

/// `fslab runs` on a store holding a run with long tags, many targets and
/// scenarios and a long set-up: every line within 120 columns, ids whole,
/// the lists cut with `…`; `--wide` shows them whole.
#[test]
fn runs_lines_fit_120_columns_with_ids_whole_and_wide_shows_every_list() {
    let dir = common::temp::dir("runs-wide");
    let mut cases = Vec::new();
    for (fs, scenario) in [("ext2", "mmap-fill"), ("ext3", "tree-copy"), ("ext4", "replace-files"), ("xfs", "create-file"), ("btrfs", "direct-stream")] {
        let mut case = common::crafted_case(scenario, fs, 1, None);
        case["target"]["mount_opts"] = "sync,noatime,commit=60,data=journal".into();
        case["target"]["mkfs_args"] = serde_json::json!(["-b", "1024", "-E", "stride=16,stripe_width=64"]);
        cases.push(case);
    }
    let mut run = common::crafted_run("20261121T000000Z-1234567-0123abcd", true, cases);
    run["run"]["tags"] = serde_json::json!(["kernel-6.18-rc3-with-the-writeback-patch", "nightly"]);
    run["run"]["sysctls"] = serde_json::json!([["vm.dirty_background_ratio", "2"], ["vm.dirty_ratio", "5"]]);
    let record: fslab::record::RunRecord = serde_json::from_value(run["run"].clone()).unwrap();
    let store = dir.path().join("long.db");
    fslab::store::Store::open(store.to_str().unwrap()).unwrap().put_run(&record).unwrap();
    let runs = |wide: bool| {
        let mut args = vec!["runs", "--store", store.to_str().unwrap()];
        if wide {
            args.push("--wide");
        }
        String::from_utf8(common::fslab_expect(&args, 0).stdout).unwrap()
    };
    let text = runs(false);
    assert_fits(&text);
    let line = text.lines().nth(1).unwrap();
    assert!(line.starts_with("20261121T000000Z-1234567-0123abcd  "), "the id whole:\n{text}");
    assert!(line.contains('…') && text.contains("--wide"), "{text}");
    let wide = runs(true);
    let line = wide.lines().nth(1).unwrap();
    for whole in [
        "kernel-6.18-rc3-with-the-writeback-patch,nightly",
        "ext2,ext3,ext4,xfs,btrfs",
        "mmap-fill,tree-copy,replace-files,create-file,direct-stream",
        "-o sync,noatime,commit=60,data=journal",
        "vm.dirty_background_ratio=2",
    ] {
        assert!(line.contains(whole), "--wide shows {whole}:\n{wide}");
    }
    assert!(!wide.contains('…'), "{wide}");
}

/// The memory figures of a case run under a limit say their unit in their
/// headings (`peak MiB`, `cg dirty MiB`, `dirty peak MiB`), and no two of
/// `show --wide`'s columns share a heading.
#[test]
fn memory_headings_carry_their_unit() {
    if !root_or_skip("tables_memory_headings") {
        return;
    }
    let lab = Lab::new();
    let scratch = lab.scratch();
    let args = ["run", "mmap-fill", "--scratch", scratch.to_str().unwrap(), "--fs", "ext4", "--set", "size=16M", "--memory", "256M", "--tag", "mem"];
    let text = String::from_utf8(lab.expect(&args, 0).stdout).unwrap();
    assert_fits(&text);
    let (head, _) = table_rows(&text, "mmap-fill (seed 000)");
    let words: Vec<&str> = head.split("  ").map(str::trim).filter(|h| !h.is_empty()).collect();
    assert_unique(&words);
    assert!(words.contains(&"peak MiB"), "peak MiB in {words:?}");
    assert!(!words.iter().any(|w| ["mem peak", "dirty peak", "wb peak", "cg dirty", "cg wb"].contains(w)), "{words:?}");
    // `--wide`: a block of every figure, each size's unit said beside it.
    let wide = String::from_utf8(lab.expect(&["show", "mem", "--wide"], 0).stdout).unwrap();
    assert_fits(&wide);
    let lines: Vec<Vec<&str>> = wide.lines().filter_map(|l| l.strip_prefix("  ")).map(|l| l.split_whitespace().collect()).collect();
    for name in ["memory_peak_bytes", "memory_limit_bytes", "memory_dirty_bytes", "memory_writeback_bytes", "dirty_peak_bytes", "writeback_peak_bytes"] {
        let line = lines.iter().find(|l| l[0] == name).unwrap_or_else(|| panic!("no {name}:\n{wide}"));
        assert_eq!(line.last(), Some(&"MiB"), "{name}: {line:?}");
    }
    lab.assert_nothing_left("after the memory headings run");
}
