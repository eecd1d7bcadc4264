//! Drawing folded columns as the SVG strip: title and caption, the band of
//! jump marks, the coloured strip with its shared-record ticks, the file
//! offset axis, and the legend.
//!
//! The design decision: elements come from columns, never from records,
//! and neighbouring columns that look alike become one element, so the
//! document's size is bounded by the column count whatever the file.

use std::fmt::{self, Write as _};

use super::colour::{BACKWARD_COLOUR, FORWARD_COLOUR, GREY_UNKNOWN, OUTLINE_COLOUR, SHARED_COLOUR, device_colour, hex};
use super::columns::{Column, Fold, KIND_SHARED, KIND_UNKNOWN, KIND_UNWRITTEN};
use crate::report::markup::{escape_xml, num, shorten};
use crate::units::bytes_short;

// Geometry, in SVG user units.
const MARGIN: f64 = 40.0;
const STRIP_WIDTH: f64 = 1000.0;
const WIDTH: f64 = MARGIN * 2.0 + STRIP_WIDTH;
const HEIGHT: f64 = 258.0;
const CAPTION_Y: f64 = 38.0;
const BAND_TOP: f64 = 62.0;
const BAND_MID: f64 = 88.0;
const MARK_MIN: f64 = 3.0;
const MARK_MAX: f64 = 22.0;
const STRIP_TOP: f64 = 114.0;
const STRIP_HEIGHT: f64 = 48.0;
const SHARED_TOP: f64 = STRIP_TOP + STRIP_HEIGHT + 2.0;
const SHARED_HEIGHT: f64 = 4.0;
const AXIS_TOP: f64 = SHARED_TOP + SHARED_HEIGHT + 2.0;
const LEGEND_TOP: f64 = 220.0;

/// Top of the picture without its title line: the caption's first line
/// starts below it.
const UNTITLED_TOP: f64 = 24.0;
/// Bottom of the picture without its legend: below the axis's name.
const UNLABELLED_BOTTOM: f64 = AXIS_TOP + 40.0;

/// Which parts of the picture to draw besides the strip itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Parts {
    /// The bold title line (a page's own caption may say it instead).
    pub(super) title: bool,
    /// The colour ramp and the swatches of what the looks mean.
    pub(super) legend: bool,
}

/// The SVG document of `fold` headed by `title`: UTF-8, self-contained,
/// with a viewBox.
pub(super) fn render(title: &str, fold: &Fold, parts: Parts) -> Vec<u8> {
    let mut svg = String::with_capacity(64 * 1024);
    Picture { title, fold, parts }.render(&mut svg).expect("fmt::Write for String never fails");
    svg.into_bytes()
}

/// One strip being drawn.
struct Picture<'a> {
    title: &'a str,
    fold: &'a Fold,
    parts: Parts,
}

