//! The page's tests: hand-made runs and a catalog written out here, so
//! they do not depend on the scenario registry the report must not read.

use super::*;
use crate::record::{
    Better, Case, Environment, Extent, FigureSpec, KeptMap, Kind, PlaceVerdict, ScenarioInfo, Status, TimelinePoint, Verdict,
};

fn environment() -> Environment {
    serde_json::from_value(serde_json::json!({
        "fslab_version": "0.1.0", "kernel": "6.18.0", "machine": "x86_64", "cpu": "Test CPU", "cpus": 2,
        "memory_bytes": 1u64 << 34, "tools": {"mke2fs": "mke2fs 1.47.0"}, "disk": null
    }))
    .expect("environment")
}

fn run(cases: Vec<Case>) -> RunRecord {
    RunRecord {
        id: "20260101T000000Z-1-00000000".to_string(),
        tag: Some("base".to_string()),
        tags: vec!["base".to_string()],
        started_at: "2026-01-01T00:00:00Z".to_string(),
        command: vec!["fslab".into(), "run".into()],
        complete: true,
        environment: environment(),
        sysctls: Vec::new(),
        cases,
        verdicts: Vec::new(),
        plan: None,
    }
}

fn case(scenario: &str, fs: &str, repeat: u32, wall_s: f64) -> Case {
    let mut params = serde_json::Map::new();
    params.insert("size".into(), serde_json::json!(16u64 << 20));
    let mut c = Case::new(scenario, fs, params, repeat);
    c.figures.set("wall_s", wall_s, "s", Better::Lower, Kind::Timing);
    c.figures.set("extents", 1.0, "count", Better::Lower, Kind::Exact);
    c
}

/// A catalog of three scenarios, written out here so the page's tests
/// do not depend on the scenario registry the report must not read.
fn catalog() -> Catalog {
    let info = |name, seed, headline| ScenarioInfo {
        name,
        seed: Some(seed),
        about: "what it shows",
        params: vec!["size"],
        headline,
        printed: &[],
        figures: &[],
    };
    Catalog {
        scenarios: vec![
            info("mmap-fill", "000", &["touch_s", "msync_s"]),
            info("replace-files", "002", &["wall_s", "user_s", "sys_s", "journal_commits", "flushes"]),
            info("direct-stream", "004", &["stream_mbps", "sys_s", "drop_detected"]),
        ],
        figures: vec![FigureSpec::new("touch_s", "s", Better::Lower, Kind::Timing).about("seconds of the stores")],
    }
}

fn page(runs: &[RunRecord], compare: Option<&str>) -> String {
    let compared = compare.map(|table| Compared {
        base_label: "base",
        base_runs: &[],
        new_label: "new",
        summary_html: String::new(),
        table_html: table.to_string(),
        regressed: Vec::new(),
    });
    String::from_utf8(render(&catalog(), runs, "fslab report", compared.as_ref())).expect("UTF-8")
}

