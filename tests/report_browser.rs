//! The HTML report in a real browser: two real runs (mmap-fill on ext4 and
//! xfs with two repeats; a short direct-stream on ext4) rendered into one
//! page with a comparison table, which headless Chromium then loads twice: once to dump the DOM it
//! built, checked for every chart and its numbers, and once to take a
//! screenshot, checked for not being blank. Both times its log must show
//! no console message (no script error, no SVG attribute error, no blocked
//! load) and no file loaded but the page itself. A second page, of two
//! replace-files runs the seeds preset judged (ext4 mounted `sync` in the
//! newer), is loaded for its verdict matrix and what differs.
//!
//! Needs root (loop devices) and `/usr/bin/chromium`. Without the browser
//! the test says so loudly and passes, unless `FSLAB_REQUIRE_BROWSER=1`
//! (CI sets it), where a missing browser fails it.
//! `FSLAB_REPORT_KEEP=DIR` copies the page and the screenshot there.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use std::time::Instant;

use common::browser::{Browser, assert_no_page_errors, browser};
use common::{Lab, root_or_skip};
use fslab::compare::{CompareOptions, Outcome, Side, compare};
use fslab::record::Figure;
use fslab::record::catalog::CHART_COMMON;
use fslab::record::{Case, RunRecord};

