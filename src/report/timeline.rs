//! Timelines for the HTML report: one scenario's cases overlaid, one chart
//! per metric the sampler records (device write and read rates, dirty and
//! writeback memory, the CPU split), every case drawn from its own start
//! at t = 0 in its target's colour, and a throughput drop (direct-stream's
//! detector) marked in the colour of the case it was found in.
//!
//! Design decisions:
//! - Each repeat is its own line, thin and faint when its group has
//!   several, never folded into a median line: a median of timelines is a
//!   run that never happened (repeats whose drop came at 12 s and at 16 s
//!   would make a slow slope at neither), and a drop belongs to one case.
//!   Where repeats agree their faint lines overlap into one darker line.
//! - Groups that share a target's colour (one file system in two runs, or
//!   with two parameter sets) are told apart by dash pattern.
//! - A chart's size is bounded however long the run: its lines share
//!   [`CHART_POINTS`] points. A longer line is cut into buckets, and each
//!   bucket keeps its lowest and its highest point, in time order, so a
//!   one-interval stall or burst survives (an average would hide it).

use std::fmt::{self, Write as _};

use super::axis::{Ticks, short_number};
use super::bars::PALETTE;
use super::markup::escape_xml;
use crate::record::{Figures, TimelinePoint};
use crate::units::MIB;

/// Points one chart draws at most, all its lines together (about 12
/// bytes each): what keeps a chart under about 30 KB.
pub const CHART_POINTS: usize = 1600;

/// Points a line keeps however many share its chart, and at most.
const LINE_POINTS: (usize, usize) = (16, 600);

/// Dash patterns of the groups sharing a colour, in order: solid first.
const DASHES: [&str; 4] = ["", "7 3", "2 2.5", "9 3 2 3"];

// Geometry, in SVG user units (about pixels in the page's three-column
// grid, the bar charts' too).
const WIDTH: f64 = 420.0;
const HEIGHT: f64 = 196.0;
const PLOT_LEFT: f64 = 42.0;
const PLOT_RIGHT: f64 = 410.0;
const PLOT_TOP: f64 = 32.0;
const PLOT_BOTTOM: f64 = 160.0;

/// One quantity over time: the rows of one overlaid chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Bytes written to the target's device per second.
    Write,
    /// Bytes read from it per second.
    Read,
    /// Dirty page cache (the whole machine's).
    Dirty,
    /// Page cache under writeback (the whole machine's).
    Writeback,
    /// System CPU time (with irq and softirq), the whole machine's.
    System,
    /// Idle time with I/O outstanding, the whole machine's.
    Iowait,
    /// User CPU time, the whole machine's.
    User,
    /// The work's own system CPU time.
    WorkSystem,
    /// The work's own user CPU time.
    WorkUser,
    /// Dirty page cache of the work's memory cgroup.
    WorkDirty,
    /// Page cache under writeback of the work's memory cgroup.
    WorkWriteback,
}

impl Metric {
    /// Every metric, in the order the page shows them and keeps them when
    /// it cannot show all: the write rate and its CPU cost (seed 004's
    /// story), the dirty page cache (seed 000's), then the rest; the
    /// work's own before the machine's.
    pub const ALL: [Metric; 11] = [
        Metric::Write,
        Metric::WorkSystem,
        Metric::System,
        Metric::WorkDirty,
        Metric::Dirty,
        Metric::Read,
        Metric::WorkWriteback,
        Metric::Writeback,
        Metric::Iowait,
        Metric::WorkUser,
        Metric::User,
    ];

