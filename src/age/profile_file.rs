//! `--age file:PATH`: an aging profile the user writes, in JSON.
//!
//! ```json
//! {
//!   "fill": "80%",
//!   "rounds": 6,
//!   "seed": 1,
//!   "sizes": [
//!     { "min": "4K", "max": "64K", "weight": 60 },
//!     { "min": "64K", "max": "4M", "weight": 35 },
//!     { "min": "4M", "max": "64M", "weight": 5 }
//!   ],
//!   "lifetimes": [
//!     { "rounds": 1, "weight": 50 },
//!     { "rounds": 3, "weight": 30 },
//!     { "rounds": "forever", "weight": 20 }
//!   ],
//!   "directories": { "depth": 2, "fanout": 8 }
//! }
//! ```
//!
//! - `sizes` (required): buckets; a file picks one by weight, then a size
//!   log-uniform in `min..=max` (bytes, or `"4K"`-style strings).
//! - `lifetimes` (required): how many rounds a file lives, by weight; a
//!   file made in round r is deleted at the start of round r + rounds;
//!   `"forever"` files are never deleted.
//! - `fill` (default 80%), `rounds` (4), `seed` (1): as for `churn`.
//! - `directories` (default depth 2, fanout 8): files go into one of
//!   fanout^depth leaf directories, picked at random.
//!
//! Unknown fields are refused, so a misspelt field is not silently a
//! default.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::spec::{fraction, parse_size_range};
use crate::error::{Error, Result};

/// The largest profile file read (a profile is a few hundred bytes).
const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// A number, or a string with a unit or a percent sign.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum NumberOrText {
    Number(f64),
    Text(String),
}

impl NumberOrText {
    fn text(&self) -> String {
        match self {
            NumberOrText::Number(n) => n.to_string(),
            NumberOrText::Text(t) => t.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    fill: Option<NumberOrText>,
    rounds: Option<u32>,
    seed: Option<u64>,
    sizes: Vec<RawBucket>,
    lifetimes: Vec<RawLifetime>,
    directories: Option<Directories>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBucket {
    min: NumberOrText,
    max: NumberOrText,
    weight: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLifetime {
    rounds: NumberOrText,
    weight: u64,
}

/// Where files go: one of `fanout^depth` leaf directories.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Directories {
    /// Levels of directories under `age/`.
    pub depth: u32,
    /// Subdirectories of each directory.
    pub fanout: u32,
}

/// A size bucket: picked by weight, then a size log-uniform in `min..=max`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeBucket {
    /// Smallest size, bytes.
    pub min: u64,
    /// Largest size, bytes.
    pub max: u64,
    /// Relative weight.
    pub weight: u64,
}

/// A lifetime: picked by weight; `None` lives forever.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lifetime {
    /// Rounds the file lives, `None` for ever.
    pub rounds: Option<u32>,
    /// Relative weight.
    pub weight: u64,
}

/// A checked profile file: what the `file:` planner runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileFile {
    /// Fill level of every fill phase.
    pub fill: f64,
    /// Rounds of delete-the-expired + refill after the first fill.
    pub rounds: u32,
    /// The seed.
    pub seed: u64,
    /// The size distribution.
    pub sizes: Vec<SizeBucket>,
    /// The lifetime distribution.
    pub lifetimes: Vec<Lifetime>,
    /// The directory shape.
    pub directories: Directories,
}

impl ProfileFile {
    /// Read and check the profile at `path`: a regular file owned by root
    /// or the invoking user (fslab runs as root; a file anyone else owns
    /// could be changed under it). Errors are usage errors naming the file.
    pub fn load(path: &Path) -> Result<ProfileFile> {
        let shown = path.display();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| Error::usage(format!("--age file:{shown}: cannot open the profile: {e}")))?;
        let meta = file.metadata().map_err(|e| Error::usage(format!("--age file:{shown}: {e}")))?;
        if !meta.is_file() {
            return Err(Error::usage(format!("--age file:{shown}: not a regular file; give a JSON profile file")));
        }
        let user = std::env::var("SUDO_UID").ok().and_then(|u| u.parse::<u32>().ok());
        let me = rustix::process::getuid().as_raw();
        if meta.uid() != 0 && meta.uid() != me && Some(meta.uid()) != user {
            return Err(Error::usage(format!(
                "--age file:{shown}: owned by uid {}, neither root nor you; copy it to a file you own",
                meta.uid()
            )));
        }
        if meta.len() > MAX_PROFILE_BYTES {
            return Err(Error::usage(format!("--age file:{shown}: {} bytes is too large for a profile", meta.len())));
        }
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|e| Error::usage(format!("--age file:{shown}: cannot read it as text: {e}")))?;
        Self::parse(&text).map_err(|e| Error::usage(format!("--age file:{shown}: {e}")))
    }

    /// Parse and check a profile's JSON text.
    pub fn parse(text: &str) -> std::result::Result<ProfileFile, String> {
        let raw: RawProfile = serde_json::from_str(text).map_err(|e| {
            format!("{e} (fields: fill, rounds, seed, sizes, lifetimes, directories; see `fslab list --ages`)")
        })?;
        let fill = match &raw.fill {
            Some(f) => fraction("fill", &f.text())?,
            None => 0.8,
        };
        if fill > 0.99 {
            return Err(format!("fill={}: at most 99%", fill));
        }
        let sizes = raw
            .sizes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (min, max) = parse_size_range(&format!("{}..{}", byte_text(&b.min), byte_text(&b.max)))
                    .map_err(|e| format!("sizes[{i}]: {e}"))?;
                Ok(SizeBucket { min, max, weight: b.weight })
            })
            .collect::<std::result::Result<Vec<_>, String>>()?;
        let lifetimes = raw
            .lifetimes
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let rounds = match &l.rounds {
                    NumberOrText::Text(t) if t == "forever" => None,
                    NumberOrText::Number(n) if *n >= 1.0 && *n <= 1000.0 && n.fract() == 0.0 => Some(*n as u32),
                    other => {
                        return Err(format!(
                            "lifetimes[{i}].rounds = {}: a whole number of rounds from 1 to 1000, or \"forever\"",
                            other.text()
                        ));
                    }
                };
                Ok(Lifetime { rounds, weight: l.weight })
            })
            .collect::<std::result::Result<Vec<_>, String>>()?;
        total_weight("sizes", sizes.iter().map(|b| b.weight))?;
        total_weight("lifetimes", lifetimes.iter().map(|l| l.weight))?;
        let directories = raw.directories.unwrap_or(Directories { depth: 2, fanout: 8 });
        if directories.depth > 8 || directories.fanout == 0 || directories.fanout > 256 {
            return Err("directories: depth 0 to 8, fanout 1 to 256".into());
        }
        if u64::from(directories.fanout).pow(directories.depth) > 100_000 {
            return Err("directories: fanout^depth must be at most 100,000 leaf directories".into());
        }
        let rounds = raw.rounds.unwrap_or(4);
        if rounds > 1000 {
            return Err(format!("rounds={rounds}: at most 1000"));
        }
        Ok(ProfileFile { fill, rounds, seed: raw.seed.unwrap_or(1), sizes, lifetimes, directories })
    }

    /// The profile as parsed, in compact JSON: the cache key's part for
    /// the file's content (a change that changes the aging changes it).
    pub fn identity(&self) -> String {
        serde_json::to_string(self).expect("plain data serialises")
    }
}

