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

use std::fmt::{self, Write as _};

use super::axis::{Display, Ticks};
use super::markup::{escape_xml, num, shorten};
use crate::record::{Better, Kind};

/// Bar colours, one per target label, in order of first appearance: the
/// Okabe–Ito set (told apart with the common colour-vision deficiencies),
/// its yellow swapped for a darker gold that shows on white.
pub const PALETTE: [&str; 8] = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#6b6b6b", "#b8860b"];

// Geometry, in SVG user units (about pixels in a three-column grid).
const WIDTH: f64 = 420.0;
const PLOT_TOP: f64 = 46.0;
const LABEL_LINE: f64 = 13.0;
const BAR_HEIGHT: f64 = 15.0;
const RIGHT: f64 = 64.0;
const AXIS_HEIGHT: f64 = 36.0;
/// Label characters drawn before an ellipsis (the whole label is in the
/// bar's tooltip).
const LABEL_CHARS: usize = 26;

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
    /// Index into [`PALETTE`] (wrapping).
    pub colour: usize,
    /// The measured values, one per repeat that measured it.
    pub values: Vec<f64>,
    /// Repeats in all, measured or not.
    pub repeats: usize,
    /// Why the repeats that lack it lack it (each reason once).
    pub missing: Vec<String>,
}

impl Bar {
    /// The label's lines: target, then parameters and run when set.
    fn lines(&self) -> Vec<&str> {
        let mut lines = vec![self.fs.as_str()];
        lines.extend([self.params.as_str(), self.run.as_str()].into_iter().filter(|l| !l.is_empty()));
        lines
    }

    /// The whole label in one line, for tooltips.
    fn label(&self) -> String {
        self.lines().join(" · ")
    }

