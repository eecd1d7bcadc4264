//! Every place's evidence (`show RUN --why`): per seed one line naming
//! where it shows and where it is gone (the places said once), then one
//! row per place with its figures, then what the seed itself reported.

use std::fmt::Write as _;

use super::{QUESTION, wrap};
use crate::record::Verdict;

/// The verdicts with a row per place (empty for a run without verdicts).
pub(super) fn render(verdicts: &[Verdict]) -> String {
    let mut s = String::new();
    if verdicts.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\n{QUESTION}");
    for v in verdicts {
        let head = format!("  seed {} {:<14}", v.seed, v.scenario);
        if v.places.is_empty() {
            // A run stored before verdicts said where: its word and sentence.
            s.push_str(&wrap(&format!("{head} {:<8} {}", v.word(), v.evidence), head.len() + 10));
            continue;
        }
        s.push_str(&wrap(&format!("{head} {}", v.where_list()), head.len() + 1));
        let width = v.places.iter().map(|p| p.target.chars().count()).max().unwrap_or(0);
        for p in &v.places {
            let row = format!("    {:<width$}  {:<8}  ", p.target, p.word());
            s.push_str(&wrap(&format!("{row}{}", p.details()), row.chars().count()));
        }
        if !v.safety.is_empty() {
            s.push_str(&wrap(&format!("    safety: {}", v.safety), 12));
        }
        for line in &v.programs {
            s.push_str(&wrap(&format!("    {line}"), 6));
        }
        if !v.claim.is_empty() {
            s.push_str(&wrap(&format!("    the seed: {}", v.claim), 14));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::verdicts::WIDTH;
    use crate::record::PlaceVerdict;

    fn place(target: &str, shows: Option<bool>, evidence: &str) -> PlaceVerdict {
        PlaceVerdict {
            target: target.into(),
            fs: target.split('@').next().unwrap().into(),
            conditions: Default::default(),
            shows,
            figure: "extents".into(),
            value: None,
            against: None,
            evidence: evidence.into(),
            ..Default::default()
        }
    }

    #[test]
    fn places_are_named_once_and_every_line_fits() {
        let long = "31,483 extents where 1 would do, 4 KiB each; 1 with posix_fallocate; ".repeat(3);
        let v = Verdict {
            scenario: "mmap-fill".into(),
            seed: "000".into(),
            shows: Some(true),
            evidence: "seed 000 shows on btrfs".into(),
            claim: "ext3 in 2009: a 1 GiB file in 50,435 extents where perfection was 9".into(),
            places: vec![
                place("ext3", Some(false), "16 extents where 2 would do, 8 MiB each"),
                place("btrfs", Some(true), long.trim_end()),
                place("xfs@256M", Some(true), "30,000 extents where 1 would do, 9 KiB each"),
                place("ext2-1k", None, "no case"),
            ],
            safety: String::new(),
            programs: Vec::new(),
        };
        let text = render(&[v]);
        let lines: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(lines[0], "  seed 000 mmap-fill      shows on btrfs, xfs@256M; gone on ext3; not judged on ext2-1k");
        assert_eq!(lines[1], "    ext3      gone      16 extents where 2 would do, 8 MiB each");
        assert!(lines[2].starts_with("    btrfs     shows     31,483 extents"), "{text}");
        assert!(lines[3].starts_with("                        ") && !lines[3].trim().is_empty(), "{text}");
        assert!(text.contains("\n    xfs@256M  shows     30,000 extents where 1 would do, 9 KiB each\n"), "{text}");
        assert!(text.contains("\n    ext2-1k   unknown   no case\n"), "{text}");
        assert!(text.ends_with("    the seed: ext3 in 2009: a 1 GiB file in 50,435 extents where perfection was 9\n"), "{text}");
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert_eq!(text.matches("xfs@256M").count(), 2, "once in the list, once as its row");
    }

    #[test]
    fn cost_and_safety_follow_a_place_and_an_untried_safety_is_said_once() {
        let mut ext4 = place("ext4", Some(true), "21 journal commits with fsync-each, 2 with writeback-batch");
        ext4.also = vec!["cost and safety: fsync-each 21 commits, 0 of 40 crash states bad; in-place 1 commit, 5 of 18".into()];
        let v = Verdict { places: vec![ext4, place("xfs", Some(false), "3 with fsync-each")], ..Verdict::unknown("replace-files", "002", "") };
        let text = render(std::slice::from_ref(&v));
        let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains("ext4 shows 21 journal commits with fsync-each, 2 with writeback-batch; cost and safety: fsync-each 21 \
                             commits, 0 of 40 crash states bad; in-place 1 commit, 5 of 18 xfs gone"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert!(!text.contains("safety: not tried"), "{text}");
        let untried = Verdict { safety: "not tried: add --crash flush".into(), ..v };
        let text = render(&[untried]);
        assert_eq!(text.matches("safety: not tried: add --crash flush\n").count(), 1, "{text}");
    }

    #[test]
    fn an_old_verdict_keeps_its_sentence() {
        let v = Verdict::unknown("mmap-fill", "000", "too few cases");
        assert_eq!(render(&[v]).lines().nth(2), Some("  seed 000 mmap-fill      unknown  too few cases"));
        assert_eq!(render(&[]), "");
    }
}
