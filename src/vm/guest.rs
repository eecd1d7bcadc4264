//! Run one guest to its end: start QEMU as the leader of its own process
//! group (killed with fslab by `PR_SET_PDEATHSIG`, and written into the
//! ledger as a `Child` before QEMU runs, so `cleanup` kills a killed
//! run's guest), wait for it up to a timeout, kill it there, and
//! read back what the job left in the output share.
//!
//! What comes back is bounded, since a guest writes without limit: the
//! job's stdout up to [`MAX_STDOUT`] (more fails the job, said so), the
//! end of its stderr and the start of QEMU's own ([`MAX_STDERR`] each, the
//! cut said), and the console's start and end ([`console`]).
//!
//! The caller makes (and ledgers) the folder, images and shares first;
//! this file only runs QEMU.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::capped::{self, Capped};
use super::console;
use super::qemu::GuestSpec;
use crate::error::{Error, Result};
use crate::ledger::{Ledger, Resource};

/// How many console lines an error quotes.
const QUOTED_LINES: usize = 15;

/// The most of the job's stdout that is read: its `--json` case, whose
/// extent maps grow with the file (measured: a 256 MiB mmap-fill in 65,536
/// extents, one per page, prints 11 MB; this bound holds 1.5 million).
pub const MAX_STDOUT: u64 = 256 << 20;

/// How much of the job's stderr (its end) and of QEMU's (its start) is kept.
pub const MAX_STDERR: u64 = 64 << 10;

/// What a guest's run gave.
#[derive(Debug, Clone, PartialEq)]
pub struct GuestRun {
    /// The job's exit status (from the share's `status`).
    pub status: i32,
    /// The job's standard output.
    pub stdout: Vec<u8>,
    /// The job's standard error.
    pub stderr: String,
    /// Seconds from starting QEMU to its exit, on the host's clock.
    pub wall_s: f64,
    /// The init script's marks (`init`, `modules`, `mounted`, `done`):
    /// the guest's uptime at each, in seconds.
    pub marks: Vec<(String, f64)>,
}

impl GuestRun {
    /// The guest's uptime at the mark `step`.
    pub fn mark(&self, step: &str) -> Option<f64> {
        self.marks.iter().find(|(s, _)| s == step).map(|(_, t)| *t)
    }
}

