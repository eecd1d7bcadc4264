//! Crash states: the places in a write log where the device could have
//! been left by a crash, each a list of entries to apply onto the image
//! from before the work.
//!
//! The models, each a pure function of the log's entries, where the work
//! began, the model and a seed:
//! - `flush`: the device after each flush (as fstests' generic/482
//!   replays a log to each of its marks): every write the device
//!   completed before the flush is there, and nothing after it.
//! - `prefix`: the device after every single write (writes completed in
//!   order, none lost).
//! - `subset:K`: every epoch (the writes between two flushes) whole before
//!   the current one, plus subsets of the current epoch's writes, which
//!   the device was free to persist in any order and any part of until
//!   its next flush (as CrashMonkey permutes them): every non-empty proper
//!   subset when there are no more than K of them, else K of them drawn
//!   by a seeded generator. Each epoch's own start (the flush state) is a
//!   state too, so `subset` sees whatever `flush` sees.
//!
//! The design decision: a state is the entries `0..prefix` whole plus
//! `extra` (entries past `prefix`, in log order), so states that share a
//! prefix are built from one image advanced along the log. A state whose
//! bytes equal another's is not made twice: a flush changes no byte, so
//! the state just before one is the state just after it, and is judged as
//! the later (the stricter place: what the flush made durable must be
//! there). States before `from` (the work's start: its setup was synced)
//! are not made. When there are more than the cap, as many as the cap
//! allows are kept, spread evenly over the list (first and last kept);
//! `subset` counts its states first and makes only those kept
//! (`subsets.rs`), an epoch's drawn subsets in the order drawn.

use std::fmt;
use std::str::FromStr;

use super::log::{Entry, FUA};
use super::subsets::Subsets;

/// How crash states are chosen from a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// After each flush.
    Flush,
    /// After each write.
    Prefix,
    /// Subsets of each epoch's unflushed writes, at most K per epoch.
    Subset(u32),
}

/// The largest K of `subset:K`.
pub const MAX_SUBSETS: u32 = 100_000;

impl FromStr for Model {
    type Err = String;

    fn from_str(s: &str) -> Result<Model, String> {
        match s {
            "flush" => return Ok(Model::Flush),
            "prefix" => return Ok(Model::Prefix),
            _ => {}
        }
        let Some(k) = s.strip_prefix("subset:") else {
            return Err(format!("`{s}` is no crash model: give flush, prefix or subset:K (K subsets of each epoch)"));
        };
        match k.parse::<u32>() {
            Ok(k) if (1..=MAX_SUBSETS).contains(&k) => Ok(Model::Subset(k)),
            _ => Err(format!("subset:{k}: K is the number of subsets of each epoch, from 1 to {MAX_SUBSETS}")),
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Model::Flush => f.write_str("flush"),
            Model::Prefix => f.write_str("prefix"),
            Model::Subset(k) => write!(f, "subset:{k}"),
        }
    }
}

/// One crash state.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State {
    /// The entries `0..prefix` are applied whole.
    pub prefix: usize,
    /// Then these entries (each past `prefix`), in log order.
    pub extra: Vec<usize>,
}

impl State {
    /// Every entry it applies, in log order.
    pub fn entries(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.prefix).chain(self.extra.iter().copied())
    }

    /// The last entry it applies (`None` for the image before the log).
    pub fn last_entry(&self) -> Option<usize> {
        self.extra.last().copied().or(self.prefix.checked_sub(1))
    }
}

/// The states of one log under one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct States {
    /// The states kept, in the order they are judged (by prefix, then by
    /// their extra entries).
    pub states: Vec<State>,
    /// How many the model gave before the cap.
    pub total: usize,
}

impl States {
    /// Whether the cap left some out.
    pub fn capped(&self) -> bool {
        self.states.len() < self.total
    }
}

/// Whether `entry` ends an epoch: a flush, or a write with forced unit
/// access (which a device completes only once it is stable).
fn ends_epoch(entry: &Entry) -> bool {
    entry.is_flush() || entry.flags & FUA != 0
}

/// Whether applying `entry` changes bytes (a write or a discard).
fn changes_bytes(entry: &Entry) -> bool {
    !entry.is_mark() && (entry.is_discard() || entry.nr_sectors > 0)
}

/// The epoch a state whose prefix is `prefix` is in: the epoch-ending
/// entries before it.
pub fn epoch_of(entries: &[Entry], prefix: usize) -> usize {
    entries[..prefix.min(entries.len())].iter().filter(|e| ends_epoch(e)).count()
}

/// `prefix` moved past the entries right after it that change no byte
/// (flushes, marks): the same bytes, judged at the later place.
fn past_flushes(entries: &[Entry], mut prefix: usize) -> usize {
    while prefix < entries.len() && !changes_bytes(&entries[prefix]) {
        prefix += 1;
    }
    prefix
}

