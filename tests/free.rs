//! `fslab free` against the tools people trust: e2freefrag on ext4 and
//! `xfs_db freesp` on xfs, on scratch file systems whose free space was
//! fragmented on purpose; plus the refusals (btrfs, tmpfs, a missing path,
//! no root).
//!
//! Facts these comparisons rest on (see `src/layout/freespace.rs`):
//! - e2freefrag on a mounted device reads GETFSMAP itself (online mode), on
//!   an unmounted one the block bitmap (offline). While mounted, ext4's
//!   in-memory preallocations count as used; after a remount they are free,
//!   so fslab is compared with the online run while mounted and with the
//!   offline run after a remount.
//! - `xfs_db freesp` adds every AGFL block as a one-block free extent;
//!   GETFSMAP does not call them free. The test reads each AG's
//!   `flcount` and adds it to fslab's one-block row.
//! - XFS frees a deleted file's blocks in the background (inodegc); a sync
//!   usually but not always finishes that, an unmount always does. So the
//!   xfs test remounts once before measuring, then measures mounted,
//!   unmounts, and runs xfs_db.
//! - The headline `fragmented_share` (free bytes in extents shorter than the
//!   reference over free bytes) is checked against the same tools' rows:
//!   with a power-of-two reference it is exactly their rows below it.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{ScratchFs, fslab_expect, fslab_json, run};
use serde_json::Value;

