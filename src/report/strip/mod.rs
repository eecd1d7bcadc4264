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
//!   [`StripBuilder::local_colour`] spans the ramp over the file's own
//!   range instead (its lowest to its highest byte on the device), so a
//!   file's layout shows even when it sits in a sliver of a large device;
//!   jump marks are then measured against that range too, so the same
//!   layout at another place draws the same strip.
//! - Ids inside the SVG carry an `fslab-strip-` prefix and identical content
//!   in every strip, so several strips inlined in one HTML page coexist.
//!
//! Folding (`columns`) is kept apart from drawing (`svg`, with its palette
//! in `colour`): the bookkeeping that must stay exact and bounded is pure,
//! and is tested without reading SVG.

mod colour;
mod columns;
mod scatter;
mod svg;

use crate::record::Extent;
use columns::Fold;
use svg::Parts;
pub use scatter::{MAX_MARK_BYTES, Scatter, ScatterChart};

/// Builds the SVG strip of one file from its records, streamed once in
/// logical order, in memory that does not grow with the number of records.
#[derive(Debug, Clone)]
pub struct StripBuilder {
    title: String,
    fold: Fold,
    parts: Parts,
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
            fold: Fold::new(file_size, device_bytes),
            parts: Parts { title: true, legend: true },
        }
    }

    /// Draw for a page whose own caption names the file: no title line
    /// (it stays the SVG's `<title>`), and the legend only when `legend`
    /// (the page shows it once, not under every strip). About half the
    /// bytes and two thirds of the height.
    #[must_use]
    pub fn for_page(mut self, legend: bool) -> Self {
        self.parts = Parts { title: false, legend };
        self
    }

    /// Colour by place within the file's own range on the device (lowest
    /// to highest byte of its records of known location), not across the
    /// whole device: the legend names the range's ends, and jump marks
    /// grow with the distance relative to the range.
    #[must_use]
    pub fn local_colour(mut self) -> Self {
        self.fold.local_colour = true;
        self
    }

    /// The file system's block size: the file's last block, mapped past
    /// EOF on every file whose size is not a multiple of it, is not said
    /// to be (nor marked EOF); only what lies beyond it is.
    #[must_use]
    pub fn block_size(mut self, bytes: u64) -> Self {
        self.fold.last_block_end = self.fold.file_size.next_multiple_of(bytes.max(1));
        self
    }

    /// Feed the next record in logical order. `starts_extent` is true when
    /// this record breaks the physical run by filefrag's rule; it draws a
    /// jump mark unless it is the first record.
    pub fn add(&mut self, extent: &Extent, starts_extent: bool) {
        self.fold.add(extent, starts_extent);
    }

    /// The finished SVG document, UTF-8, self-contained, with a viewBox.
    #[must_use]
    pub fn finish(self) -> Vec<u8> {
        svg::render(&self.title, &self.fold, self.parts)
    }
}

/// The strips' legend alone, an SVG document: for a page that draws it
/// once above strips made with [`StripBuilder::for_page`]`(false)` and
/// [`StripBuilder::local_colour`].
#[must_use]
pub fn page_legend() -> Vec<u8> {
    svg::render_legend_alone()
}

