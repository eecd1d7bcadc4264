//! The `--kernel` flags: which kernels a run measures under, and how its
//! guests are sized. Every image is checked (and a bzImage unpacked for a
//! fast boot) before anything is made, so a wrong path or a missing QEMU
//! costs nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::TargetRequest;
use crate::distro;
use crate::error::{Error, Result};
use crate::harness::{DEFAULT_VM_MEMORY, GuestPlan, KernelChoice};
use crate::vm::prepare::GuestKernel;

/// The other kernels a run measures under and how their guests are sized,
/// as `--kernel`, `--kernel-modules`, `--vm-memory`, `--vm-cpus`,
/// `--vm-timeout` and `--kernel-cache` give them.
#[derive(Debug, Clone)]
pub struct GuestRequest {
    /// Kernel images, or `host`, as given; none without `--kernel`.
    pub kernel: Vec<String>,
    /// The guest kernel's module tree, when named.
    pub kernel_modules: Option<PathBuf>,
    /// The guests' memory, as given and in bytes; a list is an axis.
    pub vm_memory: Vec<(String, u64)>,
    /// The guests' virtual CPUs.
    pub vm_cpus: u32,
    /// Seconds a guest may run before it is killed.
    pub vm_timeout: u64,
    /// Where kernels unpacked for a fast boot are kept.
    pub kernel_cache: PathBuf,
}

/// The smallest guest: below it a Debian kernel, its modules and fslab do
/// not fit beside any work.
const VM_MEMORY_FLOOR: u64 = 256 << 20;

/// Read one `--vm-memory` value: kept as given, with its bytes.
pub fn parse_vm_memory(text: &str) -> std::result::Result<(String, u64), String> {
    let shown = text.trim().to_string();
    let bytes = crate::units::parse_bytes(&shown)?;
    if bytes < VM_MEMORY_FLOOR {
        return Err(format!("{shown} is below the smallest guest fslab boots, 256M"));
    }
    Ok((shown, bytes))
}

/// The kernels of a run and how its guests go; no kernels and no plan
/// without `--kernel`. Refuses what a guest cannot do yet, with the flag
/// named. Each guest kernel reads now the modules its guests of
/// `file_systems` (the run's) load.
pub fn kernels(args: &TargetRequest, file_systems: &[crate::site::FsType]) -> Result<(Vec<KernelChoice>, Option<GuestPlan>)> {
    let vm = &args.vm;
    if vm.kernel.is_empty() {
        for (given, flag) in [
            (!vm.vm_memory.is_empty(), "--vm-memory"),
            (vm.kernel_modules.is_some(), "--kernel-modules"),
        ] {
            if given {
                return Err(Error::usage(format!("{flag} sizes a guest: name its kernel with --kernel IMAGE")));
            }
        }
        return Ok((Vec::new(), None));
    }
    let items = with_debian_lists(&vm.kernel);
    let guests = items.iter().filter(|k| k.as_str() != "host").count();
    refuse_with_guests(args, guests)?;
    if vm.kernel_modules.is_some() && items.iter().any(|k| distro::is_debian(k)) {
        return Err(Error::usage(
            "--kernel-modules with --kernel debian:NAME: a Debian kernel's modules come with its package; leave \
             --kernel-modules out",
        ));
    }
    // Every name first, so a kernel given twice costs no fetch.
    let mut seen = std::collections::BTreeSet::new();
    let mut named = Vec::new();
    for item in &items {
        for kernel in expanded(item, &vm.kernel_cache)? {
            let given = kernel.given();
            if !seen.insert(given.clone()) {
                return Err(Error::usage(format!("--kernel {given} is given twice")));
            }
            named.push(kernel);
        }
    }
    let mut choices = Vec::new();
    for kernel in named {
        choices.push(match kernel {
            Given::Host => KernelChoice::Host(host_release()),
            Given::Image(image) => {
                let kernel = GuestKernel::prepare(&image, vm.kernel_modules.as_deref(), &vm.kernel_cache, file_systems)?;
                KernelChoice::Guest(Arc::new(kernel))
            }
            Given::Debian(named) => {
                let given = named.given();
                let entry = named.fetched(&vm.kernel_cache)?;
                let mut kernel = GuestKernel::prepare(&entry.image.to_string_lossy(), None, &vm.kernel_cache, file_systems)?;
                kernel.given = given;
                KernelChoice::Guest(Arc::new(kernel))
            }
        });
    }
    if guests == 0 {
        return Ok((choices, None));
    }
    let memory = match vm.vm_memory.as_slice() {
        [one] => one.clone(),
        _ => (DEFAULT_VM_MEMORY.0.to_string(), DEFAULT_VM_MEMORY.1),
    };
    let log_cap = args.crash.map(|_| args.crash_log_cap.unwrap_or(crate::site::DEFAULT_LOG_CAP_BYTES));
    let timeout = Duration::from_secs(vm.vm_timeout);
    let plan = GuestPlan { memory, cpus: vm.vm_cpus, timeout, forward: forwarded(args), log_cap };
    Ok((choices, Some(plan)))
}

