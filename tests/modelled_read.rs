//! The disk model on real layouts: files crafted on a scratch xfs with 1,
//! 64 and 4,096 extents at known gaps, timed by `fslab map --disk
//! hdd-7200`, against what the model's equations give for the extents
//! `filefrag -v` lists — computed here, apart from fslab's model, from the
//! profile's figures alone.
//!
//! The layouts are made with reflinks, so their gaps are the test's: a
//! donor file is preallocated whole (its blocks in a few long runs), the
//! stretches the test picks are written, and each crafted file clones its
//! pieces of the donor one after another. A piece is 16 KiB or 1 MiB and
//! the gaps 4 MiB: too far for the drive's read-ahead to reach sooner than
//! a seek and the platter's turn, so every gap costs exactly that.

mod common;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use common::{ScratchFs, fslab_json, run};

const MIB: u64 = 1 << 20;

/// The data every crafted file holds.
const BYTES: u64 = 64 * MIB;

/// The gap the test leaves between pieces.
const GAP: u64 = 4 * MIB;

/// A drive's figures, as `fslab list --disks --json` gives them.
struct Disk {
    capacity: f64,
    rpm: f64,
    heads: f64,
    track_to_track: f64,
    average: f64,
    full_stroke: f64,
    outer: f64,
    inner: f64,
}

impl Disk {
    fn listed(name: &str) -> Disk {
        let v = fslab_json(&["list", "--disks", "--json"]);
        let d = v["disks"].as_array().unwrap().iter().find(|d| d["name"] == name).unwrap()["disk"].clone();
        let f = |k: &str| d[k].as_f64().unwrap_or_else(|| panic!("{name}: no {k}"));
        Disk {
            capacity: f("capacity_bytes"),
            rpm: f("rpm"),
            heads: f("heads"),
            track_to_track: f("track_to_track_s"),
            average: f("average_seek_s"),
            full_stroke: f("full_stroke_s"),
            outer: f("outer_bytes_per_s"),
            inner: f("inner_bytes_per_s"),
        }
    }

    /// Seconds a turn takes.
    fn turn(&self) -> f64 {
        60.0 / self.rpm
    }

    /// Tracks in all, for bytes on a track falling linearly from the
    /// outer rate's turn to the inner's (DESIGN, "The disk model").
    fn tracks(&self) -> f64 {
        2.0 * self.capacity / ((self.outer + self.inner) * self.turn())
    }

    /// The track coordinate of byte `p`: u(p) = 2p / (T_o + √(T_o² − 2kp)).
    fn track(&self, p: u64) -> f64 {
        let (t_o, t_i) = (self.outer * self.turn(), self.inner * self.turn());
        let k = (t_o - t_i) / self.tracks();
        2.0 * p as f64 / (t_o + (t_o * t_o - 2.0 * k * p as f64).sqrt())
    }

    fn cylinders(&self) -> f64 {
        (self.tracks() / self.heads).ceil().max(2.0)
    }

    fn cylinder(&self, p: u64) -> f64 {
        (self.track(p) / self.heads).floor().min(self.cylinders() - 1.0)
    }

    /// The seek over `d` cylinders: a square root to the knee (383/1962 of
    /// the stroke), straight beyond, its coefficient the closed form that
    /// makes the datasheet's weighted mean the average seek.
    fn seek(&self, d: f64) -> f64 {
        if d == 0.0 {
            return 0.0;
        }
        let (knee, x1) = (383.0_f64 / 1962.0, 1.0 / (self.cylinders() - 1.0));
        let l = 1.0 - knee;
        let k = 4.0 / 3.0 * knee.powf(1.5) - 0.8 * knee.powf(2.5) - x1.sqrt() * (2.0 * knee - knee * knee)
            + 2.0 / 3.0 * l * l * (knee.sqrt() - x1.sqrt());
        let a = (self.average - self.track_to_track - (self.full_stroke - self.track_to_track) * l * l / 3.0) / k;
        let at_knee = self.track_to_track + a * (knee.sqrt() - x1.sqrt());
        let x = d * x1;
        if x <= knee { self.track_to_track + a * (x.sqrt() - x1.sqrt()) } else { at_knee + (self.full_stroke - at_knee) * (x - knee) / l }
    }

