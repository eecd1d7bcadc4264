//! `fslab report`'s page: one or more runs as a single self-contained HTML5
//! file. A header says what the runs ran on; then, per scenario (in the
//! [`Catalog`]'s order, then `exec`), a bar chart per headline figure, the
//! extent maps the cases kept, and each case's timeline; last, the
//! comparison table when one is given.
//!
//! The one design decision: every chart carries its numbers in `data-`
//! attributes (a bar its median, min, max and repeats; a strip its path
//! and extent count; a timeline its point count), so the page is tested
//! as data, in a real browser, rather than by looking at pixels. It needs
//! nothing from outside: CSS inline, pictures as inline SVG, no script, no
//! font file, no image, no link off the page.
//!
//! This file writes the page around the sections and its header; `runs`
//! the runs and the machines they ran on; `section` one scenario's
//! section, with its bar charts from `figures` and its extent strips from
//! `maps`; `style.css` is the style sheet, inlined.

mod figures;
mod maps;
mod runs;
mod start;
mod section;
mod timelines;
mod verdicts;

use std::fmt::{self, Write as _};

use super::markup::escape_xml as escape;
use crate::record::{Catalog, RunRecord};

/// Extent-map strips drawn on one page at most: each is bounded (about
/// 100 KB at worst), and so must their number be.
const MAX_STRIPS: usize = 48;

/// What `fslab report --compare BASE` adds to the page: the base's runs,
/// so charts can draw base and new side by side, and the comparison's
/// HTML fragments (made by `compare::render`, embedded as they are).
pub struct Compared<'a> {
    /// The base side's label (`tag before`, a run id, ...).
    pub base_label: &'a str,
    /// The base side's runs.
    pub base_runs: &'a [RunRecord],
    /// The new side's label; its runs are the page's runs.
    pub new_label: &'a str,
    /// What differs between the sides and the notes said once: near the
    /// top of the page, under the verdicts.
    pub summary_html: String,
    /// The comparison table, in a section of its own.
    pub table_html: String,
}

/// The page for `runs`, titled `title`, with what `compared` adds when
/// given; `catalog` orders the scenarios and describes them and their
/// figures. UTF-8 bytes of a complete HTML5 document.
pub fn render(catalog: &Catalog, runs: &[RunRecord], title: &str, compared: Option<&Compared>) -> Vec<u8> {
    let mut page = String::with_capacity(256 * 1024);
    Page::new(catalog, runs, compared).write(&mut page, title).expect("fmt::Write for String never fails");
    page.into_bytes()
}

/// The page being written: the runs and what is shared across sections.
struct Page<'a> {
    catalog: &'a Catalog,
    runs: &'a [RunRecord],
    /// The base side and the comparison, with `--compare`.
    compared: Option<&'a Compared<'a>>,
    /// Target labels in order of first appearance: their bar colour.
    colours: Vec<&'a str>,
    /// Strips still allowed on the page.
    strips_left: usize,
}

