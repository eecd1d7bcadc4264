//! One scenario's timelines on the page: a legend naming each place (a
//! target with its conditions, and the run with several) by its line,
//! then per parameter set a row of charts, one per metric, every case of
//! the set overlaid from its own start; last, what the throughput-drop
//! detector found in each case.
//!
//! Design decisions:
//! - The overlay is across places, within one parameter set: the question
//!   a timeline answers is how file systems differ on the same work (a
//!   chart of create-file's six methods on four places would be 24 lines
//!   no one can follow).
//! - The legend is said once, above the charts: every chart of the section
//!   draws a place in the same stroke. A line's tooltip names its case,
//!   for a chart read on its own.
//! - With several parameter sets, each gets one row: the first
//!   [`CHARTS_PER_SET`] metrics that moved (the write rate, system CPU,
//!   dirty memory as a rule), so create-file's six methods take six rows,
//!   not six times seven charts.
//! - The work's own series (its CPU; its cgroup's page cache under
//!   `--memory`) are drawn where they were sampled, and the whole
//!   machine's only for lines without them, each chart titled by whose
//!   series it is (`Metric::draws`).

use std::fmt::{self, Write as _};

use super::section::Group;
use super::{escape, plural, unique};
use crate::record::Case;
use crate::report::timeline::{DropMark, Line, Metric, OverlayChart, stroke};

/// Charts a parameter set gets when a scenario ran several: one row of
/// the page's three-column grid, the first metrics of [`Metric::ALL`]
/// that moved.
const CHARTS_PER_SET: usize = 3;

/// A place's stroke: its group's colour, and a dash of its own among the
/// places of that colour.
struct Place {
    /// Target with conditions, and the run when the page has several.
    label: String,
    fs: String,
    colour: usize,
    dash: usize,
    /// Repeats of it drawn, at most (over its parameter sets).
    repeats: usize,
}

