//! One figure against the kernel version: the kernels along the x axis in
//! version order, evenly spaced (a release is a name, not a quantity), a
//! dot per repeat and a line per series through its medians, the host's
//! kernel on a shaded band. The value axis is the bar charts' (`axis`):
//! from zero, or logarithmic past a hundredfold span, in the unit the rest
//! of the page scales to.
//!
//! As on every chart of the page, the numbers ride in `data-` attributes
//! (a dot its value and repeat, a median mark its median, the chart its
//! kernels in order) and each mark has a tooltip; a repeat under emulation
//! (a TCG guest's timing) is a hollow dot. A chart with more than
//! [`MAX_DOTS`] repeats draws the medians alone, and says so.

use std::fmt::{self, Write as _};

use super::{Change, FigureAcross, Kernel};
use crate::record::EMULATED_MARK;
use crate::record::guest::EMULATED_FOOTNOTE;
use crate::record::release::short_release;
use crate::report::axis::{Display, Scale};
use crate::report::bars::{PALETTE, better_sentence};
use crate::report::markup::{escape_xml as escape, num, shorten};

/// Repeats a chart draws as dots at most; past it, the medians alone.
pub const MAX_DOTS: usize = 480;

const WIDTH: f64 = 600.0;
const PLOT_TOP: f64 = 58.0;
const PLOT_HEIGHT: f64 = 190.0;
const LEFT: f64 = 66.0;
const RIGHT: f64 = 16.0;
/// Characters of a kernel's label drawn before an ellipsis.
const LABEL_CHARS: usize = 22;
/// About how wide a character of a tick label is.
const CHAR_WIDTH: f64 = 6.0;

/// The colour of series `index`: the bar charts' palette, in order.
pub fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// What one chart draws: a figure of a scenario over its series.
pub struct Chart<'c, 'a> {
    /// The scenario (`data-scenario`).
    pub scenario: &'c str,
    /// The survey's kernels, in version order.
    pub kernels: &'c [Kernel],
    /// The scenario's series, in order (their colours).
    pub series: &'c [String],
    /// The figure and its cells.
    pub figure: &'c FigureAcross<'a>,
    /// What the figure means, when known: the chart's title.
    pub about: Option<&'c str>,
}

/// The x axis: a slot per kernel.
struct Slots {
    left: f64,
    width: f64,
    count: usize,
}

impl Slots {
    fn centre(&self, kernel: usize) -> f64 {
        self.left + (kernel as f64 + 0.5) * self.width / self.count as f64
    }

    fn slot(&self) -> f64 {
        self.width / self.count as f64
    }

    /// Where series `s` of `of` sits within a slot, so series at one
    /// kernel do not hide each other.
    fn offset(&self, s: usize, of: usize) -> f64 {
        let step = (self.slot() * 0.5 / of as f64).min(9.0);
        (s as f64 - (of as f64 - 1.0) / 2.0) * step
    }
}

/// Tick labels: the releases without their flavour when that leaves them
/// apart, else whole.
fn tick_labels(kernels: &[Kernel]) -> Vec<String> {
    let short: Vec<(&str, bool)> = kernels.iter().map(|k| (short_release(&k.release), k.host)).collect();
    let distinct = short.iter().enumerate().all(|(i, a)| !short[i + 1..].contains(a));
    kernels
        .iter()
        .map(|k| if distinct { short_release(&k.release) } else { &k.release })
        .map(|l| shorten(l, LABEL_CHARS))
        .collect()
}

