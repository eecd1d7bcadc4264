//! `fslab free MOUNTPOINT`: free-space fragmentation of a mounted file
//! system, from GETFSMAP, as text (e2freefrag-like) or JSON.
//!
//! The renderers return the whole output as bytes and one place writes it,
//! so a closed pipe stops the command quietly and a test can check the text
//! without a file system.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::FreeArgs;
use super::format::bytes;
use crate::error::Result;
use crate::layout::freespace::{self, FreeSpace};
use crate::units::bytes_short;

/// Run `fslab free`.
pub fn run(args: &FreeArgs) -> Result<ExitCode> {
    let free = freespace::measure_with_reference(&args.mount_point, args.groups, args.reference)?;
    let rendered = if args.json { render_json(&free) } else { render_text(&free).into_bytes() };
    super::print(&rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// `--reference SIZE`: a size as [`crate::units::parse_bytes`] reads it,
/// above 0 (nothing is shorter than 0 bytes, so the headline would say
/// nothing).
pub(super) fn parse_reference(text: &str) -> std::result::Result<u64, String> {
    match crate::units::parse_bytes(text)? {
        0 => Err("the reference must be longer than 0 bytes: free extents shorter than it count as fragmented \
                  (for example 64K, or 1M, the default)"
            .to_string()),
        n => Ok(n),
    }
}

/// `{"schema":"fslab/1","free":{...}}`, pretty-printed, with a final newline.
fn render_json(free: &FreeSpace) -> Vec<u8> {
    crate::json_document("free", free)
}

/// A fraction as a percentage with one decimal, `-` when there is none.
fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// The headline, the figures, then the histogram, then the groups, for a
/// person.
fn render_text(f: &FreeSpace) -> String {
    let bs = u64::from(f.block_size.max(1));
    let blocks = |n: u64| n / bs;
    let pct = |part: u64, whole: u64| if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 };
    let reference = bytes_short(f.reference_bytes);
    let mut s = String::new();
    let device = f.device.as_deref().map_or_else(String::new, |d| format!(" on {d}"));
    let _ = writeln!(s, "{}: {}{device}, {}-byte blocks", f.mount_point, f.fs_type, f.block_size);
    let mut line = |label: &str, value: String, note: String| {
        let text = format!("  {label:<20}{value:>11}  {note}");
        let _ = writeln!(s, "{}", text.trim_end());
    };
    let headline = if f.fragmented_share.is_some() {
        format!("of free space in extents under {reference}")
    } else {
        "nothing is free".to_string()
    };
    line("fragmented", percent(f.fragmented_share), headline);
    line("size", bytes(f.total_bytes), format!("{} blocks", blocks(f.total_bytes)));
    line(
        "free",
        bytes(f.free_bytes),
        format!("{} blocks, {:.1}% of the file system", blocks(f.free_bytes), pct(f.free_bytes, f.total_bytes)),
    );
    line("free extents", f.free_extents.to_string(), String::new());
    let mean = f.mean_free_bytes.map_or_else(|| "-".to_string(), bytes);
    line("mean free extent", mean, "free / free extents".to_string());
    line("largest", bytes(f.largest_bytes), format!("{} blocks", blocks(f.largest_bytes)));
    line(
        "outside largest",
        percent(f.outside_largest),
        "of free space outside the largest free extent (1 - largest/free; grows with size)".to_string(),
    );

    if !f.histogram.is_empty() {
        let _ = writeln!(s, "\nFree extents by size (power-of-two buckets in blocks, as e2freefrag):");
        let _ = writeln!(
            s,
            "  {:>24}  {:>10}  {:>12}  {:>11}  {:>7}  {:>10}",
            "size", "extents", "blocks", "bytes", "percent", "cumulative"
        );
        let mut so_far = 0;
        for b in &f.histogram {
            so_far += b.bytes;
            let range = format!("[{}, {})", bytes(b.min_bytes), bytes(b.max_bytes + bs));
            let _ = writeln!(
                s,
                "  {range:>24}  {:>10}  {:>12}  {:>11}  {:>6.2}%  {:>9.2}%",
                b.extents,
                blocks(b.bytes),
                bytes(b.bytes),
                pct(b.bytes, f.free_bytes),
                pct(so_far, f.free_bytes)
            );
        }
    }

    if let Some(groups) = &f.groups {
        let kind = f.group_kind.map_or("group", |k| k.name());
        let _ = writeln!(
            s,
            "\nFree space per {kind} (extents split at group edges; fragmented: share in pieces under {reference}):"
        );
        let _ = writeln!(
            s,
            "  {:>7}  {:>11}  {:>11}  {:>11}  {:>6}  {:>10}  {:>11}  {:>10}",
            "group", "start", "length", "free", "free %", "extents", "largest", "fragmented"
        );
        for g in groups {
            let _ = writeln!(
                s,
                "  {:>7}  {:>11}  {:>11}  {:>11}  {:>5.1}%  {:>10}  {:>11}  {:>10}",
                g.group,
                bytes(g.start_bytes),
                bytes(g.length_bytes),
                bytes(g.free_bytes),
                pct(g.free_bytes, g.length_bytes),
                g.free_extents,
                bytes(g.largest_bytes),
                percent(g.fragmented_share)
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::freespace::{FreeBucket, GroupFree, GroupKind};

    fn sample(groups: bool) -> FreeSpace {
        FreeSpace {
            mount_point: "/mnt/t".into(),
            fs_type: "ext4".into(),
            device: Some("/dev/loop0".into()),
            block_size: 4096,
            total_bytes: 64 << 20,
            free_bytes: 3 * 4096 + (2 << 20),
            free_extents: 2,
            largest_bytes: 2 << 20,
            reference_bytes: 1 << 20,
            fragmented_share: Some((3 * 4096) as f64 / (3 * 4096 + (2 << 20)) as f64),
            mean_free_bytes: Some((3 * 4096 + (2 << 20)) / 2),
            share_1mib: Some((2u64 << 20) as f64 / (3 * 4096 + (2 << 20)) as f64),
            outside_largest: Some(1.0 - (2u64 << 20) as f64 / (3 * 4096 + (2 << 20)) as f64),
            fragmentation: Some(1.0 - (2u64 << 20) as f64 / (3 * 4096 + (2 << 20)) as f64),
            histogram: vec![
                FreeBucket { min_bytes: 2 * 4096, max_bytes: 3 * 4096, extents: 1, bytes: 3 * 4096 },
                FreeBucket { min_bytes: 512 * 4096, max_bytes: 1023 * 4096, extents: 1, bytes: 2 << 20 },
            ],
            group_kind: groups.then_some(GroupKind::BlockGroup),
            groups: groups.then(|| {
                vec![
                    GroupFree {
                        group: 0,
                        start_bytes: 0,
                        length_bytes: 32 << 20,
                        free_bytes: 3 * 4096,
                        free_extents: 1,
                        largest_bytes: 3 * 4096,
                        fragmented_share: Some(1.0),
                    },
                    GroupFree {
                        group: 1,
                        start_bytes: 32 << 20,
                        length_bytes: 32 << 20,
                        free_bytes: 2 << 20,
                        free_extents: 1,
                        largest_bytes: 2 << 20,
                        fragmented_share: Some(0.0),
                    },
                ]
            }),
        }
    }

    #[test]
    fn text_names_the_fs_and_prints_every_bucket() {
        let text = render_text(&sample(false));
        let expected = "\
/mnt/t: ext4 on /dev/loop0, 4096-byte blocks
  fragmented                 0.6%  of free space in extents under 1 MiB
  size                   64.0 MiB  16384 blocks
  free                    2.0 MiB  515 blocks, 3.1% of the file system
  free extents                  2
  mean free extent        1.0 MiB  free / free extents
  largest                 2.0 MiB  512 blocks
  outside largest            0.6%  of free space outside the largest free extent (1 - largest/free; grows with size)

Free extents by size (power-of-two buckets in blocks, as e2freefrag):
                      size     extents        blocks        bytes  percent  cumulative
       [8.0 KiB, 16.0 KiB)           1             3     12.0 KiB    0.58%       0.58%
        [2.0 MiB, 4.0 MiB)           1           512      2.0 MiB   99.42%     100.00%
";
        assert_eq!(text, expected, "\n{text}");
        assert!(text.lines().all(|l| l.len() <= 120), "fits 120 columns");
    }

    #[test]
    fn the_headline_states_its_reference_and_nothing_free_reads_as_such() {
        let mut f = sample(true);
        f.reference_bytes = 64 << 10;
        let text = render_text(&f);
        let first_figure = text.lines().nth(1).unwrap();
        assert!(first_figure.contains("fragmented") && first_figure.ends_with("under 64 KiB"), "{text}");
        assert!(text.contains("pieces under 64 KiB"), "the groups table states it too\n{text}");
        assert!(text.lines().all(|l| l.len() <= 120), "fits 120 columns\n{text}");
        f.fragmented_share = None;
        f.mean_free_bytes = None;
        f.outside_largest = None;
        let text = render_text(&f);
        assert!(text.lines().nth(1).unwrap().ends_with("-  nothing is free"), "{text}");
    }

    #[test]
    fn a_zero_reference_is_refused_and_sizes_parse() {
        let err = parse_reference("0").unwrap_err();
        assert!(err.contains("longer than 0 bytes") && err.contains("64K"), "{err}");
        assert_eq!(parse_reference("64K"), Ok(64 << 10));
        assert!(parse_reference("1X").is_err());
    }

    #[test]
    fn groups_table_follows_with_one_row_per_group() {
        let text = render_text(&sample(true));
        let table = text.split("Free space per block group").nth(1).expect("groups table");
        assert_eq!(table.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).count(), 2);
    }

    #[test]
    fn json_has_the_schema_and_the_design_fields() {
        let v: serde_json::Value = serde_json::from_slice(&render_json(&sample(true))).unwrap();
        assert_eq!(v["schema"], "fslab/1");
        let free = &v["free"];
        for key in [
            "total_bytes",
            "free_extents",
            "largest_bytes",
            "reference_bytes",
            "fragmented_share",
            "mean_free_bytes",
            "share_1mib",
            "outside_largest",
            "fragmentation",
            "free_bytes",
            "block_size",
            "fs_type",
            "mount_point",
        ] {
            assert!(free.get(key).is_some(), "missing {key}");
        }
        assert_eq!(free["histogram"][1]["max_bytes"], 1023 * 4096);
        assert_eq!(free["groups"][1]["start_bytes"], 32 << 20);
        assert_eq!(free["groups"][0]["fragmented_share"], 1.0);
        assert_eq!(free["fragmentation"], free["outside_largest"], "the fslab/1 name keeps its value");
    }
}
