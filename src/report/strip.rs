//! The extent map of one file drawn as an SVG strip (`fslab map --svg OUT`).
//!
//! File offset runs left to right. Every mapped stretch is coloured by where
//! it lies on the device (dark purple at the device start, through blue and
//! green, to yellow at the end: the viridis ramp, whose lightness rises
//! steadily, so the order survives grey-scale printing and colour-blind
//! eyes). Holes show the hatched background, records of unknown location
//! (delalloc) are grey, unwritten (preallocated) ones are striped, shared
//! ones get a purple tick row under the strip. Every break of the physical
//! run is a thin mark above the strip: blue and rising for a forward jump,
//! red and hanging for a backward one, its length the logarithm of the
//! distance.
//!
//! The one design decision: the strip is a fixed array of `COLUMNS`
//! summaries, never a list of records. Each record is folded into the
//! columns it covers while it streams past, so a file of a million extents
//! costs the same memory, and gives an SVG of the same bounded size, as a
//! file of one. A column keeps the bytes mapped in it, the record that
//! covers most of it (its device position and flags decide the colour), the
//! flags seen anywhere in it, and its jumps counted per direction with the
//! farthest distance. Consequences a reader should know:
//!
//! - A column with any mapped byte is drawn as data, so a 4 KiB extent in a
//!   1 TiB sparse file stays visible; at coarse scales holes look narrower
//!   than they are.
//! - A record is coloured by the device offset where its filefrag extent
//!   starts, so one extent is one colour even when the file system hands it
//!   out as several records (ext4 caps a record at 128 MiB).
//! - Columns start at `ceil(file_size / COLUMNS)` bytes each. A record that
//!   ends past what they cover (fallocate `KEEP_SIZE` past EOF, or a size of
//!   0 passed when unknown) doubles the bytes per column and merges
//!   neighbouring pairs, as often as needed, so the axis spans the last
//!   logical end seen and a dashed line marks EOF. Coarsening loses detail,
//!   never a record: every count in the caption stays exact.
//! - The device scale is `device_bytes`; offsets beyond it take the end
//!   colour. With `device_bytes` 0 the farthest physical end seen is used.
//! - Ids inside the SVG carry an `fslab-strip-` prefix and identical content
//!   in every strip, so several strips inlined in one HTML page coexist.

use std::fmt::{self, Write as _};

use super::markup::{escape_xml, num, shorten};
use crate::record::extent::flag;
use crate::record::Extent;
use crate::units::bytes_short;

/// Pixel columns across the strip: one user unit each at the default size,
/// fine enough to see a jump per 0.1 % of the file.
const COLUMNS: usize = 1000;

/// Column flag: the record's device location is unknown (delalloc).
const KIND_UNKNOWN: u8 = 1;
/// Column flag: the record is allocated but unwritten (preallocated).
const KIND_UNWRITTEN: u8 = 2;
/// Column flag: the record's blocks are shared with other files.
const KIND_SHARED: u8 = 4;

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

const GREY_UNKNOWN: &str = "#9e9e9e";
const SHARED_COLOUR: &str = "#8e24aa";
const FORWARD_COLOUR: &str = "#1f5fa8";
const BACKWARD_COLOUR: &str = "#d62728";
const OUTLINE_COLOUR: &str = "#555555";

/// Viridis sampled at nine even steps (viridisLite `viridis(9)`); the ramp
/// interpolates between them.
const VIRIDIS: [[u8; 3]; 9] = [
    [0x44, 0x01, 0x54],
    [0x47, 0x2d, 0x7b],
    [0x3b, 0x52, 0x8b],
    [0x2c, 0x72, 0x8e],
    [0x21, 0x90, 0x8c],
    [0x27, 0xad, 0x81],
    [0x5d, 0xc8, 0x63],
    [0xaa, 0xdc, 0x32],
    [0xfd, 0xe7, 0x25],
];

