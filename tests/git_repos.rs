//! `--age git:` against hostile and broken repositories, with the real
//! binary, real git (Debian's /usr/bin/git and a newer /usr/local/bin/git,
//! each where installed) and, as root, real loop devices.
//!
//! The attack: reading a blob a partial clone lacks makes git fetch it from
//! the clone's promisor remotes, and the fetch runs what the repository's
//! config names — `core.sshCommand`, an `ext::` command, a remote's
//! `uploadpack`, a credential helper, `core.askPass` — each of which here
//! writes `id -u` into a marker. fslab finds git through a wrapper that
//! logs the uid, arguments and environment of every git it runs.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{Lab, root_or_skip, run};

const NOBODY: u32 = 65534;

/// Markers the armed repository's programs write: which way they ran.
const VECTORS: [&str; 5] = ["ssh", "ext", "uploadpack", "credential", "askpass"];

/// What fslab gives every git against fetching and the programs a fetch
/// runs, with the markers each setting alone keeps from appearing on every
/// git here (`protocol.allow=never` alone lets the repository's
/// `protocol.ext.allow=always` through, on 2.39.5 and 2.47.3 alike).
const SETTINGS: &[(&str, &[&str])] = &[
    ("GIT_NO_LAZY_FETCH=1", &VECTORS),
    ("GIT_ALLOW_PROTOCOL=none", &VECTORS),
    ("-c protocol.allow=never", &["ssh", "uploadpack", "credential", "askpass"]),
    ("GIT_SSH_COMMAND=false", &["ssh"]),
    ("-c credential.helper=", &["credential"]),
    ("GIT_ASKPASS=", &["askpass"]),
];

/// The gits installed here.
fn gits() -> Vec<&'static str> {
    let found: Vec<&str> = ["/usr/bin/git", "/usr/local/bin/git"].into_iter().filter(|g| Path::new(g).exists()).collect();
    assert!(!found.is_empty(), "no git installed");
    found
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &Path, uid: u32, recursive: bool) {
    let owner = format!("{uid}:{uid}");
    let path = path.to_str().unwrap();
    let args: &[&str] = if recursive { &["-R", &owner, path] } else { &[&owner, path] };
    run("chown", args);
}

/// git as root, to build the test's repositories.
fn git(args: &[&str]) -> String {
    let mut all = vec!["-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"];
    all.extend_from_slice(args);
    run("git", &all)
}

/// One git run, as the wrapper logged it.
#[derive(Debug)]
struct Call {
    uid: u32,
    args: String,
    env: Vec<String>,
}

