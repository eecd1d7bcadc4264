//! What seekwatcher draws, for the HTML report: the block requests of one
//! phase of a case (its work, or its cold read-back), device offset
//! against time, twice over — above at the time each request was issued,
//! as the trace saw it, below at the time the disk model completed it on
//! the run's drive — reads and writes in two colours. A stream that
//! streams is a rising line in both; one the drive pays seeks for is a
//! cloud that the modelled panel stretches.
//!
//! The design decisions:
//! - The two panels share the offset axis and each has its own time axis:
//!   the loop device under a scratch file system and a 7200 rpm disk run
//!   at times a hundred apart, and a shared axis would squash one of them.
//! - A chart is bounded whatever the stream: the case keeps at most 1,024
//!   requests and 256 flushes ([`KEPT_REQUESTS`], [`KEPT_FLUSHES`]), and
//!   a panel draws at most [`DRAWN`] of the requests, every k-th, each a
//!   dot of path data (about 15 bytes), and the flushes kept, each a line:
//!   under 20 KB a chart. It says how many it drew of how many the stream
//!   had.

use std::fmt::{self, Write as _};

use super::axis::{Display, Scale, Ticks};
use super::markup::{escape_xml, num, shorten};
use crate::record::requests::{KEPT_FLUSHES, KEPT_REQUESTS};
use crate::record::{RequestOp, RequestPoint, RequestStream};
use crate::units::group_digits;

/// Requests a panel draws at most.
pub const DRAWN: usize = 512;

const READ_COLOUR: &str = "#0072b2";
const WRITE_COLOUR: &str = "#d55e00";
const FLUSH_COLOUR: &str = "#8a929c";

// Geometry, in SVG user units (the page's three-column grid).
const WIDTH: f64 = 420.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 410.0;
const PANEL_HEIGHT: f64 = 96.0;
/// The top of each panel's plot.
const PANEL_TOPS: [f64; 2] = [70.0, 220.0];
const HEIGHT: f64 = 352.0;
/// Characters of the title drawn before an ellipsis (the whole is in the
/// tooltip).
const TITLE_CHARS: usize = 58;

/// One stream's chart.
#[derive(Debug, Clone, Copy)]
pub struct SeekChart<'a> {
    /// Heads the chart: the place, repeat and phase.
    pub title: &'a str,
    /// The scenario it belongs to (`data-scenario`).
    pub scenario: &'a str,
    /// The stream.
    pub stream: &'a RequestStream,
}

/// Which time a panel places requests at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    Measured,
    Modelled,
}