/// What the strip remembers about one column of the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Column {
    /// Bytes of records inside the column; more than zero means "draw data".
    mapped_bytes: u64,
    /// Bytes of the column the dominant record covers.
    best_len: u64,
    /// Device offset that colours the dominant record.
    best_physical: u64,
    /// `KIND_*` bits of the dominant record.
    best_kind: u8,
    /// `KIND_*` bits of every record in the column.
    any_kind: u8,
    forward: u32,
    backward: u32,
    /// Jumps from or to a record of unknown location: no direction.
    undirected: u32,
    forward_max: u64,
    backward_max: u64,
}

impl Column {
    /// Fold `len` bytes of one record into the column.
    fn cover(&mut self, len: u64, physical: u64, kind: u8) {
        self.mapped_bytes = self.mapped_bytes.saturating_add(len);
        // Strictly longer: on a tie the earlier record keeps the colour, so
        // equal pieces resolve in file order, the same on every run.
        if len > self.best_len {
            self.best_len = len;
            self.best_physical = physical;
            self.best_kind = kind;
        }
        self.any_kind |= kind;
    }

    /// The summary of two neighbouring columns seen as one.
    fn merge(self, right: Column) -> Column {
        let best = if right.best_len > self.best_len { right } else { self };
        Column {
            mapped_bytes: self.mapped_bytes.saturating_add(right.mapped_bytes),
            best_len: best.best_len,
            best_physical: best.best_physical,
            best_kind: best.best_kind,
            any_kind: self.any_kind | right.any_kind,
            forward: self.forward.saturating_add(right.forward),
            backward: self.backward.saturating_add(right.backward),
            undirected: self.undirected.saturating_add(right.undirected),
            forward_max: self.forward_max.max(right.forward_max),
            backward_max: self.backward_max.max(right.backward_max),
        }
    }
}

/// Builds the SVG strip of one file from its records, streamed once in
/// logical order, in memory that does not grow with the number of records.
#[derive(Debug, Clone)]
pub struct StripBuilder {
    title: String,
    file_size: u64,
    device_bytes: u64,
    /// File bytes per column; only ever doubles.
    column_bytes: u64,
    /// Always `COLUMNS` long.
    columns: Vec<Column>,
    records: u64,
    extents: u64,
    forward_jumps: u64,
    backward_jumps: u64,
    undirected_jumps: u64,
    farthest_jump: u64,
    unknown_records: u64,
    unwritten_records: u64,
    shared_records: u64,
    past_eof_bytes: u64,
    max_logical_end: u64,
    max_physical_end: u64,
    /// Whether a record came before (the first one never draws a jump).
    has_previous: bool,
    /// Device end of the previous record, `None` when its location is unknown.
    previous_physical_end: Option<u64>,
    /// Device offset where the current filefrag extent starts: its colour.
    run_physical: Option<u64>,
}

impl StripBuilder {
    /// A strip for a file of `file_size` bytes (the x axis spans
    /// max(`file_size`, last logical end seen)) on a device or file system of
    /// `device_bytes` bytes (the colour scale; physical offsets beyond it
    /// take the end colour, and 0 means "scale to the farthest offset
    /// seen"). `title` heads the picture, e.g. "path — ext4, 37 extents".
    pub fn new(file_size: u64, device_bytes: u64, title: impl Into<String>) -> Self {
        StripBuilder {
            title: title.into(),
            file_size,
            device_bytes,
            column_bytes: file_size.div_ceil(COLUMNS as u64).max(1),
            columns: vec![Column::default(); COLUMNS],
            records: 0,
            extents: 0,
            forward_jumps: 0,
            backward_jumps: 0,
            undirected_jumps: 0,
            farthest_jump: 0,
            unknown_records: 0,
            unwritten_records: 0,
            shared_records: 0,
            past_eof_bytes: 0,
            max_logical_end: 0,
            max_physical_end: 0,
            has_previous: false,
            previous_physical_end: None,
            run_physical: None,
        }
    }

