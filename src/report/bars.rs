//! Bar charts of one figure across targets, for the HTML report: one bar
//! per target (and parameter set, and run), its length the median of the
//! repeats, a whisker from the smallest to the largest repeat, and the
//! value written at its end.
//!
//! The one design decision: a figure that was not measured is a mark of
//! its own, "missing" and why, never a bar of length 0 (a missing
//! journal-commit count and a zero one mean different things). A bar is
//! drawn from the repeats that measured it and says how many did; only
//! when none did is it missing.
//!
//! With a comparison, bars that differ only in their side (base, new)
//! are drawn as a pair under one label: the base's a pale outlined bar,
//! the new side's solid, in the target's colour, and a legend names the
//! sides. A chart whose values span more than a hundredfold takes a log
//! axis (see [`Scale`]).
//!
//! The bars, their labels and values take their fonts and ink from the
//! page's style sheet (classes `label`, `name`, `sub`, `value`): written
//! on each of a preset's thousand bars, they would weigh a third of it.

use std::fmt::{self, Write as _};
use std::ops::Range;

use super::axis::{Display, Scale};
use super::markup::{escape_xml, num, shorten};
use crate::record::guest::EMULATED_FOOTNOTE;
use crate::record::{Better, EMULATED_MARK, Kind};

/// Bar colours, one per target label, in order of first appearance: the
/// Okabe–Ito set (told apart with the common colour-vision deficiencies),
/// its yellow swapped for a darker gold that shows on white.
pub const PALETTE: [&str; 8] = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#6b6b6b", "#b8860b"];

// Geometry, in SVG user units (about pixels in a three-column grid).
const WIDTH: f64 = 420.0;
const PLOT_TOP: f64 = 46.0;
/// The legend's line, between the heading and the plot, with sides.
const LEGEND_LINE: f64 = 16.0;
const LABEL_LINE: f64 = 12.0;
const BAR_HEIGHT: f64 = 14.0;
/// Space above and below a row's bar or label lines, together.
const ROW_PAD: f64 = 7.0;
/// The height of a parameter set's heading row, above its bars.
const BLOCK_LINE: f64 = 17.0;
/// The height of each bar of a base/new pair, and the gap between them.
const PAIR_HEIGHT: f64 = 12.0;
const PAIR_GAP: f64 = 2.0;
/// A base bar's fill opacity: the target's colour, pale.
const BASE_OPACITY: &str = "0.28";
const RIGHT: f64 = 64.0;
const AXIS_HEIGHT: f64 = 36.0;
/// Label characters drawn before an ellipsis (the whole label is in the
/// bar's tooltip).
const LABEL_CHARS: usize = 26;
/// The same for a label's smaller lines (conditions, parameters, run):
/// `@vm.dirty_background_bytes=32M` whole.
const SUB_CHARS: usize = 32;
/// A place longer than this is drawn on two lines (see `Bar::lines`):
/// `ext2@age=churn,fill=80%` stays whole.
const PLACE_CHARS: usize = 23;

/// Which side of a comparison a bar shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `--compare BASE`'s runs.
    Base,
    /// The runs the report is of.
    New,
}

impl Side {
    /// `base` or `new`: `data-side` and the legend's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::New => "new",
        }
    }
}

/// The sides' labels for a chart's legend (`tag before`, a run id).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sides<'a> {
    /// The base side's label.
    pub base: &'a str,
    /// The new side's label.
    pub new: &'a str,
    /// What the legend and tooltips call the two sides, base first:
    /// `base` and `new` in a comparison; another pair of one figure's
    /// (`measured`, `modelled`) beside its counterpart.
    pub words: [&'a str; 2],
}

impl<'a> Sides<'a> {
    /// The sides of a comparison, labelled `base` and `new`.
    pub fn compared(base: &'a str, new: &'a str) -> Sides<'a> {
        Sides { base, new, words: [Side::Base.as_str(), Side::New.as_str()] }
    }

    /// A side's label.
    pub fn label(&self, side: Side) -> &str {
        match side {
            Side::Base => self.base,
            Side::New => self.new,
        }
    }

    /// Whether the sides are a comparison's (`base`, `new`), not a
    /// figure's beside its counterpart (then the chart's class is `chart
    /// bars beside`).
    pub fn is_comparison(&self) -> bool {
        self.words == [Side::Base.as_str(), Side::New.as_str()]
    }

    /// What a side is called.
    pub fn word(&self, side: Side) -> &str {
        match side {
            Side::Base => self.words[0],
            Side::New => self.words[1],
        }
    }
}

