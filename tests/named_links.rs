//! Paths given to `frag` and `map` as root: a symbolic link is followed
//! only as for every other path fslab is given (`-o`, `--svg`, a store):
//! when it and every folder above it belong to root or the invoking user
//! and no one else may write those folders. Another user's link into a
//! folder only root may read gets them no file name and no size: exit 2,
//! naming the link and its owner.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use common::root_or_skip;

const NOBODY: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A symlink at `at` to `to`, owned by `uid`.
fn link_of(uid: u32, at: &Path, to: &Path) {
    std::os::unix::fs::symlink(to, at).unwrap();
    std::os::unix::fs::lchown(at, Some(uid), Some(uid)).unwrap();
}

/// `fslab ARGS` as root run directly (no `SUDO_UID`: root is the user).
fn fslab(args: &[&str], path: &Path) -> Output {
    common::fslab_command().env_remove("SUDO_UID").args(args).arg(path).output().unwrap()
}

#[test]
fn frag_and_map_follow_no_other_users_link_into_a_folder_only_root_may_read() {
    if !root_or_skip("frag_map_foreign_links") {
        return;
    }
    let dir = common::temp::dir("links");
    let dir = dir.path();
    chmod(dir, 0o755);
    // Root's secret folder, and what nobody wants to learn about it.
    let secret = dir.join("secret");
    std::fs::create_dir(&secret).unwrap();
    chmod(&secret, 0o700);
    let payroll = secret.join("payroll-2024.txt");
    std::fs::write(&payroll, vec![b'x'; 12345]).unwrap();
    // nobody's own folder with their links, and their link in a folder of
    // root's that anyone may read but only root may write.
    let theirs = dir.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let roots = dir.join("roots");
    std::fs::create_dir(&roots).unwrap();
    chmod(&roots, 0o755);
    link_of(NOBODY, &theirs.join("tree"), &secret);
    link_of(NOBODY, &theirs.join("file"), &payroll);
    link_of(NOBODY, &roots.join("tree"), &secret);
    link_of(NOBODY, &roots.join("file"), &payroll);
    // root's own link in nobody's folder: nobody could have swapped it.
    let swappable = theirs.join("sub");
    std::fs::create_dir(&swappable).unwrap();
    std::os::unix::fs::chown(&swappable, Some(NOBODY), Some(NOBODY)).unwrap();
    link_of(0, &swappable.join("tree"), &secret);

    for (command, link, says) in [
        ("frag", theirs.join("tree"), format!("{} is a symbolic link that belongs to uid 65534", theirs.join("tree").display())),
        ("frag", roots.join("tree"), format!("{} is a symbolic link that belongs to uid 65534", roots.join("tree").display())),
        ("frag", swappable.join("tree"), format!("{} is a symbolic link where another user could have made it", swappable.join("tree").display())),
        ("map", theirs.join("file"), format!("{} is a symbolic link that belongs to uid 65534", theirs.join("file").display())),
        ("map", roots.join("file"), format!("{} is a symbolic link that belongs to uid 65534", roots.join("file").display())),
    ] {
        for json in [false, true] {
            let args: &[&str] = if json { &[command, "--json"] } else { &[command] };
            let out = fslab(args, &link);
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let context = format!("fslab {args:?} {}", link.display());
            assert_eq!(out.status.code(), Some(2), "{context}: followed another user's link\n{stdout}\n{stderr}");
            assert!(stderr.contains(&says), "{context}: does not name the link and its owner:\n{stderr}");
            for leaked in ["payroll", "12345", "12.1 KiB"] {
                assert!(!stdout.contains(leaked) && !stderr.contains(leaked), "{context}: told {leaked}:\n{stdout}\n{stderr}");
            }
        }
    }

    // Root's own link in root's own folder is followed, as before.
    let mine = dir.join("mine");
    std::fs::create_dir(&mine).unwrap();
    chmod(&mine, 0o700);
    link_of(0, &mine.join("tree"), &secret);
    link_of(0, &mine.join("file"), &payroll);
    let out = fslab(&["frag", "--json"], &mine.join("tree"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = fslab(&["map"], &mine.join("file"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("payroll-2024.txt") || String::from_utf8_lossy(&out.stdout).contains("file"), "{}", String::from_utf8_lossy(&out.stdout));
}
