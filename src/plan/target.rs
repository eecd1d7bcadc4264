//! Turning the target flags into a [`Plan`]: file systems, device or
//! folder, mkfs and mount options, sysctls, the sampling interval. Every
//! contradiction is refused here, with the flag named, before anything is
//! made.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::guest::GuestRequest;
use crate::error::{Error, Result};
use crate::harness::{CaseSysctl, ColdRead, Plan};
use crate::harness::conditions::sysctl::SysctlSetting;
use crate::site::{self, Device, Dir, FsType, Scratch, TargetOptions, TargetSpec};

/// Where work runs and how it is measured, as the target flags give it
/// (`run`, `exec` and `hunt` share them); each field is the flag of the
/// same name, its values already read.
#[derive(Debug, Clone)]
pub struct TargetRequest {
    /// `--fs`: file systems to make (none: all five, unless `dir` or
    /// `device`).
    pub fs: Vec<FsType>,
    /// `--dir`: an existing folder to run in instead.
    pub dir: Option<PathBuf>,
    /// `--device`: a block device to format instead of a loop device.
    pub device: Option<PathBuf>,
    /// `--destroy-data-on`: the device the user agreed to format.
    pub destroy_data_on: Option<PathBuf>,
    /// `--scratch`: the folder for images and mount points.
    pub scratch: PathBuf,
    /// `--size`: each image's size in bytes.
    pub size: Option<u64>,
    /// `--mkfs-opt`: extra mkfs arguments per file system, as given.
    pub mkfs_opt: Vec<(FsType, String)>,
    /// `--mount-opt`: mount options per file system.
    pub mount_opt: Vec<(FsType, String)>,
    /// `--sysctl`: one value is run-wide, a list is an axis.
    pub sysctl: Vec<SysctlList>,
    /// `--memory`: memory limits, as given and in bytes; an axis.
    pub memory: Vec<(String, u64)>,
    /// `--age`: the aging profile.
    pub age: Option<crate::age::AgeSpec>,
    /// `--fill`: fill levels, as given and as fractions; a list is an axis.
    pub fill: Vec<(String, f64)>,
    /// `--age-cache`: where aged images are kept.
    pub age_cache: Option<PathBuf>,
    /// `--age-images`: independent images of an aged start (at least 1).
    pub age_images: u32,
    /// `--interval`: the timeline's sampling interval, in seconds.
    pub interval: f64,
    /// `--disk`: the modelled drive, by name (none: [`super::disk::DEFAULT_DISK`]).
    pub disk: Option<String>,
    /// `--disk-profile`: a profile file adding a drive.
    pub disk_profile: Option<PathBuf>,
    /// `--kernel` and the guests' sizing.
    pub vm: GuestRequest,
    /// `--crash-record`: record every write each scratch device completes.
    pub crash_record: bool,
    /// `--crash-log-cap`: the most a case's write log may take, in bytes.
    pub crash_log_cap: Option<u64>,
    /// `--crash`: judge each case's crash states under this model.
    pub crash: Option<crate::harness::crash_states::Model>,
    /// `--crash-seed`.
    pub crash_seed: Option<u64>,
    /// `--crash-max-states`.
    pub crash_max_states: Option<u32>,
    /// `--crash-host-log` (hidden; a guest's fslab only): `--device`'s
    /// writes are logged by the host, into this log.
    pub crash_host_log: Option<PathBuf>,
    /// `--neighbour-fsync`: `off` or an interval, as given; a list is an
    /// axis.
    pub neighbour_fsync: Vec<(String, Option<Duration>)>,
}

