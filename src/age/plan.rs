//! The plan of an aging: which directories and files to make and which to
//! delete, in order, from the seed alone. Nothing here touches a file
//! system; the executor ([`super::run`]) asks a plan for a fill of so
//! many bytes or for a round's deletions and carries the operations out.
//! The only input from the file system is how many bytes each fill phase
//! is to write, which statvfs gives after a syncfs, so the same spec on
//! the same kind and size of file system makes the same operations.

use std::collections::HashMap;

use super::profile_file::ProfileFile;
use crate::scenario::tree_copy::EntryKind;
use crate::scenario::tree_copy::synthetic::{SplitMix, generate};

/// One operation on the aging directory; paths are relative to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Make a directory.
    MkDir(String),
    /// Make a file of `size` bytes.
    Create {
        /// Where.
        path: String,
        /// Its size in bytes.
        size: u64,
    },
    /// Delete a file.
    Remove(String),
    /// Delete an (emptied) directory.
    RmDir(String),
}

/// A plan: asked for setup, then fills and rounds' deletions in turn.
pub trait Plan {
    /// The operations before the first fill (directories).
    fn setup(&mut self) -> Vec<Op>;
    /// Files whose sizes, each rounded up to the block size, add up to
    /// `budget` bytes (the last may be cut short to land on it).
    fn fill(&mut self, budget: u64) -> Vec<Op>;
    /// The deletions that open round `round` (1-based).
    fn delete(&mut self, round: u32) -> Vec<Op>;
    /// The live files' sizes, each rounded up to the block size, summed:
    /// a round refills what its deletions freed by this account, not by
    /// measuring (what a file system reports right after deletions
    /// depends on when it gets round to freeing them).
    fn live_bytes(&self) -> u64;
}

/// `size` rounded up to whole blocks.
fn allocated(size: u64, block: u64) -> u64 {
    size.div_ceil(block) * block
}

/// Uniform in [0, 1).
fn unit(rng: &mut SplitMix) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A size log-uniform in `lo..=hi`.
fn log_uniform(rng: &mut SplitMix, (lo, hi): (u64, u64)) -> u64 {
    let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
    ((a + unit(rng) * (b - a)).exp().round() as u64).clamp(lo, hi)
}

/// Cut the size drawn so the phase lands on its budget: `None` once spent.
fn fit(size: u64, spent: u64, budget: u64, block: u64) -> Option<u64> {
    if spent >= budget {
        return None;
    }
    Some(if spent + allocated(size, block) > budget { (budget - spent).max(1) } else { size })
}

/// Leaf directories of `churn`: 8 × 8 at depth 2, so no directory grows
/// large enough for its size to be the cost.
const CHURN_FANOUT: u64 = 8;

/// `churn` (and `free-frag`'s rounds): files of log-uniform size spread
/// over 64 directories; each round deletes a seeded `delete` share of the
/// live files, by count.
#[derive(Debug, Clone)]
pub struct ChurnPlan {
    rng: SplitMix,
    sizes: (u64, u64),
    delete: f64,
    block: u64,
    /// Live files: path and allocated bytes.
    live: Vec<(String, u64)>,
    next_id: u64,
}

impl ChurnPlan {
    /// A plan for `seed`, sizes in `sizes`, deleting a `delete` share of
    /// files per round, on a file system of `block`-byte blocks.
    pub fn new(seed: u64, sizes: (u64, u64), delete: f64, block: u64) -> Self {
        ChurnPlan { rng: SplitMix::new(seed), sizes, delete, block, live: Vec::new(), next_id: 0 }
    }
}

/// `k` of `items` chosen at random (a partial Fisher-Yates shuffle),
/// taken out of `items`, in the order chosen.
fn choose<T>(rng: &mut SplitMix, items: &mut Vec<T>, k: usize) -> Vec<T> {
    let n = items.len();
    for i in 0..k.min(n) {
        let j = i + rng.below((n - i) as u64) as usize;
        items.swap(i, j);
    }
    let rest = items.split_off(k.min(n));
    std::mem::replace(items, rest)
}

