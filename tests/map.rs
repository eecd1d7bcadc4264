//! `fslab map` against the real tools on real loop-mounted file systems:
//! `extents` must equal what `filefrag` prints, `records` the data rows of
//! `xfs_io -c fiemap`, on files whose layout each test crafts.

mod common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use common::{FILE_SYSTEMS, ScratchFs, fslab_expect, fslab_json, run};
use serde_json::Value;

const BS: u64 = 4096;

/// filefrag's "N extents found" for `path`.
fn filefrag_extents(path: &Path) -> u64 {
    let out = run("filefrag", &[path.to_str().unwrap()]);
    let tail = out.rsplit(": ").next().unwrap();
    tail.split_whitespace().next().unwrap().parse().unwrap_or_else(|_| panic!("filefrag said {out:?}"))
}

/// Data rows (not holes) of `xfs_io -c fiemap` for `path`: one per FIEMAP
/// record.
fn xfs_io_records(path: &Path) -> u64 {
    let out = run("xfs_io", &["-r", "-c", "fiemap", path.to_str().unwrap()]);
    out.lines()
        .filter(|l| l.trim_start().split(':').next().is_some_and(|n| n.parse::<u64>().is_ok()))
        .filter(|l| !l.contains("hole"))
        .count() as u64
}

fn map_one(path: &Path) -> Value {
    let v = fslab_json(&["map", "--json", path.to_str().unwrap()]);
    assert_eq!(v["schema"], "fslab/1");
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v}");
    v["files"][0].clone()
}

fn fallocate(f: &File, mode: i32, offset: u64, len: u64) {
    // SAFETY: plain fallocate(2) on an open descriptor.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), mode, offset as i64, len as i64) };
    assert_eq!(rc, 0, "fallocate: {}", std::io::Error::last_os_error());
}

fn has_fallocate(fs: &ScratchFs) -> bool {
    fs.fs != "ext2" && fs.fs != "ext3"
}

/// The crafted files: (name, what it is). Each is made by `craft`.
fn craft(fs: &ScratchFs) -> Vec<&'static str> {
    let mut made = Vec::new();
    let dir = &fs.mount;

    // fallocate then punch every other block: one extent by filefrag's
    // hole rule, many records.
    // Block-mapped ext2/ext3 have no fallocate: there the same pattern is
    // written sparsely instead.
    let f = File::create(dir.join("punched")).unwrap();
    let block = vec![0xA5u8; BS as usize];
    if has_fallocate(fs) {
        fallocate(&f, 0, 0, 64 * BS);
        for i in (1..64).step_by(2) {
            fallocate(&f, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, i * BS, BS);
        }
    } else {
        for i in (0..64).step_by(2) {
            f.write_all_at(&block, i * BS).unwrap();
        }
        f.set_len(64 * BS).unwrap();
    }
    made.push("punched");

    // Two files appended in alternation, each write fsynced: they
    // interleave on the device.
    let mut a = File::create(dir.join("alt-a")).unwrap();
    let mut b = File::create(dir.join("alt-b")).unwrap();
    for _ in 0..32 {
        a.write_all(&block).unwrap();
        a.sync_all().unwrap();
        b.write_all(&block).unwrap();
        b.sync_all().unwrap();
    }
    made.extend(["alt-a", "alt-b"]);

    // A sparse file: data at 0, 1 MiB and 5 MiB, size 8 MiB.
    let s = File::create(dir.join("sparse")).unwrap();
    for off in [0u64, 1 << 20, 5 << 20] {
        s.write_all_at(&block, off).unwrap();
    }
    s.set_len(8 << 20).unwrap();
    made.push("sparse");

    // Fully sparse, and empty.
    File::create(dir.join("hole-only")).unwrap().set_len(4 << 20).unwrap();
    File::create(dir.join("empty")).unwrap();
    made.extend(["hole-only", "empty"]);

    // An unwritten extent with a written middle (ext2 has no fallocate).
    if has_fallocate(fs) {
        let u = File::create(dir.join("unwritten")).unwrap();
        fallocate(&u, 0, 0, 256 * BS);
        u.write_all_at(&vec![1u8; 16 * BS as usize], 64 * BS).unwrap();
        made.push("unwritten");
    }

    // Blocks kept past EOF: 8 blocks written, 56 more allocated beyond
    // them with KEEP_SIZE (what xfs's speculative preallocation looks like,
    // on every file system that can fallocate).
    if has_fallocate(fs) {
        let k = File::create(dir.join("keep-size")).unwrap();
        k.write_all_at(&vec![2u8; 8 * BS as usize], 0).unwrap();
        k.sync_all().unwrap();
        fallocate(&k, libc::FALLOC_FL_KEEP_SIZE, 8 * BS, 56 * BS);
        made.push("keep-size");
    }

    // Seed 000's order through a shared mapping: ftruncate, mmap, one store
    // per page at (i+23)*1000000007 mod npg, msync.
    let npg: u64 = 2048;
    let m = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(dir.join("mmap-seed000")).unwrap();
    m.set_len(npg * BS).unwrap();
    // SAFETY: a fresh shared mapping of a file we just sized; unmapped below.
    unsafe {
        let len = (npg * BS) as usize;
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, m.as_raw_fd(), 0);
        assert_ne!(p, libc::MAP_FAILED);
        for i in 0..npg {
            let page = ((i + 23).wrapping_mul(1_000_000_007)) % npg;
            *(p as *mut u8).add((page * BS) as usize).cast::<u32>() = i as u32 + 1;
        }
        assert_eq!(libc::msync(p, len, libc::MS_SYNC), 0);
        assert_eq!(libc::munmap(p, len), 0);
    }
    made.push("mmap-seed000");

    // Reflinked copy where the file system can share blocks.
    if fs.fs == "xfs" || fs.fs == "btrfs" {
        std::fs::write(dir.join("original"), vec![7u8; 64 * BS as usize]).unwrap();
        run("cp", &["--reflink=always", dir.join("original").to_str().unwrap(), dir.join("reflinked").to_str().unwrap()]);
        made.extend(["original", "reflinked"]);
    }
    // Settle delayed allocation so both tools see the same final layout.
    run("sync", &[]);
    made
}

