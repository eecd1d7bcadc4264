//! `--age PROFILE[:k=v,...]`: the profile's name and parameters, parsed
//! and checked without the host ([`AgeSpec::from_str`]), written back in
//! one canonical form ([`AgeSpec::canonical`]) and, where the profile
//! reads an input (a profile file, a git repository), resolved against
//! the host into the identity the aged-image cache is keyed by
//! ([`AgeSpec::resolve`]).

use std::path::PathBuf;
use std::str::FromStr;

use super::git;
use super::profile_file::ProfileFile;
use crate::error::{Result, did_you_mean};

/// Commits `git:REPO` checks out when no `:N` is given.
pub const GIT_DEFAULT_COMMITS: u32 = 50;

/// The parameters of the churn-like profiles (`churn`, `tree`, and
/// `free-frag`'s rounds).
#[derive(Debug, Clone, PartialEq)]
pub struct Churn {
    /// The fill level each fill phase reaches (0 < fill < 1).
    pub fill: f64,
    /// Rounds of delete + refill after the first fill.
    pub rounds: u32,
    /// The share of live files each round deletes (by count).
    pub delete: f64,
    /// The seed of every random choice.
    pub seed: u64,
    /// The range file sizes are drawn from, log-uniform (churn only).
    pub sizes: (u64, u64),
}

impl Default for Churn {
    fn default() -> Self {
        Churn { fill: 0.8, rounds: 4, delete: 0.5, seed: 1, sizes: (4 << 10, 32 << 20) }
    }
}

/// Which profile, with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Profile {
    /// Fill, then rounds of delete-a-share + refill, log-uniform sizes.
    Churn(Churn),
    /// The same with the tree-copy generator's files and directories.
    Tree(Churn),
    /// Churn rounds until the free space is fragmented enough.
    FreeFrag {
        /// The rounds' parameters (`rounds` unused).
        churn: Churn,
        /// Stop when the share of free space in extents < 1 MiB reaches this.
        target: f64,
        /// Give up after this many rounds.
        max_rounds: u32,
    },
    /// A profile file (JSON, [`ProfileFile`]).
    File(PathBuf),
    /// Successive first-parent commits of a git repository.
    Git {
        /// The repository (its work tree, or a bare repository).
        repo: PathBuf,
        /// How many commits.
        commits: u32,
    },
}

/// A parsed `--age` value: what the aging engine runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgeSpec {
    pub(super) profile: Profile,
}

const CHURN_KEYS: &[&str] = &["delete", "fill", "rounds", "seed", "sizes"];
const TREE_KEYS: &[&str] = &["delete", "fill", "rounds", "seed"];
const FREE_FRAG_KEYS: &[&str] = &["delete", "fill", "max-rounds", "seed", "sizes", "target"];
/// The profile names, as an error lists them.
pub const PROFILE_NAMES: &[&str] = &["churn", "tree", "free-frag", "file", "git"];

impl FromStr for AgeSpec {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let (name, rest) = match text.split_once(':') {
            Some((name, rest)) => (name, Some(rest)),
            None => (text, None),
        };
        let profile = match name {
            "churn" => Profile::Churn(churn_params("churn", rest, CHURN_KEYS)?.0),
            "tree" => Profile::Tree(churn_params("tree", rest, TREE_KEYS)?.0),
            "free-frag" => {
                let (churn, extra) = churn_params("free-frag", rest, FREE_FRAG_KEYS)?;
                let target = match extra.iter().find(|(k, _)| k == "target") {
                    Some((_, v)) => fraction("target", v)?,
                    None => 0.3,
                };
                let max_rounds = match extra.iter().find(|(k, _)| k == "max-rounds") {
                    Some((_, v)) => count("max-rounds", v, 1, 1000)?,
                    None => 20,
                };
                Profile::FreeFrag { churn: Churn { rounds: 0, ..churn }, target, max_rounds }
            }
            "file" => Profile::File(absolute(rest, "file:PATH (a JSON profile, see `fslab list --ages`)")?),
            "git" => {
                let rest = rest.unwrap_or("");
                let (path, commits) = match rest.rsplit_once(':') {
                    Some((path, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                        (path, count("git commits", n, 1, 100_000)?)
                    }
                    _ => (rest, GIT_DEFAULT_COMMITS),
                };
                Profile::Git { repo: absolute(Some(path), "git:REPO[:N]")?, commits }
            }
            other => {
                return Err(format!(
                    "unknown aging profile `{other}`{}; profiles: churn, tree, free-frag, file:PATH, git:REPO[:N] (`fslab list --ages` describes them)",
                    did_you_mean(other, PROFILE_NAMES)
                ));
            }
        };
        Ok(AgeSpec { profile })
    }
}