/// The states of `entries` from the `from`th on under `model`, drawn with
/// `seed`, at most `cap` of them (at least 1).
pub fn states(entries: &[Entry], from: usize, model: Model, seed: u64, cap: usize) -> States {
    let from = from.min(entries.len());
    let mut all: Vec<State> = match model {
        Model::Flush => epochs(entries, from).into_iter().map(|(start, _)| start).collect::<Vec<_>>(),
        Model::Prefix => std::iter::once(from)
            .chain((from..entries.len()).filter(|&i| changes_bytes(&entries[i])).map(|i| i + 1))
            .collect(),
        Model::Subset(k) => return subset_states(entries, from, k, seed, cap),
    }
    .into_iter()
    .map(|prefix| State { prefix: past_flushes(entries, prefix), extra: Vec::new() })
    .collect();
    all.dedup();
    capped(all, cap)
}

/// Each epoch from `from` on: the prefix it starts at (past the flushes
/// that start it) and the entries in it that change bytes. The last
/// "epoch" is the end of the log, with no writes.
fn epochs(entries: &[Entry], from: usize) -> Vec<(usize, Vec<usize>)> {
    let mut out = Vec::new();
    let first = past_flushes(entries, from);
    let mut start = first;
    let mut writes = Vec::new();
    for i in first..entries.len() {
        if changes_bytes(&entries[i]) {
            writes.push(i);
        }
        if ends_epoch(&entries[i]) {
            let next = past_flushes(entries, i + 1);
            if next != start {
                out.push((start, std::mem::take(&mut writes)));
            }
            start = next;
        }
    }
    out.push((start, std::mem::take(&mut writes)));
    if start < entries.len() {
        // Writes after the last flush: the end of the log is a state too.
        out.push((entries.len(), Vec::new()));
    }
    out
}

/// At most `cap` of `all`, spread evenly over it, first and last kept.
fn capped(all: Vec<State>, cap: usize) -> States {
    let total = all.len();
    let states = kept(total, cap).into_iter().map(|i| all[i].clone()).collect();
    States { states, total }
}

/// The places of at most `cap` of `total` things, spread evenly over
/// them, first and last kept, in order.
fn kept(total: usize, cap: usize) -> Vec<usize> {
    let cap = cap.max(1);
    if total <= cap {
        return (0..total).collect();
    }
    if cap == 1 { vec![0] } else { (0..cap).map(|i| i * (total - 1) / (cap - 1)).collect() }
}

/// The states of `subset:K` (see [`states`]), counted epoch by epoch
/// first and made only for the places the cap keeps: an epoch of
/// thousands of writes with K in the tens of thousands would otherwise
/// hold gigabytes of subsets, all but a few thrown away.
fn subset_states(entries: &[Entry], from: usize, k: u32, seed: u64, cap: usize) -> States {
    // Each epoch: its start, then its subsets (its states, in order).
    let epochs: Vec<(usize, Subsets)> = epochs(entries, from)
        .into_iter()
        .enumerate()
        .map(|(number, (start, writes))| (start, Subsets::of(writes, k, seed ^ (number as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))))
        .collect();
    let total = epochs.iter().map(|(_, subsets)| 1 + subsets.count()).sum();
    let mut wanted = kept(total, cap).into_iter().peekable();
    let mut states = Vec::new();
    let mut first = 0;
    for (start, subsets) in &epochs {
        let after = first + 1 + subsets.count();
        let mut here = Vec::new();
        while let Some(i) = wanted.next_if(|&i| i < after) {
            here.push(i - first);
        }
        if here.first() == Some(&0) {
            states.push(State { prefix: *start, extra: Vec::new() });
        }
        let places: Vec<usize> = here.iter().filter(|&&i| i > 0).map(|i| i - 1).collect();
        states.extend(subsets.made(&places).into_iter().map(|extra| State { prefix: *start, extra }));
        first = after;
    }
    States { states, total }
}

#[cfg(test)]
mod tests {
    use super::super::log::{DISCARD, FLUSH};
    use super::super::subsets::MADE;
    use super::*;

    fn write(sector: u64) -> Entry {
        Entry { sector, nr_sectors: 8, flags: 0, data_at: 0, data_len: 0 }
    }

    fn flush() -> Entry {
        Entry { sector: 0, nr_sectors: 0, flags: FLUSH, data_at: 0, data_len: 0 }
    }

    /// w0 w1 F w3 w4 w5 F F w8: three epochs of writes.
    fn log() -> Vec<Entry> {
        vec![write(0), write(8), flush(), write(16), write(24), write(32), flush(), flush(), write(40)]
    }

    fn prefixes(s: &States) -> Vec<usize> {
        s.states.iter().map(|s| s.prefix).collect()
    }

    #[test]
    fn models_read_and_show_as_given() {
        for word in ["flush", "prefix", "subset:1", "subset:64"] {
            assert_eq!(word.parse::<Model>().unwrap().to_string(), word);
        }
        for bad in ["", "subset", "subset:0", "subset:x", "subset:100001", "flushes"] {
            let e = bad.parse::<Model>().unwrap_err();
            assert!(e.contains("flush, prefix or subset:K") || e.contains("from 1 to 100000"), "{bad}: {e}");
        }
    }