#[test]
fn extents_and_records_match_filefrag_and_fiemap_on_every_file_system() {
    for (fs_name, mkfs) in FILE_SYSTEMS {
        let size = if fs_name == "xfs" { 512 } else { 256 };
        let Some(fs) = ScratchFs::new("map_matches_filefrag", fs_name, size, mkfs) else { return };
        for name in craft(&fs) {
            let path = fs.path(name);
            let m = map_one(&path);
            let ctx = format!("{fs_name}/{name}: {m}");
            assert_eq!(m["fs_type"], fs_name, "{ctx}");
            assert_eq!(m["block_size"], BS, "{ctx}");
            assert_eq!(m["extents"].as_u64().unwrap(), filefrag_extents(&path), "extents vs filefrag, {ctx}");
            // Block-mapped ext2/ext3: the kernel cuts records by request
            // size, so only the extent count is exact there.
            if fs_name != "ext2" && fs_name != "ext3" {
                assert_eq!(m["records"].as_u64().unwrap(), xfs_io_records(&path), "records vs xfs_io fiemap, {ctx}");
            }
            let list = m["extent_list"].as_array().unwrap();
            assert_eq!(list.len() as u64, m["records"].as_u64().unwrap(), "{ctx}");
            // `eof` on exactly the rows where filefrag -v prints it.
            let ours: Vec<u64> = list.iter().filter(|r| flag_names(r).contains(&"eof")).map(|r| r["logical"].as_u64().unwrap() / BS).collect();
            let theirs: Vec<u64> = filefrag_rows(&path).into_iter().filter(|(_, f)| f.split(',').any(|f| f == "eof")).map(|(l, _)| l).collect();
            assert_eq!(ours, theirs, "eof rows (logical blocks) vs filefrag -v, {ctx}");
            let mapped: u64 = list.iter().map(|e| e["length"].as_u64().unwrap()).sum();
            assert_eq!(mapped, m["mapped_bytes"].as_u64().unwrap(), "{ctx}");
            match name {
                "empty" | "hole-only" => {
                    assert_eq!(m["extents"], 0, "{ctx}");
                    assert!(m["layout_score"].is_null(), "no data, no score: {ctx}");
                }
                "punched" if has_fallocate(&fs) => {
                    assert_eq!(m["extents"], 1, "filefrag's hole rule: {ctx}");
                    assert_eq!(m["records"], 32, "{ctx}");
                    assert_eq!(m["flags"]["unwritten"], 32, "{ctx}");
                    assert_eq!(m["holes"], 32, "31 punched + the tail: {ctx}");
                }
                "sparse" => {
                    assert_eq!(m["holes"], 3, "{ctx}");
                    // Not simply size - 3 blocks: xfs may keep speculative
                    // preallocation past the last write as unwritten.
                    let mapped = m["mapped_bytes"].as_u64().unwrap();
                    assert!(mapped >= 3 * BS, "{ctx}");
                    assert_eq!(m["hole_bytes"].as_u64().unwrap() + mapped, 8 << 20, "{ctx}");
                }
                "unwritten" => {
                    assert!(m["flags"]["unwritten"].as_u64().unwrap() >= 2, "{ctx}");
                    assert!(list.iter().any(|e| e["flags"].as_array().unwrap().iter().all(|f| f != "unwritten")), "{ctx}");
                }
                "reflinked" | "original" => {
                    assert_eq!(m["flags"]["shared"], m["records"], "every record shared: {ctx}");
                }
                "keep-size" => {
                    assert_eq!(m["past_eof_bytes"].as_u64().unwrap(), 56 * BS, "{ctx}");
                    assert!(m["past_eof_records"].as_u64().unwrap() >= 1, "{ctx}");
                    assert_eq!(m["holes"], 0, "{ctx}");
                    let last = list.last().unwrap();
                    assert!(flag_names(last).contains(&"past_eof") && flag_names(last).contains(&"unwritten"), "{ctx}");
                }
                "alt-a" | "alt-b" => {
                    assert_eq!(m["mapped_bytes"], 32 * BS, "{ctx}");
                }
                _ => {}
            }
            assert_eq!(
                m["flags"]["last"].as_u64().unwrap(),
                u64::from(m["records"].as_u64().unwrap() > 0),
                "exactly one record is the last: {ctx}"
            );
        }
    }
}