impl SeekChart<'_> {
    /// How many kept requests with data one drawn stands for: 1 when they
    /// are [`DRAWN`] or fewer.
    fn step(&self) -> usize {
        self.stream.points.iter().filter(|p| p.op != RequestOp::Flush).count().div_ceil(DRAWN).max(1)
    }

    /// The points drawn: every flush kept, and every k-th kept request with
    /// data, at most [`DRAWN`].
    fn drawn(&self) -> Vec<&RequestPoint> {
        let step = self.step();
        let mut data = 0;
        self.stream
            .points
            .iter()
            .filter(|p| {
                if p.op == RequestOp::Flush {
                    return true;
                }
                data += 1;
                (data - 1) % step == 0
            })
            .collect()
    }

    /// The chart as an inline SVG element.
    pub fn render(&self) -> String {
        let mut svg = String::with_capacity(16 * 1024);
        self.write(&mut svg).expect("fmt::Write for String never fails");
        svg
    }

    fn write(&self, out: &mut String) -> fmt::Result {
        let s = self.stream;
        let drawn = self.drawn();
        let data = || drawn.iter().filter(|p| p.op != RequestOp::Flush);
        let lo = data().map(|p| p.offset).min().unwrap_or(0);
        let hi = data().map(|p| p.offset.saturating_add(p.length)).max().unwrap_or(0);
        let bytes = Display::for_unit("bytes", hi as f64);
        let offsets = Ticks::over(bytes.scaled(lo as f64), bytes.scaled(hi as f64), 4);
        writeln!(
            out,
            r#"<svg class="chart requests" data-scenario="{sc}" data-phase="{ph}" data-disk="{d}" data-requests="{n}" data-kept="{k}" data-drawn="{dr}" viewBox="0 0 {w} {h}" role="img" aria-label="{t}">"#,
            sc = escape_xml(self.scenario),
            ph = escape_xml(&s.phase),
            d = escape_xml(&s.disk),
            n = s.requests,
            k = s.points.len(),
            dr = drawn.len(),
            w = num(WIDTH),
            h = num(HEIGHT),
            t = escape_xml(self.title),
        )?;
        writeln!(out, "<title>{}</title>", escape_xml(&format!("{}: block requests, device offset against time", self.title)))?;
        writeln!(
            out,
            r##"<text x="8" y="17" font-size="13" font-weight="600" fill="#1b1f24">{}</text>"##,
            escape_xml(&shorten(self.title, TITLE_CHARS))
        )?;
        let every = s.every.saturating_mul(self.step() as u64);
        let one_in = if every > 1 { format!(" (1 in {})", group_digits(&every.to_string())) } else { String::new() };
        let flushes = drawn.iter().filter(|p| p.op == RequestOp::Flush).count();
        let flushes = if s.flushes > 0 { format!(", {flushes} of {} flushes", group_digits(&s.flushes.to_string())) } else { String::new() };
        writeln!(
            out,
            r##"<text x="8" y="32" font-size="10.5" fill="#5b6470">{} of {} requests drawn{one_in}{flushes}</text>"##,
            drawn.iter().filter(|p| p.op != RequestOp::Flush).count(),
            group_digits(&s.requests.to_string()),
        )?;
        writeln!(
            out,
            r##"<text x="8" y="47.5" font-size="10" fill="#5b6470">a case keeps ≤ {KEPT_REQUESTS} requests, {KEPT_FLUSHES} flushes</text>"##
        )?;
        write_legend(out)?;
        for (clock, top) in [(Clock::Measured, PANEL_TOPS[0]), (Clock::Modelled, PANEL_TOPS[1])] {
            let panel = Panel { top, offsets, bytes: &bytes };
            self.write_panel(out, clock, &panel, &drawn)?;
        }
        writeln!(out, "</svg>")
    }

    fn write_panel(&self, out: &mut String, clock: Clock, panel: &Panel, drawn: &[&RequestPoint]) -> fmt::Result {
        let s = self.stream;
        let (heading, span) = match clock {
            Clock::Measured => ("measured: when the trace saw each issued".to_string(), Some(s.measured_s)),
            Clock::Modelled => (
                format!("modelled on {}, depth {}: when the drive completed each", s.disk, s.queue_depth),
                s.modelled_s.or_else(|| drawn.iter().filter_map(|p| p.modelled_s).reduce(f64::max)),
            ),
        };
        writeln!(
            out,
            r##"<text class="panel" x="{}" y="{}" font-size="10.5" fill="#3a4048">{}</text>"##,
            num(LEFT),
            num(panel.top - 6.0),
            escape_xml(&shorten(&heading, 66))
        )?;
        panel.write_offsets(out)?;
        let Some(span) = span.filter(|_| clock == Clock::Measured || s.modelled_s.is_some()) else {
            return writeln!(
                out,
                r##"<text x="{}" y="{}" font-size="10.5" font-style="italic" fill="#5b6470">the model could not replay this stream (its figure says why)</text>"##,
                num(LEFT + 8.0),
                num(panel.top + PANEL_HEIGHT / 2.0)
            );
        };
        let seconds = Display::for_unit("s", span);
        let times = Ticks::over(0.0, seconds.scaled(span), 4);
        let x = |t: f64| LEFT + times.fraction(seconds.scaled(t)).clamp(0.0, 1.0) * (RIGHT - LEFT);
        let bottom = panel.top + PANEL_HEIGHT;
        for tick in times.values() {
            writeln!(
                out,
                r##"<text x="{}" y="{}" font-size="10" fill="#5b6470" text-anchor="middle">{}</text>"##,
                num(x(tick * seconds.divisor)),
                num(bottom + 13.0),
                escape_xml(&times.label(tick))
            )?;
        }
        writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="10" fill="#3a4048" text-anchor="middle">time ({})</text>"##,
            num((LEFT + RIGHT) / 2.0),
            num(bottom + 26.0),
            escape_xml(&seconds.axis_title())
        )?;
        // Flushes first, under the requests: a line across the panel.
        for (op, class, colour) in [(RequestOp::Flush, "flushes", FLUSH_COLOUR), (RequestOp::Read, "reads", READ_COLOUR), (RequestOp::Write, "writes", WRITE_COLOUR)] {
            let mut d = String::new();
            let mut count = 0;
            for p in drawn.iter().filter(|p| p.op == op) {
                let t = match clock {
                    Clock::Measured => Some(p.t_s),
                    Clock::Modelled => p.modelled_s,
                };
                let Some(t) = t else { continue };
                let _ = match op {
                    RequestOp::Flush => write!(d, "M{} {}v{}", tenth(x(t)), num(panel.top), num(PANEL_HEIGHT)),
                    _ => write!(d, "M{} {}h1", tenth(x(t)), tenth(panel.y(p.offset))),
                };
                count += 1;
            }
            let stroke = if op == RequestOp::Flush { r#"stroke-width="1""# } else { r#"stroke-width="2.4" stroke-linecap="round""# };
            if count > 0 {
                writeln!(
                    out,
                    r#"<path class="{class}" data-clock="{k}" data-points="{count}" d="{d}" stroke="{colour}" {stroke} fill="none"/>"#,
                    k = if clock == Clock::Measured { "measured" } else { "modelled" },
                )?;
            }
        }
        Ok(())
    }
}

