//! Test helpers for the probes: loop devices and mounts made in a test and
//! released by `Drop`, so a failing assertion leaves nothing attached.
//!
//! The loop device is `tests/common/loop_device.rs`, the integration tests'
//! own, included here by path (a unit test cannot reach that crate
//! otherwise); everything lives under `/var/tmp/PREFIX-*` (`tests/common/temp.rs`),
//! which the CI script checks is gone afterwards.

use std::process::Command;

/// True when running as root; otherwise prints why `test` is skipped. Under
/// `FSLAB_REQUIRE_ROOT_TESTS` skipping is a failure.
pub fn root_or_skip(test: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    assert!(std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_none(), "{test} needs root");
    eprintln!("skipping {test}: needs root");
    false
}

/// Run `cmd args`, panicking with its stderr when it fails; its stdout.
pub fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// The loop-device helper is the integration tests' own file, compiled
// into the unit tests too, so there is one way to make and release one.
#[path = "../../tests/common/loop_device.rs"]
mod loop_device;

// The folder names it uses, under the suite's prefix.
use crate::test_temp as temp;

pub use loop_device::LoopDevice;
