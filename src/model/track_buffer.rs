//! The drive's read buffer: a few segments, each holding one stretch of
//! the disk that was read or read ahead, the least recently used replaced
//! first (DiskSim's segmented cache; ATA drives cut their buffer into a
//! handful to a few dozen segments).

/// One segment: the bytes `start..end` are in the buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// First byte held.
    pub start: u64,
    /// One past the last byte held.
    pub end: u64,
    used: u64,
}

/// The segmented read buffer.
#[derive(Debug, Clone)]
pub struct TrackBuffer {
    segments: Vec<Segment>,
    count: usize,
    segment_bytes: u64,
    clock: u64,
}

impl TrackBuffer {
    /// `count` segments of `segment_bytes` each, empty.
    pub fn new(count: u32, segment_bytes: u64) -> TrackBuffer {
        TrackBuffer { segments: Vec::with_capacity(count as usize), count: count as usize, segment_bytes, clock: 0 }
    }

    /// Bytes a segment holds: also how far the drive reads ahead.
    pub fn segment_bytes(&self) -> u64 {
        self.segment_bytes
    }

    /// The segment holding all of `start..end`, given that segment
    /// `streaming` (the one being read ahead into) holds up to
    /// `streamed` by now.
    pub fn holding(&self, start: u64, end: u64, streaming: Option<(usize, u64)>) -> Option<usize> {
        self.segments.iter().enumerate().position(|(i, s)| {
            let held_end = match streaming {
                Some((at, streamed)) if at == i => streamed,
                _ => s.end,
            };
            let held_start = s.start.max(held_end.saturating_sub(self.segment_bytes));
            held_start <= start && end <= held_end
        })
    }

    /// Segment `i`.
    pub fn segment(&self, i: usize) -> Segment {
        self.segments[i]
    }

    /// Mark segment `i` used now.
    pub fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.segments[i].used = self.clock;
    }

    /// Segment `i` now holds up to `end` (read ahead that far), its oldest
    /// bytes dropped beyond a segment's worth.
    pub fn extend(&mut self, i: usize, end: u64) {
        let s = &mut self.segments[i];
        s.end = s.end.max(end);
        s.start = s.start.max(s.end.saturating_sub(self.segment_bytes));
    }

    /// A segment for `start..end`, replacing the least recently used: its
    /// index.
    pub fn insert(&mut self, start: u64, end: u64) -> usize {
        self.clock += 1;
        let start = start.max(end.saturating_sub(self.segment_bytes));
        let segment = Segment { start, end, used: self.clock };
        if self.segments.len() < self.count {
            self.segments.push(segment);
            return self.segments.len() - 1;
        }
        let oldest = (0..self.segments.len()).min_by_key(|&i| self.segments[i].used).expect("at least one segment");
        self.segments[oldest] = segment;
        oldest
    }

    /// Forget whatever overlaps `start..end` (it is being written). Indices
    /// of the other segments stay as they were; an emptied segment holds
    /// nothing and is reused first.
    pub fn forget(&mut self, start: u64, end: u64) {
        for s in &mut self.segments {
            if s.start < end && start < s.end {
                *s = Segment { start: 0, end: 0, used: 0 };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_segment_goes_first() {
        let mut b = TrackBuffer::new(2, 1 << 20);
        let a = b.insert(0, 4096);
        let c = b.insert(1 << 30, (1 << 30) + 4096);
        b.touch(a);
        let d = b.insert(2 << 30, (2 << 30) + 4096);
        assert_eq!(d, c, "the one not used since");
        assert_eq!(b.holding(0, 4096, None), Some(a));
        assert_eq!(b.holding(1 << 30, (1 << 30) + 4096, None), None);
    }

    #[test]
    fn a_segment_keeps_its_last_segment_of_bytes_and_a_write_forgets_it() {
        let mut b = TrackBuffer::new(4, 1 << 20);
        let a = b.insert(0, 4096);
        b.extend(a, 3 << 20);
        assert_eq!(b.holding(0, 4096, None), None, "dropped once the segment ran past it");
        assert_eq!(b.holding(2 << 20, 3 << 20, None), Some(a));
        // While streaming, only what was read by now is held.
        assert_eq!(b.holding(2 << 20, 3 << 20, Some((a, (5 << 19)))), None);
        b.forget(2 << 20, (2 << 20) + 1);
        assert_eq!(b.holding(2 << 20, 3 << 20, None), None);
    }
}