/// How many of `n` a share is, rounded.
fn share_of(n: usize, share: f64) -> usize {
    ((n as f64 * share).round() as usize).min(n)
}

impl Plan for ChurnPlan {
    fn setup(&mut self) -> Vec<Op> {
        let mut ops = Vec::new();
        for a in 0..CHURN_FANOUT {
            ops.push(Op::MkDir(format!("d{a}")));
            for b in 0..CHURN_FANOUT {
                ops.push(Op::MkDir(format!("d{a}/d{b}")));
            }
        }
        ops
    }

    fn fill(&mut self, budget: u64) -> Vec<Op> {
        let mut ops = Vec::new();
        let mut spent = 0;
        loop {
            let drawn = log_uniform(&mut self.rng, self.sizes);
            let Some(size) = fit(drawn, spent, budget, self.block) else { break };
            let dir = self.rng.below(CHURN_FANOUT * CHURN_FANOUT);
            let path = format!("d{}/d{}/f{}", dir / CHURN_FANOUT, dir % CHURN_FANOUT, self.next_id);
            self.next_id += 1;
            spent += allocated(size, self.block);
            self.live.push((path.clone(), allocated(size, self.block)));
            ops.push(Op::Create { path, size });
        }
        ops
    }

    fn delete(&mut self, _round: u32) -> Vec<Op> {
        let k = share_of(self.live.len(), self.delete);
        choose(&mut self.rng, &mut self.live, k).into_iter().map(|(path, _)| Op::Remove(path)).collect()
    }

    fn live_bytes(&self) -> u64 {
        self.live.iter().map(|(_, bytes)| bytes).sum()
    }
}

/// One directory or file of a `tree` plan.
#[derive(Debug, Clone)]
struct Node {
    path: String,
    dir: bool,
    parent: Option<usize>,
    children: Vec<usize>,
    alive: bool,
    /// Live files in this subtree (1 for a live file).
    files: u64,
    /// A file's allocated bytes.
    bytes: u64,
}

/// `tree`: each fill is a new tree from the tree-copy generator (source-
/// like small files in directories) under `tN/`; each round deletes
/// whole random subtrees and files until a `delete` share of the live
/// files is gone (a subtree with more files than are still to go is not
/// taken whole: a random part of it is picked instead).
#[derive(Debug, Clone)]
pub struct TreePlan {
    seed: u64,
    rng: SplitMix,
    delete: f64,
    block: u64,
    trees: u64,
    nodes: Vec<Node>,
    /// Candidates for deletion (dead ones are dropped when drawn).
    live: Vec<usize>,
}

impl TreePlan {
    /// A plan for `seed`, deleting a `delete` share of files per round, on
    /// a file system of `block`-byte blocks.
    pub fn new(seed: u64, delete: f64, block: u64) -> Self {
        let rng = SplitMix::new(seed ^ 0x6167_6520_7472_6565);
        TreePlan { seed, rng, delete, block, trees: 0, nodes: Vec::new(), live: Vec::new() }
    }

    fn add(&mut self, path: String, dir: bool, parent: Option<usize>, bytes: u64) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node { path, dir, parent, children: Vec::new(), alive: true, files: 0, bytes });
        if let Some(p) = parent {
            self.nodes[p].children.push(id);
        }
        self.live.push(id);
        if !dir {
            let mut at = Some(id);
            while let Some(n) = at {
                self.nodes[n].files += 1;
                at = self.nodes[n].parent;
            }
        }
        id
    }

    /// Delete `id` with everything under it: files first, then the
    /// directories deepest first.
    fn remove(&mut self, id: usize, ops: &mut Vec<Op>) {
        let children = self.nodes[id].children.clone();
        for child in children {
            if self.nodes[child].alive {
                self.remove(child, ops);
            }
        }
        let node = &mut self.nodes[id];
        node.alive = false;
        if node.dir {
            ops.push(Op::RmDir(node.path.clone()));
        } else {
            ops.push(Op::Remove(node.path.clone()));
            let mut at = Some(id);
            while let Some(n) = at {
                self.nodes[n].files -= 1;
                at = self.nodes[n].parent;
            }
        }
    }
}