/// One panel's plot: where it is and its offset axis.
struct Panel<'a> {
    top: f64,
    offsets: Ticks,
    bytes: &'a Display,
}

impl Panel<'_> {
    /// The y of device byte `offset`: the lowest at the bottom.
    fn y(&self, offset: u64) -> f64 {
        let f = self.offsets.fraction(self.bytes.scaled(offset as f64)).clamp(0.0, 1.0);
        self.top + PANEL_HEIGHT - f * PANEL_HEIGHT
    }

    /// The frame, the offset ticks and their grid lines.
    fn write_offsets(&self, out: &mut String) -> fmt::Result {
        writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fafbfc" stroke="#d5d9de"/>"##,
            num(LEFT),
            num(self.top),
            num(RIGHT - LEFT),
            num(PANEL_HEIGHT)
        )?;
        let scale = Scale::Linear(self.offsets);
        for tick in self.offsets.values() {
            let y = num(self.top + PANEL_HEIGHT - self.offsets.fraction(tick) * PANEL_HEIGHT);
            writeln!(out, r##"<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke="#eceef1"/>"##, num(LEFT), num(RIGHT))?;
            writeln!(
                out,
                r##"<text x="{}" y="{}" font-size="10" fill="#5b6470" text-anchor="end">{}</text>"##,
                num(LEFT - 4.0),
                num(self.top + PANEL_HEIGHT - self.offsets.fraction(tick) * PANEL_HEIGHT + 3.5),
                escape_xml(&format!("{} {}", self.bytes.tick_label(&scale, tick), self.bytes.axis_title()))
            )?;
        }
        Ok(())
    }
}

/// A coordinate to a tenth of a unit, without trailing zeros: a dot a
/// panel, and a few bytes fewer for each of its hundreds.
fn tenth(value: f64) -> String {
    num((value * 10.0).round() / 10.0)
}