#[cfg(test)]
mod tests {
    use super::colour::{GREY_UNKNOWN, device_colour, hex};
    use super::columns::COLUMNS;
    use super::*;
    use crate::record::extent::flag;

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
    pub(super) fn assert_well_formed(svg: &str) {
        assert!(svg.starts_with("<svg"), "starts with <svg");
        assert!(svg.trim_end().ends_with("</svg>"), "ends with </svg>");
        assert!(svg.contains("viewBox=\"0 "), "has a viewBox");
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
                assert_eq!(builder.fold.columns.len(), COLUMNS);
            }
        }
        assert_eq!(builder.fold.columns.len(), COLUMNS);
        assert_eq!(builder.fold.columns.capacity(), COLUMNS);
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
        assert_eq!(builder.fold.columns.len(), COLUMNS);
        assert!(COLUMNS as u64 * builder.fold.column_bytes >= GIB + MIB);
        let svg = String::from_utf8(builder.finish()).expect("UTF-8");
        assert_well_formed(&svg);
        assert!(svg.contains(">EOF</text>"));
        assert!(svg.contains(">1 record unwritten · 1 GiB mapped past EOF</text>"));
        assert!(svg.contains(">1 GiB</text>"), "the axis ends at the last logical end");
    }

    #[test]
    fn the_last_blocks_slack_is_not_mapped_past_eof() {
        // 67 KiB in 4 KiB blocks: the last block's 1 KiB past EOF is every
        // file's, and no preallocation.
        let mut slack = StripBuilder::new(67 * KIB, GIB, "slack").block_size(4096);
        slack.add(&ext(0, 0, 68 * KIB), true);
        let svg = String::from_utf8(slack.finish()).expect("UTF-8");
        assert!(!svg.contains("past EOF") && !svg.contains(">EOF</text>"), "{svg}");
        // A preallocated MiB beyond that block is said, and only it.
        let mut kept = StripBuilder::new(67 * KIB, GIB, "kept").block_size(4096);
        kept.add(&ext(0, 0, 68 * KIB), true);
        kept.add(&Extent { flags: flag::UNWRITTEN, ..ext(68 * KIB, 68 * KIB, MIB) }, false);
        let svg = String::from_utf8(kept.finish()).expect("UTF-8");
        assert!(svg.contains(" · 1 MiB mapped past EOF</text>") && svg.contains(">EOF</text>"), "{svg}");
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
    fn local_colour_spans_the_files_own_range() {
        // Two halves 512 KiB apart, near the middle of a 2 GiB device.
        let records = [(ext(0, GIB, 512 * KIB), true), (ext(512 * KIB, GIB + MIB, 512 * KIB), true)];
        let local = |shift: u64| {
            let mut builder = StripBuilder::new(MIB, 2 * GIB, "local").local_colour();
            for (extent, starts) in &records {
                builder.add(&Extent { physical: extent.physical + shift, ..*extent }, *starts);
            }
            String::from_utf8(builder.finish()).expect("UTF-8")
        };
        let svg = local(0);
        assert_well_formed(&svg);
        // The range is 1 GiB to 1 GiB + 1.5 MiB: the halves at 0 and 2/3 of it.
        assert_eq!(data_fills(&svg), [hex(device_colour(0.0)), hex(device_colour(2.0 / 3.0))]);
        assert!(svg.contains(">1 GiB</text>") && svg.contains(">+1.5 MiB</text>"), "the ramp's ends, told apart");
        assert!(svg.contains(">this file&apos;s range</text>"));
        // Across the device both halves are one colour: nothing to see.
        let wide = render(MIB, 2 * GIB, &records);
        let fills = data_fills(&wide);
        assert_eq!(fills.len(), 1, "one colour over the whole file: {fills:?}");
        assert!(wide.contains(">device position</text>") && wide.contains(">2 GiB</text>"));
        // The same layout elsewhere draws the same strip, marks included:
        // only the ramp's start names the other place.
        assert_eq!(local(0), local(300 * MIB).replace(">1.29 GiB</text>", ">1 GiB</text>"));
        assert_ne!(render(MIB, 2 * GIB, &records), {
            let moved: Vec<(Extent, bool)> =
                records.iter().map(|(e, s)| (Extent { physical: e.physical + 900 * MIB, ..*e }, *s)).collect();
            render(MIB, 2 * GIB, &moved)
        });
    }

    #[test]
    fn a_page_strip_leaves_out_its_title_line_and_maybe_its_legend() {
        let records = [(ext(0, GIB, MIB), true), (ext(MIB, 2 * GIB, MIB), true)];
        let draw = |legend: bool| {
            let mut builder = StripBuilder::new(2 * MIB, 4 * GIB, "a page's strip").for_page(legend);
            for (extent, starts) in &records {
                builder.add(extent, *starts);
            }
            String::from_utf8(builder.finish()).expect("UTF-8")
        };
        let full = render(2 * MIB, 4 * GIB, &records);
        let (with_legend, bare) = (draw(true), draw(false));
        for svg in [&with_legend, &bare] {
            assert_well_formed(svg);
            assert!(svg.contains("<title>a page&apos;s strip</title>"), "still named for tools");
            assert!(!svg.contains(r#"font-weight="bold""#), "no title line");
            assert_eq!(data_fills(svg), data_fills(&full), "the same strip");
        }
        assert!(with_legend.contains(r#"viewBox="0 24 1080 234""#) && with_legend.contains("fslab-strip-ramp"));
        assert!(bare.contains(r#"viewBox="0 24 1080 186""#));
        assert!(!bare.contains("fslab-strip-ramp") && !bare.contains(">hole</text>"), "no legend");
        assert!(bare.len() * 2 < full.len() + 1_000, "{} bytes of {}", bare.len(), full.len());
        let legend = String::from_utf8(page_legend()).expect("UTF-8");
        assert_well_formed(&legend);
        assert!(legend.contains(">hole</text>") && legend.contains(">each file&apos;s own range</text>"));
    }

    #[test]
    fn title_is_escaped() {
        let builder = StripBuilder::new(0, 0, "a<b & \"c\" 'd'>\u{1}");
        let svg = String::from_utf8(builder.finish()).expect("UTF-8");
        assert_well_formed(&svg);
        assert!(svg.contains("<title>a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\\x01</title>"));
        assert!(!svg.contains("a<b"));
    }
}