    /// Its name in `data-metric`.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Write => "write_mibps",
            Metric::Read => "read_mibps",
            Metric::Dirty => "dirty_mib",
            Metric::Writeback => "writeback_mib",
            Metric::System => "system_pct",
            Metric::Iowait => "iowait_pct",
            Metric::User => "user_pct",
            Metric::WorkSystem => "work_system_pct",
            Metric::WorkUser => "work_user_pct",
            Metric::WorkDirty => "work_dirty_mib",
            Metric::WorkWriteback => "work_writeback_mib",
        }
    }

    /// What the chart's heading calls it: whose it is, the work's own or
    /// the whole machine's (the device is the target's).
    pub fn title(self) -> &'static str {
        match self {
            Metric::Write => "device writes",
            Metric::Read => "device reads",
            Metric::Dirty => "dirty page cache (whole machine)",
            Metric::Writeback => "page cache under writeback (whole machine)",
            Metric::System => "system CPU (whole machine)",
            Metric::Iowait => "iowait (whole machine)",
            Metric::User => "user CPU (whole machine)",
            Metric::WorkSystem => "system CPU (the work's)",
            Metric::WorkUser => "user CPU (the work's)",
            Metric::WorkDirty => "dirty page cache (the work's cgroup)",
            Metric::WorkWriteback => "page cache under writeback (the work's cgroup)",
        }
    }

    /// The unit its values are drawn in.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Write | Metric::Read => "MiB/s",
            Metric::Dirty | Metric::Writeback | Metric::WorkDirty | Metric::WorkWriteback => "MiB",
            Metric::System | Metric::Iowait | Metric::User => "% of all CPUs",
            Metric::WorkSystem | Metric::WorkUser => "% of one CPU",
        }
    }

    /// Its value in one sample, in [`Metric::unit`]; `None` when unknown
    /// (no block device under the work; the work's own series in a record
    /// made before they were sampled, or without a cgroup).
    pub fn value(self, p: &TimelinePoint) -> Option<f64> {
        match self {
            Metric::Write => p.write_bytes_per_s.map(|b| b / MIB),
            Metric::Read => p.read_bytes_per_s.map(|b| b / MIB),
            Metric::Dirty => Some(p.dirty_bytes as f64 / MIB),
            Metric::Writeback => Some(p.writeback_bytes as f64 / MIB),
            Metric::System => Some(p.system_pct),
            Metric::Iowait => Some(p.iowait_pct),
            Metric::User => Some(p.user_pct),
            Metric::WorkSystem => p.work_system_pct,
            Metric::WorkUser => p.work_user_pct,
            Metric::WorkDirty => p.work_dirty_bytes.map(|b| b as f64 / MIB),
            Metric::WorkWriteback => p.work_writeback_bytes.map(|b| b as f64 / MIB),
        }
    }

    /// The work's own series a machine-wide one gives way to.
    pub fn work_own(self) -> Option<Metric> {
        match self {
            Metric::System => Some(Metric::WorkSystem),
            Metric::User => Some(Metric::WorkUser),
            Metric::Dirty => Some(Metric::WorkDirty),
            Metric::Writeback => Some(Metric::WorkWriteback),
            _ => None,
        }
    }

    /// Whether `line` is drawn in this metric's chart: a machine-wide
    /// series only for lines whose work's own is not known (a record made
    /// before it was sampled, a case without a cgroup), the work's own
    /// only where known; the device's for every line.
    pub fn draws(self, line: &Line) -> bool {
        let known = |m: Metric| line.points.iter().any(|p| m.value(p).is_some());
        match self {
            Metric::WorkSystem | Metric::WorkUser | Metric::WorkDirty | Metric::WorkWriteback => known(self),
            _ => self.work_own().is_none_or(|own| !known(own)),
        }
    }

    /// Below this everywhere, the metric is background (the kernel reads
    /// metadata now and then, a shell dirties a page) and gets no chart;
    /// `None`: charted whenever known, being what the timeline is read for.
    pub fn floor(self) -> Option<f64> {
        match self {
            Metric::Write | Metric::System | Metric::WorkSystem => None,
            Metric::Read | Metric::Dirty | Metric::Writeback | Metric::WorkDirty | Metric::WorkWriteback => Some(1.0),
            Metric::Iowait | Metric::User | Metric::WorkUser => Some(2.0),
        }
    }

    /// Whether `lines` give this metric a chart: some it draws (see
    /// [`Metric::draws`]) reach its [`Metric::floor`].
    pub fn charted(self, lines: &[Line]) -> bool {
        // Written as one `any` with the floor read first: the shape before
        // (a `peek` in one arm of a match on the floor) was miscompiled by
        // rustc 1.95's optimiser, which indexed a jump table by a 32-bit
        // negative number and crashed the release build on `write`.
        let floor = self.floor();
        lines
            .iter()
            .filter(|l| self.draws(l))
            .flat_map(|l| l.points.iter().filter_map(|p| self.value(p)))
            .any(|v| floor.is_none_or(|f| v >= f))
    }
}