impl Plan for TreePlan {
    fn setup(&mut self) -> Vec<Op> {
        Vec::new()
    }

    fn fill(&mut self, budget: u64) -> Vec<Op> {
        let n = self.trees;
        self.trees += 1;
        let top = format!("t{n}");
        let mut ops = vec![Op::MkDir(top.clone())];
        let root = self.add(top.clone(), true, None, 0);
        let mut dirs: HashMap<String, usize> = HashMap::new();
        let mut spent = 0;
        let tree = generate(budget, self.seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        for entry in tree.entries {
            let rel = String::from_utf8_lossy(entry.path.as_bytes()).into_owned();
            let parent = rel.rsplit_once('/').map_or(root, |(p, _)| dirs[p]);
            let path = format!("{top}/{rel}");
            match entry.kind {
                EntryKind::Dir => {
                    let id = self.add(path.clone(), true, Some(parent), 0);
                    dirs.insert(rel, id);
                    ops.push(Op::MkDir(path));
                }
                EntryKind::File { len, .. } => {
                    let Some(size) = fit(len, spent, budget, self.block) else { break };
                    spent += allocated(size, self.block);
                    self.add(path.clone(), false, Some(parent), allocated(size, self.block));
                    ops.push(Op::Create { path, size });
                }
                EntryKind::Symlink(_) => {}
            }
        }
        ops
    }

    fn delete(&mut self, _round: u32) -> Vec<Op> {
        let live_files = self.nodes.iter().filter(|n| n.alive && !n.dir).count();
        let mut to_go = share_of(live_files, self.delete) as u64;
        let mut ops = Vec::new();
        while to_go > 0 && !self.live.is_empty() {
            let at = self.rng.below(self.live.len() as u64) as usize;
            let mut id = self.live[at];
            if !self.nodes[id].alive {
                self.live.swap_remove(at);
                continue;
            }
            // Too big to go whole: walk down to a random part that fits.
            while self.nodes[id].files > to_go {
                let kids: Vec<usize> =
                    self.nodes[id].children.iter().copied().filter(|&c| self.nodes[c].alive).collect();
                id = kids[self.rng.below(kids.len() as u64) as usize];
            }
            to_go -= self.nodes[id].files;
            self.remove(id, &mut ops);
        }
        ops
    }

    fn live_bytes(&self) -> u64 {
        self.nodes.iter().filter(|n| n.alive && !n.dir).map(|n| n.bytes).sum()
    }
}

/// `file:PATH`: sizes from weighted log-uniform buckets, each file given a
/// lifetime in rounds at birth, deleted when it runs out.
#[derive(Debug, Clone)]
pub struct ProfilePlan {
    profile: ProfileFile,
    rng: SplitMix,
    block: u64,
    round: u32,
    /// Live files: path, the round that deletes it (`None`: never) and
    /// allocated bytes.
    live: Vec<(String, Option<u32>, u64)>,
    next_id: u64,
}

impl ProfilePlan {
    /// A plan for a checked profile on a file system of `block`-byte blocks.
    pub fn new(profile: ProfileFile, block: u64) -> Self {
        let rng = SplitMix::new(profile.seed);
        ProfilePlan { profile, rng, block, round: 0, live: Vec::new(), next_id: 0 }
    }

    fn leaf(&self, mut index: u64) -> String {
        let d = self.profile.directories;
        let mut parts = Vec::new();
        for _ in 0..d.depth {
            parts.push(format!("d{}", index % u64::from(d.fanout)));
            index /= u64::from(d.fanout);
        }
        parts.join("/")
    }

