//! What the rest of the machine did while a case ran: the CPU other
//! processes used, the load average, and the I/O others did on the disk
//! under the target — so a case measured on a busy machine says so
//! (hyperfine warns the same way), and its timings are trusted less.
//!
//! The design decisions:
//! - Others' CPU is the machine's busy time (`/proc/stat`: user, nice,
//!   system, irq, softirq and steal — a hypervisor's steal is a neighbour
//!   too) less the case's own — this process's every thread and its
//!   waited-for children (`getrusage` SELF + CHILDREN), so the work in
//!   process, a scenario's `tar` and `exec`'s command all count as the
//!   case's — and less kernel threads' (`PF_KTHREAD` in `/proc/PID/stat`):
//!   writeback, the loop device's worker and the file systems' workers run
//!   there, mostly for the case. A command that leaves a process running
//!   after it exits has that process counted as others'.
//! - Others' disk I/O is the disk under the target's counters less the
//!   target's own device's (a loop device with direct I/O passes its I/O
//!   straight down; the host file system's journal for the image is the
//!   small rest).
//! - The figures are `host_*`: like `backing_*` they count the whole
//!   machine, so `compare` shows them and keeps them out of its verdict.
//! - Whatever cannot be read is missing with the reason, never 0; a case
//!   whose others could not be measured is not called busy.

use std::collections::HashMap;
use std::fs;
use std::time::Instant;

use super::blockstat::{BlockDevice, BlockStat, SECTOR_BYTES};
use super::{Probe, ProbeCtx, Reading, Running};
use crate::record::busy::Others;
use crate::record::{Better, FigureSpec, Kind};
use crate::sys::rusage::{Who, cpu_times};

/// The figures, declared once.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("host_others_cores", "cores", Better::Lower, Kind::Timing).heading("others cores").about(
        "CPU other processes used while the case ran, in cores busy on average: /proc/stat's busy time less \
         fslab's own, its children's and kernel threads'",
    ),
    FigureSpec::new("host_busy_cores", "cores", Better::Lower, Kind::Timing).heading("busy cores").about(
        "CPU the whole machine used while the case ran, in cores busy on average (/proc/stat: all but idle and \
         iowait; the case's own included)",
    ),
    FigureSpec::new("host_kernel_cores", "cores", Better::Lower, Kind::Timing).heading("kthread cores").about(
        "CPU kernel threads used while the case ran (writeback, the loop device's worker, file-system workers: \
         mostly the case's, not counted as others')",
    ),
    FigureSpec::new("host_load1_start", "load", Better::Lower, Kind::Timing)
        .heading("load1 start")
        .about("the machine's 1-minute load average when the case's work started"),
    FigureSpec::new("host_load1_end", "load", Better::Lower, Kind::Timing)
        .heading("load1 end")
        .about("the machine's 1-minute load average when the case's work and sync ended"),
    FigureSpec::new("host_others_read_bytes", "bytes", Better::Lower, Kind::Timing)
        .heading("others MiB rd")
        .about("bytes read from the disk under the target by others than the target while the case ran"),
    FigureSpec::new("host_others_written_bytes", "bytes", Better::Lower, Kind::Timing)
        .heading("others MiB wr")
        .about("bytes written to the disk under the target by others than the target while the case ran"),
];

/// `PF_KTHREAD` in `/proc/PID/stat`'s flags: a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The probe: the rest of the machine around the work and its sync.
#[derive(Debug)]
pub struct HostLoad;

impl Probe for HostLoad {
    fn name(&self) -> &'static str {
        "load"
    }

    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }

    fn start<'a>(&self, ctx: &ProbeCtx<'a>) -> Box<dyn Running + 'a> {
        let disks = Disks::of(ctx.scratch, ctx.backing);
        let disks_before = read_disks(&disks);
        Box::new(Started { disks, disks_before, cpu: CpuSnapshot::now(), load1: load1() })
    }
}

/// The two devices whose difference is others' I/O, or why there is none.
struct Disks {
    target: BlockDevice,
    disk: BlockDevice,
}