/// The `--kernel` values as clap split them at commas, with a Debian
/// list put back together: a value that follows a `debian:` one and starts
/// with a digit (`debian:6.1.0-50,6.12.57` came as `debian:6.1.0-50` and
/// `6.12.57`) continues it. An image file in the current folder whose name
/// starts with a digit is then spelled `./NAME`.
fn with_debian_lists(values: &[String]) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    for value in values {
        match items.last_mut() {
            Some(last) if distro::is_debian(last) && value.starts_with(|c: char| c.is_ascii_digit()) => {
                last.push(',');
                last.push_str(value);
            }
            _ => items.push(value.clone()),
        }
    }
    items
}

/// Every kernel the `--kernel` values name, one by one and in order, as
/// a guest's case records it (`host`, an image as given, `debian:NAME`):
/// a Debian list or range expanded, nothing fetched. An ordered axis
/// (`fslab bisect --kernel`) is made of these.
pub fn kernel_list(values: &[String], kernel_cache: &std::path::Path) -> Result<Vec<String>> {
    let mut all = Vec::new();
    for item in with_debian_lists(values) {
        all.extend(expanded(&item, kernel_cache)?.iter().map(Given::given));
    }
    Ok(all)
}

/// One kernel `--kernel` names.
enum Given {
    /// `host`: this machine's own.
    Host,
    /// A kernel image, by its path as given.
    Image(String),
    /// One of Debian's kernels, cached or to fetch.
    Debian(distro::Named),
}

impl Given {
    /// What the case records as its kernel (`guest.kernel`): the image as
    /// given, or `debian:NAME`.
    fn given(&self) -> String {
        match self {
            Given::Host => "host".to_string(),
            Given::Image(image) => image.clone(),
            Given::Debian(named) => named.given(),
        }
    }
}

/// The kernels one `--kernel` item names: `host` and an image as they
/// are, `debian:SPEC` as each kernel it names (nothing fetched yet).
fn expanded(item: &str, kernel_cache: &std::path::Path) -> Result<Vec<Given>> {
    Ok(match item {
        "host" => vec![Given::Host],
        _ if distro::is_debian(item) => distro::resolve(item, kernel_cache)?.into_iter().map(Given::Debian).collect(),
        _ => vec![Given::Image(item.to_string())],
    })
}

/// Whether the flags name a kernel booted in a guest (an image or
/// `debian:NAME`, not `host` alone).
pub fn names_guests(args: &TargetRequest) -> bool {
    args.vm.kernel.iter().any(|k| k.as_str() != "host")
}

/// This machine's kernel release.
fn host_release() -> String {
    rustix::system::uname().release().to_string_lossy().into_owned()
}

