//! `fslab history` end to end: twelve stored runs of one `exec` command
//! that writes one more file from the 7th run on (an exact figure) and
//! sleeps 2.5 times as long from the 10th (its wall time; the command is the
//! same every night, the script it runs is what the test changes): the
//! history names run
//! 7 for the files and run 10 for the time, each once, and nothing else;
//! each run is tagged with its "commit", so the window is named and the
//! bisect that would find it is printed.

mod common;

use common::Lab;

/// The command of run `n` (1-based): 40 files, 41 from run 7; a sleep of
/// 0.4 s, 1 s from run 10 -- a step a loaded machine's noise cannot hide
/// (beside two other suites and a preset, 0.4 s read 0.43 to 0.90 s, and a
/// 30% step was rightly "can't tell").
fn script(n: u32) -> String {
    let files = if n >= 7 { 41 } else { 40 };
    let sleep = if n >= 10 { "1" } else { "0.4" };
    format!("i=0; while [ $i -lt {files} ]; do echo x > f$i; i=$((i+1)); done; sleep {sleep}")
}

#[test]
fn twelve_runs_name_run_7_for_the_files_and_run_10_for_the_time_each_once() {
    if !common::root_or_skip("history over stored exec runs") {
        return;
    }
    let lab = Lab::new();
    // The same command every night; the program it runs is what changes.
    let program = lab.dir.path().join("prog.sh");
    let program = program.to_str().unwrap();
    for n in 1..=12 {
        std::fs::write(program, script(n)).unwrap();
        let commit = format!("commit:c{n:02}");
        let out = lab.exec(&[
            "--fs",
            "ext4",
            "--size",
            "64M",
            "--progress",
            "none",
            "--tag",
            "nightly",
            "--tag",
            &commit,
            "--",
            "sh",
            program,
        ]);
        assert!(out.status.success(), "run {n}: {}", String::from_utf8_lossy(&out.stderr));
    }
    // Every figure: the exact ones (the file count, its bytes) change at
    // run 7 or not at all, and the machine's load average or disk, which
    // moved with the machine, is not judged. Timing figures other than the
    // wall time may move with the machine too (beside another suite the
    // work's own write rate rose at run 4: the flusher began writing the
    // files during the work), so only wall_s is held to its run below.
    let out = lab.expect(&["history", "nightly", "--json"], 0);
    let every: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(every["history"]["host_wide_left_out"].as_u64().unwrap() > 0, "{every:#}");
    for s in every["history"]["series"].as_array().unwrap() {
        let figure = s["figure"].as_str().unwrap();
        assert!(!figure.starts_with("host_") && !figure.starts_with("backing_"), "{figure} judged");
        for c in s["changes"].as_array().unwrap() {
            let (run, exact) = (c["index"].as_u64().unwrap() + 1, s["kind"] == "exact");
            assert!(!exact || run == 7, "{figure} changed at run {run}: {s:#}");
        }
    }
    let out = lab.expect(&["history", "nightly", "--figure", "files,wall_s", "--json"], 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let series = json["history"]["series"].as_array().unwrap();
    assert_eq!(series.len(), 2, "{json:#}");
    let of = |figure: &str| series.iter().find(|s| s["figure"] == figure).unwrap_or_else(|| panic!("{figure}: {json:#}"));
    let (files, wall) = (of("files"), of("wall_s"));
    let changes = |s: &serde_json::Value| -> Vec<u64> {
        s["changes"].as_array().unwrap().iter().map(|c| c["index"].as_u64().unwrap() + 1).collect()
    };
    assert_eq!(changes(files), [7], "{files:#}");
    assert_eq!(changes(wall), [10], "{wall:#}");
    assert_eq!(files["kind"], "exact");
    let step = &wall["changes"][0];
    let relative = step["relative"].as_f64().unwrap();
    // 1.5 alone; less when load adds to every run's time.
    assert!((0.7..1.7).contains(&relative), "{step:#}");
    assert_eq!(step["worse"], true);
    // The window: the commit tags either side, and the bisect over them.
    assert!(step["differs"].as_array().unwrap().iter().any(|d| d == "commit: c09 → c10"), "{step:#}");
    let bisect = step["bisect"].as_str().unwrap();
    assert!(bisect.starts_with("fslab bisect --repo DIR --good c09 --bad c10 --build CMD --figure wall_s"), "{bisect}");
    assert!(bisect.contains("--fs ext4") && bisect.ends_with(&format!("-- sh {program}")), "{bisect}");

    // For people: the changes first, a line each; a gate fails on them.
    let text = String::from_utf8(lab.expect(&["history", "nightly", "--figure", "files,wall_s"], 0).stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with("  changed  exec on ext4 files: at run 7"), "{text}");
    assert!(text.contains("exec on ext4 wall_s: at run 10"), "{text}");
    assert!(lines.iter().all(|l| l.chars().count() <= 120 || l.contains("bisect it:")), "{text}");
    lab.expect(&["history", "nightly", "--figure", "files,wall_s", "--gate"], 1);

    // The page draws both series with their changes marked.
    let page = lab.dir.path().join("history.html");
    lab.expect(&["history", "nightly", "--figure", "files,wall_s", "--report", page.to_str().unwrap()], 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("data-change-run=\"7\"") && html.contains("data-change-run=\"10\""), "{html}");
    // `report --history` draws the same series among every figure's, and a
    // browser reads it without a console message or another file.
    let page = lab.dir.path().join("report-history.html");
    lab.expect(&["report", "--history", "nightly", "-o", page.to_str().unwrap()], 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("data-change-run=\"7\"") && html.contains("data-change-run=\"10\""), "{html}");
    lab.expect(&["report", "--history", "nightly", "--compare", "nightly", "-o", page.to_str().unwrap()], 2);
    if let Some(browser) = common::browser::browser() {
        let url = format!("file://{}", page.display());
        let dump = browser.run(lab.dir.path(), "history", &["--enable-logging=stderr", "--v=1", "--dump-dom", &url]);
        common::browser::assert_no_page_errors(&dump.stderr, &url, true);
        assert!(dump.stdout.contains("data-change-run=\"10\""), "{}", dump.stdout);
    }

    // Too few runs, and a figure no case has, are said.
    lab.expect(&["history", "nightly", "--since", "2999-01-01"], 2);
    lab.expect(&["history", "nightly", "--figure", "no_such_figure"], 2);
    lab.assert_nothing_left("after a history");
}

#[test]
fn two_hundred_replace_files_runs_in_postgresql_name_the_night_they_slowed() {
    if !common::root_or_skip("history over a PostgreSQL store") {
        return;
    }
    let Some(db) = common::TestDatabase::new("history_postgres") else { return };
    let lab = Lab::new();
    // One real run of the seed's replace-files (small), stored 200 times
    // as a night's run each, its times wobbling by up to 1%, 12% slower
    // from the 151st night.
    let json = lab.run_json(&["replace-files", "--fs", "ext4", "--size", "128M", "--no-store", "--progress", "none"], 0);
    let run: fslab::record::RunRecord = serde_json::from_value(json["run"].clone()).unwrap();
    let mut store = fslab::store::Store::open(&db.url).unwrap();
    for night in fslab::history::series::nights(&run, 200, "nightly", 150, 1.12) {
        store.put_run(&night).unwrap();
    }
    drop(store);
    // How fast it answers is bench/history-postgres.sh's to measure.
    let out = lab.expect(&["history", "nightly", "--store", &db.url, "--json"], 0);
    let history: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(history["history"]["runs"].as_array().unwrap().len(), 200);
    let wall = history["history"]["series"].as_array().unwrap().iter().find(|s| s["figure"] == "wall_s").unwrap();
    let at: Vec<u64> = wall["changes"].as_array().unwrap().iter().map(|c| c["index"].as_u64().unwrap() + 1).collect();
    assert_eq!(at, [151], "{wall:#}");
    // Its noise judged with the correlation of the machine's timings.
    let pooled = &wall["noise"]["pooled"];
    assert!(pooled["series"].as_u64().is_some_and(|k| k >= 5), "{wall:#}");
    assert!(pooled["rho"].as_f64().unwrap() <= pooled["median"].as_f64().unwrap(), "{pooled}");
    lab.assert_nothing_left("after a history over PostgreSQL");
}