    /// Feed the next record in logical order. `starts_extent` is true when
    /// this record breaks the physical run by filefrag's rule; it draws a
    /// jump mark unless it is the first record.
    pub fn add(&mut self, extent: &Extent, starts_extent: bool) {
        let end = extent.logical_end();
        self.grow_to(end);

        let known = extent.location_known();
        let mut kind = 0;
        if !known {
            kind |= KIND_UNKNOWN;
            self.unknown_records += 1;
        }
        if extent.flags & flag::UNWRITTEN != 0 {
            kind |= KIND_UNWRITTEN;
            self.unwritten_records += 1;
        }
        if extent.flags & flag::SHARED != 0 {
            kind |= KIND_SHARED;
            self.shared_records += 1;
        }

        let breaks = !self.has_previous || starts_extent;
        if breaks {
            self.extents += 1;
        }
        if self.has_previous && starts_extent {
            self.record_jump(extent, known);
        }
        if breaks || self.run_physical.is_none() {
            self.run_physical = known.then_some(extent.physical);
        }
        let colour_at = self.run_physical.unwrap_or(extent.physical);

        if extent.length > 0 {
            let first = self.column_of(extent.logical);
            let last = self.column_of(end - 1);
            for index in first..=last {
                // index * column_bytes <= extent.logical or end - 1, so it fits.
                let column_start = index as u64 * self.column_bytes;
                let column_end = column_start.saturating_add(self.column_bytes);
                let covered = end.min(column_end) - extent.logical.max(column_start);
                self.columns[index].cover(covered, colour_at, kind);
            }
        }

        if end > self.file_size {
            self.past_eof_bytes += end - extent.logical.max(self.file_size);
        }
        self.max_logical_end = self.max_logical_end.max(end);
        if known {
            self.max_physical_end = self.max_physical_end.max(extent.physical_end());
        }
        self.records += 1;
        self.has_previous = true;
        self.previous_physical_end = known.then(|| extent.physical_end());
    }

