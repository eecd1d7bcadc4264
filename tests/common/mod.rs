//! Helpers for the integration tests: run the real `fslab` binary, and make
//! real scratch file systems on loop devices that are always released.
//!
//! Tests that need root skip with a printed reason when not root, unless
//! `FSLAB_REQUIRE_ROOT_TESTS=1` (CI sets it), where skipping is a failure.

#![allow(dead_code)]

pub mod browser;
pub mod kernel;
mod loop_device;
pub mod sysctl;
pub mod temp;
pub mod watch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use loop_device::LoopDevice;
pub use watch::Watched;

/// Run `fslab` with `args`; on an unexpected status, panic with the whole
/// story (command, stdout, stderr).
pub fn fslab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fslab"))
        .args(args)
        .output()
        .expect("run fslab")
}

/// Run `fslab` and insist on exit status `code`.
pub fn fslab_expect(args: &[&str], code: i32) -> Output {
    let out = fslab(args);
    if out.status.code() != Some(code) {
        panic!(
            "fslab {:?}: expected exit {code}, got {:?}\n--- stdout\n{}\n--- stderr\n{}",
            args,
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// Run `fslab ... --json` expecting exit 0 and parse stdout.
pub fn fslab_json(args: &[&str]) -> serde_json::Value {
    let out = fslab_expect(args, 0);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("fslab {args:?}: stdout is not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout))
    })
}

/// Run a command, panic with its output unless it succeeds, return stdout.
pub fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    if !out.status.success() {
        panic!(
            "{program} {args:?} failed ({:?})\n--- stdout\n{}\n--- stderr\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether root-only tests can run; prints why not, and fails instead when
/// CI demands them.
pub fn root_or_skip(test: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    if std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_some() {
        panic!("{test}: needs root, and FSLAB_REQUIRE_ROOT_TESTS is set");
    }
    eprintln!("skipping {test}: needs root to make loop-mounted file systems");
    false
}

/// Whether `program` is installed (on PATH or in /sbin, /usr/sbin).
pub fn have(program: &str) -> bool {
    fslab::site::fs_type::find_program(program).is_some()
}

/// A file system on a [`LoopDevice`], mounted on a fresh directory.
/// Dropping it unmounts, detaches and deletes, also when the test panics.
pub struct ScratchFs {
    /// The file-system type name.
    pub fs: String,
    /// The loop device, e.g. `/dev/loop3`.
    pub device: String,
    /// The mount point.
    pub mount: PathBuf,
    mounted: bool,
    // Dropped after `drop` below has unmounted: it then detaches the
    // device and deletes the image and the mount point's folder.
    lo: LoopDevice,
}

impl ScratchFs {
    /// Make a `size_mib` file system of type `fs` with extra mkfs `args`.
    /// `None` (with a printed reason) when not root; panics when a tool is
    /// missing under CI.
    pub fn new(test: &str, fs: &str, size_mib: u64, mkfs_args: &[&str]) -> Option<ScratchFs> {
        Self::with_mount_opts(test, fs, size_mib, mkfs_args, None)
    }

    /// As [`new`](Self::new), mounting with `-o opts`.
    pub fn with_mount_opts(
        test: &str,
        fs: &str,
        size_mib: u64,
        mkfs_args: &[&str],
        opts: Option<&str>,
    ) -> Option<ScratchFs> {
        if !root_or_skip(test) {
            return None;
        }
        let mkfs = format!("mkfs.{fs}");
        if !have(&mkfs) {
            if std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_some() {
                panic!("{test}: {mkfs} is not installed");
            }
            eprintln!("skipping {test} on {fs}: {mkfs} is not installed");
            return None;
        }
        let mut lo = LoopDevice::new(size_mib);
        let mut args: Vec<&str> = match fs {
            "xfs" | "btrfs" => vec!["-f", "-q"],
            _ => vec!["-F", "-q"],
        };
        args.extend_from_slice(mkfs_args);
        let mount = lo.format_and_mount(fs, &args, opts);
        Some(ScratchFs { fs: fs.to_string(), device: lo.device.clone(), mount, mounted: true, lo })
    }

    /// A path inside the mount.
    pub fn path(&self, name: &str) -> PathBuf {
        self.mount.join(name)
    }

    /// Unmount (after syncing), so on-disk tools see everything; the
    /// device stays attached until drop.
    pub fn unmount(&mut self) {
        if self.mounted {
            unmount(&self.mount).unwrap_or_else(|e| panic!("{e}"));
            self.mounted = false;
        }
    }

    /// Mount again after [`unmount`](Self::unmount).
    pub fn remount(&mut self) {
        if !self.mounted {
            run("mount", &["-t", &self.fs, &self.device, self.mount.to_str().unwrap()]);
            self.mounted = true;
        }
    }
}

/// Unmount `mount`, retrying for a few seconds while it is busy. Tests
/// run in parallel threads of one process, and a child that one test forks
/// holds a copy of every descriptor of the process until its exec, so
/// another test's file on this mount can keep it busy for a moment.
pub fn unmount(mount: &Path) -> Result<(), String> {
    let mut last = String::new();
    for attempt in 0..50 {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let out = Command::new("umount").arg(mount).output().map_err(|e| format!("umount: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        last = String::from_utf8_lossy(&out.stderr).into_owned();
        if !last.contains("busy") {
            break;
        }
    }
    Err(format!("umount {}: {last}", mount.display()))
}

impl Drop for ScratchFs {
    fn drop(&mut self) {
        if self.mounted {
            if let Err(e) = unmount(&self.mount) {
                eprintln!("{e}");
            }
        }
    }
}

/// Detach every loop device over `image` and wait until it is gone, with
/// fslab's own release: `losetup -d` alone only marks a device that is
/// still open somewhere to detach on its last close.
pub fn detach_loops_over(image: &Path) {
    if let Err(e) = fslab::ledger::give_back::detach_loops_over(image) {
        eprintln!("{e}");
    }
}

/// The five file systems of the acceptance tests, with mkfs arguments that
/// make them small and like the seeds' (4 KiB blocks).
pub const FILE_SYSTEMS: [(&str, &[&str]); 5] = [
    ("ext2", &["-b", "4096"]),
    ("ext3", &["-b", "4096"]),
    ("ext4", &["-b", "4096"]),
    ("xfs", &["-b", "size=4096"]),
    ("btrfs", &[]),
];

/// A `Command` for the fslab binary, for tests that need to spawn, signal
/// or set the environment.
pub fn fslab_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fslab"))
}

/// Loop devices whose backing file lies under `dir` (from sysfs).
pub fn loops_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Ok(backing) = std::fs::read_to_string(entry.path().join("loop/backing_file")) {
            if Path::new(backing.trim_end_matches('\n')).starts_with(dir) {
                found.push(name);
            }
        }
    }
    found
}

/// Mount points at or under `dir`, from mountinfo (fslab's own parser,
/// which undoes its octal escapes and is unit-tested against them).
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    fslab::layout::mounts::all().into_iter().map(|m| m.mount_point).filter(|p| p.starts_with(dir)).collect()
}

/// Processes whose working directory is under `dir`.
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) {
            if cwd.starts_with(dir) {
                found.push(pid);
            }
        }
    }
    found
}

