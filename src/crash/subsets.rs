//! The subsets of one epoch's writes that `subset:K` judges, counted
//! without being made: a subset is made only when asked for by its place.
//!
//! The design decision: an epoch of `n` writes has `2^n - 2` non-empty
//! proper subsets. When there are no more than K, all of them are taken,
//! each a bit mask, in the order of their entry lists. Else K distinct
//! ones are drawn with a seeded generator, each write in with probability
//! 1/2 (the generator's 64 bits give 64 writes' coins); the draw keeps
//! only each subset's 64-bit hash (to refuse a repeat) and the
//! generator's state before the subsets it took, so a subset is remade
//! from its state alone. Counting costs one pass of the draw and 8 bytes
//! a subset; making costs a second pass and only the subsets asked for.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

/// One epoch's subsets.
pub(super) struct Subsets {
    writes: Vec<usize>,
    how: How,
}

/// How an epoch's subsets are taken.
enum How {
    /// Fewer than two writes: none.
    None,
    /// Every one: this many (each a mask `1..=every`).
    Every(u64),
    /// K drawn with this seed: the generator's state before each taken.
    Drawn(Vec<u64>),
}

#[cfg(test)]
thread_local! {
    /// The subsets made on this thread (tests: only what is judged is made).
    pub(super) static MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Subsets {
    /// The non-empty proper subsets of `writes` (entries in log order): all
    /// of them when there are at most `k`, else `k` drawn with `seed`.
    pub(super) fn of(writes: Vec<usize>, k: u32, seed: u64) -> Subsets {
        let n = writes.len();
        let how = if n < 2 {
            How::None
        } else {
            let every = if n < 63 { (1u64 << n) - 2 } else { u64::MAX };
            if every <= u64::from(k) { How::Every(every) } else { How::Drawn(draw(n, k, seed)) }
        };
        Subsets { writes, how }
    }

    /// How many there are.
    pub(super) fn count(&self) -> usize {
        match &self.how {
            How::None => 0,
            How::Every(every) => *every as usize,
            How::Drawn(states) => states.len(),
        }
    }

    /// The subsets at `places` (ascending, each below [`count`](Self::count)),
    /// each its entries in log order.
    pub(super) fn made(&self, places: &[usize]) -> Vec<Vec<usize>> {
        let masks: Vec<Vec<u64>> = match &self.how {
            How::None => Vec::new(),
            How::Every(every) if !places.is_empty() => {
                let mut all: Vec<u64> = (1..=*every).collect();
                all.sort_by(|&a, &b| in_list_order(a, b));
                places.iter().map(|&i| vec![all[i]]).collect()
            }
            How::Every(_) => Vec::new(),
            How::Drawn(states) => places.iter().map(|&i| words(&mut SplitMix(states[i]), self.writes.len())).collect(),
        };
        masks.iter().map(|mask| self.picked(mask)).collect()
    }

    /// The writes whose bits `mask` sets.
    fn picked(&self, mask: &[u64]) -> Vec<usize> {
        #[cfg(test)]
        MADE.with(|m| m.set(m.get() + 1));
        self.writes.iter().enumerate().filter(|(i, _)| mask[i / 64] >> (i % 64) & 1 == 1).map(|(_, w)| *w).collect()
    }
}

/// Draw `k` distinct non-empty proper subsets of `n` writes with `seed`:
/// the generator's state before each (the empty and the whole set, and
/// repeats, drawn again, a bounded number of times: with more subsets
/// than K, they are rare).
fn draw(n: usize, k: u32, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix(seed);
    let mut seen = HashSet::new();
    let mut taken = Vec::new();
    for _ in 0..u64::from(k) * 16 {
        if taken.len() == k as usize {
            break;
        }
        let before = rng.0;
        let mask = words(&mut rng, n);
        let count: u32 = mask.iter().map(|w| w.count_ones()).sum();
        if count == 0 || count as usize == n {
            continue;
        }
        let mut hash = DefaultHasher::new();
        mask.hash(&mut hash);
        // A hash two subsets share refuses the second: a draw more, never
        // a subset twice.
        if seen.insert(hash.finish()) {
            taken.push(before);
        }
    }
    taken
}

/// The next subset of `n` writes the generator gives: bit `i` of word
/// `i / 64` says whether write `i` is in.
fn words(rng: &mut SplitMix, n: usize) -> Vec<u64> {
    let mut mask: Vec<u64> = (0..n.div_ceil(64)).map(|_| rng.next()).collect();
    if n % 64 != 0 {
        if let Some(last) = mask.last_mut() {
            *last &= (1u64 << (n % 64)) - 1;
        }
    }
    mask
}

/// The order of two masks' subsets as lists of their writes (lexicographic).
fn in_list_order(a: u64, b: u64) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if a == b {
        return Ordering::Equal;
    }
    // The first write one holds and the other not: the one holding it
    // comes first, unless the other holds nothing after it (a prefix of
    // the first's list).
    let i = (a ^ b).trailing_zeros();
    let after = if i >= 63 { 0 } else { !((2u64 << i) - 1) };
    let (holder_first, a_holds) = if a >> i & 1 == 1 { (b & after != 0, true) } else { (a & after != 0, false) };
    match (holder_first, a_holds) {
        (true, true) | (false, false) => Ordering::Less,
        _ => Ordering::Greater,
    }
}

/// splitmix64: a small seeded generator, the same numbers for the same
/// seed on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mask's writes as a list.
    fn list(mask: u64) -> Vec<u32> {
        (0..64).filter(|i| mask >> i & 1 == 1).collect()
    }

    #[test]
    fn masks_order_as_their_lists_do() {
        let mut masks: Vec<u64> = (1..64).collect();
        masks.sort_by(|&a, &b| in_list_order(a, b));
        let mut lists: Vec<Vec<u32>> = (1..64).map(list).collect();
        lists.sort();
        assert_eq!(masks.into_iter().map(list).collect::<Vec<_>>(), lists);
    }

    #[test]
    fn drawn_subsets_are_counted_distinct_and_remade_alike() {
        let writes: Vec<usize> = (100..300).collect();
        let subsets = Subsets::of(writes.clone(), 50, 9);
        assert_eq!(subsets.count(), 50);
        let all = subsets.made(&(0..50).collect::<Vec<_>>());
        let distinct: HashSet<&Vec<usize>> = all.iter().collect();
        assert_eq!(distinct.len(), 50);
        assert!(all.iter().all(|s| !s.is_empty() && s.len() < writes.len() && s.windows(2).all(|w| w[0] < w[1])));
        assert_eq!(subsets.made(&[7, 42]), [all[7].clone(), all[42].clone()]);
        // Few writes: every subset, none for one write.
        assert_eq!(Subsets::of(vec![4, 5, 6], 6, 1).count(), 6);
        assert_eq!(Subsets::of(vec![4], 6, 1).count(), 0);
    }
}
