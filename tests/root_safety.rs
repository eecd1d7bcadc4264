//! What fslab promises as root: it formats, mounts and deletes only what it
//! made, in a scratch folder that is root's alone, and a ledger naming
//! anything else gets it nothing. Checked with the real tools (findmnt,
//! losetup, mountinfo) and with an attacker running as `nobody`.
//!
//! The race test runs 200 short runs against an attacker swapping paths in
//! a tight loop; it takes about a minute.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Lab, LoopDevice, Watched, root_or_skip};

const NOBODY: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
}

/// `findmnt` and `losetup -a` as one text, to search for a path.
fn system_view() -> String {
    let findmnt = common::run("findmnt", &["-rn", "-o", "SOURCE,TARGET"]);
    let losetup = common::run("losetup", &["-a"]);
    format!("{findmnt}\n{losetup}")
}

/// Nothing under `dir` is mounted or backs a loop device, by the tools'
/// own account and by mountinfo.
fn assert_no_mount_or_loop_under(dir: &Path, context: &str) {
    let view = system_view();
    let shown = dir.to_str().unwrap();
    assert!(!view.contains(shown), "{context}: findmnt/losetup still show {shown}:\n{view}");
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mountinfo.contains(shown), "{context}: mountinfo shows {shown}");
    assert_eq!(common::loops_under(dir), Vec::<String>::new(), "{context}");
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_scratch_or_state_folder_not_ours_alone_is_refused_before_anything_is_made() {
    if !root_or_skip("folders_not_ours_refused") {
        return;
    }
    let lab = Lab::new();
    let exec = |scratch: &Path, state: &Path| {
        let mut c = lab.command();
        c.env("FSLAB_STATE_DIR", state).arg("exec").arg("--scratch").arg(scratch);
        c.args(["--fs", "ext4", "--size", "64M", "--", "true"]).output().unwrap()
    };
    let check = |out: std::process::Output, says: &[&str], context: &str| {
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{context}: {err}");
        for word in says {
            assert!(err.contains(word), "{context}: {word:?} not in {err}");
        }
        let made: Vec<_> = std::fs::read_dir(lab.scratch()).unwrap().flatten().map(|e| e.path()).collect();
        assert!(made.is_empty(), "{context}: made {made:?}");
        assert_no_mount_or_loop_under(lab.dir.path(), context);
    };
    let scratch = lab.scratch();

    chown(&scratch, NOBODY);
    check(exec(&scratch, &lab.state()), &["belongs to uid 65534", "chown 0", "--scratch"], "scratch owned by nobody");
    chown(&scratch, 0);

    chmod(&scratch, 0o777);
    check(exec(&scratch, &lab.state()), &["writable by its group or by others", "chmod go-w"], "scratch 0777");
    chmod(&scratch, 0o770);
    check(exec(&scratch, &lab.state()), &["chmod go-w"], "scratch group-writable");
    chmod(&scratch, 0o700);

    // Another user's symlink standing where the scratch folder is asked for.
    let link = lab.dir.path().join("their-link");
    std::os::unix::fs::symlink(&scratch, &link).unwrap();
    chown(&link, NOBODY);
    check(exec(&link, &lab.state()), &["symlink", "uid 65534"], "scratch through nobody's symlink");

    // A state folder someone else made first.
    let state = lab.dir.path().join("their-state");
    std::fs::create_dir(&state).unwrap();
    chown(&state, NOBODY);
    check(exec(&scratch, &state), &["state folder", "FSLAB_STATE_DIR"], "state owned by nobody");
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0, "a ledger in nobody's state folder");

    // The same folders, ours alone: the run works.
    let out = exec(&scratch, &lab.state());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    lab.assert_nothing_left("after the refusals");
}

/// Start `fslab exec ... -- sleep 60` in `cwd`, wait until `ready` holds,
/// and SIGKILL it.
fn kill_when(mut command: Command, cwd: &Path, ready: impl Fn() -> bool) {
    let mut child = Watched::spawn(command.current_dir(cwd).stdout(Stdio::null()));
    child.until(Duration::from_secs(30), "never got ready to be killed", ready);
    child.kill();
}

/// `fslab cleanup` from `/`, which must exit 0; its report.
fn cleanup_from_root(lab: &Lab) -> String {
    let out = lab.command().arg("cleanup").current_dir("/").output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{report}{}", stderr(&out));
    report
}