/// Values of attribute `name` on elements whose tag has `marker`.
fn attrs<'a>(html: &'a str, marker: &str, name: &str) -> Vec<&'a str> {
    html.split('<')
        .filter(|tag| tag.contains(marker))
        .filter_map(|tag| tag.split(&format!(r#" {name}=""#)).nth(1)?.split('"').next())
        .collect()
}

/// The `<svg class="chart bars" ...>` element of `figure`, up to its end.
fn chart<'a>(html: &'a str, scenario: &str, figure: &str) -> &'a str {
    let start = html
        .find(&format!(r#"class="chart bars" data-scenario="{scenario}" data-figure="{figure}""#))
        .unwrap_or_else(|| panic!("no chart of {figure}"));
    let end = html[start..].find("</svg>").expect("chart ends") + start;
    &html[start..end]
}

/// Tags nest and close: `<svg>`, and the page's own block elements.
fn assert_balanced(html: &str) {
    for tag in ["svg", "section", "figure", "div", "g", "ul", "dl", "p", "text", "title", "main", "header", "nav"] {
        let opened = html.matches(&format!("<{tag} ")).count() + html.matches(&format!("<{tag}>")).count();
        let closed = html.matches(&format!("</{tag}>")).count();
        assert_eq!(opened, closed, "<{tag}> opened {opened} times, closed {closed}");
    }
    let mut depth = 0i32;
    for (i, _) in html.match_indices("svg") {
        if html[..i].ends_with('<') {
            depth += 1;
            assert!(depth == 1, "an <svg> inside an <svg>");
        } else if html[..i].ends_with("</") {
            depth -= 1;
            assert!(depth == 0);
        }
    }
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(html.trim_end().ends_with("</html>"));
}

/// A place of a verdict: `target` is `fs@memory` when `memory` is given.
fn place(fs: &str, memory: Option<&str>, shows: Option<bool>, value: Option<f64>, against: Option<f64>, evidence: &str) -> PlaceVerdict {
    let mut conditions = std::collections::BTreeMap::new();
    if let Some(m) = memory {
        conditions.insert("memory".to_string(), m.to_string());
    }
    PlaceVerdict {
        target: memory.map_or_else(|| fs.to_string(), |m| format!("{fs}@{m}")),
        fs: fs.into(),
        conditions,
        shows,
        figure: "extents".into(),
        value,
        against,
        evidence: evidence.into(),
        ..Default::default()
    }
}

/// A run as `--preset seeds` leaves it: mmap-fill judged on ext4 and
/// xfs under two conditions, replace-files on ext4 and btrfs.
fn judged_run() -> RunRecord {
    let mut r = run(vec![case("mmap-fill", "ext4", 1, 1.0), case("replace-files", "ext4", 1, 1.0)]);
    let mmap = Verdict {
        shows: Some(true),
        places: vec![
            place("ext4", None, Some(false), Some(1.0), Some(1.0), "1 extent"),
            place("xfs", None, Some(false), Some(2.0), Some(1.0), "2 extents"),
            place("ext4", Some("120M"), Some(false), Some(3.0), Some(1.0), "3 extents"),
            place("xfs", Some("120M"), Some(true), Some(23_706.0), Some(1.0), "23,706 extents where 1 would do"),
        ],
        ..Verdict::unknown("mmap-fill", "000", "")
    };
    let mut replace = Verdict {
        shows: Some(true),
        places: vec![
            place("ext4", None, Some(true), Some(21.0), Some(2.0), "21 journal commits with fsync-each, 2 with writeback-batch"),
            place("btrfs", None, None, None, None, "no journal commits counted for both strategies, as btrfs has no journal <here>"),
        ],
        ..Verdict::unknown("replace-files", "002", "")
    };
    replace.places[0].figure = "journal_commits".into();
    r.verdicts = vec![mmap, replace];
    r
}

/// The `<td class="v ...">` cell of `place` in the row of `seed`.
fn cell<'a>(html: &'a str, seed: &str, place: &str) -> &'a str {
    let body = html.split(&format!(r#"data-seed="{seed}">"#)).nth(1).expect("the seed's rows").split("</tbody>").next().unwrap();
    let start = body.find(&format!(r#"data-place="{place}""#)).unwrap_or_else(|| panic!("no cell of {place} for {seed}"));
    let open = body[..start].rfind("<td").unwrap();
    &body[open..open + body[open..].find("</td>").unwrap()]
}

#[test]
fn the_verdict_matrix_opens_the_page_with_a_cell_per_place() {
    let html = page(&[judged_run()], None);
    assert_balanced(&html);
    let main = html.split("<main>").nth(1).unwrap();
    assert!(main.trim_start().starts_with(r#"<section class="matrix" id="verdicts">"#), "the matrix comes first: {}", &main[..200]);
    assert!(main.find("id=\"verdicts\"") < main.find("id=\"runs\""));
    assert!(html.contains(r##"<nav><a href="#verdicts">verdicts</a><a href="#runs">"##));
    assert!(html.contains("2 seeds judged: 2 still show</span>"), "counts, zeros left out");
    // Columns are the targets, in order; rows the seeds' conditions.
    let head = html.split(r#"<table class="matrix"><thead>"#).nth(1).unwrap().split("</thead>").next().unwrap();
    assert_eq!(attrs(head, "th class=\"target\"", "class").len(), 3, "{head}");
    assert!(head.contains(r#"<th class="target">ext4</th><th class="target">xfs</th><th class="target">btrfs</th>"#), "{head}");
    let mmap = html.split(r#"data-seed="000">"#).nth(1).unwrap().split("</tbody>").next().unwrap();
    assert_eq!(attrs(mmap, "tr data-conditions", "data-conditions"), ["", "memory=120M"], "one row per set of conditions");
    assert!(mmap.contains(r#"rowspan="2""#) && mmap.contains("machine's own") && mmap.contains("memory <b>120M</b>"), "{mmap}");
    assert_eq!(mmap.matches(r#"<td class="v none"></td>"#).count(), 2, "btrfs ran no mmap-fill: empty cells");
    // Each cell: the place's word, its figure, its evidence, a link.
    let xfs = cell(&html, "000", "xfs@120M");
    assert!(xfs.starts_with(r#"<td class="v shows" data-place="xfs@120M" data-verdict="shows" title="xfs@120M: 23,706 extents where 1 would do">"#), "{xfs}");
    assert!(xfs.contains(r##"<a href="#scenario-mmap-fill"><b>shows</b><span class="fig">extents 23,706 vs 1</span>"##), "{xfs}");
    assert!(cell(&html, "000", "ext4").contains(r#"data-verdict="gone""#));
    assert!(cell(&html, "002", "ext4").contains("journal_<wbr>commits 21 vs 2"), "long names break at underscores");
    let btrfs = cell(&html, "002", "btrfs");
    assert!(btrfs.contains(r#"data-verdict="unknown""#) && btrfs.contains("&lt;here&gt;") && !btrfs.contains("<here>"), "{btrfs}");
    assert!(btrfs.contains(r#"<span class="fig">no journal commits counted for both strategies, as btrfs has no…</span>"#), "cut at a word: {btrfs}");
    // Every verdict the run stored is a cell, saying what it said.
    let r = judged_run();
    for v in &r.verdicts {
        for p in &v.places {
            assert!(cell(&html, &v.seed, &p.target).contains(&format!(r#"data-verdict="{}""#, p.word())), "{} {}", v.seed, p.target);
        }
    }
    assert!(html.contains(r#"<p class="legend">"#) && !html.contains("gone → shows"), "the base's legend only with a base");
    assert!(html.contains(r#"<div class="verdict shows""#), "the sections keep their verdicts' details");
}

#[test]
fn a_page_without_verdicts_says_in_one_line_that_no_seed_was_judged() {
    let html = page(&[run(vec![case("exec", "ext4", 1, 1.0)])], None);
    assert_balanced(&html);
    let matrix = html.split(r#"<section class="matrix" id="verdicts">"#).nth(1).unwrap().split("</section>").next().unwrap();
    assert!(matrix.trim().starts_with(r#"<p class="no-verdicts">No seed was judged"#), "{matrix}");
    assert!(!matrix.contains("<table"), "{matrix}");
    assert!(page(&[], None).contains("No seed was judged"));
}

#[test]
fn a_hunt_reads_as_a_row_per_step_and_old_verdicts_as_their_sentence() {
    let mut hunt = run(vec![case("mmap-fill", "xfs", 1, 1.0)]);
    hunt.command = vec!["fslab".into(), "hunt".into(), "mmap-fill".into()];
    hunt.verdicts = vec![Verdict {
        shows: Some(true),
        places: vec![
            place("xfs", Some("1G"), Some(false), Some(1.0), None, "1 extent"),
            place("xfs", Some("215M"), Some(true), Some(65_536.0), None, "65,536 extents"),
            place("xfs", Some("215M"), Some(true), Some(65_536.0), None, "again, as a later step"),
        ],
        ..Verdict::unknown("mmap-fill", "000", "a bracket")
    }];
    let mut old = run(vec![case("replace-files", "ext4", 1, 1.0)]);
    old.id = "old".into();
    old.verdicts = vec![Verdict { shows: Some(false), ..Verdict::unknown("replace-files", "002", "gone everywhere") }];
    let html = page(&[hunt, old], None);
    assert_balanced(&html);
    let rows = html.split(r#"data-seed="000">"#).nth(1).unwrap().split("</tbody>").next().unwrap();
    assert_eq!(rows.matches("<tr data-conditions").count(), 3, "a row per step, even at a value seen before: {rows}");
    assert!(rows.contains(r#"<span class="step">step 2</span> memory <b>215M</b>"#), "{rows}");
    let at = |step: &str| rows.find(&format!(r#"<span class="step">step {step}</span>"#)).unwrap();
    assert!(at("2") < at("3") && at("3") < at("1"), "in the order of the value varied: 215M, 215M, 1G");
    assert!(rows.contains(r#"rowspan="4""#) && rows.contains(r#"<tr class="hunt-summary"><td colspan="2"><b>hunt</b> a bracket</td></tr>"#), "{rows}");
    assert!(rows.contains(r#"<span class="fig">65,536 extents</span>"#), "nothing to weigh against: the evidence: {rows}");
    assert!(rows.contains(r#"<span class="run">run base</span>"#), "several runs judged: each row names its run");
    let old = html.split(r#"data-seed="002">"#).nth(1).unwrap().split("</tbody>").next().unwrap();
    assert!(old.contains(r#"<td class="v gone" colspan="1" data-verdict="gone">"#) && old.contains("gone everywhere"), "{old}");
}

#[test]
fn with_a_base_cells_say_its_verdict_and_what_differs_comes_under_the_matrix() {
    let mut base = judged_run();
    base.verdicts[0].places[3].shows = Some(false);
    base.verdicts[0].places.remove(0);
    let compared = Compared {
        base_label: "tag before",
        base_runs: std::slice::from_ref(&base),
        new_label: "tag after",
        summary_html: r#"<p class="differs"><b>What differs</b> (tag before → tag after):</p><ul class="differs"><li><b>kernel:</b> 6.1 → 6.18</li></ul>"#.into(),
        table_html: "<table class=\"compare\"></table>".into(),
        regressed: Vec::new(),
    };
    let html = String::from_utf8(render(&catalog(), &[judged_run()], "t", Some(&compared))).unwrap();
    assert_balanced(&html);
    let xfs = cell(&html, "000", "xfs@120M");
    assert!(xfs.contains(r#"class="v shows changed""#) && xfs.contains(r#"data-base="gone""#), "{xfs}");
    assert!(xfs.contains(r#"<b><span class="was">gone</span> → shows</b>"#), "{xfs}");
    let same = cell(&html, "002", "ext4");
    assert!(same.contains(r#"data-base="shows""#) && same.contains("<b>shows</b>") && !same.contains("→"), "alike: said by data-base alone: {same}");
    assert!(!cell(&html, "000", "ext4").contains("data-base"), "a place the base did not judge says nothing of it");
    assert!(html.contains("tag before's verdict → this one's"));
    let at = |marker: &str| html.find(marker).unwrap_or_else(|| panic!("{marker}"));
    assert!(at(r#"id="verdicts""#) < at(r#"id="differs""#) && at(r#"id="differs""#) < at(r#"id="runs""#));
    assert!(at(r#"<ul class="differs">"#) < at(r#"<section class="scenario""#));
    assert_eq!(html.matches(r#"<ul class="differs">"#).count(), 1, "said once, at the top");
    assert!(at(r#"<section class="compare" id="compare">"#) > at(r#"<section class="scenario""#));
    assert!(html.contains(r##"<a href="#differs">what differs</a>"##));
}

/// The map of an 8 KiB file `path` in two 4 KiB blocks 7 MiB apart.
fn two_block_map(path: &str) -> KeptMap {
    KeptMap {
        path: path.into(),
        size: 8192,
        block_size: 4096,
        device_bytes: 1 << 30,
        extents: 2,
        truncated: false,
        extent_list: vec![
            Extent { logical: 0, physical: 1 << 20, length: 4096, flags: 0 },
            Extent { logical: 4096, physical: 8 << 20, length: 4096, flags: 0 },
        ],
    }
}

#[test]
fn past_its_size_guard_the_page_lists_maps_instead_of_drawing_them() {
    let with_map = |scenario: &str| {
        let mut c = case(scenario, "ext4", 1, 1.0);
        c.maps.push(two_block_map("f"));
        c
    };
    let drawn = |html: &str, scenario: &str| {
        let section = html.split(&format!(r#"id="scenario-{scenario}""#)).nth(1).unwrap().split("</section>").next().unwrap();
        (section.contains(r#"<figure class="strip""#), section.contains("budget is spent"))
    };
    let small = page(&[run(vec![with_map("mmap-fill"), with_map("direct-stream")])], None);
    assert_eq!((drawn(&small, "mmap-fill"), drawn(&small, "direct-stream")), ((true, false), (true, false)));
    // A first section past the guard: the next one lists its map.
    let mut big = with_map("mmap-fill");
    big.status = Status::Failed;
    big.error = Some("x".repeat(PICTURES_UNTIL));
    let html = page(&[run(vec![big, with_map("direct-stream")])], None);
    assert_balanced(&html);
    assert_eq!(drawn(&html, "mmap-fill"), (true, false), "sections before the guard keep their maps");
    assert_eq!(drawn(&html, "direct-stream"), (false, true), "listed, not drawn");
}

#[test]
fn two_targets_of_three_repeats_chart_medians_and_ranges() {
    let cases = vec![
        case("mmap-fill", "ext4", 1, 0.3),
        case("mmap-fill", "ext4", 2, 0.1),
        case("mmap-fill", "ext4", 3, 0.2),
        case("mmap-fill", "xfs", 1, 5.0),
        case("mmap-fill", "xfs", 2, 7.0),
        case("mmap-fill", "xfs", 3, 6.0),
    ];
    let html = page(&[run(cases)], None);
    assert_balanced(&html);
    let wall = chart(&html, "mmap-fill", "wall_s");
    assert_eq!(attrs(wall, r#"class="bar""#, "data-fs"), ["ext4", "xfs"]);
    assert_eq!(attrs(wall, r#"class="bar""#, "data-value"), ["0.2", "6"]);
    assert_eq!(attrs(wall, r#"class="bar""#, "data-min"), ["0.1", "5"]);
    assert_eq!(attrs(wall, r#"class="bar""#, "data-max"), ["0.3", "7"]);
    assert_eq!(wall.matches(r#"class="whisker""#).count(), 2);
    assert!(html.contains("parameters: size=16 MiB"), "one parameter set is said once, not on every bar");
    assert!(html.contains(r#"id="scenario-mmap-fill""#));
    assert!(html.contains("seed 000"));
    // wall_s is charted; extents, 1 in every case, is said in a line;
    // journal_commits is in no case.
    assert!(!html.contains(r#"data-figure="extents""#) && html.contains("so not charted: extents 1."));
    assert!(!html.contains(r#"data-figure="journal_commits""#));
}

#[test]
fn aged_targets_get_one_starting_state_row_per_cache_entry() {
    let start = |hit| crate::record::StartRecord {
        age: Some("churn:fill=80%".into()),
        fill: None,
        cache_key: "d95a7fceb5a8".repeat(5),
        image_hash: "00".repeat(32),
        cache_hit: hit,
        aging_seconds: if hit { 0.0 } else { 11.1 },
        notes: Vec::new(),
        free_histogram: Vec::new(),
        waited_seconds: 0.0,
        image: 0,
    };
    let mut cases = vec![case("create-file", "xfs", 1, 1.0), case("create-file", "xfs", 2, 1.0)];
    for (n, c) in cases.iter_mut().enumerate() {
        c.start = Some(start(n > 0));
        c.figures.set("start_fill", 0.8, "ratio", Better::Lower, Kind::Exact);
        c.figures.set("start_free_extents", 142.0, "count", Better::Lower, Kind::Exact);
    }
    let html = page(&[run(cases)], None);
    assert_balanced(&html);
    assert_eq!(html.matches("<h3>Starting state</h3>").count(), 1);
    let table = html.split(r#"<table class="start">"#).nth(1).unwrap().split("</table>").next().unwrap();
    // One row for the two cases of one entry: the first, which made it.
    assert_eq!(table.matches("<tr>").count(), 2, "{table}");
    assert!(table.contains("aged churn:fill=80%; image d95a7fceb5a8 made in 11.1 s"), "{table}");
    assert!(table.contains("<td>80.0%</td>") && table.contains("<td>142</td>"), "{table}");
    // No start: no section.
    assert!(!page(&[run(vec![case("create-file", "xfs", 1, 1.0)])], None).contains("Starting state"));
}

#[test]
fn missing_figures_say_missing_with_their_reason() {
    let mut ext4 = case("replace-files", "ext4", 1, 1.0);
    ext4.figures.set("journal_commits", 12.0, "count", Better::Lower, Kind::Exact);
    let mut dir = case("replace-files", "dir", 1, 1.0);
    dir.figures.set_missing("journal_commits", "count", Better::Lower, Kind::Exact, "tracepoints need root");
    let mut failed = Case::new("replace-files", "btrfs", dir.params.clone(), 1);
    failed.status = Status::Failed;
    failed.error = Some("mkfs.btrfs: not found".into());
    let html = page(&[run(vec![ext4, dir, failed])], None);
    assert_balanced(&html);
    let commits = chart(&html, "replace-files", "journal_commits");
    assert_eq!(attrs(commits, r#"class="bar""#, "data-fs"), ["ext4"]);
    assert_eq!(attrs(commits, r#"class="missing""#, "data-fs"), ["dir", "btrfs"]);
    assert_eq!(
        attrs(commits, r#"class="missing""#, "data-missing"),
        ["tracepoints need root", "the case failed: mkfs.btrfs: not found"]
    );
    assert!(commits.contains("<title>dir: missing: tracepoints need root</title>"), "{commits}");
    assert!(html.contains(r#"<li class="failed" data-fs="btrfs""#));
    assert!(html.contains("<li><b>journal_commits</b> missing on dir: tracepoints need root</li>"), "in words too");
    assert!(html.contains("<li><b>wall_s, journal_commits, extents</b> missing on btrfs: the case failed: mkfs.btrfs: not found</li>"));
}

#[test]
fn a_section_of_many_places_charts_its_first_figures_and_names_the_rest_once() {
    // Each place its own values (extents 1 everywhere).
    let placed = |i: usize| {
        let mut c = case("replace-files", &format!("fs{i}"), 1, 1.0 + i as f64);
        for name in ["user_s", "sys_s", "journal_commits", "flushes"] {
            c.figures.set(name, 2.0 + i as f64, "count", Better::Lower, Kind::Exact);
        }
        c
    };
    let charts = |html: &str| html.matches(r#"<svg class="chart bars""#).count();
    // 5 places x 5 figures: 25 bars, all drawn; extents 1 on every bar.
    let html = page(&[run((0..5).map(placed).collect())], None);
    assert_eq!(charts(&html), 5, "every figure that differs charted");
    assert!(!html.contains("data-not-charted"));
    assert!(html.contains(r#"<p class="note" data-same="extents">The same on every bar, so not charted: extents 1.</p>"#), "{html}");
    // 50 places: past 80 bars, the first two charts; the rest named once.
    let many: Vec<Case> = (0..50).map(placed).collect();
    let html = page(&[run(many.clone())], None);
    assert_eq!(charts(&html), 2, "two charts of 50 bars: the least a section draws");
    assert_eq!(html.matches("data-not-charted").count(), 1, "the rest named once");
    assert!(html.contains("Not charted, for room (50 bars a chart): sys_s, journal_commits, flushes"), "{html}");
    assert!(html.contains(r#"data-figure="wall_s""#) && html.contains(r#"data-figure="user_s""#), "the headline's first figures");
    // A verdict that weighed flushes: that figure is charted first.
    let mut judged = run(many);
    let mut verdict = Verdict::unknown("replace-files", "002", "");
    verdict.places.push(PlaceVerdict { figure: "flushes".into(), ..place("fs0", None, Some(true), Some(2.0), None, "") });
    judged.verdicts.push(verdict);
    let html = page(&[judged], None);
    let charted: Vec<&str> = attrs(&html, r#"svg class="chart bars""#, "data-figure");
    assert_eq!(charted, ["flushes", "wall_s"], "the weighed figure, then the headline's first");
}

#[test]
fn busy_cases_are_named_once_under_the_runs() {
    let mut busy = case("mmap-fill", "xfs", 2, 1.0);
    busy.busy = Some("others used 1.2 cores".to_string());
    let html = page(&[run(vec![case("mmap-fill", "ext4", 1, 1.0), busy])], None);
    assert_eq!(html.matches(r#"<p class="note busy">"#).count(), 1, "{html}");
    assert!(html.contains("1 of 2 cases ran while other processes"), "{html}");
    assert!(html.contains("xfs r2 — timings there are less reliable."), "{html}");
    let quiet = page(&[run(vec![case("mmap-fill", "ext4", 1, 1.0)])], None);
    assert!(!quiet.contains("note busy"), "a quiet run gets no busy note");
}

#[test]
fn emulated_timings_are_hatched_marked_in_the_matrix_and_noted_once() {
    // mmap-fill on the host and in a TCG guest: the guest's wall-time
    // bar is hatched and marked, its extents bar is not, the note is
    // said once under the runs, and a verdict decided by the guest's
    // wall time carries the mark where one decided by extents does not.
    let mut guest = case("mmap-fill", "ext4", 1, 9.0);
    guest.conditions.insert("kernel".into(), "6.1.0-56-amd64".into());
    guest.guest = Some(crate::record::guest::tests::guest(true));
    let mut judged = run(vec![case("mmap-fill", "ext4", 1, 1.0), guest.clone()]);
    let mut verdict = Verdict::unknown("mmap-fill", "000", "");
    verdict.places.push(PlaceVerdict { figure: "wall_s".into(), target: guest.place(), ..place("ext4", None, Some(true), Some(9.0), Some(1.0), "") });
    verdict.places.push(place("ext4", None, Some(false), Some(1.0), Some(1.0), ""));
    judged.verdicts.push(verdict);
    let html = page(&[judged], None);
    assert_eq!(html.matches(r#"<p class="note emulated">"#).count(), 1, "{html}");
    assert!(html.contains("† emulated (TCG): timings measure the emulator; exact figures carry over"), "{html}");
    assert_eq!(html.matches(r#"class="bar emulated""#).count(), 1, "only the guest's wall-time bar: {html}");
    assert!(html.contains("wall_<wbr>s 9 vs 1†</span>") && html.contains("extents 1 vs 1</span>"), "{html}");
    let host = page(&[run(vec![case("mmap-fill", "ext4", 1, 1.0)])], None);
    assert!(!host.contains("emulated") && !host.contains('†'), "a host run is not marked");
}

#[test]
fn everything_inserted_is_escaped() {
    let mut c = case("exec", "d<i>r&\"", 1, 1.0);
    c.error = Some("<script>alert(1)</script>".into());
    c.status = Status::Failed;
    c.maps.push(two_block_map("a<b>&\"c\".dat"));
    let mut r = run(vec![c]);
    r.tags = vec!["<tag>&".into()];
    let html = page(&[r], Some("<table><tr><td>kept as is</td></tr></table>"));
    assert_balanced(&html);
    assert!(!html.contains("<script"), "nothing inserted becomes markup");
    assert!(!html.contains("a<b>") && !html.contains("<i>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains(r#"data-path="a&lt;b&gt;&amp;&quot;c&quot;.dat""#));
    assert!(html.contains("&lt;tag&gt;&amp;"));
    assert!(html.contains(r#"data-fs="d&lt;i&gt;r&amp;&quot;""#));
    let title = page(&[], None);
    assert!(title.contains("<title>fslab report</title>"));
    assert!(String::from_utf8(render(&catalog(), &[], "a<b", None)).unwrap().contains("<title>a&lt;b</title>"));
    assert!(html.contains("<table><tr><td>kept as is</td></tr></table>"), "the compare fragment is embedded as it is");
}

#[test]
fn the_page_names_no_url_and_loads_nothing() {
    let mut c = case("direct-stream", "ext4", 1, 3.0);
    c.maps.push(KeptMap {
        path: "stream".into(),
        size: 3 << 20,
        block_size: 4096,
        device_bytes: 1 << 30,
        extents: 2,
        truncated: false,
        extent_list: vec![
            Extent { logical: 0, physical: 1 << 20, length: 1 << 20, flags: 0 },
            // Contiguous with the first: the same extent.
            Extent { logical: 1 << 20, physical: 2 << 20, length: 1 << 20, flags: 0 },
            Extent { logical: 2 << 20, physical: 64 << 20, length: 1 << 20, flags: 0 },
        ],
    });
    c.timeline = (1..=3)
        .map(|i| TimelinePoint {
            t_s: f64::from(i),
            read_bytes_per_s: Some(0.0),
            write_bytes_per_s: Some(5e8),
            user_pct: 1.0,
            system_pct: 20.0,
            iowait_pct: 3.0,
            idle_pct: 76.0,
            dirty_bytes: 0,
            writeback_bytes: 0,
            ..Default::default()
        })
        .collect();
    c.figures.set_missing("drop_detected", "count", Better::Lower, Kind::Timing, "too short");
    let html = page(&[run(vec![c])], None);
    assert_balanced(&html);
    assert!(!html.contains("http://") && !html.contains("https://"), "no URL at all");
    for attr in ["src=", "<link", "<script", "@import"] {
        assert!(!html.contains(attr), "{attr}");
    }
    assert!(html.match_indices("url(").all(|(i, _)| html[i..].starts_with("url(#")), "only references inside the page");
    assert!(html.contains("<style>\n:root {") && !html.contains("/*"), "style.css's opening comment stays in the file");
    // The strip: inlined without prolog or namespace, numbers on its figure.
    assert!(html.contains(r#"<figure class="strip" data-scenario="direct-stream" data-fs="ext4" data-repeat="1" data-path="stream" data-extents="2" data-records="3""#));
    assert!(html.contains("<svg width=\"1080\""), "the strip's root tag, namespace removed");
    assert!(html.contains("3 records · 2 extents"), "the strip counted extents by filefrag's rule");
    assert!(!html.contains("<?xml"));
    // The timeline.
    assert!(html.contains(r#"class="chart timeline" data-scenario="direct-stream" data-params="" data-metric="write_mibps""#));
    assert!(html.contains(r#"class="line" data-fs="ext4" data-repeat="1" data-points="3""#));
    assert!(html.contains(r#"data-drop="undecided""#));
}

#[test]
fn scenarios_come_in_seed_order_then_exec_and_runs_are_told_apart() {
    let first = run(vec![case("exec", "ext4", 1, 1.0), case("direct-stream", "ext4", 1, 1.0), case("mmap-fill", "ext4", 1, 1.0)]);
    let mut second = run(vec![case("mmap-fill", "ext4", 1, 2.0)]);
    second.id = "second".into();
    second.tags = vec!["tuned".into()];
    let html = page(&[first, second], None);
    assert_balanced(&html);
    let at = |s: &str| html.find(&format!(r#"<section class="scenario" id="scenario-{s}""#)).unwrap_or_else(|| panic!("{s}"));
    assert!(at("mmap-fill") < at("direct-stream") && at("direct-stream") < at("exec"));
    let wall = chart(&html, "mmap-fill", "wall_s");
    assert_eq!(attrs(wall, r#"class="bar""#, "data-run"), ["base", "tuned"], "one bar per run");
    assert_eq!(html.matches(r#"<tr class="run""#).count(), 2);
    assert_eq!(html.matches("<dl class=\"env\">").count(), 1, "one machine, described once");
}

#[test]
fn the_catalog_orders_names_and_describes() {
    let mut mmap = case("mmap-fill", "ext4", 1, 1.0);
    mmap.figures.set("touch_s", 0.5, "s", Better::Lower, Kind::Timing);
    let cases = vec![case("newer", "ext4", 1, 1.0), mmap, case("replace-files", "ext4", 1, 1.0)];
    let html = page(&[run(cases.clone())], None);
    assert!(chart(&html, "mmap-fill", "touch_s").contains("<title>touch_s: seconds of the stores</title>"));
    assert!(html.contains(r#"<h2>newer</h2>"#), "a scenario the catalog lacks has no seed");
    assert_eq!(html.matches(r#"<p class="about">what it shows</p>"#).count(), 2, "nor a description");
    let mut unseeded = catalog();
    unseeded.scenarios[1].seed = None;
    let html = String::from_utf8(render(&unseeded, &[run(cases)], "t", None)).expect("UTF-8");
    assert!(html.contains("<h2>replace-files</h2>\n<p class=\"about\">what it shows</p>"), "described, with no seed");
    let at = |s: &str| html.find(&format!(r#"<section class="scenario" id="scenario-{s}""#)).unwrap_or_else(|| panic!("{s}"));
    assert!(at("mmap-fill") < at("replace-files") && at("replace-files") < at("newer"), "catalog order, then others");
}

#[test]
fn varying_parameters_label_the_bars() {
    let mut a = case("mmap-fill", "ext4", 1, 1.0);
    a.params.insert("order".into(), "seed".into());
    let mut b = case("mmap-fill", "ext4", 1, 2.0);
    b.params.insert("order".into(), "sequential".into());
    let html = page(&[run(vec![a, b])], None);
    let wall = chart(&html, "mmap-fill", "wall_s");
    assert_eq!(attrs(wall, r#"class="bar""#, "data-params"), ["order=seed", "order=sequential"]);
    assert!(html.contains("varied: order"));
}

mod choice;
mod crash;
mod requests;

#[test]
fn runs_on_one_machine_share_its_description_and_another_machine_gets_its_own() {
    let named = |id: &str, kernel: &str| {
        let mut r = run(vec![case("mmap-fill", "xfs", 1, 1.0)]);
        r.id = id.to_string();
        r.environment.kernel = kernel.to_string();
        r
    };
    let page = |runs: &[RunRecord]| String::from_utf8(render(&catalog(), runs, "t", None)).unwrap();
    let same = page(&[named("a", "6.18.0"), named("b", "6.18.0")]);
    assert_eq!(same.matches("<h3>Machine").count(), 1, "one machine, said once");
    assert!(same.contains("<h3>Machine</h3>"));
    let two = page(&[named("a", "6.18.0"), named("b", "6.1.0"), named("c", "6.18.0")]);
    assert_eq!(two.matches("<h3>Machine").count(), 2, "two machines");
    assert!(two.contains("<h3>Machine of runs <code>a</code>, <code>c</code></h3>"), "{two}");
    assert!(two.contains("<h3>Machine of run <code>b</code></h3>"), "{two}");
}