impl<'a> Page<'a> {
    fn new(catalog: &'a Catalog, runs: &'a [RunRecord], compared: Option<&'a Compared<'a>>) -> Page<'a> {
        let mut colours: Vec<&str> = Vec::new();
        for case in runs.iter().flat_map(|r| &r.cases) {
            if !colours.contains(&case.fs.as_str()) {
                colours.push(&case.fs);
            }
        }
        Page { catalog, runs, compared, colours, strips_left: MAX_STRIPS }
    }

    fn write(mut self, out: &mut String, title: &str) -> fmt::Result {
        let compared = self.compared;
        let scenarios = scenario_order(self.catalog, self.runs);
        writeln!(out, "<!DOCTYPE html>")?;
        writeln!(out, r#"<html lang="en">"#)?;
        writeln!(out, "<head>")?;
        writeln!(out, r#"<meta charset="utf-8">"#)?;
        writeln!(out, r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#)?;
        writeln!(out, r#"<meta name="generator" content="fslab {}">"#, env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "<title>{}</title>", escape(title))?;
        writeln!(out, "<style>\n{}</style>", style())?;
        writeln!(out, "</head>")?;
        writeln!(out, "<body>")?;
        writeln!(out, r#"<header class="page"><h1>{}</h1>"#, escape(title))?;
        let cases: usize = self.runs.iter().map(|r| r.cases.len()).sum();
        writeln!(
            out,
            r#"<p class="sub">{} · {} · fslab {}</p>"#,
            plural(self.runs.len(), "run", "runs"),
            plural(cases, "case", "cases"),
            escape(env!("CARGO_PKG_VERSION"))
        )?;
        write_nav(out, &scenarios, compared.is_some())?;
        writeln!(out, "</header>")?;
        writeln!(out, "<main>")?;
        if self.runs.is_empty() {
            writeln!(out, r#"<p class="note">No runs to show.</p>"#)?;
        } else {
            runs::write_runs(out, self.runs)?;
        }
        for scenario in &scenarios {
            self.write_scenario(out, scenario)?;
        }
        if let Some(compared) = compared {
            writeln!(out, r#"<section class="compare" id="compare"><h2>Comparison</h2>"#)?;
            writeln!(out, "{}", compared.summary_html)?;
            writeln!(out, "{}", compared.table_html)?;
            writeln!(out, "</section>")?;
        }
        writeln!(out, "</main>")?;
        writeln!(out, "</body>")?;
        writeln!(out, "</html>")
    }
}

/// Scenario names with cases, in the catalog's order, then `exec`, then
/// any other name (a newer fslab's) alphabetically.
fn scenario_order(catalog: &Catalog, runs: &[RunRecord]) -> Vec<String> {
    let present: Vec<&str> = unique(runs.iter().flat_map(|r| r.cases.iter().map(|c| c.scenario.as_str())));
    let mut order: Vec<String> =
        catalog.scenarios.iter().map(|s| s.name).filter(|n| present.contains(n)).map(str::to_string).collect();
    if present.contains(&"exec") {
        order.push("exec".to_string());
    }
    let mut others: Vec<String> = present.iter().filter(|n| !order.iter().any(|o| o == *n)).map(|n| n.to_string()).collect();
    others.sort();
    order.extend(others);
    order
}

/// Items in order of first appearance, each once.
fn unique<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// The anchor of a scenario's section.
fn section_id(name: &str) -> String {
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("scenario-{safe}")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Links to the sections.
fn write_nav(out: &mut String, scenarios: &[String], compare: bool) -> fmt::Result {
    write!(out, r##"<nav><a href="#runs">runs</a>"##)?;
    for name in scenarios {
        write!(out, r##"<a href="#{}">{}</a>"##, section_id(name), escape(name))?;
    }
    if compare {
        write!(out, r##"<a href="#compare">comparison</a>"##)?;
    }
    writeln!(out, "</nav>")
}

/// The page's whole style sheet: system fonts only, nothing loaded.
const STYLE_SHEET: &str = include_str!("style.css");

/// The style sheet as the page carries it: without the file's opening
/// comment, which is for whoever edits the file, not for every page.
fn style() -> &'static str {
    STYLE_SHEET.strip_prefix("/*").and_then(|s| s.split_once("*/\n")).map_or(STYLE_SHEET, |(_, sheet)| sheet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Case, Environment, Extent, FigureSpec, KeptMap, Kind, ScenarioInfo, Status, TimelinePoint};

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
        // extents and wall_s are charted; journal_commits is in no case.
        assert!(html.contains(r#"data-figure="extents""#));
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
    fn everything_inserted_is_escaped() {
        let mut c = case("exec", "d<i>r&\"", 1, 1.0);
        c.error = Some("<script>alert(1)</script>".into());
        c.status = Status::Failed;
        c.maps.push(KeptMap {
            path: "a<b>&\"c\".dat".into(),
            size: 8192,
            block_size: 4096,
            device_bytes: 1 << 30,
            extents: 2,
            truncated: false,
            extent_list: vec![
                Extent { logical: 0, physical: 1 << 20, length: 4096, flags: 0 },
                Extent { logical: 4096, physical: 8 << 20, length: 4096, flags: 0 },
            ],
        });
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
}