#[test]
fn a_relative_or_roundabout_scratch_killed_mid_run_is_cleaned_up_from_anywhere() {
    if !root_or_skip("relative_scratch_cleanup") {
        return;
    }
    let lab = Lab::new();
    std::os::unix::fs::symlink(".", lab.dir.path().join("here")).unwrap();
    let absolute_twice = format!("/{}", lab.scratch().display());
    for asked in ["scratch", "./scratch/", "here/scratch", absolute_twice.as_str()] {
        let mut c = lab.command();
        c.args(["exec", "--progress", "json", "--scratch", asked, "--fs", "ext4", "--size", "64M", "--", "sleep", "60"]);
        kill_when(c, lab.dir.path(), || !common::mounts_under(&lab.scratch()).is_empty());
        assert!(!common::mounts_under(&lab.scratch()).is_empty(), "the mount outlives a SIGKILL");
        let report = cleanup_from_root(&lab);
        assert!(report.contains("released mount on /"), "--scratch {asked}: {report}");
        lab.assert_nothing_left(&format!("--scratch {asked}, killed, then cleanup from /: {report}"));
        assert_no_mount_or_loop_under(lab.dir.path(), asked);
    }
}

#[test]
fn a_relative_dir_killed_mid_run_is_cleaned_up_from_anywhere() {
    if !root_or_skip("relative_dir_cleanup") {
        return;
    }
    let lab = Lab::new();
    let work = lab.dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut c = lab.command();
    c.args(["exec", "--progress", "json", "--dir", "work", "--", "sh", "-c", "echo x > f; sleep 60"]);
    let has_file = || std::fs::read_dir(&work).unwrap().flatten().any(|e| e.path().join("f").exists());
    kill_when(c, lab.dir.path(), has_file);
    let report = cleanup_from_root(&lab);
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "work folder left after cleanup from /: {left:?}\n{report}");
    lab.assert_nothing_left("relative --dir");
}

/// A dead run's ledger, format 2, of `lines` in `state`.
fn write_ledger(state: &Path, name: &str, lines: &[serde_json::Value]) {
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(state.join(name), text).unwrap();
}

fn id_of(path: &Path) -> serde_json::Value {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).unwrap();
    serde_json::json!({"dev": m.dev(), "ino": m.ino()})
}

#[test]
fn a_crafted_ledger_gets_no_mount_unmounted_and_no_loop_device_detached() {
    if !root_or_skip("crafted_ledger") {
        return;
    }
    use serde_json::json;
    let lab = Lab::new();
    let scratch = lab.scratch().canonicalize().unwrap();
    // Something fslab did not make: a file system on a loop device of the
    // test's own, mounted outside the scratch folder...
    let mut outside = LoopDevice::new(64);
    let outside_mount = outside.format_and_mount("ext4", &["-F", "-q"], None);
    // ... and another mounted inside it, where a run's mount point would be.
    let inside_dir = scratch.join("20260101T000000Z-1-deadbeef-ext4");
    let inside_mnt = inside_dir.join("mnt");
    std::fs::create_dir_all(&inside_mnt).unwrap();
    let inside = LoopDevice::new(64);
    common::run("mkfs.ext4", &["-F", "-q", &inside.device]);
    common::run("mount", &[&inside.device, inside_mnt.to_str().unwrap()]);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let proved = |entry: usize, proof: serde_json::Value| json!({"proved": {"entry": entry, "proof": proof}});
    write_ledger(
        &lab.state(),
        "crafted.ledger",
        &[
            json!({"owner": {"pid": 1, "start_ticks": 1, "format": 2}}),
            json!({"scratch": {"path": s(&scratch), "id": id_of(&scratch)}}),
            // An arbitrary mount, and its loop device, named outright.
            json!({"make": {"mount": s(&outside_mount)}}),
            proved(0, json!({"mount": {"source": outside.device, "fs_type": "ext4", "backing": id_of(&outside.image)}})),
            json!({"make": {"loop": s(&outside.image)}}),
            proved(1, json!({"backing": id_of(&outside.image)})),
            // The mount inside the scratch folder, claimed as a run's: its
            // loop device is not over the image the ledger claims.
            json!({"make": {"mount": s(&inside_mnt)}}),
            proved(2, json!({"mount": {"source": inside.device, "fs_type": "ext4", "backing": id_of(&lab.state())}})),
            json!({"make": {"mount_point": s(&inside_mnt)}}),
            proved(3, json!({"file": id_of(&inside_mnt)})),
            json!({"make": {"run_dir": "/etc"}}),
            proved(4, json!({"file": id_of(Path::new("/etc"))})),
        ],
    );
    let report = cleanup_from_root(&lab);
    for what in [outside_mount.to_str().unwrap(), &outside.device, inside_mnt.to_str().unwrap(), &inside.device] {
        assert!(system_view().contains(what), "{what} is gone after cleanup:\n{report}");
    }
    assert_eq!(report.matches("refused").count(), 5, "{report}");
    assert!(report.contains("not made by fslab"), "{report}");
    assert!(Path::new("/etc/passwd").exists());
    // Refused entries are dropped: the next cleanup says nothing of them.
    assert_eq!(cleanup_from_root(&lab), "nothing to clean up\n");
    common::unmount(&inside_mnt).unwrap();
    drop(inside);
    drop(outside);
    std::fs::remove_dir_all(&inside_dir).unwrap();
    lab.assert_nothing_left("after the crafted ledger");
}