    /// The finished SVG document, UTF-8, self-contained, with a viewBox.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        let mut svg = String::with_capacity(64 * 1024);
        self.render(&mut svg).expect("fmt::Write for String never fails");
        svg.into_bytes()
    }

    /// Coarsen until the columns reach `end`: double the bytes per column
    /// and merge neighbouring pairs. At most 64 doublings over a builder's
    /// life, each O(COLUMNS), so streaming stays linear.
    fn grow_to(&mut self, end: u64) {
        while (COLUMNS as u128) * u128::from(self.column_bytes) < u128::from(end) {
            for index in 0..COLUMNS / 2 {
                self.columns[index] = self.columns[2 * index].merge(self.columns[2 * index + 1]);
            }
            self.columns[COLUMNS / 2..].fill(Column::default());
            self.column_bytes = self.column_bytes.saturating_mul(2);
        }
    }

    fn column_of(&self, logical: u64) -> usize {
        usize::try_from(logical / self.column_bytes).map_or(COLUMNS - 1, |c| c.min(COLUMNS - 1))
    }

    fn record_jump(&mut self, extent: &Extent, known: bool) {
        let index = self.column_of(extent.logical);
        let column = &mut self.columns[index];
        match (self.previous_physical_end, known) {
            (Some(previous_end), true) if extent.physical >= previous_end => {
                let distance = extent.physical - previous_end;
                column.forward = column.forward.saturating_add(1);
                column.forward_max = column.forward_max.max(distance);
                self.forward_jumps += 1;
                self.farthest_jump = self.farthest_jump.max(distance);
            }
            (Some(previous_end), true) => {
                let distance = previous_end - extent.physical;
                column.backward = column.backward.saturating_add(1);
                column.backward_max = column.backward_max.max(distance);
                self.backward_jumps += 1;
                self.farthest_jump = self.farthest_jump.max(distance);
            }
            _ => {
                column.undirected = column.undirected.saturating_add(1);
                self.undirected_jumps += 1;
            }
        }
    }

    /// Logical bytes the x axis spans.
    fn span(&self) -> u64 {
        self.file_size.max(self.max_logical_end)
    }

    /// Device bytes the colour ramp spans.
    fn device_scale(&self) -> u64 {
        if self.device_bytes > 0 { self.device_bytes } else { self.max_physical_end.max(1) }
    }

    /// The x coordinate of a file offset.
    fn x(&self, logical: f64) -> f64 {
        MARGIN + logical / (self.span().max(1) as f64) * STRIP_WIDTH
    }

    /// Left and right x of column `index`, the last one cut at the span.
    fn column_x(&self, index: usize) -> (f64, f64) {
        let bytes = self.column_bytes as f64;
        let start = index as f64 * bytes;
        let end = (start + bytes).min(self.span() as f64);
        (self.x(start), self.x(end))
    }

    /// Columns that hold part of the span.
    fn visible_columns(&self) -> usize {
        usize::try_from(self.span().div_ceil(self.column_bytes)).map_or(COLUMNS, |n| n.min(COLUMNS))
    }

    fn render(&self, out: &mut String) -> fmt::Result {
        let title = escape_xml(&self.title);
        writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" role="img">"#,
            w = num(WIDTH),
            h = num(HEIGHT),
        )?;
        writeln!(out, "<title>{title}</title>")?;
        Self::render_defs(out)?;
        writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##)?;
        writeln!(
            out,
            r##"<text x="{x}" y="20" font-size="15" font-weight="bold" fill="#222222">{t}</text>"##,
            x = num(MARGIN),
            t = escape_xml(&shorten(&self.title, 130)),
        )?;
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
        self.render_legend(out)?;
        writeln!(out, "</svg>")
    }

    fn render_defs(out: &mut String) -> fmt::Result {
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
        writeln!(out, r#"<linearGradient id="fslab-strip-ramp" x1="0" x2="1" y1="0" y2="0">"#)?;
        for step in 0..=8 {
            let fraction = f64::from(step) / 8.0;
            writeln!(out, r#"<stop offset="{}" stop-color="{}"/>"#, num(fraction), hex(device_colour(fraction)))?;
        }
        writeln!(out, "</linearGradient>")?;
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
        let scale = self.device_scale();
        for index in 0..self.visible_columns() {
            let column = &self.columns[index];
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
        let scale = self.device_scale() as f64;
        let visible = self.visible_columns();
        // Neighbouring columns of the same look become one rect: a file of
        // few extents gives a few elements, not a thousand.
        let fill_of = |column: &Column| -> Option<(String, bool)> {
            (column.mapped_bytes > 0).then(|| {
                let colour = if column.best_kind & KIND_UNKNOWN != 0 {
                    GREY_UNKNOWN.to_string()
                } else {
                    hex(device_colour(column.best_physical as f64 / scale))
                };
                (colour, column.best_kind & KIND_UNWRITTEN != 0)
            })
        };
        for (start, end, look) in runs(&self.columns[..visible], fill_of) {
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
        for (start, end, shared) in runs(&self.columns[..visible], shared_of) {
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
        if self.records == 0 {
            writeln!(
                out,
                r##"<text x="{x}" y="{y}" font-size="13" fill="#666666" text-anchor="middle">{t}</text>"##,
                x = num(MARGIN + STRIP_WIDTH / 2.0),
                y = num(STRIP_TOP + STRIP_HEIGHT / 2.0 + 4.0),
                t = if self.span() == 0 { "empty file" } else { "no mapped data" },
            )?;
        }
        if self.max_logical_end > self.file_size {
            // Records past EOF (fallocate KEEP_SIZE) widened the axis; show
            // where the file really ends.
            let x = num(self.x(self.file_size as f64));
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
        let span = self.span();
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
            if span == 0 { String::new() } else { format!(" (one column ≈ {})", bytes_short(self.column_bytes)) };
        writeln!(
            out,
            r##"<text x="{x}" y="{y}" font-size="11" fill="#666666" text-anchor="middle">file offset →{resolution}</text>"##,
            x = num(MARGIN + STRIP_WIDTH / 2.0),
            y = num(AXIS_TOP + 33.0),
        )
    }

    fn render_legend(&self, out: &mut String) -> fmt::Result {
        let (top, text_y) = (LEGEND_TOP, LEGEND_TOP + 26.0);
        writeln!(
            out,
            r#"<rect x="{x}" y="{y}" width="240" height="12" fill="url(#fslab-strip-ramp)" stroke="{OUTLINE_COLOUR}" stroke-width="0.5"/>"#,
            x = num(MARGIN),
            y = num(top),
        )?;
        let end_label = if self.device_bytes > 0 {
            bytes_short(self.device_bytes)
        } else {
            format!("{} (farthest seen)", bytes_short(self.device_scale()))
        };
        for (x, anchor, label) in [
            (MARGIN, "start", "0".to_string()),
            (MARGIN + 120.0, "middle", "device position".to_string()),
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

    /// The caption: counts and jumps, then flags; exact whatever the column
    /// resolution.
    fn caption(&self) -> Vec<String> {
        if self.records == 0 {
            return vec![if self.span() == 0 {
                "empty file: no data".to_string()
            } else {
                format!("no mapped data: the whole {} is a hole", bytes_short(self.span()))
            }];
        }
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        // Writing into a String cannot fail, hence the ignored results below.
        let mut counts = format!(
            "{} · {} · jumps: {} forward, {} backward",
            plural(self.records, "record", "records"),
            plural(self.extents, "extent", "extents"),
            self.forward_jumps,
            self.backward_jumps,
        );
        if self.undirected_jumps > 0 {
            let _ = write!(counts, ", {} to/from unknown location", self.undirected_jumps);
        }
        if self.forward_jumps + self.backward_jumps > 0 {
            let _ = write!(counts, " (farthest {})", bytes_short(self.farthest_jump));
        }
        let mut flags = Vec::new();
        for (count, what) in [
            (self.unwritten_records, "unwritten"),
            (self.unknown_records, "of unknown location"),
            (self.shared_records, "shared"),
        ] {
            if count > 0 {
                flags.push(format!("{} {what}", plural(count, "record", "records")));
            }
        }
        if self.past_eof_bytes > 0 {
            flags.push(format!("{} mapped past EOF", bytes_short(self.past_eof_bytes)));
        }
        if flags.is_empty() { vec![counts] } else { vec![counts, flags.join(" · ")] }
    }
}

/// Colour of a device position, `fraction` 0.0 (device start) to 1.0
/// (device end), on the viridis ramp; out-of-range and NaN clamp to the
/// nearest end. Lightness rises monotonically with `fraction`.
fn device_colour(fraction: f64) -> [u8; 3] {
    let fraction = if fraction.is_nan() { 0.0 } else { fraction.clamp(0.0, 1.0) };
    let steps = (VIRIDIS.len() - 1) as f64;
    let position = fraction * steps;
    let low = (position.floor() as usize).min(VIRIDIS.len() - 2);
    let t = position - low as f64;
    let (a, b) = (VIRIDIS[low], VIRIDIS[low + 1]);
    std::array::from_fn(|i| (f64::from(a[i]) + (f64::from(b[i]) - f64::from(a[i])) * t).round() as u8)
}

/// Height of a jump mark: logarithmic in the distance counted in 4 KiB
/// blocks, relative to the whole device, so a one-block hop and a jump
/// across the disk both stay visible and distinct.
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

fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent { logical, physical, length, flags: 0 }
    }

    fn render(file_size: u64, device: u64, records: &[(Extent, bool)]) -> String {
        let mut builder = StripBuilder::new(file_size, device, "test");
        for (extent, starts) in records {
            builder.add(extent, *starts);
        }
        String::from_utf8(builder.finish()).expect("UTF-8")
    }

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    /// Fill colours of the drawn data rects, in order.
    fn data_fills(svg: &str) -> Vec<&str> {
        svg.lines()
            .filter(|line| line.contains(r#"class="data""#))
            .map(|line| line.split(r#"fill=""#).nth(1).and_then(|rest| rest.split('"').next()).expect("fill"))
            .collect()
    }

    /// XML-ish sanity: every tag closes in order, text holds no raw `<` and
    /// every `&` starts an entity we write.
    fn assert_well_formed(svg: &str) {
        assert!(svg.starts_with("<svg"), "starts with <svg");
        assert!(svg.trim_end().ends_with("</svg>"), "ends with </svg>");
        assert!(svg.contains("viewBox=\"0 0 "), "has a viewBox");
        let mut stack: Vec<&str> = Vec::new();
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            let text = &rest[..open];
            for (i, _) in text.match_indices('&') {
                let entity = &text[i..];
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].iter().any(|e| entity.starts_with(e)),
                    "bare & in text: {entity:.20}"
                );
            }
            let close = rest[open..].find('>').expect("tag closes") + open;
            let tag = &rest[open + 1..close];
            assert!(!tag.contains('<'), "no < inside a tag: {tag}");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(name.trim()), "closing tag matches");
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().expect("tag name"));
            }
            rest = &rest[close + 1..];
        }
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        assert!(rest.trim().is_empty());
    }

    #[test]
    fn output_is_well_formed_svg() {
        let svg = render(
            4 * MIB,
            GIB,
            &[
                (ext(0, 100 * MIB, MIB), true),
                (Extent { flags: flag::UNWRITTEN, ..ext(MIB, 900 * MIB, MIB) }, true),
                (Extent { flags: flag::UNKNOWN | flag::DELALLOC, ..ext(3 * MIB, 0, MIB) }, true),
            ],
        );
        assert_well_formed(&svg);
        assert!(svg.contains("<title>test</title>"));
        assert!(svg.contains("3 records · 3 extents"));
        assert_eq!(count(&svg, r#"class="jump-fwd""#), 1);
        assert_eq!(count(&svg, r#"class="jump-unknown""#), 1);
        assert!(count(&svg, r#"class="unwritten""#) >= 1);
        assert!(data_fills(&svg).contains(&GREY_UNKNOWN));
    }

    #[test]
    fn single_contiguous_extent_is_one_colour_without_jumps() {
        // As `fslab map` feeds it: records split by the file system but
        // physically contiguous, the first flagged as starting the extent.
        let svg = render(
            256 * MIB,
            GIB,
            &[(ext(0, 512 * MIB, 128 * MIB), true), (ext(128 * MIB, 640 * MIB, 128 * MIB), false)],
        );
        assert_well_formed(&svg);
        let fills = data_fills(&svg);
        assert_eq!(fills.len(), 1, "neighbouring columns merge into one rect");
        assert_eq!(fills[0], hex(device_colour(0.5)));
        assert_eq!(count(&svg, "class=\"jump-"), 0);
        assert!(svg.contains("2 records · 1 extent ·"));
    }

    #[test]
    fn backward_jump_draws_one_backward_mark() {
        let svg = render(128 * KIB, GIB, &[(ext(0, 512 * MIB, 64 * KIB), true), (ext(64 * KIB, 0, 64 * KIB), true)]);
        assert_well_formed(&svg);
        assert_eq!(count(&svg, r#"class="jump-back""#), 1);
        assert_eq!(count(&svg, r#"class="jump-fwd""#), 0);
        assert!(svg.contains("0 forward, 1 backward (farthest 512 MiB)"));
        // Two extents, two colours: the second one sits at the device start.
        let fills = data_fills(&svg);
        assert_eq!(fills.len(), 2);
        assert_eq!(fills[1], hex(device_colour(0.0)));
    }

    #[test]
    fn million_records_stay_bounded() {
        const RECORDS: u64 = 1_000_000;
        let block = 4 * KIB;
        let mut builder = StripBuilder::new(RECORDS * block, 64 * GIB, "big");
        for i in 0..RECORDS {
            // A scattered permutation: every record a jump, in both directions.
            let physical = (i * 7_919 % RECORDS) * block * 16;
            builder.add(&ext(i * block, physical, block), true);
            if i % 100_000 == 0 {
                assert_eq!(builder.columns.len(), COLUMNS);
            }
        }
        assert_eq!(builder.columns.len(), COLUMNS);
        assert_eq!(builder.columns.capacity(), COLUMNS);
        let svg = String::from_utf8(builder.finish()).expect("UTF-8");
        assert!(svg.len() < 1024 * 1024, "SVG is {} bytes", svg.len());
        assert!(svg.contains("1000000 records"));
        assert_well_formed(&svg);
    }

    #[test]
    fn records_past_eof_widen_the_axis_at_fixed_memory() {
        // fallocate KEEP_SIZE: 1 MiB written, 1 GiB preallocated past EOF.
        let mut builder = StripBuilder::new(MIB, GIB, "keep-size");
        builder.add(&ext(0, 0, MIB), true);
        builder.add(&Extent { flags: flag::UNWRITTEN, ..ext(MIB, MIB, GIB) }, false);
        assert_eq!(builder.columns.len(), COLUMNS);
        assert!(COLUMNS as u64 * builder.column_bytes >= GIB + MIB);
        let svg = String::from_utf8(builder.finish()).expect("UTF-8");
        assert_well_formed(&svg);
        assert!(svg.contains(">EOF</text>"));
        assert!(svg.contains(">1 record unwritten · 1 GiB mapped past EOF</text>"));
        assert!(svg.contains(">1 GiB</text>"), "the axis ends at the last logical end");
    }

    #[test]
    fn merging_keeps_counts_and_the_longest_record() {
        let mut left = Column::default();
        left.cover(10, 1, 0);
        left.forward = 2;
        let mut right = Column::default();
        right.cover(30, 7, KIND_SHARED);
        right.backward = 1;
        right.backward_max = 99;
        let merged = left.merge(right);
        assert_eq!((merged.mapped_bytes, merged.best_physical, merged.any_kind), (40, 7, KIND_SHARED));
        assert_eq!((merged.forward, merged.backward, merged.backward_max), (2, 1, 99));
    }

    #[test]
    fn empty_and_sparse_files_render() {
        let svg = render(0, GIB, &[]);
        assert_well_formed(&svg);
        assert!(svg.contains("empty file"));
        let svg = render(GIB, GIB, &[]);
        assert_well_formed(&svg);
        assert!(svg.contains("no mapped data: the whole 1 GiB is a hole"));
    }

    #[test]
    fn colour_ramp_is_monotone_in_lightness_with_distinct_ends() {
        // Relative luminance (WCAG / sRGB).
        let luminance = |[r, g, b]: [u8; 3]| {
            let linear = |c: u8| {
                let c = f64::from(c) / 255.0;
                if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
            };
            0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
        };
        let mut previous = -1.0;
        for step in 0..=200 {
            let l = luminance(device_colour(f64::from(step) / 200.0));
            assert!(l >= previous, "lightness falls at step {step}");
            previous = l;
        }
        assert_eq!(device_colour(0.0), VIRIDIS[0]);
        assert_eq!(device_colour(1.0), VIRIDIS[8]);
        assert!(luminance(device_colour(1.0)) > 10.0 * luminance(device_colour(0.0)));
        assert_eq!(device_colour(-3.0), device_colour(0.0));
        assert_eq!(device_colour(7.0), device_colour(1.0));
        assert_eq!(device_colour(f64::NAN), device_colour(0.0));
        assert_ne!(hex(device_colour(0.0)), GREY_UNKNOWN);
    }

    #[test]
    fn jump_marks_grow_with_distance() {
        let device = 100 * GIB;
        assert_eq!(mark_height(0, device), MARK_MIN);
        assert!(mark_height(4 * KIB, device) < mark_height(GIB, device));
        assert_eq!(mark_height(device, device), MARK_MAX);
        assert_eq!(mark_height(10 * device, device), MARK_MAX);
    }

    #[test]
    fn title_is_escaped() {
        let builder = StripBuilder::new(0, 0, "a<b & \"c\" 'd'>\u{1}");
        let svg = String::from_utf8(builder.finish()).expect("UTF-8");
        assert_well_formed(&svg);
        assert!(svg.contains("<title>a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\u{fffd}</title>"));
        assert!(!svg.contains("a<b"));
    }
}