    /// The missing reasons as one sentence.
    fn missing_reason(&self) -> String {
        if self.missing.is_empty() { "not measured".to_string() } else { self.missing.join("; ") }
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
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
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
        let (lo, hi) = spreads.iter().flatten().fold((0.0f64, 0.0f64), |(lo, hi), s| (lo.min(s.min), hi.max(s.max)));
        let display = Display::for_unit(self.unit, lo.abs().max(hi.abs()));
        let ticks = Ticks::over(display.scaled(lo), display.scaled(hi), 4);

        let lines = self.bars.iter().map(|b| b.lines().len()).max().unwrap_or(1);
        let row = (lines as f64 * LABEL_LINE + 11.0).max(26.0);
        let label_chars = self
            .bars
            .iter()
            .flat_map(|b| b.lines().into_iter().map(|l| l.chars().count()))
            .max()
            .unwrap_or(4)
            .min(LABEL_CHARS);
        let left = (label_chars as f64 * 6.4 + 16.0).clamp(56.0, 190.0);
        let plot_width = WIDTH - left - RIGHT;
        let plot_bottom = PLOT_TOP + row * self.bars.len().max(1) as f64;
        let height = plot_bottom + if measured { AXIS_HEIGHT } else { 8.0 };
        let x = |value: f64| left + ticks.fraction(display.scaled(value)).clamp(0.0, 1.0) * plot_width;

        writeln!(
            out,
            r#"<svg class="chart bars" data-scenario="{s}" data-figure="{f}" data-unit="{u}" data-better="{b}" data-kind="{k}" data-bars="{n}" viewBox="0 0 {w} {h}" role="img" aria-label="{f}">"#,
            s = escape_xml(self.scenario),
            f = escape_xml(self.figure),
            u = escape_xml(self.unit),
            b = self.better.as_str(),
            k = self.kind.as_str(),
            n = self.bars.len(),
            w = num(WIDTH),
            h = num(height),
        )?;
        let about = self.about.map(|a| format!(": {a}")).unwrap_or_default();
        writeln!(out, "<title>{}</title>", escape_xml(&format!("{}{about}", self.figure)))?;
        writeln!(out, r##"<text class="heading" x="8" y="17" font-size="13.5" font-weight="600" fill="#1b1f24">{}</text>"##, escape_xml(self.figure))?;
        let repeats = self.bars.iter().map(|b| b.repeats).max().unwrap_or(0);
        let summary = if repeats > 1 { format!(" · median of {repeats}, whisker min–max") } else { String::new() };
        writeln!(
            out,
            r##"<text x="8" y="33" font-size="10.5" fill="#5b6470">{} · {} · {}{}</text>"##,
            escape_xml(&display.axis_title()),
            better_sentence(self.better),
            self.kind.as_str(),
            escape_xml(&summary),
        )?;

        // Grid first, so bars draw over it; no axis at all when nothing
        // was measured, as an empty scale would suggest zeros.
        for tick in ticks.values().into_iter().filter(|_| measured) {
            let tx = num(left + ticks.fraction(tick) * plot_width);
            let stroke = if tick == 0.0 { "#8a929c" } else { "#e3e6ea" };
            writeln!(out, r#"<line x1="{tx}" x2="{tx}" y1="{}" y2="{}" stroke="{stroke}" stroke-width="1"/>"#, num(PLOT_TOP - 4.0), num(plot_bottom))?;
            writeln!(
                out,
                r##"<text x="{tx}" y="{}" font-size="10" fill="#5b6470" text-anchor="middle">{}</text>"##,
                num(plot_bottom + 13.0),
                escape_xml(&ticks.label(tick))
            )?;
        }
        if measured {
            writeln!(
                out,
                r##"<text class="axis-title" x="{}" y="{}" font-size="10.5" fill="#3a4048" text-anchor="middle">{} ({})</text>"##,
                num(left + plot_width / 2.0),
                num(plot_bottom + 29.0),
                escape_xml(self.figure),
                escape_xml(&display.axis_title())
            )?;
        }

        for (index, (bar, spread)) in self.bars.iter().zip(&spreads).enumerate() {
            let top = PLOT_TOP + row * index as f64;
            write_label(out, bar, left - 7.0, top + row / 2.0)?;
            let bar_top = top + (row - BAR_HEIGHT) / 2.0;
            match spread {
                Some(s) => self.write_bar(out, bar, s, &display, bar_top, &x)?,
                None => write_missing(out, bar, left, bar_top, plot_width + RIGHT - 8.0)?,
            }
        }
        writeln!(out, "</svg>")
    }

    fn write_bar(&self, out: &mut String, bar: &Bar, s: &Spread, display: &Display, top: f64, x: &dyn Fn(f64) -> f64) -> fmt::Result {
        let (start, end) = (x(0.0).min(x(s.median)), x(0.0).max(x(s.median)));
        let measured = bar.values.len();
        let mut tip = format!("{}: {} {}", bar.label(), self.figure, display.format(s.median));
        if measured > 1 {
            let _ = write!(tip, " (median of {measured}; min {}, max {})", display.format(s.min), display.format(s.max));
        }
        if measured < bar.repeats {
            let _ = write!(tip, "; measured in {measured} of {} repeats, missing in the others: {}", bar.repeats, bar.missing_reason());
        }
        writeln!(
            out,
            r#"<rect class="bar" data-fs="{fs}" data-params="{p}" data-run="{r}" data-value="{v}" data-min="{lo}" data-max="{hi}" data-repeats="{n}" data-measured="{m}" x="{x}" y="{y}" width="{w}" height="{h}" fill="{c}"><title>{tip}</title></rect>"#,
            fs = escape_xml(&bar.fs),
            p = escape_xml(&bar.params),
            r = escape_xml(&bar.run),
            v = s.median,
            lo = s.min,
            hi = s.max,
            n = bar.repeats,
            m = measured,
            x = num(start),
            y = num(top),
            // A zero median still shows a hairline at the axis.
            w = num((end - start).max(1.0)),
            h = num(BAR_HEIGHT),
            c = PALETTE[bar.colour % PALETTE.len()],
            tip = escape_xml(&tip),
        )?;
        if measured > 1 {
            let (x1, x2, mid) = (num(x(s.min)), num(x(s.max)), top + BAR_HEIGHT / 2.0);
            let (cap_top, cap_bottom) = (num(mid - 4.5), num(mid + 4.5));
            writeln!(
                out,
                r##"<g class="whisker" stroke="#1b1f24" stroke-width="1.2"><line x1="{x1}" x2="{x2}" y1="{m}" y2="{m}"/><line x1="{x1}" x2="{x1}" y1="{cap_top}" y2="{cap_bottom}"/><line x1="{x2}" x2="{x2}" y1="{cap_top}" y2="{cap_bottom}"/></g>"##,
                m = num(mid),
            )?;
        }
        let partial = if measured < bar.repeats { format!(" ({measured}/{})", bar.repeats) } else { String::new() };
        let text = format!("{}{partial}", display.format(s.median));
        // SVG cannot measure text; 6 units a character is a safe guess at
        // this size. A value with no room right of its bar goes inside it.
        let text_width = 6.0 * text.chars().count() as f64;
        let outside = end.max(x(s.max)) + 4.0;
        let (text_x, fill, weight) = if outside + text_width <= WIDTH - 2.0 || end - start < text_width + 8.0 {
            (outside, "#1b1f24", "400")
        } else {
            (start + 4.0, ink_on(PALETTE[bar.colour % PALETTE.len()]), "600")
        };
        writeln!(
            out,
            r#"<text class="value" x="{}" y="{}" font-size="10.5" font-weight="{weight}" fill="{fill}">{}</text>"#,
            num(text_x),
            num(top + BAR_HEIGHT / 2.0 + 3.8),
            escape_xml(&text),
        )
    }
}

/// The label lines right-aligned at `right`, centred on `middle`: the
/// target dark, the parameters and run lighter.
fn write_label(out: &mut String, bar: &Bar, right: f64, middle: f64) -> fmt::Result {
    let lines = bar.lines();
    let first = middle - (lines.len() - 1) as f64 * LABEL_LINE / 2.0 + 4.0;
    write!(out, r#"<g class="label" text-anchor="end"><title>{}</title>"#, escape_xml(&bar.label()))?;
    for (i, line) in lines.iter().enumerate() {
        let (size, colour, weight) = if i == 0 { ("11.5", "#1b1f24", "600") } else { ("10", "#5b6470", "400") };
        write!(
            out,
            r#"<text x="{}" y="{}" font-size="{size}" font-weight="{weight}" fill="{colour}">{}</text>"#,
            num(right),
            num(first + i as f64 * LABEL_LINE),
            escape_xml(&shorten(line, LABEL_CHARS))
        )?;
    }
    writeln!(out, "</g>")
}

/// A missing mark: a dashed empty box and "missing: why", the whole
/// reason in the tooltip.
fn write_missing(out: &mut String, bar: &Bar, left: f64, top: f64, room: f64) -> fmt::Result {
    let reason = bar.missing_reason();
    let chars = ((room - 8.0) / 5.6) as usize;
    writeln!(
        out,
        r##"<g class="missing" data-fs="{fs}" data-params="{p}" data-run="{r}" data-repeats="{n}" data-missing="{why}"><title>{tip}</title><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#f4f5f7" stroke="#9aa1aa" stroke-dasharray="3 2"/><text x="{tx}" y="{ty}" font-size="10.5" font-style="italic" fill="#5b6470">{text}</text></g>"##,
        fs = escape_xml(&bar.fs),
        p = escape_xml(&bar.params),
        r = escape_xml(&bar.run),
        n = bar.repeats,
        why = escape_xml(&reason),
        tip = escape_xml(&format!("{}: missing: {reason}", bar.label())),
        x = num(left),
        y = num(top),
        w = num(room),
        h = num(BAR_HEIGHT),
        tx = num(left + 5.0),
        ty = num(top + BAR_HEIGHT / 2.0 + 3.8),
        text = escape_xml(&shorten(&format!("missing: {reason}"), chars.max(8))),
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

fn better_sentence(better: Better) -> &'static str {
    match better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    fn bar(fs: &str, values: &[f64], repeats: usize) -> Bar {
        Bar {
            fs: fs.to_string(),
            params: String::new(),
            run: String::new(),
            colour: 0,
            values: values.to_vec(),
            repeats,
            missing: if values.len() < repeats { vec!["needs root".to_string()] } else { Vec::new() },
        }
    }

    fn chart(bars: Vec<Bar>) -> String {
        BarChart { scenario: "s", figure: "wall_s", unit: "s", better: Better::Lower, kind: Kind::Timing, about: None, bars }
            .render()
    }

    /// The value of `name="..."` in each element of class `class`.
    fn attrs<'a>(svg: &'a str, class: &str, name: &str) -> Vec<&'a str> {
        svg.split('<')
            .filter(|tag| tag.contains(&format!(r#"class="{class}""#)))
            .filter_map(|tag| tag.split(&format!(r#" {name}=""#)).nth(1)?.split('"').next())
            .collect()
    }

    #[test]
    fn medians_and_ranges() {
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[3.0, 1.0, 2.0]), Some(Spread { median: 2.0, min: 1.0, max: 3.0 }));
        assert_eq!(spread(&[4.0, 1.0]), Some(Spread { median: 2.5, min: 1.0, max: 4.0 }));
    }

    #[test]
    fn two_targets_of_three_repeats_give_medians_and_whiskers() {
        let svg = chart(vec![bar("ext4", &[0.3, 0.1, 0.2], 3), bar("xfs", &[5.0, 7.0, 6.0], 3)]);
        assert_eq!(attrs(&svg, "bar", "data-fs"), ["ext4", "xfs"]);
        assert_eq!(attrs(&svg, "bar", "data-value"), ["0.2", "6"]);
        assert_eq!(attrs(&svg, "bar", "data-min"), ["0.1", "5"]);
        assert_eq!(attrs(&svg, "bar", "data-max"), ["0.3", "7"]);
        assert_eq!(attrs(&svg, "bar", "data-repeats"), ["3", "3"]);
        assert_eq!(svg.matches(r#"class="whisker""#).count(), 2);
        assert!(svg.contains(">0.2 s</text>") && svg.contains(">6 s</text>"), "values printed");
        assert!(svg.contains(r##"fill="#1b1f24">6 s</text>"##), "right of the bar while there is room");
        assert!(svg.contains("median of 3, whisker min–max"));
        assert!(svg.contains(">wall_s (s)</text>"), "the unit is in the axis title");
    }

    #[test]
    fn a_long_value_at_the_top_of_the_scale_goes_inside_its_bar() {
        let svg = chart(vec![bar("ext4", &[2.5, 2.5], 3), bar("xfs", &[2.0, 2.0], 3)]);
        assert!(svg.contains(r##"fill="#ffffff">2.5 s (2/3)</text>"##), "{svg}");
        assert!(svg.contains(r##"fill="#1b1f24">2 s (2/3)</text>"##), "{svg}");
    }

    #[test]
    fn inside_values_are_dark_on_light_bars() {
        assert_eq!(ink_on("#0072b2"), "#ffffff");
        assert_eq!(ink_on("#e69f00"), "#1b1f24");
        assert_eq!(ink_on("#56b4e9"), "#1b1f24");
    }

    #[test]
    fn one_repeat_draws_no_whisker() {
        let svg = chart(vec![bar("ext4", &[1.0], 1), bar("xfs", &[2.0], 1)]);
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2);
        assert!(!svg.contains("whisker"));
    }

    #[test]
    fn missing_is_said_never_drawn_as_zero() {
        let svg = chart(vec![bar("ext4", &[1.0], 1), bar("dir", &[], 1)]);
        assert_eq!(attrs(&svg, "bar", "data-fs"), ["ext4"], "no bar for the missing one");
        assert!(svg.contains("axis-title"));
        let nothing = chart(vec![bar("dir", &[], 1)]);
        assert!(!nothing.contains("axis-title") && !nothing.contains(">0</text>"), "no scale without a value");
        assert_eq!(attrs(&svg, "missing", "data-fs"), ["dir"]);
        assert_eq!(attrs(&svg, "missing", "data-missing"), ["needs root"]);
        assert!(svg.contains("<title>dir: missing: needs root</title>"));
        assert!(svg.contains(">missing: needs root</text>"));
    }

    #[test]
    fn partly_measured_bars_say_so() {
        let svg = chart(vec![bar("ext4", &[1.0, 3.0], 3)]);
        assert_eq!(attrs(&svg, "bar", "data-measured"), ["2"]);
        assert!(svg.contains("measured in 2 of 3 repeats, missing in the others: needs root"));
        assert!(svg.contains(">2 s (2/3)</text>"));
    }

    #[test]
    fn labels_and_names_are_escaped() {
        let mut odd = bar("a<b&\"c\"", &[1.0], 1);
        odd.params = "name=<x>".to_string();
        let svg = BarChart {
            scenario: "s&",
            figure: "f<",
            unit: "count",
            better: Better::Higher,
            kind: Kind::Exact,
            about: Some("\"quoted\""),
            bars: vec![odd],
        }
        .render();
        assert!(svg.contains(r#"data-fs="a&lt;b&amp;&quot;c&quot;""#));
        assert!(svg.contains(r#"data-scenario="s&amp;" data-figure="f&lt;""#));
        assert!(!svg.contains("<b") && !svg.contains("<x>") && !svg.contains("\"quoted\""));
    }

    #[test]
    fn bytes_scale_to_one_unit_and_negative_values_extend_left() {
        let svg = BarChart {
            scenario: "s",
            figure: "bytes",
            unit: "bytes",
            better: Better::Lower,
            kind: Kind::Exact,
            about: None,
            bars: vec![bar("ext4", &[16.0 * 1048576.0], 1)],
        }
        .render();
        assert!(svg.contains(">bytes (MiB)</text>") && svg.contains(">16 MiB</text>"), "{svg}");
        let svg = chart(vec![bar("ext4", &[-2.0], 1), bar("xfs", &[4.0], 1)]);
        let x: Vec<f64> = attrs(&svg, "bar", "x").iter().map(|v| v.parse().unwrap()).collect();
        assert!(x[0] < x[1], "the negative bar starts left of the zero line");
    }
}