impl Disks {
    fn of(scratch: Option<&BlockDevice>, backing: Option<&BlockDevice>) -> Result<Disks, String> {
        let Some(disk) = backing else { return Err("the target is on no disk fslab can count".into()) };
        let Some(target) = scratch else { return Err("the target has no block device of its own to subtract".into()) };
        if target == disk {
            return Err(format!("the target's device is the whole disk {}: others' I/O on it is not told apart", disk.name));
        }
        Ok(Disks { target: target.clone(), disk: disk.clone() })
    }

    /// Both devices' counters now.
    fn read(&self) -> Result<[BlockStat; 2], String> {
        let read = |d: &BlockDevice| d.read().map_err(|e| format!("cannot read the block counters of {}: {e}", d.name));
        Ok([read(&self.target)?, read(&self.disk)?])
    }
}

/// Both devices' counters now, or why there are none.
fn read_disks(disks: &Result<Disks, String>) -> Result<[BlockStat; 2], String> {
    disks.as_ref().map_err(Clone::clone).and_then(Disks::read)
}

/// The machine's and the case's CPU time at one moment, in seconds.
#[derive(Debug, Clone)]
struct CpuSnapshot {
    at: Instant,
    /// `/proc/stat`'s busy time, or why it could not be read.
    busy_s: Result<f64, String>,
    /// Each kernel thread's CPU seconds by pid, or why /proc could not be
    /// listed.
    kernel: Result<HashMap<u32, f64>, String>,
    /// This process's and its waited-for children's CPU seconds.
    own_s: f64,
}

impl CpuSnapshot {
    fn now() -> CpuSnapshot {
        let own_s = [Who::SelfProcess, Who::Children]
            .into_iter()
            .map(|who| cpu_times(who).map_or(0.0, |t| t.user_s + t.sys_s))
            .sum();
        let busy_s = fs::read_to_string("/proc/stat")
            .map_err(|e| format!("cannot read /proc/stat: {e}"))
            .and_then(|text| machine_busy_ticks(&text).ok_or_else(|| "/proc/stat has no `cpu` line as expected".to_string()))
            .map(|ticks| ticks as f64 / ticks_per_second());
        CpuSnapshot { at: Instant::now(), busy_s, kernel: kernel_threads(), own_s }
    }

    /// How the CPU was used between `self` and `later`.
    fn since(&self, later: &CpuSnapshot) -> Result<CpuUse, String> {
        let busy_s = later.busy_s.clone()? - self.busy_s.clone()?;
        let (before, after) = (self.kernel.as_ref().map_err(Clone::clone)?, later.kernel.as_ref().map_err(Clone::clone)?);
        // A kernel thread started in the window ran only in it.
        let kernel_s: f64 = after.iter().map(|(pid, s)| (s - before.get(pid).copied().unwrap_or(0.0)).max(0.0)).sum();
        // Clamped at 0: the counters' rounding can take a quiet window
        // below it.
        let others_s = (busy_s - kernel_s - (later.own_s - self.own_s)).max(0.0);
        Ok(CpuUse { busy_s, kernel_s, others_s })
    }
}

/// CPU seconds used in a window.
#[derive(Debug, Clone, Copy)]
struct CpuUse {
    /// By the whole machine.
    busy_s: f64,
    /// By kernel threads.
    kernel_s: f64,
    /// By others than the case and kernel threads.
    others_s: f64,
}

/// `/proc/stat`'s clock ticks (`USER_HZ`) per second.
fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

/// The machine's busy time in clock ticks from `/proc/stat`'s first line:
/// user, nice, system, irq, softirq and steal (guest time is inside user
/// and nice already; idle and iowait are not busy).
fn machine_busy_ticks(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().ok()?;
    // user nice system idle iowait irq softirq steal (steal from 2.6.11).
    let field = |i: usize| v.get(i).copied().unwrap_or(0);
    (v.len() >= 4).then(|| field(0) + field(1) + field(2) + field(5) + field(6) + field(7))
}