/// The attacker, run as `nobody` from a copy of this test binary. In the
/// sticky folder (like /var/tmp) it races root for the names root's runs
/// make there — its own open folder, or a symlink to a decoy, a decoy
/// block device, `/` or `/etc` — and removes them again; in its own folder
/// it swaps every name (root's scratch and state folders, and a root
/// symlink on the way) for such things and back. A tight loop until the
/// stop file appears. Without `FSLAB_ATTACK_DIR` it does nothing.
#[test]
fn attacker() {
    let Some(dir) = std::env::var_os("FSLAB_ATTACK_DIR") else { return };
    let dir = PathBuf::from(dir);
    let sticky = PathBuf::from(std::env::var_os("FSLAB_ATTACK_STICKY").unwrap());
    let targets: Vec<PathBuf> = std::env::var("FSLAB_ATTACK_TARGETS").unwrap().split(':').map(PathBuf::from).collect();
    let stop = dir.join("stop");
    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut plant = |at: &Path, choice: usize| match choice % 3 {
        0 => {
            let _ = std::os::unix::fs::symlink(&targets[next(targets.len())], at);
        }
        1 if std::fs::create_dir(at).is_ok() => chmod(at, 0o777),
        _ => {}
    };
    let mut swaps = 0u64;
    let deadline = Instant::now() + Duration::from_secs(600); // should the test die
    while !stop.exists() && Instant::now() < deadline {
        for name in ["fslab", "fslab-state"] {
            let at = sticky.join(name);
            plant(&at, swaps as usize);
            std::thread::yield_now();
            let _ = std::fs::remove_file(&at);
            let _ = std::fs::remove_dir(&at);
            swaps += 1;
        }
        for name in ["scratch", "state", "via"] {
            let real = dir.join(name);
            let aside = dir.join(format!("{name}.real"));
            let _ = std::fs::rename(&real, &aside);
            plant(&real, swaps as usize / 2);
            std::thread::yield_now();
            let _ = std::fs::remove_file(&real);
            let _ = std::fs::remove_dir(&real);
            let _ = std::fs::rename(&aside, &real);
            swaps += 1;
        }
    }
    eprintln!("attacker: {swaps} swaps");
}

/// The running attacker: told to stop, and killed, however the test ends.
struct Attacker {
    child: Option<Child>,
    stop: PathBuf,
}

impl Attacker {
    /// Stop it; what it said on stderr.
    fn stop(&mut self) -> String {
        let _ = std::fs::write(&self.stop, b"");
        let Some(child) = self.child.take() else { return String::new() };
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stderr).trim().to_string()
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = std::fs::write(&self.stop, b"");
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn sha256(path: &Path) -> String {
    common::run("sha256sum", &[path.to_str().unwrap()]).split_whitespace().next().unwrap().to_string()
}

/// Every file under `dir` (not following symlinks) with its hash.
fn hashes(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(hashes(&path));
        } else {
            out.push((path.clone(), if kind.is_file() { sha256(&path) } else { String::new() }));
        }
    }
    out.sort();
    out
}

/// `path` when it is a folder of root's (not a symlink).
fn roots_folder(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == 0)
}