/// The sum of a list's weights, which the planner picks by: above 0, and
/// within a u64 (the weights are relative, so smaller ones do the same).
fn total_weight(what: &str, weights: impl Iterator<Item = u64>) -> std::result::Result<u64, String> {
    let mut total = 0u64;
    for (i, weight) in weights.enumerate() {
        total = total.checked_add(weight).ok_or_else(|| {
            format!("{what}[{i}].weight = {weight}: the weights of {what} add up past {}; weights are relative, so give smaller ones", u64::MAX)
        })?;
    }
    if total == 0 {
        return Err(format!("{what}: give at least one entry with a weight above 0"));
    }
    Ok(total)
}

fn byte_text(value: &NumberOrText) -> String {
    match value {
        NumberOrText::Number(n) if n.fract() == 0.0 && *n >= 0.0 => format!("{}", *n as u64),
        other => other.text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_profile_parses() {
        let text = include_str!("../../examples/age-profile.json");
        let p = ProfileFile::parse(text).unwrap();
        assert_eq!(p.fill, 0.8);
        assert_eq!(p.sizes[0], SizeBucket { min: 4 << 10, max: 64 << 10, weight: 60 });
        assert_eq!(p.lifetimes[2], Lifetime { rounds: None, weight: 20 });
        assert_eq!(p.directories, Directories { depth: 2, fanout: 8 });
    }

    #[test]
    fn unknown_fields_and_bad_values_are_named() {
        let base = r#""sizes":[{"min":4096,"max":"1M","weight":1}],"lifetimes":[{"rounds":2,"weight":1}]"#;
        assert!(ProfileFile::parse(&format!("{{{base}}}")).is_ok());
        let e = ProfileFile::parse(&format!("{{{base},\"fil\":0.5}}")).unwrap_err();
        assert!(e.contains("unknown field `fil`"), "{e}");
        let e = ProfileFile::parse(r#"{"sizes":[{"min":1,"max":2,"weight":1,"x":1}],"lifetimes":[]}"#).unwrap_err();
        assert!(e.contains("unknown field `x`"), "{e}");
        let e = ProfileFile::parse(&format!("{{{base},\"fill\":\"100%\"}}")).unwrap_err();
        assert!(e.contains("fill"), "{e}");
        let e = ProfileFile::parse(r#"{"sizes":[{"min":"1M","max":"4K","weight":1}],"lifetimes":[{"rounds":1,"weight":1}]}"#)
            .unwrap_err();
        assert!(e.contains("sizes[0]"), "{e}");
        let e = ProfileFile::parse(r#"{"sizes":[{"min":1,"max":2,"weight":1}],"lifetimes":[{"rounds":"never","weight":1}]}"#)
            .unwrap_err();
        assert!(e.contains("forever"), "{e}");
    }

    #[test]
    fn weights_whose_sum_overflows_are_refused_naming_the_field() {
        let max = u64::MAX;
        let sizes = format!(r#"[{{"min":1,"max":2,"weight":{max}}},{{"min":1,"max":2,"weight":1}}]"#);
        let e = ProfileFile::parse(&format!(r#"{{"sizes":{sizes},"lifetimes":[{{"rounds":1,"weight":1}}]}}"#)).unwrap_err();
        assert!(e.contains("sizes[1].weight"), "{e}");
        let lifetimes = format!(r#"[{{"rounds":1,"weight":{max}}},{{"rounds":"forever","weight":{max}}}]"#);
        let e = ProfileFile::parse(&format!(r#"{{"sizes":[{{"min":1,"max":2,"weight":1}}],"lifetimes":{lifetimes}}}"#)).unwrap_err();
        assert!(e.contains("lifetimes[1].weight"), "{e}");
        // The largest sum that fits is taken.
        let fits = format!(r#"[{{"rounds":1,"weight":{}}},{{"rounds":2,"weight":1}}]"#, max - 1);
        assert!(ProfileFile::parse(&format!(r#"{{"sizes":[{{"min":1,"max":2,"weight":1}}],"lifetimes":{fits}}}"#)).is_ok());
    }
}