impl AgeSpec {
    /// The level aging leaves the file system at, when the profile has one
    /// on the command line (`churn`, `tree`, `free-frag`); `None` for a
    /// profile file (its level is read when the file is) and `git:`, whose
    /// level is the repository's size. fslab sizes images by it.
    pub fn fill_fraction(&self) -> Option<f64> {
        match &self.profile {
            Profile::Churn(c) | Profile::Tree(c) | Profile::FreeFrag { churn: c, .. } => Some(c.fill),
            Profile::File(_) | Profile::Git { .. } => None,
        }
    }

    /// Profile name + every parameter with its default filled in, keys
    /// sorted: "churn:delete=50%,fill=80%,rounds=4,seed=1,sizes=4K..32M".
    /// Shown in records/tables, and the start of the cache key, so two
    /// spellings of the same aging are one entry.
    pub fn canonical(&self) -> String {
        match &self.profile {
            Profile::Churn(c) => format!(
                "churn:delete={},fill={},rounds={},seed={},sizes={}",
                percent(c.delete),
                percent(c.fill),
                c.rounds,
                c.seed,
                size_range(c.sizes)
            ),
            Profile::Tree(c) => {
                format!("tree:delete={},fill={},rounds={},seed={}", percent(c.delete), percent(c.fill), c.rounds, c.seed)
            }
            Profile::FreeFrag { churn: c, target, max_rounds } => format!(
                "free-frag:delete={},fill={},max-rounds={max_rounds},seed={},sizes={},target={}",
                percent(c.delete),
                percent(c.fill),
                c.seed,
                size_range(c.sizes),
                decimal(*target)
            ),
            Profile::File(path) => format!("file:{}", path.display()),
            Profile::Git { repo, commits } => format!("git:{}:{commits}", repo.display()),
        }
    }

    /// The same profile with its seed moved on by `offset` (the image
    /// `offset` of several aged independently, `--age-images`); `None` for
    /// a profile whose result no seed decides (`file:`, whose seed is in
    /// the file, and `git:`).
    pub fn with_seed_offset(&self, offset: u64) -> Option<AgeSpec> {
        let mut spec = self.clone();
        match &mut spec.profile {
            Profile::Churn(c) | Profile::Tree(c) | Profile::FreeFrag { churn: c, .. } => {
                c.seed = c.seed.wrapping_add(offset);
                Some(spec)
            }
            Profile::File(_) | Profile::Git { .. } => None,
        }
    }

    /// Checks that need the host (file: exists, regular, owned by root or
    /// the user, parses; git: a repository with enough first-parent
    /// commits) and returns the identity for the cache key: canonical()
    /// plus what the input's content is (the profile as parsed, in compact
    /// JSON; the N commit ids for git), so a changed input is a new key.
    /// Errors are usage errors (exit 2).
    pub fn resolve(&self) -> Result<String> {
        match &self.profile {
            Profile::File(path) => {
                let profile = ProfileFile::load(path)?;
                Ok(format!("{}#{}", self.canonical(), profile.identity()))
            }
            Profile::Git { repo, commits } => {
                let repo = git::Repo::locate(repo)?;
                let ids = repo.first_parent_commits(*commits)?;
                Ok(format!("{}#{}", self.canonical(), ids.join(",")))
            }
            _ => Ok(self.canonical()),
        }
    }
}