    #[test]
    fn flush_gives_the_device_after_each_flush_and_at_the_end() {
        let s = states(&log(), 0, Model::Flush, 1, 100);
        // The start, after each flush (the second of two together is the
        // same bytes), and the end, past the last flush.
        assert_eq!(prefixes(&s), [0, 3, 8, 9]);
        assert!(s.states.iter().all(|s| s.extra.is_empty()));
        assert_eq!(s.total, 4);
        assert!(!s.capped());
        // From the work's start on only.
        assert_eq!(prefixes(&states(&log(), 3, Model::Flush, 1, 100)), [3, 8, 9]);
        // A log ending on a flush has no state past it.
        assert_eq!(prefixes(&states(&log()[..8], 0, Model::Flush, 1, 100)), [0, 3, 8]);
    }

    #[test]
    fn prefix_gives_the_device_after_each_write_judged_past_its_flushes() {
        let s = states(&log(), 0, Model::Prefix, 1, 100);
        assert_eq!(prefixes(&s), [0, 1, 3, 4, 5, 8, 9]);
        assert_eq!(epoch_of(&log(), 3), 1);
        assert_eq!(epoch_of(&log(), 8), 3);
    }

    #[test]
    fn subset_enumerates_a_small_epoch_and_samples_a_large_one() {
        let s = states(&log(), 0, Model::Subset(6), 7, 1000);
        let shown: Vec<(usize, Vec<usize>)> = s.states.iter().map(|s| (s.prefix, s.extra.clone())).collect();
        assert_eq!(
            shown,
            [
                (0, vec![]),
                (0, vec![0]),
                (0, vec![1]),
                (3, vec![]),
                (3, vec![3]),
                (3, vec![3, 4]),
                (3, vec![3, 5]),
                (3, vec![4]),
                (3, vec![4, 5]),
                (3, vec![5]),
                (8, vec![]),
                (9, vec![]),
            ]
        );
        // Three writes have six proper subsets: K=2 draws two of them, the
        // same two for the same seed.
        let two = states(&log(), 0, Model::Subset(2), 7, 1000);
        let drawn: Vec<&State> = two.states.iter().filter(|s| s.prefix == 3 && !s.extra.is_empty()).collect();
        assert_eq!(drawn.len(), 2);
        assert_eq!(two, states(&log(), 0, Model::Subset(2), 7, 1000));
        // Every state applies only entries past its prefix, in order.
        for state in &s.states {
            assert!(state.extra.windows(2).all(|w| w[0] < w[1]) && state.extra.iter().all(|&e| e >= state.prefix));
        }
    }

    #[test]
    fn another_seed_draws_other_subsets_of_a_large_epoch() {
        let mut entries: Vec<Entry> = (0..20).map(|i| write(i * 8)).collect();
        entries.push(flush());
        let a = states(&entries, 0, Model::Subset(10), 1, 1000);
        let b = states(&entries, 0, Model::Subset(10), 2, 1000);
        assert_eq!(a.states.len(), 12, "the start, ten subsets, the end");
        assert_ne!(a, b);
        assert_eq!(a, states(&entries, 0, Model::Subset(10), 1, 1000));
    }

    #[test]
    fn subset_makes_only_the_states_the_cap_keeps() {
        // One epoch of 8,000 writes: K=100,000 drawn subsets, three judged.
        let mut entries: Vec<Entry> = (0..8000).map(|i| write(i * 8)).collect();
        entries.push(flush());
        MADE.with(|m| m.set(0));
        let s = states(&entries, 0, Model::Subset(100_000), 5, 3);
        let made = MADE.with(|m| m.get());
        assert_eq!(s.total, 100_002, "the start, the subsets, the end");
        assert_eq!(s.states.len(), 3);
        assert!(made <= 3, "{made} subsets made for 3 states judged");
        assert_eq!((s.states[0].prefix, s.states[0].extra.len()), (0, 0), "the first kept");
        assert_eq!((s.states[2].prefix, s.states[2].extra.len()), (8001, 0), "the last kept");
        let middle = &s.states[1].extra;
        assert!(middle.len() > 3000 && middle.len() < 5000 && middle.windows(2).all(|w| w[0] < w[1]), "{}", middle.len());
        // Drawn again, the same.
        assert_eq!(s, states(&entries, 0, Model::Subset(100_000), 5, 3));
    }

    #[test]
    fn a_cap_keeps_states_spread_over_the_log() {
        let entries: Vec<Entry> = (0..100).map(|i| write(i * 8)).collect();
        let s = states(&entries, 0, Model::Prefix, 1, 5);
        assert_eq!(s.total, 101);
        assert!(s.capped());
        assert_eq!(prefixes(&s), [0, 25, 50, 75, 100]);
    }

    #[test]
    fn a_state_lists_its_entries_and_a_discard_is_a_write() {
        let state = State { prefix: 3, extra: vec![4, 6] };
        assert_eq!(state.entries().collect::<Vec<_>>(), [0, 1, 2, 4, 6]);
        assert_eq!(state.last_entry(), Some(6));
        assert_eq!(State { prefix: 0, extra: vec![] }.last_entry(), None);
        let discard = Entry { flags: DISCARD, ..write(0) };
        assert_eq!(prefixes(&states(&[discard, flush()], 0, Model::Prefix, 1, 10)), [0, 2]);
    }
}
