//! Build script: records the git commit fslab is built from, so that
//! `fslab --version` (and what a run records) can say exactly which code
//! ran. Outside a git checkout, or without git, the commit is "unknown".

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "--short", "HEAD"]);
    // Build again when HEAD moves: HEAD itself (a branch switch or a
    // detached checkout) and the branch's ref, loose or packed.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={}", PathBuf::from(dir).join("HEAD").display());
    }
    if let (Some(common), Some(branch)) = (git(&["rev-parse", "--git-common-dir"]), git(&["symbolic-ref", "-q", "HEAD"])) {
        let common = PathBuf::from(common);
        println!("cargo:rerun-if-changed={}", common.join(&branch).display());
        println!("cargo:rerun-if-changed={}", common.join("packed-refs").display());
    }
    // A build from changed sources is not that commit: say so. (Cargo
    // rebuilds on source changes anyway; this only reruns the script then.)
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let dirty = commit.is_some() && git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
    let commit = match commit {
        Some(c) if dirty => format!("{c}+dirty"),
        Some(c) => c,
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=FSLAB_GIT_COMMIT={commit}");
}
