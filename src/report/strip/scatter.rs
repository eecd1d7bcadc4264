//! A file's extents as a scatter of file offset (x) against device offset
//! (y), the view seekwatcher made familiar: a file written in order is a
//! rising line, two streams interleaved are two lines, random placement is
//! a cloud. It serves files of many extents, whose strip is a barcode.
//!
//! The design decision: records are rasterised into a grid of 2-unit
//! cells, never drawn one by one. Each record is a segment from its start
//! to its end, marking every cell it crosses; marked cells are drawn as
//! horizontal runs, in at most [`MAX_MARK_BYTES`] of path data, so the
//! picture is under 20 KB whatever the number of records. When every
//! record's cells need more than that, only a sample of the records is drawn at full
//! resolution: one in 2, 4, 8, ... chosen by a fixed hash of the record's
//! index (the same records every time, and no stride that could line up
//! with a periodic layout and hide one of two interleaved streams), over a
//! pale layer of 16-unit cells that shows where all of them lie, so no
//! outlier is lost. The chart says how many it drew. Sampling rather than
//! coarser cells keeps a cloud looking like a cloud: binned coarse, a
//! scattered file becomes solid blocks that read as contiguous.

use std::fmt::{self, Write as _};

use super::colour::{OUTLINE_COLOUR, device_colour, hex};
use crate::record::Extent;
use crate::record::extent::flag;
use crate::report::markup::{escape_xml, num, shorten};
use crate::units::{bytes_short, group_digits};

/// Bytes of marks (the paths' data: horizontal runs of cells, 7 to 12
/// bytes each) a scatter holds at most; with its frame and words a plot
/// stays under 20 KB.
pub const MAX_MARK_BYTES: usize = 16 * 1024;

// Geometry, in SVG user units. The plot's sides are multiples of the pale
// layer's cell, so every grid fills it exactly.
const LEFT: u32 = 84;
const TOP: u32 = 64;
const PLOT_WIDTH: u32 = 960;
const PLOT_HEIGHT: u32 = 320;
const WIDTH: u32 = LEFT + PLOT_WIDTH + 16;
const HEIGHT: u32 = TOP + PLOT_HEIGHT + 48;
/// The side of a cell records are drawn in.
const CELL: u32 = 2;
/// The pale layer's cells are this many drawn cells on a side.
const PALE_FACTOR: usize = 8;
const COLS: usize = (PLOT_WIDTH / CELL) as usize;
const ROWS: usize = (PLOT_HEIGHT / CELL) as usize;

const WRITTEN_COLOUR: &str = "#1f5fa8";
const UNWRITTEN_COLOUR: &str = "#e07b00";
const PALE_WRITTEN_COLOUR: &str = "#c9d9ee";
const PALE_UNWRITTEN_COLOUR: &str = "#f7dcbc";

/// The scatter of one file's records.
#[derive(Debug, Clone, Copy)]
pub struct ScatterChart<'a> {
    /// Heads the chart.
    pub title: &'a str,
    /// File bytes the x axis spans (the size, or the last logical end if
    /// further).
    pub span: u64,
    /// Device offsets the y axis spans: the lowest byte and the end of the
    /// highest record, of records of known location.
    pub range: (u64, u64),
    /// The records, in any order.
    pub records: &'a [Extent],
    /// The file's extents by filefrag's rule, for the caption.
    pub extents: u64,
}

/// A finished scatter: the SVG and what it drew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scatter {
    /// The SVG document, without XML prolog, with a viewBox.
    pub svg: String,
    /// Records drawn at full resolution: all of known location, unless
    /// sampled.
    pub drawn: usize,
    /// One record in this many drawn: 1 when all are.
    pub one_in: usize,
    /// Marks in the picture (runs of cells), pale layer included.
    pub marks: usize,
}

/// Marked cells of one grid, written and unwritten records apart, row 0
/// at the bottom (the lowest device offset).
struct Cells {
    written: Vec<bool>,
    unwritten: Vec<bool>,
}

/// Marks of one colour and cell size, as path data.
struct Layer {
    colour: &'static str,
    cell: u32,
    /// The path's `d`.
    data: String,
    marks: usize,
}

type Layers = Vec<Layer>;

