//! Releasing a `--dir` work folder never reaches outside it: what the
//! measured command mounted or symlinked there is unmounted or unlinked,
//! never deleted through — at the end of the run and by `fslab cleanup`
//! after a SIGKILL. And a `--dir` that cannot take a folder is refused
//! (exit 3) before anything is made.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Lab, Watched, mounts_under, root_or_skip};

/// Unmounts (lazily) whatever is still mounted under a folder when dropped,
/// so a failing test never leaves a mount, nor lets the lab's own removal
/// delete through one.
struct UnmountUnder(PathBuf);

impl Drop for UnmountUnder {
    fn drop(&mut self) {
        // Again while any is left: unmounting one can uncover one below.
        for _ in 0..8 {
            let mut left = mounts_under(&self.0);
            if left.is_empty() {
                return;
            }
            left.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
            for mount in left {
                let _ = Command::new("umount").arg("-l").arg(&mount).output();
            }
        }
    }
}

/// One test's lab (whose mounts are detached first when it is dropped),
/// a folder of decoy files outside the work folder with what they hold,
/// and the `--dir` folder.
struct Setup {
    src: PathBuf,
    before: BTreeMap<PathBuf, Vec<u8>>,
    work: PathBuf,
    _unmount: UnmountUnder,
    lab: Lab,
}

impl Setup {
    fn new() -> Setup {
        let lab = Lab::new();
        let src = lab.dir.path().join("src");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("a"), b"decoy a").unwrap();
        std::fs::write(src.join("sub/b"), b"decoy b").unwrap();
        let work = lab.dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        Setup { before: contents(&src), src, work, _unmount: UnmountUnder(lab.dir.path().to_path_buf()), lab }
    }

    /// The decoys are as they were and nothing is mounted in the lab.
    fn assert_untouched(&self, context: &str) {
        assert_eq!(contents(&self.src), self.before, "{context}: the decoys changed");
        assert_eq!(mounts_under(self.lab.dir.path()), Vec::<PathBuf>::new(), "{context}: left mounted");
        assert_eq!(std::fs::read_dir(&self.work).unwrap().count(), 0, "{context}: the work folder is left");
    }
}

fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            found.extend(contents(&path));
        } else {
            found.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    found
}

/// What a measured command may leave in its work folder (`SRC` is the
/// decoy folder), each a variant run on its own.
const LEFT_BEHIND: [&str; 5] = [
    "mkdir x && mount --bind SRC x",
    // Stacked: the deeper mount is hidden under the later one until that goes.
    "mkdir -p d/e && mount --bind SRC d/e && mount --bind SRC d",
    "mount --bind SRC .",
    "touch f && mount --bind SRC/a f",
    "ln -s SRC link && ln -s SRC/a alink && mkdir y && ln -s SRC/sub y/l",
];

#[test]
fn dir_release_never_crosses_a_mount_or_follows_a_symlink() {
    if !root_or_skip("dir_release_mounts") {
        return;
    }
    let s = Setup::new();
    for script in LEFT_BEHIND {
        let script = script.replace("SRC", s.src.to_str().unwrap());
        let json = s.lab.exec_json(&["--dir", s.work.to_str().unwrap(), "--", "sh", "-c", &script], 0);
        assert_eq!(common::cases(&json)[0]["status"], "ok", "{script}: {json}");
        s.assert_untouched(&script);
    }
    s.lab.assert_nothing_left("after the --dir runs");
}

#[test]
fn cleanup_after_sigkill_never_crosses_a_mount_either() {
    if !root_or_skip("dir_cleanup_mounts") {
        return;
    }
    let s = Setup::new();
    let script = "mkdir x && mount --bind SRC x && ln -s SRC l && mount --bind SRC . && sleep 60";
    let script = script.replace("SRC", s.src.to_str().unwrap());
    let mut c = s.lab.command();
    c.args(["exec", "--progress", "json", "--dir", s.work.to_str().unwrap(), "--", "sh", "-c", &script]);
    let mut child = Watched::spawn(c.stdout(Stdio::null()));
    child.until(Duration::from_secs(30), "the command never mounted", || mounts_under(&s.work).len() >= 2);
    child.kill();
    let out = s.lab.expect(&["cleanup"], 0);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("work folder"), "{said}");
    s.assert_untouched(&format!("after SIGKILL and cleanup, which said:\n{said}"));
    s.lab.assert_nothing_left("after SIGKILL and cleanup");
}

#[test]
fn an_unwritable_dir_is_refused_with_exit_3_before_anything_is_made() {
    if !root_or_skip("dir_unwritable") || !common::have("setpriv") {
        return;
    }
    let Setup { lab, work, .. } = &Setup::new();
    let ro = lab.dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    // Read-only to root too: a read-only bind mount.
    common::run("mount", &["--bind", work.to_str().unwrap(), ro.to_str().unwrap()]);
    common::run("mount", &["-o", "remount,bind,ro", ro.to_str().unwrap()]);
    let out = lab.exec(&["--dir", ro.to_str().unwrap(), "--", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("read-only") && stderr.contains("--dir"), "{stderr}");
    common::run("umount", &[ro.to_str().unwrap()]);
    std::fs::remove_dir(&ro).unwrap();

    // Not writable by a user who is not root.
    use std::os::unix::fs::PermissionsExt;
    for p in [lab.dir.path().to_path_buf(), lab.state()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(work, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_fslab"))
        .args(["exec", "--dir"])
        .arg(work)
        .args(["--", "true"])
        .env("FSLAB_STATE_DIR", lab.state())
        .env("FSLAB_STORE", lab.store())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("permission") && stderr.contains("--dir"), "{stderr}");
    // Nothing was made: no store, no ledger, nothing in the folder.
    assert!(!lab.store().exists(), "the store was made before the refusal");
    assert_eq!(std::fs::read_dir(work).unwrap().count(), 0);
    lab.assert_nothing_left("after refused --dir runs");
}
