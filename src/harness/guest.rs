//! A case in a guest (`--kernel IMAGE`): instead of making the target on
//! the host, boot the kernel in a small virtual machine whose `/dev/vda`
//! is a fresh image, run this same fslab binary inside it on that device
//! for the one case (`run SCENARIO`, or `exec -- COMMAND` with the host's
//! environment, as the work says itself: [`WorkSpec::words`]), and bring
//! the case it recorded back into the host's run.
//!
//! The design decisions: the guest measures everything itself (its own
//! probes, tracefs and block statistics, under its own kernel), so a case
//! from a guest has the same figures as one from the host; the host adds
//! what only it knows — the conditions it asked for and the guest's
//! [`GuestRecord`] (kernel, size, acceleration, boot and wall seconds).
//! A guest that fails, hangs or says nothing is a failed case, never a
//! failed run: its error quotes the guest's stderr and console.

use std::time::Duration;

use super::{Condition, KernelChoice, Lab, Phase};
use crate::record::guest::EMULATED_TIMERS;
use crate::record::{Case, GuestRecord, Status};
use crate::scenario::WorkSpec;
use crate::site::TargetSpec;
use crate::site::guest_files::LoggedDisk;
use crate::vm::guest::last_lines;
use crate::vm::prepare::GuestKernel;
use crate::vm::session::{self, JobOutcome, VmShape};

/// The guest's memory when the run does not say (`--vm-memory`).
pub const DEFAULT_VM_MEMORY: (&str, u64) = ("1G", 1 << 30);

/// How a run's guests are sized and what every guest's fslab is told
/// beside its case.
#[derive(Debug, Clone)]
pub struct GuestPlan {
    /// The memory of a guest whose condition does not vary it: as given,
    /// and in bytes.
    pub memory: (String, u64),
    /// Virtual CPUs of every guest.
    pub cpus: u32,
    /// How long a guest may take, boot to power-off, before it is killed.
    pub timeout: Duration,
    /// Flags passed to every guest's fslab (`run` or `exec`): mkfs and
    /// mount options, run-wide sysctls, the sampling interval, the
    /// modelled drive, `--crash` with the log the host keeps, and `exec`'s
    /// `--warmup`.
    pub forward: Vec<String>,
    /// Log every write of each guest's disk, in a log of at most this
    /// many bytes (`--crash`).
    pub log_cap: Option<u64>,
}

/// The device a guest's scratch disk appears as.
const GUEST_DEVICE: &str = "/dev/vda";

/// How many lines of the guest's stderr a failed case quotes.
const QUOTED_STDERR: usize = 10;

impl Lab {
    /// Measure one case of `job` on `spec` in a guest of `kernel`, whose
    /// disk is `disk_bytes` (sized as the host's image would be): never
    /// fails, a failure is the case's status.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn measure_in_guest(
        &self,
        spec: &TargetSpec,
        job: &WorkSpec,
        condition: &Condition,
        repeat: u32,
        progress: &dyn Fn(Phase),
        kernel: &GuestKernel,
        disk_bytes: u64,
    ) -> Case {
        let mut case = Case::new(&job.scenario, &spec.label(), job.params.clone(), repeat);
        case.conditions = condition.as_map();
        let Some(plan) = self.plan.guest.as_ref() else {
            return failed(case, "a guest kernel in a run planned without guests".into());
        };
        let Some(fs) = spec.scratch_fs() else {
            return failed(case, format!("{} is not a scratch file system: only those run in a guest", spec.label()));
        };
        let mut call = match guest_call(job, condition, plan, fs.name()) {
            Ok(call) => call,
            Err(why) => return failed(case, why),
        };
        // The very binary running here, whatever its path has become.
        let fslab = match std::fs::File::open("/proc/self/exe") {
            Ok(file) => file,
            Err(e) => return failed(case, format!("opening this fslab's own binary (/proc/self/exe) for the guest: {e}")),
        };
        let stretched = if crate::vm::accel::detect().emulated() { stretch_timers(&mut call.args) } else { Vec::new() };
        let argv = [call.args, call.last].concat();
        let (memory, memory_bytes) = condition.vm_memory.clone().unwrap_or_else(|| plan.memory.clone());
        let shape = VmShape { memory_bytes, cpus: plan.cpus, timeout: plan.timeout, log_cap: plan.log_cap };
        progress(Phase::Guest);
        let label = condition.place(&spec.label());
        let run = session::Job { fslab: &fslab, args: &argv, env: call.env.as_deref() };
        let outcome = match session::run_job(self.ledger(), &self.id, &label, kernel, fs, &shape, disk_bytes, run) {
            Ok(outcome) => outcome,
            Err(e) => return failed(case, format!("the guest ({}): {e}", kernel.release)),
        };
        let mut record = guest_record(kernel, &outcome, memory, memory_bytes, plan.cpus);
        if record.emulated {
            record.emulation_sysctls = stretched;
        }
        let mut case = adopt(case, &outcome).unwrap_or_else(|mut failed_case| {
            failed_case.status = Status::Failed;
            failed_case
        });
        if let Some(logged) = &outcome.log {
            logged_disk(&mut case, logged);
        }
        if record.release != kernel.release {
            // What the guest ran is what it said, whatever the image claimed.
            append_error(&mut case, format!("the image claims release {} but the guest ran {}", kernel.release, record.release));
        }
        case.guest = Some(record);
        case
    }
}