/// What a guest cannot do yet, refused before anything is made.
fn refuse_with_guests(args: &TargetRequest, guests: usize) -> Result<()> {
    if guests == 0 {
        return Ok(());
    }
    let refused = [
        (args.dir.is_some(), "--dir", "a guest makes its own scratch disk: leave --dir out"),
        (args.device.is_some(), "--device", "a guest makes its own scratch disk: leave --device out"),
        (!args.memory.is_empty(), "--memory", "size the guest with --vm-memory instead"),
        (args.age.is_some(), "--age", "aged starts are not made in guests yet: leave --age out"),
        (!args.fill.is_empty(), "--fill", "filled starts are not made in guests yet: leave --fill out"),
        (
            args.neighbour_fsync.len() > 1,
            "--neighbour-fsync",
            "a guest is given one value: run the guests once per value, or vary it on the host's kernel",
        ),
        (args.vm.kernel_modules.is_some() && guests > 1, "--kernel-modules", "it names one tree: give one guest kernel"),
        (args.disk_profile.is_some(), "--disk-profile", "a guest models only the built-in drives: name one with --disk"),
        (
            args.crash_record,
            "--crash-record",
            "a guest's recording is judged inside the guest and not kept; give --crash MODEL without --crash-record, \
             or run on the host's kernel only",
        ),
    ];
    match refused.iter().find(|(given, _, _)| *given) {
        Some((_, flag, why)) => Err(Error::usage(format!("{flag} with --kernel IMAGE: {why}"))),
        None => Ok(()),
    }
}

/// The flags every guest's fslab gets as the host's run was given them:
/// mkfs and mount options, run-wide sysctls, the interval, the size, the
/// modelled drive.
fn forwarded(args: &TargetRequest) -> Vec<String> {
    let mut out = Vec::new();
    for (fs, value) in &args.mkfs_opt {
        out.push(format!("--mkfs-opt={fs}={value}"));
    }
    for (fs, value) in &args.mount_opt {
        out.push(format!("--mount-opt={fs}={value}"));
    }
    for list in args.sysctl.iter().filter(|l| l.0.len() == 1) {
        let s = &list.0[0].setting;
        out.push(format!("--sysctl={}={}", s.key, s.value));
    }
    out.push(format!("--interval={}", args.interval));
    if let [(shown, _)] = args.neighbour_fsync.as_slice() {
        out.push(format!("--neighbour-fsync={shown}"));
    }
    if let Some(disk) = &args.disk {
        out.push(format!("--disk={disk}"));
    }
    if let Some(model) = args.crash {
        // The guest's disk is logged by the host's QEMU (`--crash-host-log`);
        // the guest marks, reads and judges from the log it is shown.
        out.push(format!("--crash={model}"));
        out.push(format!("--crash-host-log={}/writes.log", crate::vm::initramfs::LOG_DIR));
        if let Some(seed) = args.crash_seed {
            out.push(format!("--crash-seed={seed}"));
        }
        if let Some(n) = args.crash_max_states {
            out.push(format!("--crash-max-states={n}"));
        }
        if let Some(cap) = args.crash_log_cap {
            out.push(format!("--crash-log-cap={cap}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guest_is_told_the_crash_model_and_where_the_hosts_log_of_its_disk_is() {
        let mut args = crate::plan::tests::target(&[crate::site::FsType::Ext4]);
        assert!(!forwarded(&args).iter().any(|a| a.starts_with("--crash")));
        args.crash = Some("subset:4".parse().unwrap());
        args.crash_max_states = Some(12);
        let crash: Vec<String> = forwarded(&args).into_iter().filter(|a| a.starts_with("--crash")).collect();
        assert_eq!(crash, ["--crash=subset:4", "--crash-host-log=/fslab-log/writes.log", "--crash-max-states=12"]);
    }

    #[test]
    fn a_debian_list_clap_split_at_its_commas_is_put_back_together() {
        let values = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            with_debian_lists(&values(&["debian:6.1.0-50", "6.12.57", "6.1.0-47..6.1.0-49", "host", "/boot/vmlinuz", "./6.1"])),
            values(&["debian:6.1.0-50,6.12.57,6.1.0-47..6.1.0-49", "host", "/boot/vmlinuz", "./6.1"])
        );
        assert_eq!(with_debian_lists(&values(&["6.1", "debian:6.1.0-50"])), values(&["6.1", "debian:6.1.0-50"]));
    }

    #[test]
    fn a_guest_smaller_than_256m_is_refused() {
        assert_eq!(parse_vm_memory("512M"), Ok(("512M".to_string(), 512 << 20)));
        assert!(parse_vm_memory("128M").unwrap_err().contains("256M"));
    }
}
