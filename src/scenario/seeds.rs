//! The seeds preset's last word: does this kernel still show what each
//! seed reported, and which measured figure says so.
//!
//! Each scenario judges its own seed from the cases the preset ran (it
//! alone knows the claim); this module holds the shape of the answer and
//! the small lookups every judgement needs. Exact figures only: a verdict
//! must come out the same when the run is repeated.

pub use crate::record::Verdict;

use crate::record::Case;
use crate::target::FsType;

/// The comparison a seed made, as the preset runs it.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// `--set` values, as `(key, "v1,v2")`; the user's own `--set` for the
    /// same key wins.
    pub settings: &'static [(&'static str, &'static str)],
    /// Targets beyond the five default file systems (seed 001's 1 KiB-block
    /// ext2).
    pub variants: &'static [Variant],
}

/// A scratch file system made another way, under its own label.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The row's name (`ext2-1k`).
    pub label: &'static str,
    /// The file system.
    pub fs: FsType,
    /// mkfs arguments added to the run's.
    pub mkfs_args: &'static [&'static str],
    /// Mount options replacing the run's, if any.
    pub mount_opts: Option<&'static str>,
}

/// The successful cases on target `fs` whose parameters include every
/// `(key, value)` of `params`.
pub fn cases_of<'a>(cases: &[&'a Case], fs: &str, params: &[(&str, &str)]) -> Vec<&'a Case> {
    cases
        .iter()
        .copied()
        .filter(|c| c.fs == fs && c.status == crate::record::Status::Ok)
        .filter(|c| params.iter().all(|(k, v)| c.params.get(*k).is_some_and(|p| value_is(p, v))))
        .collect()
}

fn value_is(param: &serde_json::Value, want: &str) -> bool {
    match param {
        serde_json::Value::String(s) => s == want,
        serde_json::Value::Number(n) => n.to_string() == want,
        _ => false,
    }
}

/// The median of figure `name` over `cases` (repeats), or `None` when no
/// case measured it.
pub fn median(cases: &[&Case], name: &str) -> Option<f64> {
    let mut values: Vec<f64> = cases.iter().filter_map(|c| c.figures.value(name)).collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Better, Figures, Kind};

    fn case(fs: &str, strategy: &str, commits: f64) -> Case {
        let mut figures = Figures::new();
        figures.set("journal_commits", commits, "count", Better::Lower, Kind::Exact);
        let mut params = serde_json::Map::new();
        params.insert("strategy".into(), strategy.into());
        params.insert("files".into(), 20.into());
        Case { figures, ..Case::new("replace-files", fs, params, 1) }
    }

    #[test]
    fn cases_are_picked_by_fs_and_params_and_medians_taken() {
        let all = [case("ext4", "fsync-each", 21.0), case("ext4", "fsync-each", 23.0), case("ext4", "none", 1.0), case("xfs", "fsync-each", 5.0)];
        let refs: Vec<&Case> = all.iter().collect();
        let picked = cases_of(&refs, "ext4", &[("strategy", "fsync-each"), ("files", "20")]);
        assert_eq!(picked.len(), 2);
        assert_eq!(median(&picked, "journal_commits"), Some(22.0));
        assert_eq!(median(&picked, "flushes"), None);
        assert!(cases_of(&refs, "ext3", &[]).is_empty());
        assert_eq!(median(&cases_of(&refs, "ext4", &[("strategy", "none")]), "journal_commits"), Some(1.0));
    }
}