/// Every kernel thread's CPU seconds (utime + stime) by pid.
fn kernel_threads() -> Result<HashMap<u32, f64>, String> {
    let hz = ticks_per_second();
    let dir = fs::read_dir("/proc").map_err(|e| format!("cannot list /proc: {e}"))?;
    let mut threads = HashMap::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        // A process may end between listing and reading: it is not there.
        let Ok(text) = fs::read_to_string(entry.path().join("stat")) else { continue };
        if let Some(ticks) = kernel_thread_ticks(&text) {
            threads.insert(pid, ticks as f64 / hz);
        }
    }
    Ok(threads)
}

/// A `/proc/PID/stat` line's utime + stime in ticks, when it is a kernel
/// thread's. The name in parentheses may hold spaces and parentheses, so
/// fields are counted after the last `)`.
fn kernel_thread_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ppid pgrp session tty_nr tpgid flags(9) ...
    // utime(14) stime(15), numbered as proc(5) does.
    let number = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
    let flags = number(6)?;
    (flags & PF_KTHREAD != 0).then(|| Some(number(11)? + number(12)?)).flatten()
}

/// The 1-minute load average now.
fn load1() -> Result<f64, String> {
    let text = fs::read_to_string("/proc/loadavg").map_err(|e| format!("cannot read /proc/loadavg: {e}"))?;
    text.split_whitespace().next().and_then(|w| w.parse().ok()).ok_or_else(|| format!("/proc/loadavg: unexpected {text:?}"))
}

/// What was read when the probe started.
struct Started {
    disks: Result<Disks, String>,
    disks_before: Result<[BlockStat; 2], String>,
    cpu: CpuSnapshot,
    load1: Result<f64, String>,
}

/// Others' bytes read and written: the disk's less the target's.
fn others_io(before: &[BlockStat; 2], after: &[BlockStat; 2]) -> (u64, u64) {
    let (target, disk) = (after[0].since(&before[0]), after[1].since(&before[1]));
    let less = |all: u64, own: u64| all.saturating_sub(own) * SECTOR_BYTES;
    (less(disk.read_sectors, target.read_sectors), less(disk.write_sectors, target.write_sectors))
}