/// A process's command line and state, for a message.
pub fn process_line(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = cmdline.split(|b| *b == 0).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').next()).unwrap_or("?").to_string();
    format!("[{state}] {}", words.join(" ").trim())
}

/// Busy loops beside a case (not part of it), killed when dropped.
pub struct BusyLoops(Vec<std::process::Child>);

impl BusyLoops {
    /// Two busy loops per CPU: on a quiet machine they fill it, on a
    /// loaded one they still take more than their share of half a core.
    pub fn start() -> BusyLoops {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let loops = (0..2 * cpus).map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("start a busy loop"));
        let loaders = BusyLoops(loops.collect());
        std::thread::sleep(std::time::Duration::from_millis(300));
        loaders
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A private scratch folder and state folder for one test's fslab runs,
/// so its cleanup checks see only its own resources. Both are removed on
/// drop (after a last `fslab cleanup` over the state folder).
pub struct Lab {
    /// Root of both.
    pub dir: tempfile::TempDir,
}

impl Lab {
    /// Make the folders under /var/tmp.
    pub fn new() -> Lab {
        let dir = temp::dir("lab");
        std::fs::create_dir(dir.path().join("scratch")).unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        Lab { dir }
    }

    /// The scratch folder (`--scratch`).
    pub fn scratch(&self) -> PathBuf {
        self.dir.path().join("scratch")
    }

