//! The timeline of one case for the HTML report: the device's write (and
//! read) rate and the CPU split over the run, as two small line charts side
//! by side, with a detected throughput drop (direct-stream's detector)
//! marked where it began.
//!
//! The one design decision: at most [`MAX_POINTS`] points are drawn per
//! line. A longer timeline is cut into buckets, and each bucket keeps its
//! lowest and its highest point, in time order, so a one-interval stall or
//! burst survives (an average per bucket would smooth it away) and the
//! page stays small however long the run.

use std::fmt::{self, Write as _};

use super::axis::{Ticks, short_number};
use super::markup::{escape_xml, num};
use crate::record::{Figures, TimelinePoint};

/// Points drawn per line, at most.
pub const MAX_POINTS: usize = 600;

// Geometry, in SVG user units.
const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 236.0;
const PANEL_LEFT: [f64; 2] = [62.0, 562.0];
const PANEL_WIDTH: f64 = 400.0;
const PLOT_TOP: f64 = 72.0;
const PLOT_BOTTOM: f64 = 196.0;

const WRITE_COLOUR: &str = "#0072b2";
const READ_COLOUR: &str = "#009e73";
const USER_COLOUR: &str = "#0072b2";
const SYSTEM_COLOUR: &str = "#d55e00";
const IOWAIT_COLOUR: &str = "#cc79a7";
const DROP_COLOUR: &str = "#c0392b";
const LEVEL_COLOUR: &str = "#6b6b6b";

/// What a throughput-drop detector said about the run, read from the
/// figures it sets (`drop_detected`, `drop_at_s`, `drop_depth`,
/// `mbps_before`, `mbps_after`).
#[derive(Debug, Clone, PartialEq)]
pub enum DropMark {
    /// A sustained drop began at `at_s` seconds into the timeline.
    Detected {
        /// Where the first low interval starts.
        at_s: f64,
        /// After over before.
        depth: Option<f64>,
        /// Median write rate before, MB/s.
        before: Option<f64>,
        /// Median write rate after, MB/s.
        after: Option<f64>,
    },
    /// The detector judged the run and found no sustained drop.
    NotFound,
    /// The detector could not judge, and why.
    Undecided(String),
}

impl DropMark {
    /// The mark for a case's figures; `None` when no detector ran (the
    /// case has no `drop_detected` figure).
    pub fn from_figures(figures: &Figures) -> Option<DropMark> {
        let detected = figures.get("drop_detected")?;
        Some(match detected.value {
            Some(v) if v >= 0.5 => match figures.value("drop_at_s") {
                Some(at_s) => DropMark::Detected {
                    at_s,
                    depth: figures.value("drop_depth"),
                    before: figures.value("mbps_before"),
                    after: figures.value("mbps_after"),
                },
                None => DropMark::Undecided("a drop was detected but drop_at_s is missing".to_string()),
            },
            Some(_) => DropMark::NotFound,
            None => DropMark::Undecided(detected.missing.clone().unwrap_or_else(|| "not judged".to_string())),
        })
    }

    fn word(&self) -> &'static str {
        match self {
            DropMark::Detected { .. } => "detected",
            DropMark::NotFound => "none",
            DropMark::Undecided(_) => "undecided",
        }
    }

    /// One sentence for the chart's heading.
    fn sentence(&self) -> String {
        match self {
            DropMark::Detected { at_s, depth, before, after } => {
                let mut text = format!("throughput drop detected at {} s", short_number(*at_s));
                if let (Some(b), Some(a)) = (before, after) {
                    let _ = write!(text, ": {} → {} MB/s", short_number(*b), short_number(*a));
                }
                if let Some(d) = depth {
                    let _ = write!(text, " (×{})", short_number(*d));
                }
                text
            }
            DropMark::NotFound => "no sustained throughput drop".to_string(),
            DropMark::Undecided(why) => format!("drop not judged: {why}"),
        }
    }
}

