use super::*;
use crate::record::{Better, Kind};

fn point(t_s: f64, write_mibps: f64) -> TimelinePoint {
    TimelinePoint {
        t_s,
        read_bytes_per_s: Some(0.0),
        write_bytes_per_s: Some(write_mibps * MIB),
        user_pct: 1.0,
        system_pct: 10.0,
        iowait_pct: 5.0,
        idle_pct: 84.0,
        dirty_bytes: 0,
        writeback_bytes: 0,
        ..Default::default()
    }
}

fn line<'a>(fs: &'a str, colour: usize, points: &'a [TimelinePoint]) -> Line<'a> {
    Line { fs, label: fs, repeat: 1, colour, dash: 0, faint: false, points, drop: None }
}

fn chart(metric: Metric, lines: &[Line]) -> String {
    OverlayChart { scenario: "direct-stream", params: "", metric, lines }.render()
}

/// The `d` of the line of `fs`, as (x, y) pairs.
fn path_of(svg: &str, fs: &str) -> Vec<(f64, f64)> {
    let tag = svg.split("<path class=\"line\"").find(|t| t.contains(&format!(r#"data-fs="{fs}""#))).expect("the line");
    let d = tag.split(r#" d=""#).nth(1).unwrap().split('"').next().unwrap();
    d.split(['M', 'L'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (x, y) = p.split_once(' ').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// Values of attribute `name` on the tags that contain `marker`.
fn attrs<'a>(svg: &'a str, marker: &str, name: &str) -> Vec<&'a str> {
    svg.split('<')
        .filter(|tag| tag.contains(marker))
        .filter_map(|tag| tag.split(&format!(r#" {name}=""#)).nth(1)?.split('"').next())
        .collect()
}

#[test]
fn every_case_starts_at_its_own_t0_on_one_axis() {
    // Both cases' samples are seconds from their own starts: the same
    // second lands on the same x, whichever case and however long.
    let a: Vec<TimelinePoint> = (1..=4).map(|i| point(f64::from(i), 10.0)).collect();
    let b: Vec<TimelinePoint> = (1..=8).map(|i| point(f64::from(i) * 0.5, 20.0)).collect();
    let svg = chart(Metric::Write, &[line("ext4", 0, &a), line("xfs", 1, &b)]);
    let (pa, pb) = (path_of(&svg, "ext4"), path_of(&svg, "xfs"));
    assert_eq!(pa[0].0, pb[1].0, "1 s is 1 s on both");
    assert_eq!(pa[3].0, pb[7].0, "4 s too");
    // The axis begins at 0 at the plot's left edge, with a tick labelled 0.
    assert!(svg.contains(&format!("M{l} {b}v4", l = c(PLOT_LEFT), b = c(PLOT_BOTTOM))), "{svg}");
    let first_tick = format!(r#"<text x="{}" y="{}">"#, c(PLOT_LEFT), c(PLOT_BOTTOM + 15.0));
    let label = svg.split(&first_tick).nth(1).expect("a tick at the left edge").split('<').next().unwrap();
    assert_eq!(label.parse::<f64>(), Ok(0.0));
    assert!(svg.contains("s from each case's start"));
}

#[test]
fn two_targets_of_different_lengths_share_one_chart() {
    let short: Vec<TimelinePoint> = (1..=10).map(|i| point(f64::from(i), 100.0)).collect();
    let long: Vec<TimelinePoint> = (1..=30).map(|i| point(f64::from(i), 40.0)).collect();
    let svg = chart(Metric::Write, &[line("ext4", 0, &short), line("btrfs", 2, &long)]);
    assert_eq!(svg.matches("<svg").count(), 1);
    assert!(svg.starts_with(r#"<svg class="chart timeline" data-scenario="direct-stream" data-params="" data-metric="write_mibps" data-unit="MiB/s" data-lines="2""#));
    assert_eq!(attrs(&svg, r#"class="line""#, "data-fs"), ["ext4", "btrfs"]);
    assert_eq!(attrs(&svg, r#"class="line""#, "data-points"), ["10", "30"]);
    assert_eq!(attrs(&svg, "g stroke=", "stroke"), [PALETTE[0], PALETTE[2]], "each in its target's bar colour");
    // The x axis runs to the longer; the shorter ends a third of the way.
    let (ext4, btrfs) = (path_of(&svg, "ext4"), path_of(&svg, "btrfs"));
    assert_eq!(btrfs.last().unwrap().0, PLOT_RIGHT);
    assert!((ext4.last().unwrap().0 - (PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) / 3.0)).abs() <= 0.5);
    // 100 MiB/s (in bytes per second) is drawn as 100 on a MiB/s axis.
    assert!(svg.contains(">100</text>") && svg.contains(">MiB/s</tspan>"));
}

#[test]
fn nine_long_lines_stay_under_30_kb() {
    let points: Vec<Vec<TimelinePoint>> =
        (0..9).map(|k| (1..=20_000).map(|i| point(f64::from(i) * 0.1, f64::from((i * 7 + k) % 13))).collect()).collect();
    let lines: Vec<Line> = points.iter().enumerate().map(|(k, p)| Line { faint: true, ..line("ext4", k / 3, p) }).collect();
    for metric in [Metric::Write, Metric::System] {
        let svg = chart(metric, &lines);
        assert!(svg.len() < 30 * 1024, "{} bytes", svg.len());
        let drawn: Vec<usize> = attrs(&svg, r#"class="line""#, "data-drawn").iter().map(|d| d.parse().unwrap()).collect();
        assert_eq!(drawn.len(), 9);
        assert!(drawn.iter().all(|d| *d <= CHART_POINTS / 9), "{drawn:?}");
        assert!(attrs(&svg, r#"class="line""#, "data-points").iter().all(|p| *p == "20000"));
    }
    // The same data, the same picture.
    assert_eq!(chart(Metric::Write, &lines), chart(Metric::Write, &lines));
}

#[test]
fn long_lines_keep_their_extremes_in_time_order() {
    let n = 100_000;
    let times: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
    let mut values: Vec<Option<f64>> = (0..n).map(|i| Some(50.0 + (i % 7) as f64)).collect();
    values[31_337] = Some(0.5); // one stalled interval
    values[77_777] = Some(900.0); // one burst
    let drawn = downsample(&times, &values, 600);
    assert!(drawn.len() <= 600, "{}", drawn.len());
    assert!(drawn.contains(&Some((times[31_337], 0.5))), "the stall survives");
    assert!(drawn.contains(&Some((times[77_777], 900.0))), "the burst survives");
    let t: Vec<f64> = drawn.iter().flatten().map(|p| p.0).collect();
    assert!(t.windows(2).all(|w| w[0] < w[1]), "in time order");
    assert_eq!(downsample(&[1.0, 2.0, 3.0], &[Some(1.0), None, Some(3.0)], 600), [Some((1.0, 1.0)), None, Some((3.0, 3.0))]);
}

#[test]
fn labels_are_escaped() {
    let points = [point(1.0, 5.0), point(2.0, 6.0)];
    let mut l = line("d<i>r&\"", 0, &points);
    l.label = "d<i>r&\" · <b>";
    l.drop = Some(DropMark::Undecided("<7>".into()));
    let svg = OverlayChart { scenario: "a<s>", params: "k=<v>", metric: Metric::Write, lines: &[l] }.render();
    assert!(!svg.contains("<i>") && !svg.contains("<b>") && !svg.contains("<s>") && !svg.contains("<7>") && !svg.contains("<v>"));
    assert!(svg.contains(r#"data-fs="d&lt;i&gt;r&amp;&quot;" data-repeat="1""#));
    assert!(svg.contains(r#"data-scenario="a&lt;s&gt;" data-params="k=&lt;v&gt;""#));
    assert!(svg.contains("<title>d&lt;i&gt;r&amp;&quot; · &lt;b&gt;</title>"));
}

#[test]
fn a_detected_drop_is_marked_in_its_cases_colour() {
    let mut figures = Figures::new();
    figures.set("drop_detected", 1.0, "count", Better::Lower, Kind::Timing);
    figures.set("drop_at_s", 4.0, "s", Better::Higher, Kind::Timing);
    figures.set("drop_depth", 0.46, "ratio", Better::Higher, Kind::Timing);
    // Stored in 10⁶ bytes/s by older runs: drawn in MiB/s.
    figures.set("mbps_before", 52.428_8, "MB/s", Better::Higher, Kind::Timing);
    figures.set("mbps_after", 23.0, "MiB/s", Better::Higher, Kind::Timing);
    let drop = DropMark::from_figures(&figures);
    assert_eq!(drop, Some(DropMark::Detected { at_s: 4.0, depth: Some(0.46), before: Some(50.0), after: Some(23.0) }));
    let points: Vec<TimelinePoint> = (1..=10).map(|i| point(f64::from(i), if i <= 4 { 50.0 } else { 23.0 })).collect();
    let lines = [Line { drop, ..line("xfs", 1, &points) }, Line { drop: Some(DropMark::NotFound), ..line("ext4", 0, &points) }];
    for metric in [Metric::Write, Metric::System] {
        let svg = chart(metric, &lines);
        assert_eq!(attrs(&svg, r#"class="line""#, "data-drop"), ["detected", "none"]);
        assert_eq!(attrs(&svg, r#"class="drop-marker""#, "data-fs"), ["xfs"], "no mark where none was found");
        assert_eq!(attrs(&svg, r#"class="drop-marker""#, "data-at-s"), ["4"]);
        assert!(svg.contains("<title>xfs: throughput drop at 4 s: 50 → 23 MiB/s (×0.46)</title>"), "{svg}");
        assert!(svg.contains(&format!(r#"stroke="{}" stroke-width="1.3" stroke-dasharray="4 3""#, PALETTE[1])));
    }
    assert!(!chart(Metric::Iowait, &lines).contains("drop-marker"), "only where the drop shows");
}

#[test]
fn no_drop_and_undecided_are_told_apart() {
    let mut figures = Figures::new();
    figures.set("drop_detected", 0.0, "count", Better::Lower, Kind::Timing);
    assert_eq!(DropMark::from_figures(&figures), Some(DropMark::NotFound));
    figures.set_missing("drop_detected", "count", Better::Lower, Kind::Timing, "3 whole intervals");
    assert_eq!(DropMark::from_figures(&figures), Some(DropMark::Undecided("3 whole intervals".into())));
    assert_eq!(DropMark::from_figures(&Figures::new()), None, "no detector, no mark");
}

#[test]
fn a_short_last_sample_is_drawn_apart() {
    let points = [point(1.0, 500.0), point(2.0, 510.0), point(3.0, 505.0), point(3.01, 40.0)];
    let svg = chart(Metric::Write, &[line("ext4", 0, &points)]);
    assert_eq!(attrs(&svg, r#"class="line""#, "data-drawn"), ["3"]);
    assert_eq!(attrs(&svg, r#"class="line""#, "data-points"), ["4"]);
    assert_eq!(svg.matches(r#"class="tail""#).count(), 1);
    assert!(svg.contains("<title>ext4: the last 0.01 s, after the work</title>"));
    assert!(!short_tail(&[1.0, 2.0, 3.0]) && short_tail(&[1.0, 2.0, 2.2]) && !short_tail(&[1.0, 1.01]));
}

#[test]
fn quiet_metrics_get_no_chart_and_unknown_rates_are_said() {
    let points = [point(1.0, 5.0), point(2.0, 6.0)];
    let lines = [line("ext4", 0, &points)];
    let charted: Vec<Metric> = Metric::ALL.into_iter().filter(|m| m.charted(&lines)).collect();
    assert_eq!(charted, [Metric::Write, Metric::System, Metric::Iowait], "reads, dirty, writeback and user stayed below their floors");
    let no_device: Vec<TimelinePoint> =
        points.iter().map(|p| TimelinePoint { write_bytes_per_s: None, read_bytes_per_s: None, ..p.clone() }).collect();
    assert!(!Metric::Write.charted(&[line("dir", 0, &no_device)]));
    let svg = chart(Metric::Write, &[line("ext4", 0, &points), line("dir", 1, &no_device)]);
    assert!(svg.contains("not known on dir (no block device)"));
    assert_eq!(attrs(&svg, r#"class="line""#, "data-fs"), ["ext4"]);
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}
