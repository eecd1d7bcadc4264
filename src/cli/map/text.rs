//! The text list of `fslab map`: one row per record, in the unit asked
//! for, with xfs's allocation-group columns on xfs.
//!
//! Rows stream out as the records do, so column widths cannot be measured
//! from the rows: they are sized from what bounds them instead (the file
//! system's size for offsets, the allocation group's for offsets in it).
//! A row that still outgrows its column only pushes the rest right.

use std::io::{self, Write};

use crate::cli::MapUnits;
use crate::layout::{AgGeometry, Extent, FsInfo, RecordStep};

/// The names of a record's flags: the kernel's, then filefrag's `eof` (the
/// record reaches EOF) and fslab's `past_eof` (it starts beyond it).
pub(super) fn flag_list(e: &Extent, step: RecordStep) -> impl Iterator<Item = &'static str> + '_ {
    let eof = step.eof.then_some("eof");
    let past = step.past_eof.then_some("past_eof");
    e.flag_names().chain(eof).chain(past)
}

/// How the text list prints a record: unit, column widths, and xfs's
/// allocation-group columns or none.
pub(super) struct TextRow {
    unit: u64,
    unit_name: &'static str,
    ag: Option<AgGeometry>,
    logical: usize,
    physical: usize,
    length: usize,
    jump: usize,
    ag_index: usize,
    ag_offset: usize,
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

impl TextRow {
    /// The layout for a file of `size` bytes on `fs`.
    pub(super) fn new(units: MapUnits, fs: &FsInfo, size: u64) -> TextRow {
        let (unit, unit_name) = match units {
            MapUnits::Blocks => (u64::from(fs.block_size.max(1)), "blocks"),
            MapUnits::Bytes => (1, "bytes"),
            MapUnits::Sectors => (512, "sectors"),
        };
        let space = digits(fs.total_bytes.max(size) / unit);
        let range = 2 * space + 2;
        let ag_bytes = fs.xfs_ag.map_or(0, |g| g.ag_bytes());
        TextRow {
            unit,
            unit_name,
            ag: fs.xfs_ag,
            logical: range.max(format!("logical ({unit_name})").len()),
            physical: range.max(format!("physical ({unit_name})").len()),
            length: space.max("length".len()),
            jump: (space + 1).max("jump".len()),
            ag_index: digits(fs.xfs_ag.map_or(0, |g| u64::from(g.ag_count))).max("ag".len()),
            ag_offset: digits(ag_bytes / unit).max("ag offset".len()),
        }
    }

    /// The column headings.
    pub(super) fn write_header(&self, w: &mut impl Write) -> io::Result<()> {
        let unit = self.unit_name;
        let mut line = format!(
            "{:>6}  {:>lw$}  {:>pw$}  {:>len$}  {:>jw$}  ",
            "ext",
            format!("logical ({unit})"),
            format!("physical ({unit})"),
            "length",
            "jump",
            lw = self.logical,
            pw = self.physical,
            len = self.length,
            jw = self.jump
        );
        if self.ag.is_some() {
            line += &format!("{:>aw$}  {:>ow$}  ", "ag", "ag offset", aw = self.ag_index, ow = self.ag_offset);
        }
        line += "flags";
        writeln!(w, "{line}")
    }

    /// `start..last` in units, both ends inclusive (as filefrag -v and
    /// xfs_bmap print ranges).
    fn range(&self, start: u64, end: u64) -> String {
        format!("{}..{}", start / self.unit, end.div_ceil(self.unit).saturating_sub(1))
    }

