//! Bad input is refused with exit 2, a message that says what to do, and
//! nothing made: sizes no file system fits in, intervals and counts out of
//! range, mkfs and mount options that name another device or a path, and
//! mount options the kernel does not know (in the kernel's own words).

mod common;

use std::hash::{DefaultHasher, Hasher};
use std::io::Read;

use common::{Lab, LoopDevice, root_or_skip};

/// Run `fslab exec --scratch LAB ARGS -- true`, insist on exit 2 with
/// every one of `says` in stderr and nothing left; stderr.
fn refused(lab: &Lab, args: &[&str], says: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--", "true"]);
    let out = lab.exec(&all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "fslab exec {args:?}\n--- stderr\n{stderr}");
    for word in says {
        assert!(stderr.contains(word), "fslab exec {args:?}: no `{word}` in\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    lab.assert_nothing_left(&format!("{args:?}"));
    stderr
}

#[test]
fn sizes_below_each_file_systems_smallest_are_refused_before_mkfs() {
    let lab = Lab::new();
    refused(&lab, &["--fs", "ext4", "--size", "0"], &["--size 0: too small for ext4", "give --size 2M or more"]);
    refused(&lab, &["--fs", "ext2", "--size", "1"], &["too small for ext2", "give --size 104K or more"]);
    refused(&lab, &["--fs", "ext2", "--size", "100K"], &["--size 100K: too small for ext2"]);
    refused(&lab, &["--fs", "btrfs", "--size", "100M"], &["too small for btrfs", "give --size 109M or more"]);
    // All five: the largest minimum is the one to name.
    refused(&lab, &["--size", "200M"], &["too small for xfs", "give --size 300M or more"]);
}

#[test]
fn a_size_no_file_can_have_is_refused_in_words() {
    let lab = Lab::new();
    let stderr = refused(&lab, &["--fs", "ext4", "--size", "18446744073709551615"], &["largest file", "2G"]);
    assert!(!stderr.contains("integral type"), "{stderr}");
}

#[test]
fn an_interval_out_of_range_is_refused_not_a_panic() {
    let lab = Lab::new();
    for interval in ["1e300", "0.000001", "NaN", "inf", "-1"] {
        refused(&lab, &["--fs", "ext4", &format!("--interval={interval}")], &["--interval", "from 0.01 to 3600"]);
    }
}

/// Profile weights are relative; ones whose sum passes 2^64-1 are refused
/// naming the file and the field (they wrapped, or panicked in a debug
/// build).
#[test]
fn a_profile_whose_weights_overflow_is_refused_naming_the_file_and_field() {
    let lab = Lab::new();
    let profile = lab.dir.path().join("profile.json");
    let max = u64::MAX;
    for (json, field) in [
        (format!(r#"{{"sizes":[{{"min":1,"max":2,"weight":{max}}},{{"min":1,"max":2,"weight":1}}],"lifetimes":[{{"rounds":1,"weight":1}}]}}"#), "sizes[1].weight"),
        (format!(r#"{{"sizes":[{{"min":1,"max":2,"weight":1}}],"lifetimes":[{{"rounds":1,"weight":2}},{{"rounds":2,"weight":{max}}}]}}"#), "lifetimes[1].weight"),
    ] {
        std::fs::write(&profile, json).unwrap();
        let age = format!("file:{}", profile.display());
        refused(&lab, &["--fs", "ext4", "--size", "64M", "--age", &age], &[profile.to_str().unwrap(), field]);
    }
}

#[test]
fn a_count_out_of_range_says_so_with_the_range() {
    let lab = Lab::new();
    let scratch = lab.scratch();
    let args = ["run", "direct-stream", "--scratch", scratch.to_str().unwrap(), "--set", "seconds=1e9"];
    let out = lab.expect(&args, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("out of range") && stderr.contains("from 1 to 86400"), "{stderr}");
    assert!(!stderr.contains("not a whole number"), "{stderr}");
    lab.assert_nothing_left("seconds=1e9");
}

#[test]
fn a_misspelled_mount_option_is_refused_with_the_kernels_reason_before_mkfs() {
    if !root_or_skip("a_misspelled_mount_option_is_refused_with_the_kernels_reason_before_mkfs") {
        return;
    }
    let lab = Lab::new();
    refused(&lab, &["--fs", "ext4", "--size", "64M", "--mount-opt", "ext4=nodelaloc"], &[
        "--mount-opt ext4=nodelaloc",
        "Unknown parameter 'nodelaloc'",
    ]);
    refused(&lab, &["--fs", "xfs", "--size", "512M", "--mount-opt", "xfs=noatime,nobarier"], &[
        "xfs=nobarier",
        "xfs: Unknown parameter 'nobarier'",
    ]);
    // btrfs gives its reason in the kernel log, not the mount context's.
    refused(&lab, &["--fs", "btrfs", "--size", "512M", "--mount-opt", "btrfs=compress=zstdd"], &[
        "btrfs=compress=zstdd",
        "BTRFS error: failed to parse compression option 'zstdd'",
    ]);
    // Mount flags mount(8) handles itself are no file system's business.
    let out = lab.exec(&["--fs", "ext4", "--size", "64M", "--mount-opt", "ext4=noatime,nodelalloc", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("ext4 made with mount -o noatime,nodelalloc"), "the header shows the options:\n{shown}");
    lab.assert_nothing_left("noatime,nodelalloc");

    // Refused only when the superblock is read, after mkfs: the case fails
    // with the kernel's own reason, not mount(8)'s generic one.
    let out = lab.exec(&["--fs", "ext2", "--size", "64M", "--mount-opt", "ext2=data=journal", "--", "true"]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("the kernel refuses it") && said.contains("incompatible with ext2"), "{said}");
    lab.assert_nothing_left("ext2 data=journal");
}

/// A hash of everything on `device`.
fn device_hash(device: &str) -> u64 {
    let mut file = std::fs::File::open(device).unwrap();
    let mut hasher = DefaultHasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).unwrap();
        if n == 0 {
            return hasher.finish();
        }
        hasher.write(&buffer[..n]);
    }
}

#[test]
fn options_that_name_another_device_or_a_path_are_refused_before_anything_is_made() {
    if !root_or_skip("options_that_name_another_device_or_a_path_are_refused_before_anything_is_made") {
        return;
    }
    // A decoy device each option names: big enough for any of them to
    // format or write a log on, were they passed on.
    let decoy = LoopDevice::new(128);
    std::fs::write(&decoy.device, vec![0xa5u8; 4 << 20]).unwrap();
    let before = device_hash(&decoy.device);
    let dev = decoy.device.as_str();
    let lab = Lab::new();
    let mkfs = |fs: &str, size: &str, opt: String, says: &str| {
        refused(&lab, &["--fs", fs, "--size", size, "--mkfs-opt", &format!("{fs}={opt}")], &["--mkfs-opt", says]);
    };
    mkfs("btrfs", "512M", dev.to_string(), "another device to add");
    mkfs("btrfs", "512M", format!("-f {dev}"), "another device to add");
    mkfs("btrfs", "512M", "--rootdir /etc".into(), "copies a directory");
    mkfs("xfs", "512M", format!("-l logdev={dev},size=64m"), "another device");
    mkfs("xfs", "512M", format!("-r rtdev={dev}"), "another device");
    mkfs("xfs", "512M", "-d name=/var/tmp/x".into(), "names a file");
    mkfs("xfs", "512M", "-p /etc/fstab".into(), "protofile");
    mkfs("ext4", "64M", format!("-J device={dev}"), "another device");
    mkfs("ext4", "64M", format!("-qJdevice={dev}"), "another device");
    mkfs("ext4", "64M", "-d /etc".into(), "copies a directory");
    mkfs("ext3", "64M", "-l /etc/fstab".into(), "bad-block list");
    mkfs("ext2", "64M", "-c".into(), "bad blocks");
    mkfs("ext2", "64M", "-z /var/tmp/undo".into(), "undo file");
    mkfs("ext2", "64M", format!("-- {dev}"), "--");

    let mount = |fs: &str, size: &str, opt: String, says: &str| {
        refused(&lab, &["--fs", fs, "--size", size, "--mount-opt", &format!("{fs}={opt}")], &["--mount-opt", says]);
    };
    mount("xfs", "512M", format!("logdev={dev}"), "the log on another device");
    mount("xfs", "512M", format!("noatime,rtdev={dev}"), "realtime section on another device");
    mount("btrfs", "512M", format!("device={dev}"), "adds another device");
    mount("ext4", "64M", format!("journal_path={dev}"), "journal on another device");
    mount("ext3", "64M", "journal_dev=1792".into(), "journal on another device");
    mount("ext4", "64M", format!("loop={dev}"), "loop device of its own");

    // The issue's own pair, together.
    refused(
        &lab,
        &["--fs", "xfs", "--size", "512M", "--mkfs-opt", &format!("xfs=-l logdev={dev},size=64m"), "--mount-opt", &format!(
            "xfs=logdev={dev}"
        )],
        &["logdev"],
    );
    assert_eq!(device_hash(&decoy.device), before, "the decoy device was written to");
}

#[test]
fn a_dir_on_the_kernels_own_file_systems_is_refused_before_anything_is_made() {
    let lab = Lab::new();
    for dir in ["/proc", "/sys/kernel"] {
        let out = lab.exec(&["--dir", dir, "--", "true"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "--dir {dir}: {stderr}");
        assert!(stderr.contains(&format!("--dir {dir}: a ")) && stderr.contains("disk's file system"), "{stderr}");
    }
    lab.assert_nothing_left("after --dir on /proc and /sys");
}

#[test]
fn an_empty_command_is_refused_before_anything_is_made() {
    let lab = Lab::new();
    let work = lab.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = lab.exec(&["--dir", work.to_str().unwrap(), "--", ""]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("empty") && stderr.contains("give the program to run"), "{stderr}");
    assert!(!lab.store().exists(), "nothing was stored");
    lab.assert_nothing_left("exec -- \"\"");
}
