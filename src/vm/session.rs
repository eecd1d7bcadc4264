//! One guest job from start to end, as the harness runs a case in a guest
//! (`--kernel`): the guest's files made in the run's scratch folder and
//! ledgered ([`GuestFiles`]), the initramfs for the file system's modules
//! written, the fslab binary and the job's command line left in the output
//! share, QEMU run to its end ([`guest::run`]), and every file released
//! again, on success and on error alike, after the console's last lines
//! were read.
//!
//! The binary travels with the guest, copied from an open descriptor of
//! it (the harness's is `/proc/self/exe`: the very binary the host runs,
//! even one since replaced or deleted): a path would name it in the
//! guest's view of the host's root, where `/tmp`, `/run` and `/var/tmp`
//! are the guest's own tmpfs and a binary there is not found.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::accel::{self, Accel};
use super::guest::{self, GuestRun};
use super::initramfs;
use super::kernel::{self, BUSYBOX};
use super::prepare::GuestKernel;
use super::{console, qemu};
use crate::error::{Error, Result};
use crate::site::guest_files::GuestFiles;
use crate::ledger::Ledger;
use crate::site::FsType;

/// How many console lines a job's outcome keeps.
const CONSOLE_LINES: usize = 15;

/// The guest's size and patience.
#[derive(Debug, Clone)]
pub struct VmShape {
    /// Its memory (`--vm-memory`), in bytes.
    pub memory_bytes: u64,
    /// Its virtual processors (`--vm-cpus`).
    pub cpus: u32,
    /// How long it may run before it is killed (`--vm-timeout`).
    pub timeout: Duration,
    /// Log every write to the disk, in a log of at most this many bytes
    /// (`--crash`), shared read-only with the guest at
    /// [`initramfs::LOG_DIR`].
    pub log_cap: Option<u64>,
}

/// What one guest job gave back.
pub struct JobOutcome {
    /// The job's status, output and the guest's timings.
    pub run: GuestRun,
    /// How the guest's processor ran (KVM, or TCG and why).
    pub accel: Accel,
    /// `qemu-system-x86_64 --version`'s first line.
    pub qemu_version: String,
    /// The console's last lines, read before the files were released:
    /// what a failed job's case quotes.
    pub console_tail: Vec<String>,
    /// What the host read of the disk's write log, when it was logged
    /// (and the guest ran to its end).
    pub log: Option<crate::site::guest_files::LoggedDisk>,
}

/// What a guest runs: an fslab binary, open (copied into the guest's
/// share as it is), and its arguments (`run SCENARIO ...`).
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// The binary, open for reading.
    pub fslab: &'a File,
    /// Its arguments.
    pub args: &'a [String],
    /// The environment it runs with, in place of the guest's (`exec`: the
    /// command sees what it would see on the host); `None` keeps the
    /// guest's.
    pub env: Option<&'a [(String, String)]>,
}

/// QEMU's version line, asked once per process.
fn qemu_version() -> String {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| kernel::qemu_version().unwrap_or_else(|| "qemu-system-x86_64 (version unknown)".to_string())).clone()
}

/// Boot `kernel` with a fresh sparse disk of `disk_bytes` as `/dev/vda`
/// and the initramfs for `fs`'s modules, run `job` in it (its binary
/// shipped in the output share, beside the host's root, which the guest
/// sees read-only), and return its status and output. The guest's files
/// (`GuestFiles::make(ledger, run_id, label, disk_bytes)`) are released
/// before this returns, on error too. QEMU is started from the calling
/// thread, whose end kills it (`PR_SET_PDEATHSIG` is per thread): call
/// this from a thread that outlives the guest, such as the main one.
#[allow(clippy::too_many_arguments)]
pub fn run_job(
    ledger: &Ledger,
    run_id: &str,
    label: &str,
    kernel: &GuestKernel,
    fs: FsType,
    shape: &VmShape,
    disk_bytes: u64,
    job: Job,
) -> Result<JobOutcome> {
    let modules = kernel.modules_for(fs)?;
    let mut files = GuestFiles::make(ledger, run_id, label, disk_bytes, shape.log_cap)?;
    let accel = accel::detect();
    let ran = boot(ledger, kernel, &modules, shape, job, &accel, &mut files);
    let console_tail = console::tail(&files.console, CONSOLE_LINES);
    let log = match &ran {
        Ok(_) => files.read_log(),
        Err(_) => Ok(None),
    };
    let released = files.release();
    let run = ran?;
    let log = log?;
    released?;
    Ok(JobOutcome { run, accel, qemu_version: qemu_version(), console_tail, log })
}

/// Write the initramfs, the binary and the job into `files`, and run the
/// guest.
fn boot(
    ledger: &Ledger,
    kernel: &GuestKernel,
    modules: &[super::modules::Loaded],
    shape: &VmShape,
    job: Job,
    accel: &Accel,
    files: &mut GuestFiles,
) -> Result<GuestRun> {
    let file = files.initramfs_file()?;
    initramfs::write(file, &files.initramfs, Path::new(BUSYBOX), modules, files.log.is_some())?;
    ship(job.fslab, &files.share.join(initramfs::SHIPPED))?;
    let mut argv = vec![format!("{}/{}", initramfs::OUT_DIR, initramfs::SHIPPED)];
    argv.extend_from_slice(job.args);
    let script = files.share.join("job");
    std::fs::write(&script, initramfs::job_script(&argv, job.env)).map_err(|e| Error::io(&script, "write the guest's job", e))?;
    let mut spec = qemu::GuestSpec {
        qemu: "qemu-system-x86_64".into(),
        accel: accel.clone(),
        kernel: kernel.vmlinux.clone(),
        initramfs: files.initramfs.clone(),
        append: Vec::new(),
        memory_bytes: shape.memory_bytes,
        cpus: shape.cpus,
        console: files.console.clone(),
        shares: vec![
            qemu::Share { tag: initramfs::ROOT_TAG.into(), path: "/".into(), read_only: true },
            qemu::Share { tag: initramfs::OUT_TAG.into(), path: files.share.clone(), read_only: false },
        ],
        disks: vec![files.disk.clone()],
        write_log: None,
    };
    if let (Some((log, folder)), Some(cap_bytes)) = (&files.log, shape.log_cap) {
        spec.shares.push(qemu::Share { tag: initramfs::LOG_TAG.into(), path: folder.clone(), read_only: true });
        spec.write_log = Some(qemu::WriteLogSpec { path: log.clone(), cap_bytes });
    }
    guest::run(ledger, &spec, &files.share, shape.timeout)
}

/// Copy the binary `fslab` (from its start) to `to`, a new file of the
/// guest's share, executable.
fn ship(fslab: &File, to: &Path) -> Result<()> {
    let io = |e| Error::io(to, "copy fslab into the guest's share", e);
    let mut out =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o755).custom_flags(libc::O_NOFOLLOW).open(to).map_err(io)?;
    let mut from = fslab;
    from.seek(SeekFrom::Start(0)).map_err(io)?;
    let copied = std::io::copy(&mut from, &mut out).map_err(io)?;
    let size = fslab.metadata().map_err(io)?.len();
    if copied != size {
        return Err(Error::failed(format!("{}: copied {copied} bytes of fslab's {size}", to.display())));
    }
    Ok(())
}
