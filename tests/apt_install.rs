//! The package installer (`scripts/apt-install.sh`), driven by this
//! machine's real apt: the real package lists and sources, and a status in
//! which QEMU is not installed but a newer `qemu-utils` from Debian 12's
//! backports is, as on this kind of machine when it is new. apt's own plan
//! for `qemu-system-x86` then removes `qemu-utils`; the installer instead
//! takes QEMU from the release `qemu-utils` came from, adding that release
//! to the sources when they lack it, and never removes or downgrades. It
//! waits for apt's lock, naming who holds it. dpkg is `/bin/false` and
//! every list, source and cache is the test's, so nothing here can change
//! the machine (`FSLAB_APT_SIMULATE` prints the plans instead of
//! installing).

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The version of `qemu-utils` a new machine of this kind has.
const NEWER: &str = "1:10.0.2+ds-2+deb13u1~bpo12+1";
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

fn installer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/apt-install.sh")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// This machine's Debian codename, where it is Debian 12 (the status the
/// test writes is Debian 12's backports); else why the test cannot run.
fn bookworm() -> Result<String, String> {
    let release = std::fs::read_to_string("/etc/os-release").map_err(|e| format!("/etc/os-release: {e}"))?;
    let field = |key: &str| release.lines().find_map(|l| l.strip_prefix(&format!("{key}="))).map(|v| v.trim_matches('"').to_string());
    match (field("ID"), field("VERSION_ID"), field("VERSION_CODENAME")) {
        (Some(id), Some(v), Some(name)) if id == "debian" && v == "12" => Ok(name),
        other => Err(format!("not Debian 12: {other:?}")),
    }
}

/// The codename where the test can run (as root, on Debian 12); else
/// `None`, the reason printed.
fn root_on_bookworm(test: &str) -> Option<String> {
    if !common::root_or_skip(test) {
        return None;
    }
    bookworm().map_err(|why| eprintln!("skipping {test}: {why}")).ok()
}

/// apt pointed (`APT_CONFIG`) at the test's own copy of this machine's
/// state: its package lists, its Debian sources as one-line entries
/// (`codename-backports` among them or not), and its status less QEMU
/// and hyperfine,
/// with `qemu-utils` at [`NEWER`], which breaks the distribution's QEMU.
fn sandbox(dir: &Path, codename: &str, with_backports: bool) -> PathBuf {
    // hyperfine stands for a package that planning finds in the distribution.
    const LEFT_OUT: [&str; 6] = ["qemu-system-x86", "qemu-system-common", "qemu-system-data", "qemu-system-gui", "qemu-utils", "hyperfine"];
    let status = std::fs::read_to_string("/var/lib/dpkg/status").unwrap();
    let mut kept: Vec<&str> = status
        .split("\n\n")
        .filter(|stanza| !LEFT_OUT.iter().any(|p| stanza.trim_start().starts_with(&format!("Package: {p}\n"))))
        .collect();
    let utils = format!(
        "Package: qemu-utils\nStatus: install ok installed\nPriority: optional\nSection: otherosfs\n\
         Maintainer: Debian QEMU Team <pkg-qemu-devel@lists.alioth.debian.org>\nArchitecture: amd64\nSource: qemu\n\
         Version: {NEWER}\nBreaks: qemu-system-common (<< {NEWER})\nDescription: QEMU utilities, newer than the distribution's\n"
    );
    kept.push(&utils);
    std::fs::write(dir.join("status"), kept.join("\n\n").trim_end().to_string() + "\n\n").unwrap();

    // The machine's Debian entries, the backports suite left out or put in.
    let targets = common::run("apt-get", &["indextargets", "--format", "$(TARGET_OF) $(ORIGIN) $(SITE) $(RELEASE) $(COMPONENT)"]);
    let mut entries: Vec<String> = targets
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["deb", "Debian", site, release, component] if !release.ends_with("-backports") => {
                Some(format!("deb [signed-by={KEYRING}] {site} {release} {component}"))
            }
            _ => None,
        })
        .collect();
    entries.sort();
    entries.dedup();
    let base = entries.iter().find(|e| e.split_whitespace().nth(3) == Some(codename)).expect("apt's sources list no Debian base release").clone();
    if with_backports {
        entries.push(base.replacen(&format!(" {codename} "), &format!(" {codename}-backports "), 1));
    }
    std::fs::write(dir.join("sources.list"), entries.join("\n") + "\n").unwrap();
    std::fs::create_dir_all(dir.join("sources.list.d")).unwrap();

    // The lists as the machine has them, so apt need fetch only what differs.
    let lists = dir.join("lists");
    std::fs::create_dir_all(lists.join("partial")).unwrap();
    for entry in std::fs::read_dir("/var/lib/apt/lists").unwrap().flatten() {
        let name = entry.file_name();
        if entry.file_type().unwrap().is_file() && name != "lock" && (with_backports || !name.to_string_lossy().contains("-backports")) {
            std::fs::copy(entry.path(), lists.join(name)).unwrap();
        }
    }
    std::fs::create_dir_all(dir.join("cache/archives/partial")).unwrap();
    let config = dir.join("apt.conf");
    let d = dir.display();
    std::fs::write(
        &config,
        format!(
            "Dir::State::status \"{d}/status\";\nDir::State::lists \"{d}/lists/\";\nDir::Etc::sourcelist \"{d}/sources.list\";\n\
             Dir::Etc::sourceparts \"{d}/sources.list.d/\";\nDir::Bin::dpkg \"/bin/false\";\nDir::Cache \"{d}/cache\";\n\
             Dir::Cache::pkgcache \"\";\nDir::Cache::srcpkgcache \"\";\nDir::Log \"{d}\";\nDebug::NoLocking \"true\";\n"
        ),
    )
    .unwrap();
    config
}

