//! `tree-copy` (seed 001) end to end: the seeds preset on all five file
//! systems and 1 KiB-block ext2, checked on exact figures.
//!
//! What this kernel does (measured): ext2 is mounted by the ext4 driver
//! (CONFIG_EXT4_USE_FOR_EXT2), whose allocator keeps a file's blocks
//! together — the seed's one-block-in-eight layout is gone — but places
//! the tail of every file longer than 16 blocks far from its head, so
//! ext2 has a few fragmented files, and 1 KiB-block ext2 many more. ext4
//! hands files out in hash order, so consecutive files in tar order are
//! rarely adjacent on its disk; xfs and btrfs keep them adjacent.

mod common;

use common::{Lab, cases, figure, root_or_skip};

/// Files and directories of the 8 MiB tree of seed 1 (the generator's
/// unit tests pin the same tree).
const FILES: f64 = 780.0;
const DIRS: f64 = 62.0; // 61 in the tree and the top `srcs`
const BYTES: f64 = (8u64 << 20) as f64;

#[test]
fn the_preset_copies_the_same_tree_everywhere_and_finds_the_seeds_layout_gone() {
    if !root_or_skip("tree_copy_preset") {
        return;
    }
    let lab = Lab::new();
    let json = lab.run_json(&["tree-copy", "--preset", "seeds", "--set", "size=8M"], 0);
    let cases = cases(&json);
    let labels: Vec<&str> = cases.iter().map(|c| c["fs"].as_str().unwrap()).collect();
    assert_eq!(labels, ["ext2", "ext2-1k", "ext3", "ext4", "xfs", "btrfs"]);
    let on = |fs: &str| cases.iter().find(|c| c["fs"] == fs).unwrap();
    let get = |fs: &str, name: &str| figure(on(fs), name).unwrap_or_else(|| panic!("{fs}: {name} missing"));

    for case in cases {
        let fs = case["fs"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{case}");
        assert_eq!(case["params"]["source"], "synthetic");
        // The same tree, copied whole, and read back byte for byte.
        assert_eq!(get(fs, "files_copied"), FILES, "{fs}");
        assert_eq!(get(fs, "files"), FILES, "{fs}: files found by the layout walk");
        assert_eq!(get(fs, "dirs"), DIRS, "{fs}");
        assert_eq!(get(fs, "symlinks"), 0.0, "{fs}");
        assert_eq!(get(fs, "source_bytes"), BYTES, "{fs}");
        assert_eq!(get(fs, "bytes"), BYTES, "{fs}");
        assert_eq!(get(fs, "cold_read_bytes"), BYTES, "{fs}: the read-back reads exactly the copy");
        assert_eq!(case["target"]["cold_method"], "remount", "{fs}");
        assert!(get(fs, "cold_read_ios") > 0.0, "{fs}");
        // The copy's time ends with its own sync.
        assert!(get(fs, "copy_s") > 0.0 && get(fs, "copy_s") <= get(fs, "wall_s"), "{fs}");
        assert!(get(fs, "read_order_gap_bytes") <= get(fs, "read_order_seek_bytes"), "{fs}");
    }
    assert_eq!(on("ext2-1k")["target"]["mkfs_args"].as_array().unwrap().iter().filter(|a| *a == "1024").count(), 1);

    // Extent-mapped file systems: every file in one piece.
    for fs in ["ext4", "xfs", "btrfs"] {
        assert_eq!(get(fs, "fragmented_files"), 0.0, "{fs}");
        assert_eq!(get(fs, "layout_score"), 1.0, "{fs}");
    }
    // ext2: the seed's one block in eight would score 0.125; here almost
    // every block follows its predecessor. The files over 16 blocks have
    // their tail elsewhere: about 2% of files with 4 KiB blocks (15
    // measured), about 16% with 1 KiB blocks (126 measured).
    for fs in ["ext2", "ext2-1k"] {
        assert!(get(fs, "layout_score") > 0.95, "{fs}: {}", get(fs, "layout_score"));
    }
    let (frag_4k, frag_1k) = (get("ext2", "fragmented_files"), get("ext2-1k", "fragmented_files"));
    assert!((1.0..=40.0).contains(&frag_4k), "ext2: {frag_4k} fragmented files");
    assert!((60.0..=250.0).contains(&frag_1k), "ext2-1k: {frag_1k} fragmented files");
    // Those far tails make a reader in tar order travel far more than on
    // ext4 (148x and 365x measured), and 1 KiB blocks (block maps every
    // 12 KiB, more split files) cost more read I/Os per MiB (1.42x).
    for fs in ["ext2", "ext2-1k"] {
        let ratio = get(fs, "read_order_seek_bytes") / get("ext4", "read_order_seek_bytes");
        assert!(ratio > 10.0, "{fs}: head travel {ratio:.1}x ext4's");
    }
    let ios = get("ext2-1k", "cold_read_ios_per_mib") / get("ext4", "cold_read_ios_per_mib");
    assert!(ios > 1.15, "ext2-1k read I/Os per MiB {ios:.2}x ext4's");
    // Tar order is hash order on ext4 (and the ext4-driven ext2/ext3), so
    // consecutive files are rarely adjacent there (6% measured); xfs and
    // btrfs lay files down in the order they hand them out (84%, 99%).
    for fs in ["ext2", "ext3", "ext4"] {
        assert!(get(fs, "read_order_contiguous") < 0.3, "{fs}: {}", get(fs, "read_order_contiguous"));
    }
    for fs in ["xfs", "btrfs"] {
        assert!(get(fs, "read_order_contiguous") > 0.6, "{fs}: {}", get(fs, "read_order_contiguous"));
    }

    let verdicts = json["run"]["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0]["scenario"], "tree-copy");
    // Judged on every place against the run's best: measured at 8 MiB,
    // 84-100% of files contiguous (best 100%) and 86-152 read I/Os per
    // MiB (ext2-1k's 152 the worst, 1.77x btrfs's 86): gone everywhere,
    // but ext2-1k within 20% of the twice the best that would show, so
    // marginal there when its tails land as they did here.
    // ext2-1k's read I/Os per MiB depend on how the block layer merged
    // them (184 once beside a preset run, 2.15x the best): a place may
    // then read marginal, never a firm "shows".
    let evidence = verdicts[0]["evidence"].as_str().unwrap();
    let gone = "gone on ext2, ext3, ext4, xfs, btrfs";
    assert!(
        evidence == "seed 001 gone on ext2, ext2-1k, ext3, ext4, xfs, btrfs"
            || (evidence.starts_with("seed 001 marginal on ext2-1k (") && evidence.ends_with(gone)),
        "{evidence}"
    );
    let places = verdicts[0]["places"].as_array().unwrap();
    for place in places {
        assert_eq!(place["figure"], "cold_read_ios_per_mib", "{place}");
        let (here, best) = (place["value"].as_f64().unwrap(), place["against"].as_f64().unwrap());
        let marginal = place["judged"] == "marginal";
        assert!(marginal || place["judged"] == "gone", "{place}");
        assert_eq!(place["shows"], marginal && here >= 2.0 * best, "{place}");
        assert!(here >= best && here < if marginal { 2.4 } else { 2.0 } * best, "{place}");
        assert!(place["evidence"].as_str().unwrap().contains("% of files contiguous (best 100%"), "{place}");
    }
    assert_eq!(verdicts[0]["shows"], places.iter().any(|p| p["shows"] == true), "{}", verdicts[0]);
    lab.assert_nothing_left("after the tree-copy preset");
}

#[test]
fn another_tree_seed_gives_another_tree_of_the_same_size() {
    if !root_or_skip("tree_copy_tree_seed") {
        return;
    }
    let lab = Lab::new();
    let json = lab.run_json(&["tree-copy", "--fs", "ext4", "--set", "size=4M", "--set", "tree_seed=1,2,1"], 0);
    let cases = cases(&json);
    assert_eq!(cases.len(), 3);
    let files: Vec<f64> = cases.iter().map(|c| figure(c, "files_copied").unwrap()).collect();
    assert_eq!(files[0], files[2], "the same seed, the same tree");
    assert_ne!(files[0], files[1], "another seed, another tree");
    for case in cases {
        assert_eq!(figure(case, "source_bytes"), Some((4u64 << 20) as f64));
        assert_eq!(figure(case, "cold_read_bytes"), Some((4u64 << 20) as f64));
    }
    lab.assert_nothing_left("after tree_seed runs");
}

#[test]
fn a_sparse_source_is_copied_as_holes_on_an_image_sized_for_its_data() {
    if !root_or_skip("tree_copy_sparse_source") {
        return;
    }
    let lab = Lab::new();
    // 4 GiB long, 1 MiB of data, beside a small file: sized by its length,
    // the image would be over 10 GiB and the copy would write 4 GiB of zeros.
    let source = lab.dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    std::fs::write(source.join("small"), b"twelve bytes").unwrap();
    let sparse = std::fs::File::create(source.join("sparse")).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, &[5u8; 1 << 20], 2 << 30).unwrap();
    sparse.set_len(4 << 30).unwrap();
    let set = format!("source={}", source.display());
    let json = lab.run_json(&["tree-copy", "--fs", "ext4", "--set", &set, "--no-store"], 0);
    let case = &cases(&json)[0];
    assert_eq!(case["status"], "ok", "{case}");
    assert_eq!(figure(case, "source_bytes"), Some((4u64 << 30) as f64 + 12.0));
    let written = figure(case, "written_bytes").unwrap();
    assert!(written < (64u64 << 20) as f64, "the copy wrote {written} bytes: the hole was written as zeros");
    lab.assert_nothing_left("after a sparse source");
}

#[test]
fn an_image_larger_than_the_scratch_disk_has_free_is_refused_before_mkfs() {
    if !root_or_skip("tree_copy_image_too_large") {
        return;
    }
    let lab = Lab::new();
    // A scratch folder on a 64 MiB tmpfs, asked for a 300 MiB image.
    let scratch = lab.scratch();
    common::run("mount", &["-t", "tmpfs", "-o", "size=64M,mode=0700", "tmpfs", scratch.to_str().unwrap()]);
    let out = lab.command().args(["exec", "--fs", "ext4", "--size", "300M", "--scratch"]).arg(&scratch).args(["--", "true"]).output().unwrap();
    let listed = std::fs::read_dir(&scratch).unwrap().count();
    common::unmount(&scratch).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("300 MiB") && stderr.contains("free on the scratch folder's file system"), "{stderr}");
    assert_eq!(listed, 0, "something was made on the scratch disk");
    lab.assert_nothing_left("after an image too large");
}