/// A test's folder (0755, so nobody may pass): the repositories, a
/// folder anyone may write for the markers and the call log, and `bin/`
/// with the git wrapper.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = common::temp::dir("git");
        chmod(dir.path(), 0o755);
        for (name, mode) in [("markers", 0o1777), ("log", 0o1777), ("bin", 0o755)] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            chmod(&dir.path().join(name), mode);
        }
        Place { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Make `bin/git` log each call (uid, arguments, then the
    /// environment, one line each; a file a call, as calls overlap) and
    /// run `real`; the log starts empty.
    fn wrap(&self, real: &str) {
        for entry in std::fs::read_dir(self.path("log")).unwrap().flatten() {
            std::fs::remove_file(entry.path()).unwrap();
        }
        let log = self.path("log");
        let script = format!(
            "#!/bin/sh\n{{ echo \"call uid=$(id -u) args=$*\"; env | sed 's/^/env /'; }} > {}/call.$$\nexec {real} \"$@\"\n",
            log.display()
        );
        std::fs::write(self.path("bin/git"), script).unwrap();
        chmod(&self.path("bin/git"), 0o755);
    }

    /// The logged calls.
    fn calls(&self) -> Vec<Call> {
        let mut calls = Vec::new();
        for entry in std::fs::read_dir(self.path("log")).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let (first, rest) = text.split_once('\n').unwrap();
            let (uid, args) = first.strip_prefix("call uid=").unwrap().split_once(" args=").unwrap();
            let env = rest.lines().filter_map(|l| l.strip_prefix("env ")).map(str::to_string).collect();
            calls.push(Call { uid: uid.parse().unwrap(), args: args.to_string(), env });
        }
        calls
    }

    /// The markers written, with what each says, and remove them.
    fn take_markers(&self) -> Vec<(String, String)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(self.path("markers")).unwrap().flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            found.push((entry.file_name().to_string_lossy().into_owned(), text.trim().to_string()));
            std::fs::remove_file(entry.path()).unwrap();
        }
        found.sort();
        found
    }

    /// `fslab exec --fs ext4 --age git:REPO:COMMITS -- true` in `lab`,
    /// finding git through the wrapper, with an empty cache (so it ages):
    /// (exit code, stderr).
    fn age(&self, lab: &Lab, repo: &Path, commits: u32) -> (Option<i32>, String) {
        let cache = lab.dir.path().join("cache");
        if cache.exists() {
            std::fs::remove_dir_all(&cache).unwrap();
        }
        let path = format!("{}:{}", self.path("bin").display(), std::env::var("PATH").unwrap_or_default());
        let out = lab
            .command()
            .env("PATH", path)
            .arg("exec")
            .arg("--scratch")
            .arg(lab.scratch())
            .args(["--fs", "ext4", "--size", "64M", "--age"])
            .arg(format!("git:{}:{commits}", repo.display()))
            .arg("--age-cache")
            .arg(&cache)
            .args(["--", "true"])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A repository at `at` with a.txt and b.txt committed, then a.txt
/// changed and committed again; its objects are loose.
fn plain_repo(at: &Path) {
    let r = at.to_str().unwrap();
    git(&["init", "-q", r]);
    std::fs::write(at.join("a.txt"), "one\n").unwrap();
    std::fs::write(at.join("b.txt"), "two\n").unwrap();
    git(&["-C", r, "add", "-A"]);
    git(&["-C", r, "commit", "-qm", "one"]);
    std::fs::write(at.join("a.txt"), "three\n").unwrap();
    git(&["-C", r, "commit", "-qam", "two"]);
}

/// Delete the loose object of `path` at HEAD from the repository at
/// `repo`; its id.
fn delete_blob(repo: &Path, path: &str) -> String {
    let id = git(&["-C", repo.to_str().unwrap(), "rev-parse", &format!("HEAD:{path}")]).trim().to_string();
    std::fs::remove_file(repo.join(".git/objects").join(&id[..2]).join(&id[2..])).unwrap();
    id
}

/// `place/repo`: a partial clone (`--filter=blob:none`) of the plain
/// repository `place/src`, its packs unpacked into loose objects and
/// b.txt's blob deleted; that blob's id.
fn partial_clone_missing_a_blob(place: &Place) -> String {
    let src = place.path("src");
    plain_repo(&src);
    git(&["-C", src.to_str().unwrap(), "config", "uploadpack.allowFilter", "true"]);
    let repo = place.path("repo");
    let url = format!("file://{}", src.display());
    git(&["clone", "-q", "--filter=blob:none", &url, repo.to_str().unwrap()]);
    let packs = place.path("packs");
    std::fs::rename(repo.join(".git/objects/pack"), &packs).unwrap();
    std::fs::create_dir(repo.join(".git/objects/pack")).unwrap();
    for entry in std::fs::read_dir(&packs).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "pack") {
            let status = Command::new("git")
                .args(["-C", repo.to_str().unwrap(), "unpack-objects", "-q"])
                .stdin(std::fs::File::open(entry.path()).unwrap())
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
    delete_blob(&repo, "b.txt")
}

/// Point every way git could fetch a missing object at a program writing
/// `id -u` into a marker: promisor remotes over ssh (`core.sshCommand`),
/// `ext::` (allowed by the repository's own `protocol.ext.allow`) and
/// `file://` (its `uploadpack`), and `origin` over HTTP to `http_port`,
/// which asks for a login (a credential helper, then `core.askPass`).
fn arm(place: &Place, repo: &Path, http_port: u16) {
    let m = place.path("markers");
    let m = m.display();
    let askpass = place.path("askpass");
    std::fs::write(&askpass, format!("#!/bin/sh\nid -u > {m}/askpass\n")).unwrap();
    chmod(&askpass, 0o755);
    let settings = [
        ("core.sshCommand", format!("id -u > {m}/ssh; false")),
        ("remote.s.url", "ssh://example.invalid/r".into()),
        ("remote.s.promisor", "true".into()),
        ("protocol.ext.allow", "always".into()),
        ("remote.e.url", format!("ext::sh -c id% -u% >% {m}/ext")),
        ("remote.e.promisor", "true".into()),
        ("remote.f.url", format!("file://{}", place.path("src").display())),
        ("remote.f.uploadpack", format!("id -u > {m}/uploadpack; false")),
        ("remote.f.promisor", "true".into()),
        ("remote.origin.url", format!("http://127.0.0.1:{http_port}/r")),
        ("credential.helper", format!("!id -u > {m}/credential; false")),
        ("core.askPass", askpass.display().to_string()),
    ];
    let git_dir = repo.join(".git");
    for (key, value) in settings {
        git(&["--git-dir", git_dir.to_str().unwrap(), "config", key, &value]);
    }
}

/// A web server on 127.0.0.1 that answers every request "401, log in"
/// and counts the connections it took.
struct LoginWall {
    port: u16,
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LoginWall {
    fn start() -> LoginWall {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (hits, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let (counted, stopped) = (hits.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                counted.fetch_add(1, Ordering::Relaxed);
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = stream.read(&mut [0u8; 8192]);
                let _ = stream.write_all(
                    b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"r\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        LoginWall { port, hits, stop, thread: Some(thread) }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }
}

impl Drop for LoginWall {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Read the armed repository's missing blob with `git` as root, with no
/// configuration but the repository's, an environment cleared as fslab
/// clears it, and `setting` (one of [`SETTINGS`], or none).
fn read_blob(git: &str, repo: &Path, blob: &str, setting: Option<&str>) {
    let mut c = Command::new(git);
    c.env_clear().env("PATH", "/usr/local/bin:/usr/bin:/bin").env("HOME", "/nonexistent");
    c.env("GIT_CONFIG_NOSYSTEM", "1").env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_TERMINAL_PROMPT", "0");
    if let Some(setting) = setting {
        match setting.strip_prefix("-c ") {
            Some(config) => {
                c.args(["-c", config]);
            }
            None => {
                let (key, value) = setting.split_once('=').unwrap();
                c.env(key, value);
            }
        }
    }
    c.arg("--git-dir").arg(repo.join(".git")).args(["cat-file", "-p", blob]);
    let _ = c.stdout(Stdio::null()).stderr(Stdio::null()).status().unwrap();
}

/// The attack is real on every git here, and each setting fslab gives git
/// alone stops the ways it is there for.
#[test]
fn each_setting_alone_stops_its_ways_of_running_a_program() {
    let place = Place::new();
    let blob = partial_clone_missing_a_blob(&place);
    let wall = LoginWall::start();
    let repo = place.path("repo");
    arm(&place, &repo, wall.port);
    for git in gits() {
        read_blob(git, &repo, &blob, None);
        let ran: Vec<String> = place.take_markers().into_iter().map(|(name, _)| name).collect();
        let mut all = VECTORS.map(String::from).to_vec();
        all.sort();
        assert_eq!(ran, all, "{git} without fslab's settings: the attack must be live for the test to mean anything");
        for (setting, stops) in SETTINGS {
            let hits = wall.hits();
            read_blob(git, &repo, &blob, Some(setting));
            let ran = place.take_markers();
            eprintln!("{git} with {setting}: ran {ran:?}, {} HTTP connections", wall.hits() - hits);
            for (name, _) in &ran {
                assert!(!stops.contains(&name.as_str()), "{git} with {setting} alone: {name} ran: {ran:?}");
            }
            // A setting that stops more than one way stops the fetch or its
            // transports: the HTTP remote is not reached either.
            if stops.len() > 1 {
                assert_eq!(wall.hits(), hits, "{git} with {setting}: the HTTP remote was reached");
            }
        }
    }
}

/// Every call in the log: never as root, as `uid`, never `safe.directory`,
/// and with each of fslab's settings.
fn assert_calls_hardened(calls: &[Call], uid: u32, context: &str) {
    for Call { uid: ran_as, args, env } in calls {
        assert_eq!(*ran_as, uid, "{context}: git {args} ran as uid {ran_as}");
        assert!(!args.contains("safe.directory"), "{context}: git {args}");
        for (setting, _) in SETTINGS {
            let given = match setting.strip_prefix("-c ") {
                Some(config) => args.split(' ').collect::<Vec<_>>().windows(2).any(|w| w == ["-c", config]),
                None => env.iter().any(|e| e == setting),
            };
            assert!(given, "{context}: git {args} without {setting}; environment {env:?}");
        }
    }
}

/// The issue's two cases: a root-owned partial clone, and a root-owned
/// folder whose `.git` is nobody's. Before, the lazy fetch ran every
/// program as root (markers saying 0); now nothing runs, no remote is
/// reached, the first is refused for its missing blob and the second for
/// its owners, both with exit 2 before anything is made.
#[test]
fn a_partial_clone_missing_a_blob_gets_no_program_run_and_no_remote_reached() {
    if !root_or_skip("partial_clone_attack") {
        return;
    }
    let place = Place::new();
    let blob = partial_clone_missing_a_blob(&place);
    let wall = LoginWall::start();
    let repo = place.path("repo");
    arm(&place, &repo, wall.port);
    let lab = Lab::new();
    // Both cases with both gits first, then what each must show.
    struct Tried {
        context: String,
        nobodys_git_dir: bool,
        markers: Vec<(String, String)>,
        hits: usize,
        code: Option<i32>,
        err: String,
        calls: Vec<Call>,
    }
    let mut tried = Vec::new();
    for (case, nobodys_git_dir) in [("a root-owned partial clone", false), ("a root-owned folder with nobody's .git", true)] {
        if nobodys_git_dir {
            chown(&repo.join(".git"), NOBODY, true);
        }
        for git in gits() {
            place.wrap(git);
            let hits = wall.hits();
            let (code, err) = place.age(&lab, &repo, 1);
            let context = format!("{git}, {case}");
            lab.assert_nothing_left(&context);
            let (markers, calls) = (place.take_markers(), place.calls());
            tried.push(Tried { context, nobodys_git_dir, markers, hits: wall.hits() - hits, code, err, calls });
        }
    }
    let ran: Vec<String> = tried.iter().filter(|t| !t.markers.is_empty()).map(|t| format!("{}: {:?}", t.context, t.markers)).collect();
    assert!(ran.is_empty(), "programs of the repository's ran (marker, uid):\n{}", ran.join("\n"));
    for Tried { context, nobodys_git_dir, hits, code, err, calls, .. } in &tried {
        assert_calls_hardened(calls, NOBODY, context);
        assert_eq!(*hits, 0, "{context}: the HTTP remote was reached");
        assert_eq!(*code, Some(2), "{context}: {err}");
        let says = if *nobodys_git_dir {
            err.contains("uid 65534") && err.contains(&format!("{}/.git", repo.display()))
        } else {
            assert!(!calls.is_empty(), "{context}: fslab did not run git through the wrapper");
            err.contains(&blob) && err.contains(repo.to_str().unwrap()) && err.contains("missing")
        };
        assert!(says, "{context}: {err}");
    }
}

/// git runs as the repository folder's owner, or as nobody when that is
/// root; a repository of root's that nobody cannot read is refused,
/// saying so and what to do.
#[test]
fn git_runs_as_the_folder_s_owner_or_nobody_never_as_root() {
    if !root_or_skip("git_never_as_root") {
        return;
    }
    let place = Place::new();
    let repo = place.path("repo");
    plain_repo(&repo);
    let lab = Lab::new();
    for (owner, runs_as) in [(0, NOBODY), (NOBODY, NOBODY), (4242, 4242)] {
        chown(&repo, owner, true);
        for git in gits() {
            place.wrap(git);
            let (code, err) = place.age(&lab, &repo, 2);
            let context = format!("{git}, a repository of uid {owner}");
            assert_eq!(code, Some(0), "{context}: {err}");
            assert!(place.calls().len() >= 3, "{context}: {:?}", place.calls());
            assert_calls_hardened(&place.calls(), runs_as, &context);
        }
    }
    chown(&repo, 0, true);
    chmod(&repo, 0o700);
    for git in gits() {
        place.wrap(git);
        let (code, err) = place.age(&lab, &repo, 2);
        let context = format!("{git}, a repository of root's nobody cannot read");
        assert_eq!(code, Some(2), "{context}: {err}");
        for word in ["nobody (uid 65534)", "cannot read", "chmod", "chown"] {
            assert!(err.contains(word), "{context}: no `{word}` in {err}");
        }
        assert_calls_hardened(&place.calls(), NOBODY, &context);
    }
    lab.assert_nothing_left("after aging as the owner");
}

/// A git dir, its config, a linked worktree's `.git` file, git dir or
/// common dir (or that one's config) of someone other than the folder's
/// owner, or a git dir anyone may write: git would read another user's
/// config as the owner, so it is refused (exit 2, naming what and whose)
/// and no git runs.
#[test]
fn a_git_dir_config_or_common_dir_of_another_user_is_refused() {
    if !root_or_skip("git_dir_of_another_user") {
        return;
    }
    let place = Place::new();
    place.wrap(gits()[0]);
    let lab = Lab::new();
    let main = place.path("main");
    plain_repo(&main);
    let worktree = place.path("worktree");
    git(&["-C", main.to_str().unwrap(), "worktree", "add", "-q", worktree.to_str().unwrap()]);
    let common = main.join(".git");
    let cases = [
        (&main, common.clone(), true),
        (&main, common.join("config"), false),
        (&worktree, worktree.join(".git"), false),
        (&worktree, common.join("worktrees/worktree"), false),
        (&worktree, common.clone(), false),
        (&worktree, common.join("config"), false),
    ];
    for (repo, theirs, recursive) in cases {
        chown(&theirs, NOBODY, recursive);
        let (code, err) = place.age(&lab, repo, 1);
        let context = format!("{} with {} nobody's", repo.display(), theirs.display());
        assert_eq!(code, Some(2), "{context}: {err}");
        assert!(err.contains("uid 65534") && err.contains(theirs.to_str().unwrap()), "{context}: {err}");
        assert_eq!(place.calls().len(), 0, "{context}: git ran");
        chown(&theirs, 0, recursive);
    }
    // A git dir anyone may write: anyone could put a config there.
    chmod(&common, 0o777);
    let (code, err) = place.age(&lab, &main, 1);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("may be written by anyone") && err.contains(common.to_str().unwrap()), "{err}");
    chmod(&common, 0o755);
    // nobody's folder with root's git dir: the same refusal.
    chown(&main, NOBODY, false);
    let (code, err) = place.age(&lab, &main, 1);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("uid 0") && err.contains(common.to_str().unwrap()), "{err}");
    lab.assert_nothing_left("after the refusals");
}

/// A plain repository (no promisor) with a loose blob deleted is bad
/// input: exit 2, naming the object and the repository, before anything
/// is made (it was a failed case, exit 4).
#[test]
fn a_missing_blob_is_bad_input_naming_the_object_and_the_repository() {
    if !root_or_skip("missing_blob") {
        return;
    }
    let place = Place::new();
    let repo = place.path("repo");
    plain_repo(&repo);
    let blob = delete_blob(&repo, "b.txt");
    let lab = Lab::new();
    for git in gits() {
        place.wrap(git);
        let (code, err) = place.age(&lab, &repo, 2);
        assert_eq!(code, Some(2), "{git}: {err}");
        assert!(err.contains(&blob) && err.contains(repo.to_str().unwrap()), "{git}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        lab.assert_nothing_left(git);
    }
    assert_eq!(std::fs::metadata(&repo).unwrap().uid(), 0);
}