    /// The state folder (`FSLAB_STATE_DIR`).
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// fslab with this lab's state folder and store.
    pub fn command(&self) -> Command {
        let mut c = fslab_command();
        c.env("FSLAB_STATE_DIR", self.state());
        c.env("FSLAB_STORE", self.store());
        c
    }

    /// The lab's SQLite store (`FSLAB_STORE` of its commands).
    pub fn store(&self) -> PathBuf {
        self.dir.path().join("fslab.db")
    }

    /// `fslab exec --scratch S ARGS...` run to its end.
    pub fn exec(&self, args: &[&str]) -> Output {
        let mut c = self.command();
        c.arg("exec").arg("--scratch").arg(self.scratch()).args(args);
        c.output().expect("run fslab exec")
    }

    /// `fslab SUBCOMMAND --json --scratch S ARGS...`, insisting on exit
    /// `code`, parsed; on anything else, panics with both output streams.
    pub fn json(&self, subcommand: &str, args: &[&str], code: i32) -> serde_json::Value {
        let mut c = self.command();
        c.args([subcommand, "--json", "--scratch"]).arg(self.scratch()).args(args);
        let out = c.output().expect("run fslab");
        if out.status.code() != Some(code) {
            panic!(
                "fslab {subcommand} {args:?}: expected exit {code}, got {:?}\n--- stdout\n{}\n--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(&out.stdout))
        })
    }

    /// `fslab ARGS` in this lab (no `--scratch` added), insisting on exit
    /// `code`; on anything else, panics with both output streams.
    pub fn expect(&self, args: &[&str], code: i32) -> Output {
        let out = self.command().args(args).output().expect("run fslab");
        assert_eq!(
            out.status.code(),
            Some(code),
            "fslab {args:?}\n--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `fslab exec --json` with ARGS, insisting on exit `code`, parsed.
    pub fn exec_json(&self, args: &[&str], code: i32) -> serde_json::Value {
        self.json("exec", args, code)
    }

    /// `fslab run --json` with ARGS, insisting on exit `code`, parsed.
    pub fn run_json(&self, args: &[&str], code: i32) -> serde_json::Value {
        self.json("run", args, code)
    }

    /// `fslab compare BASE NEW --json` over the lab's store, parsed,
    /// whatever it exits with (0, or 1 on a regression).
    pub fn compare_json(&self, base: &str, new: &str) -> serde_json::Value {
        let out = self.command().args(["compare", base, new, "--json"]).output().expect("run fslab compare");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("compare {base} {new}: {e}\n{}", String::from_utf8_lossy(&out.stderr)))
    }

    /// Assert that nothing this lab's runs made is left: no loop device
    /// over an image under it, no mount under it, no file in scratch, no
    /// ledger, no process working in it.
    pub fn assert_nothing_left(&self, context: &str) {
        let root = self.dir.path();
        assert_eq!(loops_under(root), Vec::<String>::new(), "{context}: loop devices left");
        assert_eq!(mounts_under(root), Vec::<PathBuf>::new(), "{context}: mounts left");
        let left: Vec<_> = std::fs::read_dir(self.scratch()).unwrap().flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "{context}: scratch not empty: {left:?}");
        let ledgers: Vec<_> = std::fs::read_dir(self.state())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "ledger"))
            .collect();
        assert!(ledgers.is_empty(), "{context}: ledgers left: {ledgers:?}");
        // A process killed a moment ago may still be on its way out on a
        // busy machine: five seconds to go (one left running stays).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut left = processes_in(root);
        while !left.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
            left = processes_in(root);
        }
        let shown: Vec<String> = left.iter().map(|pid| format!("{pid} {}", process_line(*pid))).collect();
        assert_eq!(shown, Vec::<String>::new(), "{context}: processes left working in the lab");
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.command().arg("cleanup").output();
    }
}

