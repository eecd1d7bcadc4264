//! Numbers that mean what they print, end to end: `fslab list` and a
//! stored run's `show --wide` within 120 columns, fio's latencies in the
//! unit they are of, and `frag` on a crafted file whose backward jump
//! must cost its layout score, whose worst-files header sits over its
//! columns and whose seeks to the next files are counted, not summed.

mod common;

use std::process::Command;

use common::{Lab, ScratchFs, fslab_expect, fslab_json};

const WIDTH: usize = 120;

/// The lines of `text` over [`WIDTH`] characters (not bytes: `≥` and `µ`
/// are one column each).
fn too_wide(text: &str) -> Vec<String> {
    text.lines().filter(|l| l.chars().count() > WIDTH).map(|l| format!("{} columns: {l}", l.chars().count())).collect()
}

#[test]
fn list_fits_120_columns() {
    let text = String::from_utf8(fslab_expect(&["list"], 0).stdout).unwrap();
    assert_eq!(too_wide(&text), Vec::<String>::new());
    // Wrapped, not cut: every figure's meaning is still there.
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains("before msync: allocated in the stores' order"), "{text}");
}

/// `dd` of `count` MiB at MiB `seek` of `path`, with O_DIRECT so each
/// write is allocated when it is made, in the order the test makes them.
fn direct_write(path: &std::path::Path, seek: u32, count: u32) {
    let status = Command::new("dd")
        .arg("if=/dev/urandom")
        .arg(format!("of={}", path.display()))
        .args(["bs=1M", &format!("seek={seek}"), &format!("count={count}"), "oflag=direct", "conv=notrunc", "status=none"])
        .status()
        .expect("run dd");
    assert!(status.success(), "dd seek={seek} count={count}");
}

/// filefrag -v's extents of `path`: (logical start, physical start) in
/// blocks.
fn filefrag_starts(path: &std::path::Path) -> Vec<(u64, u64)> {
    let out = Command::new("filefrag").arg("-v").arg(path).output().expect("run filefrag");
    let text = String::from_utf8_lossy(&out.stdout);
    let number = |s: &str| s.trim().trim_end_matches(':').trim_end_matches("..").parse::<u64>().ok();
    text.lines()
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            fields.next().filter(|f| f.ends_with(':') && number(f).is_some())?;
            let logical = number(fields.next()?)?;
            fields.next()?;
            let physical = number(fields.next()?)?;
            Some((logical, physical))
        })
        .collect()
}

#[test]
fn a_backward_jump_costs_the_layout_score_and_the_worst_files_header_sits_over_its_columns() {
    let Some(fs) = ScratchFs::new("numbers_backward_jump", "ext4", 256, &["-b", "4096"]) else { return };
    let dir = fs.path("d");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("f");
    // MiB 16 first, then 0..16 after it on the device (a backward jump at
    // MiB 16), then 17..29, more than the room left after MiB 16 (a
    // forward jump): 3 extents, 7,424 blocks, two of them not right after
    // their logical predecessors, a score of 0.9997.
    direct_write(&file, 16, 1);
    direct_write(&file, 0, 16);
    direct_write(&file, 17, 12);
    let starts = filefrag_starts(&file);
    assert_eq!(starts.len(), 3, "filefrag: {starts:?}");
    assert!(starts[1].1 < starts[0].1, "a backward jump at MiB 16: {starts:?}");

    // Two small files after it in the directory: a seek from each file's
    // end to the next one's start.
    for name in ["g", "h"] {
        std::fs::write(dir.join(name), [7u8; 8192]).unwrap();
    }
    common::run("sync", &[]);

    let path = dir.to_str().unwrap();
    let json = fslab_json(&["frag", "--json", path]);
    let s = &json["summary"];
    let (pairs, seeks) = (s["next_file_pairs"].as_u64().unwrap(), s["next_file_seeks"].as_u64().unwrap());
    assert!(pairs == 2 && seeks >= 1, "{s}");
    assert!(s["next_file_seek_median_bytes"].as_u64().unwrap() <= s["next_file_seek_bytes"].as_u64().unwrap(), "{s}");
    let score = json["worst"][0]["layout_score"].as_f64().unwrap();
    assert!(score < 1.0, "a backward jump must cost: {score}");
    let text = String::from_utf8(fslab_expect(&["frag", path], 0).stdout).unwrap();
    assert!(!text.contains("1.000"), "a score below 1 never prints as 1.000:\n{text}");
    // Seeks counted, their median said; the sum is no distance to print.
    assert!(text.contains(&format!("{seeks} seeks between files, median ")), "{text}");
    assert!(!text.contains("head travel"), "{text}");

    // Each heading ends where its column's values end (right-aligned), or
    // starts where they start (the path).
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.contains("extents") && l.contains("path")).expect("worst files header");
    let (header, row) = (lines[at], lines[at + 1]);
    for heading in ["extents", "perfection", "layout", "size"] {
        let end = header.find(heading).unwrap() + heading.len();
        let cell_end = row[..end].trim_end().len();
        assert_eq!(cell_end, end, "{heading} over its column:\n{header}\n{row}");
        assert!(row[end..].starts_with("  "), "{heading} over its column:\n{header}\n{row}");
    }
    assert_eq!(header.find("path"), row.find(path), "path over its column:\n{header}\n{row}");
}

#[test]
fn fio_latencies_print_in_their_unit_and_show_wide_fits_120_columns() {
    if !common::root_or_skip("numbers_fio") {
        return;
    }
    assert!(common::have("fio"), "fio is not installed");
    let lab = Lab::new();
    let fio = ["--name=w", "--rw=write", "--bs=64k", "--size=16M", "--output-format=json"];
    let args: Vec<&str> = ["--fs", "ext4", "--parse", "fio", "--", "fio"].into_iter().chain(fio).collect();
    let out = lab.exec(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let show = lab.expect(&["show", "last", "--wide"], 0);
    let text = String::from_utf8(show.stdout).unwrap();
    assert_eq!(too_wide(&text), Vec::<String>::new(), "show --wide:\n{text}");
    // Every figure is still there, latencies in µs or ms, never 0.000.
    for name in ["fio_w_write_clat_p50", "fio_w_write_clat_p99"] {
        let line = text.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("no {name}:\n{text}"));
        assert!(!line.contains("0.000"), "{line}");
        assert!(line.contains(" µs") || line.contains(" ms"), "{line}");
    }
}