#[test]
fn the_report_renders_every_chart_in_a_browser_without_errors() {
    let Some(browser) = browser() else { return };
    if !root_or_skip("report_browser") {
        return;
    }
    let started = Instant::now();
    let lab = Lab::new();
    // Both runs go into the lab's store, tagged `page`, as a user's would.
    let mmap = run_record(&lab.run_json(
        &["mmap-fill", "--fs", "ext4,xfs", "--set", "size=64M", "--repeat", "2", "--tag", "page", "--tag", "mmap"],
        0,
    ));
    let stream =
        run_record(&lab.run_json(&["direct-stream", "--fs", "ext4", "--set", "seconds=3", "--tag", "page"], 0));
    lab.assert_nothing_left("after the two runs");
    assert_eq!(mmap.cases.len(), 4, "ext4 and xfs, two repeats each");
    assert_eq!(stream.cases.len(), 1);
    assert!(
        stream.cases[0].maps.iter().any(|m| m.extents > 1),
        "direct-stream's file is in more than one extent, so the page has a strip to check: {:?}",
        stream.cases[0].maps.iter().map(|m| (&m.path, m.extents)).collect::<Vec<_>>()
    );
    let runs = [mmap, stream];

    let dir = tempfile::Builder::new().prefix("fslab-report-").tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    // The page as `fslab report` writes it, with the comparison of both
    // runs against mmap-fill's alone: mmap-fill's figures each a row.
    let page_arg = page.to_str().unwrap();
    lab.expect(&["report", "page", "--compare", "mmap", "-o", page_arg], 0);
    let base = Side { label: "tag mmap", runs: &runs[..1] };
    let comparison = compare(base, Side { label: "tag page", runs: &runs }, &CompareOptions::default());
    assert!(!comparison.rows.is_empty());
    let url = format!("file://{}", page.display());

    // 1. The DOM as the browser built it.
    let dump = browser.run(dir.path(), "dump", &["--enable-logging=stderr", "--v=1", "--dump-dom", &url]);
    assert_no_page_errors(&dump.stderr, &url, true);
    let dom = dump.stdout;
    assert!(dom.contains("</html>"), "the DOM dump is whole: {} bytes", dom.len());
    let compared = elements(&dom, r#"<section class="compare""#, "</section>");
    assert_eq!(compared.len(), 1, "one comparison section");
    let body = compared[0].1;
    let rows = body.matches("<tr class=").count()
        - body.matches(r#"<tr class="only""#).count()
        - body.matches(r#"<tr class="not-shown""#).count();
    let eventful = comparison.rows.iter().filter(|r| {
        use Outcome::*;
        matches!(r.outcome, Regression | Improvement | LikelyRegression | Undecided | LikelyImprovement | Changed)
    });
    assert_eq!(rows, eventful.count(), "the compare fragment is in the page whole: a row per figure that moved");
    let quiet = comparison.rows.len() - rows;
    assert_eq!(body.matches(r#"<tr class="not-shown""#).count(), usize::from(quiet > 0), "the rest counted once");
    check_bars(&dom, &runs);
    check_strips(&dom, &runs);
    check_timelines(&dom, &runs);
    check_requests(&dom, &runs);
    check_matrix(&dom, &runs, None);
    check_differs_on_top(&dom, false);
    check_judged_page(&lab, &browser, dir.path());
    check_regressed_page(&lab, &browser, dir.path());

    // 2. What it looks like.
    let png = dir.path().join("report.png");
    let shot = browser.screenshot(dir.path(), &png, &url, (1280, 2000));
    assert_no_page_errors(&shot.stderr, &url, false);
    check_not_blank(&png);

    if let Some(keep) = std::env::var_os("FSLAB_REPORT_KEEP") {
        let keep = PathBuf::from(keep);
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&page, keep.join("report.html")).unwrap();
        std::fs::copy(&png, keep.join("report.png")).unwrap();
        std::fs::write(keep.join("report.dom.html"), &dom).unwrap();
    }
    check_side_by_side_and_numbers(&dom, &runs[..1], &runs);
    check_collapsed_strips_and_scatter(&dom, &runs);
    eprintln!("report_browser: {:.1} s", started.elapsed().as_secs_f64());
}

fn run_record(json: &serde_json::Value) -> RunRecord {
    assert_eq!(json["schema"], fslab::SCHEMA);
    serde_json::from_value(json["run"].clone()).unwrap_or_else(|e| panic!("run record does not read back: {e}"))
}

/// Start tags of `html` whose text contains `marker`, each with its
/// attributes and the text from its end up to the next `closing`.
fn elements<'a>(html: &'a str, marker: &str, closing: &str) -> Vec<(BTreeMap<String, String>, &'a str)> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(marker) {
        let open = rest[..at].rfind('<').expect("marker inside a tag");
        let tag_end = rest[at..].find('>').expect("tag ends") + at;
        let end = rest[tag_end..].find(closing).map_or(rest.len(), |e| tag_end + e);
        found.push((attributes(&rest[open..tag_end]), &rest[tag_end + 1..end]));
        rest = &rest[end..];
    }
    found
}

/// The `name="value"` attributes of one start tag (as a browser
/// serialises them: double quotes, entities for `"&<>`).
fn attributes(tag: &str) -> BTreeMap<String, String> {
    let mut attrs = BTreeMap::new();
    let mut rest = tag;
    while let Some(eq) = rest.find("=\"") {
        let name = rest[..eq].rsplit(|c: char| c.is_whitespace()).next().unwrap_or("").to_string();
        let value_end = rest[eq + 2..].find('"').expect("value closes") + eq + 2;
        let value = rest[eq + 2..value_end]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        attrs.insert(name, value);
        rest = &rest[value_end + 1..];
    }
    attrs
}

fn all_cases(runs: &[RunRecord]) -> impl Iterator<Item = &Case> {
    runs.iter().flat_map(|r| &r.cases)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// Whether `figure` is worth a chart over `cases`: some case measured it,
/// and not with one value on every bar (a constant, or a detector's 0).
fn worth_a_chart(cases: &[&Case], figure: &str) -> bool {
    let values: Vec<(&str, f64)> = cases.iter().filter_map(|c| Some((c.fs.as_str(), c.figures.get(figure)?.value?))).collect();
    let Some(&(_, first)) = values.first() else { return false };
    let bars = values.iter().map(|(fs, _)| *fs).collect::<std::collections::BTreeSet<_>>().len();
    !(values.iter().all(|(_, v)| *v == first) && (first == 0.0 || bars > 1))
}

/// A scenario's section charts the figures its seed printed first, in
/// their order (those worth a chart), and never perfection, which is a
/// tick on each extents bar at the median of the place's repeats. Every
/// chart has one bar or "missing" mark per target at the median of its
/// repeats, a missing figure marked with its reason; a figure of the
/// headline (or a common one) without a chart is said once: the same on
/// every bar, missing everywhere, or left out for room.
fn check_bars(dom: &str, runs: &[RunRecord]) {
    // The catalog `fslab report` itself hands the page.
    let catalog = fslab::harness::catalog();
    for name in ["mmap-fill", "direct-stream"] {
        let scenario = catalog.scenario(name).unwrap();
        let section = elements(dom, &format!(r#"<section class="scenario" id="scenario-{name}""#), "</section>");
        let charts = elements(section[0].1, r#"class="chart bars""#, "</svg>");
        let cases: Vec<&Case> = all_cases(runs).filter(|c| c.scenario == name).collect();
        let targets: Vec<&str> = cases.iter().map(|c| c.fs.as_str()).fold(Vec::new(), |mut v, fs| {
            if !v.contains(&fs) {
                v.push(fs);
            }
            v
        });
        let charted: Vec<&str> = charts.iter().map(|(a, _)| a["data-figure"].as_str()).collect();
        let printed: Vec<&str> = scenario.printed.iter().copied().filter(|f| worth_a_chart(&cases, f)).collect();
        assert!(!printed.is_empty(), "{name}: the runs measured some of its seed's figures");
        assert_eq!(charted[..printed.len()], printed[..], "{name}: the figures its seed printed are charted first");
        assert!(!charted.contains(&"perfection"), "{name}: perfection is a tick on extents, not a chart");
        let wanted = scenario.printed.iter().chain(scenario.headline).chain(CHART_COMMON).filter(|f| cases.iter().any(|c| c.figures.get(f).is_some()));
        for figure in wanted.filter(|f| **f != "perfection") {
            let Some((attrs, body)) = charts.iter().find(|(a, _)| a["data-figure"] == *figure) else {
                let said = |marker: &str| {
                    let found = elements(section[0].1, marker, "</p>");
                    found.iter().any(|(a, text)| {
                        let words = format!("{} {text}", a.get("data-same").map_or("", String::as_str));
                        words.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == *figure)
                    })
                };
                let room = said("data-not-charted=");
                let missing = elements(section[0].1, r#"<ul class="missing-list">"#, "</ul>").iter().any(|(_, list)| list.contains(figure));
                assert!(room || said("data-same=") || missing, "{name}: {figure} is neither charted nor said");
                assert!(room || !worth_a_chart(&cases, figure), "{name}: {figure} is worth a chart");
                continue;
            };
            assert!(attrs["viewBox"].starts_with("0 0 "), "{name} {figure}: {attrs:?}");
            let bars = elements(body, r#"class="bar""#, "</rect>");
            let missing = elements(body, r#"class="missing""#, "</g>");
            for fs in &targets {
                let here: Vec<&&Case> = cases.iter().filter(|c| c.fs == *fs).collect();
                let repeats: Vec<&Figure> = here.iter().filter_map(|c| c.figures.get(figure)).collect();
                let mut values: Vec<f64> = repeats.iter().filter_map(|f| f.value).collect();
                let bar: Vec<_> = bars.iter().filter(|(a, _)| a["data-fs"] == *fs).collect();
                let gap: Vec<_> = missing.iter().filter(|(a, _)| a["data-fs"] == *fs).collect();
                assert_eq!(bar.len() + gap.len(), 1, "{name} {figure} on {fs}: one bar or missing mark");
                if values.is_empty() {
                    assert_eq!(gap.len(), 1, "{name} {figure} on {fs}: missing, not a bar");
                    let reason = repeats.iter().find_map(|f| f.missing.clone()).unwrap_or_default();
                    assert!(gap[0].0["data-missing"].contains(&reason), "{name} {figure} on {fs}: {:?} vs {reason}", gap[0].0);
                } else {
                    let drawn: f64 = bar[0].0["data-value"].parse().unwrap();
                    let want = median(&mut values);
                    assert!((drawn - want).abs() <= 1e-9 * want.abs().max(1.0), "{name} {figure} on {fs}: {drawn} vs median {want}");
                    assert_eq!(bar[0].0["data-repeats"], here.len().to_string());
                    if *figure == "extents" {
                        let mut perfection: Vec<f64> = here.iter().filter_map(|c| c.figures.value("perfection")).collect();
                        let tick: f64 = bar[0].0["data-perfection"].parse().expect("a perfection tick on an extents bar");
                        assert_eq!(tick, median(&mut perfection), "{name} extents on {fs}: the tick at perfection");
                    }
                }
            }
        }
    }
}

/// Each target's first repeat that kept maps has a strip per map, its
/// extent count the map's; a map of one extent is listed instead.
fn check_strips(dom: &str, runs: &[RunRecord]) {
    let strips = elements(dom, r#"<figure class="strip""#, "</figure>");
    let mut expected = 0;
    let mut seen_targets: Vec<(&str, &str)> = Vec::new();
    for case in all_cases(runs).filter(|c| !c.maps.is_empty()) {
        if seen_targets.contains(&(case.scenario.as_str(), case.fs.as_str())) {
            continue;
        }
        seen_targets.push((&case.scenario, &case.fs));
        for map in &case.maps {
            expected += 1;
            // A file laid out as another drawn one is listed under it.
            let member = format!(r#"data-fs="{}" data-repeat="{}" data-path="{}" data-extents="{}""#, case.fs, case.repeat, map.path, map.extents);
            if strips.iter().any(|(a, body)| a["data-scenario"] == case.scenario && body.contains(&member)) {
                continue;
            }
            // A file in one extent is a plain bar: listed, not drawn (as
            // its layout's first file, which may be another place's).
            if map.extents <= 1 {
                let listed = elements(dom, r#"<li class="map""#, "</li>");
                let row = listed.iter().find(|(a, _)| a["data-path"] == map.path && a["data-extents"] == "1");
                assert!(row.is_some_and(|(_, text)| text.contains("in one extent")), "{} on {} {}: in one extent, listed", map.path, case.scenario, case.fs);
                continue;
            }
            let (attrs, body) = strips
                .iter()
                .find(|(a, _)| a["data-scenario"] == case.scenario && a["data-fs"] == case.fs && a["data-path"] == map.path)
                .unwrap_or_else(|| panic!("no strip of {} on {} {}", map.path, case.scenario, case.fs));
            assert_eq!(attrs["data-extents"], map.extents.to_string(), "{}", map.path);
            assert_eq!(attrs["data-repeat"], case.repeat.to_string());
            let svg = body.find("<svg").map(|at| &body[at..]).expect("the strip is inline SVG");
            let counted = format!(" · {} extent", map.extents);
            let scattered = format!(r#"data-extents="{}""#, map.extents);
            assert!(svg.contains(&counted) || svg.contains(&scattered), "the picture itself counts the map's extents");
        }
    }
    assert!(expected > 0, "some case kept a map");
    assert!(!strips.is_empty() && strips.len() <= expected, "at most one picture per map of each target's first repeat");
}

/// Each scenario with timelines has one chart per metric (and parameter
/// set), its cases overlaid: write rate and system CPU (the work's own,
/// sampled on every case now, rather than the machine's) at least; every
/// case with two points or more is a line in them, carrying its point
/// count; direct-stream's lines say what the drop detector found, and a
/// mark is drawn where it found one.
/// The block requests as the browser built them: per scenario the
/// modelled time beside the measured, and streams drawn at both clocks,
/// each one of a case's, with every request it kept counted.
fn check_requests(dom: &str, runs: &[RunRecord]) {
    let charts = elements(dom, r#"class="chart requests""#, "</svg>");
    for scenario in ["mmap-fill", "direct-stream"] {
        let traced: Vec<&Case> = all_cases(runs).filter(|c| c.scenario == scenario && !c.requests.is_empty()).collect();
        assert!(!traced.is_empty(), "{scenario}: its cases traced their requests");
        let beside = format!(r#"class="chart bars beside" data-scenario="{scenario}" data-figure="modelled_work_s""#);
        assert!(dom.contains(&beside), "{scenario}: no modelled time beside the measured");
        let mine: Vec<_> = charts.iter().filter(|(a, _)| a["data-scenario"] == scenario).collect();
        assert!(!mine.is_empty(), "{scenario}: no stream drawn");
        for (chart, body) in mine {
            let of_a_case = traced.iter().flat_map(|c| &c.requests).any(|s| {
                chart["data-phase"] == s.phase && chart["data-requests"] == s.requests.to_string() && chart["data-kept"] == s.points.len().to_string()
            });
            assert!(of_a_case, "{scenario}: a stream of no case: {chart:?}");
            assert!(body.contains(r#"data-clock="measured""#) && body.contains(r#"data-clock="modelled""#), "{scenario}: {chart:?}");
        }
    }
}

fn check_timelines(dom: &str, runs: &[RunRecord]) {
    let charts = elements(dom, r#"class="chart timeline""#, "</svg>");
    let drawn: Vec<&Case> = all_cases(runs).filter(|c| c.timeline.len() >= 2).collect();
    assert!(!drawn.is_empty(), "a 3 s stream has timeline points");
    for scenario in ["mmap-fill", "direct-stream"] {
        let mine: Vec<_> = charts.iter().filter(|(a, _)| a["data-scenario"] == scenario).collect();
        let mut keys: Vec<(&str, &str)> = mine.iter().map(|(a, _)| (a["data-params"].as_str(), a["data-metric"].as_str())).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), mine.len(), "{scenario}: one chart per metric and parameter set");
        let cases: Vec<&&Case> = drawn.iter().filter(|c| c.scenario == scenario).collect();
        if cases.is_empty() {
            continue;
        }
        for (chart, body) in &mine {
            for (line, _) in elements(body, r#"class="line""#, "</path>") {
                assert!(
                    cases.iter().any(|c| line["data-fs"] == c.fs
                        && line["data-repeat"] == c.repeat.to_string()
                        && line["data-points"] == c.timeline.len().to_string()),
                    "{scenario} {}: a line of no case: {line:?}",
                    chart["data-metric"]
                );
            }
        }
        for metric in ["write_mibps", "system_pct"] {
            for case in &cases {
                // The work's own system CPU where it was sampled, the
                // machine's only where not.
                let own = case.timeline.iter().any(|p| p.work_system_pct.is_some());
                let metric = if metric == "system_pct" && own { "work_system_pct" } else { metric };
                let (line, body) = mine
                    .iter()
                    .filter(|(a, _)| a["data-metric"] == metric)
                    .find_map(|(_, body)| {
                        let lines = elements(body, r#"class="line""#, "</path>");
                        let line = lines.into_iter().find(|(a, _)| {
                            a["data-fs"] == case.fs
                                && a["data-repeat"] == case.repeat.to_string()
                                && a["data-points"] == case.timeline.len().to_string()
                        })?;
                        Some((line.0, *body))
                    })
                    .unwrap_or_else(|| panic!("no {metric} line of {scenario} {} {}", case.fs, case.repeat));
                if scenario == "direct-stream" {
                    let detected = case.figures.get("drop_detected").expect("the detector's figure");
                    let word = match detected.value {
                        Some(v) if v >= 0.5 => "detected",
                        Some(_) => "none",
                        None => "undecided",
                    };
                    assert_eq!(line.get("data-drop").map(String::as_str), Some(word));
                    let mark = format!(r#"class="drop-marker" data-fs="{}" data-repeat="{}""#, case.fs, case.repeat);
                    assert_eq!(body.contains(&mark), word == "detected");
                }
            }
        }
    }
}

/// The page's first section is the verdict matrix; with no verdict it
/// says so in one line, else it has a cell per place of every verdict,
/// saying the place's word (and the base's, where the base judged it).
fn check_matrix(dom: &str, runs: &[RunRecord], base: Option<&[RunRecord]>) {
    let main = dom.split("<main>").nth(1).expect("the page has a <main>");
    let first = elements(main, "section class=", "</section>");
    let (attrs, body) = first.first().expect("a section");
    assert_eq!((attrs["class"].as_str(), attrs["id"].as_str()), ("matrix", "verdicts"), "the verdict matrix is the first section");
    let verdicts: Vec<_> = runs.iter().flat_map(|r| &r.verdicts).collect();
    if verdicts.is_empty() {
        assert!(body.contains("No seed was judged") && !body.contains("<table"), "{body}");
        return;
    }
    let seeds = elements(body, r#"<tbody class="seed""#, "</tbody>");
    assert_eq!(seeds.len(), verdicts.len(), "a row group per verdict");
    for verdict in verdicts {
        let (_, rows) = seeds
            .iter()
            .find(|(a, _)| a["data-scenario"] == verdict.scenario && a["data-seed"] == verdict.seed)
            .unwrap_or_else(|| panic!("no rows of seed {}", verdict.seed));
        let cells = elements(rows, "data-place=", "</td>");
        assert_eq!(cells.len(), verdict.places.len(), "seed {}: a cell per place", verdict.seed);
        for place in &verdict.places {
            let (cell, text) = cells.iter().find(|(a, _)| a["data-place"] == place.target).unwrap_or_else(|| panic!("no cell of {}", place.target));
            assert_eq!(cell["data-verdict"], place.word(), "seed {} at {}", verdict.seed, place.target);
            assert!(cell["class"].split(' ').any(|c| c == place.word()), "coloured by its word: {cell:?}");
            assert!(text.contains(&format!("#scenario-{}", verdict.scenario)), "linked to its section: {text}");
            let words = text.replace("<wbr>", "");
            if let Some(rule) = &place.rule {
                // The test that decided it, beside the threshold it needed.
                let shown = rule.shown.replace(" (shows at ", " (needs ").replace('&', "&amp;").replace('<', "&lt;");
                assert!(words.contains(&shown), "the deciding test {shown:?}: {text}");
            } else if let Some((value, against)) = whole_pair(place.value, place.against) {
                assert!(words.contains(&format!("{} {value} vs {against}", place.figure)), "the deciding figure: {text}");
            }
            let was = base.into_iter().flatten().flat_map(|r| &r.verdicts).filter(|v| v.seed == verdict.seed).flat_map(|v| &v.places);
            let was = was.filter(|p| p.fs == place.fs && p.conditions == place.conditions).map(|p| p.word()).next();
            assert_eq!(cell.get("data-base").map(String::as_str), was, "the base's word at {}", place.target);
        }
    }
}

/// Both values, when both are whole numbers small enough to print
/// without digit grouping (as the cell prints them).
fn whole_pair(value: Option<f64>, against: Option<f64>) -> Option<(f64, f64)> {
    let whole = |v: Option<f64>| v.filter(|v| v.fract() == 0.0 && v.abs() < 1e4);
    Some((whole(value)?, whole(against)?))
}

/// What differs between base and new is said right under the verdict
/// matrix, above the runs and every scenario, and only there; the
/// comparison's table stays at the end. `listed`: a setting differs, so
/// there is a list.
fn check_differs_on_top(dom: &str, listed: bool) {
    let at = |marker: &str| dom.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let differs = at(r#"<section class="differs" id="differs">"#);
    assert!(at(r#"<section class="matrix" id="verdicts">"#) < differs && differs < at(r#"<section class="runs""#));
    assert!(at(r#"<p class="differs">"#) < at(r#"<section class="scenario""#));
    assert_eq!(dom.matches(r#"<p class="differs">"#).count(), 1, "said once");
    assert_eq!(dom.matches(r#"<ul class="differs">"#).count(), usize::from(listed));
    if listed {
        assert!(at(r#"<ul class="differs">"#) < at(r#"<section class="scenario""#));
    }
    assert!(at(r#"<section class="compare" id="compare">"#) > at(r#"<section class="scenario""#), "the table at the end");
    assert!(!dom[at(r#"<section class="compare" id="compare">"#)..].contains("class=\"differs\""), "not again in the table");
}

/// Two replace-files runs the seeds preset judged (seconds each), the
/// newer with ext4 mounted `sync`, on a page of their own: its matrix
/// has their verdicts, with the base's word, and what differs names the
/// mount.
fn check_judged_page(lab: &Lab, browser: &Browser, dir: &Path) {
    let args = ["replace-files", "--preset", "seeds", "--fs", "ext4,btrfs", "--set", "files=20"];
    let (base, new, dom) = compared_page(lab, browser, dir, &args, &["--mount-opt", "ext4=sync"], "judged");
    assert!(!new.verdicts.is_empty() && new.verdicts[0].places.len() == 2, "{:?}", new.verdicts);
    check_matrix(&dom, std::slice::from_ref(&new), Some(std::slice::from_ref(&base)));
    check_differs_on_top(&dom, true);
    let (_, list) = &elements(&dom, r#"<ul class="differs">"#, "</ul>")[0];
    assert!(list.contains("ext4 mount:</b>") && list.contains("sync"), "{list}");
}

/// Two runs of `args`, tagged `TAG-base` and `TAG` (that one with
/// `changed` added), and the DOM of `report TAG --compare TAG-base`.
fn compared_page(lab: &Lab, browser: &Browser, dir: &Path, args: &[&str], changed: &[&str], tag: &str) -> (RunRecord, RunRecord, String) {
    let made = |extra: &[&str], tag: &str| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--tag", tag]);
        all.extend_from_slice(extra);
        run_record(&lab.run_json(&all, 0))
    };
    let base_tag = format!("{tag}-base");
    let base = made(&[], &base_tag);
    let new = made(changed, tag);
    lab.assert_nothing_left(&format!("after the {tag} runs"));
    let page = dir.join(format!("{tag}.html"));
    lab.expect(&["report", tag, "--compare", &base_tag, "-o", page.to_str().unwrap()], 0);
    let url = format!("file://{}", page.display());
    let dump = browser.run(dir, tag, &["--enable-logging=stderr", "--v=1", "--dump-dom", &url]);
    assert_no_page_errors(&dump.stderr, &url, true);
    (base, new, dump.stdout)
}

/// Every figure the comparison found worse is charted right under the
/// verdict matrix, whatever its section charts: a chart per scenario and
/// figure, the base's bar and the new one at each place where it got
/// worse. A real fallocate of 200 MiB is one extent on ext4 and two
/// without flex_bg, an exact figure: one run a side regresses it.
fn check_regressed_page(lab: &Lab, browser: &Browser, dir: &Path) {
    let args = ["create-file", "--fs", "ext4", "--set", "method=fallocate", "--set", "size=200M"];
    let (base, new, dom) = compared_page(lab, browser, dir, &args, &["--mkfs-opt", "ext4=-O ^flex_bg"], "grown");
    let dom = dom.as_str();
    let base_side = Side { label: "tag grown-base", runs: std::slice::from_ref(&base) };
    let comparison = compare(base_side, Side { label: "tag grown", runs: std::slice::from_ref(&new) }, &CompareOptions::default());
    let regressed: Vec<_> = comparison.rows.iter().filter(|r| matches!(r.outcome, Outcome::Regression | Outcome::LikelyRegression)).collect();
    assert!(regressed.iter().any(|r| r.figure == "extents"), "ext4 without flex_bg: {:?}", comparison.rows.iter().map(|r| (&r.figure, r.outcome)).collect::<Vec<_>>());
    let main = dom.split("<main>").nth(1).expect("the page has a <main>");
    let sections = elements(main, "section class=", "</section>");
    assert_eq!(sections.get(1).map(|(a, _)| a["id"].as_str()), Some("regressed"), "the regressed figures come right under the matrix");
    let cards = elements(sections[1].1, r#"<div class="card""#, "</svg>");
    for row in regressed {
        let (_, card) = cards
            .iter()
            .find(|(a, _)| a["data-scenario"] == row.scenario && a["data-figure"] == row.figure)
            .unwrap_or_else(|| panic!("no chart of regressed {}", row.label()));
        let marks: Vec<BTreeMap<String, String>> = elements(card, r#"class="bar"#, "</rect>")
            .into_iter()
            .chain(elements(card, r#"class="missing"#, "</g>"))
            .map(|(a, _)| a)
            .filter(|a| a["data-fs"] == row.fs)
            .collect();
        let sides: Vec<&str> = marks.iter().filter_map(|a| a.get("data-side").map(String::as_str)).collect();
        assert!(sides.contains(&"base") && sides.contains(&"new"), "{}: both sides drawn: {marks:?}", row.label());
    }
}

/// The screenshot shows a page: a fair share of pixels differ from the
/// commonest colour (the background), in many colours, and the first two
/// targets' bar colours are there.
fn check_not_blank(png: &Path) {
    let decoder = png::Decoder::new(std::io::BufReader::new(File::open(png).expect("the screenshot exists")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buffer).expect("a frame");
    let channels = info.color_type.samples();
    assert!(info.bit_depth == png::BitDepth::Eight && channels >= 3, "{info:?}");
    assert!(info.width >= 1000 && info.height >= 1500, "{}x{}", info.width, info.height);
    let pixels: Vec<[u8; 3]> =
        buffer[..info.buffer_size()].chunks_exact(channels).map(|p| [p[0], p[1], p[2]]).collect();
    let mut counts: BTreeMap<[u8; 3], usize> = BTreeMap::new();
    for p in &pixels {
        *counts.entry(*p).or_default() += 1;
    }
    let (background, most) = counts.iter().max_by_key(|(_, n)| **n).map(|(c, n)| (*c, *n)).unwrap();
    let share = 1.0 - most as f64 / pixels.len() as f64;
    assert!(share > 0.2, "only {:.1}% of the pixels differ from the background {background:?}", share * 100.0);
    let distinct = counts.len();
    assert!(distinct >= 50, "only {distinct} distinct colours");
    for (name, colour) in [("ext4's bar blue", [0x00, 0x72, 0xb2]), ("xfs's bar orange", [0xe6, 0x9f, 0x00])] {
        let n = counts.get(&colour).copied().unwrap_or(0);
        assert!(n > 500, "{name} {colour:?} covers {n} pixels");
    }
}

/// With `--compare`, each bar chart draws the base side's bar (class
/// `bar base`, `data-side="base"`) right before the new side's of the same
/// target, at the median of the base runs' repeats, under a legend naming
/// both; every chart says its scale (`log` exactly when its positive
/// values span more than 100×); and each scenario's numbers table has one
/// row per bar or missing mark with the bar's own numbers.
fn check_side_by_side_and_numbers(dom: &str, base: &[RunRecord], new: &[RunRecord]) {
    let number = |attrs: &BTreeMap<String, String>, name: &str| -> f64 {
        attrs[name].parse().unwrap_or_else(|e| panic!("{name}={:?}: {e}", attrs[name]))
    };
    for (attrs, body) in elements(dom, r#"class="chart bars""#, "</svg>") {
        let (scenario, figure) = (attrs["data-scenario"].as_str(), attrs["data-figure"].as_str());
        // Both sides' bars and missing marks, in drawing order.
        let marks: Vec<(BTreeMap<String, String>, &str)> =
            elements(body, r#"class="bar"#, "</rect>").into_iter().chain(elements(body, r#"class="missing"#, "</g>")).collect();
        for (a, _) in &marks {
            let side = a.get("data-side").map(String::as_str);
            assert!(matches!(side, Some("base" | "new")), "{scenario} {figure}: every mark says its side: {a:?}");
        }
        let has_base = marks.iter().any(|(a, _)| a.get("data-side").map(String::as_str) == Some("base"));
        let legend = body.contains(r#"<g class="legend">"#) && body.contains(">base: ") && body.contains(">new: ");
        assert_eq!(legend, has_base, "{scenario} {figure}: a legend exactly when there are base bars");

        // The scale: log exactly when positive values span more than 100x.
        let drawn: Vec<f64> = marks
            .iter()
            .filter(|(a, _)| a.contains_key("data-value"))
            .flat_map(|(a, _)| [number(a, "data-value"), number(a, "data-min"), number(a, "data-max")])
            .collect();
        let positive: Vec<f64> = drawn.iter().copied().filter(|v| *v > 0.0).collect();
        let span = positive.iter().copied().fold(0.0, f64::max) / positive.iter().copied().fold(f64::INFINITY, f64::min);
        let log = drawn.iter().all(|v| *v >= 0.0) && !positive.is_empty() && span > 100.0;
        assert_eq!(attrs["data-scale"], if log { "log" } else { "linear" }, "{scenario} {figure}: span {span}");
        if log {
            assert!(body.contains("log scale"), "{scenario} {figure}: the axis says log scale");
        }

        // The base side: one mark per target, at the base runs' median.
        let base_cases: Vec<&Case> = all_cases(base).filter(|c| c.scenario == scenario).collect();
        let base_marks: Vec<&BTreeMap<String, String>> =
            marks.iter().map(|(a, _)| a).filter(|a| a.get("data-side").map(String::as_str) == Some("base")).collect();
        let targets: std::collections::BTreeSet<&str> = base_cases.iter().map(|c| c.fs.as_str()).collect();
        assert_eq!(base_marks.len(), targets.len(), "{scenario} {figure}: one base mark per base target");
        for fs in targets {
            let mark = base_marks.iter().find(|a| a["data-fs"] == fs).unwrap_or_else(|| panic!("{scenario} {figure}: no base mark on {fs}"));
            let mut values: Vec<f64> =
                base_cases.iter().filter(|c| c.fs == fs).filter_map(|c| c.figures.get(figure)).filter_map(|f| f.value).collect();
            if values.is_empty() {
                assert!(mark.contains_key("data-missing"), "{scenario} {figure} on {fs}: the base is missing, not a bar");
                continue;
            }
            let (drawn, want) = (number(mark, "data-value"), median(&mut values));
            assert!((drawn - want).abs() <= 1e-9 * want.abs().max(1.0), "{scenario} {figure} base on {fs}: {drawn} vs median {want}");
            // Drawn right before the new side's bar of the same target.
            let at = |side: &str| {
                body.find(&format!(r#"data-fs="{fs}" data-params="{}" data-run="{}" data-side="{side}""#, mark["data-params"], mark["data-run"]))
            };
            if let (Some(b), Some(n)) = (at("base"), at("new")) {
                let between = &body[b..n];
                assert!(b < n && between.matches("data-side=").count() == 1, "{scenario} {figure} on {fs}: base right before new");
            }
        }
        // A run in both sides is drawn on both, at the same median.
        for (a, _) in marks.iter().filter(|(a, _)| a.get("data-side").map(String::as_str) == Some("base")) {
            let same_run_in_new = new.iter().any(|r| base.iter().any(|b| b.id == r.id));
            let twin = marks.iter().find(|(n, _)| n.get("data-side").map(String::as_str) == Some("new") && n["data-fs"] == a["data-fs"]);
            if let (true, Some((n, _))) = (same_run_in_new, twin) {
                assert_eq!(a.get("data-value"), n.get("data-value"), "{scenario} {figure} on {}: the run in both sides", a["data-fs"]);
            }
        }
    }

    // The numbers tables: a row per mark, its cells the mark's numbers
    // (median, min, max to six significant digits, then n and a note).
    let charts = elements(dom, r#"class="chart bars""#, "</svg>");
    let tables = elements(dom, r#"<table class="numbers""#, "</table>");
    assert!(!tables.is_empty(), "a numbers table");
    for (attrs, body) in tables {
        let scenario = attrs["data-scenario"].as_str();
        let mut rows = 0;
        for (chart, chart_body) in charts.iter().filter(|(a, _)| a["data-scenario"] == scenario) {
            let figure = chart["data-figure"].as_str();
            let (tbody, table_rows) = elements(body, &format!(r#"tbody data-figure="{figure}""#), "</tbody>")
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("{scenario}: no numbers of {figure}"));
            assert_eq!(tbody["data-unit"], chart["data-unit"], "{scenario} {figure}");
            let table_rows = elements(table_rows, "tr data-fs", "</tr>");
            let marks: Vec<BTreeMap<String, String>> = elements(chart_body, r#"class="bar"#, "</rect>")
                .into_iter()
                .chain(elements(chart_body, r#"class="missing"#, "</g>"))
                .map(|(a, _)| a)
                .collect();
            assert_eq!(table_rows.len(), marks.len(), "{scenario} {figure}: one numbers row per bar or missing mark");
            rows += table_rows.len();
            for mark in marks {
                let field = |a: &BTreeMap<String, String>, name: &str| a.get(name).cloned().unwrap_or_default();
                let key = |a: &BTreeMap<String, String>| [field(a, "data-fs"), field(a, "data-params"), field(a, "data-run"), field(a, "data-side")];
                let (_, row) = table_rows
                    .iter()
                    .find(|(r, _)| key(r) == key(&mark))
                    .unwrap_or_else(|| panic!("{scenario} {figure}: no numbers row for {mark:?}"));
                let cells: Vec<&str> = row.split("<td>").skip(1).map(|c| c.split("</td>").next().unwrap()).collect();
                let [median, min, max, n, _note] = cells[cells.len() - 5..] else { unreachable!() };
                match mark.get("data-value") {
                    Some(_) => {
                        for (cell, name) in [(median, "data-value"), (min, "data-min"), (max, "data-max")] {
                            let (shown, drawn): (f64, f64) = (cell.parse().unwrap(), number(&mark, name));
                            assert!((shown - drawn).abs() <= 5e-6 * drawn.abs(), "{scenario} {figure}: {name} {drawn}, cell {cell}");
                        }
                        assert_eq!(n, mark["data-measured"], "{scenario} {figure}: n");
                    }
                    None => assert_eq!([median, min, max, n], ["—", "—", "—", "0"], "{scenario} {figure}: missing"),
                }
            }
        }
        assert!(rows > 0, "{scenario}: numbers rows");
    }
}

/// Identical layouts drawn once: a figure's `data-files` counts the files
/// listed under it; a file of more than 64 extents is a bounded scatter
/// with its counts (only when the runs left one).
fn check_collapsed_strips_and_scatter(dom: &str, runs: &[RunRecord]) {
    for (attrs, body) in elements(dom, r#"<figure class="strip""#, "</figure>") {
        let files: usize = attrs["data-files"].parse().expect("data-files");
        let members = body.matches(r#"<li class="member""#).count();
        let listed = if files > 1 { files.min(60) } else { 0 };
        assert_eq!(members, listed, "{files} files: each listed under the picture");
        if files > 1 {
            assert!(body.contains(&format!("× {files}")), "the caption says × {files}");
        }
        assert!(body.contains("device "), "the caption says where on the device the file lies");
    }
    let many = all_cases(runs).flat_map(|c| &c.maps).any(|m| m.extents > 64);
    let scatters = elements(dom, r#"<svg class="scatter""#, "</svg>");
    if !many {
        assert!(scatters.is_empty());
        return;
    }
    for (attrs, body) in &scatters {
        let drawn: usize = attrs["data-drawn"].parse().expect("data-drawn");
        let records: usize = attrs["data-records"].parse().expect("data-records");
        assert!(drawn > 0 && drawn <= records);
        assert!(attrs["data-extents"].parse::<u64>().expect("data-extents") > 64);
        assert!(body.len() < 20 * 1024, "a scatter is bounded: {} bytes", body.len());
    }
}