    /// Reading `extents` (physical start, length) front to back from a
    /// head resting over the first byte: each extent at the media rate
    /// where it lies, and from one to the next a seek over the cylinders
    /// crossed and the platter's turn to the next one's first sector.
    fn read(&self, extents: &[(u64, u64)]) -> f64 {
        let mut total = 0.0;
        for (i, &(start, length)) in extents.iter().enumerate() {
            total += (self.track(start + length) - self.track(start)) * self.turn();
            if let Some(&(next, _)) = extents.get(i + 1) {
                let from = start + length;
                let seek = self.seek((self.cylinder(next) - self.cylinder(from)).abs());
                let phase = (self.track(next) - self.track(from)) - seek / self.turn();
                total += seek + (phase - phase.floor()) * self.turn();
            }
        }
        total
    }
}

/// `filefrag -v`'s extents of `path`: (physical byte, bytes), merged
/// where one continues the last, and its count.
fn filefrag(path: &Path, block: u64) -> (Vec<(u64, u64)>, u64) {
    let out = run("filefrag", &["-v", path.to_str().unwrap()]);
    let mut extents: Vec<(u64, u64)> = Vec::new();
    for line in out.lines() {
        let cols: Vec<&str> = line.split(':').map(str::trim).collect();
        if cols.len() < 4 || cols[0].parse::<u64>().is_err() {
            continue;
        }
        let physical: u64 = cols[2].split("..").next().unwrap().trim().parse().unwrap();
        let length: u64 = cols[3].parse().unwrap();
        match extents.last_mut() {
            Some((start, len)) if *start + *len == physical * block => *len += length * block,
            _ => extents.push((physical * block, length * block)),
        }
    }
    let found = out.lines().last().unwrap().rsplit(": ").next().unwrap();
    (extents, found.split_whitespace().next().unwrap().parse().unwrap())
}

/// The donor's preallocated runs, lowest on the device first: (logical
/// byte, bytes).
fn runs(path: &Path) -> Vec<(u64, u64)> {
    let out = run("xfs_io", &["-r", "-c", "fiemap", path.to_str().unwrap()]);
    let mut runs: Vec<(u64, u64, u64)> = out
        .lines()
        .filter(|l| l.contains(": [") && !l.contains("hole"))
        .map(|l| {
            let sectors = |range: &str| {
                let (a, b) = range.trim().trim_start_matches('[').trim_end_matches(']').split_once("..").unwrap();
                (a.trim().parse::<u64>().unwrap() * 512, (b.trim().parse::<u64>().unwrap() + 1) * 512)
            };
            let cols: Vec<&str> = l.split(':').collect();
            let ((start, end), (physical, _)) = (sectors(cols[1]), sectors(cols[2]));
            (physical, start, end - start)
        })
        .collect();
    runs.sort_unstable();
    runs.into_iter().map(|(_, logical, len)| (logical, len)).collect()
}

/// Where the next piece of the donor goes: a run and the offset in it.
#[derive(Clone, Copy)]
struct At {
    run: usize,
    offset: u64,
}

/// Craft `pieces` pieces of `BYTES / pieces` each into a file named
/// `name`, cloned from the donor's runs in the order they lie on the
/// device, from `at` on, a gap of [`GAP`] between them and each within one
/// run (a piece across two could be two extents). Returns where the next
/// free stretch of the donor is.
fn craft(fs: &ScratchFs, donor: &Path, runs: &[(u64, u64)], name: &str, pieces: u64, mut at: At) -> At {
    let piece = BYTES / pieces;
    let d = File::options().write(true).open(donor).unwrap();
    let data = vec![0xa5u8; piece as usize];
    let mut clones = Vec::new();
    for k in 0..pieces {
        if at.offset + piece > runs[at.run].1 {
            at = At { run: at.run + 1, offset: 0 };
        }
        let logical = runs[at.run].0 + at.offset;
        d.write_all_at(&data, logical).unwrap();
        clones.push(format!("reflink {} {logical} {} {piece}", donor.display(), k * piece));
        at.offset += piece + GAP;
    }
    d.sync_all().unwrap();
    let mut args = vec!["-f".to_string()];
    for c in clones {
        args.push("-c".into());
        args.push(c);
    }
    args.push(fs.path(name).to_str().unwrap().to_string());
    run("xfs_io", &args.iter().map(String::as_str).collect::<Vec<_>>());
    at
}

