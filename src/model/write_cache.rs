//! The volatile write cache: what was written and is not yet on the
//! media, kept as disjoint byte ranges (writes that touch are merged), and
//! given back for destaging in elevator order: the first range at or after
//! the arm, wrapping to the lowest (C-LOOK), so a flush sweeps the disk
//! once.

use std::collections::BTreeMap;

/// Dirty ranges, start → end.
#[derive(Debug, Clone, Default)]
pub struct WriteCache {
    ranges: BTreeMap<u64, u64>,
    bytes: u64,
    capacity: u64,
}

impl WriteCache {
    /// An empty cache holding at most `capacity` dirty bytes.
    pub fn new(capacity: u64) -> WriteCache {
        WriteCache { ranges: BTreeMap::new(), bytes: 0, capacity }
    }

    /// Dirty bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Dirty bytes it may hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Whether all of `start..end` is dirty here (a read of it is served
    /// from the cache).
    pub fn holds(&self, start: u64, end: u64) -> bool {
        self.ranges.range(..=start).next_back().is_some_and(|(_, &e)| e >= end)
    }

    /// Add `start..end`, merged with every range it overlaps or touches.
    pub fn insert(&mut self, start: u64, end: u64) {
        let (mut s, mut e) = (start, end);
        if let Some((&ps, &pe)) = self.ranges.range(..=start).next_back()
            && pe >= start
        {
            s = ps;
            e = e.max(pe);
            self.take(ps);
        }
        while let Some((&qs, _)) = self.ranges.range(s..=e).next() {
            e = e.max(self.take(qs));
        }
        self.ranges.insert(s, e);
        self.bytes += e - s;
    }

    /// Drop `start..end` (written through to the media since), keeping the
    /// parts of ranges outside it.
    pub fn remove(&mut self, start: u64, end: u64) {
        let from = self.ranges.range(..start).next_back().filter(|&(_, &e)| e > start).map_or(start, |(&s, _)| s);
        let overlapping: Vec<u64> = self.ranges.range(from..end).map(|(&s, _)| s).collect();
        for s in overlapping {
            let e = self.take(s);
            for (a, b) in [(s, start.min(e)), (end.max(s), e)] {
                if a < b {
                    self.ranges.insert(a, b);
                    self.bytes += b - a;
                }
            }
        }
    }

    /// Take the next range to destage with the arm at `arm`: the first
    /// starting at or after it, else the lowest.
    pub fn next_from(&mut self, arm: u64) -> Option<(u64, u64)> {
        let start = self.ranges.range(arm..).next().or_else(|| self.ranges.iter().next()).map(|(&s, _)| s)?;
        Some((start, self.take(start)))
    }

    fn take(&mut self, start: u64) -> u64 {
        let end = self.ranges.remove(&start).expect("a range present");
        self.bytes -= end - start;
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_merge_and_are_destaged_in_elevator_order() {
        let mut c = WriteCache::new(1 << 20);
        c.insert(8192, 12288);
        c.insert(0, 4096);
        c.insert(4096, 8192); // touches both: one range 0..12288
        c.insert(100_000, 104_096);
        c.insert(101_000, 102_000); // inside: nothing new
        assert_eq!(c.bytes(), 12288 + 4096);
        assert!(c.holds(4096, 12288));
        assert!(!c.holds(12000, 13000));
        assert_eq!(c.next_from(50_000), Some((100_000, 104_096)));
        assert_eq!(c.next_from(200_000), Some((0, 12288)), "wraps to the lowest");
        assert_eq!(c.next_from(0), None);
        assert_eq!(c.bytes(), 0);
    }

    #[test]
    fn a_write_through_drops_only_what_it_covers() {
        let mut c = WriteCache::new(1 << 20);
        c.insert(0, 16384);
        c.remove(4096, 8192);
        assert_eq!(c.bytes(), 12288);
        assert!(c.holds(0, 4096) && c.holds(8192, 16384) && !c.holds(4096, 8192));
        c.remove(0, 1 << 20);
        assert_eq!(c.bytes(), 0);
    }
}
