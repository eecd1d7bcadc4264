//! Which mount a file lives on: its file-system type name and source
//! device, read from `/proc/self/mountinfo`.
//!
//! The type name is what tells ext2, ext3 and ext4 apart; they share one
//! magic number, and `statfs` cannot.

use std::fs;
use std::path::PathBuf;

/// One line of `/proc/self/mountinfo`, the fields fslab uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// The mount's id (the first field; `statx` gives it as `stx_mnt_id`).
    pub id: u64,
    /// Device number as `major:minor`.
    pub major: u32,
    /// Minor device number.
    pub minor: u32,
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// File-system type name as the kernel knows it (`ext4`, `xfs`, ...).
    pub fs_type: String,
    /// What was mounted (a device path for block file systems).
    pub source: String,
}

/// The mount whose device number is `major:minor`, if any.
pub fn find_by_device(major: u32, minor: u32) -> Option<MountEntry> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().filter_map(parse_line).find(|m| m.major == major && m.minor == minor)
}

/// Every mount of this process's namespace, in mountinfo order.
pub fn all() -> Vec<MountEntry> {
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines().filter_map(parse_line).collect()
}

/// The mount with id `id` (a file's `stx_mnt_id`), if any.
pub fn find_by_id(id: u64) -> Option<MountEntry> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().filter_map(parse_line).find(|m| m.id == id)
}

/// The mount mounted exactly at `mount_point`, the last one if stacked.
pub fn find_by_mount_point(mount_point: &std::path::Path) -> Option<MountEntry> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().rev().filter_map(parse_line).find(|m| m.mount_point == mount_point)
}

/// Parse one mountinfo line (proc(5)): `id parent maj:min root mount-point
/// options [optional fields...] - fstype source super-options`.
fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let mut left = left.split(' ');
    let id = left.next()?;
    let _parent = left.next()?;
    let (major, minor) = left.next()?.split_once(':')?;
    let _root = left.next()?;
    let mount_point = unescape(left.next()?);
    let mut right = right.split(' ');
    let fs_type = right.next()?.to_string();
    let source = unescape(right.next()?);
    Some(MountEntry {
        id: id.parse().ok()?,
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        mount_point: PathBuf::from(mount_point),
        fs_type,
        source,
    })
}

/// Undo mountinfo's octal escapes (`\040` for a space, `\012` newline, ...).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let value = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(value);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_line_with_optional_fields_and_escapes() {
        let line = "36 35 7:3 / /var/tmp/a\\040b rw,relatime shared:1 master:2 - ext3 /dev/loop3 rw,errors=continue";
        let m = parse_line(line).unwrap();
        assert_eq!((m.major, m.minor), (7, 3));
        assert_eq!(m.mount_point, PathBuf::from("/var/tmp/a b"));
        assert_eq!(m.fs_type, "ext3");
        assert_eq!(m.source, "/dev/loop3");
    }

    #[test]
    fn the_root_mount_is_found() {
        let st = rustix::fs::stat("/").unwrap();
        let m = find_by_device(rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        assert!(m.is_some(), "/ has a mountinfo line");
    }
}
