//! The kernel guest tests boot: Debian 12's 6.1 kernel, fetched once into
//! `/var/cache/fslab/debian-kernel` by `scripts/debian-kernel.sh`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// One guest at a time in a test binary: two emulated guests on two
/// cores would each take twice as long and make the timeouts meaningless.
static ONE_GUEST: Mutex<()> = Mutex::new(());

/// For a test that boots a guest: the Debian kernel and, held until the
/// guard drops, the turn of this test binary's one guest; `None` (the
/// test says it skipped) without root or QEMU.
pub fn one_guest(test: &str) -> Option<(PathBuf, MutexGuard<'static, ()>)> {
    if !super::root_or_skip(test) {
        return None;
    }
    let image = debian_kernel()?;
    Some((image, ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner())))
}

/// This machine's kernel release.
pub fn host_release() -> String {
    super::run("uname", &["-r"]).trim().to_string()
}

/// The kernel image (a vmlinuz) guest tests boot: `FSLAB_TEST_KERNEL`
/// (a path) when set, else the Debian kernel `scripts/debian-kernel.sh`
/// fetches (once per process; its module tree lies beside it). `None`,
/// with the reason printed, only where no guest can run (not root, no
/// QEMU); a fetch that fails where guests could run panics with the
/// script's messages, so CI never skips silently.
pub fn debian_kernel() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FSLAB_TEST_KERNEL") {
        return Some(PathBuf::from(path));
    }
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped the guest: fetching a kernel into /var/cache/fslab needs root");
        return None;
    }
    if !super::have("qemu-system-x86_64") {
        eprintln!("skipped the guest: no qemu-system-x86_64 (scripts/setup.sh installs it)");
        return None;
    }
    static FETCHED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let fetched = FETCHED.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/debian-kernel.sh");
        let out = Command::new("bash")
            .arg(script)
            .env("FSLAB", env!("CARGO_BIN_EXE_fslab"))
            .output()
            .map_err(|e| format!("bash {script}: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || stdout.is_empty() {
            return Err(format!("{script} failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr)));
        }
        Ok(PathBuf::from(stdout))
    });
    match fetched {
        Ok(path) => Some(path.clone()),
        Err(message) => panic!("no kernel for the guest tests: {message}"),
    }
}

/// A copy, under `dir`, of the package root the guest tests' kernel lies
/// in (`ROOT/boot/vmlinuz-REL` and `ROOT/lib/modules/REL`, root's): its
/// image and its module tree. `None`, with the reason printed, where no
/// guest can run or the kernel has no tree beside it (`FSLAB_TEST_KERNEL`
/// naming a lone image).
pub fn package_copy(dir: &std::path::Path) -> Option<(PathBuf, PathBuf)> {
    let image = debian_kernel()?;
    let root = image.parent()?.parent()?;
    let release = image.file_name()?.to_str()?.trim_start_matches("vmlinuz-").to_string();
    if !root.join("lib/modules").join(&release).is_dir() {
        eprintln!("skipped: {} has no lib/modules/{release} beside it", image.display());
        return None;
    }
    let copy = dir.join("root");
    std::fs::create_dir(&copy).unwrap();
    let (boot, lib) = (root.join("boot"), root.join("lib"));
    super::run("cp", &["-a", boot.to_str().unwrap(), lib.to_str().unwrap(), copy.to_str().unwrap()]);
    Some((copy.join("boot").join(image.file_name()?), copy.join("lib/modules").join(release)))
}
