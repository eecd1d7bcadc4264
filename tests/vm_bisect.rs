//! `fslab bisect --kernel debian:A..B`: a bisect over eight of Debian's
//! packaged kernels, each step a guest of that kernel, with a command whose
//! exact figure the test makes change at a kernel it chooses (by the
//! release the guest reports).

mod common;

use common::Lab;

/// The eight kernels, in Debian's order, and the first the command
/// behaves differently under.
const RANGE: &str = "debian:6.1.0-47..6.1.0-54";
const FIRST_BAD: &str = "6.1.0-52";

#[test]
fn a_kernel_bisect_over_eight_debian_kernels_names_the_kernel_the_figure_changes_at() {
    if !common::root_or_skip("a kernel bisect") || common::kernel::debian_kernel().is_none() {
        return;
    }
    let lab = Lab::new();
    // One file written and fsynced under kernels before 6.1.0-52, forty
    // from it on: journal commits about 1 against 40.
    let script = "case \"$(uname -r)\" in 6.1.0-4[0-9]-*|6.1.0-5[01]-*) n=1;; *) n=40;; esac; \
                  i=0; while [ $i -lt $n ]; do echo x > f$i; sync f$i; i=$((i+1)); done";
    let out = lab
        .command()
        .args(["bisect", "--json", "--kernel", RANGE, "--fs", "ext4", "--figure", "journal_commits", "--progress", "none"])
        .arg("--scratch")
        .arg(lab.scratch())
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &json["bisect"];
    let points = b["points"].as_array().unwrap();
    assert_eq!(points.len(), 8, "{b:#}");
    assert_eq!(points[0]["key"], "debian:6.1.0-47");
    assert_eq!(b["outcome"]["kind"], "found", "{b:#}");
    let first = b["outcome"]["first_bad"].as_u64().unwrap() as usize;
    assert_eq!(points[first]["label"], FIRST_BAD, "{b:#}");
    assert_eq!(points[first - 1]["label"], "6.1.0-51");
    // Ends, then at most three steps between them.
    assert!(b["steps"].as_u64().unwrap() <= 3, "{b:#}");
    // Each step is a stored run of a guest of its kernel.
    let tag = format!("bisect:{}", b["id"].as_str().unwrap());
    let runs: serde_json::Value = serde_json::from_slice(&lab.expect(&["runs", "--json", "--tag", &tag], 0).stdout).unwrap();
    let measured = b["measured"].as_array().unwrap().len();
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(measured), "{runs:#}");
    lab.assert_nothing_left("after a kernel bisect");
}