/// One bar: the repeats of one figure on one target.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Target label (`case.fs`): `ext4`, `ext2-1k`.
    pub fs: String,
    /// The parameters that tell this bar from its neighbours, as
    /// `key=value` joined by `, ` (empty when only one set ran).
    pub params: String,
    /// The run it came from, when the page shows several (else empty).
    pub run: String,
    /// The side of a comparison it shows; `None` without one.
    pub side: Option<Side>,
    /// Index into [`PALETTE`] (wrapping).
    pub colour: usize,
    /// The measured values, one per repeat that measured it.
    pub values: Vec<f64>,
    /// Repeats in all, measured or not.
    pub repeats: usize,
    /// Why the repeats that lack it lack it (each reason once).
    pub missing: Vec<String>,
    /// Whether a repeat ran in a guest under software emulation (TCG): a
    /// timing chart then draws the bar hatched, its value marked
    /// [`EMULATED_MARK`], since it measures the emulator.
    pub emulated: bool,
    /// The median of the chart's [`BarChart::mark`] figure over the
    /// repeats (extents' perfection), drawn as a tick across the bar.
    pub mark: Option<f64>,
}

impl Bar {
    /// The label's lines: target, then parameters and run when set. A
    /// long place (`xfs@6.1.0-56-amd64,vm=512M`) is broken before its
    /// `@`: the file system stays bold, its conditions go under it, so a
    /// kernel's release is read whole rather than cut. The parameters are
    /// left out when a heading above the bar's block says them.
    fn lines(&self, params: bool) -> Vec<&str> {
        let mut lines = match self.fs.find('@') {
            Some(at) if self.fs.chars().count() > PLACE_CHARS => vec![&self.fs[..at], &self.fs[at..]],
            _ => vec![self.fs.as_str()],
        };
        let params = if params { self.params.as_str() } else { "" };
        lines.extend([params, self.run.as_str()].into_iter().filter(|l| !l.is_empty()));
        lines
    }

    /// Place, parameters and run in one line, the place unbroken.
    fn whole(&self) -> String {
        [self.fs.as_str(), self.params.as_str(), self.run.as_str()].into_iter().filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" · ")
    }

    /// The whole label in one line, for tooltips: with its side's name.
    fn label(&self, sides: Option<&Sides>) -> String {
        let mut label = self.whole();
        if let (Some(side), Some(sides)) = (self.side, sides) {
            let _ = write!(label, " · {}: {}", sides.word(side), sides.label(side));
        }
        label
    }

    /// The missing reasons as one sentence.
    fn missing_reason(&self) -> String {
        if self.missing.is_empty() { "not measured".to_string() } else { self.missing.join("; ") }
    }

    /// Whether `other` is this bar's other side: same target, parameters
    /// and run, a different side.
    fn pairs_with(&self, other: &Bar) -> bool {
        self.side.is_some()
            && other.side.is_some()
            && self.side != other.side
            && (&self.fs, &self.params, &self.run) == (&other.fs, &other.params, &other.run)
    }

    /// `class`: `bar`, and `bar base` on the base side (drawn pale).
    fn class(&self, kind: &str) -> String {
        match self.side {
            Some(Side::Base) => format!("{kind} base"),
            _ => kind.to_string(),
        }
    }

    /// Whether this bar of a `kind` chart is an emulator's timing.
    fn emulated_in(&self, kind: Kind) -> bool {
        self.emulated && kind == Kind::Timing
    }

    /// ` data-side="base"` with a comparison (the side's word, `measured`,
    /// beside a counterpart), else nothing.
    fn side_attr(&self, sides: Option<&Sides>) -> String {
        let word = |s: Side| sides.map_or(s.as_str(), |sides| sides.word(s)).to_string();
        self.side.map(|s| format!(r#" data-side="{}""#, escape_xml(&word(s)))).unwrap_or_default()
    }
}

/// Median and range of a bar's repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The middle value (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
}

/// The spread of `values`; `None` when there are none.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    };
    Some(Spread { median, min: sorted[0], max: sorted[n - 1] })
}

