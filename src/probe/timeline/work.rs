//! The work's own series in the timeline, beside the machine's: the CPU
//! of the thread that does the work and of the processes it starts, and
//! the page cache its memory cgroup holds (under `--memory`).
//!
//! The design decision: the work's CPU is what the CPU probe counts for
//! `user_s` and `sys_s` — the working thread and this process's
//! waited-for children — plus the processes still running under it
//! (mmap-fill's storing child, a command and its own children), read from
//! `/proc` each sample, so a child's time shows in the interval it was
//! spent rather than all at once when it is waited for. The machine-wide
//! split counts every other user of the CPUs too, the sampler itself
//! included; this one does not.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::ledger::cgroup::{CgroupAt, CgroupVersion};

/// Where the work's own readings come from.
#[derive(Debug, Clone)]
pub(super) struct WorkSource {
    /// `/proc/self/task/TID/stat` of the working thread.
    thread_stat: PathBuf,
    /// This process's id: the root of the work's processes.
    pid: u32,
    /// The memory cgroup's `memory.stat` and the names of its dirty and
    /// writeback counters, under `--memory`.
    cgroup: Option<(PathBuf, [&'static str; 2])>,
    /// Every process `/proc` listed at the last sample, with its parent:
    /// each is read once, when first seen, so a sample reads the listing
    /// and the work's own processes only.
    parents: HashMap<u32, u32>,
}

/// One reading of the work's own counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct WorkSample {
    /// User and system CPU ticks (USER_HZ) so far, when readable.
    pub(super) cpu: Option<(u64, u64)>,
    /// The cgroup's dirty and writeback bytes now, when it has one.
    pub(super) cache: Option<(u64, u64)>,
}

impl WorkSource {
    /// The work done by the calling thread (probes start on it) and the
    /// processes it starts, in `cgroup` when it has one.
    pub(super) fn this_thread(cgroup: Option<CgroupAt<'_>>) -> WorkSource {
        let tid = rustix::thread::gettid().as_raw_nonzero().get();
        WorkSource {
            thread_stat: PathBuf::from(format!("/proc/self/task/{tid}/stat")),
            pid: std::process::id(),
            cgroup: cgroup.map(|c| {
                let keys = match c.version {
                    CgroupVersion::V1 => ["dirty", "writeback"],
                    CgroupVersion::V2 => ["file_dirty", "file_writeback"],
                };
                (c.path.join("memory.stat"), keys)
            }),
            parents: HashMap::new(),
        }
    }

    /// Read the counters now; a part that cannot be read is `None`.
    pub(super) fn sample(&mut self) -> WorkSample {
        WorkSample { cpu: self.cpu(), cache: self.cache() }
    }

    /// The thread's ticks, the waited-for children's, and every live
    /// process descending from this one (with what each waited for).
    fn cpu(&mut self) -> Option<(u64, u64)> {
        let thread = ProcStat::parse(&std::fs::read_to_string(&self.thread_stat).ok()?)?;
        let process = ProcStat::parse(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
        let (mut user, mut system) = (thread.user + process.children_user, thread.system + process.children_system);
        self.list();
        for pid in descendants(&self.parents, self.pid) {
            // One that ended since the listing is counted by its parent's
            // waited-for time once reaped.
            if let Some(child) = read_stat(pid) {
                user += child.user + child.children_user;
                system += child.system + child.children_system;
            }
        }
        Some((user, system))
    }

    /// Bring [`WorkSource::parents`] up to date with `/proc`'s listing.
    fn list(&mut self) {
        let Ok(entries) = std::fs::read_dir("/proc") else { return };
        let listed: HashSet<u32> = entries.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
        self.parents.retain(|pid, _| listed.contains(pid));
        for pid in listed {
            if let std::collections::hash_map::Entry::Vacant(entry) = self.parents.entry(pid) {
                if let Some(stat) = read_stat(pid) {
                    entry.insert(stat.ppid);
                }
            }
        }
    }

    fn cache(&self) -> Option<(u64, u64)> {
        let (path, [dirty, writeback]) = self.cgroup.as_ref()?;
        let stat = std::fs::read_to_string(path).ok()?;
        let counter = |name: &str| stat.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok());
        Some((counter(dirty)?, counter(writeback)?))
    }
}

/// The fields of `/proc/PID/stat` (proc(5)) the work's CPU needs, in
/// clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcStat {
    ppid: u32,
    user: u64,
    system: u64,
    /// Waited-for children's user and system time.
    children_user: u64,
    children_system: u64,
}

impl ProcStat {
    /// Parse a stat line; the command name (field 2) may hold spaces and
    /// parentheses, so fields are counted from its last `)`.
    fn parse(text: &str) -> Option<ProcStat> {
        let rest = &text[text.rfind(')')? + 1..];
        // Field 3 (state) is the first after the name.
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
        Some(ProcStat {
            ppid: u32::try_from(field(4)?).ok()?,
            user: field(14)?,
            system: field(15)?,
            children_user: field(16)?,
            children_system: field(17)?,
        })
    }
}

/// `/proc/PID/stat`, read and parsed; `None` once the process is gone.
fn read_stat(pid: u32) -> Option<ProcStat> {
    ProcStat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The processes descending from `root` (not `root` itself), by
/// `parents` (pid to parent).
fn descendants(parents: &HashMap<u32, u32>, root: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(parent) = next.pop() {
        for (&pid, _) in parents.iter().filter(|(_, ppid)| **ppid == parent) {
            if !found.contains(&pid) && pid != root {
                found.push(pid);
                next.push(pid);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_names_end() {
        let line = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 31 7 3 20 0 1 0 5 0 0\n";
        let stat = ProcStat::parse(line).unwrap();
        assert_eq!(stat, ProcStat { ppid: 17, user: 250, system: 31, children_user: 7, children_system: 3 });
        assert_eq!(ProcStat::parse("4242 (x) S 17"), None);
    }

    #[test]
    fn descendants_are_found_through_every_generation() {
        let parents: HashMap<u32, u32> = [(10, 1), (11, 10), (12, 11), (13, 1), (14, 99)].into_iter().collect();
        let mut found = descendants(&parents, 10);
        found.sort_unstable();
        assert_eq!(found, [11, 12]);
        assert!(descendants(&parents, 12).is_empty());
    }

    #[test]
    fn a_childs_cpu_counts_while_it_runs() {
        let mut source = WorkSource::this_thread(None);
        let before = source.sample().cpu.expect("this thread's stat");
        let mut child = std::process::Command::new("sh").args(["-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; sleep 5"]).spawn().unwrap();
        // The shell's loop takes some tenths of a second, then it sleeps.
        let mut during = before;
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            during = source.sample().cpu.unwrap();
            if during.0 > before.0 + 10 {
                break;
            }
        }
        // Only the process this test started, by its handle.
        let _ = child.kill();
        let _ = child.wait();
        assert!(during.0 >= before.0 + 10, "the running child's user ticks are counted: {before:?} -> {during:?}");
        assert_eq!(source.sample().cache, None, "no cgroup, no cache figures");
    }
}