impl Picture<'_> {
    /// The x coordinate of a file offset.
    fn x(&self, logical: f64) -> f64 {
        MARGIN + logical / (self.fold.span().max(1) as f64) * STRIP_WIDTH
    }

    /// Left and right x of column `index`, the last one cut at the span.
    fn column_x(&self, index: usize) -> (f64, f64) {
        let bytes = self.fold.column_bytes as f64;
        let start = index as f64 * bytes;
        let end = (start + bytes).min(self.fold.span() as f64);
        (self.x(start), self.x(end))
    }

    fn render(&self, out: &mut String) -> fmt::Result {
        let title = escape_xml(self.title);
        // Parts left out are cut off by the viewBox, not moved: one geometry.
        let top = if self.parts.title { 0.0 } else { UNTITLED_TOP };
        let bottom = if self.parts.legend { HEIGHT } else { UNLABELLED_BOTTOM };
        writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 {top} {w} {h}" font-family="sans-serif" role="img">"#,
            w = num(WIDTH),
            h = num(bottom - top),
            top = num(top),
        )?;
        writeln!(out, "<title>{title}</title>")?;
        self.render_defs(out)?;
        writeln!(
            out,
            r##"<rect y="{}" width="{}" height="{}" fill="#ffffff"/>"##,
            num(top),
            num(WIDTH),
            num(bottom - top)
        )?;
        if self.parts.title {
            writeln!(
                out,
                r##"<text x="{x}" y="20" font-size="15" font-weight="bold" fill="#222222">{t}</text>"##,
                x = num(MARGIN),
                t = escape_xml(&shorten(self.title, 130)),
            )?;
        }
        // Two short lines rather than one that runs off the picture.
        for (line, text) in self.caption().iter().enumerate() {
            writeln!(
                out,
                r##"<text x="{x}" y="{y}" font-size="12" fill="#333333">{c}</text>"##,
                x = num(MARGIN),
                y = num(CAPTION_Y + 15.0 * line as f64),
                c = escape_xml(text),
            )?;
        }
        self.render_jump_band(out)?;
        self.render_strip(out)?;
        self.render_axis(out)?;
        if self.parts.legend {
            self.render_legend(out)?;
        }
        writeln!(out, "</svg>")
    }

    fn render_defs(&self, out: &mut String) -> fmt::Result {
        writeln!(out, "<defs>")?;
        // Holes: faint diagonal hatching, so "nothing here" reads differently
        // from "light-coloured data".
        writeln!(
            out,
            r##"<pattern id="fslab-strip-hole" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#ffffff"/><path d="M0 6L6 0M-1 1L1 -1M5 7L7 5" stroke="#c8c8c8" stroke-width="1"/></pattern>"##
        )?;
        // Unwritten: white stripes over the data colour, which stays readable.
        writeln!(
            out,
            r##"<pattern id="fslab-strip-unwritten" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0 6L6 0M-1 1L1 -1M5 7L7 5" stroke="#ffffff" stroke-opacity="0.7" stroke-width="2"/></pattern>"##
        )?;
        if self.parts.legend {
            writeln!(out, r#"<linearGradient id="fslab-strip-ramp" x1="0" x2="1" y1="0" y2="0">"#)?;
            for step in 0..=8 {
                let fraction = f64::from(step) / 8.0;
                writeln!(out, r#"<stop offset="{}" stop-color="{}"/>"#, num(fraction), hex(device_colour(fraction)))?;
            }
            writeln!(out, "</linearGradient>")?;
        }
        writeln!(out, "</defs>")
    }

    fn render_jump_band(&self, out: &mut String) -> fmt::Result {
        let left = num(MARGIN);
        let right = num(MARGIN + STRIP_WIDTH);
        writeln!(
            out,
            r##"<line x1="{left}" x2="{right}" y1="{m}" y2="{m}" stroke="#d0d0d0" stroke-width="0.5"/>"##,
            m = num(BAND_MID)
        )?;
        writeln!(
            out,
            r#"<text x="{x}" y="{y}" font-size="9" fill="{FORWARD_COLOUR}" text-anchor="end">fwd</text>"#,
            x = num(MARGIN - 4.0),
            y = num(BAND_MID - 6.0)
        )?;
        writeln!(
            out,
            r#"<text x="{x}" y="{y}" font-size="9" fill="{BACKWARD_COLOUR}" text-anchor="end">back</text>"#,
            x = num(MARGIN - 4.0),
            y = num(BAND_MID + 13.0)
        )?;
        let scale = self.fold.jump_scale();
        for index in 0..self.fold.visible_columns() {
            let column = &self.fold.columns[index];
            if column.forward == 0 && column.backward == 0 && column.undirected == 0 {
                continue;
            }
            let (x0, x1) = self.column_x(index);
            // A mark no wider than 2 units keeps neighbouring jumps apart.
            let width = (x1 - x0).clamp(0.5, 2.0);
            let x = (x0 + x1 - width) / 2.0;
            if column.undirected > 0 {
                write_mark(
                    out,
                    "jump-unknown",
                    x,
                    BAND_MID - 4.0,
                    width,
                    8.0,
                    GREY_UNKNOWN,
                    &format!("{} jump(s) with an unknown location", column.undirected),
                )?;
            }
            if column.forward > 0 {
                let height = mark_height(column.forward_max, scale);
                let tip = format!("{} forward jump(s), farthest {}", column.forward, bytes_short(column.forward_max));
                write_mark(out, "jump-fwd", x, BAND_MID - height, width, height, FORWARD_COLOUR, &tip)?;
            }
            if column.backward > 0 {
                let height = mark_height(column.backward_max, scale);
                let tip =
                    format!("{} backward jump(s), farthest {}", column.backward, bytes_short(column.backward_max));
                write_mark(out, "jump-back", x, BAND_MID, width, height, BACKWARD_COLOUR, &tip)?;
            }
        }
        Ok(())
    }

    fn render_strip(&self, out: &mut String) -> fmt::Result {
        let (top, height) = (num(STRIP_TOP), num(STRIP_HEIGHT));
        writeln!(
            out,
            r#"<rect x="{x}" y="{top}" width="{w}" height="{height}" fill="url(#fslab-strip-hole)"/>"#,
            x = num(MARGIN),
            w = num(STRIP_WIDTH),
        )?;
        let visible = self.fold.visible_columns();
        // Neighbouring columns of the same look become one rect: a file of
        // few extents gives a few elements, not a thousand.
        let fill_of = |column: &Column| -> Option<(String, bool)> {
            (column.mapped_bytes > 0).then(|| {
                let colour = if column.best_kind & KIND_UNKNOWN != 0 {
                    GREY_UNKNOWN.to_string()
                } else {
                    hex(device_colour(self.fold.colour_fraction(column.best_physical)))
                };
                (colour, column.best_kind & KIND_UNWRITTEN != 0)
            })
        };
        for (start, end, look) in runs(&self.fold.columns[..visible], fill_of) {
            let Some((colour, unwritten)) = look else { continue };
            let (x0, x1) = (self.column_x(start).0, self.column_x(end - 1).1);
            let (x, w) = (num(x0), num(x1 - x0));
            writeln!(out, r#"<rect class="data" x="{x}" y="{top}" width="{w}" height="{height}" fill="{colour}"/>"#)?;
            if unwritten {
                writeln!(
                    out,
                    r#"<rect class="unwritten" x="{x}" y="{top}" width="{w}" height="{height}" fill="url(#fslab-strip-unwritten)"/>"#
                )?;
            }
        }
        let shared_of = |column: &Column| column.any_kind & KIND_SHARED != 0;
        for (start, end, shared) in runs(&self.fold.columns[..visible], shared_of) {
            if shared {
                let (x0, x1) = (self.column_x(start).0, self.column_x(end - 1).1);
                writeln!(
                    out,
                    r#"<rect class="shared" x="{}" y="{}" width="{}" height="{}" fill="{SHARED_COLOUR}"/>"#,
                    num(x0),
                    num(SHARED_TOP),
                    num(x1 - x0),
                    num(SHARED_HEIGHT)
                )?;
            }
        }
        writeln!(
            out,
            r#"<rect x="{x}" y="{top}" width="{w}" height="{height}" fill="none" stroke="{OUTLINE_COLOUR}" stroke-width="1"/>"#,
            x = num(MARGIN),
            w = num(STRIP_WIDTH),
        )?;
        if self.fold.records == 0 {
            writeln!(
                out,
                r##"<text x="{x}" y="{y}" font-size="13" fill="#666666" text-anchor="middle">{t}</text>"##,
                x = num(MARGIN + STRIP_WIDTH / 2.0),
                y = num(STRIP_TOP + STRIP_HEIGHT / 2.0 + 4.0),
                t = if self.fold.span() == 0 { "empty file" } else { "no mapped data" },
            )?;
        }
        if self.fold.max_logical_end > self.fold.last_block_end {
            // Records past EOF (fallocate KEEP_SIZE) widened the axis; show
            // where the file really ends (not for its last block's slack).
            let x = num(self.x(self.fold.file_size as f64));
            writeln!(
                out,
                r##"<line x1="{x}" x2="{x}" y1="{y1}" y2="{y2}" stroke="#222222" stroke-width="1" stroke-dasharray="3 2"/>"##,
                y1 = num(BAND_TOP),
                y2 = num(STRIP_TOP + STRIP_HEIGHT + 4.0),
            )?;
            writeln!(
                out,
                r##"<text x="{x}" y="{y}" font-size="10" fill="#222222" dx="3">EOF</text>"##,
                y = num(BAND_TOP + 8.0)
            )?;
        }
        Ok(())
    }

    fn render_axis(&self, out: &mut String) -> fmt::Result {
        let span = self.fold.span();
        let ticks: &[u64] = if span == 0 { &[0] } else { &[0, 1, 2, 3, 4] };
        for &quarter in ticks {
            // u128: span * 3 overflows u64 for spans near the top of the range.
            let logical = (u128::from(span) * u128::from(quarter) / 4) as u64;
            let x = num(self.x(logical as f64));
            let anchor = match quarter {
                0 => "start",
                4 => "end",
                _ => "middle",
            };
            writeln!(
                out,
                r#"<line x1="{x}" x2="{x}" y1="{y1}" y2="{y2}" stroke="{OUTLINE_COLOUR}" stroke-width="1"/>"#,
                y1 = num(AXIS_TOP),
                y2 = num(AXIS_TOP + 5.0),
            )?;
            writeln!(
                out,
                r##"<text x="{x}" y="{y}" font-size="11" fill="#333333" text-anchor="{anchor}">{label}</text>"##,
                y = num(AXIS_TOP + 17.0),
                label = bytes_short(logical),
            )?;
        }
        let resolution =
            if span == 0 { String::new() } else { format!(" (one column ≈ {})", bytes_short(self.fold.column_bytes)) };
        writeln!(
            out,
            r##"<text x="{x}" y="{y}" font-size="11" fill="#666666" text-anchor="middle">file offset →{resolution}</text>"##,
            x = num(MARGIN + STRIP_WIDTH / 2.0),
            y = num(AXIS_TOP + 33.0),
        )
    }

    fn render_legend(&self, out: &mut String) -> fmt::Result {
        write_legend(out, self.ramp_labels())
    }

    /// The words under the colour ramp: its two ends and what it spans.
    fn ramp_labels(&self) -> [String; 3] {
        if let Some((low, high)) = self.fold.physical_range().filter(|_| self.fold.local_colour) {
            // The device's size is the caption's to say: the ramp is short.
            let (from, to) = (bytes_short(low), bytes_short(high));
            let to = if to == from { format!("+{}", bytes_short(high - low)) } else { to };
            return [from, "this file's range".to_string(), to];
        }
        let device = if self.fold.device_bytes > 0 {
            bytes_short(self.fold.device_bytes)
        } else {
            format!("{} (farthest seen)", bytes_short(self.fold.device_scale()))
        };
        ["0".to_string(), "device position".to_string(), device]
    }

    /// The caption: counts and jumps, then flags; exact whatever the column
    /// resolution.
    fn caption(&self) -> Vec<String> {
        if self.fold.records == 0 {
            return vec![if self.fold.span() == 0 {
                "empty file: no data".to_string()
            } else {
                format!("no mapped data: the whole {} is a hole", bytes_short(self.fold.span()))
            }];
        }
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        // Writing into a String cannot fail, hence the ignored results below.
        let mut counts = format!(
            "{} · {} · jumps: {} forward, {} backward",
            plural(self.fold.records, "record", "records"),
            plural(self.fold.extents, "extent", "extents"),
            self.fold.forward_jumps,
            self.fold.backward_jumps,
        );
        if self.fold.undirected_jumps > 0 {
            let _ = write!(counts, ", {} to/from unknown location", self.fold.undirected_jumps);
        }
        if self.fold.forward_jumps + self.fold.backward_jumps > 0 {
            let _ = write!(counts, " (farthest {})", bytes_short(self.fold.farthest_jump));
        }
        let mut flags = Vec::new();
        for (count, what) in [
            (self.fold.unwritten_records, "unwritten"),
            (self.fold.unknown_records, "of unknown location"),
            (self.fold.shared_records, "shared"),
        ] {
            if count > 0 {
                flags.push(format!("{} {what}", plural(count, "record", "records")));
            }
        }
        if self.fold.past_eof_bytes > 0 {
            flags.push(format!("{} mapped past EOF", bytes_short(self.fold.past_eof_bytes)));
        }
        if flags.is_empty() { vec![counts] } else { vec![counts, flags.join(" · ")] }
    }
}

/// The legend row: the colour ramp with `labels` (start, middle, end) and
/// a swatch per look.
fn write_legend(out: &mut String, labels: [String; 3]) -> fmt::Result {
    let (top, text_y) = (LEGEND_TOP, LEGEND_TOP + 26.0);
    writeln!(
        out,
        r#"<rect x="{x}" y="{y}" width="240" height="12" fill="url(#fslab-strip-ramp)" stroke="{OUTLINE_COLOUR}" stroke-width="0.5"/>"#,
        x = num(MARGIN),
        y = num(top),
    )?;
    let [start_label, middle_label, end_label] = labels;
    for (x, anchor, label) in [
        (MARGIN, "start", start_label),
        (MARGIN + 120.0, "middle", middle_label),
        (MARGIN + 240.0, "end", end_label),
    ] {
        writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="11" fill="#333333" text-anchor="{anchor}">{}</text>"##,
            num(x),
            num(text_y),
            escape_xml(&label)
        )?;
    }

    // Swatches: look, then label, left to right.
    let mid_colour = hex(device_colour(0.5));
    let swatch = |out: &mut String, slot: usize, body: &str, label: &str| -> fmt::Result {
        // Label widths differ; fixed slots would let long ones collide.
        let x = [330.0, 400.0, 535.0, 630.0, 710.0, 840.0][slot];
        writeln!(out, r#"<g transform="translate({},{})">{body}"#, num(x), num(top))?;
        writeln!(out, r##"<text x="18" y="10" font-size="11" fill="#333333">{label}</text></g>"##)
    };
    swatch(
        out,
        0,
        &format!(
            r#"<rect width="12" height="12" fill="url(#fslab-strip-hole)" stroke="{OUTLINE_COLOUR}" stroke-width="0.5"/>"#
        ),
        "hole",
    )?;
    swatch(out, 1, &format!(r#"<rect width="12" height="12" fill="{GREY_UNKNOWN}"/>"#), "unknown location")?;
    swatch(
        out,
        2,
        &format!(
            r#"<rect width="12" height="12" fill="{mid_colour}"/><rect width="12" height="12" fill="url(#fslab-strip-unwritten)"/>"#
        ),
        "unwritten",
    )?;
    swatch(out, 3, &format!(r#"<rect y="4" width="12" height="4" fill="{SHARED_COLOUR}"/>"#), "shared")?;
    swatch(out, 4, &format!(r#"<rect x="5" width="2" height="12" fill="{FORWARD_COLOUR}"/>"#), "jump forward ↑")?;
    swatch(out, 5, &format!(r#"<rect x="5" width="2" height="12" fill="{BACKWARD_COLOUR}"/>"#), "jump backward ↓")
}

/// The legend alone, for a page that shows it once above strips drawn
/// without theirs ([`Parts::legend`] false) and with local colours: the
/// ramp's ends are each file's own.
pub(super) fn render_legend_alone() -> Vec<u8> {
    let fold = Fold::new(0, 0);
    let picture = Picture { title: "", fold: &fold, parts: Parts { title: false, legend: true } };
    let (top, height) = (LEGEND_TOP - 4.0, 36.0);
    let mut out = String::with_capacity(4 * 1024);
    let write = |out: &mut String| -> fmt::Result {
        writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 {top} {w} {h}" font-family="sans-serif" role="img">"#,
            w = num(WIDTH),
            h = num(height),
            top = num(top),
        )?;
        writeln!(out, "<title>How to read the extent strips</title>")?;
        picture.render_defs(out)?;
        let labels = ["lowest".to_string(), "each file's own range".to_string(), "highest".to_string()];
        write_legend(out, labels)?;
        writeln!(out, "</svg>")
    };
    write(&mut out).expect("fmt::Write for String never fails");
    out.into_bytes()
}

/// Height of a jump mark: logarithmic in the distance counted in 4 KiB
/// blocks, relative to the colour scale's span (the whole device, or the
/// file's own range), so a one-block hop and a jump across it both stay
/// visible and distinct.
fn mark_height(distance: u64, device_scale: u64) -> f64 {
    let blocks = |bytes: u64| (bytes as f64 / 4096.0).ln_1p();
    let fraction = (blocks(distance) / blocks(device_scale.max(4096))).clamp(0.0, 1.0);
    MARK_MIN + (MARK_MAX - MARK_MIN) * fraction
}

#[allow(clippy::too_many_arguments)] // one mark is exactly these eight things
fn write_mark(
    out: &mut String,
    class: &str,
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    colour: &str,
    tip: &str,
) -> fmt::Result {
    writeln!(
        out,
        r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}" fill="{colour}"><title>{}</title></rect>"#,
        num(x),
        num(y),
        num(width),
        num(height),
        escape_xml(tip)
    )
}

/// Maximal runs of neighbouring columns with equal `look`, as
/// `(first, end, look)` with `end` exclusive.
fn runs<T: PartialEq>(columns: &[Column], look: impl Fn(&Column) -> T) -> Vec<(usize, usize, T)> {
    let mut runs: Vec<(usize, usize, T)> = Vec::new();
    for (index, column) in columns.iter().enumerate() {
        let current = look(column);
        match runs.last_mut() {
            Some(last) if last.2 == current => last.1 = index + 1,
            _ => runs.push((index, index + 1, current)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const GIB: u64 = 1024 * 1024 * KIB;

    #[test]
    fn jump_marks_grow_with_distance() {
        let device = 100 * GIB;
        assert_eq!(mark_height(0, device), MARK_MIN);
        assert!(mark_height(4 * KIB, device) < mark_height(GIB, device));
        assert_eq!(mark_height(device, device), MARK_MAX);
        assert_eq!(mark_height(10 * device, device), MARK_MAX);
    }
}