/// Start the guest `spec` describes, wait for it at most `timeout`, and
/// read the job's output from `out_dir` (the host side of the output
/// share). A guest still running at the timeout is killed, and the error
/// quotes its console's last lines; so does one that ended without
/// leaving the job's status.
pub fn run(ledger: &Ledger, spec: &GuestSpec, out_dir: &Path, timeout: Duration) -> Result<GuestRun> {
    let mut command = Command::new(&spec.qemu);
    command.args(spec.args()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).process_group(0);
    crate::sys::process::kill_with_parent(&mut command);
    let started = Instant::now();
    let record = |pid| ledger.record(Resource::child(pid));
    let (mut child, token) = crate::sys::process::spawn_recorded(&mut command, record).map_err(|not| match not {
        crate::sys::process::NotStarted::Record(e) => e,
        crate::sys::process::NotStarted::Spawn(e) => {
            Error::environment(format!("{}: cannot start it ({e}); install qemu-system-x86", spec.qemu.display()))
        }
    })?;
    let mut stderr_pipe = child.stderr.take().expect("piped");
    let stderr = std::thread::spawn(move || {
        let mut start = Vec::new();
        let _ = (&mut stderr_pipe).take(MAX_STDERR).read_to_end(&mut start);
        // The rest is drained, so QEMU never blocks on a full pipe, and dropped.
        let cut = std::io::copy(&mut stderr_pipe, &mut std::io::sink()).is_ok_and(|n| n > 0);
        said(&Capped { bytes: start, cut }, false)
    });
    let waited = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(Some(status)),
            Ok(None) if started.elapsed() >= timeout || crate::interrupt::pending().is_some() => break Ok(None),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => break Err(e),
        }
    };
    // Killing the group also takes anything QEMU left; the token's
    // release is that kill.
    let _ = ledger.release(token);
    let status = match waited {
        Ok(Some(status)) => status,
        Err(e) => {
            let _ = child.wait();
            return Err(Error::io(&spec.qemu, "wait for", e));
        }
        Ok(None) => {
            let _ = child.wait();
            crate::interrupt::check()?;
            return Err(Error::failed(format!(
                "the guest did not finish within {} s and was killed; its console's last lines:\n{}",
                timeout.as_secs(),
                quoted(&spec.console)
            )));
        }
    };
    let wall_s = started.elapsed().as_secs_f64();
    let qemu_err = stderr.join().unwrap_or_default();
    if !status.success() {
        return Err(Error::failed(format!(
            "QEMU ended with {status}: {}; the console's last lines:\n{}",
            qemu_err.trim(),
            quoted(&spec.console)
        )));
    }
    let Ok(job_status) = capped::head(&out_dir.join("status"), 16) else {
        return Err(Error::failed(format!(
            "the guest ended without running the job; the console's last lines:\n{}",
            quoted(&spec.console)
        )));
    };
    let status = String::from_utf8_lossy(&job_status.bytes).trim().parse().unwrap_or(-1);
    let stderr = said(&capped::tail(&out_dir.join("stderr"), MAX_STDERR).unwrap_or_default(), true);
    let stdout = capped::head(&out_dir.join("stdout"), MAX_STDOUT).unwrap_or_default();
    if stdout.cut {
        return Err(Error::failed(format!(
            "the guest's job wrote more than {} to its standard output, cut there and not read as a case; its \
             stderr ends:\n{}",
            crate::units::bytes_short(MAX_STDOUT),
            last_lines(&stderr, QUOTED_LINES)
        )));
    }
    Ok(GuestRun { status, stdout: stdout.bytes, stderr, wall_s, marks: console::marks(&spec.console) })
}

/// What was read of a guest's text (its end when `end`, else its start),
/// as text: when there was more, a first line says it was cut and what is
/// kept.
fn said(read: &Capped, end: bool) -> String {
    let text = String::from_utf8_lossy(&read.bytes);
    if !read.cut {
        return text.into_owned();
    }
    let kept = if end { "last" } else { "first" };
    format!("(cut: only its {kept} {} kept)\n{text}", crate::units::bytes_short(MAX_STDERR))
}