/// What a throughput-drop detector said about a case, read from the
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
        /// Median write rate before, MiB/s.
        before: Option<f64>,
        /// Median write rate after, MiB/s.
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
                    before: mib_per_s(figures, "mbps_before"),
                    after: mib_per_s(figures, "mbps_after"),
                },
                None => DropMark::Undecided("a drop was detected but drop_at_s is missing".to_string()),
            },
            Some(_) => DropMark::NotFound,
            None => DropMark::Undecided(detected.missing.clone().unwrap_or_else(|| "not judged".to_string())),
        })
    }

    /// `detected`, `none` or `undecided`, for `data-drop`.
    pub fn word(&self) -> &'static str {
        match self {
            DropMark::Detected { .. } => "detected",
            DropMark::NotFound => "none",
            DropMark::Undecided(_) => "undecided",
        }
    }

    /// What the detector found, in one phrase.
    pub fn sentence(&self) -> String {
        match self {
            DropMark::Detected { at_s, depth, before, after } => {
                let mut text = format!("throughput drop at {} s", short_number(*at_s));
                if let (Some(b), Some(a)) = (before, after) {
                    let _ = write!(text, ": {} → {} MiB/s", short_number(*b), short_number(*a));
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

/// A rate figure in MiB/s, whether it was stored in MB/s (10⁶ bytes, as
/// older runs did) or in MiB/s.
fn mib_per_s(figures: &Figures, name: &str) -> Option<f64> {
    let figure = figures.get(name)?;
    let value = figure.value?;
    Some(if figure.unit == "MB/s" { value * 1e6 / MIB } else { value })
}

/// One case's line.
#[derive(Debug, Clone)]
pub struct Line<'a> {
    /// Target label (`data-fs`).
    pub fs: &'a str,
    /// Its group's label: target with conditions, parameters, run (the
    /// line's tooltip).
    pub label: &'a str,
    /// Repetition (`data-repeat`).
    pub repeat: u32,
    /// Index into [`PALETTE`] (wrapping): the target's bar colour.
    pub colour: usize,
    /// Index into the dash patterns (wrapping): 0 is solid.
    pub dash: usize,
    /// One of several repeats of its group: drawn thin and faint.
    pub faint: bool,
    /// The sampler's rows, in time order, from the case's start.
    pub points: &'a [TimelinePoint],
    /// The drop detector's finding, when one ran.
    pub drop: Option<DropMark>,
}

impl Line<'_> {
    /// Its stroke: colour, width, opacity and dash.
    pub fn stroke(&self) -> String {
        stroke(self.colour, self.dash, self.faint)
    }

    /// Its tooltip: the group, and the repeat when there are several.
    fn name(&self) -> String {
        if self.faint { format!("{} · repeat {}", self.label, self.repeat) } else { self.label.to_string() }
    }
}

/// The stroke attributes of a line in colour `colour`, dash `dash`.
pub fn stroke(colour: usize, dash: usize, faint: bool) -> String {
    let (width, opacity) = if faint { ("1.5", r#" stroke-opacity="0.7""#) } else { ("2", "") };
    let dash = match DASHES[dash % DASHES.len()] {
        "" => String::new(),
        d => format!(r#" stroke-dasharray="{d}""#),
    };
    format!(r#"stroke="{}" stroke-width="{width}"{opacity}{dash}"#, PALETTE[colour % PALETTE.len()])
}

/// One metric of one scenario's cases (of one parameter set), overlaid.
#[derive(Debug, Clone)]
pub struct OverlayChart<'a> {
    /// Scenario name (`data-scenario`).
    pub scenario: &'a str,
    /// The parameter set its cases share, `k=v, ...` (`data-params`;
    /// empty when the scenario ran one).
    pub params: &'a str,
    /// What is drawn.
    pub metric: Metric,
    /// One per case, in the legend's order.
    pub lines: &'a [Line<'a>],
}

impl OverlayChart<'_> {
    /// The chart as an inline SVG element.
    pub fn render(&self) -> String {
        let mut svg = String::with_capacity(16 * 1024);
        self.write(&mut svg).expect("fmt::Write for String never fails");
        svg
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        let metric = self.metric;
        let end = self.lines.iter().filter_map(|l| l.points.last()).map(|p| p.t_s).fold(0.0, f64::max);
        let top = self.lines.iter().flat_map(|l| l.points.iter().filter_map(|p| metric.value(p))).fold(0.0, f64::max);
        let t_ticks = Ticks::over(0.0, end, 6);
        let y_ticks = Ticks::over(0.0, top, 4);
        let x = |t: f64| PLOT_LEFT + t_ticks.fraction(t).clamp(0.0, 1.0) * (PLOT_RIGHT - PLOT_LEFT);
        let y = |v: f64| PLOT_BOTTOM - y_ticks.fraction(v).clamp(0.0, 1.0) * (PLOT_BOTTOM - PLOT_TOP);
        let per_line = (CHART_POINTS / self.lines.len().max(1)).clamp(LINE_POINTS.0, LINE_POINTS.1);

        writeln!(
            out,
            r#"<svg class="chart timeline" data-scenario="{}" data-params="{}" data-metric="{}" data-unit="{}" data-lines="{}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}">"#,
            escape_xml(self.scenario),
            escape_xml(self.params),
            metric.key(),
            escape_xml(metric.unit()),
            self.lines.len(),
            escape_xml(metric.title())
        )?;
        writeln!(
            out,
            "<title>{}</title>",
            escape_xml(&format!("{} of {}, {}, each from its own start", metric.title(), self.scenario, metric.unit()))
        )?;
        writeln!(
            out,
            r##"<text x="4" y="16" font-size="12.5" font-weight="600" fill="#1b1f24">{} <tspan font-weight="400" fill="#5b6470">{}</tspan></text>"##,
            escape_xml(metric.title()),
            escape_xml(metric.unit())
        )?;
        write_axes(out, &t_ticks, &y_ticks)?;
        let unknown: Vec<&str> = self
            .lines
            .iter()
            .filter(|l| l.points.iter().all(|p| metric.value(p).is_none()))
            .map(|l| l.label)
            .fold(Vec::new(), |mut v, l| {
                if !v.contains(&l) {
                    v.push(l);
                }
                v
            });
        if !unknown.is_empty() {
            writeln!(
                out,
                r##"<text x="{}" y="{}" font-size="10.5" font-style="italic" fill="#5b6470" text-anchor="end">not known on {} (no block device)</text>"##,
                c(PLOT_RIGHT - 4.0),
                c(PLOT_TOP + 12.0),
                escape_xml(&unknown.join(", "))
            )?;
        }
        // What every line shares is said once, and a place's stroke once
        // for its repeats (the lines of one group come together).
        writeln!(out, r#"<g fill="none" stroke-linejoin="round">"#)?;
        let mut stroke_now: Option<String> = None;
        for line in self.lines {
            let stroke = line.stroke();
            if stroke_now.as_ref() != Some(&stroke) {
                if stroke_now.is_some() {
                    writeln!(out, "</g>")?;
                }
                writeln!(out, "<g {stroke}>")?;
                stroke_now = Some(stroke);
            }
            write_line(out, metric, line, per_line, &x, &y)?;
        }
        if stroke_now.is_some() {
            writeln!(out, "</g>")?;
        }
        writeln!(out, "</g>")?;
        // A drop is in the write rate, and seed 004's story is the CPU
        // taking over as it comes: both charts mark where it began.
        if matches!(metric, Metric::Write | Metric::System | Metric::WorkSystem) {
            for line in self.lines {
                if let Some(DropMark::Detected { at_s, .. }) = &line.drop {
                    write_drop_marker(out, line, *at_s, &x)?;
                }
            }
        }
        writeln!(out, "</svg>")
    }
}

/// A coordinate with at most one decimal: a tenth of a unit is finer than
/// a pixel at the chart's size, and every point costs fewer bytes.
fn c(value: f64) -> String {
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// A line's coordinate to the whole unit: the chart is drawn about one
/// unit a pixel, and a point costs three or four bytes less than with a
/// decimal.
fn whole_unit(value: f64) -> String {
    format!("{}", value.round() as i64)
}

/// Grid, tick labels and the time axis's title, each kind in one group
/// that says their shared attributes once.
fn write_axes(out: &mut String, t_ticks: &Ticks, y_ticks: &Ticks) -> fmt::Result {
    let y = |tick: f64| PLOT_BOTTOM - y_ticks.fraction(tick) * (PLOT_BOTTOM - PLOT_TOP);
    let x = |tick: f64| PLOT_LEFT + t_ticks.fraction(tick) * (PLOT_RIGHT - PLOT_LEFT);
    let mut grid = String::new();
    for tick in y_ticks.values().into_iter().filter(|t| *t != y_ticks.lo) {
        let _ = write!(grid, "M{} {}H{}", c(PLOT_LEFT), c(y(tick)), c(PLOT_RIGHT));
    }
    writeln!(out, r##"<path d="{grid}" stroke="#e3e6ea"/>"##)?;
    let mut axis = format!("M{} {}H{}", c(PLOT_LEFT), c(PLOT_BOTTOM), c(PLOT_RIGHT));
    for tick in t_ticks.values() {
        let _ = write!(axis, "M{} {}v4", c(x(tick)), c(PLOT_BOTTOM));
    }
    writeln!(out, r##"<path class="axis" d="{axis}" stroke="#8a929c"/>"##)?;
    writeln!(out, r##"<g font-size="10" fill="#5b6470" text-anchor="end">"##)?;
    for tick in y_ticks.values() {
        writeln!(out, r#"<text x="{}" y="{}">{}</text>"#, c(PLOT_LEFT - 5.0), c(y(tick) + 3.5), escape_xml(&y_ticks.label(tick)))?;
    }
    writeln!(out, r##"</g><g font-size="10" fill="#5b6470" text-anchor="middle">"##)?;
    for tick in t_ticks.values() {
        writeln!(out, r#"<text x="{}" y="{}">{}</text>"#, c(x(tick)), c(PLOT_BOTTOM + 15.0), escape_xml(&t_ticks.label(tick)))?;
    }
    writeln!(
        out,
        r##"<text x="{}" y="{}" fill="#3a4048">s from each case's start</text></g>"##,
        c((PLOT_LEFT + PLOT_RIGHT) / 2.0),
        c(PLOT_BOTTOM + 29.0)
    )
}

/// One case's line, broken where the value is unknown, at most
/// `max_points` points; a short last interval (the partial one after the
/// work stopped) dotted apart: its rate is that of a few milliseconds, and
/// as a full point it would look like the very drop a timeline is read for.
fn write_line(
    out: &mut String,
    metric: Metric,
    line: &Line,
    max_points: usize,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> fmt::Result {
    let times: Vec<f64> = line.points.iter().map(|p| p.t_s).collect();
    let values: Vec<Option<f64>> = line.points.iter().map(|p| metric.value(p)).collect();
    let whole = if short_tail(&times) { times.len() - 1 } else { times.len() };
    let points = downsample(&times[..whole], &values[..whole], max_points);
    let drawn = points.iter().flatten().count();
    if drawn == 0 {
        return Ok(());
    }
    let mut d = String::with_capacity(drawn * 12);
    let mut pen_down = false;
    for point in &points {
        match point {
            Some((t, v)) => {
                let _ = write!(d, "{}{} {}", if pen_down { "L" } else { "M" }, whole_unit(x(*t)), whole_unit(y(*v)));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    write!(
        out,
        r#"<path class="line" data-fs="{}" data-repeat="{}" data-points="{}" data-drawn="{drawn}""#,
        escape_xml(line.fs),
        line.repeat,
        line.points.len()
    )?;
    if let Some(drop) = &line.drop {
        write!(out, r#" data-drop="{}""#, drop.word())?;
    }
    let end = times.last().copied().unwrap_or(0.0);
    writeln!(
        out,
        r#" d="{d}"><title>{}</title></path>"#,
        escape_xml(&line.name())
    )?;
    // A lone point would draw nothing as a line: give it a dot.
    if drawn == 1 {
        if let Some((t, v)) = points.iter().flatten().next() {
            writeln!(out, r#"<circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#, c(x(*t)), c(y(*v)), PALETTE[line.colour % PALETTE.len()])?;
        }
    }
    if let (Some(Some(from)), Some(Some(to))) = (values[..whole].last(), values.last()) {
        if whole < times.len() {
            writeln!(
                out,
                r#"<path class="tail" d="M{} {}L{} {}" stroke-width="1.3" stroke-dasharray="1.5 3" stroke-opacity="0.6"><title>{}: the last {} s, after the work</title></path>"#,
                whole_unit(x(times[whole - 1])),
                whole_unit(y(*from)),
                whole_unit(x(end)),
                whole_unit(y(*to)),
                escape_xml(&line.name()),
                short_number(end - times[whole - 1])
            )?;
        }
    }
    Ok(())
}

/// Where a case's drop began: a dashed rule in its colour, a triangle on
/// top, and the detector's numbers in its tooltip.
fn write_drop_marker(out: &mut String, line: &Line, at_s: f64, x: &dyn Fn(f64) -> f64) -> fmt::Result {
    let mx = x(at_s);
    let colour = PALETTE[line.colour % PALETTE.len()];
    let title = escape_xml(&format!("{}: {}", line.name(), line.drop.as_ref().map(DropMark::sentence).unwrap_or_default()));
    writeln!(
        out,
        r#"<g class="drop-marker" data-fs="{}" data-repeat="{}" data-at-s="{at_s}"><title>{title}</title><line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="{colour}" stroke-width="1.3" stroke-dasharray="4 3"/><path d="M{} {}l8 0l-4 7z" fill="{colour}"/></g>"#,
        escape_xml(line.fs),
        line.repeat,
        c(PLOT_TOP),
        c(PLOT_BOTTOM),
        c(mx - 4.0),
        c(PLOT_TOP - 7.0),
        x = c(mx),
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
mod tests;