/// The cases of an exec/run JSON output.
pub fn cases(json: &serde_json::Value) -> &Vec<serde_json::Value> {
    json["run"]["cases"].as_array().expect("run.cases")
}

/// The row of `compare --json` output `c` for `figure` (its first case's).
pub fn compare_row<'a>(c: &'a serde_json::Value, figure: &str) -> &'a serde_json::Value {
    let rows = c["compare"]["rows"].as_array().expect("compare.rows");
    rows.iter().find(|r| r["figure"] == figure).unwrap_or_else(|| panic!("no {figure} row: {c}"))
}

/// A figure's value, `None` when null.
pub fn figure(case: &serde_json::Value, name: &str) -> Option<f64> {
    let f = &case["figures"][name];
    assert!(f.is_object(), "figure {name} absent from {}", case["figures"]);
    f["value"].as_f64()
}

/// A case's figure, which must be measured (a panic naming it if not).
pub fn measured(case: &serde_json::Value, name: &str) -> f64 {
    figure(case, name).unwrap_or_else(|| panic!("{name} not measured: {}", case["figures"][name]))
}

/// A fresh PostgreSQL store for one test: a schema of its own in the
/// database of `FSLAB_TEST_POSTGRES` (scripts/postgres.sh starts a server
/// and prints the URL of a role that owns that database but may make no
/// other), found first by the URL fslab is given (`search_path`), dropped
/// afterwards.
pub struct TestDatabase {
    admin: String,
    name: String,
    /// The URL fslab is given (`--store`).
    pub url: String,
}

impl TestDatabase {
    /// Make the database, or `None` (with a note) when no server was
    /// given; with `FSLAB_REQUIRE_POSTGRES=1` (CI) a missing server fails.
    pub fn new(test: &str) -> Option<TestDatabase> {
        let Ok(admin) = std::env::var("FSLAB_TEST_POSTGRES") else {
            if std::env::var("FSLAB_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") {
                panic!("{test}: FSLAB_TEST_POSTGRES is not set but FSLAB_REQUIRE_POSTGRES=1 (scripts/postgres.sh)");
            }
            eprintln!("SKIPPED {test}: set FSLAB_TEST_POSTGRES (scripts/postgres.sh starts a server and prints it)");
            return None;
        };
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("fslab_test_{}_{n}", std::process::id());
        let mut client = postgres::Client::connect(&admin, postgres::NoTls)
            .unwrap_or_else(|e| panic!("{test}: cannot reach the test server FSLAB_TEST_POSTGRES={admin:?}: {e}"));
        client.batch_execute(&format!("CREATE SCHEMA {name}")).expect("create the test's schema");
        assert!(!admin.contains('?'), "FSLAB_TEST_POSTGRES has options already: {admin}");
        let url = format!("{admin}?options=-csearch_path%3D{name}");
        Some(TestDatabase { admin, name, url })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
        }
    }
}

/// The `--json` output of a small crafted run (`{"schema": "fslab/1",
/// "run": ...}`), which `show`, `export`, `compare` and `report` take as a
/// file: two ok repeats of replace-files on ext4 with three figures each.
pub fn crafted_run_json(id: &str, complete: bool) -> String {
    let cases: Vec<serde_json::Value> = (1..=2).map(|repeat| crafted_case("replace-files", "ext4", repeat, None)).collect();
    crafted_run(id, complete, cases).to_string()
}

