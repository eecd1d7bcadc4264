//! Folding a file's extent records, streamed once in logical order, into
//! the strip's fixed row of column summaries: pure bookkeeping, no drawing.
//!
//! The design decision: the row never grows. A record that ends past what
//! the columns cover doubles the bytes per column and merges neighbouring
//! pairs instead, so memory is the same for one extent or a million, and
//! only detail is lost: every count kept beside the columns stays exact.

use crate::record::Extent;
use crate::record::extent::flag;

/// Pixel columns across the strip: one user unit each at the default size,
/// fine enough to see a jump per 0.1 % of the file.
pub(super) const COLUMNS: usize = 1000;

/// Column flag: the record's device location is unknown (delalloc).
pub(super) const KIND_UNKNOWN: u8 = 1;
/// Column flag: the record is allocated but unwritten (preallocated).
pub(super) const KIND_UNWRITTEN: u8 = 2;
/// Column flag: the record's blocks are shared with other files.
pub(super) const KIND_SHARED: u8 = 4;

/// What the strip remembers about one column of the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Column {
    /// Bytes of records inside the column; more than zero means "draw data".
    pub(super) mapped_bytes: u64,
    /// Bytes of the column the dominant record covers.
    best_len: u64,
    /// Device offset that colours the dominant record.
    pub(super) best_physical: u64,
    /// `KIND_*` bits of the dominant record.
    pub(super) best_kind: u8,
    /// `KIND_*` bits of every record in the column.
    pub(super) any_kind: u8,
    pub(super) forward: u32,
    pub(super) backward: u32,
    /// Jumps from or to a record of unknown location: no direction.
    pub(super) undirected: u32,
    pub(super) forward_max: u64,
    pub(super) backward_max: u64,
}