/// A chart of one figure of one scenario.
#[derive(Debug, Clone)]
pub struct BarChart<'a> {
    /// The scenario name (`data-scenario`).
    pub scenario: &'a str,
    /// The figure name: the chart's heading and `data-figure`.
    pub figure: &'a str,
    /// The figure's base unit (`s`, `bytes`, `count`, `MB/s`, ...).
    pub unit: &'a str,
    /// Which direction is better, said under the heading.
    pub better: Better,
    /// Exact or timing, said under the heading.
    pub kind: Kind,
    /// What the figure means, when known: the heading's tooltip.
    pub about: Option<&'a str>,
    /// The sides' labels, with a comparison: a legend says which is which.
    pub sides: Option<Sides<'a>>,
    /// The bars, top to bottom (a base bar right before its new one).
    /// Bars of several parameter sets are drawn in blocks under a heading
    /// each (a set's bars should come together).
    pub bars: Vec<Bar>,
    /// The figure the bars' [`Bar::mark`] ticks show (`perfection` on
    /// `extents`), said under the heading; `None` without ticks.
    pub mark: Option<&'a str>,
}

/// Consecutive bars drawn under one label: a base bar and its new one,
/// or a bar alone.
fn clusters(bars: &[Bar]) -> Vec<Range<usize>> {
    let mut clusters: Vec<Range<usize>> = Vec::new();
    for (i, bar) in bars.iter().enumerate() {
        match clusters.last_mut() {
            Some(last) if bars[last.clone()].iter().all(|b| b.pairs_with(bar)) => last.end = i + 1,
            _ => clusters.push(i..i + 1),
        }
    }
    clusters
}

/// Where one bar goes: its top and height.
struct Slot {
    top: f64,
    height: f64,
}

/// How values map to x on one chart.
struct Plot {
    display: Display,
    scale: Scale,
    left: f64,
    width: f64,
}

impl Plot {
    /// The x of `value` (base units), clamped to the plot.
    fn x(&self, value: f64) -> f64 {
        self.x_scaled(self.display.scaled(value))
    }

    fn x_scaled(&self, scaled: f64) -> f64 {
        self.left + self.scale.fraction(scaled).clamp(0.0, 1.0) * self.width
    }

    /// The x bars start from: zero, or a log axis's floor.
    fn origin(&self) -> f64 {
        self.x_scaled(self.scale.origin())
    }
}