/// The installer, as root, on the sandbox at `config`, planning only.
fn install(config: &Path, packages: &[&str]) -> Command {
    let mut c = Command::new("bash");
    c.arg(installer()).args(packages).env("APT_CONFIG", config).env("FSLAB_APT_SIMULATE", "1");
    c
}

/// The names in a folder, sorted.
fn names(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    names.sort();
    names
}

#[test]
fn qemu_comes_from_the_release_the_machines_qemu_utils_came_from_with_or_without_it_in_the_sources() {
    let Some(codename) = root_on_bookworm("apt_release_of_the_kept_package") else { return };
    let machine_sources = names("/etc/apt/sources.list.d");
    for with_backports in [false, true] {
        let dir = tempfile::Builder::new().prefix("fslab-test-apt-").tempdir_in("/var/tmp").unwrap();
        let config = sandbox(dir.path(), &codename, with_backports);
        // apt's own plan removes qemu-utils (or finds none, where the lists
        // hold backports' QEMU)...
        let plan = Command::new("apt-get").args(["-s", "install", "--no-install-recommends", "qemu-system-x86"]).env("APT_CONFIG", &config).output().unwrap();
        assert!(
            text(&plan).contains("Remv qemu-utils [1:10.0.2") || !plan.status.success(),
            "apt itself would keep qemu-utils; the test's machine is not as meant:\n{}",
            text(&plan)
        );
        // ...where the installer takes QEMU from backports, and hyperfine
        // (which touches no QEMU) from the distribution.
        let out = install(&config, &["hyperfine", "qemu-system-x86"]).output().unwrap();
        let said = text(&out);
        let backports = format!("{codename}-backports");
        assert_eq!(out.status.code(), Some(0), "with_backports={with_backports}:\n{said}");
        assert!(said.contains(&format!("qemu-utils came from {backports}: taking qemu-system-x86 from {backports} too")), "{said}");
        let added = dir.path().join(format!("sources.list.d/fslab-{backports}.sources"));
        if with_backports {
            assert!(!said.contains("to apt's sources") && !added.exists(), "added what the sources list:\n{said}");
        } else {
            assert!(said.contains(&format!("added {backports}")) && said.contains(&added.display().to_string()), "{said}");
            let entry = std::fs::read_to_string(&added).unwrap();
            assert!(entry.contains(&format!("Suites: {backports}\n")) && entry.contains("Types: deb\n"), "{entry}");
        }
        let qemu = said.lines().find(|l| l.starts_with("Inst qemu-system-x86 ")).unwrap_or_else(|| panic!("QEMU not planned:\n{said}"));
        assert!(qemu.contains("~bpo12") && qemu.contains("Backports"), "{qemu}");
        let hyperfine = said.lines().find(|l| l.starts_with("Inst hyperfine ")).unwrap_or_else(|| panic!("hyperfine not planned:\n{said}"));
        assert!(!hyperfine.contains("Backports"), "{hyperfine}");
        assert!(!said.lines().any(|l| l.starts_with("Remv ")), "{said}");
        assert!(said.contains("setup: installing hyperfine\n") && said.contains(&format!("setup: installing qemu-system-x86 from {backports}")), "{said}");
    }
    assert_eq!(names("/etc/apt/sources.list.d"), machine_sources, "the machine's own sources changed");
}