    fn weighted<T: Clone>(rng: &mut SplitMix, items: &[T], weight: impl Fn(&T) -> u64) -> T {
        let total: u64 = items.iter().map(&weight).sum();
        let mut pick = rng.below(total);
        for item in items {
            if pick < weight(item) {
                return item.clone();
            }
            pick -= weight(item);
        }
        unreachable!("a pick below the total weight falls in some item")
    }
}

impl Plan for ProfilePlan {
    fn setup(&mut self) -> Vec<Op> {
        let d = self.profile.directories;
        let mut ops = Vec::new();
        let mut level = vec![String::new()];
        for _ in 0..d.depth {
            let mut next = Vec::new();
            for parent in &level {
                for i in 0..d.fanout {
                    let path = if parent.is_empty() { format!("d{i}") } else { format!("{parent}/d{i}") };
                    ops.push(Op::MkDir(path.clone()));
                    next.push(path);
                }
            }
            level = next;
        }
        ops
    }

    fn fill(&mut self, budget: u64) -> Vec<Op> {
        let mut ops = Vec::new();
        let mut spent = 0;
        let leaves = u64::from(self.profile.directories.fanout).pow(self.profile.directories.depth);
        loop {
            let bucket = Self::weighted(&mut self.rng, &self.profile.sizes, |b| b.weight);
            let drawn = log_uniform(&mut self.rng, (bucket.min, bucket.max));
            let Some(size) = fit(drawn, spent, budget, self.block) else { break };
            let life = Self::weighted(&mut self.rng, &self.profile.lifetimes, |l| l.weight).rounds;
            let leaf = self.rng.below(leaves);
            let dir = self.leaf(leaf);
            let name = format!("f{}", self.next_id);
            self.next_id += 1;
            let path = if dir.is_empty() { name } else { format!("{dir}/{name}") };
            spent += allocated(size, self.block);
            self.live.push((path.clone(), life.map(|l| self.round + l), allocated(size, self.block)));
            ops.push(Op::Create { path, size });
        }
        ops
    }

    fn delete(&mut self, round: u32) -> Vec<Op> {
        self.round = round;
        let (dead, live): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.live).into_iter().partition(|(_, death, _)| death.is_some_and(|d| d <= round));
        self.live = live;
        dead.into_iter().map(|(path, _, _)| Op::Remove(path)).collect()
    }

    fn live_bytes(&self) -> u64 {
        self.live.iter().map(|(_, _, bytes)| bytes).sum()
    }
}

/// `fill`'s filler files: 64 MiB each, the last cut to the budget.
#[derive(Debug, Clone, Default)]
pub struct FillerPlan {
    next_id: u64,
}

impl FillerPlan {
    /// Filler files numbered from `first` (after those a fill before made).
    pub fn new(first: u64) -> Self {
        FillerPlan { next_id: first }
    }
}

/// The size of each filler file.
pub const FILLER_BYTES: u64 = 64 << 20;

impl Plan for FillerPlan {
    fn setup(&mut self) -> Vec<Op> {
        Vec::new()
    }

    fn fill(&mut self, budget: u64) -> Vec<Op> {
        let mut ops = Vec::new();
        let mut spent = 0;
        while let Some(size) = fit(FILLER_BYTES, spent, budget, 4096) {
            spent += allocated(size, 4096);
            ops.push(Op::Create { path: format!("f{:06}", self.next_id), size });
            self.next_id += 1;
        }
        ops
    }

    fn delete(&mut self, _round: u32) -> Vec<Op> {
        Vec::new()
    }