/// A crafted run record holding `cases`, as JSON output.
pub fn crafted_run(id: &str, complete: bool, cases: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({"schema": "fslab/1", "run": {
        "id": id, "tag": null, "started_at": "2026-11-21T00:00:00Z", "command": ["fslab"], "complete": complete,
        "environment": {"fslab_version": "0.1.0", "kernel": "6.18", "machine": "x86_64", "cpu": null, "cpus": 2,
                        "memory_bytes": null, "tools": {}, "disk": null},
        "sysctls": [], "cases": cases
    }})
}

/// A crafted case of `scenario` on `fs`: ok with three figures, or failed
/// with `error`.
pub fn crafted_case(scenario: &str, fs: &str, repeat: u32, error: Option<&str>) -> serde_json::Value {
    let figures = if error.is_some() {
        serde_json::json!({})
    } else {
        serde_json::json!({
            "wall_s": {"value": 0.01 * f64::from(repeat), "unit": "s", "better": "lower", "kind": "timing"},
            "journal_commits": {"value": 21.0, "unit": "count", "better": "lower", "kind": "exact"},
            "flushes": {"value": 42.0, "unit": "count", "better": "lower", "kind": "exact"}
        })
    };
    serde_json::json!({
        "scenario": scenario, "fs": fs, "params": {"files": 20}, "repeat": repeat,
        "status": if error.is_some() { "failed" } else { "ok" }, "error": error,
        "target": {"fs_type": fs, "device": null, "mkfs_args": [], "mount_opts": null, "cold_method": null},
        "figures": figures, "timeline": []
    })
}

/// Run `c` to its end within 30 s, its stdout dropped (a hang is a
/// failure, not a stuck test: SQLite on a FIFO, a FIFO nobody reads); its
/// exit code and stderr.
pub fn finish(c: &mut Command) -> (Option<i32>, String) {
    use std::io::Read as _;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("fslab hung: {c:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    (child.wait().unwrap().code(), stderr)
}

/// Every name in `dir`, sorted: for "nothing was left beside it".
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// The extent count `filefrag` printed for `name` in a command's output
/// (`name: 3 extents found`).
pub fn filefrag_extents_in(stdout: &str, name: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{name}:")) && l.contains("found"))
        .unwrap_or_else(|| panic!("no filefrag line for {name} in {stdout:?}"));
    line.split_whitespace().rev().nth(2).unwrap().parse().unwrap()
}

/// A folder anyone may write, sticky like `/tmp` (`shared` in the folder
/// it is made in), where a test makes links as this or that user would.
pub struct Sticky(PathBuf);

impl Sticky {
    /// The folder `shared` made in `dir`, mode 1777.
    pub fn new(dir: &Path) -> Sticky {
        use std::os::unix::fs::PermissionsExt as _;
        let shared = dir.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Sticky(shared)
    }

    /// A symbolic link `name` here to `to`, owned by `uid`: its path.
    pub fn link(&self, name: &str, to: &Path, uid: u32) -> String {
        let at = self.0.join(name);
        std::os::unix::fs::symlink(to, &at).unwrap();
        std::os::unix::fs::lchown(&at, Some(uid), Some(uid)).unwrap();
        at.to_string_lossy().into_owned()
    }
}

/// Whether recording can run here (`--crash-record`, `--crash`): root,
/// and qemu-storage-daemon.
pub fn recorder_or_skip(test: &str) -> bool {
    if !root_or_skip(test) {
        return false;
    }
    if have("qemu-storage-daemon") {
        return true;
    }
    if std::env::var_os("FSLAB_REQUIRE_ROOT_TESTS").is_some() {
        panic!("{test}: no qemu-storage-daemon (apt-get install qemu-system-common), and FSLAB_REQUIRE_ROOT_TESTS is set");
    }
    eprintln!("skipping {test}: no qemu-storage-daemon");
    false
}