    /// One record's row.
    pub(super) fn write(&self, w: &mut impl Write, index: u64, e: &Extent, step: RecordStep) -> io::Result<()> {
        let logical = self.range(e.logical, e.logical_end());
        let physical = if e.location_known() { self.range(e.physical, e.physical_end()) } else { "-".to_string() };
        let jump = match (step.starts_extent, step.jump) {
            (true, Some(j)) => format!("{:+}", j / self.unit as i64),
            (true, None) => "?".to_string(),
            (false, _) => String::new(),
        };
        let mut line = format!(
            "{index:>6}  {logical:>lw$}  {physical:>pw$}  {:>len$}  {jump:>jw$}  ",
            e.length.div_ceil(self.unit),
            lw = self.logical,
            pw = self.physical,
            len = self.length,
            jw = self.jump
        );
        if let Some(ag) = &self.ag {
            let (group, offset) = match ag.locate(e.physical).filter(|_| e.on_device()) {
                Some((group, offset)) => (group.to_string(), (offset / self.unit).to_string()),
                None => ("-".to_string(), "-".to_string()),
            };
            line += &format!("{group:>aw$}  {offset:>ow$}  ", aw = self.ag_index, ow = self.ag_offset);
        }
        let flags: Vec<&str> = flag_list(e, step).collect();
        line += &flags.join(",");
        writeln!(w, "{}", line.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(units: MapUnits, ag: Option<AgGeometry>) -> TextRow {
        let mut fs = FsInfo::probe(std::fs::File::open("/").unwrap()).unwrap();
        fs.block_size = 4096;
        fs.total_bytes = 512 << 20;
        fs.xfs_ag = ag;
        TextRow::new(units, &fs, 1 << 20)
    }

    fn text(r: &TextRow, e: &Extent, step: RecordStep) -> String {
        let mut out = Vec::new();
        r.write(&mut out, 0, e, step).unwrap();
        String::from_utf8(out).unwrap()
    }

    const STEP: RecordStep = RecordStep { starts_extent: false, jump: None, eof: false, past_eof: false, file_bytes: 4096 };

    #[test]
    fn units_scale_offsets_and_lengths() {
        let e = Extent { logical: 8192, physical: 24 * 4096, length: 2 * 4096, flags: 0 };
        let words = |t: String| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(text(&row(MapUnits::Blocks, None), &e, STEP)), ["0", "2..3", "24..25", "2"]);
        assert_eq!(words(text(&row(MapUnits::Sectors, None), &e, STEP)), ["0", "16..31", "192..207", "16"]);
        assert_eq!(words(text(&row(MapUnits::Bytes, None), &e, STEP)), ["0", "8192..16383", "98304..106495", "8192"]);
    }

    #[test]
    fn xfs_rows_carry_the_group_and_the_offset_in_it() {
        let ag = AgGeometry { ag_blocks: 32_768, ag_count: 4, block_size: 4096 };
        let e = Extent { logical: 0, physical: (3 * 32_768 + 10) * 4096, length: 4096, flags: 0 };
        let step = RecordStep { eof: true, past_eof: true, ..STEP };
        let t = text(&row(MapUnits::Sectors, Some(ag)), &e, step);
        let words: Vec<&str> = t.split_whitespace().collect();
        assert_eq!(&words[4..], ["3", "80", "eof,past_eof"], "{t}");
        // Unknown locations have no group.
        let delalloc = Extent { flags: crate::sys::fiemap::FIEMAP_EXTENT_UNKNOWN, ..e };
        let t = text(&row(MapUnits::Blocks, Some(ag)), &delalloc, STEP);
        assert!(t.contains(" - ") && !t.ends_with(' '), "{t:?}");
    }

    #[test]
    fn a_row_of_a_typical_file_fits_120_columns() {
        let ag = AgGeometry { ag_blocks: 32_768, ag_count: 4, block_size: 4096 };
        let r = row(MapUnits::Blocks, Some(ag));
        let e = Extent { logical: 1 << 20, physical: 400 << 20, length: 1 << 20, flags: 0x801 };
        let step = RecordStep { starts_extent: true, jump: Some(-(300 << 20)), eof: true, past_eof: true, file_bytes: 0 };
        let mut header = Vec::new();
        r.write_header(&mut header).unwrap();
        for line in [text(&r, &e, step), String::from_utf8(header).unwrap()] {
            assert!(line.trim_end().len() <= 120, "{} columns: {line}", line.len());
        }
    }
}
