//! Which figures a section charts, and the regressed ones under the matrix.

use super::*;
use crate::report::html::Regressed;

/// mmap-fill as the registry declares it: the headline the table shows,
/// and the figures seed 000's author printed.
fn seeded_catalog() -> Catalog {
    let mut catalog = catalog();
    catalog.scenarios[0] = ScenarioInfo {
        name: "mmap-fill",
        seed: Some("000"),
        about: "what it shows",
        params: vec!["size", "prealloc"],
        headline: &["extents", "perfection", "early_allocated_bytes", "touch_s", "msync_s", "total_mbps"],
        printed: &["extents", "touch_s", "msync_s"],
        figures: &[],
    };
    catalog.scenarios[2].headline = &["stream_mbps", "bytes_written", "drop_detected", "drop_at_s"];
    catalog
}

/// An mmap-fill case as the preset leaves it: its own timings, extents
/// over perfection (2 on ext2's 8 MiB windows, 1 elsewhere).
fn mmap(fs: &str, i: usize, prealloc: &str) -> Case {
    let mut c = case("mmap-fill", fs, 1, 1.0 + i as f64);
    c.params.insert("prealloc".into(), prealloc.into());
    let set = |c: &mut Case, name: &str, value: f64, unit: &'static str| c.figures.set(name, value, unit, Better::Lower, Kind::Timing);
    set(&mut c, "touch_s", 0.1 * (1 + i) as f64, "s");
    set(&mut c, "msync_s", 0.01 * (1 + i) as f64, "s");
    set(&mut c, "total_mbps", 100.0 + i as f64, "MiB/s");
    set(&mut c, "early_allocated_bytes", (i << 20) as f64, "bytes");
    let perfection = if fs.starts_with("ext2") { 2.0 } else { 1.0 };
    c.figures.set("perfection", perfection, "count", Better::Lower, Kind::Exact);
    c.figures.set("extents", perfection * (1 + i % 7) as f64, "count", Better::Lower, Kind::Exact);
    c
}

fn render_with(catalog: &Catalog, runs: &[RunRecord], compared: Option<&Compared>) -> String {
    let html = String::from_utf8(render(catalog, runs, "t", compared)).expect("UTF-8");
    assert_balanced(&html);
    html
}