impl Column {
    /// Fold `len` bytes of one record into the column.
    pub(super) fn cover(&mut self, len: u64, physical: u64, kind: u8) {
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
    pub(super) fn merge(self, right: Column) -> Column {
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

/// The records of one file folded so far: the columns, and counts that
/// stay exact over the whole file however coarse the columns get.
#[derive(Debug, Clone)]
pub(super) struct Fold {
    pub(super) file_size: u64,
    /// Where the file's last block ends: the bytes between EOF and here
    /// are every file's slack, not mapped past EOF. `file_size` until a
    /// block size is given.
    pub(super) last_block_end: u64,
    pub(super) device_bytes: u64,
    /// File bytes per column; only ever doubles.
    pub(super) column_bytes: u64,
    /// Always `COLUMNS` long.
    pub(super) columns: Vec<Column>,
    pub(super) records: u64,
    pub(super) extents: u64,
    pub(super) forward_jumps: u64,
    pub(super) backward_jumps: u64,
    pub(super) undirected_jumps: u64,
    pub(super) farthest_jump: u64,
    pub(super) unknown_records: u64,
    pub(super) unwritten_records: u64,
    pub(super) shared_records: u64,
    pub(super) past_eof_bytes: u64,
    pub(super) max_logical_end: u64,
    /// Lowest device offset of a record of known location (`u64::MAX`
    /// before the first): the bottom of a local colour scale.
    min_physical: u64,
    max_physical_end: u64,
    /// Whether colours span the file's own range on the device rather
    /// than the whole device.
    pub(super) local_colour: bool,
    /// Whether a record came before (the first one never draws a jump).
    has_previous: bool,
    /// The previous record, `None` when its location is unknown.
    previous_known: Option<Extent>,
    /// Device offset where the current filefrag extent starts: its colour.
    run_physical: Option<u64>,
}

impl Fold {
    /// Nothing folded yet, for a file of `file_size` bytes on a device of
    /// `device_bytes` (see [`super::StripBuilder::new`]).
    pub(super) fn new(file_size: u64, device_bytes: u64) -> Fold {
        Fold {
            file_size,
            last_block_end: file_size,
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
            min_physical: u64::MAX,
            max_physical_end: 0,
            local_colour: false,
            has_previous: false,
            previous_known: None,
            run_physical: None,
        }
    }

    /// Fold the next record in logical order; `starts_extent` as
    /// [`super::StripBuilder::add`] takes it.
    pub(super) fn add(&mut self, extent: &Extent, starts_extent: bool) {
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

        if end > self.last_block_end {
            self.past_eof_bytes += end - extent.logical.max(self.last_block_end);
        }
        self.max_logical_end = self.max_logical_end.max(end);
        if known {
            self.min_physical = self.min_physical.min(extent.physical);
            self.max_physical_end = self.max_physical_end.max(extent.physical_end());
        }
        self.records += 1;
        self.has_previous = true;
        self.previous_known = known.then_some(*extent);
    }

    /// Coarsen until the columns reach `end`: double the bytes per column
    /// and merge neighbouring pairs. At most 64 doublings over a fold's
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
        // The strip knows no block size: an encoded record's least end is
        // taken one byte on (see `Extent::gap_to` for encoded records).
        let gap = match (self.previous_known, known) {
            (Some(previous), true) => Some((previous, previous.gap_to(extent, 1))),
            _ => None,
        };
        match gap {
            // An encoded record followed within its logical length: no jump.
            Some((previous, 0)) if previous.encoded() => {}
            Some((_, gap)) if gap >= 0 => {
                let distance = u64::try_from(gap).unwrap_or(u64::MAX);
                column.forward = column.forward.saturating_add(1);
                column.forward_max = column.forward_max.max(distance);
                self.forward_jumps += 1;
                self.farthest_jump = self.farthest_jump.max(distance);
            }
            Some((_, gap)) => {
                let distance = u64::try_from(gap.unsigned_abs()).unwrap_or(u64::MAX);
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
    pub(super) fn span(&self) -> u64 {
        self.file_size.max(self.max_logical_end)
    }

    /// Device bytes the colour ramp spans.
    pub(super) fn device_scale(&self) -> u64 {
        if self.device_bytes > 0 { self.device_bytes } else { self.max_physical_end.max(1) }
    }

    /// The file's own range on the device: its lowest known device offset
    /// and the end of its highest record; `None` when no record has a
    /// known location.
    pub(super) fn physical_range(&self) -> Option<(u64, u64)> {
        (self.min_physical <= self.max_physical_end).then_some((self.min_physical, self.max_physical_end))
    }

    /// Where `physical` sits on the colour scale, 0.0 to 1.0: across the
    /// file's own range when `local_colour`, else across the device.
    pub(super) fn colour_fraction(&self, physical: u64) -> f64 {
        match self.physical_range().filter(|_| self.local_colour) {
            Some((low, high)) => (physical.saturating_sub(low)) as f64 / (high - low).max(1) as f64,
            None => physical as f64 / self.device_scale() as f64,
        }
    }

    /// Device bytes a jump mark's full height stands for: the colour
    /// scale's span.
    pub(super) fn jump_scale(&self) -> u64 {
        match self.physical_range().filter(|_| self.local_colour) {
            Some((low, high)) => (high - low).max(1),
            None => self.device_scale(),
        }
    }

    /// Columns that hold part of the span.
    pub(super) fn visible_columns(&self) -> usize {
        usize::try_from(self.span().div_ceil(self.column_bytes)).map_or(COLUMNS, |n| n.min(COLUMNS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn compressed_records_back_to_back_draw_no_jumps() {
        // 128 KiB of file each, 4 KiB apart on the device (btrfs zstd).
        let mut fold = Fold::new(64 << 17, 1 << 30);
        for i in 0..64u64 {
            let e = Extent { logical: i << 17, physical: (100 + i) << 12, length: 1 << 17, flags: flag::ENCODED };
            fold.add(&e, i > 0);
        }
        assert_eq!((fold.extents, fold.forward_jumps, fold.backward_jumps), (64, 0, 0));
        // One far behind is still a jump back, and from there one forward.
        let mut fold = Fold::new(2 << 17, 1 << 30);
        fold.add(&Extent { logical: 0, physical: 100 << 12, length: 1 << 17, flags: flag::ENCODED }, false);
        fold.add(&Extent { logical: 1 << 17, physical: 10 << 12, length: 1 << 17, flags: 0 }, true);
        assert_eq!((fold.forward_jumps, fold.backward_jumps), (0, 1));
    }
}
