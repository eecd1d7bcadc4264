//! The flags of `run`, `exec` and `hunt` as the plan's requests
//! ([`crate::plan`]): the clap structs are read into plain ones here, and
//! nothing else is decided.

use std::path::PathBuf;

use clap::Args;

use super::{ExecArgs, HuntArgs, RunArgs, TargetArgs};
use crate::plan::{ExecRequest, GuestRequest, HuntRequest, PresetName, RunRequest, TargetRequest};
use crate::scenario::exec::{CommandWork, Echo};
use crate::vm::prepare::DEFAULT_KERNEL_CACHE;

/// Flags for other kernels, in guests.
#[derive(Debug, Args)]
#[command(next_help_heading = "Other kernels (a QEMU guest per case)")]
pub struct KernelArgs {
    /// Run every case under each kernel: a bzImage or vmlinux booted in a
    /// small QEMU guest per case, `debian:NAME` (a list, a range A..B) for
    /// Debian's packaged kernels, fetched into --kernel-cache once, or
    /// `host` for this machine's own. A matrix axis, as --fs is; labels
    /// then read `ext4@6.1.0-56-amd64`.
    #[arg(long, value_name = "IMAGE|debian:NAME|host[,...]", value_delimiter = ',')]
    pub kernel: Vec<String>,
    /// The guest kernel's module tree (lib/modules/RELEASE) when it is not
    /// beside the image (ROOT/lib/modules/RELEASE for ROOT/boot/IMAGE) or
    /// in /lib/modules/RELEASE. Only with a single guest kernel.
    #[arg(long, value_name = "DIR")]
    pub kernel_modules: Option<PathBuf>,
    /// The guests' memory [default: 1G]; a list (`512M,4G`) is a matrix
    /// axis, as --memory is.
    #[arg(long, value_name = "SIZE[,SIZE...]", value_delimiter = ',', value_parser = crate::plan::parse_vm_memory)]
    pub vm_memory: Vec<(String, u64)>,
    /// The guests' virtual CPUs.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub vm_cpus: u32,
    /// Kill a guest still running after this many seconds (boot to
    /// power-off); its case fails with the console's last lines.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(u64).range(10..=86400))]
    pub vm_timeout: u64,
    /// Where kernels unpacked for a fast boot, and Debian's kernels
    /// (debian/NAME), are kept.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_KERNEL_CACHE)]
    pub kernel_cache: PathBuf,
}

impl TargetArgs {
    /// The target flags as the plan takes them.
    pub fn request(&self) -> TargetRequest {
        let vm = &self.vm;
        TargetRequest {
            fs: self.fs.clone(),
            dir: self.dir.clone(),
            device: self.device.clone(),
            destroy_data_on: self.destroy_data_on.clone(),
            scratch: self.scratch.clone(),
            size: self.size,
            mkfs_opt: self.mkfs_opt.clone(),
            mount_opt: self.mount_opt.clone(),
            sysctl: self.sysctl.clone(),
            memory: self.memory.clone(),
            age: self.age.clone(),
            fill: self.fill.clone(),
            age_cache: self.age_cache.clone(),
            age_images: self.age_images,
            interval: self.interval,
            disk: self.disk.disk.clone(),
            disk_profile: self.disk.disk_profile.clone(),
            vm: GuestRequest {
                kernel: vm.kernel.clone(),
                kernel_modules: vm.kernel_modules.clone(),
                vm_memory: vm.vm_memory.clone(),
                vm_cpus: vm.vm_cpus,
                vm_timeout: vm.vm_timeout,
                kernel_cache: vm.kernel_cache.clone(),
            },
            crash_record: self.crash_record,
            crash_log_cap: self.crash_log_cap,
            crash: self.crash,
            crash_seed: self.crash_seed,
            crash_max_states: self.crash_max_states,
            crash_host_log: self.crash_host_log.clone(),
            neighbour_fsync: self.neighbour_fsync.clone(),
        }
    }
}

impl RunArgs {
    /// `run`'s flags as the plan takes them.
    pub fn request(&self) -> RunRequest {
        RunRequest {
            scenarios: self.scenarios.clone(),
            target: self.target.request(),
            set: self.set.clone(),
            repeat: self.repeat,
            scale: self.scale,
            // clap admits `seeds` alone.
            preset: self.preset.as_ref().map(|_| PresetName::Seeds),
        }
    }
}

impl ExecArgs {
    /// `exec`'s flags as the plan takes them: the command's output is
    /// echoed as `--show-output` (and `--json`) say.
    pub fn request(&self) -> ExecRequest {
        let echo = match (self.show_output, self.target.json) {
            (false, _) => Echo::Off,
            (true, false) => Echo::Streams,
            (true, true) => Echo::Stderr,
        };
        let work =
            CommandWork { argv: self.command.clone(), cold_read: self.cold_read, parse: self.parse, echo, check: self.check.clone(), marks: None };
        ExecRequest { target: self.target.request(), repeat: self.repeat, warmup: self.warmup, work }
    }
}

impl HuntArgs {
    /// `hunt`'s flags as the plan takes them.
    pub fn request(&self) -> HuntRequest {
        HuntRequest {
            scenario: self.scenario.clone(),
            target: self.target.request(),
            vary: self.vary.clone(),
            set: self.set.clone(),
            repeat: self.repeat,
            steps: self.steps,
            scale: self.scale,
        }
    }
}
