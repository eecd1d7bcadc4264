//! Where output goes: `-o` and `--svg` replace only regular files (whole or
//! not at all) and write through to FIFOs and character devices, never
//! replacing them; a closed stdout or stderr never makes fslab panic.

mod common;

use std::os::unix::fs::{FileTypeExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::root_or_skip;

/// A test folder under /var/tmp with a crafted run's JSON in it.
struct Folder {
    dir: tempfile::TempDir,
}

impl Folder {
    fn new() -> Folder {
        let dir = common::temp::dir("output");
        std::fs::write(dir.path().join("run.json"), common::crafted_run_json("20261121T000000Z-1-00000001", true)).unwrap();
        Folder { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `fslab export RUN --csv -o OUT`.
    fn export(&self, out: &Path) -> Command {
        let mut c = common::fslab_command();
        c.args(["export", self.path("run.json").to_str().unwrap(), "--csv", "-o"]).arg(out);
        c
    }

    /// The CSV the run exports, as printed to stdout.
    fn csv(&self) -> Vec<u8> {
        common::fslab_expect(&["export", self.path("run.json").to_str().unwrap(), "--csv"], 0).stdout
    }

    /// Every name in the folder, for "nothing was left beside it".
    fn names(&self) -> Vec<String> {
        common::names(self.dir.path())
    }
}

#[test]
fn a_full_device_is_written_through_and_its_enospc_is_exit_4() {
    let f = Folder::new();
    // The real /dev/full: ENOSPC, exit 4, and it is still the device.
    let (code, err) = common::finish(&mut f.export(Path::new("/dev/full")));
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("/dev/full: write: No space left on device"), "{err}");
    assert!(std::fs::symlink_metadata("/dev/full").unwrap().file_type().is_char_device());
    if !root_or_skip("output_device_copy") {
        return;
    }
    // A copy of the node in the test folder, which the old code replaced
    // with a regular file (the real one is not risked for that).
    let full = f.path("full");
    common::run("mknod", &[full.to_str().unwrap(), "c", "1", "7"]);
    let (code, err) = common::finish(&mut f.export(&full));
    assert_eq!(code, Some(4), "{err}");
    assert!(std::fs::symlink_metadata(&full).unwrap().file_type().is_char_device(), "the device node was replaced");
    assert_eq!(f.names(), ["full", "run.json"], "nothing left beside it");
    let (code, err) = common::finish(&mut f.export(Path::new("/dev/null")));
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
}

#[test]
fn a_link_to_stdout_is_written_through_and_kept() {
    let f = Folder::new();
    let link = f.path("out.csv");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let out = f.export(&link).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, f.csv(), "the CSV went to stdout, through the link");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/proc/self/fd/1"));
    // `report -o` writes through the same way.
    let page = f.path("page.html");
    std::os::unix::fs::symlink("/proc/self/fd/1", &page).unwrap();
    let out = common::fslab_command().arg("report").arg(f.path("run.json")).arg("-o").arg(&page).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.starts_with(b"<!DOCTYPE html>") || out.stdout.starts_with(b"<!doctype html>"), "the page went to stdout");
    assert!(std::fs::symlink_metadata(&page).unwrap().file_type().is_symlink(), "the link was replaced");
    // Stdout a regular file: the file is replaced whole, the link kept.
    let file = f.path("stdout.csv");
    let out = f.export(&link).stdout(std::fs::File::create(&file).unwrap()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&file).unwrap(), f.csv());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
}

#[test]
fn a_fifo_is_written_through_to_its_reader_and_one_without_is_refused() {
    let f = Folder::new();
    let fifo = f.path("fifo");
    common::run("mkfifo", &[fifo.to_str().unwrap()]);
    // Nobody reads it: refused at once (exit 3), no wait, nothing made.
    let (code, err) = common::finish(&mut f.export(&fifo));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("no process reads this FIFO"), "{err}");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // The reader's open waits for the writer's; fslab's non-blocking open
    // must find it there, so give it a moment to get there first.
    std::thread::sleep(Duration::from_millis(300));
    let (code, err) = common::finish(&mut f.export(&fifo));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(reader.join().unwrap(), f.csv());
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(f.names(), ["fifo", "run.json"]);
}

#[test]
fn a_link_to_a_regular_file_replaces_the_file_and_keeps_the_link() {
    let f = Folder::new();
    let real = f.path("real.csv");
    std::fs::write(&real, "old\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = f.path("link.csv");
    std::os::unix::fs::symlink("real.csv", &link).unwrap();
    let (code, err) = common::finish(&mut f.export(&link));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(std::fs::read(&real).unwrap(), f.csv());
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.csv"));
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640, "the mode is kept");
    assert_eq!(f.names(), ["link.csv", "real.csv", "run.json"]);
}

#[test]
fn folders_block_devices_and_dangling_links_are_refused_untouched() {
    let f = Folder::new();
    let folder = f.path("folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("inside"), "x").unwrap();
    let dangling = f.path("dangling");
    std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
    for (out, says) in [(&folder, "a directory"), (&dangling, "a symbolic link to nothing")] {
        let (code, err) = common::finish(&mut f.export(out));
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(says), "{err}");
    }
    assert_eq!(std::fs::read(folder.join("inside")).unwrap(), b"x");
    assert!(!f.path("nowhere").exists());
    assert_eq!(f.names(), ["dangling", "folder", "run.json"]);
    if let Some(block) = ["/dev/loop0", "/dev/sda", "/dev/vda"].into_iter().find(|p| {
        std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_block_device())
    }) {
        let (code, err) = common::finish(&mut f.export(Path::new(block)));
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("a block device"), "{err}");
    }
}

