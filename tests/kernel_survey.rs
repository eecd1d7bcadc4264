//! A survey across kernels, end to end: a crafted run of replace-files
//! (ext4, two strategies) and mmap-fill (xfs) under three Debian kernels
//! (the oldest emulated) and the host's, two repeats each, whose figures
//! differ under one kernel.
//! `show` prints the table across kernels (kernels in version order, the
//! differing cells marked, within 120 columns, `--json` as stored);
//! `report` draws the "Across kernels" section (a chart per figure that
//! moves, the differing first, a line per unchanged one); headless
//! Chromium loads the page without a console message and its screenshot
//! shows the series' colours. Needs no root; without `/usr/bin/chromium`
//! the browser part says so loudly and passes, unless
//! `FSLAB_REQUIRE_BROWSER=1`. `FSLAB_REPORT_KEEP=DIR` copies the run, the page
//! and the screenshot there.

mod common;

use std::path::{Path, PathBuf};

use common::browser::{assert_no_page_errors, browser, colour_counts};
use serde_json::{Value, json};

/// The kernels, given out of version order: (release, Debian name or
/// none for the host).
const KERNELS: [(&str, Option<&str>); 4] = [
    ("6.18.44", None),
    ("6.12.57+deb12-amd64", Some("debian:6.12.57+deb12")),
    ("6.1.0-57-amd64", Some("debian:6.1.0-57")),
    ("6.1.0-47-amd64", Some("debian:6.1.0-47")),
];

/// In version order.
const IN_ORDER: [&str; 4] = ["6.1.0-47-amd64", "6.1.0-57-amd64", "6.12.57+deb12-amd64", "6.18.44"];

fn figure(value: f64, unit: &str, better: &str, kind: &str) -> Value {
    json!({"value": value, "unit": unit, "better": better, "kind": kind})
}

/// A case of `scenario` on `fs` under `kernel`, a guest unless the
/// host's (the oldest emulated, TCG; the others KVM), with `figures`.
fn case(scenario: &str, fs: &str, params: Value, (release, given): (&str, Option<&str>), repeat: u32, figures: Value) -> Value {
    let mut case = common::crafted_case(scenario, fs, repeat, None);
    case["params"] = params;
    case["figures"] = figures;
    case["conditions"] = json!({"kernel": release});
    if let Some(given) = given {
        let emulated = release == IN_ORDER[0];
        case["guest"] = json!({
            "kernel": given, "release": release, "accel": if emulated { "tcg" } else { "kvm" }, "emulated": emulated, "memory": "1G",
            "memory_bytes": 1u64 << 30, "cpus": 2, "wall_s": 31.5, "qemu": "QEMU emulator version 7.2.19"
        });
    }
    case
}

/// The crafted run: replace-files flushes half under 6.12.57 with
/// fsync-each (a kernel that merged them), mmap-fill's file in 17 extents
/// under 6.1.0-57 where the others make 1; journal commits and the early
/// allocation the same under every kernel; timings moving a little.
fn survey_run() -> String {
    let mut cases = Vec::new();
    for (k, kernel) in KERNELS.into_iter().enumerate() {
        let host = kernel.1.is_none();
        for strategy in ["fsync-each", "in-place"] {
            for repeat in 1..=2u32 {
                let flushes = if kernel.0.starts_with("6.12") && strategy == "fsync-each" { 21.0 } else { 42.0 };
                let wall = 0.21 + 0.01 * f64::from(repeat) + 0.004 * k as f64 + if host { 0.08 } else { 0.0 };
                let figures = json!({
                    "wall_s": figure(wall, "s", "lower", "timing"),
                    "user_s": figure(0.002, "s", "lower", "timing"),
                    "sys_s": figure(0.05 + 0.002 * f64::from(repeat), "s", "lower", "timing"),
                    "journal_commits": figure(21.0, "count", "lower", "exact"),
                    "flushes": figure(flushes, "count", "lower", "exact"),
                });
                cases.push(case("replace-files", "ext4", json!({"files": 20, "strategy": strategy}), kernel, repeat, figures));
            }
        }
        for repeat in 1..=2u32 {
            let extents = if kernel.0 == "6.1.0-57-amd64" { 17.0 } else { 1.0 };
            let rate = 880.0 - 40.0 * k as f64 + 9.0 * f64::from(repeat);
            let figures = json!({
                "extents": figure(extents, "count", "lower", "exact"),
                "perfection": figure(1.0, "count", "lower", "exact"),
                "early_allocated_bytes": figure(67108864.0, "bytes", "lower", "exact"),
                "touch_s": figure(0.31 + 0.02 * f64::from(repeat), "s", "lower", "timing"),
                "msync_s": figure(0.12 + 0.01 * k as f64, "s", "lower", "timing"),
                "cold_read_mbps": figure(rate, "MiB/s", "higher", "timing"),
            });
            cases.push(case("mmap-fill", "xfs", json!({"size": 67108864}), kernel, repeat, figures));
        }
    }
    common::crafted_run("20261121T000000Z-4242-00000042", true, cases).to_string()
}

