//! `fslab frag` on real trees: totals equal the sum of what filefrag says
//! per file, contiguity in directory order equals what the test recomputes
//! from each file's FIEMAP records, and the walk survives what a real tree
//! throws at it.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{ScratchFs, fslab_expect, fslab_json, run};
use serde_json::Value;

/// Make `dirs` directories of `per_dir` files of varied small sizes, each
/// written and closed in order (a `tar x`), plus a few alternately-grown
/// files that are fragmented on purpose.
fn build_tree(root: &Path, dirs: usize, per_dir: usize) {
    let blob = vec![0x5Au8; 64 * 1024];
    for d in 0..dirs {
        let dir = root.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..per_dir {
            let size = [0usize, 100, 4096, 9000, 20000, 65536][(d * 7 + f * 3) % 6];
            std::fs::write(dir.join(format!("f{f:04}")), &blob[..size]).unwrap();
        }
    }
    let frag = root.join("fragmented");
    std::fs::create_dir_all(&frag).unwrap();
    let mut a = File::create(frag.join("a")).unwrap();
    let mut b = File::create(frag.join("b")).unwrap();
    for _ in 0..20 {
        a.write_all(&blob[..4096]).unwrap();
        a.sync_all().unwrap();
        b.write_all(&blob[..4096]).unwrap();
        b.sync_all().unwrap();
    }
    run("sync", &[]);
}

/// Every regular file under `root`, per directory in directory (readdir)
/// order, as `ls -U` lists it.
fn files_in_directory_order(root: &Path) -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let listing = run("ls", &["-U", "-a", dir.to_str().unwrap()]);
        let mut files = Vec::new();
        for name in listing.lines().filter(|n| *n != "." && *n != "..") {
            let p = dir.join(name);
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                files.push(p);
            }
        }
        out.insert(dir, files);
    }
    out
}

/// (first physical byte, physical end of last record) from xfs_io's
/// FIEMAP rows, which are in 512-byte units; None for a file without data.
fn physical_edges(path: &Path) -> Option<(u64, u64)> {
    let out = run("xfs_io", &["-r", "-c", "fiemap", path.to_str().unwrap()]);
    let ranges: Vec<(u64, u64)> = out
        .lines()
        .filter(|l| l.contains(": [") && !l.contains("hole"))
        .map(|l| {
            let range = l.rsplit(": ").next().unwrap().trim();
            let (a, b) = range.split_once("..").unwrap();
            (a.parse::<u64>().unwrap() * 512, (b.parse::<u64>().unwrap() + 1) * 512)
        })
        .collect();
    Some((ranges.first()?.0, ranges.last()?.1))
}

