//! Renderer tests on a small comparison with one of each outcome.

use super::*;
use crate::compare::tests::{case, compare_runs, run};
use crate::record::{Better, Figures};

/// Base and new runs of tree-copy on ext2-1k (size=64M): a rate that
/// falls 8.8-fold, commits that fall from 21 to 2, a wall time that does
/// not move, a nudge of 21 → 22 extents, and a sync time on 3 repeats.
fn comparison() -> Comparison {
    let side = |rates: [f64; 5], commits: f64, extents: f64, sync: [f64; 3]| {
        let cases: Vec<crate::record::Case> = (0..5)
            .map(|i| {
                case("tree-copy", "ext2-1k", &[("size", "64M")], i as u32 + 1, |f: &mut Figures| {
                    f.set("read_mbps", rates[i], "MB/s", Better::Higher, Kind::Timing);
                    f.set("journal_commits", commits, "count", Better::Lower, Kind::Exact);
                    f.set("extents", extents, "count", Better::Lower, Kind::Exact);
                    f.set("wall_s", [1.0, 1.1, 0.9, 1.05, 0.95][i], "s", Better::Lower, Kind::Timing);
                    if i < 3 {
                        f.set("sync_s", sync[i], "s", Better::Lower, Kind::Timing);
                    }
                })
            })
            .collect();
        cases
    };
    let base = side([400.0, 405.0, 410.0, 415.0, 420.0], 21.0, 21.0, [0.01, 0.011, 0.012]);
    let mut new = side([45.0, 46.0, 46.6, 47.0, 48.0], 2.0, 22.0, [0.02, 0.021, 0.022]);
    new.push(case("exec", "dir", &[("cmd", "a|b <x>")], 1, |f: &mut Figures| {
        f.set("wall_s", 1.0, "s", Better::Lower, Kind::Timing);
    }));
    compare_runs(&[run("base-run", base)], &[run("new-run", new)])
}

/// A case of scenario `s` on ext4 with one exact count, lower better.
fn counted(name: &str, value: f64) -> crate::record::Case {
    case("s", "ext4", &[], 1, |f: &mut Figures| f.set(name, value, "count", Better::Lower, Kind::Exact))
}

#[test]
fn text_lines_read_as_sentences_and_end_with_the_verdict() {
    let out = text(&comparison(), false);
    let line = out.lines().find(|l| l.contains("read_mbps")).unwrap();
    assert!(
        line.starts_with("  tree-copy read_mbps on ext2-1k (size=64M): 8.8x slower  (median 410 → 46.6 MB/s, 95% CI "),
        "{line}"
    );
    // Two figures were tested (read_mbps, wall_s): q = 0.008 · 2 / 1.
    assert!(line.ends_with(", p=0.008, q=0.016)"), "{line}");
    assert!(out.contains("  tree-copy journal_commits on ext2-1k (size=64M): 10.5x better  (21 → 2)\n"), "{out}");
    let changed = "Changed within 5%:\n  tree-copy extents on ext2-1k (size=64M): changed +4.76%  (21 → 22)\n";
    assert!(out.contains(changed), "{out}");
    assert!(!out.contains("wall_s"), "unchanged rows are only counted:\n{out}");
    assert!(
        out.contains("Not shown: 1 unchanged; 1 with too few repeats to judge, needs 4 values per side (--repeat 4)."),
        "{out}"
    );
    assert!(out.contains("Only in v2 (1):\n  exec on dir (cmd=a|b <x>)\n"), "{out}");
    assert!(out.starts_with("base v1 (1 run: base-run)\nnew  v2 (1 run: new-run)\n"), "{out}");
    let verdict = "1 regression, 1 improvement, 1 changed within the threshold, 1 unchanged, 1 with too few repeats";
    assert_eq!(out.lines().last(), Some(verdict));
}

#[test]
fn text_with_all_lists_every_row() {
    let out = text(&comparison(), true);
    assert!(out.contains("Unchanged:\n  tree-copy wall_s on ext2-1k (size=64M): unchanged  (median 1 → 1 s, 95% CI "), "{out}");
    assert!(out.contains("Too few repeats to judge; needs 4 values per side (--repeat 4):\n  tree-copy sync_s"), "{out}");
    assert!(out.contains("too few repeats  (median 11 → 21 ms"), "{out}");
    assert!(!out.contains("Not shown"));
}

#[test]
fn improvements_read_as_speed_ups() {
    let c = comparison();
    // The same runs the other way round: the rate is 8.8x faster.
    let mut flipped = c.clone();
    for row in &mut flipped.rows {
        if row.figure == "read_mbps" {
            std::mem::swap(&mut row.base, &mut row.new);
            std::mem::swap(&mut row.base_median, &mut row.new_median);
            row.slowdown = row.slowdown.map(|s| 1.0 / s);
            row.ci = row.ci.map(|[lo, hi]| [1.0 / hi, 1.0 / lo]);
            row.outcome = Outcome::Improvement;
        }
    }
    let out = text(&flipped, false);
    let line = out.lines().find(|l| l.contains("read_mbps")).unwrap();
    assert!(line.contains(": 8.8x faster  (median 46.6 → 410 MB/s, 95% CI "), "{line}");
    let original = c.rows.iter().find(|r| r.figure == "read_mbps").unwrap().ci.unwrap();
    let shown = format!("{}–{}", format::factor(original[0]), format::factor(original[1]));
    assert!(line.contains(&shown), "the speed-up interval is the slowdown one: {line} {shown}");
}

