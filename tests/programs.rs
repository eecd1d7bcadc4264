//! The programs people run, as scenarios: `dpkg` upgrades real packages
//! (built by the scenario with dpkg-deb) in a scratch root, and every
//! crash state is judged by dpkg's own tools. With its fsyncs no state
//! loses a file of a package dpkg calls installed, on ext4 or btrfs; with
//! `--force-unsafe-io` btrfs does, and dpkg's flushes are fewer.

mod common;

use common::{Lab, cases, measured, recorder_or_skip};

#[test]
fn dpkg_with_its_fsyncs_loses_nothing_and_with_unsafe_io_loses_installed_files_on_btrfs() {
    if !recorder_or_skip("dpkg_with_its_fsyncs_loses_nothing_and_with_unsafe_io_loses_installed_files_on_btrfs") {
        return;
    }
    let lab = Lab::new();
    let args = ["dpkg", "--fs", "ext4,btrfs", "--crash", "flush", "--set", "unsafe_io=no,yes", "--size", "512M", "--no-store"];
    let json = lab.run_json(&args, 0);
    let mut flushes = std::collections::BTreeMap::new();
    for case in cases(&json) {
        let (fs, unsafe_io) = (case["fs"].as_str().unwrap(), case["params"]["unsafe_io"].as_str().unwrap());
        assert_eq!(case["status"], "ok", "{fs} {unsafe_io}: {}", case["error"]);
        // dpkg said what it did: three packages upgraded over 1.0.
        let said = case["command"]["stdout"].as_str().unwrap();
        assert_eq!(said.matches("Setting up fslab-").count(), 3, "{said}");
        // Each package marked durable once dpkg returned.
        let marks = case["crash"]["marks"].as_array().unwrap();
        let durable: Vec<&str> = marks.iter().filter_map(|m| m["what"].as_str()?.strip_prefix("durable:")).collect();
        assert_eq!(durable, ["fslab-1", "fslab-2", "fslab-3"], "{fs} {unsafe_io}");
        let states = &case["crash"]["states"];
        assert!(measured(case, "crash_states") >= 10.0, "{fs} {unsafe_io}: {states}");
        assert_eq!(measured(case, "crash_unmountable") + measured(case, "crash_fsck_failed"), 0.0, "{fs} {unsafe_io}: {states}");
        let bad = measured(case, "crash_check_failed");
        match (fs, unsafe_io) {
            (_, "no") => assert_eq!(bad, 0.0, "{fs}: dpkg with its fsyncs lost something: {}", states["first_bad"]),
            ("btrfs", "yes") => {
                assert!(bad >= 1.0, "btrfs with --force-unsafe-io: no state lost an installed file: {states}");
                let detail = states["first_bad"]["detail"].as_str().unwrap();
                assert!(detail.contains("dpkg --verify of installed packages"), "{detail}");
            }
            _ => {}
        }
        flushes.insert((fs.to_string(), unsafe_io.to_string()), measured(case, "flushes"));
    }
    for fs in ["ext4", "btrfs"] {
        let (safe, quick) = (flushes[&(fs.into(), "no".into())], flushes[&(fs.into(), "yes".into())]);
        assert!(safe > quick, "{fs}: dpkg's fsyncs cost no flushes: {safe} with, {quick} without");
    }
    lab.assert_nothing_left("after dpkg's crash states");
}
