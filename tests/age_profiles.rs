//! The aging engine on real file systems (root, loop devices): `churn`
//! reaches its fill and fragments free space against the fresh file
//! system, `fill` lands on its level, `tree` and a profile file age,
//! and `git:` leaves exactly the last commit's tree.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use common::{ScratchFs, run};
use fslab::age::{self, AgeSpec};
use fslab::layout::freespace;

fn quiet(_: &str) {}

fn spec(text: &str) -> AgeSpec {
    text.parse().unwrap()
}

/// churn on 1 GiB: fill ±2%, more and smaller free extents than fresh;
/// then fill() to 90% ±2%.
fn churn_then_fill(fs: &str, mkfs: &[&str]) {
    let test = format!("churn_then_fill_{fs}");
    let Some(scratch) = ScratchFs::new(&test, fs, 1024, mkfs) else { return };
    let fresh = freespace::measure(&scratch.mount, false).unwrap();
    let started = Instant::now();
    let aged = age::age(&scratch.mount, &spec("churn"), &quiet).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let level = age::fill_level(&scratch.mount).unwrap();
    eprintln!(
        "{fs} 1 GiB churn: {seconds:.1} s, {} MiB written, {} files made, {} deleted, level {level:.3}",
        aged.bytes_written >> 20,
        aged.files_made,
        aged.files_deleted
    );
    assert!((level - 0.8).abs() <= 0.02, "{fs}: churn left the level at {level}");
    assert_eq!(aged.rounds, 4);
    assert!(aged.files_deleted > 0 && aged.bytes_written > 700 << 20, "{aged:?}");
    let after = freespace::measure(&scratch.mount, false).unwrap();
    assert!(
        after.free_extents > fresh.free_extents && after.largest_bytes < fresh.largest_bytes,
        "{fs}: free extents {} -> {}, largest {} -> {}",
        fresh.free_extents,
        after.free_extents,
        fresh.largest_bytes,
        after.largest_bytes
    );
    let filled = age::fill(&scratch.mount, 0.9, &quiet).unwrap();
    let level = age::fill_level(&scratch.mount).unwrap();
    assert!((level - 0.9).abs() <= 0.02 && (filled.level - level).abs() < 0.005, "{fs}: fill left {level}: {filled:?}");
    assert!(filled.files > 0 && scratch.path("fill").is_dir());
    // Above the level already: nothing is written.
    assert_eq!(age::fill(&scratch.mount, 0.5, &quiet).unwrap().files, 0);
}

#[test]
fn churn_reaches_its_fill_and_fragments_free_space_on_xfs() {
    churn_then_fill("xfs", &["-b", "size=4096"]);
}

#[test]
fn churn_reaches_its_fill_and_fragments_free_space_on_ext4() {
    churn_then_fill("ext4", &["-b", "4096"]);
}

#[test]
fn tree_and_profile_file_age_to_their_fill() {
    let Some(scratch) = ScratchFs::new("tree_and_profile_file", "ext4", 256, &["-b", "4096"]) else { return };
    let aged = age::age(&scratch.mount, &spec("tree:fill=60%,rounds=2"), &quiet).unwrap();
    let level = age::fill_level(&scratch.mount).unwrap();
    assert!((level - 0.6).abs() <= 0.02, "tree left {level}: {aged:?}");
    assert!(aged.files_made > 5_000 && aged.files_deleted > 1_000, "{aged:?}");
    assert!(scratch.path("age/t0").is_dir() || scratch.path("age/t1").is_dir());

    let Some(other) = ScratchFs::new("tree_and_profile_file", "xfs", 512, &["-b", "size=4096"]) else { return };
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/age-profile.json");
    let spec = spec(&format!("file:{}", example.display()));
    assert!(spec.resolve().unwrap().starts_with(&format!("file:{}#{{", example.display())));
    let aged = age::age(&other.mount, &spec, &quiet).unwrap();
    let level = age::fill_level(&other.mount).unwrap();
    assert!((level - 0.8).abs() <= 0.02, "file profile left {level}: {aged:?}");
    assert_eq!(aged.rounds, 6);
}

/// `git ls-tree -r -l` of `commit`: path → size (symlinks: the target's
/// length), submodules left out, as aging leaves them out.
fn tree_of(repo: &str, commit: &str) -> BTreeMap<String, u64> {
    let out = run("git", &["-c", "safe.directory=*", "-C", repo, "ls-tree", "-r", "-l", "--full-tree", commit]);
    out.lines()
        .filter(|l| !l.starts_with("160000"))
        .map(|l| {
            let (head, path) = l.split_once('\t').unwrap();
            (path.to_string(), head.split_whitespace().nth(3).unwrap().parse().unwrap())
        })
        .collect()
}

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, u64>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if meta.is_dir() {
            walk(&entry.path(), &path, out);
        } else {
            out.insert(path, meta.len());
        }
    }
}

#[test]
fn git_aging_leaves_the_last_commits_tree() {
    let Some(scratch) = ScratchFs::new("git_aging", "ext4", 256, &["-b", "4096"]) else { return };
    let repo = env!("CARGO_MANIFEST_DIR");
    let spec = spec(&format!("git:{repo}:10"));
    let identity = spec.resolve().unwrap();
    let head = run("git", &["-c", "safe.directory=*", "-C", repo, "rev-parse", "HEAD"]);
    assert!(identity.ends_with(head.trim()), "{identity}");
    assert_eq!(identity.matches(',').count(), 9, "{identity}");
    let aged = age::age(&scratch.mount, &spec, &quiet).unwrap();
    assert_eq!(aged.rounds, 10);
    assert!(aged.note.as_deref().unwrap().starts_with("checked out 10 commits of"), "{aged:?}");
    let mut found = BTreeMap::new();
    walk(&scratch.path("age/tree"), "", &mut found);
    assert_eq!(found, tree_of(repo, "HEAD"));
    // More commits than the history has: refused as bad input.
    let err = spec_error(&format!("git:{repo}:100000"));
    assert!(err.contains("first-parent commits"), "{err}");
}

fn spec_error(text: &str) -> String {
    let err = spec(text).resolve().unwrap_err();
    assert_eq!(err.kind, fslab::error::ErrorKind::Usage);
    err.message
}

#[test]
fn profile_file_errors_name_the_file_and_field() {
    let dir = tempfile::Builder::new().prefix("fslab-test-age-").tempdir_in("/var/tmp").unwrap();
    let path = dir.path().join("p.json");
    std::fs::write(&path, r#"{"sizes":[{"min":1,"max":2,"weight":1}],"lifetimes":[{"rounds":1,"weight":1}],"depth":3}"#)
        .unwrap();
    let err = spec_error(&format!("file:{}", path.display()));
    assert!(err.contains(&path.display().to_string()) && err.contains("unknown field `depth`"), "{err}");
    let err = spec_error(&format!("file:{}", dir.path().display()));
    assert!(err.contains("not a regular file"), "{err}");
    let err = spec_error(&format!("git:{}", dir.path().display()));
    assert!(err.contains("not a git repository"), "{err}");
}
