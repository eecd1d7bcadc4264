//! The preset's verdicts on one screen, tried on the verdicts of a whole
//! preset run (all five seeds on ext2, ext3, ext4, xfs and btrfs under
//! the seeds' conditions: 46 places, 20 of them seed 000's).

use super::*;
use crate::record::{Samples, Verdict};

/// The verdicts of a preset run (the guide's), as `--json` gives them.
fn preset() -> Vec<Verdict> {
    serde_json::from_str(include_str!("../../../tests/fixtures/preset-verdicts.json")).expect("the fixture parses")
}

/// The lines of seed `seed`'s part of `text`, its head line first.
fn seed_lines<'a>(text: &'a str, seed: &str) -> Vec<&'a str> {
    let head = format!("  seed {seed} ");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&head));
    let first = lines.next().into_iter();
    first.chain(lines.take_while(|l| !l.starts_with("  seed "))).collect()
}

/// `lines` with each wrapped line joined to the one it continues.
fn joined(lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in lines {
        match out.last_mut() {
            Some(last) if line.starts_with(&" ".repeat(super::grouped::INDENT)) => {
                last.push(' ');
                last.push_str(line.trim_start());
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

#[test]
fn a_whole_preset_fits_forty_lines_of_120_columns() {
    let verdicts = preset();
    assert_eq!(verdicts.iter().map(|v| v.places.len()).collect::<Vec<_>>(), [20, 6, 5, 10, 5]);
    let text = render(&verdicts, &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 40, "{} lines:\n{text}", lines.len());
    for line in &lines {
        assert!(line.chars().count() <= WIDTH, "{} columns: {line}", line.chars().count());
    }
    assert_eq!(lines[1], "verdicts: does this kernel still show what each seed reported, and where? (fslab show RUN --why: every place)");
    // Every place is still there, in full, behind --why.
    let why = render_why(&verdicts);
    assert!(why.lines().count() > 100, "{why}");
    assert!(why.lines().all(|l| l.chars().count() <= WIDTH), "{why}");
    assert!(why.contains("    btrfs@vm.dirty_background_bytes=32M  shows     mean extent 4.15 KiB (shows at < 1 MiB); the file reads 84×"), "{why}");
}

#[test]
fn places_with_the_same_word_and_test_share_a_line_with_their_range() {
    let text = render(&preset(), &[]);
    let seed_000 = joined(&seed_lines(&text, "000"));
    assert_eq!(
        seed_000,
        [
            "  seed 000 mmap-fill      shows at 6 of 20 places",
            "    shows     xfs@120M, xfs@vm.dirty_background_bytes=32M, btrfs (all 4 places): mean extent 4.15–65.5 KiB (shows \
             at < 1 MiB); reads 6.81–87.2× slower than in one piece on hdd-7200-2009 (modelled)",
            "    gone      ext2, ext3, ext4 (all 4 places each), xfs, xfs@160M: mean extent 8–128 MiB (shows at < 1 MiB); reads as \
             fast to 4% slower than in one piece on hdd-7200-2009 (modelled)",
            "    the seed  ext3, 2009: mean extent 21 KiB (50,435 extents where 9 would do); read at 18.4 MB/s of 70 (3.8× slower)",
        ]
    );
    // Two tests decided create-file's gone places: two lines.
    let seed_003 = joined(&seed_lines(&text, "003"));
    let gone: Vec<&String> = seed_003.iter().filter(|l| l.starts_with("    gone ")).collect();
    assert_eq!(gone.len(), 2, "{seed_003:#?}");
    assert_eq!(
        gone[0],
        "    gone      ext2, ext3 (both places each), ext4@age=churn,fill=80%, btrfs@age=churn,fill=80%: mkfile/dd extents \
         0.9–2.76× (shows at ≥ 4×); reads 1% faster to 7% slower than write-1g's on hdd-7200 (modelled)"
    );
    assert!(gone[1].starts_with("    gone      ext4, xfs, btrfs: mkfile extents 1–3 (shows at ≥ 10); reads as fast as write-1g's"), "{}", gone[1]);
    assert!(seed_003[1].starts_with("    shows     xfs@age=churn,fill=80%: mkfile/dd extents 24.7× (shows at ≥ 4×); reads 26% slower"), "{seed_003:#?}");
    // A marginal place and places not judged keep lines of their own.
    let seed_001 = joined(&seed_lines(&text, "001"));
    assert!(seed_001[0].ends_with("gone at all 6 places"), "{seed_001:#?}");
    assert!(seed_001[1].starts_with("    marginal  ext2-1k: read I/Os per MiB/best 1.8× (shows at ≥ 2×); reads 29.5× slower"), "{seed_001:#?}");
    assert_eq!(
        seed_001[2],
        "    gone      ext2, ext3, ext4, xfs, btrfs: read I/Os per MiB/best 1–1.3× (shows at ≥ 2×); reads 35% to 11.9× slower \
         than in one piece on hdd-7200 (modelled)"
    );
    let seed_002 = joined(&seed_lines(&text, "002"));
    assert_eq!(seed_002[0], "  seed 002 replace-files  shows at 2 of 5 places, 2 not judged");
    assert_eq!(seed_002[1], "    shows     ext4, xfs: fsync-each/batch commits 10.5× (shows at ≥ 5×)");
    assert_eq!(seed_002[3], "    unknown   ext2, btrfs: no journal commits counted for both strategies");
    assert!(seed_002[4].starts_with("    safety    not tried: add --crash flush"), "{seed_002:#?}");
    // dpkg, run beside it, under its name in the word's column.
    assert_eq!(
        seed_002[5],
        "    dpkg      with its fsyncs, 1.43–1.79× the flushes and 1.04× the journal commits of --force-unsafe-io at 5 \
         places (ext4: 209 vs 146 flushes, 76 vs 73 commits)"
    );
    assert!(seed_002[6].starts_with("    the seed  "), "{seed_002:#?}");
}

#[test]
fn a_place_that_reads_otherwise_keeps_its_word_on_a_line_of_its_own() {
    let mut verdicts = preset();
    let places = &mut verdicts[0].places;
    let mixed = places.iter_mut().find(|p| p.target == "btrfs@160M").unwrap();
    mixed.judged = "mixed".into();
    mixed.samples = Some(Samples { by: "repeats".into(), count: 3, showing: 2, gone: 1 });
    let near = places.iter_mut().find(|p| p.target == "ext4@120M").unwrap();
    near.judged = "marginal".into();
    let mut busy = Case::new("mmap-fill", "xfs", serde_json::Map::new(), 2);
    busy.conditions.insert("memory".into(), "160M".into());
    busy.busy = Some("others used 1.6 cores on average".into());
    let text = render(&verdicts, &[busy]);
    let lines = joined(&seed_lines(&text, "000"));
    let line = |word: &str| lines.iter().filter(|l| l.starts_with(&format!("    {word:<9} "))).cloned().collect::<Vec<_>>();
    assert_eq!(line("mixed").len(), 1, "{lines:#?}");
    assert!(line("mixed")[0].starts_with("    mixed     btrfs@160M: mean extent 4.17 KiB (shows at < 1 MiB); reads 84.9× slower"), "{lines:#?}");
    assert!(line("mixed")[0].ends_with("; 3 repeats: 2 show, 1 gone"), "{lines:#?}");
    assert!(line("marginal")[0].starts_with("    marginal  ext4@120M: mean extent 128 MiB"), "{lines:#?}");
    // btrfs no longer shows everywhere, and ext4 nowhere but at 120M is gone.
    assert!(line("shows")[0].contains("btrfs, btrfs@120M, btrfs@vm.dirty_background_bytes=32M: "), "{lines:#?}");
    let gone = line("gone");
    assert_eq!(gone.len(), 1, "{lines:#?}");
    assert!(
        gone[0].starts_with(
            "    gone      ext2, ext3 (all 4 places each), ext4, ext4@160M, ext4@vm.dirty_background_bytes=32M, xfs, xfs@160M: mean \
             extent 8–128 MiB"
        ),
        "{lines:#?}"
    );
    assert!(gone[0].ends_with(" than in one piece on hdd-7200-2009 (modelled); 1 of 13 ran busy"), "{lines:#?}");
    // A lone busy place says it plainly.
    let mut busy_btrfs = Case::new("mmap-fill", "btrfs", serde_json::Map::new(), 1);
    busy_btrfs.conditions.insert("memory".into(), "160M".into());
    busy_btrfs.busy = Some("others used 1.6 cores on average".into());
    let text = render(&verdicts, &[busy_btrfs]);
    let lines = joined(&seed_lines(&text, "000"));
    assert!(lines.iter().any(|l| l.starts_with("    mixed     btrfs@160M: ") && l.ends_with("; 3 repeats: 2 show, 1 gone; ran busy")), "{lines:#?}");
    assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
}

#[test]
fn an_old_verdict_keeps_its_sentence_and_no_verdict_prints_nothing() {
    let v = Verdict::unknown("mmap-fill", "000", "too few cases");
    assert_eq!(render(&[v], &[]).lines().nth(2), Some("  seed 000 mmap-fill      unknown  too few cases"));
    assert_eq!(render(&[], &[]), "");
    assert_eq!(render_why(&[]), "");
}