/// Turn the target flags into the harness's plan, its cases read back
/// cold as `cold_read` says, refusing contradictions with the flag named.
pub fn harness_plan(args: &TargetRequest, cold_read: ColdRead) -> Result<Plan> {
    check_input(args)?;
    // Paths are resolved once, here and when the scratch folder is opened
    // (made first if absent, then canonical): the ledger records them so,
    // and a release or cleanup from any other folder finds them again.
    let mut target_options = TargetOptions {
        scratch: std::path::absolute(&args.scratch).unwrap_or_else(|_| args.scratch.clone()),
        size_bytes: args.size,
        ..Default::default()
    };
    for (fs, value) in &args.mkfs_opt {
        let words = shell_words::split(value)
            .map_err(|e| Error::usage(format!("--mkfs-opt {fs}={value}: {e} (quote as in a shell)")))?;
        target_options.mkfs_args.entry(*fs).or_default().extend(words);
    }
    for (fs, value) in &args.mount_opt {
        let opts = target_options.mount_opts.entry(*fs).or_default();
        if !opts.is_empty() {
            opts.push(',');
        }
        opts.push_str(value);
    }
    let fs_list = if args.fs.is_empty() && args.dir.is_none() && args.device.is_none() {
        site::fs_type::ALL.to_vec()
    } else {
        args.fs.clone()
    };
    let targets: Vec<TargetSpec> = match (&args.dir, &args.device) {
        (Some(dir), None) => {
            let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            vec![Arc::new(Dir { path })]
        }
        (None, Some(device)) => {
            let named = args.destroy_data_on.as_ref();
            let same = named.is_some_and(|n| {
                std::fs::canonicalize(n).ok().zip(std::fs::canonicalize(device).ok()).is_some_and(|(a, b)| a == b)
            });
            if !same {
                return Err(Error::usage(format!(
                    "--device {} would be formatted: name the same device with --destroy-data-on {} to agree",
                    device.display(),
                    device.display()
                )));
            }
            if fs_list.is_empty() {
                return Err(Error::usage("--device needs --fs to say what to make on it"));
            }
            fs_list.iter().map(|fs| Arc::new(Device { fs: *fs, device: device.clone() }) as TargetSpec).collect()
        }
        (None, None) => fs_list.iter().map(|fs| Arc::new(Scratch::new(*fs)) as TargetSpec).collect(),
        (Some(_), Some(_)) => unreachable!("clap keeps --dir and --device apart"),
    };
    // A single value stays run-wide, as before conditions; a list is an
    // axis of per-case conditions.
    let sysctls = args.sysctl.iter().filter(|l| l.0.len() == 1).map(|l| l.0[0].setting.clone()).collect();
    let axes: Vec<Vec<CaseSysctl>> = args.sysctl.iter().filter(|l| l.0.len() > 1).map(|l| l.0.clone()).collect();
    let mut keys: Vec<&str> = args.sysctl.iter().map(|l| l.0[0].setting.key.as_str()).collect();
    keys.sort_unstable();
    if let Some(pair) = keys.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::usage(format!("--sysctl {} is given twice: give it once, with a list of values to vary it", pair[0])));
    }
    let start = start_plan(args)?;
    let (kernels, guest) = super::guest::kernels(args, &fs_list)?;
    let records = args.crash_record || args.crash.is_some();
    let host_too = kernels.is_empty() || kernels.iter().any(|k| matches!(k, crate::harness::KernelChoice::Host(_)));
    if records {
        match (&args.crash_host_log, &args.device) {
            (Some(log), Some(_)) => target_options.host_log = Some(log.clone()),
            (None, Some(device)) => {
                return Err(Error::usage(format!(
                    "--crash with --device {}: writes are recorded on scratch images fslab makes; leave --device out",
                    device.display()
                )));
            }
            _ if host_too => target_options.record = Some(record_options(args)?),
            _ => {}
        }
    } else if args.crash_log_cap.is_some() {
        return Err(Error::usage("--crash-log-cap caps the write log of --crash-record or --crash: give one of them, or leave it out"));
    }
    // A run with guests only changes no sysctl of the host: each guest's
    // fslab sets them in its own kernel.
    let sysctls = if host_too { sysctls } else { Vec::new() };
    let mut conditions = crate::harness::with_fills(crate::harness::matrix(&args.memory, &axes), &fill_axis(args));
    conditions = crate::harness::with_neighbours(conditions, &args.neighbour_fsync);
    if records {
        let shown = args.crash.map_or_else(|| "record".to_string(), |m| m.to_string());
        for c in &mut conditions {
            c.crash = Some(shown.clone());
        }
    }
    let crash = args.crash.map(|model| crate::harness::crash_states::CrashPlan {
        model,
        seed: args.crash_seed.unwrap_or(crate::harness::crash_states::DEFAULT_SEED),
        max_states: args.crash_max_states.map_or(crate::harness::crash_states::DEFAULT_MAX_STATES, |n| n as usize),
    });
    Ok(Plan {
        start,
        targets,
        target_options,
        sysctls,
        conditions: crate::harness::with_kernels(conditions, &kernels, &args.vm.vm_memory),
        interval: Duration::from_secs_f64(args.interval),
        cold_read,
        guest,
        disk: super::disk::for_run(args.disk.as_deref(), args.disk_profile.as_deref())?,
        scenario_disks: Vec::new(),
        crash,
    })
}