    fn live_bytes(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole aging's operations for fixed budgets: what a plan does
    /// without any file system.
    fn script(plan: &mut dyn Plan) -> Vec<Op> {
        let mut ops = plan.setup();
        ops.extend(plan.fill(800 << 20));
        for round in 1..=3 {
            ops.extend(plan.delete(round));
            ops.extend(plan.fill(400 << 20));
        }
        ops
    }

    fn bytes_made(ops: &[Op]) -> u64 {
        ops.iter().map(|op| if let Op::Create { size, .. } = op { allocated(*size, 4096) } else { 0 }).sum()
    }

    #[test]
    fn churn_plans_are_the_same_for_a_seed_and_differ_for_another() {
        let a = script(&mut ChurnPlan::new(1, (4 << 10, 32 << 20), 0.5, 4096));
        let b = script(&mut ChurnPlan::new(1, (4 << 10, 32 << 20), 0.5, 4096));
        let c = script(&mut ChurnPlan::new(2, (4 << 10, 32 << 20), 0.5, 4096));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(bytes_made(&a), (800 << 20) + 3 * (400 << 20));
        let removed = a.iter().filter(|op| matches!(op, Op::Remove(_))).count();
        assert!(removed > 100, "{removed} removals");
        let mut plan = ChurnPlan::new(1, (4 << 10, 32 << 20), 0.5, 4096);
        let made = bytes_made(&plan.fill(300 << 20));
        assert_eq!(plan.live_bytes(), made);
        plan.delete(1);
        assert!(plan.live_bytes() < made);
    }

    #[test]
    fn churn_deletes_the_stated_share_by_count() {
        let mut plan = ChurnPlan::new(5, (4 << 10, 1 << 20), 0.25, 4096);
        plan.setup();
        let made = plan.fill(100 << 20).len();
        let deleted = plan.delete(1).len();
        assert_eq!(deleted, (made as f64 * 0.25).round() as usize);
        assert_eq!(plan.live.len(), made - deleted);
    }

    #[test]
    fn churn_sizes_are_log_uniform_in_the_range() {
        let mut rng = SplitMix::new(9);
        let sizes: Vec<u64> = (0..20_000).map(|_| log_uniform(&mut rng, (4 << 10, 32 << 20))).collect();
        assert!(sizes.iter().all(|s| (4 << 10..=32 << 20).contains(s)));
        // Log-uniform: as many below the geometric midpoint as above.
        let below = sizes.iter().filter(|&&s| s < 362 << 10).count() as f64 / sizes.len() as f64;
        assert!((0.47..0.53).contains(&below), "{below}");
    }

    #[test]
    fn tree_plans_are_the_same_for_a_seed_and_delete_whole_subtrees() {
        let a = script(&mut TreePlan::new(1, 0.5, 4096));
        assert_eq!(a, script(&mut TreePlan::new(1, 0.5, 4096)));
        assert_ne!(a, script(&mut TreePlan::new(2, 0.5, 4096)));
        assert!(a.iter().any(|op| matches!(op, Op::RmDir(_))), "some whole directories go");
        assert_eq!(bytes_made(&a), (800 << 20) + 3 * (400 << 20));
        let mut plan = TreePlan::new(3, 0.5, 4096);
        let made = plan.fill(64 << 20).iter().filter(|op| matches!(op, Op::Create { .. })).count();
        let gone = plan.delete(1).iter().filter(|op| matches!(op, Op::Remove(_))).count();
        assert_eq!(gone, (made as f64 * 0.5).round() as usize);
    }

    #[test]
    fn profile_plans_delete_files_when_their_lifetime_runs_out() {
        let text = include_str!("../../examples/age-profile.json");
        let profile = ProfileFile::parse(text).unwrap();
        let a = script(&mut ProfilePlan::new(profile.clone(), 4096));
        assert_eq!(a, script(&mut ProfilePlan::new(profile.clone(), 4096)));
        let mut plan = ProfilePlan::new(profile, 4096);
        assert_eq!(plan.setup().len(), 8 + 64);
        let made = plan.fill(200 << 20).len();
        let gone = plan.delete(1).len();
        // Half live one round.
        let share = gone as f64 / made as f64;
        assert!((0.35..0.65).contains(&share), "{share}");
        let forever = plan.live.iter().filter(|(_, d, _)| d.is_none()).count() as f64 / made as f64;
        assert!((0.1..0.3).contains(&forever), "{forever}");
    }

    #[test]
    fn filler_files_land_on_the_budget() {
        let ops = FillerPlan::default().fill((200 << 20) + 5000);
        assert_eq!(ops.len(), 4);
        assert_eq!(ops[3], Op::Create { path: "f000003".into(), size: (8 << 20) + 5000 });
        let ops = FillerPlan::new(4).fill(1);
        assert_eq!(ops, [Op::Create { path: "f000004".into(), size: 1 }]);
    }
}