/// How this fslab is run in the guest.
#[derive(Debug)]
struct GuestCall {
    /// The arguments up to the last flag (flags may still be added
    /// before `--repeat`).
    args: Vec<String>,
    /// The arguments after every flag: `--` and the command, for `exec`.
    last: Vec<String>,
    /// The environment it runs with, for a work that inherits fslab's
    /// (a command): the host's.
    env: Option<Vec<(String, String)>>,
}

/// The guest's fslab's call: the one case's work on the guest's disk,
/// its JSON on stdout, nothing stored inside, no progress in the stderr
/// a failed case quotes.
fn guest_call(job: &WorkSpec, condition: &Condition, plan: &GuestPlan, fs: &str) -> Result<GuestCall, String> {
    let words = job.words()?;
    let mut args = words.command;
    for word in ["--fs", fs, "--device", GUEST_DEVICE, "--destroy-data-on", GUEST_DEVICE] {
        args.push(word.into());
    }
    args.extend(words.flags);
    for sysctl in &condition.sysctls {
        args.push("--sysctl".into());
        args.push(format!("{}={}", sysctl.setting.key, sysctl.setting.value));
    }
    args.extend(plan.forward.iter().cloned());
    args.extend(["--repeat", "1", "--no-store", "--json", "--progress", "none"].map(String::from));
    let env = words.inherits_env.then(host_env);
    Ok(GuestCall { args, last: words.last, env })
}

/// This process's environment, for a guest whose work is a command:
/// what the command would see on the host, but for fslab's own settings
/// (`FSLAB_*`: the guest's fslab has its own state and store, and tells
/// the command `FSLAB_MOUNT` and the rest itself). A variable whose name
/// or value is not UTF-8 cannot be written into the guest's job, and is
/// left out.
fn host_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, _)| !name.is_empty() && !name.starts_with("FSLAB_"))
        .collect()
}

/// Add `--sysctl KEY=VALUE` to `argv` for each of [`EMULATED_TIMERS`] it
/// does not set already (the run's own setting wins); returns those
/// added, as `KEY=VALUE`.
fn stretch_timers(argv: &mut Vec<String>) -> Vec<String> {
    let sets = |argv: &[String], key: &str| {
        let prefix = format!("{key}=");
        argv.iter().any(|a| a.starts_with(&prefix) || a.strip_prefix("--sysctl=").is_some_and(|s| s.starts_with(&prefix)))
    };
    let mut added = Vec::new();
    for (key, value) in EMULATED_TIMERS {
        if !sets(argv, key) {
            added.push(format!("{key}={value}"));
        }
    }
    let at = argv.iter().position(|a| a == "--repeat").unwrap_or(argv.len());
    let flags = added.iter().flat_map(|s| ["--sysctl".to_string(), s.clone()]);
    argv.splice(at..at, flags.collect::<Vec<_>>());
    added
}

