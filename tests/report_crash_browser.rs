//! The report's crash states in a real browser: replace-files on ext4 with
//! `--crash flush`, fsync-each and in-place, rendered and loaded by
//! headless Chromium: the DOM it built has a strip per strategy with every
//! state drawn in its outcome's colour and the marks on the same axis, no
//! console message, and the screenshot shows the good states' green.
//! `FSLAB_REPORT_KEEP=DIR` copies the page and the screenshot there.

mod common;

use std::path::PathBuf;

use common::browser::{assert_no_page_errors, browser, colour_counts};
use common::{Lab, cases, recorder_or_skip};

/// The good states' colour in the strips.
const GOOD: [u8; 3] = [0x3f, 0x9a, 0x5c];

#[test]
fn the_crash_states_are_drawn_along_the_log_in_a_browser() {
    let Some(browser) = browser() else { return };
    if !recorder_or_skip("report_crash_browser") {
        return;
    }
    let lab = Lab::new();
    let args = ["replace-files", "--fs", "ext4", "--crash", "flush", "--set", "strategy=fsync-each,in-place", "--size", "512M", "--tag", "crash"];
    let json = lab.run_json(&args, 0);
    let states: Vec<usize> = cases(&json).iter().map(|c| c["crash"]["states"]["outcomes"].as_array().map_or(0, Vec::len)).collect();
    assert!(states.iter().all(|n| *n > 0), "{states:?}");
    let dir = tempfile::Builder::new().prefix("fslab-report-").tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    lab.expect(&["report", "crash", "-o", page.to_str().unwrap()], 0);
    let url = format!("file://{}", page.display());

    let dump = browser.run(dir.path(), "dump", &["--enable-logging=stderr", "--v=1", "--dump-dom", &url]);
    assert_no_page_errors(&dump.stderr, &url, true);
    let dom = dump.stdout;
    let strips: Vec<&str> = dom.split(r#"<svg class="chart crash""#).skip(1).map(|s| &s[..s.find("</svg>").unwrap()]).collect();
    assert_eq!(strips.len(), 2, "a strip per strategy");
    for (strip, n) in strips.iter().zip(&states) {
        assert!(strip.contains(&format!(r#"data-states="{n}""#)), "{strip}");
        assert_eq!(strip.matches("<rect data-outcome=").count(), *n, "every state a bar");
        assert!(strip.contains(">work start</text>") && strip.contains(">work end</text>"), "{strip}");
    }
    assert!(strips[0].matches(r#"<line class="durable""#).count() >= 20, "fsync-each marks each file durable");
    assert!(dom.contains(r#"<table class="numbers crash-table">"#));

    let png = dir.path().join("report.png");
    let shot = browser.screenshot(dir.path(), &png, &url, (1280, 3200));
    assert_no_page_errors(&shot.stderr, &url, false);
    let green = pixels_of(&png, GOOD);
    assert!(green > 2000, "the good states' green covers {green} pixels");
    if let Some(keep) = std::env::var_os("FSLAB_REPORT_KEEP") {
        let keep = PathBuf::from(keep);
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&page, keep.join("crash.html")).unwrap();
        std::fs::copy(&png, keep.join("crash.png")).unwrap();
    }
}

/// How many pixels of the screenshot `png` are exactly `colour`.
fn pixels_of(png: &std::path::Path, colour: [u8; 3]) -> usize {
    colour_counts(png).get(&colour).copied().unwrap_or(0)
}
