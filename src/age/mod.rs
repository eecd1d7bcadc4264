//! Aging: make a freshly made file system look lived-in before the work
//! runs on it (`--age`), and fill it (`--fill`).
//!
//! On fresh file systems every write method makes 1–3 extents and the
//! seeds that came from used file systems vanish; file-system research
//! calls the remedy aging (Smith & Seltzer 1997; Geriatrix, ATC 2018;
//! Conway et al., FAST 2017). fslab's profiles are built to be fast and
//! deterministic: the operations come from a seeded plan ([`plan`]) that
//! needs no file system, so the same spec makes the same operations in the
//! same order; the executor ([`run`]) only measures, after a syncfs, how
//! much each fill phase must write. `docs/DESIGN.md` ("Aging profiles")
//! states the profiles; [`describe_profiles`] is the same for
//! `fslab list --ages`.

mod git;
mod plan;
mod profile_file;
mod run;
mod spec;
mod writer;

use std::path::Path;

pub use spec::AgeSpec;

use crate::error::{Error, Result};
use plan::{ChurnPlan, FillerPlan, ProfilePlan, TreePlan};
use profile_file::ProfileFile;
use spec::Profile;
use writer::Writer;

/// Bumped whenever aging's output for the same spec could change; part of
/// the cache key.
pub const AGING_VERSION: u32 = 2;

/// What aging did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aged {
    /// Files (and symlinks) made.
    pub files_made: u64,
    /// Files deleted.
    pub files_deleted: u64,
    /// Bytes of file data written.
    pub bytes_written: u64,
    /// Rounds of delete + refill done (git: commits checked out).
    pub rounds: u32,
    /// e.g. free-frag: "target 0.30 reached after 6 rounds" or "not
    /// reached: 0.21 after 20 rounds"; git: "checked out 50 commits of
    /// REPO (first-parent, oldest first)".
    pub note: Option<String>,
}

/// Age the mounted, freshly made file system whose root directory is
/// `root` (fslab made it and mounted it; it is empty but for lost+found).
/// All aging files live under `root/age/`. Deterministic for a given spec:
/// same operations in the same order. Checks [`crate::interrupt::check`]
/// between files so Ctrl-C stops it (that error is returned). `progress`
/// gets short human lines ("round 2/4: filling to 80.0%").
pub fn age(root: &Path, spec: &AgeSpec, progress: &dyn Fn(&str)) -> Result<Aged> {
    // Input errors before anything is written.
    let profile_file = match &spec.profile {
        Profile::File(path) => Some(ProfileFile::load(path)?),
        _ => None,
    };
    let mut writer = Writer::open(root, "age")?;
    let (_, _, block) = writer.level()?;
    let never = &mut |_: &Writer| Ok(false);
    match &spec.profile {
        Profile::Churn(c) => {
            let mut plan = ChurnPlan::new(c.seed, c.sizes, c.delete, block);
            run::churn(&mut writer, &mut plan, c.fill, c.rounds, progress, never)
        }
        Profile::Tree(c) => {
            let mut plan = TreePlan::new(c.seed, c.delete, block);
            run::churn(&mut writer, &mut plan, c.fill, c.rounds, progress, never)
        }
        Profile::FreeFrag { churn: c, target, max_rounds } => {
            let mut plan = ChurnPlan::new(c.seed, c.sizes, c.delete, block);
            let mut value = 0.0;
            let mut aged = {
                let mut stop = |_: &Writer| {
                    value = small_free_share(root)?;
                    progress(&format!("free space in extents < 1 MiB: {value:.3} (target {target})"));
                    Ok(value >= *target)
                };
                run::churn(&mut writer, &mut plan, c.fill, *max_rounds, progress, &mut stop)?
            };
            let rounds = match aged.rounds {
                1 => "1 round".to_string(),
                n => format!("{n} rounds"),
            };
            aged.note = Some(if value >= *target {
                format!("target {target:.2} reached after {rounds}")
            } else {
                format!("not reached: {value:.2} after {rounds}")
            });
            Ok(aged)
        }
        Profile::File(_) => {
            let profile = profile_file.expect("loaded above");
            let (fill, rounds) = (profile.fill, profile.rounds);
            let mut plan = ProfilePlan::new(profile, block);
            run::churn(&mut writer, &mut plan, fill, rounds, progress, never)
        }
        Profile::Git { repo, commits } => git::age(&mut writer, repo, *commits, progress),
    }
}

/// The share of free space in extents shorter than 1 MiB (GETFSMAP; the
/// `free` headline, `fragmented_share`): what `free-frag` aims at. 0 when
/// nothing is free.
fn small_free_share(root: &Path) -> Result<f64> {
    let free = crate::layout::freespace::measure(root, false)?;
    Ok(free.fragmented_share.unwrap_or(0.0))
}

/// What fill did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filled {
    /// Filler files made.
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Fill level reached (see [`fill_level`]).
    pub level: f64,
}