impl Running for Started {
    fn stop(self: Box<Self>) -> Reading {
        let Started { disks, disks_before, cpu: cpu_before, load1: load_start } = *self;
        let cpu_after = CpuSnapshot::now();
        let load_end = load1();
        let disks_after = read_disks(&disks);
        let window_s = cpu_after.at.duration_since(cpu_before.at).as_secs_f64();
        let cpu = cpu_before.since(&cpu_after);
        let io = match (disks_before, disks_after) {
            (Ok(before), Ok(after)) => Ok(others_io(&before, &after)),
            (Err(why), _) | (_, Err(why)) => Err(why),
        };
        let others = Others {
            window_s,
            cpu_s: cpu.as_ref().ok().map(|c| c.others_s),
            disk_bytes: io.as_ref().ok().map(|(r, w)| r + w),
            load1: load_start.as_ref().ok().copied().zip(load_end.as_ref().ok().copied()),
        };
        let mut reading = Reading { busy: others.busy_note(), ..Reading::default() };
        let cores = |of: fn(&CpuUse) -> f64| match &cpu {
            Ok(_) if window_s <= 0.0 => Err("the case's window took no time".to_string()),
            Ok(c) => Ok(of(c) / window_s),
            Err(why) => Err(why.clone()),
        };
        let read = |r: Result<u64, String>| r.map(|n| n as f64);
        let values = [
            cores(|c| c.others_s),
            cores(|c| c.busy_s),
            cores(|c| c.kernel_s),
            load_start,
            load_end,
            read(io.clone().map(|(r, _)| r)),
            read(io.map(|(_, w)| w)),
        ];
        for (spec, value) in FIGURES.iter().zip(values) {
            let why = value.as_ref().err().cloned().unwrap_or_default();
            reading.figures.put(spec, value.ok(), &why);
        }
        reading
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_every_field_but_idle_and_iowait() {
        let stat = "cpu  100 2 30 5000 400 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1\n";
        assert_eq!(machine_busy_ticks(stat), Some(100 + 2 + 30 + 6 + 7 + 8));
        // An old kernel's four fields, and nonsense.
        assert_eq!(machine_busy_ticks("cpu  1 2 3 4\n"), Some(6));
        assert_eq!(machine_busy_ticks("cpu0 1 2 3 4\n"), None);
        assert_eq!(machine_busy_ticks("cpu  1 x 3 4\n"), None);
    }

    #[test]
    fn kernel_threads_are_told_by_their_flags_and_odd_names_parse() {
        let kworker = "57 (kworker/1:1-events) I 2 0 0 0 -1 69238880 0 0 0 0 12 345 0 0 20 0 1 0 90 0 0";
        assert_eq!(kernel_thread_ticks(kworker), Some(357));
        let user = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 10 0 0 0 50 7 0 0 20 0 1 0 100 0 0";
        assert_eq!(kernel_thread_ticks(user), None);
        assert_eq!(kernel_thread_ticks("garbage"), None);
        // This machine has kernel threads (kthreadd at least), and fslab is
        // not one.
        let threads = kernel_threads().unwrap();
        assert!(!threads.is_empty());
        assert!(!threads.contains_key(&std::process::id()));
    }

    #[test]
    fn others_io_is_the_disks_less_the_targets() {
        let stat = |r: u64, w: u64| BlockStat { read_sectors: r, write_sectors: w, ..BlockStat::default() };
        let before = [stat(0, 0), stat(100, 100)];
        let after = [stat(10, 2048), stat(120, 2148 + 4096)];
        assert_eq!(others_io(&before, &after), (10 * 512, 4096 * 512));
        // The target's reads served without the disk (a cache): none by others.
        assert_eq!(others_io(&before, &[stat(50, 0), stat(110, 100)]), (0, 0));
    }

    #[test]
    fn without_devices_the_disk_figures_say_why() {
        let dev = BlockDevice { name: "vda".into(), major: 254, minor: 0 };
        assert!(Disks::of(None, None).err().unwrap().contains("no disk"));
        assert!(Disks::of(None, Some(&dev)).err().unwrap().contains("no block device of its own"));
        assert!(Disks::of(Some(&dev), Some(&dev)).err().unwrap().contains("whole disk vda"));
    }

    #[test]
    fn what_cannot_be_read_is_missing_with_its_reason_and_not_busy() {
        let mut cpu = CpuSnapshot::now();
        cpu.busy_s = Err("cannot read /proc/stat: permission denied".into());
        let started = Started {
            disks: Err("the target is on no disk fslab can count".into()),
            disks_before: Err("the target is on no disk fslab can count".into()),
            cpu,
            load1: Err("cannot read /proc/loadavg: gone".into()),
        };
        let reading = Box::new(started).stop();
        assert_eq!(reading.busy, None);
        let f = &reading.figures;
        let names: Vec<&str> = f.iter().map(|(n, _)| n).collect();
        assert_eq!(names, FIGURES.iter().map(|s| s.name).collect::<Vec<_>>());
        let why = |name: &str| f.get(name).and_then(|g| g.missing.clone()).unwrap_or_default();
        assert_eq!(f.value("host_others_cores"), None);
        assert_eq!(why("host_others_cores"), "cannot read /proc/stat: permission denied");
        assert_eq!(why("host_load1_start"), "cannot read /proc/loadavg: gone");
        assert_eq!(f.value("host_others_written_bytes"), None);
        assert_eq!(why("host_others_read_bytes"), "the target is on no disk fslab can count");
        // What could be read is there: the load at the end.
        assert!(f.value("host_load1_end").is_some());
    }

    #[test]
    fn a_child_burning_cpu_is_the_cases_own_not_others() {
        // Others' CPU is measured around a child that burns ~0.3 s; on a
        // loaded machine others are not zero, so the check is that the
        // child's time was taken out: others stay below the machine's busy
        // time less the child's.
        let before = CpuSnapshot::now();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let after = CpuSnapshot::now();
        let own = after.own_s - before.own_s;
        let busy = after.busy_s.clone().unwrap() - before.busy_s.clone().unwrap();
        let others = before.since(&after).unwrap().others_s;
        assert!(own > 0.1, "the child's {own} s of CPU count as the case's");
        // 0.06 s: what /proc/stat's rounding can add.
        assert!(others <= (busy - own).max(0.0) + 0.06, "others {others} s, busy {busy} s, own {own} s");
    }
}