#[test]
fn the_installer_waits_for_apts_lock_naming_who_holds_it_and_gives_up_at_its_limit() {
    let Some(codename) = root_on_bookworm("apt_lock_wait") else { return };
    let dir = tempfile::Builder::new().prefix("fslab-test-apt-").tempdir_in("/var/tmp").unwrap();
    let config = sandbox(dir.path(), &codename, false);
    // A holder of dpkg's front-end lock (the lock apt and dpkg take with
    // fcntl), until its standard input closes.
    let lock = dir.path().join("lock-frontend");
    let hold = || {
        let mut holder = Command::new("python3")
            .args(["-c", "import fcntl, sys\nf = open(sys.argv[1], 'w')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()\n"])
            .arg(&lock)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "held\n");
        holder
    };

    // Given up at the limit: exit 3, the holder named, nothing planned.
    let mut holder = hold();
    let out = install(&config, &["hyperfine"]).env("FSLAB_APT_LOCK_WAIT", "2").output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains(&format!("held by pid {} (python3", holder.id())) && said.contains("still held after 2 s"), "{said}");
    assert!(!said.contains("setup: installing"), "{said}");

    // Waited for: still waiting while it is held, done once it is free.
    let mut waiter = install(&config, &["hyperfine"]).env("FSLAB_APT_LOCK_WAIT", "600").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut err = BufReader::new(waiter.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.contains("waiting up to 600 s") && first.contains(&lock.display().to_string()), "{first}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(waiter.try_wait().unwrap().is_none(), "stopped waiting while the lock was held");
    let freed = Instant::now();
    holder.stdin.take().unwrap().flush().unwrap();
    holder.wait().unwrap();
    let status = waiter.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(status.success(), "{status:?}: {rest}");
    assert!(rest.contains("setup: installing hyperfine"), "{rest}");
    assert!(freed.elapsed() < Duration::from_secs(120), "took {:?} after the lock was freed", freed.elapsed());
}

#[test]
fn a_plan_that_downgrades_is_refused_and_one_that_only_adds_installs_without_removing() {
    let dir = tempfile::Builder::new().prefix("fslab-test-apt-").tempdir_in("/var/tmp").unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let (plan, called) = (dir.path().join("plan"), dir.path().join("called"));
    let fake = format!("#!/bin/sh\nif [ \"$1\" = -s ]; then cat {}; exit 0; fi\necho \"$@\" > {}\n", plan.display(), called.display());
    std::fs::write(bin.join("apt-get"), fake).unwrap();
    std::fs::set_permissions(bin.join("apt-get"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let install = |planned: &str| {
        std::fs::write(&plan, planned).unwrap();
        let _ = std::fs::remove_file(&called);
        let out = Command::new("bash").arg(installer()).arg("newpkg").env("PATH", &path).env("FSLAB_APT_LOCK_WAIT", "0").output().unwrap();
        (out.status.code(), text(&out), std::fs::read_to_string(&called).ok())
    };
    let (code, said, ran) = install("Inst libfoo [2.0-1] (1.0-1 Debian:12/stable [amd64])\nInst newpkg (3.0 Debian:12/stable [amd64])\n");
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("downgrade libfoo 2.0-1 -> 1.0-1"), "{said}");
    assert_eq!(ran, None, "installed anyway: {said}");
    let (code, said, ran) = install("Inst libfoo [1.0-1] (1.1-1 Debian:12/stable [amd64])\nInst newpkg (3.0 Debian:12/stable [amd64])\n");
    assert_eq!(code, Some(0), "{said}");
    let ran = ran.unwrap_or_else(|| panic!("not installed: {said}"));
    assert!(ran.contains("--no-remove") && ran.trim_end().ends_with("newpkg"), "{ran}");
}