fn filefrag_extents(path: &Path) -> u64 {
    let out = run("filefrag", &[path.to_str().unwrap()]);
    out.rsplit(": ").next().unwrap().split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn totals_and_contiguity_match_the_real_tools() {
    for (fs_name, mkfs) in [("ext4", &["-b", "4096"][..]), ("ext2", &["-b", "4096"][..]), ("xfs", &[][..])] {
        let size = if fs_name == "xfs" { 512 } else { 256 };
        let Some(fs) = ScratchFs::new("frag_totals", fs_name, size, mkfs) else { return };
        let root = fs.path("tree");
        build_tree(&root, 6, 150);
        let v = fslab_json(&["frag", "--json", "--top", "3", root.to_str().unwrap()]);
        assert_eq!(v["schema"], "fslab/1");
        let s = &v["summary"];

        let by_dir = files_in_directory_order(&root);
        let all: Vec<&PathBuf> = by_dir.values().flatten().collect();
        assert_eq!(s["files"].as_u64().unwrap(), all.len() as u64, "{fs_name}: {s}");
        let extents: u64 = all.iter().map(|p| filefrag_extents(p)).sum();
        assert_eq!(s["extents"].as_u64().unwrap(), extents, "{fs_name}: extents vs filefrag");
        let bytes: u64 = all.iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
        assert_eq!(s["bytes"].as_u64().unwrap(), bytes);
        assert_eq!(s["errors"], 0, "{v}");

        // Contiguity between consecutive data files, recomputed here.
        let (mut pairs, mut contiguous) = (0u64, 0u64);
        for files in by_dir.values() {
            let mut previous_end = None;
            for f in files {
                if let Some((start, end)) = physical_edges(f) {
                    if let Some(prev) = previous_end {
                        pairs += 1;
                        contiguous += u64::from(prev == start);
                    }
                    previous_end = Some(end);
                }
            }
        }
        assert_eq!(s["next_file_pairs"].as_u64().unwrap(), pairs, "{fs_name}: {s}");
        let expected = contiguous as f64 / pairs as f64;
        assert!((s["next_file_contiguous"].as_f64().unwrap() - expected).abs() < 1e-12, "{fs_name}: {s} vs {expected}");

        // The histogram covers every file; the worst list is sorted.
        let hist: u64 = v["histogram"].as_array().unwrap().iter().map(|b| b["files"].as_u64().unwrap()).sum();
        assert_eq!(hist, all.len() as u64);
        // Only files in more than one extent can be among the worst.
        let worst = v["worst"].as_array().unwrap();
        let fragmented = all.iter().filter(|p| filefrag_extents(p) > 1).count();
        assert_eq!(worst.len(), fragmented.min(3), "{v}");
        let counts: Vec<u64> = worst.iter().map(|w| w["extents"].as_u64().unwrap()).collect();
        assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
        let max = all.iter().map(|p| filefrag_extents(p)).max().unwrap();
        assert_eq!(counts[0], max);
        for w in worst {
            assert_eq!(w["extents"].as_u64().unwrap(), filefrag_extents(Path::new(w["path"].as_str().unwrap())));
        }
    }
}

#[test]
fn thread_count_does_not_change_the_answer() {
    let Some(fs) = ScratchFs::new("frag_threads", "ext4", 256, &["-b", "4096"]) else { return };
    let root = fs.path("tree");
    // 900 files in one directory: several batches, joined in order.
    build_tree(&root, 1, 900);
    let strip = |mut v: Value| {
        v["worst"] = Value::Null;
        v
    };
    let one = strip(fslab_json(&["frag", "--json", "--threads", "1", root.to_str().unwrap()]));
    let four = strip(fslab_json(&["frag", "--json", "--threads", "4", root.to_str().unwrap()]));
    assert_eq!(one, four);
    assert_eq!(one["summary"]["files"], 902);
}

#[test]
fn a_batch_that_cannot_all_be_open_at_once_is_mapped_one_file_at_a_time() {
    let Some(fs) = ScratchFs::new("frag_nofile", "ext4", 128, &["-b", "4096"]) else { return };
    let root = fs.path("tree");
    build_tree(&root, 2, 300);
    let r = root.to_str().unwrap();
    let free = fslab_json(&["frag", "--json", "--threads", "2", r]);
    // 40 descriptors at most, hard: each thread's batch of 128 runs out,
    // and the walk must then open its files in turn, not count them failed.
    let out = run("prlimit", &["--nofile=40:40", env!("CARGO_BIN_EXE_fslab"), "frag", "--json", "--threads", "2", r]);
    let tight: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(tight["summary"]["errors"], 0, "{tight}");
    assert_eq!(tight["summary"], free["summary"]);
    assert_eq!(tight["summary"]["files"], 602);
}

#[test]
fn the_walk_stays_on_one_file_system_unless_asked() {
    let Some(outer) = ScratchFs::new("frag_mounts", "ext4", 256, &["-b", "4096"]) else { return };
    let root = outer.path("tree");
    build_tree(&root, 1, 10);
    let inner_mount = root.join("inner");
    std::fs::create_dir(&inner_mount).unwrap();
    let Some(inner) = ScratchFs::new("frag_mounts_inner", "xfs", 512, &[]) else { return };
    run("mount", &["--bind", inner.mount.to_str().unwrap(), inner_mount.to_str().unwrap()]);
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = common::unmount(&self.0);
        }
    }
    let _guard = Unmount(inner_mount.clone());
    std::fs::write(inner_mount.join("x"), vec![1u8; 8192]).unwrap();
    // A file bind-mounted over a file of the tree is a mount too.
    let covered = root.join("d00").join("f0000");
    run("mount", &["--bind", inner_mount.join("x").to_str().unwrap(), covered.to_str().unwrap()]);
    let _guard_file = Unmount(covered.clone());
    run("sync", &[]);
    let r = root.to_str().unwrap();
    let inside = fslab_json(&["frag", "--json", r])["summary"].clone();
    assert_eq!(inside["files"], 11, "{inside}");
    let across = fslab_json(&["frag", "--json", "--cross-mounts", r])["summary"].clone();
    assert_eq!(across["files"], 13, "{across}");
    // The covering file counts with its own size and its own device's layout.
    assert_eq!(
        across["bytes"].as_u64().unwrap() - inside["bytes"].as_u64().unwrap(),
        2 * 8192,
        "x twice: inside the inner mount and over f0000"
    );
}