/// The guest's own case from its `--json` output, with the host's name
/// for it (target label, conditions, repeat); `Err` a failed case saying
/// why there is none.
#[allow(clippy::result_large_err)] // Err is the failed case itself, made once per guest.
fn adopt(asked: Case, outcome: &JobOutcome) -> Result<Case, Case> {
    let parsed: Option<Case> = serde_json::from_slice::<serde_json::Value>(&outcome.run.stdout)
        .ok()
        .and_then(|json| json.pointer("/run/cases/0").cloned())
        .and_then(|case| serde_json::from_value(case).ok());
    let Some(mut case) = parsed else {
        let stderr = last_lines(&outcome.run.stderr, QUOTED_STDERR);
        let console = outcome.console_tail.join("\n");
        return Err(failed(
            asked,
            format!(
                "the guest's fslab exited {} without a case; its stderr ends:\n{stderr}\nthe console ends:\n{console}",
                outcome.run.status
            ),
        ));
    };
    case.fs = asked.fs;
    case.conditions = asked.conditions;
    case.repeat = asked.repeat;
    case.scenario = asked.scenario;
    if outcome.run.status != 0 && case.status == Status::Ok {
        let why = format!("the guest's fslab exited {}: {}", outcome.run.status, last_lines(&outcome.run.stderr, QUOTED_STDERR));
        append_error(&mut case, why);
    }
    Ok(case)
}

/// Put what the host read of a guest's write log into its case: the
/// disk's hash in the crash record the guest made; a log that reached its
/// cap, or that does not rebuild the disk, fails the case (its crash
/// states were rebuilt from that log).
fn logged_disk(case: &mut Case, logged: &LoggedDisk) {
    if let Some(needed) = logged.needed_bytes {
        super::recording::fail_at_cap(case, needed - 1, needed);
        return;
    }
    let Some(record) = case.crash.as_mut() else {
        if case.status == Status::Ok {
            append_error(case, "the guest's disk was logged, but its fslab made no crash record".into());
        }
        return;
    };
    record.end_sha256 = logged.end_sha256.clone();
    if logged.replayed_sha256.as_deref() != Some(logged.end_sha256.as_str()) {
        append_error(
            case,
            format!(
                "the guest's write log replayed onto an empty disk gives content {}, and the disk the guest left is {}: \
                 the log does not hold every write, so its crash states are not the disk's",
                logged.replayed_sha256.as_deref().unwrap_or("unknown"),
                logged.end_sha256
            ),
        );
    }
}

/// What the host knows of the guest: the release the guest reported
/// (else the image's), its size and acceleration, QEMU, boot and wall.
fn guest_record(kernel: &GuestKernel, outcome: &JobOutcome, memory: String, memory_bytes: u64, cpus: u32) -> GuestRecord {
    let reported = serde_json::from_slice::<serde_json::Value>(&outcome.run.stdout)
        .ok()
        .and_then(|json| json.pointer("/run/environment/kernel").and_then(|k| k.as_str()).map(str::to_string));
    let why_emulated = match &outcome.accel {
        crate::vm::accel::Accel::Tcg { why } => Some(why.clone()),
        _ => None,
    };
    GuestRecord {
        kernel: kernel.given.clone(),
        release: reported.unwrap_or_else(|| kernel.release.clone()),
        accel: outcome.accel.qemu_name().to_string(),
        emulated: outcome.accel.emulated(),
        why_emulated,
        memory,
        memory_bytes,
        cpus,
        boot_s: outcome.run.mark("init"),
        wall_s: outcome.run.wall_s,
        qemu: outcome.qemu_version.clone(),
        emulation_sysctls: Vec::new(),
    }
}

/// `case` failed for `why`.
fn failed(mut case: Case, why: String) -> Case {
    case.status = Status::Failed;
    case.error = Some(why);
    case
}

/// Fail `case` for `why` too, after what it already said.
fn append_error(case: &mut Case, why: String) {
    case.status = Status::Failed;
    case.error = Some(match case.error.take() {
        Some(first) => format!("{first}; {why}"),
        None => why,
    });
}