/// Fill `dir` with 400 files of 4 KiB to 388 KiB (plus odd tails), sync,
/// delete every other one, sync: free space becomes holes of many sizes.
fn fragment(dir: &Path) {
    let chunk = vec![0x5au8; 64 * 1024];
    for i in 1..=400u64 {
        let size = (i * 7919 % 97 + 1) * 4096 + (i % 3) * 1000;
        let mut f = std::fs::File::create(dir.join(format!("f{i}"))).unwrap();
        let mut left = size as usize;
        while left > 0 {
            let n = left.min(chunk.len());
            f.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
    }
    syncfs(dir);
    for i in (1..=400).step_by(2) {
        std::fs::remove_file(dir.join(format!("f{i}"))).unwrap();
    }
    syncfs(dir);
}

fn syncfs(dir: &Path) {
    let d = std::fs::File::open(dir).unwrap();
    rustix::fs::syncfs(&d).unwrap();
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// What e2freefrag printed, in blocks.
#[derive(Debug, PartialEq)]
struct E2freefrag {
    block_size: u64,
    total_blocks: u64,
    free_blocks: u64,
    max_extent_blocks: u64,
    extents: u64,
    /// (smallest size in bytes, extents, blocks) per printed row.
    rows: Vec<(u64, u64, u64)>,
}

/// Parse e2freefrag's report (e2fsprogs misc/e2freefrag.c `dump_chunk_info`).
fn parse_e2freefrag(text: &str) -> E2freefrag {
    let field = |name: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no {name:?} in\n{text}"));
        line[name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let block_size = field("Blocksize:");
    let unit = |c: char| match c {
        'K' => 1u64 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        'T' => 1 << 40,
        other => panic!("unit {other}"),
    };
    let mut rows = Vec::new();
    let mut in_histogram = false;
    for line in text.lines() {
        if line.starts_with("Extent Size Range") {
            in_histogram = true;
            continue;
        }
        if !in_histogram || !line.contains("...") {
            continue;
        }
        // "   16K...   32K-  :             3            20    0.04%"
        let (range, counts) = line.split_once(':').unwrap();
        let start = range.split("...").next().unwrap().trim();
        let (digits, suffix) = start.split_at(start.len() - 1);
        let min_bytes = digits.parse::<u64>().unwrap() * unit(suffix.chars().next().unwrap());
        let mut nums = counts.split_whitespace();
        let extents = nums.next().unwrap().parse().unwrap();
        let blocks = nums.next().unwrap().parse().unwrap();
        rows.push((min_bytes, extents, blocks));
    }
    E2freefrag {
        block_size,
        total_blocks: field("Total blocks:"),
        free_blocks: field("Free blocks:"),
        max_extent_blocks: field("Max. free extent:") * 1024 / block_size,
        extents: field("Num. free extent:"),
        rows,
    }
}

/// fslab's figures in e2freefrag's terms.
fn as_e2freefrag(free: &Value) -> E2freefrag {
    let bs = u(free, "block_size");
    E2freefrag {
        block_size: bs,
        total_blocks: u(free, "total_bytes") / bs,
        free_blocks: u(free, "free_bytes") / bs,
        max_extent_blocks: u(free, "largest_bytes") / bs,
        extents: u(free, "free_extents"),
        rows: free["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (u(b, "min_bytes"), u(b, "extents"), u(b, "bytes") / bs))
            .collect(),
    }
}

fn assert_same_as_e2freefrag(free: &Value, text: &str, when: &str) {
    let ours = as_e2freefrag(free);
    let theirs = parse_e2freefrag(text);
    let reference = u(free, "reference_bytes");
    let below: u64 = theirs.rows.iter().filter(|r| r.0 < reference).map(|r| r.2).sum();
    // Equal but for the last bit of the division (bytes over bytes here,
    // blocks over blocks there).
    let share = free["fragmented_share"].as_f64().unwrap();
    assert!(
        (share - below as f64 / theirs.free_blocks as f64).abs() < 1e-12,
        "{when}: the headline {share} is e2freefrag's blocks in rows under {reference} bytes over its free blocks\n{text}"
    );
    assert_eq!(
        ours,
        theirs,
        "{when}: fslab free differs from e2freefrag\n--- fslab\n{}\n--- e2freefrag\n{text}",
        serde_json::to_string_pretty(free).unwrap()
    );
}

/// Group checks every `--groups` output must pass: contiguous groups that
/// cover the file system, and figures that add up to the totals.
fn assert_groups_add_up(free: &Value) {
    let groups = free["groups"].as_array().expect("--groups gives groups");
    assert!(!groups.is_empty());
    let mut at = u(&groups[0], "start_bytes");
    for (i, g) in groups.iter().enumerate() {
        assert_eq!(u(g, "group"), i as u64);
        assert_eq!(u(g, "start_bytes"), at, "groups are contiguous");
        at += u(g, "length_bytes");
        assert!(u(g, "largest_bytes") <= u(g, "free_bytes"));
        assert!(u(g, "largest_bytes") <= u(free, "largest_bytes"));
    }
    assert_eq!(at, u(free, "total_bytes"), "the last group ends where the file system does");
    let sum = |key: &str| groups.iter().map(|g| u(g, key)).sum::<u64>();
    assert_eq!(sum("free_bytes"), u(free, "free_bytes"), "group free space sums to the total");
    // Splitting at group edges can only add extents.
    assert!(sum("free_extents") >= u(free, "free_extents"));
    // ... and only shorten pieces, so no fewer bytes lie below the reference.
    let below = |v: &Value| v["fragmented_share"].as_f64().unwrap_or(0.0) * u(v, "free_bytes") as f64;
    let groups_below: f64 = groups.iter().map(below).sum();
    assert!(groups_below + 1.0 >= below(free), "groups' short pieces {groups_below} vs {}", below(free));
    let histogram = free["histogram"].as_array().unwrap();
    assert_eq!(histogram.iter().map(|b| u(b, "bytes")).sum::<u64>(), u(free, "free_bytes"));
    assert_eq!(histogram.iter().map(|b| u(b, "extents")).sum::<u64>(), u(free, "free_extents"));
}

/// `dumpe2fs` per group: (first block, last block, free blocks).
fn parse_dumpe2fs_groups(text: &str) -> Vec<(u64, u64, u64)> {
    let mut groups = Vec::new();
    let mut current: Option<(u64, u64)> = None;
    for line in text.lines() {
        // "Group 3: (Blocks 24576-32767) csum 0x1234 [INODE_UNINIT]"
        if let Some(rest) = line.strip_prefix("Group ").and_then(|r| r.split("(Blocks ").nth(1)) {
            let blocks = rest.split(')').next().unwrap();
            let (a, b) = blocks.split_once('-').unwrap();
            current = Some((a.parse().unwrap(), b.parse().unwrap()));
        } else if let (Some((a, b)), Some(free)) = (current, line.trim().split_once(" free blocks,")) {
            groups.push((a, b, free.0.parse().unwrap()));
            current = None;
        }
    }
    groups
}

#[test]
fn free_on_ext4_matches_e2freefrag() {
    // 8192 blocks per group makes 8 groups, some without a superblock
    // backup, so free runs cross group edges.
    let Some(mut fs) = ScratchFs::new("free_on_ext4_matches_e2freefrag", "ext4", 256, &["-b", "4096", "-g", "8192"])
    else {
        return;
    };
    fragment(&fs.mount);
    let mount = fs.mount.to_str().unwrap().to_string();

    // Mounted: fslab and e2freefrag's online mode read the same map.
    let mounted = fslab_json(&["free", &mount, "--json", "--groups"]);
    assert_eq!(mounted["schema"], "fslab/1");
    let free = &mounted["free"];
    assert_eq!(free["fs_type"], "ext4");
    assert_eq!(u(free, "block_size"), 4096);
    assert_eq!(u(free, "total_bytes"), 256 << 20);
    assert!(u(free, "free_extents") > 50, "fragmenting made many free extents: {free}");
    let online = run("e2freefrag", &[&fs.device]);
    assert_same_as_e2freefrag(free, &online, "mounted (e2freefrag online, GETFSMAP)");
    assert_groups_add_up(free);
    let groups = free["groups"].as_array().unwrap();
    let split = groups.iter().map(|g| u(g, "free_extents")).sum::<u64>();
    assert!(
        split > u(free, "free_extents"),
        "some free extent crosses a block-group edge and is counted once overall ({split} per group vs {})",
        u(free, "free_extents")
    );

    // A block device names its mount.
    let by_device = fslab_json(&["free", &fs.device, "--json"]);
    assert_eq!(by_device["free"]["free_extents"], free["free_extents"]);

    // The same in text.
    let text = String::from_utf8(fslab_expect(&["free", &mount, "--groups"], 0).stdout).unwrap();
    assert!(text.contains("ext4 on"), "{text}");
    assert!(text.contains("Free extents by size"), "{text}");
    assert!(text.contains("per block group"), "{text}");

    // Unmounted: e2freefrag reads the bitmap, dumpe2fs the group counts;
    // after a remount fslab must see exactly that.
    fs.unmount();
    let offline = run("e2freefrag", &[&fs.device]);
    let dumpe2fs = run("dumpe2fs", &[&fs.device]);
    fs.remount();
    let remounted = fslab_json(&["free", &mount, "--json", "--groups"]);
    let free2 = &remounted["free"];
    assert_same_as_e2freefrag(free2, &offline, "remounted (e2freefrag offline, block bitmap)");
    assert_groups_add_up(free2);

    // A shorter reference: the same map, a smaller figure, and still
    // e2freefrag's rows below it.
    let short = fslab_json(&["free", &mount, "--json", "--reference", "64K"]);
    let short = &short["free"];
    assert_eq!(u(short, "reference_bytes"), 64 << 10);
    assert_same_as_e2freefrag(short, &offline, "remounted, --reference 64K");
    let (at_1mib, at_64k) = (free2["fragmented_share"].as_f64().unwrap(), short["fragmented_share"].as_f64().unwrap());
    assert!(at_64k < at_1mib, "64K reads less than 1M: {at_64k} vs {at_1mib}");
    assert!(at_64k > 0.0, "fragment() leaves holes under 64 KiB: {short}");
    let text = String::from_utf8(fslab_expect(&["free", &mount, "--reference", "64K"], 0).stdout).unwrap();
    let headline = text.lines().nth(1).unwrap();
    assert!(headline.starts_with("  fragmented") && headline.ends_with("of free space in extents under 64 KiB"), "{text}");
    eprintln!("ext4 fragmented: {at_1mib:.4} under 1 MiB, {at_64k:.4} under 64 KiB");

    let ours: Vec<(u64, u64, u64)> = free2["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let first = u(g, "start_bytes") / 4096;
            (first, first + u(g, "length_bytes") / 4096 - 1, u(g, "free_bytes") / 4096)
        })
        .collect();
    assert_eq!(ours, parse_dumpe2fs_groups(&dumpe2fs), "groups and their free blocks as dumpe2fs counts them");
    eprintln!(
        "ext4: free blocks mounted {} (in-memory preallocations used), after remount {}",
        u(free, "free_bytes") / 4096,
        u(free2, "free_bytes") / 4096
    );
}

/// One `xfs_db freesp` histogram row.
#[derive(Debug, Clone, PartialEq)]
struct FreespRow {
    from: u64,
    to: u64,
    extents: u64,
    blocks: u64,
    pct: String,
}

/// Parse `xfs_db -c freesp` (xfsprogs db/freesp.c `printhist`).
fn parse_freesp(text: &str) -> Vec<FreespRow> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 5 || f[0] == "from" {
                return None;
            }
            Some(FreespRow {
                from: f[0].parse().ok()?,
                to: f[1].parse().ok()?,
                extents: f[2].parse().ok()?,
                blocks: f[3].parse().ok()?,
                pct: f[4].to_string(),
            })
        })
        .collect()
}

