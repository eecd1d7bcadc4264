//! A guest's serial console, written to a file by QEMU: its last lines
//! say why a guest that hung or failed did so, and the init script's
//! `fslab-guest: STEP UPTIME` lines say how long each step took.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How much of the console's end is read for its last lines.
const TAIL_BYTES: u64 = 64 * 1024;

/// The last `n` lines of the console file (fewer if it is shorter; none
/// if it cannot be read), without carriage returns.
pub fn tail(path: &Path, n: usize) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else { return Vec::new() };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        lines.remove(0); // cut in the middle
    }
    let lines: Vec<String> = lines.iter().map(|l| l.trim_end_matches('\r').to_string()).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// The init script's progress marks (`fslab-guest: STEP SECONDS`, the
/// guest's uptime) in the order they came.
pub fn marks(path: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix(super::initramfs::MARK))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_and_the_marks_are_read_back() {
        let dir = tempfile::Builder::new().prefix("fslab-test-").tempdir_in("/var/tmp").unwrap();
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