impl ScatterChart<'_> {
    /// Draw it: every record when its marks fit [`MAX_MARK_BYTES`], else
    /// a hashed sample of them over the pale layer of all.
    #[must_use]
    pub fn render(&self) -> Scatter {
        let (layers, one_in, drawn) = self.layers();
        let marks = layers.iter().map(|l| l.marks).sum();
        let mut svg = String::with_capacity(48 * 1024);
        self.write(&mut svg, &layers, one_in, drawn).expect("fmt::Write for String never fails");
        Scatter { svg, drawn, one_in, marks }
    }

    /// The layers to draw, one record in how many was drawn, and how many
    /// were.
    fn layers(&self) -> (Layers, usize, usize) {
        let all = self.cells(1);
        let every = layer(&all, 1, [WRITTEN_COLOUR, UNWRITTEN_COLOUR]);
        if bytes(&every) <= MAX_MARK_BYTES {
            return (every, 1, self.known().count());
        }
        // Where all the records lie, in cells coarse enough to leave most
        // of the marks to the sample.
        let mut pale = layer(&all, PALE_FACTOR, [PALE_WRITTEN_COLOUR, PALE_UNWRITTEN_COLOUR]);
        if bytes(&pale) > MAX_MARK_BYTES / 2 {
            pale = layer(&all, 2 * PALE_FACTOR, [PALE_WRITTEN_COLOUR, PALE_UNWRITTEN_COLOUR]);
        }
        let mut one_in = 2;
        loop {
            let sample = layer(&self.cells(one_in), 1, [WRITTEN_COLOUR, UNWRITTEN_COLOUR]);
            // A lone long record is at most a run per row: the loop ends.
            if bytes(&pale) + bytes(&sample) <= MAX_MARK_BYTES || one_in >= self.records.len() {
                let drawn = self.known().enumerate().filter(|(index, _)| sampled(*index, one_in)).count();
                pale.extend(sample);
                return (pale, one_in, drawn);
            }
            one_in *= 2;
        }
    }

    /// The records of known location, with their index among those.
    fn known(&self) -> impl Iterator<Item = &Extent> {
        self.records.iter().filter(|e| e.location_known())
    }

    /// The cells crossed by one known record in `one_in`.
    fn cells(&self, one_in: usize) -> Cells {
        let mut cells = Cells { written: vec![false; COLS * ROWS], unwritten: vec![false; COLS * ROWS] };
        let (low, high) = (self.range.0 as f64, self.range.1.max(self.range.0 + 1) as f64);
        let span = self.span.max(1) as f64;
        let col = |logical: u64| (logical as f64 / span * COLS as f64).clamp(0.0, COLS as f64 - 1e-9);
        let row = |physical: u64| ((physical as f64 - low) / (high - low) * ROWS as f64).clamp(0.0, ROWS as f64 - 1e-9);
        for (_, extent) in self.known().enumerate().filter(|(index, _)| sampled(*index, one_in)) {
            let (x0, x1) = (col(extent.logical), col(extent.logical.saturating_add(extent.length)));
            let (y0, y1) = (row(extent.physical), row(extent.physical.saturating_add(extent.length)));
            let grid = if extent.flags & flag::UNWRITTEN != 0 { &mut cells.unwritten } else { &mut cells.written };
            // One step per cell along the longer side: every crossed cell
            // is marked.
            let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as usize;
            for step in 0..=steps {
                let t = step as f64 / steps as f64;
                let c = ((x0 + (x1 - x0) * t) as usize).min(COLS - 1);
                let r = ((y0 + (y1 - y0) * t) as usize).min(ROWS - 1);
                grid[r * COLS + c] = true;
            }
        }
        cells
    }

    fn write(&self, out: &mut String, layers: &Layers, one_in: usize, drawn: usize) -> fmt::Result {
        writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="scatter" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" role="img" data-extents="{}" data-records="{}" data-drawn="{drawn}" data-one-in="{one_in}">"#,
            self.extents,
            self.records.len()
        )?;
        writeln!(out, "<title>{}</title>", escape_xml(self.title))?;
        writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##)?;
        writeln!(
            out,
            r##"<text x="{LEFT}" y="20" font-size="15" font-weight="bold" fill="#222222">{}</text>"##,
            escape_xml(&shorten(self.title, 120))
        )?;
        writeln!(out, r##"<text x="{LEFT}" y="38" font-size="12" fill="#333333">{}</text>"##, escape_xml(&self.note(one_in, drawn)))?;
        self.write_frame(out)?;
        for layer in layers.iter().filter(|l| l.marks > 0) {
            writeln!(out, r#"<path fill="none" stroke="{}" stroke-width="{}" d="{}"/>"#, layer.colour, layer.cell, layer.data)?;
        }
        writeln!(out, "</svg>")
    }

    /// What the chart shows, and what it left out.
    fn note(&self, one_in: usize, drawn: usize) -> String {
        let count = |n: usize| group_digits(&n.to_string());
        let mut note = format!(
            "{} extents in {} records, each a segment from its start to its end",
            group_digits(&self.extents.to_string()),
            count(self.records.len()),
        );
        if one_in > 1 {
            let _ = write!(
                note,
                " · too many to draw: 1 in {one_in} drawn ({} of {}, a fixed sample), pale where all lie",
                count(drawn),
                count(self.known().count())
            );
        }
        if self.known().any(|e| e.flags & flag::UNWRITTEN != 0) {
            note.push_str(" · orange: unwritten");
        }
        let unknown = self.records.len() - self.known().count();
        if unknown > 0 {
            let _ = write!(note, " · {} of unknown location not drawn", count(unknown));
        }
        note
    }
    /// Frame, the line a contiguous file would follow, ticks, axis names
    /// and the ramp that ties the y axis to the strip's colours.
    fn write_frame(&self, out: &mut String) -> fmt::Result {
        let bottom = TOP + PLOT_HEIGHT;
        writeln!(out, r##"<rect x="{LEFT}" y="{TOP}" width="{PLOT_WIDTH}" height="{PLOT_HEIGHT}" fill="#fafafa" stroke="{OUTLINE_COLOUR}" stroke-width="1"/>"##)?;
        writeln!(out, r#"<linearGradient id="fslab-scatter-ramp" x1="0" x2="0" y1="1" y2="0">"#)?;
        for step in 0..=8 {
            let fraction = f64::from(step) / 8.0;
            writeln!(out, r#"<stop offset="{}" stop-color="{}"/>"#, num(fraction), hex(device_colour(fraction)))?;
        }
        writeln!(out, "</linearGradient>")?;
        writeln!(out, r#"<rect x="{}" y="{TOP}" width="6" height="{PLOT_HEIGHT}" fill="url(#fslab-scatter-ramp)"/>"#, LEFT - 8)?;
        // Where a file laid out in one piece from its lowest byte would lie.
        let rise = (self.span.max(1) as f64 / self.height() as f64).min(1.0);
        let run = (self.height() as f64 / self.span.max(1) as f64).min(1.0);
        writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{bottom}" x2="{}" y2="{}" stroke="#999999" stroke-width="1" stroke-dasharray="4 3"><title>where a file in one piece from its lowest byte would lie</title></line>"##,
            num(f64::from(LEFT) + f64::from(PLOT_WIDTH) * run),
            num(f64::from(bottom) - f64::from(PLOT_HEIGHT) * rise),
        )?;
        for quarter in 0..=4u32 {
            let x = LEFT + PLOT_WIDTH * quarter / 4;
            let logical = (u128::from(self.span) * u128::from(quarter) / 4) as u64;
            let anchor = ["start", "middle", "middle", "middle", "end"][quarter as usize];
            writeln!(out, r#"<line x1="{x}" x2="{x}" y1="{bottom}" y2="{}" stroke="{OUTLINE_COLOUR}"/>"#, bottom + 5)?;
            writeln!(out, r##"<text x="{x}" y="{}" font-size="11" fill="#333333" text-anchor="{anchor}">{}</text>"##, bottom + 17, bytes_short(logical))?;
        }
        for (quarter, label) in self.device_ticks().iter().enumerate() {
            let y = bottom - PLOT_HEIGHT * quarter as u32 / 4;
            writeln!(out, r#"<line x1="{}" x2="{}" y1="{y}" y2="{y}" stroke="{OUTLINE_COLOUR}"/>"#, LEFT - 13, LEFT - 8)?;
            writeln!(out, r##"<text x="{}" y="{}" font-size="11" fill="#333333" text-anchor="end">{}</text>"##, LEFT - 15, y + 4, escape_xml(label))?;
        }
        writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="11" fill="#666666" text-anchor="middle">file offset →</text>"##,
            LEFT + PLOT_WIDTH / 2,
            bottom + 33
        )?;
        writeln!(
            out,
            r##"<text x="{LEFT}" y="{}" font-size="11" fill="#666666">device offset ↑ (the file's own range)</text>"##,
            TOP - 8
        )?;
        Ok(())
    }

    /// Labels of the y axis's five ticks: device offsets, or the lowest
    /// then `+distance` when the range is too narrow for three digits to
    /// tell them apart.
    fn device_ticks(&self) -> Vec<String> {
        let low = self.range.0;
        let at = |quarter: u64| (u128::from(low) + u128::from(self.height()) * u128::from(quarter) / 4) as u64;
        let absolute: Vec<String> = (0..=4).map(|q| bytes_short(at(q))).collect();
        let mut distinct = absolute.clone();
        distinct.dedup();
        if distinct.len() == absolute.len() {
            return absolute;
        }
        (0..=4).map(|q| if q == 0 { absolute[0].clone() } else { format!("+{}", bytes_short(at(q) - low)) }).collect()
    }

    /// Device bytes the y axis spans, at least 1.
    fn height(&self) -> u64 {
        self.range.1.saturating_sub(self.range.0).max(1)
    }
}

/// One known record in `one_in` by a fixed hash of its index (splitmix64's
/// finaliser): the same records every time, with no period to line up with
/// a layout's.
fn sampled(index: usize, one_in: usize) -> bool {
    if one_in <= 1 {
        return true;
    }
    let mut z = (index as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % one_in as u64 == 0
}

/// `cells` coarsened by `factor` as a layer per colour: written records
/// in the first, unwritten in the second.
fn layer(cells: &Cells, factor: usize, colours: [&'static str; 2]) -> Layers {
    let cell = CELL * factor as u32;
    [(colours[0], &cells.written), (colours[1], &cells.unwritten)]
        .into_iter()
        .map(|(colour, grid)| {
            let runs = runs(&coarsen(grid, factor), COLS / factor);
            Layer { colour, cell, data: path_data(&runs, cell), marks: runs.len() }
        })
        .collect()
}

/// Bytes of path data in `layers`.
fn bytes(layers: &Layers) -> usize {
    layers.iter().map(|l| l.data.len()).sum()
}

/// `runs` of cells `cell` units wide as path data: a stroke `cell` thick
/// along each run's middle. A row's first run moves there absolutely; the
/// next ones in the row move on from the previous run's end, which is
/// shorter.
fn path_data(runs: &[Run], cell: u32) -> String {
    let bottom = TOP + PLOT_HEIGHT;
    let mut data = String::new();
    let mut last: Option<(usize, u32)> = None;
    for run in runs {
        let (x, width) = (LEFT + run.col as u32 * cell, run.len as u32 * cell);
        let _ = match last {
            Some((row, end)) if row == run.row => write!(data, "m{} 0h{width}", x - end),
            _ => write!(data, "M{x} {}h{width}", bottom - run.row as u32 * cell - cell / 2),
        };
        last = Some((run.row, x + width));
    }
    data
}

/// A horizontal run of marked cells, in a grid's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    row: usize,
    col: usize,
    len: usize,
}

/// `grid` (COLS × ROWS finest cells) with `factor` × `factor` cells
/// merged into one, marked when any of them is: (COLS / factor) ×
/// (ROWS / factor) cells.
fn coarsen(grid: &[bool], factor: usize) -> Vec<bool> {
    let cols = COLS / factor;
    let mut coarse = vec![false; cols * (ROWS / factor)];
    for (index, _) in grid.iter().enumerate().filter(|(_, marked)| **marked) {
        coarse[index / COLS / factor * cols + index % COLS / factor] = true;
    }
    coarse
}

/// The marked cells of `grid` (`cols` wide) as horizontal runs, row by
/// row from the bottom.
fn runs(grid: &[bool], cols: usize) -> Vec<Run> {
    let mut runs = Vec::new();
    for (row, cells) in grid.chunks(cols).enumerate() {
        let mut col = 0;
        while col < cells.len() {
            if !cells[col] {
                col += 1;
                continue;
            }
            let start = col;
            while col < cells.len() && cells[col] {
                col += 1;
            }
            runs.push(Run { row, col: start, len: col - start });
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::strip::tests::assert_well_formed;

    const KIB: u64 = 1024;
    const GIB: u64 = 1024 * 1024 * KIB;
    const TITLE: &str = "file <a&b> — btrfs";

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent { logical, physical, length, flags: 0 }
    }

    fn scatter(span: u64, records: &[Extent], extents: u64) -> Scatter {
        let low = records.iter().map(|e| e.physical).min().unwrap_or(0);
        let high = records.iter().map(Extent::physical_end).max().unwrap_or(1);
        ScatterChart { title: TITLE, span, range: (low, high), records, extents }.render()
    }

    /// 65,536 pages of 4 KiB, page `i` at block `(i * 7919 + 23) mod n`
    /// of a range 16 times wider: no order at all.
    fn random_pages() -> Vec<Extent> {
        const PAGES: u64 = 65_536;
        (0..PAGES).map(|i| ext(i * 4 * KIB, ((i * 7_919 + 23) % PAGES) * 16 * 4 * KIB, 4 * KIB)).collect()
    }

    #[test]
    fn many_records_are_sampled_to_a_bounded_picture() {
        let pages = random_pages();
        let chart = scatter(GIB / 4, &pages, 65_536);
        assert!(chart.svg.len() <= 20 * 1024, "{} bytes", chart.svg.len());
        assert!(chart.one_in > 1, "sampled");
        assert!(chart.drawn < 65_536 && chart.drawn * chart.one_in > 65_536 / 2, "about 1 in {}: {}", chart.one_in, chart.drawn);
        assert_well_formed(&chart.svg);
        assert!(chart.svg.contains(&format!(
            r#"data-extents="65536" data-records="65536" data-drawn="{}" data-one-in="{}""#,
            chart.drawn, chart.one_in
        )));
        assert!(chart.svg.contains("65,536 extents in 65,536 records"));
        assert!(chart.svg.contains(&format!("too many to draw: 1 in {} drawn", chart.one_in)), "the chart says so");
        assert!(chart.svg.contains(PALE_WRITTEN_COLOUR), "the pale layer shows where all lie");
        // The same records every time.
        assert_eq!(scatter(GIB / 4, &pages, 65_536), chart);
    }

    #[test]
    fn a_file_in_order_is_one_rising_line_with_every_record() {
        // 65,536 records, each right after the one before: one extent.
        let pages: Vec<Extent> = (0..65_536u64).map(|i| ext(i * 4 * KIB, GIB + i * 4 * KIB, 4 * KIB)).collect();
        let chart = scatter(GIB / 4, &pages, 1);
        assert_eq!((chart.one_in, chart.drawn), (1, 65_536), "every record drawn");
        assert!(!chart.svg.contains("too many"));
        // A diagonal across 480 × 160 cells: a short run per row.
        assert!(chart.marks <= ROWS && chart.marks >= ROWS / 2, "{} marks", chart.marks);
        assert_well_formed(&chart.svg);
        assert!(chart.svg.contains(">1 GiB</text>") && chart.svg.contains(">1.25 GiB</text>"), "the device axis");
        assert!(chart.svg.contains(">256 MiB</text>"), "the file offset axis ends at the span");
    }

    #[test]
    fn interleaved_streams_stay_two_lines_when_sampled() {
        // 40,000 chunks of 4 KiB that alternate between two places far
        // apart: too many to draw all, and a stride of 2 would keep one
        // line only.
        let chunks: Vec<Extent> =
            (0..40_000u64).map(|i| ext(i * 4 * KIB, (i / 2) * 4 * KIB + (i % 2) * GIB, 4 * KIB)).collect();
        let chart = scatter(40_000 * 4 * KIB, &chunks, 40_000);
        let sample: Vec<&Extent> = chunks.iter().enumerate().filter(|(i, _)| sampled(*i, chart.one_in)).map(|(_, e)| e).collect();
        let high = sample.iter().filter(|e| e.physical >= GIB).count();
        assert!(high * 3 > sample.len() && high * 3 < 2 * sample.len(), "{high} of {} in the upper line", sample.len());
    }

    #[test]
    fn unknown_locations_are_counted_not_drawn_and_words_escaped() {
        let records = [
            ext(0, GIB, 4 * KIB),
            Extent { flags: flag::UNKNOWN | flag::DELALLOC, ..ext(4 * KIB, 0, 4 * KIB) },
            Extent { flags: flag::UNWRITTEN, ..ext(8 * KIB, GIB + 64 * KIB, 4 * KIB) },
        ];
        let chart = ScatterChart { title: TITLE, span: 12 * KIB, range: (GIB, GIB + 68 * KIB), records: &records, extents: 3 }.render();
        assert_well_formed(&chart.svg);
        assert_eq!(chart.drawn, 2);
        assert!(chart.svg.contains("1 of unknown location not drawn"));
        assert!(chart.svg.contains(&format!(r#"stroke="{UNWRITTEN_COLOUR}""#)), "unwritten records in their own colour");
        assert!(chart.svg.contains("orange: unwritten"));
        // A range of 68 KiB at 1 GiB: three digits cannot tell the ticks
        // apart, so they count from the bottom one.
        assert!(chart.svg.contains(">1 GiB</text>") && chart.svg.contains(">+68 KiB</text>"));
        assert!(chart.svg.contains("<title>file &lt;a&amp;b&gt; — btrfs</title>"));
        assert!(!chart.svg.contains("<a&b>"));
    }
}