/// `xfs_db -c 'freesp -s'`'s summary: (total free extents, total free blocks).
fn parse_freesp_summary(text: &str) -> (u64, u64) {
    let field = |prefix: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix:?} in\n{text}"));
        line[prefix.len()..].trim().parse().unwrap()
    };
    (field("total free extents"), field("total free blocks"))
}

/// Each AG's AGF fields `freeblks`, `longest` and `flcount`.
fn agf_fields(device: &str, ag_count: usize) -> Vec<BTreeMap<String, u64>> {
    (0..ag_count)
        .map(|ag| {
            let select = format!("agf {ag}");
            let out = run("xfs_db", &["-r", "-c", &select, "-c", "print freeblks longest flcount", device]);
            out.lines()
                .filter_map(|l| l.split_once(" = "))
                .map(|(k, v)| (k.trim().to_string(), v.trim().parse().unwrap()))
                .collect()
        })
        .collect()
}

/// fslab's histogram as `xfs_db freesp` would print it: AGFL blocks added
/// as one-block extents, the last bin (the one from the largest power of two
/// below the AG size) ending at the AG size, as `histinit(agblocks)` makes
/// it, percentages of the whole with those blocks.
fn as_freesp(free: &Value, agfl_blocks: u64, ag_blocks: u64) -> Vec<FreespRow> {
    let bs = u(free, "block_size");
    let mut rows: Vec<(u64, u64, u64, u64)> = free["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (u(b, "min_bytes") / bs, u(b, "max_bytes") / bs, u(b, "extents"), u(b, "bytes") / bs))
        .collect();
    if agfl_blocks > 0 {
        match rows.first_mut() {
            Some(first) if first.0 == 1 => {
                first.2 += agfl_blocks;
                first.3 += agfl_blocks;
            }
            _ => rows.insert(0, (1, 1, agfl_blocks, agfl_blocks)),
        }
    }
    let total: u64 = rows.iter().map(|r| r.3).sum();
    rows.into_iter()
        .map(|(from, to, extents, blocks)| FreespRow {
            from,
            to: if from * 2 >= ag_blocks { ag_blocks } else { to },
            extents,
            blocks,
            pct: format!("{:.2}", blocks as f64 * 100.0 / total as f64),
        })
        .collect()
}

#[test]
fn free_on_xfs_matches_xfs_db_freesp() {
    xfs_matches_xfs_db_freesp("free_on_xfs_matches_xfs_db_freesp", &["-b", "size=4096"]);
}

/// With a reverse-mapping btree, XFS answers GETFSMAP from the rmapbt (free
/// space is the gaps) instead of the free-space btree.
#[test]
fn free_on_xfs_with_rmapbt_matches_xfs_db_freesp() {
    xfs_matches_xfs_db_freesp("free_on_xfs_with_rmapbt_matches_xfs_db_freesp", &["-b", "size=4096", "-m", "rmapbt=1"]);
}

fn xfs_matches_xfs_db_freesp(test: &str, mkfs_args: &[&str]) {
    let Some(mut fs) = ScratchFs::new(test, "xfs", 512, mkfs_args) else {
        return;
    };
    fragment(&fs.mount);
    // Let inodegc finish freeing the deleted files' blocks.
    fs.unmount();
    fs.remount();
    let mount = fs.mount.to_str().unwrap().to_string();
    let out = fslab_json(&["free", &mount, "--json", "--groups"]);
    let free = &out["free"];
    assert_eq!(free["fs_type"], "xfs");
    assert_eq!(u(free, "block_size"), 4096);
    assert_eq!(u(free, "total_bytes"), 512 << 20);
    assert!(u(free, "free_extents") > 50, "fragmenting made many free extents: {free}");
    assert_groups_add_up(free);
    let text = String::from_utf8(fslab_expect(&["free", &mount, "--groups"], 0).stdout).unwrap();
    assert!(text.contains("per allocation group"), "{text}");

    // On-disk btrees are current once unmounted.
    fs.unmount();
    let freesp = run("xfs_db", &["-r", "-c", "freesp", &fs.device]);
    let summary = run("xfs_db", &["-r", "-c", "freesp -s", &fs.device]);
    let groups = free["groups"].as_array().unwrap();
    let agf = agf_fields(&fs.device, groups.len());
    let agfl: u64 = agf.iter().map(|a| a["flcount"]).sum();
    let ag_blocks = u(&groups[0], "length_bytes") / 4096;

    let expected = as_freesp(free, agfl, ag_blocks);
    let rows = parse_freesp(&freesp);
    assert_eq!(
        expected,
        rows,
        "fslab free (+{agfl} AGFL blocks) differs from xfs_db freesp\n--- fslab\n{}\n--- xfs_db\n{freesp}",
        serde_json::to_string_pretty(free).unwrap()
    );
    let (extents, blocks) = parse_freesp_summary(&summary);
    // The headline against `freesp -s`'s rows: its blocks in bins under the
    // 1 MiB reference (256 blocks), less the AGFL's one-block extents, over
    // its free blocks less the same.
    assert_eq!(u(free, "reference_bytes"), 1 << 20);
    let below: u64 = parse_freesp(&summary).iter().filter(|r| r.from < 256).map(|r| r.blocks).sum();
    // Equal but for the division's last bit.
    let share = free["fragmented_share"].as_f64().unwrap();
    assert!(
        (share - (below - agfl) as f64 / (blocks - agfl) as f64).abs() < 1e-12,
        "the headline {share} is freesp -s's blocks under 1 MiB over its free blocks (AGFL left out)\n{summary}"
    );
    eprintln!("xfs fragmented: {} under 1 MiB", free["fragmented_share"]);
    assert_eq!(extents, u(free, "free_extents") + agfl, "freesp -s extents\n{summary}");
    assert_eq!(blocks, u(free, "free_bytes") / 4096 + agfl, "freesp -s blocks\n{summary}");

    // Per AG: the AGF's own counters.
    for (g, a) in groups.iter().zip(&agf) {
        assert_eq!(u(g, "free_bytes") / 4096, a["freeblks"], "AG {}: freeblks", u(g, "group"));
        assert_eq!(u(g, "largest_bytes") / 4096, a["longest"], "AG {}: longest", u(g, "group"));
    }
}

/// The headline does not read a fresh file system as fragmented, where
/// `outside_largest` (the old `fragmentation`) does, only because the free
/// space is cut into groups.
#[test]
fn free_headline_reads_zero_on_fresh_ext4_and_xfs() {
    for (fs, mkfs_args) in [("ext4", &["-b", "4096"][..]), ("xfs", &["-b", "size=4096"][..])] {
        let test = format!("free_headline_reads_zero_on_fresh_{fs}");
        let Some(scratch) = ScratchFs::new(&test, fs, 1024, mkfs_args) else {
            return;
        };
        let out = fslab_json(&["free", scratch.mount.to_str().unwrap(), "--json"]);
        let free = &out["free"];
        let share = free["fragmented_share"].as_f64().unwrap();
        let outside = free["outside_largest"].as_f64().unwrap();
        eprintln!("fresh 1 GiB {fs}: fragmented {share}, outside largest {outside}");
        match fs {
            // Free space is a few runs of 64-256 MiB between group metadata.
            "ext4" => assert_eq!(share, 0.0, "{free}"),
            // mkfs.xfs leaves one short gap among AG 0's headers and first
            // inode chunk (6 blocks here): a few thousandths of a percent.
            _ => assert!(share < 0.0001, "{free}"),
        }
        assert!(outside > 0.5, "the old figure calls a fresh 1 GiB fs fragmented: {free}");
        assert_eq!(free["fragmentation"], free["outside_largest"]);
        assert_eq!(u(free, "mean_free_bytes"), u(free, "free_bytes") / u(free, "free_extents"));
    }
}

#[test]
fn free_reference_zero_or_garbage_is_a_usage_error() {
    // Refused while reading the command line, before the path is looked at.
    let out = fslab_expect(&["free", "/nonexistent/fslab-free-test", "--reference", "0"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--reference") && err.contains("longer than 0 bytes"), "{err}");
    let out = fslab_expect(&["free", "/nonexistent/fslab-free-test", "--reference", "1X"], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--reference") && err.contains("unknown size suffix"), "{err}");
}

#[test]
fn free_refuses_btrfs_with_exit_3() {
    let Some(fs) = ScratchFs::new("free_refuses_btrfs_with_exit_3", "btrfs", 256, &[]) else {
        return;
    };
    let out = fslab_expect(&["free", fs.mount.to_str().unwrap()], 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("btrfs") && err.contains("GETFSMAP is not supported"), "{err}");
}

#[test]
fn free_on_tmpfs_is_unsupported() {
    let shm = Path::new("/dev/shm");
    match rustix::fs::statfs(shm) {
        Ok(s) if s.f_type == 0x0102_1994 => {}
        _ => {
            eprintln!("skipping free_on_tmpfs_is_unsupported: /dev/shm is not a tmpfs here");
            return;
        }
    }
    let out = fslab_expect(&["free", "/dev/shm", "--json"], 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tmpfs") && err.contains("GETFSMAP"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn free_missing_path_is_a_usage_error() {
    let path = "/nonexistent/fslab-free-test";
    let out = fslab_expect(&["free", path], 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(path), "{err}");
}

/// Run fslab as nobody (uid 65534).
fn fslab_as_nobody(args: &[&str]) -> std::process::Output {
    std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_fslab")])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn free_without_root_measures_the_same_or_says_it_needs_root() {
    if !common::have("setpriv") {
        eprintln!("skipping free_without_root_...: setpriv is not installed");
        return;
    }
    let Some(fs) = ScratchFs::new("free_without_root", "ext4", 64, &["-b", "4096"]) else {
        return;
    };
    // Let an unprivileged user reach the mount point.
    let parent = fs.mount.parent().unwrap();
    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mount = fs.mount.to_str().unwrap();
    let as_root = fslab_json(&["free", mount, "--json"]);
    let out = fslab_as_nobody(&["free", mount, "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        // Kernels that keep GETFSMAP for CAP_SYS_ADMIN.
        Some(3) => assert!(err.contains("needs root (CAP_SYS_ADMIN)"), "{err}"),
        // Linux 6.18 lets anyone read it; without the superblock (the
        // device is root's) the size comes from the map's end instead.
        Some(0) => {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v, as_root, "the same figures without root");
            let out = fslab_as_nobody(&["free", mount, "--groups"]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{err}");
            assert!(err.contains("cannot split by group") && err.contains("superblock"), "{err}");
        }
        other => panic!("fslab free as nobody: exit {other:?}\n{err}"),
    }
}