/// The timeline chart of one case.
#[derive(Debug, Clone)]
pub struct TimelineChart<'a> {
    /// Scenario name (`data-scenario`).
    pub scenario: &'a str,
    /// Target label (`data-fs`).
    pub fs: &'a str,
    /// Repetition (`data-repeat`).
    pub repeat: u32,
    /// The heading: target, parameters, repeat.
    pub label: &'a str,
    /// The sampler's rows, in time order.
    pub points: &'a [TimelinePoint],
    /// The drop detector's finding, when one ran.
    pub drop: Option<DropMark>,
}

/// One line of a panel.
struct Series<'a> {
    name: &'a str,
    legend: &'a str,
    colour: &'a str,
    dashed: bool,
    values: Vec<Option<f64>>,
}

impl TimelineChart<'_> {
    /// The chart as an inline SVG element.
    pub fn render(&self) -> String {
        let mut svg = String::with_capacity(16 * 1024);
        self.write(&mut svg).expect("fmt::Write for String never fails");
        svg
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        let times: Vec<f64> = self.points.iter().map(|p| p.t_s).collect();
        let end = times.iter().copied().fold(0.0, f64::max);
        let t_ticks = Ticks::over(0.0, end, 6);
        let mb = |v: Option<f64>| v.map(|b| b / 1e6);
        let write = Series {
            name: "write_mbps",
            legend: "write",
            colour: WRITE_COLOUR,
            dashed: false,
            values: self.points.iter().map(|p| mb(p.write_bytes_per_s)).collect(),
        };
        let read = Series {
            name: "read_mbps",
            legend: "read",
            colour: READ_COLOUR,
            dashed: true,
            values: self.points.iter().map(|p| mb(p.read_bytes_per_s)).collect(),
        };
        // Reads get a line only when there were some worth one (the
        // kernel reads metadata now and then: a few KB/s is not a read).
        let any_read = read.values.iter().flatten().any(|v| *v >= 1.0);
        let mut rates = vec![write];
        if any_read {
            rates.push(read);
        }
        let cpu = vec![
            Series { name: "user_pct", legend: "user", colour: USER_COLOUR, dashed: false, values: self.points.iter().map(|p| Some(p.user_pct)).collect() },
            Series { name: "system_pct", legend: "system", colour: SYSTEM_COLOUR, dashed: false, values: self.points.iter().map(|p| Some(p.system_pct)).collect() },
            Series { name: "iowait_pct", legend: "iowait", colour: IOWAIT_COLOUR, dashed: true, values: self.points.iter().map(|p| Some(p.iowait_pct)).collect() },
        ];
        // A last sample much shorter than the others (the partial interval
        // after the work stopped) is drawn apart, faintly: its rate is
        // that of a few milliseconds, and as a full point it would look
        // like the very drop this chart is read for.
        let whole = if short_tail(&times) { times.len() - 1 } else { times.len() };
        let drawn = rates
            .iter()
            .chain(&cpu)
            .map(|s| downsample(&times[..whole], &s.values[..whole], MAX_POINTS).iter().flatten().count())
            .max()
            .unwrap_or(0)
            + (times.len() - whole);

        write!(
            out,
            r#"<svg class="chart timeline" data-scenario="{s}" data-fs="{fs}" data-repeat="{r}" data-points="{n}" data-drawn="{drawn}""#,
            s = escape_xml(self.scenario),
            fs = escape_xml(self.fs),
            r = self.repeat,
            n = self.points.len(),
        )?;
        if let Some(drop) = &self.drop {
            write!(out, r#" data-drop="{}""#, drop.word())?;
            if let DropMark::Detected { at_s, .. } = drop {
                write!(out, r#" data-drop-at-s="{at_s}""#)?;
            }
        }
        writeln!(out, r#" viewBox="0 0 {} {}" role="img" aria-label="timeline">"#, num(WIDTH), num(HEIGHT))?;
        let mut span = format!("{} samples over {} s", self.points.len(), short_number(end));
        if whole < times.len() {
            let last = times[whole] - times[whole - 1];
            let _ = write!(span, "; the last, dotted, covers only {} s", short_number(last));
        }
        writeln!(out, "<title>{}</title>", escape_xml(&format!("{} — {span}", self.label)))?;
        writeln!(
            out,
            r##"<text x="8" y="18" font-size="14" font-weight="600" fill="#1b1f24">{} <tspan font-weight="400" fill="#5b6470">— {}</tspan></text>"##,
            escape_xml(self.label),
            escape_xml(&span)
        )?;
        if let Some(drop) = &self.drop {
            let colour = if matches!(drop, DropMark::Detected { .. }) { DROP_COLOUR } else { "#5b6470" };
            writeln!(
                out,
                r#"<text class="drop-note" x="8" y="36" font-size="12" fill="{colour}">{}</text>"#,
                escape_xml(&drop.sentence())
            )?;
        }

        let rate_max = rates.iter().flat_map(|s| s.values.iter().flatten()).copied().fold(0.0, f64::max);
        let rate_max = match &self.drop {
            Some(DropMark::Detected { before: Some(b), .. }) => rate_max.max(*b),
            _ => rate_max,
        };
        let panels = [
            (Ticks::over(0.0, rate_max, 4), "device MB/s (10⁶ bytes/s)", &rates),
            (Ticks { lo: 0.0, hi: 100.0, step: 25.0 }, "CPU, % of all CPUs", &cpu),
        ];
        for (index, (y_ticks, title, series)) in panels.iter().enumerate() {
            let left = PANEL_LEFT[index];
            let x = |t: f64| left + t_ticks.fraction(t).clamp(0.0, 1.0) * PANEL_WIDTH;
            let y = |v: f64| PLOT_BOTTOM - y_ticks.fraction(v).clamp(0.0, 1.0) * (PLOT_BOTTOM - PLOT_TOP);
            write_frame(out, left, &t_ticks, y_ticks, title, series)?;
            if index == 0 && series[0].values.iter().all(Option::is_none) {
                writeln!(
                    out,
                    r##"<text x="{}" y="{}" font-size="12" font-style="italic" fill="#5b6470" text-anchor="middle">no device write rate (no block device under the work)</text>"##,
                    num(left + PANEL_WIDTH / 2.0),
                    num((PLOT_TOP + PLOT_BOTTOM) / 2.0)
                )?;
            }
            if let Some(DropMark::Detected { at_s, before, after, .. }) = &self.drop {
                if index == 0 {
                    write_levels(out, *at_s, end, *before, *after, &x, &y)?;
                }
                write_drop_marker(out, *at_s, index == 0, &x)?;
            }
            for s in series.iter() {
                write_series(out, s, &times, whole, &x, &y)?;
            }
        }
        writeln!(out, "</svg>")
    }
}

/// A panel's grid, tick labels, title and legend.
fn write_frame(out: &mut String, left: f64, t_ticks: &Ticks, y_ticks: &Ticks, title: &str, series: &[Series]) -> fmt::Result {
    let right = left + PANEL_WIDTH;
    writeln!(out, r##"<text x="{}" y="56" font-size="12" font-weight="600" fill="#3a4048">{}</text>"##, num(left), escape_xml(title))?;
    // The legend, right-aligned on the title's line.
    let mut legend_x = right;
    for s in series.iter().rev() {
        let width = 30.0 + 6.5 * s.legend.chars().count() as f64;
        legend_x -= width;
        let dash = if s.dashed { r#" stroke-dasharray="5 3""# } else { "" };
        writeln!(
            out,
            r##"<line x1="{x1}" x2="{x2}" y1="52" y2="52" stroke="{c}" stroke-width="2.2"{dash}/><text x="{tx}" y="56" font-size="11" fill="#3a4048">{l}</text>"##,
            x1 = num(legend_x),
            x2 = num(legend_x + 18.0),
            c = s.colour,
            tx = num(legend_x + 22.0),
            l = escape_xml(s.legend),
        )?;
    }
    for tick in y_ticks.values() {
        let y = num(PLOT_BOTTOM - y_ticks.fraction(tick) * (PLOT_BOTTOM - PLOT_TOP));
        let stroke = if tick == y_ticks.lo { "#8a929c" } else { "#e3e6ea" };
        writeln!(out, r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke="{stroke}"/>"#, num(left), num(right))?;
        writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="10" fill="#5b6470" text-anchor="end">{}</text>"##,
            num(left - 5.0),
            num(PLOT_BOTTOM - y_ticks.fraction(tick) * (PLOT_BOTTOM - PLOT_TOP) + 3.5),
            escape_xml(&y_ticks.label(tick))
        )?;
    }
    for tick in t_ticks.values() {
        let x = num(left + t_ticks.fraction(tick) * PANEL_WIDTH);
        writeln!(out, r##"<line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="#8a929c"/>"##, num(PLOT_BOTTOM), num(PLOT_BOTTOM + 4.0))?;
        writeln!(
            out,
            r##"<text x="{x}" y="{}" font-size="10" fill="#5b6470" text-anchor="middle">{}</text>"##,
            num(PLOT_BOTTOM + 15.0),
            escape_xml(&t_ticks.label(tick))
        )?;
    }
    writeln!(
        out,
        r##"<text x="{}" y="{}" font-size="10.5" fill="#3a4048" text-anchor="middle">seconds into the run</text>"##,
        num(left + PANEL_WIDTH / 2.0),
        num(PLOT_BOTTOM + 31.0)
    )
}

/// Whether the last of `times` ends an interval less than half as long
/// as the usual one (the median of the others; the first starts at 0).
fn short_tail(times: &[f64]) -> bool {
    if times.len() < 3 {
        return false;
    }
    let mut spans: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    spans.insert(0, times[0]);
    let last = spans.pop().unwrap_or(0.0);
    spans.sort_by(f64::total_cmp);
    last < spans[spans.len() / 2] / 2.0
}

/// One line over the first `whole` points, broken where the value is
/// unknown; the points after them (a short last interval) dotted.
fn write_series(
    out: &mut String,
    s: &Series,
    times: &[f64],
    whole: usize,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> fmt::Result {
    if let (Some(Some(from)), Some(Some(to))) = (s.values[..whole].last(), s.values.last()) {
        if whole < times.len() {
            writeln!(
                out,
                r#"<path class="tail" data-series="{}" d="M{} {} L{} {}" fill="none" stroke="{}" stroke-width="1.5" stroke-dasharray="1.5 3" stroke-opacity="0.6"><title>the last sample: {} s after the work stopped</title></path>"#,
                s.name,
                num(x(times[whole - 1])),
                num(y(*from)),
                num(x(times[times.len() - 1])),
                num(y(*to)),
                short_number(times[times.len() - 1] - times[whole - 1]),
                s.colour
            )?;
        }
    }
    let points = downsample(&times[..whole], &s.values[..whole], MAX_POINTS);
    let mut d = String::with_capacity(points.len() * 14);
    let mut pen_down = false;
    for point in &points {
        match point {
            Some((t, v)) => {
                let _ = write!(d, "{}{} {} ", if pen_down { "L" } else { "M" }, num(x(*t)), num(y(*v)));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    if d.is_empty() {
        return Ok(());
    }
    let dash = if s.dashed { r#" stroke-dasharray="5 3""# } else { "" };
    writeln!(
        out,
        r#"<path class="series" data-series="{}" data-drawn="{}" d="{}" fill="none" stroke="{}" stroke-width="1.8" stroke-linejoin="round"{dash}/>"#,
        s.name,
        points.iter().flatten().count(),
        d.trim_end(),
        s.colour
    )?;
    // A lone point would draw nothing as a line: give it a dot.
    if points.iter().flatten().count() == 1 {
        if let Some((t, v)) = points.iter().flatten().next() {
            writeln!(out, r#"<circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#, num(x(*t)), num(y(*v)), s.colour)?;
        }
    }
    Ok(())
}

/// The vertical drop marker, labelled in the throughput panel.
fn write_drop_marker(out: &mut String, at_s: f64, labelled: bool, x: &dyn Fn(f64) -> f64) -> fmt::Result {
    let mx = num(x(at_s));
    writeln!(
        out,
        r#"<line class="drop-marker" data-at-s="{at_s}" x1="{mx}" x2="{mx}" y1="{}" y2="{}" stroke="{DROP_COLOUR}" stroke-width="1.6" stroke-dasharray="4 3"><title>drop begins at {} s</title></line>"#,
        num(PLOT_TOP - 6.0),
        num(PLOT_BOTTOM),
        short_number(at_s)
    )?;
    if labelled {
        writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" font-weight="600" fill="{DROP_COLOUR}">drop at {} s</text>"#,
            num(x(at_s) + 4.0),
            num(PLOT_TOP + 4.0),
            short_number(at_s)
        )?;
    }
    Ok(())
}

/// The median rates before and after a drop, as dashed level lines.
fn write_levels(
    out: &mut String,
    at_s: f64,
    end_s: f64,
    before: Option<f64>,
    after: Option<f64>,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> fmt::Result {
    for (level, from, to, what) in [(before, 0.0, at_s, "median before"), (after, at_s, end_s, "median after")] {
        let Some(level) = level else { continue };
        let ly = num(y(level));
        writeln!(
            out,
            r#"<line class="level" x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{LEVEL_COLOUR}" stroke-width="1.2" stroke-dasharray="2 2"><title>{what}: {} MB/s</title></line>"#,
            num(x(from)),
            num(x(to)),
            short_number(level)
        )?;
    }
    Ok(())
}

/// At most `max` points of the line (`times[i]`, `values[i]`), `None`
/// where it breaks (an unknown value). Short lines come back whole; a
/// longer one is cut into `max / 2` buckets of neighbouring points, each
/// giving its lowest and highest point in time order.
pub fn downsample(times: &[f64], values: &[Option<f64>], max: usize) -> Vec<Option<(f64, f64)>> {
    let n = times.len().min(values.len());
    if n <= max {
        return (0..n).map(|i| values[i].map(|v| (times[i], v))).collect();
    }
    let buckets = (max / 2).max(1);
    let mut out = Vec::with_capacity(2 * buckets);
    for bucket in 0..buckets {
        let mut low: Option<(usize, f64)> = None;
        let mut high: Option<(usize, f64)> = None;
        let first = bucket * n / buckets;
        for (offset, value) in values[first..(bucket + 1) * n / buckets].iter().enumerate() {
            let (i, Some(v)) = (first + offset, *value) else { continue };
            if low.is_none_or(|(_, l)| v < l) {
                low = Some((i, v));
            }
            if high.is_none_or(|(_, h)| v > h) {
                high = Some((i, v));
            }
        }
        match (low, high) {
            (Some(l), Some(h)) => {
                let (first, second) = if l.0 <= h.0 { (l, h) } else { (h, l) };
                out.push(Some((times[first.0], first.1)));
                if second.0 != first.0 {
                    out.push(Some((times[second.0], second.1)));
                }
            }
            // A bucket with no known value breaks the line once.
            _ if out.last() != Some(&None) => out.push(None),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Kind};

    fn point(t_s: f64, write_mbps: f64) -> TimelinePoint {
        TimelinePoint {
            t_s,
            read_bytes_per_s: Some(0.0),
            write_bytes_per_s: Some(write_mbps * 1e6),
            user_pct: 1.0,
            system_pct: 10.0,
            iowait_pct: 5.0,
            idle_pct: 84.0,
            dirty_bytes: 0,
            writeback_bytes: 0,
        }
    }

    fn chart(points: &[TimelinePoint], drop: Option<DropMark>) -> String {
        TimelineChart { scenario: "direct-stream", fs: "ext3", repeat: 1, label: "ext3 · repeat 1", points, drop }.render()
    }

    #[test]
    fn short_lines_are_drawn_whole() {
        let times = [1.0, 2.0, 3.0];
        let values = [Some(1.0), None, Some(3.0)];
        assert_eq!(downsample(&times, &values, 600), [Some((1.0, 1.0)), None, Some((3.0, 3.0))]);
    }

    #[test]
    fn long_lines_keep_at_most_600_points_and_their_extremes() {
        let n = 100_000;
        let times: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
        let mut values: Vec<Option<f64>> = (0..n).map(|i| Some(50.0 + (i % 7) as f64)).collect();
        values[31_337] = Some(0.5); // one stalled interval
        values[77_777] = Some(900.0); // one burst
        let drawn = downsample(&times, &values, MAX_POINTS);
        assert!(drawn.len() <= MAX_POINTS, "{}", drawn.len());
        assert!(drawn.contains(&Some((times[31_337], 0.5))), "the stall survives");
        assert!(drawn.contains(&Some((times[77_777], 900.0))), "the burst survives");
        let t: Vec<f64> = drawn.iter().flatten().map(|p| p.0).collect();
        assert!(t.windows(2).all(|w| w[0] < w[1]), "in time order");
    }

    #[test]
    fn a_long_timeline_renders_bounded() {
        let points: Vec<TimelinePoint> = (1..=20_000).map(|i| point(f64::from(i), f64::from(i % 10))).collect();
        let svg = chart(&points, None);
        assert!(svg.contains(r#"data-points="20000" data-drawn="600""#), "{}", &svg[..300]);
        assert!(svg.len() < 64 * 1024, "{} bytes", svg.len());
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches("</svg>").count(), 1);
    }

    #[test]
    fn a_detected_drop_is_marked_where_it_began() {
        let mut figures = Figures::new();
        figures.set("drop_detected", 1.0, "count", Better::Lower, Kind::Timing);
        figures.set("drop_at_s", 4.0, "s", Better::Higher, Kind::Timing);
        figures.set("drop_depth", 0.46, "ratio", Better::Higher, Kind::Timing);
        figures.set("mbps_before", 49.0, "MB/s", Better::Higher, Kind::Timing);
        figures.set("mbps_after", 23.0, "MB/s", Better::Higher, Kind::Timing);
        let drop = DropMark::from_figures(&figures);
        assert!(matches!(drop, Some(DropMark::Detected { at_s, .. }) if at_s == 4.0));
        let points: Vec<TimelinePoint> = (1..=10).map(|i| point(f64::from(i), if i <= 4 { 49.0 } else { 23.0 })).collect();
        let svg = chart(&points, drop);
        assert!(svg.contains(r#"data-drop="detected" data-drop-at-s="4""#));
        assert_eq!(svg.matches(r#"class="drop-marker" data-at-s="4""#).count(), 2, "in both panels");
        assert!(svg.contains(">drop at 4 s</text>"));
        assert!(svg.contains("throughput drop detected at 4 s: 49 → 23 MB/s (×0.46)"));
        assert_eq!(svg.matches(r#"class="level""#).count(), 2);
    }

    #[test]
    fn no_drop_and_undecided_are_said() {
        let mut figures = Figures::new();
        figures.set("drop_detected", 0.0, "count", Better::Lower, Kind::Timing);
        assert_eq!(DropMark::from_figures(&figures), Some(DropMark::NotFound));
        figures.set_missing("drop_detected", "count", Better::Lower, Kind::Timing, "3 whole intervals <7>");
        let drop = DropMark::from_figures(&figures);
        assert_eq!(drop, Some(DropMark::Undecided("3 whole intervals <7>".into())));
        let svg = chart(&[point(1.0, 5.0), point(2.0, 6.0)], drop);
        assert!(svg.contains(r#"data-drop="undecided""#));
        assert!(svg.contains("drop not judged: 3 whole intervals &lt;7&gt;"));
        assert!(!svg.contains("drop-marker"));
        assert_eq!(DropMark::from_figures(&Figures::new()), None, "no detector, no mark");
    }

    #[test]
    fn a_short_last_sample_is_drawn_apart() {
        let points = [point(1.0, 500.0), point(2.0, 510.0), point(3.0, 505.0), point(3.01, 40.0)];
        let svg = chart(&points, None);
        assert!(svg.contains("4 samples over 3.01 s; the last, dotted, covers only 0.01 s"));
        assert_eq!(svg.matches(r#"class="tail""#).count(), 4, "write and the three CPU lines");
        assert!(svg.contains(r#"data-points="4" data-drawn="4""#));
        assert!(!short_tail(&[1.0, 2.0, 3.0]) && short_tail(&[1.0, 2.0, 2.2]) && !short_tail(&[1.0, 1.01]));
    }

    #[test]
    fn lines_for_write_and_cpu() {
        let svg = chart(&[point(1.0, 5.0), point(2.0, 6.0)], None);
        for series in ["write_mbps", "user_pct", "system_pct", "iowait_pct"] {
            assert!(svg.contains(&format!(r#"data-series="{series}""#)), "{series}");
        }
        assert!(!svg.contains("read_mbps"), "no read line when nothing was read");
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