impl BarChart<'_> {
    /// The chart as an inline SVG element (no XML prolog, no namespace:
    /// the HTML parser puts it in the SVG namespace).
    pub fn render(&self) -> String {
        let mut svg = String::with_capacity(4096);
        self.write(&mut svg).expect("fmt::Write for String never fails");
        svg
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        let spreads: Vec<Option<Spread>> = self.bars.iter().map(|b| spread(&b.values)).collect();
        let measured = spreads.iter().any(Option::is_some);
        let largest = spreads.iter().flatten().fold(0.0f64, |m, s| m.max(s.min.abs()).max(s.max.abs()));
        let display = Display::for_unit(self.unit, largest);
        let marks = self.bars.iter().filter_map(|b| b.mark).map(|v| display.scaled(v));
        let scaled: Vec<f64> =
            spreads.iter().flatten().flat_map(|s| [s.min, s.median, s.max]).map(|v| display.scaled(v)).chain(marks).collect();
        let scale = Scale::over(&scaled, display.is_bytes(), 4);

        // Several parameter sets: a heading per block says the set, and
        // the labels name the place alone.
        let blocks = self.bars.iter().any(|b| !b.params.is_empty());
        // The label column: the target's line is bold and larger (about 7.6
        // units a character in a wide face), the others about 6.4.
        let label_width = self
            .bars
            .iter()
            .flat_map(|b| {
                b.lines(!blocks)
                    .into_iter()
                    .enumerate()
                    .map(|(i, l)| if i == 0 { l.chars().count().min(LABEL_CHARS) as f64 * 7.6 } else { l.chars().count().min(SUB_CHARS) as f64 * 5.8 })
            })
            .fold(4.0 * 7.0, f64::max);
        let left = (label_width + 14.0).clamp(56.0, 200.0);
        let plot = Plot { display, scale, left, width: WIDTH - left - RIGHT };
        let plot_top = PLOT_TOP + if self.sides.is_some() { LEGEND_LINE } else { 0.0 };

        // Rows: one per cluster, its bars stacked in it, as tall as its
        // own label; a block's heading above its first.
        let mut rows: Vec<(Range<usize>, f64, f64)> = Vec::new();
        let mut headings: Vec<(&str, f64)> = Vec::new();
        let mut top = plot_top;
        for cluster in clusters(&self.bars) {
            let first = &self.bars[cluster.start];
            if blocks && rows.last().is_none_or(|(r, _, _)| self.bars[r.start].params != first.params) {
                headings.push((first.params.as_str(), top));
                top += BLOCK_LINE;
            }
            let n = cluster.len() as f64;
            let bars_height = if n > 1.0 { n * PAIR_HEIGHT + (n - 1.0) * PAIR_GAP } else { BAR_HEIGHT };
            let lines = first.lines(!blocks).len() as f64;
            let row = ((lines * LABEL_LINE).max(bars_height) + ROW_PAD).max(BAR_HEIGHT + ROW_PAD);
            rows.push((cluster, top, row));
            top += row;
        }
        let plot_bottom = if rows.is_empty() { plot_top + 26.0 } else { top };
        let height = plot_bottom + if measured { AXIS_HEIGHT } else { 8.0 };

        writeln!(
            out,
            r#"<svg class="{class}" data-scenario="{s}" data-figure="{f}" data-unit="{u}" data-better="{b}" data-kind="{k}" data-bars="{n}" data-scale="{scale}" viewBox="0 0 {w} {h}" role="img" aria-label="{f}">"#,
            class = if self.sides.is_some_and(|s| !s.is_comparison()) { "chart bars beside" } else { "chart bars" },
            s = escape_xml(self.scenario),
            f = escape_xml(self.figure),
            u = escape_xml(self.unit),
            b = self.better.as_str(),
            k = self.kind.as_str(),
            n = self.bars.len(),
            scale = plot.scale.name(),
            w = num(WIDTH),
            h = num(height),
        )?;
        let about = self.about.map(|a| format!(": {a}")).unwrap_or_default();
        writeln!(out, "<title>{}</title>", escape_xml(&format!("{}{about}", self.figure)))?;
        if self.bars.iter().any(|b| b.emulated_in(self.kind)) {
            write_hatch(out)?;
        }
        writeln!(out, r##"<text class="heading" x="8" y="17" font-size="13.5" font-weight="600" fill="#1b1f24">{}</text>"##, escape_xml(self.figure))?;
        let repeats = self.bars.iter().map(|b| b.repeats).max().unwrap_or(0);
        let summary = if repeats > 1 { format!(" · median of {repeats}, whisker min–max") } else { String::new() };
        // A log axis of bytes has its unit on each tick (4 KiB, 1 MiB).
        let unit = plot.display.axis_unit(&plot.scale);
        let mark = self.mark.filter(|_| self.bars.iter().any(|b| b.mark.is_some())).map(|m| format!(" · ┃ {m}")).unwrap_or_default();
        writeln!(
            out,
            r##"<text x="8" y="33" font-size="10.5" fill="#5b6470">{} · {} · {}{}{}</text>"##,
            escape_xml(&unit),
            better_sentence(self.better),
            self.kind.as_str(),
            escape_xml(&summary),
            escape_xml(&mark),
        )?;
        if let Some(sides) = &self.sides {
            write_legend(out, sides, PLOT_TOP + 3.0)?;
        }

        // Grid first, so bars draw over it; no axis at all when nothing
        // was measured, as an empty scale would suggest zeros.
        for tick in plot.scale.values().into_iter().filter(|_| measured) {
            let tx = num(plot.x_scaled(tick));
            let stroke = if tick == plot.scale.origin() { "#8a929c" } else { "#e3e6ea" };
            writeln!(out, r#"<line x1="{tx}" x2="{tx}" y1="{}" y2="{}" stroke="{stroke}" stroke-width="1"/>"#, num(plot_top - 4.0), num(plot_bottom))?;
            writeln!(
                out,
                r##"<text x="{tx}" y="{}" font-size="10" fill="#5b6470" text-anchor="middle">{}</text>"##,
                num(plot_bottom + 13.0),
                escape_xml(&plot.display.tick_label(&plot.scale, tick))
            )?;
        }
        if measured {
            writeln!(
                out,
                r##"<text class="axis-title" x="{}" y="{}" font-size="10.5" fill="#3a4048" text-anchor="middle">{} ({})</text>"##,
                num(left + plot.width / 2.0),
                num(plot_bottom + 29.0),
                escape_xml(self.figure),
                escape_xml(&unit)
            )?;
        }

        for (params, top) in headings {
            writeln!(
                out,
                r#"<text class="block" data-params="{p}" x="8" y="{}">{p}</text>"#,
                num(top + BLOCK_LINE - 4.0),
                p = escape_xml(params)
            )?;
        }
        for (cluster, top, row) in rows {
            let n = cluster.len();
            let height = if n > 1 { PAIR_HEIGHT } else { BAR_HEIGHT };
            let stack = n as f64 * height + (n as f64 - 1.0) * PAIR_GAP;
            let first_top = top + (row - stack) / 2.0;
            write_label(out, &self.bars[cluster.start], !blocks, left - 7.0, top + row / 2.0)?;
            for (k, i) in cluster.enumerate() {
                let slot = Slot { top: first_top + k as f64 * (height + PAIR_GAP), height };
                match &spreads[i] {
                    Some(s) => self.write_bar(out, &self.bars[i], s, &plot, &slot)?,
                    None => write_missing(out, &self.bars[i], self.sides.as_ref(), left, &slot, plot.width + RIGHT - 8.0)?,
                }
            }
        }
        writeln!(out, "</svg>")
    }

    fn write_bar(&self, out: &mut String, bar: &Bar, s: &Spread, plot: &Plot, slot: &Slot) -> fmt::Result {
        let display = &plot.display;
        let (origin, at) = (plot.origin(), plot.x(s.median));
        let (start, end) = (origin.min(at), origin.max(at));
        let measured = bar.values.len();
        let mut tip = format!("{}: {} {}", bar.label(self.sides.as_ref()), self.figure, display.format(s.median));
        if measured > 1 {
            let _ = write!(tip, " (median of {measured}; min {}, max {})", display.format(s.min), display.format(s.max));
        }
        if measured < bar.repeats {
            let _ = write!(tip, "; measured in {measured} of {} repeats, missing in the others: {}", bar.repeats, bar.missing_reason());
        }
        let colour = PALETTE[bar.colour % PALETTE.len()];
        // The base side pale with an outline, the new side solid.
        let paint = match bar.side {
            Some(Side::Base) => format!(r#"fill="{colour}" fill-opacity="{BASE_OPACITY}" stroke="{colour}" stroke-width="1.3""#),
            _ => format!(r#"fill="{colour}""#),
        };
        // A zero median still shows at the axis: a hairline, or on a log
        // axis (which has no zero) a stub at its floor.
        let least = if matches!(plot.scale, Scale::Log(_)) && s.median <= 0.0 { 3.0 } else { 1.0 };
        // The value is written beside the bar; a tooltip only when it has
        // more to say (the range, the repeats that lack it): a preset's
        // page has a thousand bars.
        let emulated = bar.emulated_in(self.kind);
        if emulated {
            let _ = write!(tip, "; {EMULATED_MARK} {EMULATED_FOOTNOTE}");
        }
        let tip = if measured > 1 || measured < bar.repeats || emulated {
            format!("<title>{}</title>", escape_xml(&tip))
        } else {
            String::new()
        };
        writeln!(
            out,
            r#"<rect class="{class}" data-fs="{fs}" data-params="{p}" data-run="{r}"{side} data-value="{v}" data-min="{lo}" data-max="{hi}" data-repeats="{n}" data-measured="{m}"{mark} x="{x}" y="{y}" width="{w}" height="{h}" {paint}>{tip}</rect>"#,
            class = if emulated { bar.class("bar emulated") } else { bar.class("bar") },
            mark = self.mark_attr(bar),
            fs = escape_xml(&bar.fs),
            p = escape_xml(&bar.params),
            r = escape_xml(&bar.run),
            side = bar.side_attr(self.sides.as_ref()),
            v = s.median,
            lo = s.min,
            hi = s.max,
            n = bar.repeats,
            m = measured,
            x = num(start),
            y = num(slot.top),
            w = num((end - start).max(least)),
            h = num(slot.height),
        )?;
        if emulated {
            // Pale stripes over the bar, in any colour: the emulator's.
            writeln!(
                out,
                r#"<rect class="hatch" x="{}" y="{}" width="{}" height="{}" fill="url(#{HATCH})" pointer-events="none"/>"#,
                num(start),
                num(slot.top),
                num((end - start).max(least)),
                num(slot.height),
            )?;
        }
        let mid = slot.top + slot.height / 2.0;
        if measured > 1 {
            let (x1, x2) = (num(plot.x(s.min)), num(plot.x(s.max)));
            let (cap_top, cap_bottom) = (num(mid - slot.height * 0.3), num(mid + slot.height * 0.3));
            // One path (the line and its two caps): a page has hundreds.
            writeln!(
                out,
                r##"<path class="whisker" d="M{x1} {m}H{x2}M{x1} {cap_top}V{cap_bottom}M{x2} {cap_top}V{cap_bottom}" stroke="#1b1f24" stroke-width="1.2" fill="none"/>"##,
                m = num(mid),
            )?;
        }
        if let (Some(name), Some(mark)) = (self.mark, bar.mark) {
            // A tick across the bar, standing out above and below it.
            writeln!(
                out,
                r##"<path class="mark" d="M{x} {}V{}" stroke="#1b1f24" stroke-width="2"><title>{}</title></path>"##,
                num(slot.top - 3.0),
                num(slot.top + slot.height + 3.0),
                escape_xml(&format!("{} {}", name, display.format(mark))),
                x = num(plot.x(mark)),
            )?;
        }
        let partial = if measured < bar.repeats { format!(" ({measured}/{})", bar.repeats) } else { String::new() };
        let mark = if emulated { EMULATED_MARK } else { "" };
        let text = format!("{}{mark}{partial}", display.format(s.median));
        // SVG cannot measure text; 6 units a character is a safe guess at
        // this size. A value with no room right of its bar goes inside it.
        let text_width = 6.0 * text.chars().count() as f64;
        let outside = end.max(plot.x(s.max)).max(start + least) + 4.0;
        // Classes, styled by the page: `in` inside the bar, `white` ink on
        // a dark bar, `small` beside a pair's thinner bars.
        let white = bar.side != Some(Side::Base) && ink_on(colour) == "#ffffff";
        let inside = !(outside + text_width <= WIDTH - 2.0 || end - start < text_width + 8.0);
        let (text_x, mut class) = if inside {
            (start + 4.0, if white { "value in white".to_string() } else { "value in".to_string() })
        } else {
            (outside, "value".to_string())
        };
        if slot.height < BAR_HEIGHT {
            class.push_str(" small");
        }
        // Inside a hatched bar the stripes would cross the digits: the text
        // gets a halo of the bar's own colour, as if the bar were solid
        // (white on a base side's pale bar).
        let behind = if bar.side == Some(Side::Base) { "#ffffff" } else { colour };
        let halo = if emulated && inside { format!(r#" stroke="{behind}""#) } else { String::new() };
        if !halo.is_empty() {
            class.push_str(" halo");
        }
        writeln!(
            out,
            r#"<text class="{class}"{halo} x="{}" y="{}">{}</text>"#,
            num(text_x),
            num(mid + 3.6),
            escape_xml(&text),
        )
    }
}

impl BarChart<'_> {
    /// ` data-perfection="2"`: a bar's mark under the chart's mark's name,
    /// or nothing.
    fn mark_attr(&self, bar: &Bar) -> String {
        match (self.mark, bar.mark) {
            (Some(name), Some(value)) => format!(r#" data-{}="{value}""#, escape_xml(name)),
            _ => String::new(),
        }
    }
}

/// The id of the stripes emulated timing bars are hatched with: every
/// chart that draws one defines it alike, so a page's first serves all.
const HATCH: &str = "fslab-emulated-hatch";

/// The stripes' pattern, written once in a chart that has emulated bars.
fn write_hatch(out: &mut String) -> fmt::Result {
    writeln!(
        out,
        r##"<defs><pattern id="{HATCH}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="3" height="6" fill="#ffffff" fill-opacity="0.6"/></pattern></defs>"##
    )
}

/// The legend of a comparison's chart: a pale outlined swatch for the
/// base, a solid one for the new side, each with its label.
fn write_legend(out: &mut String, sides: &Sides, middle: f64) -> fmt::Result {
    const SWATCH: &str = "#5b6470";
    let mut x = 8.0;
    write!(out, r#"<g class="legend">"#)?;
    for side in [Side::Base, Side::New] {
        let paint = match side {
            Side::Base => format!(r#"fill="{SWATCH}" fill-opacity="{BASE_OPACITY}" stroke="{SWATCH}" stroke-width="1.3""#),
            Side::New => format!(r#"fill="{SWATCH}""#),
        };
        let text = format!("{}: {}", sides.word(side), shorten(sides.label(side), 24));
        write!(
            out,
            r##"<rect data-side="{s}" x="{x}" y="{y}" width="16" height="10" {paint}/><text x="{tx}" y="{ty}" font-size="10.5" fill="#1b1f24">{t}</text>"##,
            s = side.as_str(),
            x = num(x),
            y = num(middle - 5.0),
            tx = num(x + 21.0),
            ty = num(middle + 3.8),
            t = escape_xml(&text),
        )?;
        x += 21.0 + 6.0 * text.chars().count() as f64 + 14.0;
    }
    writeln!(out, "</g>")
}

/// The label lines right-aligned at `right`, centred on `middle`: the
/// target dark, the parameters (unless a block's heading says them) and
/// run lighter.
fn write_label(out: &mut String, bar: &Bar, params: bool, right: f64, middle: f64) -> fmt::Result {
    let lines = bar.lines(params);
    let first = middle - (lines.len() - 1) as f64 * LABEL_LINE / 2.0 + 4.0;
    // The whole label as a tooltip where a line had to be cut; a pair's
    // sides are the legend's to name.
    write!(out, r#"<g class="label">"#)?;
    let most = |i: usize| if i == 0 { LABEL_CHARS } else { SUB_CHARS };
    if lines.iter().enumerate().any(|(i, l)| l.chars().count() > most(i)) {
        write!(out, "<title>{}</title>", escape_xml(&bar.whole()))?;
    }
    for (i, line) in lines.iter().enumerate() {
        // Styled by the page: the target dark, the rest lighter.
        write!(
            out,
            r#"<text class="{}" x="{}" y="{}">{}</text>"#,
            if i == 0 { "name" } else { "sub" },
            num(right),
            num(first + i as f64 * LABEL_LINE),
            escape_xml(&shorten(line, most(i)))
        )?;
    }
    writeln!(out, "</g>")
}

/// A missing mark: a dashed empty box and "missing: why", the whole
/// reason in the tooltip.
fn write_missing(out: &mut String, bar: &Bar, sides: Option<&Sides>, left: f64, slot: &Slot, room: f64) -> fmt::Result {
    let reason = bar.missing_reason();
    let chars = ((room - 8.0) / 5.6) as usize;
    let word = bar.side.zip(sides).map(|(s, sides)| format!("{}: ", sides.word(s))).unwrap_or_default();
    writeln!(
        out,
        r##"<g class="{class}" data-fs="{fs}" data-params="{p}" data-run="{r}"{side} data-repeats="{n}" data-missing="{why}"><title>{tip}</title><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#f4f5f7" stroke="#9aa1aa" stroke-dasharray="3 2"/><text x="{tx}" y="{ty}" font-size="10" font-style="italic" fill="#5b6470">{text}</text></g>"##,
        class = bar.class("missing"),
        fs = escape_xml(&bar.fs),
        p = escape_xml(&bar.params),
        r = escape_xml(&bar.run),
        side = bar.side_attr(sides),
        n = bar.repeats,
        why = escape_xml(&reason),
        tip = escape_xml(&format!("{}: missing: {reason}", bar.label(sides))),
        x = num(left),
        y = num(slot.top),
        w = num(room),
        h = num(slot.height),
        tx = num(left + 5.0),
        ty = num(slot.top + slot.height / 2.0 + 3.6),
        text = escape_xml(&shorten(&format!("{word}missing: {reason}"), chars.max(8))),
    )
}

/// Text colour that reads on a bar of `fill` (`#rrggbb`): white on the
/// dark colours, near-black on the light ones (orange, sky blue, pink).
fn ink_on(fill: &str) -> &'static str {
    let channel = |at: usize| fill.get(at..at + 2).and_then(|h| u8::from_str_radix(h, 16).ok()).map_or(0.0, f64::from);
    // Perceived brightness (ITU-R BT.601 weights) is enough to choose.
    let brightness = (0.299 * channel(1) + 0.587 * channel(3) + 0.114 * channel(5)) / 255.0;
    if brightness > 0.55 { "#1b1f24" } else { "#ffffff" }
}

/// `lower is better` or `higher is better`: said under a chart's heading.
pub(super) fn better_sentence(better: Better) -> &'static str {
    match better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    }
}

#[cfg(test)]
mod tests;