impl Chart<'_, '_> {
    /// The chart as an inline SVG element.
    pub fn render(&self) -> String {
        let mut svg = String::with_capacity(8192);
        self.write(&mut svg).expect("fmt::Write for String never fails");
        svg
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        let figure = self.figure;
        let spreads: Vec<_> = figure.cells.iter().flat_map(|row| row.iter().filter_map(|c| c.spread())).collect();
        let largest = spreads.iter().fold(0.0f64, |m, s| m.max(s.min.abs()).max(s.max.abs()));
        let display = Display::for_unit(&figure.unit, largest);
        let scaled: Vec<f64> = spreads.iter().flat_map(|s| [s.min, s.median, s.max]).map(|v| display.scaled(v)).collect();
        let scale = Scale::over(&scaled, display.is_bytes(), 4);
        let dots: usize = figure.cells.iter().flatten().map(|c| c.repeats.len()).sum();
        let draw_dots = dots <= MAX_DOTS;

        let labels = tick_labels(self.kernels);
        let slots = Slots { left: LEFT, width: WIDTH - LEFT - RIGHT, count: self.kernels.len().max(1) };
        let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR_WIDTH;
        let slanted = widest > slots.slot() - 6.0;
        let plot_bottom = PLOT_TOP + PLOT_HEIGHT;
        let labels_height = if slanted { widest * 0.6 + 14.0 } else { 18.0 };
        let height = plot_bottom + labels_height + 26.0;
        let y = |value: f64| plot_bottom - scale.fraction(display.scaled(value)).clamp(0.0, 1.0) * PLOT_HEIGHT;

        let releases: Vec<&str> = self.kernels.iter().map(|k| k.release.as_str()).collect();
        writeln!(
            out,
            r#"<svg class="chart across" data-scenario="{s}" data-figure="{f}" data-unit="{u}" data-better="{b}" data-kind="{k}" data-change="{c}" data-kernels="{kernels}" data-series="{n}" data-scale="{scale}" data-dots="{dots}" viewBox="0 0 {w} {h}" role="img" aria-label="{f} against the kernel release">"#,
            s = escape(self.scenario),
            f = escape(&figure.name),
            u = escape(&figure.unit),
            b = figure.better.as_str(),
            k = figure.kind.as_str(),
            c = figure.change.as_str(),
            kernels = escape(&releases.join(" ")),
            n = self.series.len(),
            scale = scale.name(),
            dots = if draw_dots { dots } else { 0 },
            w = num(WIDTH),
            h = num(height),
        )?;
        let about = self.about.map(|a| format!(": {a}")).unwrap_or_default();
        writeln!(out, "<title>{}</title>", escape(&format!("{} against the kernel release{about}", figure.name)))?;
        writeln!(
            out,
            r##"<text class="heading" x="8" y="17" font-size="13.5" font-weight="600" fill="#1b1f24">{}</text>"##,
            escape(&figure.name)
        )?;
        let unit = display.axis_unit(&scale);
        let how =
            if draw_dots { "a dot per repeat, a line through the medians" } else { "medians only (too many repeats to draw)" };
        let change = match figure.change {
            Change::Differs => "differs between kernels",
            _ => "moves within its repeats",
        };
        writeln!(
            out,
            r##"<text x="8" y="33" font-size="10.5" fill="#5b6470">{} · {} · {} · {how} · {change}</text>"##,
            escape(&unit),
            better_sentence(figure.better),
            figure.kind.as_str(),
        )?;

        // The host's band first, under everything, named above the plot
        // (where no value is drawn).
        for (i, kernel) in self.kernels.iter().enumerate().filter(|(_, k)| k.host) {
            let x = slots.centre(i) - slots.slot() / 2.0;
            writeln!(
                out,
                r##"<rect class="host" x="{}" y="{}" width="{}" height="{}" fill="#eef1f5"><title>{}: this machine's own kernel, no guest</title></rect>"##,
                num(x),
                num(PLOT_TOP - 17.0),
                num(slots.slot()),
                num(PLOT_HEIGHT + 17.0),
                escape(&kernel.release)
            )?;
            writeln!(
                out,
                r##"<text class="host-mark" x="{}" y="{}" font-size="10" font-weight="600" fill="#5b6470" text-anchor="middle">host</text>"##,
                num(slots.centre(i)),
                num(PLOT_TOP - 6.0)
            )?;
        }
        // The value axis: grid lines and their labels.
        for tick in scale.values() {
            let ty = plot_bottom - scale.fraction(tick).clamp(0.0, 1.0) * PLOT_HEIGHT;
            let stroke = if tick == scale.origin() { "#8a929c" } else { "#e3e6ea" };
            writeln!(
                out,
                r#"<line x1="{}" x2="{}" y1="{t}" y2="{t}" stroke="{stroke}" stroke-width="1"/>"#,
                num(LEFT),
                num(WIDTH - RIGHT),
                t = num(ty)
            )?;
            writeln!(
                out,
                r##"<text x="{}" y="{}" font-size="10" fill="#5b6470" text-anchor="end">{}</text>"##,
                num(LEFT - 6.0),
                num(ty + 3.5),
                escape(&display.tick_label(&scale, tick))
            )?;
        }
        let middle = PLOT_TOP + PLOT_HEIGHT / 2.0;
        writeln!(
            out,
            r##"<text class="axis-title" x="14" y="{m}" font-size="10.5" fill="#3a4048" text-anchor="middle" transform="rotate(-90 14 {m})">{}</text>"##,
            escape(&format!("{} ({unit})", figure.name)),
            m = num(middle)
        )?;
        // The kernel axis: a tick and a label per kernel.
        for (i, (kernel, label)) in self.kernels.iter().zip(&labels).enumerate() {
            let x = num(slots.centre(i));
            let weight = if kernel.host { r#" font-weight="600""# } else { "" };
            let given = kernel.given.as_deref().map(|g| format!(", {g}")).unwrap_or_default();
            let host = if kernel.host { ", the host's" } else { "" };
            let emulated = if kernel.emulated { ", emulated (TCG)" } else { "" };
            let tip = format!("{}{given}{host}{emulated}", kernel.release);
            let text = if slanted {
                let ty = plot_bottom + 12.0;
                format!(
                    r##"<text x="{x}" y="{}" font-size="10" fill="#3a4048" text-anchor="end"{weight} transform="rotate(-35 {x} {})">{}</text>"##,
                    num(ty),
                    num(ty),
                    escape(label)
                )
            } else {
                format!(
                    r##"<text x="{x}" y="{}" font-size="10" fill="#3a4048" text-anchor="middle"{weight}>{}</text>"##,
                    num(plot_bottom + 14.0),
                    escape(label)
                )
            };
            writeln!(
                out,
                r##"<g class="kernel" data-release="{r}" data-host="{h}"><title>{t}</title><line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="#8a929c"/>{text}</g>"##,
                num(plot_bottom),
                num(plot_bottom + 4.0),
                r = escape(&kernel.release),
                h = kernel.host,
                t = escape(&tip),
            )?;
        }
        writeln!(
            out,
            r##"<text class="axis-title" x="{}" y="{}" font-size="10.5" fill="#3a4048" text-anchor="middle">kernel release, in version order</text>"##,
            num(LEFT + slots.width / 2.0),
            num(height - 8.0)
        )?;

        let series = self.series.len();
        for (s, (name, row)) in self.series.iter().zip(&figure.cells).enumerate() {
            let colour = colour(s);
            let at = |k: usize| slots.centre(k) + slots.offset(s, series);
            // The medians' line, broken where a kernel has none.
            let medians: Vec<Option<f64>> = row.iter().map(|c| c.spread().map(|sp| sp.median)).collect();
            let mut runs: Vec<Vec<String>> = vec![Vec::new()];
            for (k, median) in medians.iter().enumerate() {
                match median {
                    Some(m) => runs.last_mut().expect("one run at least").push(format!("{},{}", num(at(k)), num(y(*m)))),
                    None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(Vec::new()),
                    None => {}
                }
            }
            for points in runs.iter().filter(|r| r.len() > 1) {
                writeln!(
                    out,
                    r#"<polyline class="median" data-series="{n}" points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-linejoin="round"><title>{n}: the median under each kernel</title></polyline>"#,
                    points.join(" "),
                    n = escape(name)
                )?;
            }
            for (k, cell) in row.iter().enumerate() {
                let kernel = &self.kernels[k];
                if let Some(spread) = cell.spread() {
                    let n = cell.repeats.len();
                    let of = if n > 1 {
                        format!(" (median of {n}; min {}, max {})", display.format(spread.min), display.format(spread.max))
                    } else {
                        String::new()
                    };
                    let x = at(k);
                    writeln!(
                        out,
                        r##"<path class="median-mark" data-series="{}" data-release="{}" data-value="{}" data-repeats="{n}" d="M{} {m}H{}" stroke="{colour}" stroke-width="3"><title>{}</title></path>"##,
                        escape(name),
                        escape(&kernel.release),
                        spread.median,
                        num(x - 6.0),
                        num(x + 6.0),
                        escape(&format!("{name} · {}: {} {}{of}", kernel.label(), figure.name, display.format(spread.median))),
                        m = num(y(spread.median)),
                    )?;
                }
                if draw_dots {
                    for repeat in &cell.repeats {
                        let (fill, mark) = if repeat.emulated {
                            ("#ffffff", format!(" {EMULATED_MARK} {EMULATED_FOOTNOTE}"))
                        } else {
                            (colour, String::new())
                        };
                        writeln!(
                            out,
                            r#"<circle class="repeat{}" data-series="{}" data-release="{}" data-repeat="{}" data-value="{}" cx="{}" cy="{}" r="3.2" fill="{fill}" fill-opacity="0.55" stroke="{colour}" stroke-width="1"><title>{}</title></circle>"#,
                            if repeat.emulated { " emulated" } else { "" },
                            escape(name),
                            escape(&kernel.release),
                            repeat.repeat,
                            repeat.value,
                            num(at(k)),
                            num(y(repeat.value)),
                            escape(&format!(
                                "{name} · {} · repeat {}: {}{mark}",
                                kernel.label(),
                                repeat.repeat,
                                display.format(repeat.value)
                            )),
                        )?;
                    }
                }
                if cell.is_missing() {
                    writeln!(
                        out,
                        r##"<text class="missing" data-series="{}" data-release="{}" x="{}" y="{}" font-size="11" fill="{colour}" text-anchor="middle">×<title>{}</title></text>"##,
                        escape(name),
                        escape(&kernel.release),
                        num(at(k)),
                        num(plot_bottom - 4.0),
                        escape(&format!("{name} · {}: {} missing: {}", kernel.label(), figure.name, cell.missing.join("; "))),
                    )?;
                }
            }
        }
        writeln!(out, "</svg>")
    }
}