/// A folder holding the crafted run's JSON, and its path.
fn stored() -> (tempfile::TempDir, PathBuf) {
    let dir = common::temp::dir("survey");
    let file = dir.path().join("survey.json");
    std::fs::write(&file, survey_run()).unwrap();
    (dir, file)
}

fn text(output: std::process::Output) -> String {
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[test]
fn show_tables_each_headline_figure_per_kernel_in_version_order() {
    let (_dir, file) = stored();
    let out = text(common::fslab(&["show", file.to_str().unwrap()]));
    for line in out.lines() {
        assert!(line.chars().count() <= 120, "{} columns: {line}\n{out}", line.chars().count());
    }
    let across = out.split("across kernels (version order)").nth(1).unwrap_or_else(|| panic!("no table across kernels:\n{out}"));
    assert!(
        across.starts_with(": the median under each kernel; * where its repeats lie apart from 6.1.0-47-amd64's"),
        "{across}"
    );
    let heading = across.lines().find(|l| l.trim_start().starts_with("place")).expect("a heading");
    let at: Vec<usize> = ["6.1.0-47-amd64", "6.1.0-57-amd64", "6.12.57+deb12-amd64", "6.18.44 (host)"]
        .iter()
        .map(|k| heading.find(k).unwrap_or_else(|| panic!("{k} in {heading}")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "kernels in version order: {heading}");
    // replace-files's first place: flushes halved under 6.12.57 alone.
    let replace = across.split("replace-files (seed 002):").nth(1).expect("replace-files").split("mmap-fill").next().unwrap();
    let flushes: Vec<&str> = replace.lines().filter(|l| l.contains("flushes")).collect();
    assert_eq!(flushes.len(), 2, "a row per place: {replace}");
    assert_eq!(
        flushes[0].split_whitespace().collect::<Vec<_>>(),
        ["ext4", "strategy=fsync-each", "flushes", "42", "42", "21*", "42"],
        "{replace}"
    );
    assert!(!flushes[1].contains('*'), "in-place flushes alike everywhere: {replace}");
    // The oldest kernel's guest was emulated: its timings marked, its
    // exact figures not; the mark said once under the tables.
    let wall = replace.lines().find(|l| l.contains("wall s")).expect("wall_s");
    assert_eq!(wall.split_whitespace().nth(2), Some("0.237†"), "{replace}");
    assert!(!flushes[0].contains('†') && out.contains("† emulated (TCG)"), "{out}");
    let commits = replace.lines().find(|l| l.contains("commits")).expect("journal commits");
    assert!(!commits.contains('*'), "{commits}");
    // mmap-fill: 17 extents under 6.1.0-57 alone; perfection is no row.
    let mmap = across.split("mmap-fill (seed 000):").nth(1).expect("mmap-fill");
    let extents = mmap.lines().find(|l| l.contains("extents")).expect("extents");
    assert_eq!(extents.split_whitespace().collect::<Vec<_>>(), ["xfs", "extents", "1", "17*", "1", "1"], "{mmap}");
    assert!(!mmap.contains("perfection"), "{mmap}");
    // --json is the stored document, with nothing added.
    let json = common::fslab_json(&["show", file.to_str().unwrap(), "--json"]);
    let stored: Value = serde_json::from_str(&survey_run()).unwrap();
    let record: fslab::record::RunRecord = serde_json::from_value(stored["run"].clone()).unwrap();
    assert_eq!(json["run"], serde_json::to_value(&record).unwrap(), "the run's document as any run's");
    assert!(!json.to_string().contains("across"));
}

/// The page for the crafted run, written by `fslab report`.
fn page(dir: &Path, file: &Path) -> PathBuf {
    let page = dir.join("survey.html");
    common::fslab(&["report", file.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    page
}

/// `(scenario, figure, change, kernels)` of each chart across kernels in
/// `html`, in order.
fn charts(html: &str) -> Vec<[String; 4]> {
    html.split(r#"<svg class="chart across""#)
        .skip(1)
        .map(|svg| {
            let attr = |name: &str| {
                svg.split(&format!(r#" {name}=""#)).nth(1).and_then(|v| v.split('"').next()).unwrap_or("").to_string()
            };
            [attr("data-scenario"), attr("data-figure"), attr("data-change"), attr("data-kernels")]
        })
        .collect()
}

#[test]
fn report_draws_a_chart_per_figure_that_moves_across_kernels() {
    let (dir, file) = stored();
    let html = std::fs::read_to_string(page(dir.path(), &file)).unwrap();
    let section = html
        .split(r#"<section class="across" id="kernels" data-kernels="4">"#)
        .nth(1)
        .expect("the section")
        .split("</section>")
        .next()
        .unwrap();
    assert!(html.contains(r##"<a href="#kernels">across kernels</a>"##));
    assert!(
        section.contains(
            "4 kernels, in version order: 6.1.0-47-amd64, 6.1.0-57-amd64, 6.12.57+deb12-amd64, 6.18.44 (host). \
             Debian's packaged kernels (<code>--kernel debian:NAME</code>): 3."
        ),
        "{section}"
    );
    let charts = charts(section);
    let order = IN_ORDER.join(" ");
    assert!(charts.iter().all(|c| c[3] == order), "every chart's kernels in version order: {charts:?}");
    let said: Vec<(&str, &str, &str)> = charts.iter().map(|c| (c[0].as_str(), c[1].as_str(), c[2].as_str())).collect();
    assert_eq!(
        said,
        [
            ("mmap-fill", "extents", "differs"),
            ("mmap-fill", "msync_s", "differs"),
            ("mmap-fill", "cold_read_mbps", "differs"),
            ("mmap-fill", "touch_s", "within"),
            ("replace-files", "flushes", "differs"),
            ("replace-files", "wall_s", "differs"),
            ("replace-files", "sys_s", "within"),
        ],
        "a chart per figure that moves, those that differ first, in the headline's order"
    );
    for (figure, value) in
        [("early_allocated_bytes", "64 MiB on xfs"), ("journal_commits", "21 on every place"), ("user_s", "2 ms on every place")]
    {
        let line = format!(r#"data-same="{figure}"><b>{figure}</b> is the same under every kernel: {value}.</p>"#);
        assert!(section.contains(&line), "{line}\n{section}");
    }
    assert!(
        !section.contains(r#"data-figure="perfection""#) && !section.contains(r#"data-same="perfection""#),
        "a mark, not a figure"
    );
    // The flushes chart: a dot per repeat, a median per place and kernel,
    // the host's band.
    let flushes = section.split(r#"data-figure="flushes""#).nth(1).unwrap().split("</svg>").next().unwrap();
    assert_eq!(flushes.matches("<circle class=\"repeat\"").count(), 16, "2 places × 4 kernels × 2 repeats");
    assert_eq!(flushes.matches("<path class=\"median-mark\"").count(), 8);
    assert!(
        flushes.contains(r#"data-series="ext4 strategy=fsync-each" data-release="6.12.57+deb12-amd64" data-value="21""#),
        "{flushes}"
    );
    assert!(flushes.contains(r#"data-release="6.18.44" data-host="true""#) && flushes.matches(r#"class="host""#).count() == 1);
    let wall = section.split(r#"data-figure="wall_s""#).nth(1).unwrap().split("</svg>").next().unwrap();
    assert_eq!(
        wall.matches(r#"<circle class="repeat emulated" data-series="ext4 strategy=fsync-each" data-release="6.1.0-47-amd64""#)
            .count(),
        2,
        "{wall}"
    );
    assert_eq!(wall.matches("<circle class=\"repeat emulated\"").count(), 4, "the emulated guest's timings hollow");
    assert!(section.contains("Hollow dots: emulated (TCG): timings measure the emulator"), "{section}");
    assert!(html.find(r#"id="kernels""#) < html.find(r#"id="runs""#), "the survey before the runs and the scenarios");
}

#[test]
fn the_survey_renders_in_a_browser_without_errors() {
    let Some(browser) = browser() else { return };
    let (dir, file) = stored();
    let page = page(dir.path(), &file);
    let url = format!("file://{}", page.display());
    let dump = browser.run(dir.path(), "dump", &["--enable-logging=stderr", "--v=1", "--dump-dom", &url]);
    assert_no_page_errors(&dump.stderr, &url, true);
    let dom = dump.stdout;
    assert_eq!(charts(&dom).len(), 7, "every chart in the DOM the browser built");
    assert_eq!(dom.matches(r#"<g class="kernel" data-release="#).count(), 7 * 4);

    // Looked at as a reader would, in a window the width of a laptop's
    // and tall enough for the verdicts and the survey under them.
    let png = dir.path().join("survey.png");
    let shot = browser.screenshot(dir.path(), &png, &url, (1280, 2400));
    assert_no_page_errors(&shot.stderr, &url, false);
    let counts = colour_counts(&png);
    for (name, colour) in [("the first place's blue", [0x00, 0x72, 0xb2]), ("the second place's orange", [0xe6, 0x9f, 0x00])] {
        let n = counts.get(&colour).copied().unwrap_or(0);
        assert!(n > 300, "{name} {colour:?} covers {n} pixels");
    }
    let band = counts.get(&[0xee, 0xf1, 0xf5]).copied().unwrap_or(0);
    assert!(band > 10_000, "the host's band covers {band} pixels");
    eprintln!("kernel_survey: screenshot {}", png.display());
    if let Some(keep) = std::env::var_os("FSLAB_REPORT_KEEP") {
        let keep = PathBuf::from(keep);
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&page, keep.join("survey.html")).unwrap();
        std::fs::copy(&png, keep.join("survey.png")).unwrap();
        std::fs::copy(&file, keep.join("survey.json")).unwrap();
    }
}