/// The kernel a condition boots in a guest, if it does.
pub(super) fn guest_kernel(condition: &Condition) -> Option<&GuestKernel> {
    match &condition.kernel {
        Some(KernelChoice::Guest(kernel)) => Some(kernel),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> GuestPlan {
        GuestPlan {
            memory: ("1G".into(), 1 << 30),
            cpus: 2,
            timeout: Duration::from_secs(60),
            forward: vec!["--interval".into(), "0.5".into()],
            log_cap: None,
        }
    }

    #[test]
    fn the_guest_runs_one_case_of_the_same_parameters_on_its_own_disk() {
        let mut params = serde_json::Map::new();
        params.insert("strategy".into(), "fsync-each".into());
        params.insert("files".into(), 200.into());
        let job = WorkSpec { scenario: "replace-files".into(), params };
        let mut condition = Condition::default();
        condition.sysctls.push(super::super::CaseSysctl {
            setting: crate::harness::conditions::sysctl::SysctlSetting { key: "vm.dirty_bytes".into(), value: "16777216".into() },
            shown: "16M".into(),
        });
        let call = guest_call(&job, &condition, &plan(), "ext4").unwrap();
        assert!(call.last.is_empty() && call.env.is_none(), "{call:?}");
        let argv = call.args;
        assert_eq!(
            argv.join(" "),
            "run replace-files --fs ext4 --device /dev/vda --destroy-data-on /dev/vda --set strategy=fsync-each \
             --set files=200 --sysctl vm.dirty_bytes=16777216 --interval 0.5 --repeat 1 --no-store --json --progress none"
        );
        // Emulated, the writeback timers are stretched before `--repeat`,
        // but never over the run's own setting of one.
        let mut stretched = argv.clone();
        let mut own = plan();
        own.forward.push("--sysctl=vm.dirty_expire_centisecs=100".into());
        let mut own_argv = guest_call(&job, &condition, &own, "ext4").unwrap().args;
        assert_eq!(stretch_timers(&mut stretched), ["vm.dirty_writeback_centisecs=5000", "vm.dirty_expire_centisecs=30000"]);
        assert!(stretched.join(" ").contains(
            "--interval 0.5 --sysctl vm.dirty_writeback_centisecs=5000 --sysctl vm.dirty_expire_centisecs=30000 --repeat 1"
        ));
        assert_eq!(stretch_timers(&mut own_argv), ["vm.dirty_writeback_centisecs=5000"]);
        assert!(!own_argv.iter().any(|a| a == "vm.dirty_expire_centisecs=30000"), "{own_argv:?}");
        let mut bad = job.clone();
        bad.params.insert("path".into(), "./a,b".into());
        assert!(guest_call(&bad, &condition, &plan(), "ext4").unwrap_err().contains("comma"));
    }

    #[test]
    fn a_command_runs_as_exec_in_the_guest_with_the_hosts_environment() {
        let work = crate::scenario::exec::CommandWork {
            argv: vec!["sh".into(), "-c".into(), "uname -r > f".into()],
            cold_read: true,
            parse: None,
            echo: crate::scenario::exec::Echo::Off,
            check: None,
            marks: None,
        };
        let job = WorkSpec { scenario: "exec".into(), params: work.params() };
        let mut call = guest_call(&job, &Condition::default(), &plan(), "xfs").unwrap();
        assert_eq!(
            call.args.join(" "),
            "exec --fs xfs --device /dev/vda --destroy-data-on /dev/vda --cold-read --interval 0.5 --repeat 1 --no-store \
             --json --progress none"
        );
        assert_eq!(call.last, ["--", "sh", "-c", "uname -r > f"]);
        // The command's own words never read as the run's setting of a timer.
        call.last.push("vm.dirty_writeback_centisecs=1".into());
        assert_eq!(stretch_timers(&mut call.args).len(), 2);
        let env = call.env.expect("a command inherits the environment");
        assert!(env.iter().any(|(name, _)| name == "PATH"), "{env:?}");
        assert!(!env.iter().any(|(name, _)| name.starts_with("FSLAB_")), "{env:?}");
    }
}