/// The timelines of `groups` (one scenario's), of every case with at
/// least two samples.
pub(super) fn write_timelines(out: &mut String, scenario: &str, groups: &[Group]) -> fmt::Result {
    writeln!(out, "<h3>Timelines</h3>")?;
    let drawn: Vec<(&Group, Vec<&Case>)> = groups
        .iter()
        .map(|g| (g, g.cases.iter().copied().filter(|c| c.timeline.len() >= 2).collect::<Vec<_>>()))
        .filter(|(_, cases)| !cases.is_empty())
        .collect();
    if drawn.is_empty() {
        return writeln!(
            out,
            r#"<p class="note">No case has two timeline samples or more (the work was shorter than the sampling interval): nothing to draw.</p>"#
        );
    }
    let places = places(&drawn);
    let labels: Vec<String> = drawn.iter().map(|(g, _)| g.label()).collect();
    let lines: Vec<(&str, Line)> = drawn
        .iter()
        .zip(&labels)
        .flat_map(|((group, cases), label)| {
            let place = places.iter().find(|p| p.label == place_label(group)).expect("every group has its place");
            cases.iter().map(move |case| {
                let line = Line {
                    fs: &case.fs,
                    label,
                    repeat: case.repeat,
                    colour: place.colour,
                    dash: place.dash,
                    faint: cases.len() > 1,
                    points: &case.timeline,
                    drop: DropMark::from_figures(&case.figures),
                };
                (group.params.as_str(), line)
            })
        })
        .collect();

    writeln!(
        out,
        r#"<p class="note">Each case from its own start; the repeats of a place thin and faint, each its own line.</p>"#
    )?;
    let skipped = groups.iter().map(|g| g.cases.len()).sum::<usize>() - lines.len();
    if skipped > 0 {
        writeln!(out, r#"<p class="note">{} with fewer than two samples not drawn.</p>"#, plural(skipped, "case", "cases"))?;
    }
    write_legend(out, &places)?;
    let sets: Vec<&str> = unique(lines.iter().map(|(params, _)| *params));
    let all: Vec<Line> = lines.iter().map(|(_, l)| l.clone()).collect();
    let charted: Vec<Metric> = Metric::ALL.into_iter().filter(|m| m.charted(&all)).collect();
    let (shown, left) = if sets.len() > 1 { charted.split_at(charted.len().min(CHARTS_PER_SET)) } else { (&charted[..], &[][..]) };
    for params in &sets {
        if sets.len() > 1 {
            writeln!(out, r#"<p class="params timeline-set"><b>{}</b></p>"#, escape(params))?;
        }
        writeln!(out, r#"<div class="grid timelines" style="margin-bottom: 8px">"#)?;
        for metric in shown {
            let set: Vec<Line> = lines.iter().filter(|(p, l)| p == params && metric.draws(l)).map(|(_, l)| l.clone()).collect();
            if set.is_empty() {
                continue;
            }
            let chart = OverlayChart { scenario, params, metric: *metric, lines: &set };
            writeln!(out, r#"<div class="card">{}</div>"#, chart.render())?;
        }
        writeln!(out, "</div>")?;
    }
    if !left.is_empty() {
        let titles: Vec<&str> = left.iter().map(|m| m.title()).collect();
        writeln!(
            out,
            r#"<p class="note">Not charted ({} parameter sets, {} charts each): {}.</p>"#,
            sets.len(),
            shown.len(),
            escape(&titles.join(", "))
        )?;
    }
    // A series no line draws is said only when it is the machine's,
    // given way to the work's own; the work's own, when not sampled, is
    // no news.
    let drawn_by = |m: &Metric| all.iter().any(|l| m.draws(l));
    let quiet: Vec<String> = Metric::ALL
        .iter()
        .filter(|m| !charted.contains(m) && drawn_by(m))
        .map(|m| match m.floor() {
            Some(floor) => format!("{} below {floor} {}", m.title(), m.unit()),
            None => format!("{} (not known)", m.title()),
        })
        .collect();
    if !quiet.is_empty() {
        writeln!(out, r#"<p class="note">Not charted: {}.</p>"#, escape(&quiet.join("; ")))?;
    }
    let replaced: Vec<&str> = Metric::ALL.iter().filter(|m| m.work_own().is_some() && !drawn_by(m)).map(|m| m.title()).collect();
    if !replaced.is_empty() {
        writeln!(
            out,
            r#"<p class="note">The work's own series drawn instead of: {}.</p>"#,
            escape(&replaced.join(", "))
        )?;
    }
    write_drops(out, &all)
}

/// A group's place: its target with conditions, and its run.
fn place_label(group: &Group) -> String {
    [group.place.as_str(), group.run.as_str()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" · ")
}

/// The places of `drawn`, in order of first appearance, each with its
/// stroke: the first place of a colour solid, the next of that colour
/// (the same target in another run, or under other conditions) dashed.
fn places(drawn: &[(&Group, Vec<&Case>)]) -> Vec<Place> {
    let mut places: Vec<Place> = Vec::new();
    for (group, cases) in drawn {
        let label = place_label(group);
        match places.iter_mut().find(|p| p.label == label) {
            Some(place) => place.repeats = place.repeats.max(cases.len()),
            None => {
                let dash = places.iter().filter(|p| p.colour == group.colour).count();
                places.push(Place { label, fs: group.place.clone(), colour: group.colour, dash, repeats: cases.len() });
            }
        }
    }
    places
}

/// One entry per place: its stroke, its label, how many repeats.
fn write_legend(out: &mut String, places: &[Place]) -> fmt::Result {
    writeln!(
        out,
        r#"<ul class="timeline-legend" style="list-style: none; padding: 0; margin: 6px 0; display: flex; flex-wrap: wrap; gap: 4px 22px; font-size: 13px">"#
    )?;
    for place in places {
        write!(
            out,
            r#"<li data-fs="{}" data-label="{}" data-cases="{}"><svg width="30" height="10" viewBox="0 0 30 10" aria-hidden="true" style="vertical-align: middle"><line x1="1" x2="29" y1="5" y2="5" {}/></svg> {}"#,
            escape(&place.fs),
            escape(&place.label),
            place.repeats,
            // At full strength, though the lines of several repeats are
            // faint: the sample names the colour and the dash.
            stroke(place.colour, place.dash, false),
            escape(&place.label)
        )?;
        if place.repeats > 1 {
            write!(out, r#" <span class="params">× {}</span>"#, place.repeats)?;
        }
        writeln!(out, "</li>")?;
    }
    writeln!(out, "</ul>")
}

/// Per group label, the repeats that found one thing.
type Finders<'a> = Vec<(&'a str, Vec<u32>)>;

/// What the drop detector found, per case, cases with the same finding
/// said together ("xfs; btrfs: no sustained throughput drop"), a group
/// whose repeats all found the same named once.
fn write_drops(out: &mut String, lines: &[Line]) -> fmt::Result {
    let mut findings: Vec<(String, Finders)> = Vec::new();
    for line in lines {
        let Some(drop) = &line.drop else { continue };
        let sentence = drop.sentence();
        let index = match findings.iter().position(|(s, _)| *s == sentence) {
            Some(index) => index,
            None => {
                findings.push((sentence, Vec::new()));
                findings.len() - 1
            }
        };
        let groups = &mut findings[index].1;
        match groups.iter_mut().find(|(label, _)| *label == line.label) {
            Some((_, repeats)) => repeats.push(line.repeat),
            None => groups.push((line.label, vec![line.repeat])),
        }
    }
    if findings.is_empty() {
        return Ok(());
    }
    writeln!(out, r#"<p class="params">The throughput-drop detector, per case:</p>"#)?;
    writeln!(out, r#"<ul class="drops params">"#)?;
    for (sentence, groups) in findings {
        let names: Vec<String> = groups
            .iter()
            .map(|(label, repeats)| {
                let all = lines.iter().filter(|l| l.label == *label).count();
                if repeats.len() == all {
                    label.to_string()
                } else {
                    let repeats: Vec<String> = repeats.iter().map(u32::to_string).collect();
                    format!("{label} · repeat {}", repeats.join(", "))
                }
            })
            .collect();
        writeln!(out, "<li>{}: {}</li>", escape(&names.join("; ")), escape(&sentence))?;
    }
    writeln!(out, "</ul>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Kind, TimelinePoint};

    fn case(fs: &str, repeat: u32, samples: u32) -> Case {
        let mut case = Case::new("direct-stream", fs, serde_json::Map::new(), repeat);
        case.timeline = (1..=samples)
            .map(|i| TimelinePoint {
                t_s: f64::from(i),
                read_bytes_per_s: Some(0.0),
                write_bytes_per_s: Some(100.0 * 1024.0 * 1024.0),
                user_pct: 0.5,
                system_pct: 12.0,
                iowait_pct: 30.0,
                idle_pct: 57.5,
                dirty_bytes: 4096,
                writeback_bytes: 0,
                ..Default::default()
            })
            .collect();
        case
    }

    fn group<'a>(place: &str, run: &str, colour: usize, cases: Vec<&'a Case>) -> Group<'a> {
        Group { place: place.into(), params: String::new(), run: run.into(), side: None, colour, cases }
    }

    #[test]
    fn one_chart_per_metric_with_a_line_per_case_and_a_legend_per_group() {
        let (e1, e2, x1, short) = (case("ext4", 1, 10), case("ext4", 2, 12), case("xfs", 1, 30), case("btrfs", 1, 1));
        let groups = [group("ext4", "", 0, vec![&e1, &e2]), group("xfs", "", 1, vec![&x1]), group("btrfs", "", 2, vec![&short])];
        let mut html = String::new();
        write_timelines(&mut html, "direct-stream", &groups).unwrap();
        // Writes, system CPU and iowait moved; reads, dirty memory,
        // writeback and user CPU stayed below their floors.
        assert_eq!(html.matches(r#"<svg class="chart timeline""#).count(), 3, "{html}");
        for metric in ["write_mibps", "system_pct", "iowait_pct"] {
            assert!(html.contains(&format!(r#"data-metric="{metric}""#)), "{metric}");
        }
        assert_eq!(html.matches(r#"<path class="line""#).count(), 9, "three cases in each of three charts");
        assert!(html.contains(r#"data-fs="xfs" data-repeat="1" data-points="30""#));
        assert!(html.contains(r#"data-params="""#) && !html.contains("timeline-set"), "one parameter set: no heading");
        assert!(html.contains("1 case with fewer than two samples not drawn."));
        assert!(html.contains("; device reads below 1 MiB/s;"), "{html}");
        let legend = html.split(r#"<ul class="timeline-legend""#).nth(1).unwrap().split("</ul>").next().unwrap();
        assert_eq!(legend.matches("<li ").count(), 2, "btrfs drew nothing");
        assert!(legend.contains(r#"data-fs="ext4" data-label="ext4" data-cases="2""#) && legend.contains("× 2"));
        assert!(legend.contains(r##"stroke="#e69f00""##), "xfs in its bar colour");
    }

    #[test]
    fn runs_of_one_target_share_its_colour_and_differ_in_dash() {
        let (base, new) = (case("ext4", 1, 5), case("ext4", 1, 5));
        let groups = [group("ext4", "tag base", 0, vec![&base]), group("ext4", "tag new", 0, vec![&new])];
        let mut html = String::new();
        write_timelines(&mut html, "direct-stream", &groups).unwrap();
        let legend = html.split(r#"<ul class="timeline-legend""#).nth(1).unwrap().split("</ul>").next().unwrap();
        assert!(legend.contains(r#"data-label="ext4 · tag base""#) && legend.contains(r#"data-label="ext4 · tag new""#));
        assert_eq!(legend.matches("stroke-dasharray").count(), 1, "the second run's line is dashed: {legend}");
        assert!(html.contains("<title>ext4 · tag new</title>"), "the tooltip names the run");
    }

    #[test]
    fn each_parameter_set_overlays_its_places_in_a_row_of_its_own() {
        let cases: Vec<Case> = ["ext4", "xfs"].iter().flat_map(|fs| (0..5).map(move |_| case(fs, 1, 6))).collect();
        let groups: Vec<Group> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| Group { params: format!("method=m{}", i % 5), ..group(&c.fs, "", i / 5, vec![c]) })
            .collect();
        let mut html = String::new();
        write_timelines(&mut html, "create-file", &groups).unwrap();
        assert_eq!(html.matches("<li data-fs=").count(), 2, "the legend names places, not parameter sets");
        assert_eq!(html.matches(r#"<p class="params timeline-set">"#).count(), 5);
        // Five sets, each a row of three charts: writes, system CPU and
        // iowait (user CPU stayed below its floor).
        assert_eq!(html.matches(r#"<svg class="chart timeline""#).count(), 15);
        assert_eq!(html.matches(r#"data-params="method=m3" data-metric="#).count(), 3);
        assert!(!html.contains("Not charted (5 parameter sets"), "every metric that moved fits the row");
        assert!(html.contains(r#"data-params="method=m3" data-metric="write_mibps" data-unit="MiB/s" data-lines="2""#));
        assert!(html.contains("Not charted: dirty page cache (whole machine) below 1 MiB; device reads below 1 MiB/s"), "{html}");
    }

    #[test]
    fn the_works_own_series_are_drawn_where_sampled_and_the_machines_elsewhere() {
        // ext4 sampled its work's CPU and cgroup; xfs is an older record.
        let mut own = case("ext4", 1, 8);
        for p in &mut own.timeline {
            (p.work_system_pct, p.work_user_pct) = (Some(40.0), Some(0.5));
            (p.work_dirty_bytes, p.work_writeback_bytes) = (Some(30 << 20), Some(0));
        }
        let old = case("xfs", 1, 8);
        let groups = [group("ext4@120M", "", 0, vec![&own]), group("xfs", "", 1, vec![&old])];
        let mut html = String::new();
        write_timelines(&mut html, "mmap-fill", &groups).unwrap();
        let lines = |metric: &str| -> Vec<&str> {
            let chart = html.split(&format!(r#"data-metric="{metric}""#)).nth(1).map_or("", |c| c.split("</svg>").next().unwrap());
            chart.split(r#"<path class="line" data-fs=""#).skip(1).map(|l| l.split('"').next().unwrap()).collect()
        };
        assert_eq!(lines("work_system_pct"), ["ext4"], "the work's own where sampled");
        assert_eq!(lines("system_pct"), ["xfs"], "the machine's where not");
        assert_eq!(lines("work_dirty_mib"), ["ext4"]);
        assert_eq!(lines("write_mibps"), ["ext4", "xfs"], "the device's for every case");
        assert!(html.contains(r#"aria-label="system CPU (the work&apos;s)""#) && html.contains(r#"aria-label="system CPU (whole machine)""#), "{html}");
        assert!(html.contains(r#"data-unit="% of one CPU""#));
        // All sampled: the machine's system CPU gives way, said once.
        let mut twin = own.clone();
        twin.fs = "xfs".into();
        let groups = [group("ext4@120M", "", 0, vec![&own]), group("xfs@120M", "", 1, vec![&twin])];
        let mut html = String::new();
        write_timelines(&mut html, "mmap-fill", &groups).unwrap();
        assert!(!html.contains(r#"data-metric="system_pct""#) && html.contains(r#"data-metric="work_system_pct""#));
        assert!(html.contains("The work's own series drawn instead of: system CPU (whole machine), dirty page cache (whole machine)"), "{html}");
    }

    #[test]
    fn the_drop_findings_are_said_once_per_finding() {
        let mut cases = [case("ext4", 1, 10), case("ext4", 2, 10), case("xfs", 1, 10), case("btrfs", 1, 10), case("btrfs", 2, 10)];
        cases[0].figures.set("drop_detected", 1.0, "count", Better::Lower, Kind::Timing);
        cases[0].figures.set("drop_at_s", 4.0, "s", Better::Higher, Kind::Timing);
        for c in &mut cases[1..] {
            c.figures.set("drop_detected", 0.0, "count", Better::Lower, Kind::Timing);
        }
        let [e1, e2, x1, b1, b2] = &cases;
        let groups = [group("ext4", "", 0, vec![e1, e2]), group("xfs", "", 1, vec![x1]), group("btrfs", "", 2, vec![b1, b2])];
        let mut html = String::new();
        write_timelines(&mut html, "direct-stream", &groups).unwrap();
        assert!(html.contains("<li>ext4 · repeat 1: throughput drop at 4 s</li>"), "{html}");
        assert!(html.contains("<li>ext4 · repeat 2; xfs; btrfs: no sustained throughput drop</li>"), "both of btrfs's repeats: named once");
        assert_eq!(html.matches(r#"<g class="drop-marker" data-fs="ext4" data-repeat="1""#).count(), 2, "writes and system CPU");
        assert_eq!(html.matches(r#"class="drop-marker""#).count(), 2);
    }

    #[test]
    fn nothing_to_draw_is_said() {
        let short = case("ext4", 1, 1);
        let mut html = String::new();
        write_timelines(&mut html, "mmap-fill", &[group("ext4", "", 0, vec![&short])]).unwrap();
        assert!(html.contains("nothing to draw") && !html.contains("<svg"));
    }
}