#[test]
fn markdown_is_one_table_with_escaped_cells() {
    let out = markdown(&comparison(), true);
    assert!(out.contains("| Outcome | Figure | Change | Base → new | 95% CI | p | Note |\n|---|---|---|---|---|---|---|\n"));
    let row = "| improvement | tree-copy journal_commits on ext2-1k (size=64M) | 10.5x better | 21 → 2 |  |  |  |\n";
    assert!(out.contains(row), "{out}");
    assert!(out.contains("- exec on dir (cmd=a\\|b <x>)"), "{out}");
    assert_eq!(out.matches("| regression |").count(), 1);
    assert!(out.trim_end().ends_with("with too few repeats**"));
}

#[test]
fn json_carries_the_schema_and_lowercase_outcomes() {
    let bytes = json(&comparison());
    assert_eq!(bytes.last(), Some(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["schema"], crate::SCHEMA);
    let rows = v["compare"]["rows"].as_array().unwrap();
    assert_eq!(rows[0]["outcome"], "regression");
    assert_eq!(rows[0]["better"], "higher");
    assert_eq!(rows[0]["kind"], "timing");
    assert!(rows.iter().any(|r| r["outcome"] == "too_few_repeats"));
    assert_eq!(v["compare"]["only_new"][0], "exec on dir (cmd=a|b <x>)");
    assert_eq!(v["compare"]["base_runs"][0], "base-run");
}

#[test]
fn infinite_factors_are_json_null_and_words_in_text() {
    let base = [run("b", vec![counted("errors", 0.0)])];
    let new = [run("n", vec![counted("errors", 3.0)])];
    let c = compare_runs(&base, &new);
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert!(v["compare"]["rows"][0]["slowdown"].is_null());
    let out = text(&c, false);
    assert!(out.contains("s errors on ext4: worse (from 0)  (0 → 3) — no finite factor: the base median is 0"), "{out}");
    assert!(!out.contains("NaN") && !out.contains("inf"));
}

#[test]
fn html_is_one_escaped_table_classed_by_outcome() {
    let out = html_table(&comparison());
    assert!(out.starts_with("<table class=\"compare\">\n<caption>v1 → v2: 1 regression, 1 improvement"));
    assert!(out.ends_with("</table>\n"));
    for class in ["regression", "improvement", "changed", "unchanged", "too_few_repeats"] {
        assert_eq!(out.matches(&format!("<tr class=\"{class}\">")).count(), 1, "{class}");
    }
    assert!(out.contains("<td colspan=\"6\">exec on dir (cmd=a|b &lt;x&gt;)</td>"), "{out}");
    assert!(!out.contains("<x>") && !out.contains("<script") && !out.contains("href") && !out.contains("src="));
}

#[test]
fn nothing_eventful_says_so() {
    let base = [run("b", vec![counted("files", 1.0)])];
    let c = compare_runs(&base, &base);
    assert!(markdown(&c, false).contains("No regressions, improvements or changes.\n\nNot shown: 1 unchanged.\n"));
    assert_eq!(text(&c, false).lines().last(), Some("0 regressions, 0 improvements, 1 unchanged"));
}


#[test]
fn newly_failed_cases_and_incomplete_runs_are_said_everywhere() {
    let ok = counted("files", 1.0);
    let mut failed = counted("files", 1.0);
    failed.status = crate::record::Status::Failed;
    failed.error = Some("mkfs | failed <here>".into());
    let mut killed = run("k", vec![failed]);
    killed.complete = false;
    let c = compare_runs(&[run("b", vec![ok])], &[killed]);
    let out = text(&c, false);
    assert!(out.contains("INCOMPLETE: run k of v2 is incomplete (killed or interrupted)"), "{out}");
    assert!(out.contains("Newly failed (ok in v1, failed in v2), each a regression:\n  s on ext4: failed in its only repeat in v2: mkfs | failed <here>\n"), "{out}");
    assert_eq!(out.lines().last(), Some("1 regression (1 newly failed case), 0 improvements, 0 unchanged"));
    let md = markdown(&c, false);
    assert!(md.contains("**Incomplete:** run k of v2"), "{md}");
    assert!(md.contains("- s on ext4: failed in its only repeat in v2: mkfs \\| failed <here>\n"), "{md}");
    assert!(md.contains("No figure regressed, improved or changed."), "{md}");
    let html = html_table(&c);
    assert!(html.contains("<tr class=\"regression failed\"><td>newly failed</td>"), "{html}");
    assert!(html.contains("<tr class=\"incomplete\"><td>incomplete</td>"), "{html}");
    assert!(html.contains("&lt;here&gt;") && !html.contains("<here>"));
    let v: serde_json::Value = serde_json::from_slice(&json(&c)).unwrap();
    assert_eq!(v["compare"]["newly_failed"][0]["error"], "mkfs | failed <here>");
    assert_eq!(v["compare"]["new_incomplete"][0], "k");
}
