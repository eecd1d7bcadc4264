//! `fslab list --disks`: the drives the disk model knows (`src/model/`), a
//! row each within [`WIDTH`] columns, then each one's source in full; with
//! `--disk-profile FILE`, the drive that file describes, last.
//!
//! The profile file is read only when named (never one found in the
//! current folder), followed to by the rule for named files (another
//! user's symbolic link is refused), and read only when it is a regular
//! file of root's or the invoking user's ([`crate::model::profile_file`]).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use super::ListArgs;
use super::verdicts::{WIDTH, wrap};
use crate::error::Result;
use crate::model::{Drive, Profile, builtin};
use crate::text::escape;
use crate::units::{bytes_short, short_number};

/// Run `fslab list --disks`.
pub(super) fn run(args: &ListArgs) -> Result<ExitCode> {
    let added = match &args.disk_profile {
        Some(path) => vec![crate::plan::disk::profile_file(path)?],
        None => Vec::new(),
    };
    let listed = Listed { profiles: builtin::all(&added), file: args.disk_profile.as_deref() };
    let rendered = if args.json { listed.json() } else { listed.text().into_bytes() };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// What is listed: the built-in profiles, then the one the file added.
struct Listed<'a> {
    profiles: Vec<Profile>,
    file: Option<&'a Path>,
}

/// A table's headings, in order.
const HEADINGS: [&str; 8] = ["disk", "kind", "rpm", "access", "MB/s", "cache", "flush", "source"];

/// Which of [`HEADINGS`] are numbers, set to the right.
const RIGHT: [bool; 8] = [false, false, true, false, true, false, false, false];

impl Listed<'_> {
    /// Where profile `i` came from: the file, or none for a built-in one.
    fn file_of(&self, i: usize) -> Option<&Path> {
        self.file.filter(|_| i + 1 == self.profiles.len())
    }

    /// The table, what its columns mean, and every profile's source.
    fn text(&self) -> String {
        let rows: Vec<[String; 8]> = self.profiles.iter().map(cells).collect();
        let mut widths: Vec<usize> = HEADINGS.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row.iter()).take(7) {
                *w = (*w).max(cell.chars().count());
            }
        }
        // The source takes what the other columns leave, cut with `…`.
        let taken: usize = widths[..7].iter().sum::<usize>() + 2 * 7;
        widths[7] = WIDTH.saturating_sub(taken).max(1);
        let mut s = String::new();
        let headings = HEADINGS.map(String::from);
        for row in std::iter::once(&headings).chain(&rows) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                let cell = cut(cell, widths[i]);
                let pad = widths[i] - cell.chars().count();
                match (i, RIGHT[i]) {
                    (7, _) => line.push_str(&cell),
                    (_, true) => line.push_str(&format!("{}{cell}  ", " ".repeat(pad))),
                    (_, false) => line.push_str(&format!("{cell}{}  ", " ".repeat(pad))),
                }
            }
            let _ = writeln!(s, "{}", line.trim_end());
        }
        s.push_str(&wrap(
            "access: a disk's seek (track-to-track/average/full stroke), an SSD's read/write latency. MB/s: a disk's \
             media rate at the outer/inner edge, an SSD's read/write rate. wc: the disk's write cache, whose \
             flush writes what it holds to the media (destage); off, a flush has nothing to do. PLP: power-loss \
             protection.",
            0,
        ));
        s.push_str("\nsources:\n");
        for (i, p) in self.profiles.iter().enumerate() {
            let from = self.file_of(i).map(|f| format!(" (from {})", crate::text::path(f))).unwrap_or_default();
            s.push_str(&wrap(&format!("  {}{from}, {}. Source: {}", escape(&p.name), escape(&p.about), escape(&p.source)), 4));
        }
        s
    }

    /// `{"disks": [...]}`: each profile as a profile file gives it, with
    /// its `kind` and the `file` it came from (null when built in).
    fn json(&self) -> Vec<u8> {
        let disks: Vec<serde_json::Value> = self
            .profiles
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut value = serde_json::to_value(p).expect("a profile serialises");
                let kind = match p.drive {
                    Drive::Disk(_) => "disk",
                    Drive::Ssd(_) => "ssd",
                };
                value["kind"] = kind.into();
                value["file"] = self.file_of(i).map(|f| f.to_string_lossy().into_owned()).into();
                value
            })
            .collect();
        crate::json_document("disks", &disks)
    }
}

/// One profile's cells, in [`HEADINGS`]' order.
fn cells(p: &Profile) -> [String; 8] {
    let source = escape(p.source.split_once(':').map_or(p.source.as_str(), |(named, _)| named)).into_owned();
    let name = escape(&p.name).into_owned();
    match &p.drive {
        Drive::Disk(d) => [
            name,
            "disk".into(),
            d.rpm.to_string(),
            format!("{}/{}/{} ms", ms(d.track_to_track_s), ms(d.average_seek_s), ms(d.full_stroke_s)),
            format!("{}/{}", mb(d.outer_bytes_per_s), mb(d.inner_bytes_per_s)),
            format!("{}, wc {}", bytes_short(d.buffer_bytes), if d.write_cache { "on" } else { "off" }),
            if d.write_cache { "destage".into() } else { "0".into() },
            source,
        ],
        Drive::Ssd(s) => [
            name,
            "ssd".into(),
            "-".into(),
            format!("{}/{} µs", short_number(s.read_latency_s * 1e6), short_number(s.write_latency_s * 1e6)),
            format!("{}/{}", mb(s.read_bytes_per_s), mb(s.write_bytes_per_s)),
            if s.power_loss_protection { "PLP".into() } else { "volatile".into() },
            seconds(s.flush_s),
            source,
        ],
    }
}

/// Milliseconds, about three digits.
fn ms(seconds: f64) -> String {
    short_number(seconds * 1e3)
}

/// Datasheet MB/s (10^6 bytes a second).
fn mb(bytes_per_s: u64) -> String {
    short_number(bytes_per_s as f64 / 1e6)
}

/// A short time with its unit: `20 µs`, `2 ms`, `1.5 s`.
fn seconds(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{} s", short_number(s)),
        s if s >= 1e-3 => format!("{} ms", short_number(s * 1e3)),
        s => format!("{} µs", short_number(s * 1e6)),
    }
}

/// `text` in at most `width` characters, its end cut to `…`.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}