/// Parse churn-like `k=v,...` pairs allowed by `keys`: the churn
/// parameters, and the others (unparsed) for the caller.
fn churn_params(
    profile: &str,
    rest: Option<&str>,
    keys: &[&str],
) -> std::result::Result<(Churn, Vec<(String, String)>), String> {
    let mut churn = Churn::default();
    let mut extra = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for pair in rest.unwrap_or("").split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("`{pair}` in --age {profile}: parameters are key=value (keys: {})", keys.join(", ")));
        };
        let (key, value) = (key.trim(), value.trim());
        if !keys.contains(&key) {
            return Err(format!(
                "unknown parameter `{key}` for aging profile {profile}{}; its keys: {}",
                did_you_mean(key, keys),
                keys.join(", ")
            ));
        }
        if seen.contains(&key) {
            return Err(format!("--age {profile}: `{key}` is given twice"));
        }
        seen.push(key);
        match key {
            "fill" => {
                churn.fill = fraction("fill", value)?;
                if churn.fill > 0.99 {
                    return Err(format!("fill={value}: at most 99% (the file system needs room to age in)"));
                }
            }
            "delete" => churn.delete = fraction_up_to_one("delete", value)?,
            "rounds" => churn.rounds = count("rounds", value, 0, 1000)?,
            "seed" => churn.seed = value.parse().map_err(|_| format!("seed={value}: not a whole number (0 to 2^64-1)"))?,
            "sizes" => churn.sizes = parse_size_range(value)?,
            _ => extra.push((key.to_string(), value.to_string())),
        }
    }
    Ok((churn, extra))
}

/// A share written `80%` or `0.8`, strictly between 0 and 1.
pub(super) fn fraction(name: &str, text: &str) -> std::result::Result<f64, String> {
    let value = share(name, text)?;
    if value <= 0.0 || value >= 1.0 {
        return Err(format!("{name}={text}: must lie strictly between 0% and 100% (for example 80% or 0.8)"));
    }
    Ok(value)
}

/// A share written `50%` or `0.5`, above 0 and at most 1.
fn fraction_up_to_one(name: &str, text: &str) -> std::result::Result<f64, String> {
    let value = share(name, text)?;
    if value <= 0.0 || value > 1.0 {
        return Err(format!("{name}={text}: must be above 0% and at most 100% (for example 50% or 0.5)"));
    }
    Ok(value)
}

fn share(name: &str, text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v * scale),
        _ => Err(format!("{name}={text}: not a share (write 80% or 0.8)")),
    }
}

fn count(name: &str, text: &str, min: u32, max: u32) -> std::result::Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("{name}={text}: must be a whole number from {min} to {max}")),
    }
}

/// `MIN..MAX` in bytes with units (`4K..32M`), 1 byte ≤ MIN ≤ MAX ≤ 1 TiB.
pub(super) fn parse_size_range(text: &str) -> std::result::Result<(u64, u64), String> {
    let Some((lo, hi)) = text.split_once("..") else {
        return Err(format!("sizes={text}: write a range MIN..MAX, for example 4K..32M"));
    };
    let lo = crate::units::parse_bytes(lo).map_err(|e| format!("sizes={text}: {e}"))?;
    let hi = crate::units::parse_bytes(hi).map_err(|e| format!("sizes={text}: {e}"))?;
    if lo == 0 || lo > hi || hi > 1 << 40 {
        return Err(format!("sizes={text}: need 1 ≤ MIN ≤ MAX ≤ 1T (for example 4K..32M)"));
    }
    Ok((lo, hi))
}

fn absolute(rest: Option<&str>, form: &str) -> std::result::Result<PathBuf, String> {
    match rest {
        Some(p) if !p.is_empty() => {
            std::path::absolute(p).map_err(|e| format!("{p}: cannot make the path absolute: {e}"))
        }
        _ => Err(format!("this profile needs a path: {form}")),
    }
}

