//! The synthetic source tree: shaped like a checkout of `/usr/src`, made
//! from a seeded PRNG, the same bytes for the same size and seed on every
//! machine (integer arithmetic only: no floating point, no libm).
//!
//! The distribution, all in the constants below:
//! - File sizes: a log-normal with median 6,000 bytes and σ = 1.2 (natural
//!   log), given as its quantiles ([`SIZE_QUANTILES`]) and interpolated
//!   linearly between them: 1% of files under 368 bytes, half under 6 KB,
//!   90% under 28 KB, 99% under 98 KB, a tail to 1 MiB. Mean about 12 KB,
//!   so 400 MB is about 35,000 files, as a large part of /usr/src was.
//! - Directories: each is given a byte budget. One whose budget is at most
//!   [`LEAF_BYTES`], or that is [`MAX_DEPTH`] deep, holds it all as files.
//!   Any other holds 1 to [`MAX_FILES`] files (uniform) and shares the rest
//!   among one subdirectory per [`SUBTREE_BYTES`] (at least 2, at most
//!   [`MAX_SUBDIRS`]), in random shares of 1 to 4 parts each. That gives
//!   a median of 12 files per directory (at most about 35), and depth that
//!   grows with the tree: 64 MiB (the small default) is 6,000 files in 490
//!   directories, 400 MiB 35,000 files in 3,000 directories down to 7
//!   levels.
//! - Order (tar's, as a directory listing hands it out): a directory's
//!   files and subdirectories interleaved at random, each subdirectory's
//!   whole subtree at its place.
//! - Names: C-source-like stems and extensions with the entry's position
//!   appended, so names in a directory never collide.
//! - Contents: every file is a window of one [`POOL_BYTES`] pool of
//!   C-like text lines, at a seeded offset. The copy writes straight from
//!   the pool, as tar x writes from its buffer: nothing per file is
//!   allocated or generated in the measured loop.

use std::ffi::CString;

use super::{Entry, EntryKind};

/// Quantiles of the file-size distribution: (parts per million, bytes).
/// Between two, sizes are interpolated linearly; the first and last rows
/// clip the log-normal's tails at 40 bytes and 1 MiB.
pub const SIZE_QUANTILES: [(u64, u64); 17] = [
    (0, 40),
    (1_000, 147),
    (10_000, 368),
    (50_000, 834),
    (100_000, 1_289),
    (200_000, 2_185),
    (300_000, 3_198),
    (400_000, 4_427),
    (500_000, 6_000),
    (600_000, 8_132),
    (700_000, 11_258),
    (800_000, 16_473),
    (900_000, 27_928),
    (950_000, 43_189),
    (990_000, 97_844),
    (999_000, 244_701),
    (1_000_000, 1 << 20),
];

/// The largest file (the last quantile).
pub const MAX_FILE_BYTES: u64 = SIZE_QUANTILES[SIZE_QUANTILES.len() - 1].1;
/// The text every file's contents are cut from.
pub const POOL_BYTES: usize = 4 << 20;
// Every file is one window of the pool.
const _: () = assert!(MAX_FILE_BYTES <= POOL_BYTES as u64);
/// A directory with at most this much to hold holds it all as files.
pub const LEAF_BYTES: u64 = 256 << 10;
/// Roughly how much each subdirectory of an inner directory is given.
pub const SUBTREE_BYTES: u64 = 512 << 10;
/// The most subdirectories one directory has.
pub const MAX_SUBDIRS: u64 = 8;
/// The most files an inner directory holds before its subdirectories.
pub const MAX_FILES: u64 = 24;
/// The deepest a directory is below the tree's root (depth 0).
pub const MAX_DEPTH: u32 = 8;

const DIR_WORDS: [&str; 24] = [
    "lib", "sys", "kern", "net", "dev", "fs", "bin", "sbin", "include", "contrib", "usr.bin", "share", "tools",
    "tests", "arch", "crypto", "compat", "libc", "gen", "stdio", "string", "locale", "rpc", "vm",
];
const FILE_STEMS: [&str; 24] = [
    "main", "vfs_bio", "ffs_alloc", "ext2_alloc", "if_ether", "uipc_mbuf", "subr_prf", "kern_exec", "malloc",
    "printf", "parse", "util", "inode", "lookup", "namei", "queue", "table", "hash", "buf", "conf", "init",
    "socket", "signal", "proc",
];
/// Extensions, weighted by repetition: mostly C and headers.
const EXTENSIONS: [&str; 16] =
    [".c", ".c", ".c", ".c", ".c", ".c", ".h", ".h", ".h", ".h", ".S", ".mk", ".1", ".txt", ".sh", ".py"];