#[test]
fn compressed_btrfs_records_are_not_read_as_backward_jumps() {
    let Some(fs) = ScratchFs::with_mount_opts("map_compressed", "btrfs", 256, &[], Some("compress-force=zstd")) else {
        return;
    };
    // 32 MiB of one line: 256 records of 128 KiB, each zstd'd into a
    // block or so, which btrfs lays down back to back.
    let path = fs.path("compressible");
    let mut file = File::create(&path).unwrap();
    let line = b"fslab writes this compressible line again and again\n";
    let chunk: Vec<u8> = line.iter().copied().cycle().take(1 << 20).collect();
    for _ in 0..32 {
        file.write_all(&chunk).unwrap();
    }
    file.sync_all().unwrap();
    drop(file);

    let f = map_one(&path);
    let records = f["records"].as_u64().unwrap();
    assert!(records >= 200, "compressed records are at most 128 KiB: {f}");
    // A block written back on its own (another run's small dirty limits
    // start writeback early) cannot shrink, and btrfs stores it raw:
    // every record longer than a block is encoded, raw ones are rare.
    let raw: Vec<u64> = f["extent_list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["flags"].as_array().unwrap().iter().any(|flag| flag == "encoded"))
        .map(|e| e["length"].as_u64().unwrap())
        .collect();
    assert!(raw.iter().all(|&len| len <= 4096) && raw.len() as u64 <= records / 50, "raw records {raw:?}: {f}");
    assert_eq!(f["flags"]["encoded"].as_u64().unwrap() + raw.len() as u64, records, "{f}");
    assert_eq!(f["extents"].as_u64().unwrap(), filefrag_extents(&path), "extents stay filefrag's");
    // FIEMAP gives the logical 128 KiB; taken as the length on the
    // device, each next record would be a 124 KiB backward jump.
    assert!(f["backward_jumps"].as_u64().unwrap() <= records / 50, "{f}");
    assert!(f["seek_distance"].as_u64().unwrap() < 4 << 20, "{f}");
    assert!(f["layout_score"].as_f64().unwrap() > 0.99, "{f}");
}

#[test]
fn perfection_of_1_gib_on_4k_ext3_is_the_seeds_9() {
    let Some(fs) = ScratchFs::new("perfection_ext3", "ext3", 256, &["-b", "4096"]) else { return };
    let path = fs.path("big");
    File::create(&path).unwrap().set_len(1 << 30).unwrap();
    let m = map_one(&path);
    assert_eq!(m["perfection"], 9, "{m}");
    // And the rule's group size is dumpe2fs's: blocks per group less two
    // bitmaps and the inode table.
    let header = run("dumpe2fs", &["-h", &fs.device]);
    let field = |name: &str| -> u64 {
        header.lines().find(|l| l.starts_with(name)).unwrap().split(':').nth(1).unwrap().trim().parse().unwrap()
    };
    let data_blocks = field("Blocks per group") - 2 - field("Inode blocks per group");
    assert!(m["perfection_rule"].as_str().unwrap().contains(&format!("({data_blocks} blocks)")), "{m}");
    assert_eq!(m["perfection"].as_u64().unwrap(), (1u64 << 30).div_ceil(data_blocks * BS));
}

#[test]
fn xfs_perfection_uses_the_allocation_group() {
    let Some(fs) = ScratchFs::new("perfection_xfs", "xfs", 512, &["-b", "size=4096", "-d", "agcount=4"]) else {
        return;
    };
    let path = fs.path("big");
    File::create(&path).unwrap().set_len(1 << 30).unwrap();
    let m = map_one(&path);
    let info = run("xfs_info", &[fs.mount.to_str().unwrap()]);
    let agsize: u64 = info.split("agsize=").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(m["perfection"].as_u64().unwrap(), (1u64 << 30).div_ceil(agsize.min((1 << 21) - 1) * BS), "{m}");
}

#[test]
fn sync_resolves_delayed_allocation() {
    let Some(fs) = ScratchFs::new("map_sync", "ext4", 256, &["-b", "4096"]) else { return };
    let path = fs.path("delalloc");
    std::fs::write(&path, vec![3u8; 64 * BS as usize]).unwrap();
    let before = map_one(&path);
    let p = path.to_str().unwrap();
    let after = fslab_json(&["map", "--json", "--sync", p])["files"][0].clone();
    assert_eq!(after["flags"]["delalloc"], 0, "{after}");
    assert!(after["extent_list"][0]["physical"].is_u64(), "{after}");
    // Unflushed, the location was unknown and reported as such (null).
    if before["flags"]["delalloc"].as_u64().unwrap() > 0 {
        assert!(before["extent_list"][0]["physical"].is_null(), "{before}");
    }
    assert_eq!(after["extents"].as_u64().unwrap(), filefrag_extents(&path));
}

#[test]
fn text_output_has_rows_and_the_summary_line() {
    let Some(fs) = ScratchFs::new("map_text", "ext4", 256, &["-b", "4096"]) else { return };
    craft(&fs);
    let out = fslab_expect(&["map", fs.path("alt-a").to_str().unwrap()], 0);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ext4, block size 4096"), "{text}");
    let n = filefrag_extents(&fs.path("alt-a"));
    assert!(text.contains(&format!("{n} extents, perfection would be 1, layout score ")), "{text}");
    // Extent rows: an index, then logical and physical block ranges.
    let rows = text
        .lines()
        .filter(|l| {
            let mut words = l.split_whitespace();
            words.next().is_some_and(|w| w.parse::<u64>().is_ok()) && words.next().is_some_and(|w| w.contains(".."))
        })
        .count();
    assert_eq!(rows as u64, map_one(&fs.path("alt-a"))["records"].as_u64().unwrap(), "{text}");
}

#[test]
fn svg_strip_is_written_whole() {
    let Some(fs) = ScratchFs::new("map_svg", "ext4", 256, &["-b", "4096"]) else { return };
    craft(&fs);
    let out_dir = tempfile::tempdir().unwrap();
    let svg = out_dir.path().join("strip.svg");
    fslab_expect(&["map", "--no-list", "--svg", svg.to_str().unwrap(), fs.path("mmap-seed000").to_str().unwrap()], 0);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") || text.starts_with("<?xml"), "{}", &text[..80.min(text.len())]);
    assert!(text.trim_end().ends_with("</svg>"));
    // Nothing but the SVG is left in the directory (no temporary file).
    assert_eq!(std::fs::read_dir(out_dir.path()).unwrap().count(), 1);
}

#[test]
fn bad_input_is_named_and_the_rest_still_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::write(&good, b"hello").unwrap();
    let fifo = dir.path().join("fifo");
    run("mkfifo", &[fifo.to_str().unwrap()]);
    let missing = dir.path().join("missing");
    let args = ["map", "--json", "--no-list", missing.to_str().unwrap(), dir.path().to_str().unwrap(), fifo.to_str().unwrap(), "/dev/null", good.to_str().unwrap()];
    let out = fslab_expect(&args, 2);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["files"][0]["path"], good.to_str().unwrap());
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 4, "{v}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (err, needle) in errors.iter().zip(["No such file", "is a directory", "is a FIFO", "character device"]) {
        assert!(err["error"].as_str().unwrap().contains(needle), "{err} lacks {needle}");
        assert!(err["error"].as_str().unwrap().starts_with(err["path"].as_str().unwrap()), "{err}");
    }
    assert_eq!(stderr.lines().count(), 4, "one line per bad file: {stderr}");
}