/// The last `n` lines of `text`: what an error quotes of a guest's stderr.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn quoted(console: &Path) -> String {
    let lines = console::tail(console, QUOTED_LINES);
    if lines.is_empty() {
        return "  (the console is empty)".to_string();
    }
    lines.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::super::accel::Accel;
    use super::*;

    /// A stand-in for QEMU: a shell script that finds the console path in
    /// its arguments, writes `console` there, then runs `then`.
    fn fake_qemu(dir: &Path, console: &str, then: &str) -> GuestSpec {
        let script = dir.join("fake-qemu");
        let body = format!(
            "#!/bin/sh\nfor a; do case \"$a\" in file,id=console,path=*) c=\"${{a#file,id=console,path=}}\";; esac; done\n\
             printf '{console}' > \"$c\"\n{then}\n"
        );
        std::fs::write(&script, body).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        GuestSpec {
            qemu: script,
            accel: Accel::Tcg { why: "test".into() },
            kernel: dir.join("vmlinux"),
            initramfs: dir.join("initramfs.cpio"),
            append: Vec::new(),
            memory_bytes: 256 << 20,
            cpus: 1,
            console: dir.join("console.log"),
            shares: Vec::new(),
            disks: Vec::new(),
            write_log: None,
        }
    }

    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    }

    #[test]
    fn a_guest_that_hangs_is_killed_at_the_timeout_with_its_console_quoted() {
        let dir = crate::test_temp::dir("");
        let pid_file = dir.path().join("sleeper");
        let spec = fake_qemu(dir.path(), "booting\\nstuck here\\n", &format!("sleep 600 & echo $! > {}; wait", pid_file.display()));
        let ledger = Ledger::for_tests();
        let started = Instant::now();
        let err = run(&ledger, &spec, dir.path(), Duration::from_secs(2)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(err.message.contains("did not finish within 2 s"), "{}", err.message);
        assert!(err.message.contains("  stuck here"), "{}", err.message);
        // The whole group went, the script's own child too.
        let sleeper: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(sleeper) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!alive(sleeper), "process {sleeper} outlived the guest's timeout");
    }

    #[test]
    fn the_jobs_output_is_read_from_the_share_and_its_absence_is_an_error() {
        let dir = crate::test_temp::dir("");
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let then = format!("echo 0 > {0}/status; echo '{{}}' > {0}/stdout", out.display());
        let spec = fake_qemu(dir.path(), "fslab-guest: init 1.5\\nfslab-guest: done 7.25\\n", &then);
        let ledger = Ledger::for_tests();
        let got = run(&ledger, &spec, &out, Duration::from_secs(30)).unwrap();
        assert_eq!((got.status, got.stdout.as_slice()), (0, &b"{}\n"[..]));
        assert_eq!(got.mark("done"), Some(7.25));

        std::fs::remove_file(out.join("status")).unwrap();
        let spec = fake_qemu(dir.path(), "fslab-guest-failed: mount the output share\\n", "true");
        let err = run(&ledger, &spec, &out, Duration::from_secs(30)).unwrap_err();
        assert!(err.message.contains("without running the job"), "{}", err.message);
        assert!(err.message.contains("fslab-guest-failed: mount the output share"), "{}", err.message);
    }

    /// What a guest may leave without limit: a 64 GiB sparse `stdout`
    /// costs it nothing to write through 9p (ftruncate), and fslab must not
    /// try to hold it.
    #[test]
    fn a_guests_unbounded_output_is_cut_and_said_so() {
        let dir = crate::test_temp::dir("");
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let ledger = Ledger::for_tests();
        // stdout: the case cannot be read whole, so the job failed, said why.
        let then = format!("echo 0 > {0}/status; truncate -s 64G {0}/stdout", out.display());
        let spec = fake_qemu(dir.path(), "fslab-guest: init 1.5\\n", &then);
        let err = run(&ledger, &spec, &out, Duration::from_secs(30)).unwrap_err();
        assert!(err.message.contains("cut") && err.message.contains("256 MiB"), "{}", err.message);
        // stderr: its last lines are kept, and the cut is said.
        let then = format!(
            "echo 0 > {0}/status; echo '{{}}' > {0}/stdout; truncate -s 64G {0}/stderr; echo 'the last words' >> {0}/stderr",
            out.display()
        );
        let spec = fake_qemu(dir.path(), "fslab-guest: init 1.5\\n", &then);
        let got = run(&ledger, &spec, &out, Duration::from_secs(30)).unwrap();
        assert!(got.stderr.len() <= 128 << 10, "{} bytes of stderr kept", got.stderr.len());
        assert!(got.stderr.trim_end().ends_with("the last words"), "{:?}", &got.stderr[got.stderr.len().saturating_sub(200)..]);
        assert!(got.stderr.contains("cut"), "the cut is not said");
        // QEMU's own stderr, 100 MB of it, and a failure: the error quotes its start.
        let spec = fake_qemu(dir.path(), "booting\\n", "head -c 100000000 /dev/zero | tr '\\0' x >&2; exit 1");
        let err = run(&ledger, &spec, &out, Duration::from_secs(60)).unwrap_err();
        assert!(err.message.len() < 1 << 20, "an error of {} bytes", err.message.len());
        assert!(err.message.contains("cut"), "{}", &err.message[..200]);
        // The console: marks at both ends of a 64 GiB one are still found.
        let console = dir.path().join("console.log");
        std::fs::write(&console, "fslab-guest: init 1.5\nfslab-guest: modules 2.5\n").unwrap();
        let file = std::fs::OpenOptions::new().append(true).open(&console).unwrap();
        file.set_len(64 << 30).unwrap();
        use std::io::Write as _;
        (&file).write_all(b"\nfslab-guest: done 7.25\n").unwrap();
        let marks = console::marks(&console);
        assert_eq!(marks.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(), ["init", "modules", "done"]);
    }
}