/// How writes are recorded (`--crash-record`): the recorder's program,
/// found and checked (exit 3 when it cannot run here), and the log's cap
/// (exit 2 below the smallest that holds a request).
fn record_options(args: &TargetRequest) -> Result<site::RecordOptions> {
    let cap_bytes = args.crash_log_cap.unwrap_or(site::DEFAULT_LOG_CAP_BYTES);
    if cap_bytes < MIN_LOG_CAP_BYTES {
        return Err(Error::usage(format!(
            "--crash-log-cap {}: below the smallest log fslab records into (16M, room for the mount's writes and a \
             request past them); give 16M or more",
            crate::units::bytes_short(cap_bytes)
        )));
    }
    let daemon = site::recorder::find_daemon()?;
    Ok(site::RecordOptions { daemon, cap_bytes, keep: args.crash_record })
}

/// The smallest `--crash-log-cap`.
const MIN_LOG_CAP_BYTES: u64 = 16 << 20;

/// The fill levels a run varies, as given: none unless `--fill` is a list.
fn fill_axis(args: &TargetRequest) -> Vec<String> {
    if args.fill.len() < 2 {
        return Vec::new();
    }
    args.fill.iter().map(|(shown, _)| shown.clone()).collect()
}

/// How scratch targets start (`--age`, `--fill`, `--age-cache`), checked:
/// only scratch targets are aged or filled (fslab never writes aging files
/// into a user's folder or a device's file system it did not make fresh),
/// and a profile's inputs are read now, so a missing file or repository is
/// refused before anything is made.
fn start_plan(args: &TargetRequest) -> Result<Option<crate::harness::StartPlan>> {
    // `--age-cache` alone is kept for a preset's aged conditions.
    if args.age.is_none() && args.fill.is_empty() && args.age_cache.is_none() && args.age_images == 1 {
        return Ok(None);
    }
    if args.age_images > 1 {
        if let Some(age) = &args.age {
            crate::harness::StartPlan::check_images(age, args.age_images)?;
        }
    }
    if (args.age.is_some() || !args.fill.is_empty()) && (args.dir.is_some() || args.device.is_some()) {
        let given = if args.dir.is_some() { "--dir" } else { "--device" };
        return Err(Error::usage(format!(
            "--age and --fill work on scratch file systems fslab makes, not with {given}: leave {given} out (use --fs)"
        )));
    }
    let age_identity = args.age.as_ref().map(|a| a.resolve()).transpose()?;
    let cache_dir = args.age_cache.as_ref().map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()));
    // One fill is the run's; a list is an axis of per-case conditions.
    let fill = match args.fill.as_slice() {
        [(_, one)] => Some(*one),
        _ => None,
    };
    Ok(Some(crate::harness::StartPlan { age: args.age.clone(), age_identity, fill, cache_dir, images: args.age_images }))
}

/// Refuse (exit 2) `--age-images N` with fewer than N repeats: repeat R
/// starts from image ((R-1) mod N)+1, so fewer never reach every image.
pub fn check_images_repeated(args: &TargetRequest, repeat: u32) -> Result<()> {
    if args.age_images > repeat {
        return Err(Error::usage(format!(
            "--age-images {n} with --repeat {repeat}: each repeat starts from one image, so give --repeat {n} or more",
            n = args.age_images
        )));
    }
    Ok(())
}

/// Read one `--neighbour-fsync` value: kept as given (`1s`, the case's
/// condition), with the interval (`off`: none).
pub fn parse_neighbour_value(text: &str) -> std::result::Result<(String, Option<Duration>), String> {
    let every = crate::harness::conditions::neighbour::parse_interval(text)?;
    Ok((text.trim().to_string(), every))
}

/// Read one `--fill` value: kept as given (`80%`, a case's condition when
/// the run varies it), with the fraction.
pub fn parse_fill_value(text: &str) -> std::result::Result<(String, f64), String> {
    Ok((text.trim().to_string(), crate::units::parse_fill(text)?))
}

/// The values of one `--sysctl KEY=V1,V2,...`: one is run-wide, more are
/// a matrix axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysctlList(pub Vec<CaseSysctl>);

/// Read `--sysctl KEY=V1,V2,...`: each value as `KEY=VALUE` would be
/// read alone (sizes take suffixes for `*_bytes` keys).
pub fn parse_sysctl_list(text: &str) -> std::result::Result<SysctlList, String> {
    let (key, values) =
        text.split_once('=').ok_or_else(|| format!("`{text}` is not KEY=VALUE (for example vm.dirty_ratio=90)"))?;
    let mut list = Vec::new();
    for value in values.split(',') {
        let setting: SysctlSetting = format!("{key}={value}").parse()?;
        if list.iter().any(|s: &CaseSysctl| s.setting.value == setting.value) {
            return Err(format!("{key}: the value {value} is given twice"));
        }
        list.push(CaseSysctl { setting, shown: value.trim().to_string() });
    }
    Ok(SysctlList(list))
}

