//! Where runs are kept when neither `--store` nor `FSLAB_STORE` says:
//! root's in /var/lib/fslab whatever HOME says, a user's in their XDG data
//! folder, that folder made 0700 and refused (exit 3) when it is not the
//! user's alone.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::root_or_skip;

const NOBODY: u32 = 65534;

/// A test folder others may pass through (root's, 0755), holding `home`
/// (nobody's, 0700) and `work` (nobody's): what a user's session has.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = common::temp::dir("store-home");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for (name, mode) in [("home", 0o700), ("work", 0o755)] {
            let path = dir.path().join(name);
            std::fs::create_dir(&path).unwrap();
            std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY)).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        Place { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// fslab ARGS as nobody, with this HOME, no store named, and
    /// XDG_DATA_HOME as given.
    fn as_nobody(&self, xdg: Option<&Path>, args: &[&str]) -> Output {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", env!("CARGO_BIN_EXE_fslab")]).args(args);
        self.environment(&mut c, xdg);
        c.output().unwrap()
    }

    /// `fslab exec --dir WORK -- true` as nobody.
    fn exec_as_nobody(&self, xdg: Option<&Path>) -> Output {
        let work = self.path("work");
        self.as_nobody(xdg, &["exec", "--dir", work.to_str().unwrap(), "--", "true"])
    }

    fn environment(&self, c: &mut Command, xdg: Option<&Path>) {
        c.env_remove("FSLAB_STORE").env_remove("XDG_DATA_HOME").env("HOME", self.path("home"));
        c.env("FSLAB_STATE_DIR", self.path("home/state")).current_dir(self.path("work"));
        if let Some(xdg) = xdg {
            c.env("XDG_DATA_HOME", xdg);
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The run id of `fslab exec`'s "stored as run ID in PATH" line, and PATH.
fn stored(out: &Output) -> (String, String) {
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("stored as run ")).unwrap_or_else(|| {
        panic!("not stored ({:?}):\n{stdout}\n{}", out.status.code(), text(&out.stderr))
    });
    let (id, path) = line["stored as run ".len()..].split_once(" in ").unwrap();
    (id.to_string(), path.to_string())
}

#[test]
fn root_keeps_runs_in_var_lib_and_a_user_in_their_data_folder() {
    if !root_or_skip("store_location") {
        return;
    }
    let place = Place::new();

    // Root: /var/lib/fslab/fslab.db, said in --help, whatever HOME and
    // XDG_DATA_HOME say (sudo may keep the user's), and nothing of root's
    // is made in the user's home.
    let mut c = common::fslab_command();
    place.environment(&mut c, Some(&place.path("home/xdg")));
    let help = text(&c.args(["runs", "--help"]).output().unwrap().stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("[default: /var/lib/fslab/fslab.db]"), "{help}");
    let mut c = common::fslab_command();
    place.environment(&mut c, Some(&place.path("home/xdg")));
    let out = c.arg("runs").output().unwrap();
    if out.status.code() == Some(2) {
        assert!(text(&out.stderr).contains("no store at /var/lib/fslab/fslab.db"), "{}", text(&out.stderr));
    }
    assert!(common::names(&place.path("home")).is_empty(), "root made something in the user's home");

    // A user: $HOME/.local/share/fslab/fslab.db, its folders made 0700.
    let out = place.exec_as_nobody(None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (id, path) = stored(&out);
    let home_store = place.path("home/.local/share/fslab/fslab.db");
    assert_eq!(Path::new(&path), home_store);
    for folder in ["home/.local/share/fslab", "home/.local/share", "home/.local"] {
        let meta = std::fs::metadata(place.path(folder)).unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o777), (NOBODY, 0o700), "{folder}");
    }
    assert_eq!(std::fs::metadata(&home_store).unwrap().uid(), NOBODY);
    let listed = place.as_nobody(None, &["runs"]);
    assert!(text(&listed.stdout).contains(&id), "{}{}", text(&listed.stdout), text(&listed.stderr));

    // XDG_DATA_HOME wins over HOME.
    let xdg = place.path("home/xdg");
    let out = place.exec_as_nobody(Some(&xdg));
    assert_eq!(Path::new(&stored(&out).1), xdg.join("fslab/fslab.db"));
    assert_eq!(common::names(&place.path("work")), Vec::<String>::new(), "nothing in the current folder");

    // A user with no store yet is told where root's runs are.
    let other = Place::new();
    let out = other.as_nobody(None, &["runs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/var/lib/fslab/fslab.db"), "{}", text(&out.stderr));
    assert!(common::names(&other.path("home")).is_empty(), "reading made nothing");
}

#[test]
fn a_default_store_folder_not_the_users_alone_is_refused_with_exit_3() {
    if !root_or_skip("store_location_hostile") {
        return;
    }
    let place = Place::new();
    let share = place.path("home/.local/share");
    std::fs::create_dir_all(&share).unwrap();
    common::run("chown", &["-R", "nobody:nogroup", place.path("home/.local").to_str().unwrap()]);
    let folder = share.join("fslab");

    // Writable by others.
    std::fs::create_dir(&folder).unwrap();
    std::os::unix::fs::chown(&folder, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    for args in [None, Some(&["runs"][..])] {
        let out = match args {
            None => place.exec_as_nobody(None),
            Some(args) => place.as_nobody(None, args),
        };
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("store folder") && err.contains("chmod go-w") && err.contains("--store"), "{err}");
    }
    assert!(common::names(&folder).is_empty(), "nothing was stored in it");
    std::fs::remove_dir(&folder).unwrap();

    // Another user's symlink in its place: never followed.
    let elsewhere = place.path("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::chown(&elsewhere, Some(NOBODY), Some(NOBODY)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &folder).unwrap();
    std::os::unix::fs::lchown(&folder, Some(1), Some(1)).unwrap();
    let out = place.exec_as_nobody(None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("symlink that belongs to uid 1"), "{err}");
    assert!(common::names(&elsewhere).is_empty(), "stored through another user's symlink");
}

#[test]
fn an_empty_store_flag_is_refused_and_an_empty_variable_is_the_default() {
    if !root_or_skip("store_location_empty") {
        return;
    }
    let place = Place::new();
    let work = place.path("work");
    let work = work.to_str().unwrap();
    // `--store ""` names nothing: exit 2, for writing and reading alike,
    // and nothing is stored (SQLite took "" for a temporary database).
    for args in [vec!["exec", "--dir", work, "--store", "", "--", "true"], vec!["runs", "--store", ""]] {
        let out = place.as_nobody(None, &args);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains("--store") && stderr.contains("empty"), "{stderr}");
        assert!(!stdout.contains("stored as run"), "{stdout}");
    }
    assert!(common::names(&place.path("home")).is_empty(), "nothing was stored");
    // FSLAB_STORE= is as if it were unset: the default store.
    let mut c = Command::new("setpriv");
    c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", env!("CARGO_BIN_EXE_fslab")]);
    c.args(["exec", "--dir", work, "--", "true"]);
    place.environment(&mut c, None);
    let out = c.env("FSLAB_STORE", "").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(Path::new(&stored(&out).1), place.path("home/.local/share/fslab/fslab.db"));
}