/// Three files of 64 MiB in 1, 64 and 4,096 extents on a fresh xfs.
fn crafted(test: &str) -> Option<ScratchFs> {
    let fs = ScratchFs::new(test, "xfs", 24 << 10, &["-m", "reflink=1"])?;
    let donor = fs.path("donor");
    run("xfs_io", &["-f", "-c", "falloc 0 17g", donor.to_str().unwrap()]);
    let runs = runs(&donor);
    let mut at = At { run: 0, offset: 0 };
    for (name, pieces) in [("one", 1), ("sixty-four", 64), ("four-thousand", 4096)] {
        at = craft(&fs, &donor, &runs, name, pieces, at);
    }
    run("sync", &[]);
    Some(fs)
}

const NAMES: [(&str, u64); 3] = [("one", 1), ("sixty-four", 64), ("four-thousand", 4096)];

#[test]
fn crafted_layouts_read_in_the_order_and_ratios_the_equations_give_and_repeat_to_the_bit() {
    let Some(fs) = crafted("modelled_read_crafted") else { return };
    let disk = Disk::listed("hdd-7200");
    let paths: Vec<String> = NAMES.iter().map(|(n, _)| fs.path(n).to_str().unwrap().to_string()).collect();
    let mut args = vec!["map", "--json", "--no-list", "--disk", "hdd-7200"];
    args.extend(paths.iter().map(String::as_str));
    let v = fslab_json(&args);
    let mut reads = Vec::new();
    for (i, (name, count)) in NAMES.iter().enumerate() {
        let (extents, found) = filefrag(&fs.path(name), 4096);
        assert_eq!((found, extents.len() as u64), (*count, *count), "{name}: filefrag -v");
        assert_eq!(extents.iter().map(|e| e.1).sum::<u64>(), BYTES, "{name}");
        let close: Vec<_> = extents.windows(2).filter(|w| w[1].0 < w[0].0 + w[0].1 + GAP).collect();
        assert!(close.is_empty(), "{name}: pieces ascend, {GAP} apart or more: {close:?}");
        let f = &v["files"][i];
        assert_eq!(f["extents"].as_u64(), Some(*count), "{f}");
        let (read, ideal, ratio) =
            (f["modelled_read_s"].as_f64().unwrap(), f["modelled_ideal_s"].as_f64().unwrap(), f["modelled_read_ratio"].as_f64().unwrap());
        let expected = disk.read(&extents);
        let in_one_piece = disk.read(&[(extents[0].0, BYTES)]);
        eprintln!("{name}: {count} extents, {read:.6} s modelled, {expected:.6} s by the equations, ratio {ratio:.4}");
        assert!((read - expected).abs() / expected < 1e-9, "{name}: {read} s, the equations {expected} s");
        assert!((ideal - in_one_piece).abs() / in_one_piece < 1e-9, "{name}: ideal {ideal} s vs {in_one_piece} s");
        assert!((ratio - expected / in_one_piece).abs() / ratio < 1e-9, "{name}: ratio {ratio}");
        reads.push((read, ratio));
    }
    assert_eq!(reads[0].1, 1.0, "one extent reads as one piece");
    assert!(reads[0].0 < reads[1].0 && reads[1].0 < reads[2].0, "{reads:?}");

    // The same layout again: the same figures, to the bit, mapped again
    // and crafted again on another fresh file system.
    let again = fslab_json(&args);
    assert_eq!(again["files"], v["files"]);
    let Some(other) = crafted("modelled_read_crafted_again") else { return };
    let mut args = vec!["map", "--json", "--no-list", "--disk", "hdd-7200"];
    let other_paths: Vec<String> = NAMES.iter().map(|(n, _)| other.path(n).to_str().unwrap().to_string()).collect();
    args.extend(other_paths.iter().map(String::as_str));
    let w = fslab_json(&args);
    for (i, (name, _)) in NAMES.iter().enumerate() {
        assert_eq!(filefrag(&other.path(name), 4096), filefrag(&fs.path(name), 4096), "{name}: the same layout crafted twice");
        for key in ["modelled_read_s", "modelled_ideal_s", "modelled_read_ratio"] {
            assert_eq!(w["files"][i][key].to_string(), v["files"][i][key].to_string(), "{name}: {key}");
        }
    }
}