/// The smallest `--memory`: below it the work's own memory (fslab's
/// process included, which is in the cgroup while the work runs) would
/// meet the OOM killer rather than writeback.
const MEMORY_FLOOR: u64 = 32 << 20;

/// Read one `--memory` value: kept as given (`256M`, the case's
/// condition), with its bytes.
pub fn parse_memory(text: &str) -> std::result::Result<(String, u64), String> {
    let shown = text.trim().to_string();
    let bytes = crate::units::parse_bytes(&shown)?;
    if bytes < MEMORY_FLOOR {
        return Err(format!("{shown} is below the smallest limit fslab sets, 32M (the work itself needs memory)"));
    }
    Ok((shown, bytes))
}

/// The shortest and longest sampling interval, in seconds: below a tick
/// every sample would be empty, above an hour a timeline has no points.
const INTERVAL_RANGE: (f64, f64) = (0.01, 3600.0);

/// Refuse, before anything is made, values no target can be made or
/// measured with: mkfs and mount options that name another device or a
/// path, or that the kernel does not know; an image size below the file
/// system's smallest; an interval out of range.
fn check_input(args: &TargetRequest) -> Result<()> {
    let mut mkfs_args: std::collections::BTreeMap<site::FsType, Vec<String>> = Default::default();
    for (fs, value) in &args.mkfs_opt {
        let words = shell_words::split(value)
            .map_err(|e| Error::usage(format!("--mkfs-opt {fs}={value}: {e} (quote as in a shell)")))?;
        site::options::check_mkfs_args(*fs, &words)
            .map_err(|e| Error::usage(format!("--mkfs-opt {fs}={value}: {e}")))?;
        mkfs_args.entry(*fs).or_default().extend(words);
    }
    for (fs, value) in &args.mount_opt {
        let for_fs = site::options::check_mount_opts(*fs, value)
            .map_err(|e| Error::usage(format!("--mount-opt {fs}={value}: {e}")))?;
        site::options::kernel_accepts(*fs, &for_fs)?;
    }
    if let (Some(size), None, None) = (args.size, &args.dir, &args.device) {
        let fs_list = if args.fs.is_empty() { site::fs_type::ALL.to_vec() } else { args.fs.clone() };
        site::check_size(size, &fs_list, &mkfs_args)?;
    }
    let (shortest, longest) = INTERVAL_RANGE;
    if !(shortest..=longest).contains(&args.interval) {
        // 1e300 would print as 301 digits.
        let shown = if args.interval.abs() >= 1e6 { format!("{:e}", args.interval) } else { args.interval.to_string() };
        return Err(Error::usage(format!("--interval {shown}: give a number of seconds from {shortest} to {longest}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_lists_keep_the_values_as_given_and_write_bytes() {
        let list = parse_sysctl_list("vm.dirty_background_bytes=16M,64M").unwrap().0;
        let got: Vec<(&str, &str, &str)> =
            list.iter().map(|s| (s.setting.key.as_str(), s.setting.value.as_str(), s.shown.as_str())).collect();
        assert_eq!(
            got,
            [("vm.dirty_background_bytes", "16777216", "16M"), ("vm.dirty_background_bytes", "67108864", "64M")]
        );
        assert_eq!(parse_sysctl_list("vm.dirty_ratio=5").unwrap().0.len(), 1);
        assert!(parse_sysctl_list("vm.dirty_ratio=5,5").unwrap_err().contains("twice"));
        assert!(parse_sysctl_list("vm.dirty_ratio").is_err());
    }

    #[test]
    fn fill_levels_read_as_percent_or_fraction_and_leave_room() {
        assert_eq!(crate::units::parse_fill("80%"), Ok(0.8));
        assert_eq!(crate::units::parse_fill("0.5"), Ok(0.5));
        assert!(crate::units::parse_fill("100%").unwrap_err().contains("below 99%"));
        assert!(crate::units::parse_fill("0").is_err());
        assert!(crate::units::parse_fill("lots").unwrap_err().contains("percentage"));
    }

    #[test]
    fn memory_values_are_kept_as_given_and_a_floor_holds() {
        assert_eq!(parse_memory("192M"), Ok(("192M".to_string(), 192 << 20)));
        assert!(parse_memory("16M").unwrap_err().contains("32M"));
        assert!(parse_memory("lots").is_err());
    }
}