/// Which colour is which, at the top right.
fn write_legend(out: &mut String) -> fmt::Result {
    let mut x = RIGHT - 150.0;
    write!(out, r#"<g class="legend">"#)?;
    for (word, colour) in [("read", READ_COLOUR), ("write", WRITE_COLOUR)] {
        write!(
            out,
            r##"<circle cx="{}" cy="44" r="3.5" fill="{colour}"/><text x="{}" y="47.5" font-size="10.5" fill="#1b1f24">{word}</text>"##,
            num(x),
            num(x + 7.0)
        )?;
        x += 48.0;
    }
    write!(
        out,
        r##"<path d="M{} 39v10" stroke="{FLUSH_COLOUR}"/><text x="{}" y="47.5" font-size="10.5" fill="#1b1f24">flush</text>"##,
        num(x),
        num(x + 5.0)
    )?;
    writeln!(out, "</g>")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` requests, every 50th a flush.
    fn stream(n: u64) -> RequestStream {
        RequestStream {
            phase: "work".into(),
            disk: "hdd-7200".into(),
            queue_depth: 1,
            requests: n - n / 50,
            flushes: n / 50,
            not_modelled: 0,
            every: 1,
            flushes_every: 1,
            measured_s: 0.5,
            modelled_s: Some(12.0),
            points: (0..n)
                .map(|k| RequestPoint {
                    t_s: k as f64 * 0.5 / n as f64,
                    modelled_s: Some((k + 1) as f64 * 12.0 / n as f64),
                    offset: if k % 50 == 49 { 0 } else { (k * 7919 % 1000) << 20 },
                    length: if k % 50 == 49 { 0 } else { 65536 },
                    op: match k % 50 {
                        49 => RequestOp::Flush,
                        _ if k % 3 == 0 => RequestOp::Read,
                        _ => RequestOp::Write,
                    },
                })
                .collect(),
        }
    }

    #[test]
    fn both_panels_draw_every_request_kept_up_to_the_bound() {
        let s = stream(300);
        let svg = SeekChart { title: "ext4 · repeat 1 · work", scenario: "create-file", stream: &s }.render();
        assert!(svg.starts_with(r#"<svg class="chart requests" data-scenario="create-file" data-phase="work" data-disk="hdd-7200" data-requests="294" data-kept="300" data-drawn="300""#), "{svg}");
        for clock in ["measured", "modelled"] {
            let drawn: usize = svg
                .split(&format!(r#"data-clock="{clock}" data-points=""#))
                .skip(1)
                .map(|rest| rest.split('"').next().unwrap().parse::<usize>().unwrap())
                .sum();
            assert_eq!(drawn, 300, "{clock}");
        }
        assert!(svg.contains(r#"<path class="flushes" data-clock="modelled" data-points="6""#), "{svg}");
        assert!(svg.contains("modelled on hdd-7200, depth 1"));
        assert!(svg.contains("time (ms)") && svg.contains("time (s)"), "each panel its own time axis");
        assert!(svg.contains(" MiB</text>"), "offsets in MiB");
        // A full sample: at most DRAWN a panel, and the chart small.
        let big = RequestStream { every: 8, ..stream(1024) };
        let svg = SeekChart { title: "xfs", scenario: "s", stream: &big }.render();
        assert!(svg.contains(r#"data-drawn="522""#), "504 of 1,004 reads and writes, and 20 flushes");
        assert!(svg.contains("502 of 1004 requests drawn (1 in 16), 20 of 20 flushes"), "the stream's 8 and the chart's 2: {svg}");
        assert!(svg.len() < 20 * 1024, "{} bytes", svg.len());
    }

    #[test]
    fn text_is_escaped_and_a_stream_the_model_could_not_replay_says_so() {
        let s = RequestStream { disk: "<b>disk</b>".into(), modelled_s: None, ..stream(10) };
        let s = RequestStream { points: s.points.iter().map(|p| RequestPoint { modelled_s: None, ..*p }).collect(), ..s };
        let svg = SeekChart { title: "ext4 <script>", scenario: "a\"b", stream: &s }.render();
        assert!(!svg.contains("<script>") && !svg.contains("<b>disk"), "{svg}");
        assert!(svg.contains("ext4 &lt;script&gt;") && svg.contains(r#"data-scenario="a&quot;b""#));
        assert!(svg.contains("the model could not replay this stream"));
        assert!(!svg.contains(r#"data-clock="modelled""#));
    }
}