#[test]
fn an_attacker_swapping_paths_for_200_runs_gets_nothing_outside_the_scratch_folder_touched() {
    if !root_or_skip("attacker_race") || !common::have("setpriv") || !common::have("mkfs.ext4") {
        return;
    }
    let lab = Lab::new();
    chmod(lab.dir.path(), 0o711); // nobody may pass through, not look
    // The decoys: root's, outside any scratch folder, hashed before and after.
    let decoys = lab.dir.path().join("decoys");
    std::fs::create_dir(&decoys).unwrap();
    chmod(&decoys, 0o755);
    std::fs::write(decoys.join("ext4.img"), vec![0x5a; 1 << 20]).unwrap();
    std::fs::write(decoys.join("precious"), b"root's own").unwrap();
    std::fs::create_dir(decoys.join("mnt")).unwrap();
    std::fs::write(decoys.join("mnt/inside"), b"also root's").unwrap();
    let device = LoopDevice::new(16); // a decoy block device
    let device_before = sha256(Path::new(&device.device));
    let decoys_before = hashes(&decoys);
    let list = |dir: &str| -> Vec<_> { std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name()).collect() };
    let (root_before, etc_before) = (list("/"), list("/etc"));

    // A sticky folder anyone may write, like /var/tmp, where runs make
    // their folders; and the attacker's own folder, above root's scratch
    // and state folders (runs there must be refused).
    let sticky = lab.dir.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    let attack = lab.dir.path().join("attacker");
    std::fs::create_dir(&attack).unwrap();
    chown(&attack, NOBODY);
    for name in ["scratch", "state"] {
        std::fs::create_dir(attack.join(name)).unwrap();
        chmod(&attack.join(name), 0o700);
    }
    std::os::unix::fs::symlink(&sticky, attack.join("via")).unwrap(); // root's symlink
    let binary = attack.join("attacker-bin");
    std::fs::copy(std::env::current_exe().unwrap(), &binary).unwrap();
    chmod(&binary, 0o755);
    let targets = [decoys.clone(), decoys.join("mnt"), PathBuf::from(&device.device), PathBuf::from("/"), PathBuf::from("/etc")];
    let targets: Vec<&str> = targets.iter().map(|t| t.to_str().unwrap()).collect();
    let child = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(&binary)
        .args(["--exact", "attacker", "--nocapture"])
        .env("FSLAB_ATTACK_DIR", &attack)
        .env("FSLAB_ATTACK_STICKY", &sticky)
        .env("FSLAB_ATTACK_TARGETS", targets.join(":"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut attacker = Attacker { child: Some(child), stop: attack.join("stop") };

    let mut codes = std::collections::BTreeMap::new();
    let mut said = std::collections::BTreeSet::new();
    let started = Instant::now();
    for run in 0..200 {
        // Made afresh by most runs, so each races the attacker for the
        // names; every fourth goes through the attacker's own folder.
        let (scratch, state) = match run % 4 {
            0 => (attack.join("scratch"), attack.join("state")),
            1 => (attack.join("via/fslab"), sticky.join("fslab-state")),
            _ => (sticky.join("fslab"), sticky.join("fslab-state")),
        };
        let out = lab
            .command()
            .env("FSLAB_STATE_DIR", &state)
            .arg("exec")
            .arg("--scratch")
            .arg(&scratch)
            .args(["--fs", "ext4", "--size", "64M", "--", "true"])
            .output()
            .unwrap();
        let code = out.status.code();
        let err = stderr(&out);
        if run % 4 == 0 {
            assert_eq!(code, Some(3), "run {run} through the attacker's folder: {err}");
        } else {
            assert!(matches!(code, Some(0) | Some(3)), "run {run}: {code:?}\n{err}{}", String::from_utf8_lossy(&out.stdout));
        }
        if code != Some(0) {
            let last = err.lines().last().unwrap_or("").to_string();
            said.insert(last.split(": ").nth(2).unwrap_or(&last).chars().take(60).collect::<String>());
        }
        *codes.entry(code).or_insert(0) += 1;
        // Root's folders go, so the next run makes them again.
        for dir in [sticky.join("fslab"), sticky.join("fslab-state")] {
            if roots_folder(&dir) {
                std::fs::remove_dir(&dir).unwrap_or_else(|e| panic!("run {run}: {} not empty: {e}", dir.display()));
            }
        }
    }
    let attacker_said = attacker.stop();
    eprintln!("200 runs in {:?}: exit codes {codes:?}; {attacker_said}; refusals:", started.elapsed());
    for s in &said {
        eprintln!("  {s}");
    }
    assert!(codes.get(&Some(0)).copied().unwrap_or(0) >= 20, "too few runs got through to be a test: {codes:?}");

    assert_eq!(hashes(&decoys), decoys_before, "a decoy was changed, deleted or added to");
    assert_eq!(sha256(Path::new(&device.device)), device_before, "the decoy device was written");
    assert_eq!((list("/"), list("/etc")), (root_before, etc_before), "something was made in / or /etc");
    assert_no_mount_or_loop_under(lab.dir.path(), "after 200 attacked runs");
    for dir in [attack.join("scratch"), attack.join("state"), attack.join("scratch.real"), attack.join("state.real")] {
        if roots_folder(&dir) {
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{} was written", dir.display());
        }
    }
    drop(device);
    lab.assert_nothing_left("after the race");
}

/// A symlink at `at` to `to`, owned by `uid`.
fn link_of(uid: u32, at: &Path, to: &Path) {
    std::os::unix::fs::symlink(to, at).unwrap();
    chown(at, uid);
}

#[test]
fn a_store_named_in_a_folder_another_user_controls_is_refused_and_root_s_files_are_unchanged() {
    if !root_or_skip("store_named_in_foreign_folder") {
        return;
    }
    let lab = Lab::new();
    let dir = lab.dir.path();
    // What another user would have root turn into a store: an empty file
    // only root may read, and another program's database.
    let victim = dir.join("victim");
    std::fs::create_dir(&victim).unwrap();
    let empty = victim.join("empty");
    std::fs::write(&empty, "").unwrap();
    chmod(&empty, 0o600);
    let app = victim.join("app.db");
    let conn = rusqlite::Connection::open(&app).unwrap();
    conn.execute_batch("CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('root')").unwrap();
    drop(conn);
    let before = std::fs::read(&app).unwrap();
    let unchanged = |context: &str| {
        assert_eq!(std::fs::read(&empty).unwrap(), b"", "{context}: the empty file became something");
        assert_eq!(std::fs::read(&app).unwrap(), before, "{context}: the other program's database changed");
        assert_eq!(common::names(&victim), ["app.db", "empty"], "{context}: made beside them");
    };
    // nobody's folder, a shared sticky one, and one of root's holding
    // nobody's link.
    let theirs = dir.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    chown(&theirs, NOBODY);
    let shared = dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let ours = dir.join("ours");
    std::fs::create_dir(&ours).unwrap();
    chmod(&ours, 0o700);
    link_of(NOBODY, &theirs.join("empty.db"), &empty);
    link_of(NOBODY, &theirs.join("app.db"), &app);
    link_of(NOBODY, &shared.join("empty.db"), &empty);
    link_of(NOBODY, &ours.join("app.db"), &app);
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    for (store, says) in [
        (theirs.join("empty.db"), "belongs to uid 65534"),
        (theirs.join("app.db"), "belongs to uid 65534"),
        (theirs.join("new.db"), "belongs to uid 65534"),
        (shared.join("empty.db"), "writable by its group or by others"),
        (ours.join("app.db"), "a symlink that belongs to uid 65534"),
    ] {
        for by_flag in [true, false] {
            let mut c = lab.command();
            c.args(["exec", "--dir"]).arg(&work);
            if by_flag {
                c.arg("--store").arg(&store);
            } else {
                c.env("FSLAB_STORE", &store);
            }
            let out = c.args(["--", "true"]).output().unwrap();
            let context = format!("store {} (flag: {by_flag})", store.display());
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{context}: {err}");
            assert!(err.contains("store") && err.contains(says) && err.contains("--store"), "{context}: {err}");
            assert!(!String::from_utf8_lossy(&out.stdout).contains("stored as run"), "{context}");
            unchanged(&context);
        }
    }
    assert_eq!(common::names(&theirs), ["app.db", "empty.db"], "nothing was made in their folder");
    assert_eq!(common::names(&shared), ["empty.db"]);
    assert!(common::names(&work).is_empty());

    // Root's own link, in root's own folder, is followed: the run is kept
    // in the file it names.
    let real = dir.join("real");
    std::fs::create_dir(&real).unwrap();
    chmod(&real, 0o700);
    link_of(0, &ours.join("mine.db"), &real.join("fslab.db"));
    let out = lab.command().args(["exec", "--dir"]).arg(&work).arg("--store").arg(ours.join("mine.db")).args(["--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stored = format!("in {}\n", real.join("fslab.db").display());
    assert!(String::from_utf8_lossy(&out.stdout).ends_with(&stored), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(std::fs::symlink_metadata(ours.join("mine.db")).unwrap().file_type().is_symlink());
}