/// Fill the file system at `root` to `fraction` (0 < fraction < 1) with
/// filler files under `root/fill/` (64 MiB each, the last cut to land on
/// the level), ending with syncfs. Already at or above the fraction, it
/// writes nothing and returns the level as it is.
pub fn fill(root: &Path, fraction: f64, progress: &dyn Fn(&str)) -> Result<Filled> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(Error::usage(format!("--fill {fraction}: give a level between 0% and 100%, for example 80%")));
    }
    let level = fill_level(root)?;
    if level >= fraction {
        return Ok(Filled { files: 0, bytes: 0, level });
    }
    progress(&format!("filling to {}", run::pct(fraction)));
    let mut writer = Writer::open(root, "fill")?;
    // A second fill goes on numbering after the first one's files.
    let made_before = std::fs::read_dir(writer.path()).map_or(0, |d| d.count() as u64);
    let mut done = Aged::default();
    let level = run::fill_to(&mut writer, &mut FillerPlan::new(made_before), fraction, &mut done)?;
    Ok(Filled { files: done.files_made, bytes: done.bytes_written, level })
}

/// The file system's fill level: (f_blocks - f_bfree) / f_blocks from
/// statfs (metadata counts as used; root-reserved blocks count as free;
/// on btrfs `f_bavail` stands for `f_bfree`, see [`writer::level_of`]).
pub fn fill_level(root: &Path) -> Result<f64> {
    let fd = rustix::fs::open(root, rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC, rustix::fs::Mode::empty())
        .map_err(|e| Error::io(root, "open", e.into()))?;
    writer::level_of(&fd).map(|(level, _, _)| level).map_err(|e| Error::io(root, "statvfs", e))
}

/// The text `fslab list --ages` prints: each built-in profile, what it
/// does, each parameter with its default and meaning, and the file: and
/// git: forms with the profile file's format.
pub fn describe_profiles() -> String {
    PROFILES_TEXT.to_string()
}

const PROFILES_TEXT: &str = "\
Aging profiles (--age PROFILE[:key=value,...]); all files go under age/ on the target.
Every profile is deterministic: the same spec makes the same operations in the same order.
The first fill measures its way to the fill level; a round is: delete, then make new files
of as many bytes as the deleted ones held (so the level stays), with a syncfs after every
fill so the deleted files had blocks. Shares are written 80% or 0.8; sizes with K, M, G.

churn       Fill with files of log-uniform size, then rounds of: delete a random share of
            the live files (by count), refill. Files spread over 64 directories (8 x 8).
              fill=80%        the level the first fill reaches (statvfs: metadata counts as used)
              rounds=4        rounds of delete + refill after the first fill
              delete=50%      share of live files each round deletes, by count
              seed=1          seed of every random choice
              sizes=4K..32M   file sizes, log-uniform in MIN..MAX
tree        The same with the tree-copy generator's source-like files (median 6 KB) in
            directories, a new tree per fill; each round deletes whole random subtrees and
            files until the delete share of the live files is gone.
              fill=80%  rounds=4  delete=50%  seed=1   (as for churn)
free-frag   churn rounds until the share of free space in free extents shorter than 1 MiB
            (GETFSMAP) reaches target; says whether it was reached, and the value.
              target=0.3      the share to reach (0 to 1)
              max-rounds=20   give up after this many rounds
              fill=80%  delete=50%  seed=1  sizes=4K..32M   (as for churn)
file:PATH   A JSON profile (unknown fields are refused):
              {\"fill\": \"80%\", \"rounds\": 6, \"seed\": 1,
               \"sizes\": [{\"min\": \"4K\", \"max\": \"64K\", \"weight\": 60},
                         {\"min\": \"64K\", \"max\": \"4M\", \"weight\": 35},
                         {\"min\": \"4M\", \"max\": \"64M\", \"weight\": 5}],
               \"lifetimes\": [{\"rounds\": 1, \"weight\": 50}, {\"rounds\": 3, \"weight\": 30},
                             {\"rounds\": \"forever\", \"weight\": 20}],
               \"directories\": {\"depth\": 2, \"fanout\": 8}}
            sizes (required): buckets picked by weight, size log-uniform in min..max.
            lifetimes (required): rounds a file lives, by weight (\"forever\": never deleted);
            a file made in round r is deleted at the start of round r + rounds.
            fill (80%), rounds (4), seed (1), directories (depth 2, fanout 8): files go into
            one of fanout^depth leaf directories at random. Example: examples/age-profile.json.
            The file must be a regular file owned by root or you.
git:REPO[:N] Check out N (default 50) successive first-parent commits of REPO's HEAD onto
            age/tree, oldest first: the first whole, then each commit's diff (deleted files
            unlinked, changed files unlinked and made anew). git runs only plumbing commands,
            as the repository's owner (nobody for root's), and fetches nothing: every object
            the commits need must be there. fslab writes the files itself, never through a
            symlink. Symlinks are made as symlinks; submodules are skipped.
";
