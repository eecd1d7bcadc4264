//! A file of a million extent records is mapped streaming, in bounded
//! memory: peak RSS of `fslab map --json` (list included) stays under
//! 64 MiB, measured by the kernel's own accounting of the child.

mod common;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};

use common::{ScratchFs, fslab_json, run};

/// Run fslab with stdout to /dev/null under GNU time and return (exit
/// code, peak RSS in KiB). GNU time forks fslab from its own small process:
/// measured from this test process instead, `ru_maxrss` would inherit the
/// test's own high-water mark across fork and exec.
fn fslab_peak_rss(args: &[&str]) -> (i32, u64) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "fslab-peak-rss-kib %M"])
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .stdout(Stdio::from(File::create("/dev/null").unwrap()))
        .output()
        .expect("GNU time (package time) runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib = stderr
        .lines()
        .find_map(|l| l.strip_prefix("fslab-peak-rss-kib "))
        .unwrap_or_else(|| panic!("no RSS figure in {stderr}"))
        .trim()
        .parse()
        .unwrap();
    (out.status.code().unwrap_or(-1), kib)
}

#[test]
fn a_million_records_map_in_bounded_memory() {
    // 1 KiB blocks: fallocate 2 Mi blocks, then punch every other one,
    // leaving 2^20 unwritten one-block records.
    let Some(fs) = ScratchFs::new("million_extents", "xfs", 3072, &["-b", "size=1024"]) else { return };
    let path = fs.path("million");
    let f = File::create(&path).unwrap();
    const BLOCKS: i64 = 2 << 20;
    // SAFETY: plain fallocate(2) calls on an open descriptor.
    unsafe {
        assert_eq!(libc::fallocate(f.as_raw_fd(), 0, 0, BLOCKS * 1024), 0);
        for i in (1..BLOCKS).step_by(2) {
            let rc = libc::fallocate(
                f.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                i * 1024,
                1024,
            );
            assert_eq!(rc, 0, "punch {i}: {}", std::io::Error::last_os_error());
        }
    }
    drop(f);
    let p = path.to_str().unwrap();

    let figures = fslab_json(&["map", "--json", "--no-list", p])["files"][0].clone();
    assert_eq!(figures["records"], 1 << 20, "{figures}");
    let fiemap_rows = run("xfs_io", &["-r", "-c", "fiemap", p]).lines().filter(|l| l.contains(": [") && !l.contains("hole")).count();
    assert_eq!(figures["records"].as_u64().unwrap(), fiemap_rows as u64);
    let filefrag = run("filefrag", &[p]);
    assert!(filefrag.contains(&format!(": {} extent", figures["extents"])), "{filefrag} vs {figures}");

    let (code, peak_kib) = fslab_peak_rss(&["map", "--json", p]);
    assert_eq!(code, 0);
    eprintln!("peak RSS mapping 2^20 records with the list: {peak_kib} KiB");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB is not below 64 MiB");
    let (code, peak_kib) = fslab_peak_rss(&["map", p]);
    assert_eq!(code, 0);
    assert!(peak_kib < 64 * 1024, "text: peak RSS {peak_kib} KiB");
}