/// Tokens of the text pool.
const TOKENS: [&str; 40] = [
    "int", "static", "void", "struct", "return", "if", "else", "for", "while", "const", "char", "unsigned",
    "long", "sizeof", "NULL", "error", "buf", "len", "i", "p", "flags", "mode", "count", "offset", "inode",
    "block", "vp", "bp", "0", "1", "=", "==", "!=", "+", "->", "(", ")", "&&", "case", "goto",
];
const LINE_ENDS: [&str; 6] = [";", ";", " {", "}", ",", ""];

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and good enough to
/// shape a tree.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below
    /// 2^-40 for the small `n` used here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len() as u64) as usize]
    }
}

/// A file size drawn from [`SIZE_QUANTILES`].
pub fn file_size(rng: &mut SplitMix) -> u64 {
    let p = rng.below(1_000_000);
    let i = SIZE_QUANTILES.partition_point(|&(q, _)| q <= p) - 1;
    let ((p0, s0), (p1, s1)) = (SIZE_QUANTILES[i], SIZE_QUANTILES[i + 1]);
    s0 + (s1 - s0) * (p - p0) / (p1 - p0)
}

/// A generated tree: its entries in tar order and the text its files are
/// cut from.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Directories and files, paths relative to the tree's root.
    pub entries: Vec<Entry>,
    /// The text pool; a file's bytes are `pool[offset..offset + len]`.
    pub pool: Vec<u8>,
}

/// The tree of exactly `total_bytes` for `seed`.
pub fn generate(total_bytes: u64, seed: u64) -> Tree {
    // Separate streams, so the pool never shifts the tree's shape.
    let pool = text_pool(&mut SplitMix::new(seed ^ 0x7465_7874_706f_6f6c));
    let mut maker = Maker { rng: SplitMix::new(seed), entries: Vec::new() };
    maker.directory(String::new(), 0, total_bytes);
    Tree { entries: maker.entries, pool }
}

struct Maker {
    rng: SplitMix,
    entries: Vec<Entry>,
}

impl Maker {
    /// The contents of the directory `prefix` (its own entry is already
    /// out), holding `budget` bytes in all.
    fn directory(&mut self, prefix: String, depth: u32, mut budget: u64) {
        let leaf = budget <= LEAF_BYTES || depth == MAX_DEPTH;
        let wanted = if leaf { u64::MAX } else { self.rng.between(1, MAX_FILES) };
        let mut files = Vec::new();
        while budget > 0 && (files.len() as u64) < wanted {
            let len = file_size(&mut self.rng).min(budget);
            budget -= len;
            files.push(len);
        }
        let subdirs = if budget == 0 { Vec::new() } else { self.shares(budget) };
        let (mut f, mut d) = (0, 0);
        while f < files.len() || d < subdirs.len() {
            let left = (files.len() - f + subdirs.len() - d) as u64;
            let position = f + d;
            if self.rng.below(left) < (files.len() - f) as u64 {
                let name = format!("{}{position}{}", self.rng.pick(&FILE_STEMS), self.rng.pick(&EXTENSIONS));
                let len = files[f];
                let offset = self.rng.below(POOL_BYTES as u64 - len + 1) as usize;
                self.push(&prefix, &name, EntryKind::File { len, offset });
                f += 1;
            } else {
                let name = format!("{}{position}", self.rng.pick(&DIR_WORDS));
                let path = self.push(&prefix, &name, EntryKind::Dir);
                self.directory(path, depth + 1, subdirs[d]);
                d += 1;
            }
        }
    }

    /// `budget` split among about one subdirectory per [`SUBTREE_BYTES`],
    /// in shares of 1 to 4 parts.
    fn shares(&mut self, budget: u64) -> Vec<u64> {
        let n = budget.div_ceil(SUBTREE_BYTES).clamp(2, MAX_SUBDIRS);
        let parts: Vec<u64> = (0..n).map(|_| self.rng.between(1, 4)).collect();
        let total: u64 = parts.iter().sum();
        let mut shares: Vec<u64> = parts.iter().map(|p| budget / total * p).collect();
        shares[0] += budget - shares.iter().sum::<u64>();
        shares
    }

    /// Add the entry `prefix/name`; its path, for its own entries.
    fn push(&mut self, prefix: &str, name: &str, kind: EntryKind) -> String {
        let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}/{name}") };
        let c = CString::new(path.as_bytes()).expect("generated names have no NUL");
        self.entries.push(Entry { path: c, kind });
        path
    }
}

