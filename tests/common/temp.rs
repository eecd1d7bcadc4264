//! The names of the suite's own folders, images and loop backing files.
//!
//! Every one the tests make in `/var/tmp` is named under one prefix:
//! `$FSLAB_TEST_PREFIX` (`scripts/test.sh` sets one a run,
//! `fslab-test-<random>`, and its leftover check counts only names under
//! it, so a second suite or a user's fslab run beside it is not taken for
//! this one's leftovers), else `fslab-test` (a developer's `cargo test`).
//!
//! Two crates compile this file: the integration tests as
//! `tests/common/temp.rs`, and the library's unit tests through a `#[path]`
//! module (`test_temp` in `src/lib.rs`), as `loop_device.rs` is.

/// The prefix of every name the tests make in `/var/tmp`.
pub fn prefix() -> String {
    std::env::var("FSLAB_TEST_PREFIX")
        .ok()
        .filter(|p| !p.is_empty() && !p.contains('/'))
        .unwrap_or_else(|| "fslab-test".to_string())
}

/// A fresh folder `/var/tmp/PREFIX-LABEL-XXXXXX` (`PREFIX-XXXXXX` for an
/// empty label), removed with what it holds when dropped.
pub fn dir(label: &str) -> tempfile::TempDir {
    let name = if label.is_empty() { format!("{}-", prefix()) } else { format!("{}-{label}-", prefix()) };
    tempfile::Builder::new().prefix(&name).tempdir_in("/var/tmp").expect("a test folder in /var/tmp")
}
