//! Which share of a plan a machine runs (`--shard`): shard K of N holds
//! the cases whose shard key hashes to K, so the shards partition the
//! plan, the same on every machine, and cases sharing an aged image share
//! a shard.
//!
//! K is given (`3/8`, from 1, as cargo-nextest's `hash:3/8`) or read from
//! the variable a job engine sets for each of its tasks, a 0-based index
//! (shard = index + 1): `slurm/N` reads `SLURM_ARRAY_TASK_ID` (an array
//! given as `--array=0-(N-1)`), `k8s/N` reads `JOB_COMPLETION_INDEX` (an
//! Indexed Job), `env:VAR/N` reads `VAR` (a CI matrix's index).

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A `--shard` as given: where K comes from, and N.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardSpec {
    /// K itself, or the variable holding its 0-based index.
    pub index: ShardIndex,
    /// How many shards (N, at least 1).
    pub of: u32,
}

/// Where a shard's number comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShardIndex {
    /// Given: K, from 1.
    Given(u32),
    /// A variable holding a 0-based index.
    Variable(String),
}

/// One shard: K of N, K from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K, from 1 to `of`.
    pub index: u32,
    /// N.
    pub of: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

/// The variable Slurm sets to a job array task's index.
pub const SLURM_VARIABLE: &str = "SLURM_ARRAY_TASK_ID";
/// The variable Kubernetes sets to an Indexed Job pod's index.
pub const K8S_VARIABLE: &str = "JOB_COMPLETION_INDEX";

/// Read a `--shard` value: `K/N`, `slurm/N`, `k8s/N` or `env:VAR/N`.
pub fn parse_shard(text: &str) -> std::result::Result<ShardSpec, String> {
    let usage = "give K/N (K from 1 to N), slurm/N, k8s/N or env:VAR/N";
    let (index, of) = text.rsplit_once('/').ok_or_else(|| format!("`{text}`: {usage}"))?;
    let of: u32 = of.parse().ok().filter(|n| *n >= 1).ok_or_else(|| format!("`{text}`: N must be a whole number from 1 ({usage})"))?;
    let index = match index {
        "slurm" => ShardIndex::Variable(SLURM_VARIABLE.into()),
        "k8s" => ShardIndex::Variable(K8S_VARIABLE.into()),
        _ => match index.strip_prefix("env:") {
            Some(var) if !var.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                ShardIndex::Variable(var.into())
            }
            Some(var) => return Err(format!("`{text}`: `{var}` is no variable name ({usage})")),
            None => match index.parse::<u32>() {
                Ok(k) if (1..=of).contains(&k) => ShardIndex::Given(k),
                _ => return Err(format!("`{text}`: K must be a whole number from 1 to {of} ({usage})")),
            },
        },
    };
    Ok(ShardSpec { index, of })
}

impl ShardSpec {
    /// The shard meant, reading a variable through `var` (the process's
    /// environment, or a test's): a variable unset or not an index below
    /// N is refused (exit 2), named.
    pub fn resolve(&self, var: impl Fn(&str) -> Option<String>) -> Result<Shard> {
        let index = match &self.index {
            ShardIndex::Given(k) => *k,
            ShardIndex::Variable(name) => {
                let value = var(name).ok_or_else(|| {
                    Error::usage(format!(
                        "--shard: {name} is not set; it is the job engine's 0-based task index (run inside the \
                         job, or give --shard K/N)"
                    ))
                })?;
                match value.trim().parse::<u32>() {
                    Ok(i) if i < self.of => i + 1,
                    _ => {
                        return Err(Error::usage(format!(
                            "--shard: {name}={value:?} is no index from 0 to {} (the engine's tasks are numbered \
                             from 0: give Slurm --array=0-{}, Kubernetes completions: {})",
                            self.of - 1,
                            self.of - 1,
                            self.of
                        )));
                    }
                }
            }
        };
        Ok(Shard { index, of: self.of })
    }
}

impl Shard {
    /// Whether a case whose shard key is `shard_key` is in this shard.
    pub fn holds(&self, shard_key: &str) -> bool {
        shard_of(shard_key, self.of) == self.index
    }
}

/// The shard (from 1) of `n` a case with `shard_key` is in: the first 8
/// bytes of SHA-256 of the key, big-endian, mod `n`, plus 1.
pub fn shard_of(shard_key: &str, n: u32) -> u32 {
    let digest = Sha256::digest(shard_key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_be_bytes(first) % u64::from(n.max(1))) as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_is_given_or_read_from_the_engines_index() {
        assert_eq!(parse_shard("3/8").unwrap(), ShardSpec { index: ShardIndex::Given(3), of: 8 });
        let slurm = parse_shard("slurm/4").unwrap();
        assert_eq!(slurm.index, ShardIndex::Variable("SLURM_ARRAY_TASK_ID".into()));
        assert_eq!(parse_shard("k8s/4").unwrap().index, ShardIndex::Variable("JOB_COMPLETION_INDEX".into()));
        assert_eq!(parse_shard("env:CI_NODE_INDEX/2").unwrap().index, ShardIndex::Variable("CI_NODE_INDEX".into()));
        for bad in ["0/4", "5/4", "1/0", "4", "x/4", "env:/4", "env:A-B/4", "-1/4", "1/-1"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
        // 0-based indexes: task 0 is shard 1, task N-1 shard N.
        let env = |value: &'static str| move |name: &str| (name == "SLURM_ARRAY_TASK_ID").then(|| value.to_string());
        assert_eq!(slurm.resolve(env("0")).unwrap(), Shard { index: 1, of: 4 });
        assert_eq!(slurm.resolve(env("3")).unwrap(), Shard { index: 4, of: 4 });
        for bad in ["4", "-1", "", "one"] {
            let e = slurm.resolve(env(bad)).unwrap_err();
            assert!(e.message.contains("SLURM_ARRAY_TASK_ID"), "{}", e.message);
            assert_eq!(e.exit_code(), std::process::ExitCode::from(2));
        }
        let unset = parse_shard("k8s/2").unwrap().resolve(|_| None).unwrap_err();
        assert!(unset.message.contains("JOB_COMPLETION_INDEX is not set"), "{}", unset.message);
    }

    #[test]
    fn shards_partition_any_keys_the_same_everywhere() {
        let keys: Vec<String> = (0..200).map(|i| format!("{i:016x}")).collect();
        for n in 1..=5 {
            let mut counts = vec![0; n as usize];
            for key in &keys {
                let k = shard_of(key, n);
                assert!((1..=n).contains(&k));
                let holding: Vec<u32> = (1..=n).filter(|i| Shard { index: *i, of: n }.holds(key)).collect();
                assert_eq!(holding, vec![k], "each key in exactly one shard");
                counts[(k - 1) as usize] += 1;
            }
            assert!(counts.iter().all(|c| *c > 0), "{n}: {counts:?}");
        }
        // Written down once, so a hash that changes across builds fails
        // here: the first 8 bytes of `printf bdeef15e97a5b49f | sha256sum`, mod N, plus 1.
        assert_eq!((1..=5).map(|n| shard_of("bdeef15e97a5b49f", n)).collect::<Vec<_>>(), vec![1, 2, 2, 2, 4]);
    }
}