/// [`POOL_BYTES`] of C-like lines: tab indents, tokens, a line end.
fn text_pool(rng: &mut SplitMix) -> Vec<u8> {
    let mut pool = Vec::with_capacity(POOL_BYTES + 256);
    while pool.len() < POOL_BYTES {
        let indent = rng.below(4) as usize;
        pool.extend(std::iter::repeat_n(b'\t', indent));
        if rng.below(8) == 0 {
            pool.extend_from_slice(b" * ");
        }
        for i in 0..rng.below(10) {
            if i > 0 {
                pool.push(b' ');
            }
            pool.extend_from_slice(rng.pick(&TOKENS).as_bytes());
        }
        pool.extend_from_slice(rng.pick(&LINE_ENDS).as_bytes());
        pool.push(b'\n');
    }
    pool.truncate(POOL_BYTES);
    pool
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a, 64 bits: a fingerprint to pin generated bytes with.
    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    }

    fn stats(tree: &Tree) -> (u64, u64, u64, Vec<u64>, u32) {
        let (mut files, mut dirs, mut bytes, mut sizes, mut depth) = (0, 0, 0, Vec::new(), 0);
        for e in &tree.entries {
            let d = e.path.as_bytes().iter().filter(|&&b| b == b'/').count() as u32;
            match e.kind {
                EntryKind::File { len, offset } => {
                    files += 1;
                    bytes += len;
                    sizes.push(len);
                    assert!(offset + len as usize <= tree.pool.len());
                }
                EntryKind::Dir => {
                    dirs += 1;
                    depth = depth.max(d + 1);
                }
                EntryKind::Symlink(_) => unreachable!(),
            }
        }
        sizes.sort_unstable();
        (files, dirs, bytes, sizes, depth)
    }

    #[test]
    fn the_same_size_and_seed_give_the_same_tree_byte_for_byte() {
        let (a, b) = (generate(8 << 20, 1), generate(8 << 20, 1));
        assert_eq!(a.pool, b.pool);
        assert_eq!(a.entries, b.entries);
        let c = generate(8 << 20, 2);
        assert_ne!(a.entries, c.entries);
        // Pinned: a change to the generator changes every measured tree,
        // so it must be deliberate.
        let (files, dirs, bytes, _, _) = stats(&a);
        assert_eq!((files, dirs, bytes), (780, 61, 8 << 20));
        assert_eq!(&a.pool[..24], b"\tbp struct offset i ( bl");
        let mut described = Vec::new();
        for e in &a.entries {
            described.extend_from_slice(e.path.as_bytes());
            if let EntryKind::File { len, offset } = e.kind {
                described.extend_from_slice(format!(" {len} {offset}\n").as_bytes());
            }
        }
        assert_eq!((fnv1a(&a.pool), fnv1a(&described)), (2_856_796_879_811_959_885, 6_076_709_525_438_650_274));
    }

    #[test]
    fn the_tree_holds_exactly_its_size() {
        for size in [1, 40, 5000, 1 << 20, 3 << 20] {
            let (_, _, bytes, sizes, _) = stats(&generate(size, 7));
            assert_eq!(bytes, size);
            assert!(sizes.iter().all(|&s| s > 0));
        }
    }

    #[test]
    fn sizes_and_shape_follow_the_stated_distribution() {
        let tree = generate(40 << 20, 1);
        let (files, dirs, bytes, sizes, depth) = stats(&tree);
        assert_eq!(bytes, 40 << 20);
        let median = sizes[sizes.len() / 2];
        assert!((4_000..=8_000).contains(&median), "median {median}");
        let mean = bytes / files;
        assert!((9_000..=16_000).contains(&mean), "mean {mean}");
        let share_under = |n: u64| sizes.partition_point(|&s| s < n) as f64 / files as f64;
        assert!((0.85..0.95).contains(&share_under(27_928)), "{}", share_under(27_928));
        assert!((0.97..=1.0).contains(&share_under(100_000)));
        assert!(*sizes.last().unwrap() <= MAX_FILE_BYTES);
        let per_dir = files as f64 / (dirs + 1) as f64;
        assert!((6.0..20.0).contains(&per_dir), "{files} files in {dirs} directories");
        assert!((3..=MAX_DEPTH + 1).contains(&depth), "depth {depth}");
    }

    #[test]
    fn file_sizes_hit_the_quantiles() {
        let mut rng = SplitMix::new(3);
        let mut sizes: Vec<u64> = (0..100_000).map(|_| file_size(&mut rng)).collect();
        sizes.sort_unstable();
        for &(ppm, bytes) in &SIZE_QUANTILES[2..SIZE_QUANTILES.len() - 2] {
            let at = sizes[(ppm as usize / 10).min(sizes.len() - 1)];
            assert!(at.abs_diff(bytes) * 10 <= bytes, "quantile {ppm} ppm: {at}, want {bytes}");
        }
    }

    #[test]
    fn the_pool_is_text() {
        let tree = generate(1 << 20, 1);
        assert_eq!(tree.pool.len(), POOL_BYTES);
        assert!(tree.pool.iter().all(|&b| b == b'\n' || b == b'\t' || (b' '..=b'~').contains(&b)));
        let lines = tree.pool.iter().filter(|&&b| b == b'\n').count();
        assert!(lines > POOL_BYTES / 80, "{lines} lines");
    }
}