/// Every case times its files on the run's disk: `target.disk` names it,
/// `--disk` changes it, and the figures are exact where the case's layout
/// is (create-file's O_DIRECT file on xfs, placed by the work) and
/// timings where writeback placed the blocks; a file in one extent reads
/// as one piece; the seeds preset reads a seed's cases on its own kind of
/// disk (seed 002's 5400 rpm laptop drive) unless the run names one.
#[test]
fn a_case_times_its_layout_on_the_runs_disk_exactly_where_the_layout_is_exact() {
    if !common::root_or_skip("a_case_times_its_layout_on_the_runs_disk") {
        return;
    }
    let lab = common::Lab::new();
    let args = ["create-file", "--fs", "xfs", "--set", "size=64M", "--set", "method=odirect-64k,write-64k", "--repeat", "2"];
    let json = lab.run_json(&args, 0);
    let all = common::cases(&json);
    assert_eq!(all.len(), 4);
    let mut direct = Vec::new();
    for case in all {
        assert_eq!(case["status"], "ok", "{case}");
        assert_eq!(case["target"]["disk"], "hdd-7200", "the default disk");
        let kind = case["figures"]["extents"]["kind"].clone();
        for name in ["modelled_read_s", "modelled_ideal_s", "modelled_read_ratio"] {
            assert_eq!(case["figures"][name]["kind"], kind, "{name} is as exact as the layout: {case}");
        }
        if case["params"]["method"] == "odirect-64k" {
            assert_eq!(kind, "exact");
            direct.push(case["figures"]["modelled_read_s"]["value"].to_string());
            if common::figure(case, "extents") == Some(1.0) {
                assert_eq!(common::figure(case, "modelled_read_ratio"), Some(1.0), "{case}");
            }
        } else {
            assert_eq!(kind, "timing");
        }
    }
    assert_eq!(direct[0], direct[1], "the same exact layout, the same seconds to the bit");

    let json = lab.run_json(&["create-file", "--fs", "xfs", "--set", "size=64M", "--set", "method=odirect-64k", "--disk", "laptop-5400"], 0);
    let case = &common::cases(&json)[0];
    assert_eq!(case["target"]["disk"], "laptop-5400");
    assert_ne!(case["figures"]["modelled_read_s"]["value"].to_string(), direct[0], "another drive, other seconds: {case}");

    // The preset: seed 002 reported from a 5400 rpm laptop drive.
    let json = lab.run_json(&["--preset", "seeds", "replace-files", "--fs", "ext4"], 0);
    assert!(common::cases(&json).iter().all(|c| c["target"]["disk"] == "laptop-5400"), "{json}");
    let json = lab.run_json(&["--preset", "seeds", "replace-files", "--fs", "ext4", "--disk", "ssd-plp"], 0);
    assert!(common::cases(&json).iter().all(|c| c["target"]["disk"] == "ssd-plp"), "the run's --disk wins: {json}");
    let out = lab.expect(&["run", "--no-store", "replace-files", "--fs", "ext4", "--disk", "floppy"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--disk floppy: no disk profile"), "{out:?}");
    lab.assert_nothing_left("after modelled cases");
}