#[test]
fn odd_entries_are_skipped_and_unreadable_ones_counted() {
    let Some(fs) = ScratchFs::new("frag_odd", "ext4", 256, &["-b", "4096"]) else { return };
    let root = fs.path("tree");
    build_tree(&root, 1, 5);
    let d = root.join("d00");
    run("mkfifo", &[d.join("fifo").to_str().unwrap()]);
    std::os::unix::fs::symlink("/etc/passwd", d.join("link-out")).unwrap();
    std::os::unix::fs::symlink("missing", d.join("dangling")).unwrap();
    std::os::unix::fs::symlink("/", d.join("loop-to-root")).unwrap();
    let closed = root.join("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::write(closed.join("secret"), b"x").unwrap();
    let private = root.join("private-file");
    std::fs::write(&private, b"y").unwrap();
    run("chmod", &["0700", closed.to_str().unwrap()]);
    run("chmod", &["0600", private.to_str().unwrap()]);
    run("chmod", &["0755", fs.mount.to_str().unwrap(), root.to_str().unwrap()]);

    // As root: FIFOs and symlinks are skipped (never followed), all files mapped.
    let v = fslab_json(&["frag", "--json", root.to_str().unwrap()]);
    assert_eq!(v["summary"]["files"], 5 + 2 + 2, "{v}");
    assert_eq!(v["summary"]["errors"], 0, "{v}");

    // As nobody: the closed directory and the private file are errors,
    // counted and listed by path; the rest is still walked, exit 0.
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_fslab"), "frag", "--json"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["errors"], 2, "{v}");
    assert_eq!(v["summary"]["files"], 5 + 2, "{v}");
    let paths: Vec<&str> = v["errors"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert!(paths.iter().any(|p| p.ends_with("/closed")), "{paths:?}");
    assert!(paths.iter().any(|p| p.ends_with("/private-file")), "{paths:?}");
}

#[test]
fn bad_paths_are_refused_with_exit_2() {
    let out = fslab_expect(&["frag", "/nonexistent/fslab-path"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/fslab-path"), "{stderr}");
    fslab_expect(&["frag", "--threads", "0", "."], 2);
}

#[test]
fn a_named_fifo_or_device_is_refused_as_map_refuses_it() {
    let dir = common::temp::dir("");
    let fifo = dir.path().join("fifo");
    run("mkfifo", &[fifo.to_str().unwrap()]);
    for path in [fifo.to_str().unwrap(), "/dev/null"] {
        let out = fslab_expect(&["frag", path], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(path) && stderr.contains("not a directory or regular file"), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing walked, no figures printed");
        fslab_expect(&["map", path], 2);
    }
}

#[test]
fn a_huge_thread_count_is_capped_and_said_once() {
    let dir = common::temp::dir("");
    for i in 0..53 {
        std::fs::write(dir.path().join(format!("f{i:02}")), b"x").unwrap();
    }
    let started = std::time::Instant::now();
    let out = fslab_expect(&["frag", "--threads", "20000", dir.path().to_str().unwrap()], 0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("--threads 20000: using 64").count(), 1, "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
    let out = fslab_expect(&["frag", "--threads", "8", dir.path().to_str().unwrap()], 0);
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_tree_on_a_file_system_without_fiemap_is_exit_3() {
    let out = fslab_expect(&["frag", "/proc/self/net"], 3);
    assert!(!out.stderr.is_empty());
}

/// `frag --disk`: the tree read on a modelled drive, each directory's
/// files one after another in directory order. The same bits whatever the
/// thread count; a directory of one file reads as `map --disk` reads that
/// file; each of the worst files says its own read, `map`'s; data not yet
/// placed is counted, not timed; without `--disk` nothing changes.
#[test]
fn a_named_disk_times_the_tree_in_directory_order() {
    let Some(fs) = ScratchFs::new("frag_disk", "ext4", 256, &["-b", "4096"]) else { return };
    let root = fs.path("tree");
    // 300 files a directory: three batches each, joined in order.
    build_tree(&root, 3, 300);
    let alone = root.join("alone");
    std::fs::create_dir(&alone).unwrap();
    std::fs::write(alone.join("file"), vec![1u8; 200 << 10]).unwrap();
    run("sync", &[]);
    let r = root.to_str().unwrap();
    let one = fslab_json(&["frag", "--json", "--top", "3", "--threads", "1", "--disk", "hdd-7200", r]);
    let four = fslab_json(&["frag", "--json", "--top", "3", "--threads", "4", "--disk", "hdd-7200", r]);
    assert_eq!(one, four, "the same bits on any thread count");
    assert_eq!(one["disk"], "hdd-7200");
    let s = &one["summary"];
    let with_data = files_in_directory_order(&root).values().flatten().filter(|p| std::fs::metadata(p).unwrap().len() > 0).count();
    assert_eq!((s["modelled_files"].as_u64().unwrap(), s["unmodelled_files"].as_u64().unwrap()), (with_data as u64, 0), "{s}");
    let (read, ideal) = (s["modelled_read_s"].as_f64().unwrap(), s["modelled_ideal_s"].as_f64().unwrap());
    assert!(read >= ideal && ideal > 0.0, "{s}");
    // (serde_json reads a float to within a unit in the last place.)
    assert!((s["modelled_read_ratio"].as_f64().unwrap() - read / ideal).abs() < 1e-12, "{s}");

    let map_read = |path: &str| fslab_json(&["map", "--json", "--no-list", "--disk", "hdd-7200", path])["files"][0]["modelled_read_s"].clone();
    for w in one["worst"].as_array().unwrap() {
        assert_eq!(w["modelled_read_s"], map_read(w["path"].as_str().unwrap()), "{w}");
    }
    let a = fslab_json(&["frag", "--json", "--disk", "hdd-7200", alone.to_str().unwrap()]);
    assert_eq!(a["summary"]["modelled_read_s"], map_read(alone.join("file").to_str().unwrap()), "{a}");

    // A file written and not yet synced has no place to read from.
    std::fs::write(root.join("d00").join("late"), vec![2u8; 64 << 10]).unwrap();
    let late = fslab_json(&["frag", "--json", "--disk", "hdd-7200", r]);
    let delalloc = fslab_json(&["map", "--json", "--no-list", root.join("d00/late").to_str().unwrap()])["files"][0]["flags"]["delalloc"].clone();
    if delalloc.as_u64().unwrap() > 0 {
        assert_eq!(late["summary"]["unmodelled_files"], 1, "{}", late["summary"]);
        assert!(late["summary"]["unmodelled_why"][0].as_str().unwrap().contains("not yet placed"), "{}", late["summary"]);
    }

    // Without --disk the output is what it always was.
    let plain = fslab_json(&["frag", "--json", r]);
    assert!(plain.get("disk").is_none() && plain["summary"].get("modelled_read_s").is_none(), "{plain}");
    assert!(plain["worst"].as_array().unwrap().iter().all(|w| w.get("modelled_read_s").is_none()), "{plain}");
    // The text: a line for the tree, two columns for the worst files.
    let text = String::from_utf8(fslab_expect(&["frag", "--top", "2", "--disk", "hdd-7200", r], 0).stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("modelled read ")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(" on hdd-7200 (directory order); ") && line.contains(" in one piece, ratio "), "{line}");
    assert!(line.chars().count() <= 120, "{line}");
    assert!(text.contains("     extents  perfection  layout       size       read    ratio  path\n"), "{text}");
    let out = fslab_expect(&["frag", "--disk", "floppy", r], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--disk floppy: no disk profile"), "{out:?}");
}

#[test]
fn a_file_costs_one_fiemap_and_one_stat_its_open_and_close_batched_and_a_block_mapped_one_is_known_from_its_extents() {
    // 1 KiB blocks without extents: a block group holds under 8 MiB of
    // data, so a 10 MiB file's perfection is 2 by the block-mapped rule
    // and 1 by the extents rule, and only knowing how it maps decides.
    let Some(fs) = ScratchFs::new("frag_calls", "ext4", 128, &["-b", "1024", "-O", "^extent,^64bit"]) else { return };
    let root = fs.path("tree");
    for (dir, first) in [("a", 0), ("b", 150)] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        for i in first..first + 150 {
            std::fs::write(root.join(dir).join(format!("f{i:03}")), vec![7u8; 100 + i * 10]).unwrap();
        }
    }
    std::fs::write(root.join("b").join("big"), vec![9u8; 10 << 20]).unwrap();
    run("sync", &[]);
    let r = root.to_str().unwrap();
    let frag = fslab_json(&["frag", "--json", r]);
    let map = fslab_json(&["map", "--json", root.join("b").join("big").to_str().unwrap()]);
    let by_map = map["files"][0]["perfection"].as_u64().unwrap();
    assert_eq!(by_map, 2, "map reads the inode's flags: {map}");
    // 300 small files of one extent at perfection, and the big one.
    let summary = &frag["summary"];
    assert_eq!(summary["perfection_extents"], 300 + by_map, "frag knows it from FIEMAP's merged extents: {summary}");

    // What the 151 files of b cost beyond a's walk: fstat and FIEMAP each
    // (and b and the root folder, opened and stat'ed once each), no lseek
    // and no inode-flags ioctl; their opens and closes a batch at a time
    // through io_uring where this kernel allows it, else one call each.
    let dir = common::temp::dir("");
    let calls_for = |path: &Path| -> BTreeMap<String, i64> {
        let out = dir.path().join("calls");
        let status = std::process::Command::new("strace")
            .args(["-f", "-c", "-U", "name,calls", "-o", out.to_str().unwrap(), env!("CARGO_BIN_EXE_fslab"), "frag"])
            .args(["--threads", "2", path.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let table = std::fs::read_to_string(&out).unwrap();
        table
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.to_string(), w.next()?.parse().ok()?))
            })
            .collect()
    };
    let (a, all) = (calls_for(&root.join("a")), calls_for(&root));
    let count = |calls: &BTreeMap<String, i64>, name: &str| calls.get(name).copied().unwrap_or(0);
    let more = |name: &str| count(&all, name) - count(&a, name);
    assert_eq!(all.get("lseek"), None, "{all:?}");
    // A walk's threads may each probe the file system once (fstatfs and
    // one ioctl for its block size) before the first one's answer is
    // shared: those ioctls are not the files' (CI saw two probes in the
    // smaller walk and one in the larger).
    assert_eq!(more("ioctl") - more("fstatfs"), 151, "FIEMAP once a file, nothing else: {a:?} then {all:?}");
    // Each probe stats its folder too (CI, loaded: 150 more fstat calls
    // with two probes in the smaller walk and one in the larger).
    assert!((151..=151 + 4).contains(&(more("fstat") - more("fstatfs"))), "fstat: {a:?} then {all:?}");
    let ring = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").is_ok_and(|v| v.trim() == "0");
    if ring {
        // 151 files in two batches: two submissions to open them, two to
        // close them, whichever thread ran which.
        assert!((4..=8).contains(&more("io_uring_enter")), "{a:?} then {all:?}");
        for name in ["openat", "close"] {
            assert!(more(name) <= 4, "{name} once a file although io_uring is there: {a:?} then {all:?}");
        }
    } else {
        for name in ["openat", "close"] {
            assert!((151..=151 + 4).contains(&more(name)), "{name}: {a:?} then {all:?}");
        }
    }
}