#[test]
fn a_file_system_without_fiemap_is_an_environment_error() {
    // /proc has no FIEMAP; /dev/shm is tmpfs (no FIEMAP on this kernel's
    // tmpfs either). Exit 3, one line naming the path.
    let out = fslab_expect(&["map", "/proc/self/status"], 3);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/proc/self/status") && stderr.contains("FIEMAP"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// filefrag -v's extent rows: (logical start block, flags).
fn filefrag_rows(path: &Path) -> Vec<(u64, String)> {
    let out = run("filefrag", &["-v", path.to_str().unwrap()]);
    out.lines()
        .filter_map(|l| {
            let (index, rest) = l.trim_start().split_once(':')?;
            index.parse::<u64>().ok()?;
            let logical = rest.trim_start().split("..").next()?.trim().parse().ok()?;
            // The flags are the last field, after the length's colon.
            let flags = rest.rsplit_once(':').map_or("", |(_, f)| f).trim().to_string();
            Some((logical, flags))
        })
        .collect()
}

fn flag_names(record: &Value) -> Vec<&str> {
    record["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect()
}

#[test]
fn xfs_speculative_preallocation_is_marked_eof_as_filefrag_does() {
    let Some(fs) = ScratchFs::new("map_past_eof", "xfs", 512, &["-b", "size=4096"]) else { return };
    let path = fs.path("appended");
    // 1 MiB in 4 KiB appends, flushed but not closed: xfs keeps its
    // speculative preallocation past EOF while the file is open.
    let mut file = File::create(&path).unwrap();
    for _ in 0..256 {
        file.write_all(&[0x5Au8; BS as usize]).unwrap();
    }
    file.sync_all().unwrap();

    let m = map_one(&path);
    let list = m["extent_list"].as_array().unwrap();
    let size = 256 * BS;
    let beyond: Vec<&Value> = list.iter().filter(|r| r["logical"].as_u64().unwrap() >= size).collect();
    assert!(!beyond.is_empty(), "xfs kept no preallocation past EOF, nothing to test: {m}");
    let last = list.last().unwrap();
    for flag in ["unwritten", "last", "eof", "past_eof"] {
        assert!(flag_names(last).contains(&flag), "{flag} on the preallocation: {m}");
    }
    // Row by row, `eof` where filefrag -v says it.
    let rows = filefrag_rows(&path);
    assert_eq!(rows.len(), list.len(), "one filefrag -v row per record: {rows:?} / {m}");
    for (record, (logical, flags)) in list.iter().zip(&rows) {
        assert_eq!(record["logical"].as_u64().unwrap(), logical * BS, "{rows:?} / {m}");
        let ours = flag_names(record).contains(&"eof");
        assert_eq!(ours, flags.split(',').any(|f| f == "eof"), "eof on the row at block {logical}: {flags:?} / {m}");
        let past = flag_names(record).contains(&"past_eof");
        assert_eq!(past, record["logical"].as_u64().unwrap() >= size, "{m}");
    }
    // Counted as filefrag counts, kept out of the reading figures.
    assert_eq!(m["extents"].as_u64().unwrap(), filefrag_extents(&path), "{m}");
    assert_eq!(m["past_eof_records"].as_u64().unwrap(), beyond.len() as u64, "{m}");
    let past_bytes: u64 = beyond.iter().map(|r| r["length"].as_u64().unwrap()).sum();
    assert_eq!(m["past_eof_bytes"].as_u64().unwrap(), past_bytes, "{m}");
    assert_eq!(m["mapped_bytes"].as_u64().unwrap() - past_bytes, size, "{m}");
    assert_eq!(m["holes"], 0, "space past EOF is no hole: {m}");

    // The text list says it too, on the same rows.
    let out = fslab_expect(&["map", path.to_str().unwrap()], 0);
    let text = String::from_utf8(out.stdout).unwrap();
    let eof_rows = text.lines().filter(|l| l.split_whitespace().last().is_some_and(|f| f.split(',').any(|f| f == "eof"))).count();
    assert_eq!(eof_rows, rows.iter().filter(|(_, f)| f.split(',').any(|f| f == "eof")).count(), "{text}");
    assert!(text.contains("past EOF, not in the layout score"), "{text}");

    // Closed, xfs gives the preallocation back, unless its background
    // trimming holds the inode at that moment (seen beside a preset run):
    // whatever it did, fslab says what filefrag says, and once the space
    // past EOF is trimmed for sure, nothing is past EOF.
    drop(file);
    let closed = map_one(&path);
    let rows_past = filefrag_rows(&path).iter().filter(|(logical, _)| logical * BS >= size).count() as u64;
    assert_eq!(closed["past_eof_records"].as_u64(), Some(rows_past), "{closed}");
    run("xfs_spaceman", &["-c", "prealloc -s", fs.mount.to_str().unwrap()]);
    let trimmed = map_one(&path);
    assert_eq!((trimmed["past_eof_records"].as_u64(), trimmed["past_eof_bytes"].as_u64()), (Some(0), Some(0)), "{trimmed}");
}

/// `xfs_bmap -v` data rows: (file offset, block range start, AG, AG-OFFSET
/// start), all in 512-byte units.
fn xfs_bmap_rows(path: &Path) -> Vec<(u64, u64, u64, u64)> {
    let out = run("xfs_bmap", &["-v", path.to_str().unwrap()]);
    let start = |s: &str| -> u64 { s.trim_matches(|c| "[]():".contains(c)).split("..").next().unwrap().parse().unwrap() };
    out.lines()
        .filter(|l| l.trim_start().split(':').next().is_some_and(|n| n.parse::<u64>().is_ok()))
        .filter(|l| !l.contains("hole"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (start(w[1]), start(w[2]), w[3].parse().unwrap(), start(w[4]))
        })
        .collect()
}

#[test]
fn xfs_allocation_groups_match_xfs_bmap() {
    let Some(fs) = ScratchFs::new("map_xfs_ag", "xfs", 512, &["-b", "size=4096", "-d", "agcount=4"]) else { return };
    // 300 MiB preallocated on a 512 MiB file system of four 128 MiB groups
    // must span groups; writes in it split the records.
    let path = fs.path("spanning");
    let f = File::create(&path).unwrap();
    fallocate(&f, 0, 0, 300 << 20);
    for off in [0u64, 100 << 20, 250 << 20] {
        f.write_all_at(&vec![9u8; 64 * BS as usize], off).unwrap();
    }
    f.sync_all().unwrap();
    drop(f);

    let m = map_one(&path);
    let list = m["extent_list"].as_array().unwrap();
    let bmap = xfs_bmap_rows(&path);
    assert!(bmap.len() >= 3, "{bmap:?}");
    let groups: std::collections::BTreeSet<u64> = bmap.iter().map(|r| r.2).collect();
    assert!(groups.len() >= 2, "the file spans allocation groups: {bmap:?}");
    for &(offset, block, ag, ag_offset) in &bmap {
        let record = list
            .iter()
            .find(|r| r["logical"].as_u64() == Some(offset * 512))
            .unwrap_or_else(|| panic!("no record at xfs_bmap's offset {offset}: {bmap:?} / {m}"));
        assert_eq!(record["physical"].as_u64(), Some(block * 512), "{record}");
        assert_eq!(record["ag"].as_u64(), Some(ag), "AG of {record} vs xfs_bmap {bmap:?}");
        assert_eq!(record["ag_offset"].as_u64(), Some(ag_offset * 512), "AG-OFFSET of {record} vs xfs_bmap {bmap:?}");
    }

    // In sectors, the text list prints xfs_bmap's very numbers.
    let p = path.to_str().unwrap();
    let text = String::from_utf8(fslab_expect(&["map", "--units", "sectors", p], 0).stdout).unwrap();
    assert!(text.contains("logical (sectors)") && text.contains("ag offset"), "{text}");
    assert!(text.contains("4 allocation groups of "), "{text}");
    for &(offset, block, ag, ag_offset) in &bmap {
        let found = text.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() > 4
                && w[1].starts_with(&format!("{offset}.."))
                && w[2].starts_with(&format!("{block}.."))
                && w.windows(2).any(|p| p == [ag.to_string(), ag_offset.to_string()])
        });
        assert!(found, "row for xfs_bmap's [{offset}..] {block} AG {ag} ({ag_offset}..) in\n{text}");
    }
    // Blocks and bytes print the same records, scaled.
    let blocks = String::from_utf8(fslab_expect(&["map", p], 0).stdout).unwrap();
    let bytes = String::from_utf8(fslab_expect(&["map", "--units", "bytes", p], 0).stdout).unwrap();
    let first_row = |t: &str, unit: &str| -> Vec<String> {
        let row = t.lines().find(|l| l.trim_start().starts_with("0 ")).unwrap_or_else(|| panic!("{unit}: {t}"));
        row.split_whitespace().map(str::to_string).collect()
    };
    let (rb, ry) = (first_row(&blocks, "blocks"), first_row(&bytes, "bytes"));
    let (r0, _) = (&list[0], ());
    let physical = r0["physical"].as_u64().unwrap();
    let length = r0["length"].as_u64().unwrap();
    assert_eq!(rb[2], format!("{}..{}", physical / BS, (physical + length) / BS - 1), "{blocks}");
    assert_eq!(ry[2], format!("{}..{}", physical, physical + length - 1), "{bytes}");
    assert_eq!(ry[3], length.to_string(), "{bytes}");
}