#[test]
fn a_write_that_runs_out_of_space_leaves_the_old_file_whole() {
    if !root_or_skip("output_enospc_regular") {
        return;
    }
    let f = Folder::new();
    let small = f.path("small");
    std::fs::create_dir(&small).unwrap();
    common::run("mount", &["-t", "tmpfs", "-o", "size=8k", "fslab-test", small.to_str().unwrap()]);
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = common::unmount(&self.0);
        }
    }
    let _mounted = Unmount(small.clone());
    let out = small.join("out.csv");
    std::fs::write(&out, "old\n").unwrap();
    // Fill what is left, so the new file cannot be written whole.
    let _ = std::fs::write(small.join("filler"), vec![0u8; 16 * 1024]);
    let (code, err) = common::finish(&mut f.export(&out));
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), b"old\n", "the old file is whole");
    let mut names: Vec<_> = std::fs::read_dir(&small).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["filler", "out.csv"], "no temporary file is left");
}

#[test]
fn closed_stdout_and_stderr_never_make_fslab_panic() {
    let f = Folder::new();
    let walked = f.path("walked");
    std::fs::create_dir(&walked).unwrap();
    for i in 0..5 {
        std::fs::write(walked.join(format!("file{i}")), vec![1u8; 8192]).unwrap();
    }
    let missing = f.path("missing");
    let run = f.path("run.json");
    let file0 = walked.join("file0");
    let commands: [Vec<&std::ffi::OsStr>; 4] = [
        // An error on stderr (a path that cannot be walked).
        vec!["frag".as_ref(), walked.as_os_str(), missing.as_os_str()],
        // Results on stdout.
        vec!["frag".as_ref(), walked.as_os_str()],
        vec!["map".as_ref(), file0.as_os_str()],
        vec!["export".as_ref(), run.as_os_str(), "--csv".as_ref()],
    ];
    for attempt in 0..25 {
        for args in &commands {
            let mut child = common::fslab_command()
                .args(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Both readers gone before fslab writes a byte.
            drop(child.stdout.take());
            drop(child.stderr.take());
            let status = child.wait().unwrap();
            assert!(status.code().is_some_and(|c| c != 101), "attempt {attempt}: fslab {args:?} ended {status:?}");
        }
    }
}

#[test]
fn a_link_another_user_could_have_made_is_not_followed_and_what_it_names_is_unchanged() {
    if !root_or_skip("output_foreign_link") {
        return;
    }
    use std::os::unix::fs::lchown;
    let f = Folder::new();
    // Root's file, in root's own folder: what the links name.
    let victim = f.path("victim");
    std::fs::create_dir(&victim).unwrap();
    let file = victim.join("root.txt");
    std::fs::write(&file, "root's own\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let unchanged = || {
        assert_eq!(std::fs::read(&file).unwrap(), b"root's own\n", "the file a link named was written");
        assert_eq!(common::names(&victim), ["root.txt"], "something was made beside it");
    };
    // A shared folder, root's and sticky like /tmp, where nobody made a
    // link; and nobody's own folder, holding a link of root's.
    let shared = f.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = f.path("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let link = |at: PathBuf, owner: u32, to: &Path| {
        std::os::unix::fs::symlink(to, &at).unwrap();
        lchown(&at, Some(owner), Some(owner)).unwrap();
        at
    };
    let nobodys = link(shared.join("out.csv"), 65534, &file);
    let in_theirs = link(theirs.join("out.csv"), 0, &file);
    let to_device = link(shared.join("null.csv"), 65534, Path::new("/dev/null"));
    let run = f.path("run.json");
    for (out, says) in [
        (&nobodys, "belongs to uid 65534"),
        (&in_theirs, &*format!("{} belongs to uid 65534", theirs.display())),
        (&to_device, "belongs to uid 65534"),
    ] {
        let (code, err) = common::finish(&mut f.export(out));
        assert_eq!(code, Some(2), "{}: {err}", out.display());
        assert!(err.contains(&out.display().to_string()) && err.contains(says), "{err}");
        assert!(err.contains("name the file it points to"), "{err}");
        assert!(std::fs::symlink_metadata(out).unwrap().file_type().is_symlink(), "the link was replaced");
        unchanged();
    }
    // --svg and report -o alike.
    let svg = link(shared.join("map.svg"), 65534, &victim.join("root.txt"));
    let (code, err) = common::finish(common::fslab_command().arg("map").arg(&run).arg("--svg").arg(&svg));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("belongs to uid 65534"), "{err}");
    let page = link(shared.join("page.html"), 65534, &file);
    let (code, err) = common::finish(common::fslab_command().arg("report").arg(&run).arg("-o").arg(&page));
    assert_eq!(code, Some(2), "{err}");
    unchanged();
    assert_eq!(common::names(&shared), ["map.svg", "null.csv", "out.csv", "page.html"], "nothing made beside the links");

    // The invoking user's own link (sudo: SUDO_UID) in the sticky folder is
    // followed, and the file it names replaced.
    let (code, err) = common::finish(f.export(&nobodys).env("SUDO_UID", "65534"));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), f.csv());
    assert!(std::fs::symlink_metadata(&nobodys).unwrap().file_type().is_symlink());
}