/// `0.8` as `80%`, at most four decimals, no trailing zeros.
fn percent(value: f64) -> String {
    format!("{}%", decimal(value * 100.0))
}

fn decimal(value: f64) -> String {
    let text = format!("{value:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `(4096, 33554432)` as `4K..32M`.
fn size_range((lo, hi): (u64, u64)) -> String {
    format!("{}..{}", size(lo), size(hi))
}

fn size(bytes: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<AgeSpec, String> {
        text.parse()
    }

    #[test]
    fn defaults_fill_in_and_keys_come_sorted() {
        assert_eq!(parse("churn").unwrap().canonical(), "churn:delete=50%,fill=80%,rounds=4,seed=1,sizes=4K..32M");
        let third = parse("churn:seed=7").unwrap().with_seed_offset(2).unwrap();
        assert_eq!(third.canonical(), "churn:delete=50%,fill=80%,rounds=4,seed=9,sizes=4K..32M");
        assert!(parse("git:/nonexistent").unwrap().with_seed_offset(1).is_none());
        assert_eq!(
            parse("churn:sizes=8K..1G,seed=7,rounds=2,delete=0.25,fill=0.755").unwrap().canonical(),
            "churn:delete=25%,fill=75.5%,rounds=2,seed=7,sizes=8K..1G"
        );
        assert_eq!(parse("tree:fill=70%").unwrap().canonical(), "tree:delete=50%,fill=70%,rounds=4,seed=1");
        assert_eq!(
            parse("free-frag:target=0.3").unwrap().canonical(),
            "free-frag:delete=50%,fill=80%,max-rounds=20,seed=1,sizes=4K..32M,target=0.3"
        );
        assert_eq!(parse("git:/x/repo").unwrap().canonical(), "git:/x/repo:50");
        assert_eq!(parse("git:/x/repo:10").unwrap().canonical(), "git:/x/repo:10");
        assert_eq!(parse("file:/p/profile.json").unwrap().canonical(), "file:/p/profile.json");
        // Two spellings of one aging are one canonical form.
        assert_eq!(parse("churn:fill=80%").unwrap(), parse("churn:fill=0.8,seed=1").unwrap());
    }

    #[test]
    fn wrong_input_says_what_is_wrong_and_what_is_allowed() {
        let e = parse("churn:fil=80%").unwrap_err();
        assert!(e.contains("unknown parameter `fil`") && e.contains("did you mean `fill`") && e.contains("sizes"), "{e}");
        let e = parse("tree:sizes=4K..8K").unwrap_err();
        assert!(e.contains("`sizes`") && e.contains("delete, fill, rounds, seed"), "{e}");
        let e = parse("churn:sizes=32M..4K").unwrap_err();
        assert!(e.contains("MIN ≤ MAX"), "{e}");
        for bad in ["churn:fill=100%", "churn:fill=1.5", "churn:fill=0", "churn:fill=99.5%"] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("fill="), "{bad}: {e}");
        }
        assert!(parse("churn:fill=x").unwrap_err().contains("not a share"));
        assert!(parse("churn:rounds=-1").unwrap_err().contains("whole number"));
        assert!(parse("churn:fill=80%,fill=70%").unwrap_err().contains("twice"));
        assert!(parse("churn:fill").unwrap_err().contains("key=value"));
        let e = parse("chrun").unwrap_err();
        assert!(e.contains("did you mean `churn`") && e.contains("git:REPO"), "{e}");
        assert!(parse("file:").unwrap_err().contains("needs a path"));
        assert!(parse("git:/r:0").unwrap_err().contains("git commits"));
    }

    #[test]
    fn resolve_of_a_built_in_profile_is_its_canonical_form() {
        let spec = parse("churn:seed=3").unwrap();
        assert_eq!(spec.resolve().unwrap(), spec.canonical());
    }
}
