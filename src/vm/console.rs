//! A guest's serial console, written to a file by QEMU: its last lines
//! say why a guest that hung or failed did so, and the init script's
//! `fslab-guest: STEP UPTIME` lines say how long each step took. A guest
//! can fill it without limit, so only its start and end are read
//! ([`super::capped`]).

use std::path::Path;

use super::capped;

/// How much of the console's end is read for its last lines.
const TAIL_BYTES: u64 = 64 * 1024;

/// How much of its start is read for the marks of the boot (`init`,
/// `modules`, `mounted`: the kernel's own messages before them are a few
/// KiB with `quiet`); the last, `done`, is looked for in its end.
const HEAD_BYTES: u64 = 1 << 20;

/// The last `n` lines of the console file (fewer if it is shorter; none
/// if it cannot be read), without carriage returns.
pub fn tail(path: &Path, n: usize) -> Vec<String> {
    let Ok(end) = capped::tail(path, TAIL_BYTES) else { return Vec::new() };
    let text = String::from_utf8_lossy(&end.bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if end.cut && !lines.is_empty() {
        lines.remove(0); // cut in the middle
    }
    let lines: Vec<String> = lines.iter().map(|l| l.trim_end_matches('\r').to_string()).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// The init script's progress marks (`fslab-guest: STEP SECONDS`, the
/// guest's uptime) in the order they came, from the console's first MiB
/// and its last 64 KiB.
pub fn marks(path: &Path) -> Vec<(String, f64)> {
    let Ok(start) = capped::head(path, HEAD_BYTES) else { return Vec::new() };
    let mut text = String::from_utf8_lossy(&start.bytes).into_owned();
    if start.cut {
        let end = capped::tail(path, TAIL_BYTES).unwrap_or_default();
        // Lines cut at either edge are no marks; the end's first may be one
        // the start also holds, when the two overlap.
        text.truncate(text.rfind('\n').map_or(0, |at| at + 1));
        let end = String::from_utf8_lossy(&end.bytes).into_owned();
        text.push_str(end.split_once('\n').map_or("", |(_, rest)| rest));
    }
    let mut marks: Vec<(String, f64)> = Vec::new();
    for mark in text.lines().filter_map(|l| l.trim_end_matches('\r').strip_prefix(super::initramfs::MARK)).filter_map(|rest| {
        let mut words = rest.split_whitespace();
        Some((words.next()?.to_string(), words.next()?.parse().ok()?))
    }) {
        if !marks.contains(&mark) {
            marks.push(mark);
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_and_the_marks_are_read_back() {
        let dir = crate::test_temp::dir("");
        let path = dir.path().join("console.log");
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("[ {i}.000] line {i}\r\n"));
        }
        text.push_str("fslab-guest: modules 9.25\nfslab-guest: done 30.5\n");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(tail(&path, 3), ["[ 4999.000] line 4999", "fslab-guest: modules 9.25", "fslab-guest: done 30.5"]);
        assert_eq!(marks(&path), [("modules".to_string(), 9.25), ("done".to_string(), 30.5)]);
        assert!(tail(&dir.path().join("none"), 3).is_empty());
    }
}