#[test]
fn the_seeds_own_figures_are_charted_first_and_perfection_is_a_tick_on_extents() {
    // 20 places x 2 parameter sets: 40 bars a chart, as the preset's.
    let cases: Vec<Case> = ["none", "posix_fallocate"]
        .iter()
        .flat_map(|p| (0..20).map(move |i| mmap(&format!("{}@{}M", ["ext2", "ext4", "xfs", "btrfs"][i % 4], 100 + i), i, p)))
        .collect();
    let html = render_with(&seeded_catalog(), &[run(cases)], None);
    let charted: Vec<&str> = attrs(&html, r#"svg class="chart bars""#, "data-figure");
    // The seed's, then the headline's others while 80 bars last.
    assert_eq!(charted, ["extents", "touch_s", "msync_s", "early_allocated_bytes", "total_mbps"], "{html}");
    assert!(html.contains("Not charted, for room (40 bars a chart): wall_s."), "{html}");
    // Perfection: no chart, a tick on each extents bar, its numbers kept.
    let extents = chart(&html, "mmap-fill", "extents");
    assert_eq!(attrs(extents, r#"class="bar""#, "data-perfection").len(), 40);
    assert_eq!(extents.matches(r#"<path class="mark""#).count(), 40);
    assert!(extents.contains("<title>perfection 2</title>") && extents.contains("┃ perfection"), "{extents}");
    assert!(html.contains(r#"<tbody data-figure="perfection" data-unit="count">"#));
    // Two parameter sets: a block each, the labels the place alone.
    assert_eq!(attrs(extents, r#"class="block""#, "data-params"), ["prealloc=none", "prealloc=posix_fallocate"]);
    assert!(!extents.contains(r#"class="sub" "#), "no label repeats its block's parameters: {extents}");
}

#[test]
fn a_constant_a_figure_measured_nowhere_and_a_detectors_zero_get_no_chart() {
    let stream = |fs: &str, mbps: f64| {
        let mut c = case("direct-stream", fs, 1, 20.0);
        c.figures.set("stream_mbps", mbps, "MiB/s", Better::Higher, Kind::Timing);
        c.figures.set("bytes_written", 10.0 * (1u64 << 30) as f64, "bytes", Better::Higher, Kind::Exact);
        c.figures.set("drop_detected", 0.0, "count", Better::Lower, Kind::Timing);
        c.figures.set_missing("drop_at_s", "s", Better::Higher, Kind::Timing, "no sustained drop");
        c
    };
    let runs = [run(vec![stream("ext4", 540.0), stream("xfs", 1013.0), stream("btrfs", 329.0)])];
    let html = render_with(&seeded_catalog(), &runs, None);
    let charted: Vec<&str> = attrs(&html, r#"svg class="chart bars""#, "data-figure");
    assert_eq!(charted, ["stream_mbps"], "wall_s is 20 s and extents 1 on every bar: {html}");
    assert!(
        html.contains(r#"data-same="bytes_written drop_detected extents wall_s">The same on every bar, so not charted: bytes_written 10 GiB; drop_detected 0; extents 1; wall_s 20 s.</p>"#),
        "{html}"
    );
    assert!(html.contains("<li><b>drop_at_s</b> missing on ext4, xfs, btrfs: no sustained drop</li>"), "said in words: {html}");
    // One case: its figures are charted, but a detector's 0 is not.
    let html = render_with(&seeded_catalog(), &[run(vec![stream("ext4", 540.0)])], None);
    let charted: Vec<&str> = attrs(&html, r#"svg class="chart bars""#, "data-figure");
    assert_eq!(charted, ["stream_mbps", "bytes_written", "extents", "wall_s"], "{html}");
    assert!(html.contains("so not charted: drop_detected 0."), "{html}");
}

#[test]
fn a_regressed_figure_is_charted_under_the_matrix_at_the_places_it_regressed() {
    let cases = |touch: f64| -> Vec<Case> {
        (0..40)
            .map(|i| {
                let mut c = mmap(&format!("fs{i}"), i, "none");
                if i == 7 {
                    c.figures.set("page_hits", touch, "count", Better::Lower, Kind::Exact);
                }
                c
            })
            .collect()
    };
    let (base, new) = (run(cases(0.0)), run(cases(12.0)));
    let regressed = Regressed {
        scenario: "mmap-fill".into(),
        place: "fs7".into(),
        params: new.cases[7].params.clone(),
        figure: "page_hits".into(),
        outcome: "regression",
    };
    let compared = Compared {
        base_label: "tag before",
        base_runs: std::slice::from_ref(&base),
        new_label: "tag after",
        summary_html: String::new(),
        table_html: String::new(),
        regressed: vec![regressed],
    };
    let html = render_with(&seeded_catalog(), std::slice::from_ref(&new), Some(&compared));
    // Right under the matrix, before the runs and every section.
    let at = |marker: &str| html.find(marker).unwrap_or_else(|| panic!("no {marker}"));
    let block = at(r#"<section class="regressed" id="regressed">"#);
    assert!(at(r#"<section class="matrix""#) < block && block < at(r#"<section class="runs""#));
    assert!(html.contains(r##"<a href="#regressed">regressed</a>"##), "the page's links name it");
    let regressed = &html[block..];
    let page_hits = chart(regressed, "mmap-fill", "page_hits");
    assert_eq!(attrs(page_hits, r#"class="bar"#, "data-side"), ["base", "new"], "the one place, both sides: {page_hits}");
    assert_eq!(attrs(page_hits, r#"class="bar"#, "data-value"), ["0", "12"]);
    assert!(regressed.contains("regression at fs7</p>"), "{regressed}");
    // Its section, past its room, does not chart it: only the block does.
    let section = &html[at(r#"<section class="scenario" id="scenario-mmap-fill""#)..];
    assert!(!section.contains(r#"data-figure="page_hits""#));
    // No regression, no block.
    let quiet = Compared { regressed: Vec::new(), ..compared };
    let html = render_with(&seeded_catalog(), std::slice::from_ref(&new), Some(&quiet));
    assert!(!html.contains("regressed"), "{html}");
}
