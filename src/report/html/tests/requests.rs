//! The section's block requests: modelled beside measured per place, and
//! the streams drawn as seekwatcher draws them, within their budgets.

use super::*;
use crate::record::{RequestOp, RequestPoint, RequestStream};

/// A case of `scenario` on `fs` whose work the model put at `modelled`
/// seconds on `disk`, with a stream of 600 requests.
fn traced(scenario: &str, fs: &str, repeat: u32, disk: &str, modelled: f64) -> Case {
    let mut c = case(scenario, fs, repeat, 0.5);
    c.figures.set("sync_s", 0.25, "s", Better::Lower, Kind::Timing);
    c.figures.set("modelled_work_s", modelled, "s", Better::Lower, Kind::Timing);
    c.target.disk = Some(disk.to_string());
    let points = (0..600u64)
        .map(|k| RequestPoint {
            t_s: k as f64 * 1e-3,
            modelled_s: Some(k as f64 * modelled / 600.0),
            offset: if k % 100 == 99 { 0 } else { (k * 7919 % 512) << 20 },
            length: if k % 100 == 99 { 0 } else { 1 << 20 },
            op: if k % 100 == 99 { RequestOp::Flush } else { RequestOp::Write },
        })
        .collect();
    c.requests.push(RequestStream {
        phase: "work".into(),
        disk: disk.into(),
        queue_depth: 1,
        requests: 594,
        flushes: 6,
        not_modelled: 0,
        every: 1,
        flushes_every: 1,
        measured_s: 0.599,
        modelled_s: Some(modelled),
        points,
    });
    c
}

fn section<'h>(html: &'h str, scenario: &str) -> &'h str {
    html.split(&format!(r#"id="scenario-{scenario}""#)).nth(1).unwrap().split("</section>").next().unwrap()
}

#[test]
fn modelled_time_stands_beside_measured_time_and_each_place_s_stream_is_drawn() {
    let cases = vec![traced("mmap-fill", "ext4", 1, "hdd-7200", 3.0), traced("mmap-fill", "ext4", 2, "hdd-7200", 4.0), traced("mmap-fill", "xfs", 1, "hdd-7200", 9.0)];
    let html = page(&[run(cases)], None);
    assert_balanced(&html);
    let s = section(&html, "mmap-fill");
    assert!(s.contains("<h3>Block requests, modelled</h3>") && s.contains("replayed by the disk model on hdd-7200"));
    // A pair a place: wall_s + sync_s pale, the model solid, its median.
    let pair = html.split(r#"class="chart bars beside" data-scenario="mmap-fill" data-figure="modelled_work_s""#).nth(1).unwrap();
    let pair = pair.split("</svg>").next().unwrap();
    assert!(html.contains(r#"<svg class="chart bars beside" data-scenario="mmap-fill" data-figure="modelled_work_s""#));
    assert_eq!(attrs(pair, r#"class="bar"#, "data-side"), ["measured", "modelled", "measured", "modelled"]);
    assert_eq!(attrs(pair, r#"class="bar"#, "data-value"), ["0.75", "3.5", "0.75", "9"]);
    assert!(pair.contains(">measured: wall_s + sync_s</text>") && pair.contains(">modelled: hdd-7200</text>"), "{pair}");
    // The first repeat of each place: its stream, both clocks, every
    // request kept (600 under the chart's 512 a panel: one in two).
    assert_eq!(s.matches(r#"<svg class="chart requests""#).count(), 2);
    assert!(s.contains("ext4 · repeat 1 · the work and its syncfs") && !s.contains("ext4 · repeat 2 ·"));
    assert_eq!(attrs(s, "chart requests", "data-drawn"), ["303", "303"]);
    assert!(s.contains("297 of 594 requests drawn (1 in 2), 6 of 6 flushes"));
    let one = s.split(r#"<svg class="chart requests""#).nth(1).unwrap().split("</svg>").next().unwrap();
    assert!(one.len() < 20 * 1024, "a chart of {} bytes", one.len());
}

#[test]
fn a_section_draws_four_streams_and_names_the_rest_and_an_untraced_one_says_nothing() {
    let places = ["ext2", "ext3", "ext4", "xfs", "btrfs", "dir"];
    let html = page(&[run(places.iter().map(|fs| traced("direct-stream", fs, 1, "ssd-plp", 0.1)).collect())], None);
    let s = section(&html, "direct-stream");
    assert_eq!(s.matches(r#"<svg class="chart requests""#).count(), 4);
    assert!(
        s.contains("Streams not drawn (a section draws four): btrfs · repeat 1 · the work and its syncfs; dir · repeat 1 · the work and its syncfs."),
        "{s}"
    );
    // No case traced: no block requests at all.
    let html = page(&[run(vec![case("direct-stream", "ext4", 1, 1.0)])], None);
    assert!(!html.contains("Block requests"));
    // Traced but not modelled (no root): the reason, once, and no chart.
    let mut missing = case("direct-stream", "dir", 1, 1.0);
    missing.figures.set_missing("modelled_work_s", "s", Better::Lower, Kind::Timing, "tracepoints need root");
    let html = page(&[run(vec![missing.clone(), missing])], None);
    let s = section(&html, "direct-stream");
    assert_eq!(s.matches("modelled_work_s missing: tracepoints need root").count(), 1);
    assert!(!s.contains(r#"data-figure="modelled_work_s""#));
}

#[test]
fn past_the_page_s_picture_budget_streams_are_named_not_drawn() {
    let mut big = case("mmap-fill", "ext4", 1, 1.0);
    big.status = Status::Failed;
    big.error = Some("x".repeat(PICTURES_UNTIL));
    let html = page(&[run(vec![big, traced("direct-stream", "xfs", 1, "hdd-7200", 2.0)])], None);
    let s = section(&html, "direct-stream");
    assert!(!s.contains(r#"<svg class="chart requests""#));
    assert!(s.contains("Streams not drawn (the page's picture budget is spent): xfs · repeat 1"), "{s}");
    assert!(s.contains(r#"data-figure="modelled_work_s""#), "the times are a bar chart, never dropped");
}

#[test]
fn a_stream_s_text_from_the_store_is_escaped() {
    let mut c = traced("mmap-fill", "ext4<img src=x>", 1, "<script>alert(1)</script>", 1.0);
    c.requests[0].phase = "wo\"rk<b>".into();
    let html = page(&[run(vec![c])], None);
    assert_balanced(&html);
    assert!(!html.contains("<script>alert") && !html.contains("<img src=x>") && !html.contains("<b>"), "nothing inserted is markup");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains(r#"data-phase="wo&quot;rk&lt;b&gt;""#));
}
