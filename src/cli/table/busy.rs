//! The footnote a run's tables end with when some of its cases were
//! measured on a busy machine: said once for the whole run, naming the
//! cases, as hyperfine warns once under its results.

use super::super::verdicts::wrap;
use crate::record::Case;
use crate::record::busy::BusyCases;

/// `2 of 6 cases ran while other processes used ≥ 0.5 cores or ...: xfs
/// r2, ext4 r1 — timings there are less reliable.`, after a blank line,
/// wrapped to the table's width; empty when no case was busy.
pub fn busy(cases: &[&Case]) -> String {
    match BusyCases::of(cases).footnote() {
        Some(note) => format!("\n{}", wrap(&note, 2)),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_footnote_for_the_busy_cases_within_the_width() {
        let mut cases: Vec<Case> = ["ext4", "xfs", "btrfs"]
            .iter()
            .flat_map(|fs| (1..=2).map(move |r| Case::new("mmap-fill", fs, serde_json::Map::new(), r)))
            .collect();
        assert_eq!(busy(&cases.iter().collect::<Vec<_>>()), "");
        cases[3].busy = Some("others used 1.6 cores on average".into());
        cases[1].busy = Some("others moved 40.0 MiB/s on the disk under the target".into());
        let text = busy(&cases.iter().collect::<Vec<_>>());
        assert!(text.starts_with("\n2 of 6 cases ran while other processes used ≥ 0.5 cores"), "{text}");
        let joined = text.replace("\n  ", " ");
        assert!(joined.contains(": ext4 r2, xfs r2 — timings there are less reliable.\n"), "{text}");
        assert_eq!(joined.matches("ran while").count(), 1, "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= crate::cli::verdicts::WIDTH), "{text}");
    }
}