#[test]
fn ag_columns_are_for_xfs_only() {
    let Some(fs) = ScratchFs::new("map_no_ag", "ext4", 256, &["-b", "4096"]) else { return };
    let path = fs.path("data");
    std::fs::write(&path, vec![1u8; 16 * BS as usize]).unwrap();
    let p = path.to_str().unwrap();
    let m = fslab_json(&["map", "--json", "--sync", p])["files"][0].clone();
    let record = &m["extent_list"][0];
    assert!(record.get("ag").is_none() && record.get("ag_offset").is_none(), "{record}");
    let text = String::from_utf8(fslab_expect(&["map", p], 0).stdout).unwrap();
    assert!(!text.contains("ag offset") && !text.contains("allocation groups"), "{text}");
    // A file that ends exactly at its last block: filefrag marks that row eof.
    assert!(flag_names(record).contains(&"eof") && !flag_names(record).contains(&"past_eof"), "{record}");
}

/// `map --disk` on every crafted kind of layout on ext4: a file in one
/// extent reads at the media rate (ratio exactly 1), interleaved blocks
/// cost more, what a reader never touches (holes, unwritten extents,
/// blocks past EOF) costs nothing, and data not yet placed is said, never
/// timed; without `--disk` nothing of the model is printed.
#[test]
fn a_named_disk_times_each_file_read_front_to_back() {
    let Some(fs) = ScratchFs::new("map_disk", "ext4", 256, &["-b", "4096"]) else { return };
    craft(&fs);
    let contiguous = fs.path("contiguous");
    std::fs::write(&contiguous, vec![9u8; 256 * BS as usize]).unwrap();
    run("sync", &[]);
    let names = ["contiguous", "alt-a", "punched", "unwritten", "keep-size", "hole-only", "empty"];
    let paths: Vec<String> = names.iter().map(|n| fs.path(n).to_str().unwrap().to_string()).collect();
    let mut args = vec!["map", "--json", "--no-list", "--disk", "hdd-7200-2009"];
    args.extend(paths.iter().map(String::as_str));
    let v = fslab_json(&args);
    assert_eq!(v["disk"], "hdd-7200-2009", "{v}");
    let file = |name: &str| v["files"].as_array().unwrap().iter().find(|f| f["path"].as_str().unwrap().ends_with(&format!("/{name}"))).unwrap().clone();
    let read = |name: &str| file(name)["modelled_read_s"].as_f64().unwrap();
    let ratio = |name: &str| file(name)["modelled_read_ratio"].as_f64();
    // One extent: exactly its bytes at the media rate.
    assert_eq!(file("contiguous")["extents"], 1);
    assert_eq!(ratio("contiguous"), Some(1.0), "{}", file("contiguous"));
    // 32 blocks each a block apart from the next: read through, or sought.
    assert!(ratio("alt-a").unwrap() > 1.0, "{}", file("alt-a"));
    assert!(read("alt-a") > 0.0);
    // Holes and unwritten blocks are never read (fallocated, then punched:
    // nothing but unwritten blocks), nor is anything past EOF.
    assert_eq!(read("punched"), 0.0, "{}", file("punched"));
    let unwritten = file("unwritten");
    let keep = file("keep-size");
    for (f, blocks) in [(&unwritten, 16u64), (&keep, 8)] {
        // As much time as those blocks alone in one piece take: a ratio
        // of 1, the rest of the file costing nothing.
        assert_eq!(f["modelled_read_ratio"].as_f64(), Some(1.0), "{f} ({blocks} blocks read)");
    }
    for nothing in ["hole-only", "empty"] {
        let f = file(nothing);
        assert_eq!((f["modelled_read_s"].as_f64(), f["modelled_ideal_s"].as_f64()), (Some(0.0), Some(0.0)), "{f}");
        assert!(f["modelled_read_ratio"].is_null(), "nothing read, no ratio: {f}");
    }

    // Without --disk, the output is what it always was.
    let plain = fslab_json(&["map", "--json", "--no-list", &paths[0]]);
    assert!(plain.get("disk").is_none() && plain["files"][0].get("modelled_read_s").is_none(), "{plain}");
    // The text says it once per file, after the figures.
    let out = fslab_expect(&["map", "--no-list", "--disk", "hdd-7200", &paths[0], &paths[1]], 0);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("  modelled read ")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains(" on hdd-7200; ") && lines[0].ends_with(" in one piece, ratio 1.000"), "{text}");
}