#[test]
fn bad_tree_copy_parameters_are_refused_before_anything_is_made() {
    let lab = Lab::new();
    let check = |args: &[&str], says: &[&str]| {
        let mut c = lab.command();
        c.args(["run", "--scratch"]).arg(lab.scratch()).args(args);
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        for s in says {
            assert!(stderr.contains(s), "{args:?}: {stderr}");
        }
    };
    check(&["tree-copy", "--fs", "ext4", "--set", "size=0"], &["size=0", "more than 0"]);
    check(&["tree-copy", "--fs", "ext4", "--set", "tree_seed=x"], &["tree_seed=x", "whole number"]);
    check(&["tree-copy", "--fs", "ext4", "--set", "source=/nonexistent/fslab-src"], &["source=", "synthetic"]);
    lab.assert_nothing_left("after refused tree-copy runs");
}

#[test]
fn list_shows_tree_copy_with_the_seeds_values() {
    let json = common::fslab_json(&["list", "--json"]);
    let scenarios = json["scenarios"].as_array().unwrap();
    let tree = scenarios.iter().find(|s| s["name"] == "tree-copy").unwrap();
    assert_eq!(tree["seed"], "001");
    let params: Vec<&str> = tree["params"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(params, ["source", "size", "tree_seed"]);
    let size = &tree["params"][1];
    assert_eq!((size["small"].as_str(), size["full"].as_str()), (Some("64M"), Some("400M")));
    let figures: Vec<&str> = tree["figures"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    for f in ["copy_s", "files_copied", "dirs", "source_bytes", "read_order_contiguous", "read_order_seek_bytes"] {
        assert!(figures.contains(&f), "{f} not in {figures:?}");
    }
}