#[test]
fn data_not_yet_placed_is_not_timed_and_a_bad_disk_is_refused() {
    let Some(fs) = ScratchFs::new("map_disk_unplaced", "ext4", 256, &["-b", "4096"]) else { return };
    let path = fs.path("delalloc");
    std::fs::write(&path, vec![3u8; 64 * BS as usize]).unwrap();
    let p = path.to_str().unwrap();
    let before = fslab_json(&["map", "--json", "--no-list", "--disk", "laptop-5400", p])["files"][0].clone();
    if before["flags"]["delalloc"].as_u64().unwrap() > 0 {
        assert!(before["modelled_read_s"].is_null(), "{before}");
        assert!(before["modelled_missing"].as_str().unwrap().contains("--sync"), "{before}");
    }
    let after = fslab_json(&["map", "--json", "--no-list", "--sync", "--disk", "laptop-5400", p])["files"][0].clone();
    assert!(after["modelled_read_s"].as_f64().unwrap() > 0.0, "{after}");
    assert!(after.get("modelled_missing").is_none(), "{after}");

    let out = fslab_expect(&["map", "--disk", "hdd-7201", p], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--disk hdd-7201: no disk profile") && stderr.contains("hdd-7200-2009"), "{stderr}");
    assert!(out.stdout.is_empty(), "refused before anything is mapped");
    // A profile file alone is the disk.
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/disk-profile.json");
    let mine = fslab_json(&["map", "--json", "--no-list", "--disk-profile", example, p]);
    assert_eq!(mine["disk"], "barracuda-7200.12", "{mine}");
    assert!(mine["files"][0]["modelled_read_s"].as_f64().unwrap() > 0.0, "{mine}");
}
