//! When a case counts as measured on a busy machine: the rule, in numbers
//! and in words, shared by the probe that measures the others' share
//! (`probe::load`), the tables that footnote it and `compare`'s notes.
//!
//! The design decision: the verdict is made once, when the case is
//! measured, and kept as a note on the case ([`Case::busy`](super::Case));
//! readers print the note and the rule, they never judge again. Like
//! hyperfine's warning about outliers, it never fails a run: it says which
//! timings to trust less.

use super::Case;
use crate::units::mib_per_s;

/// Others' CPU, in cores busy on average over the case's window, from
/// which the case is busy.
pub const BUSY_CORES: f64 = 0.5;

/// Others' I/O on the disk under the target (read and written, MiB/s
/// averaged over the window), from which the case is busy.
pub const BUSY_DISK_MIBPS: f64 = 10.0;

/// The least I/O by others that can make a case busy, whatever the
/// window: one journal commit of the host's file system in a short window
/// is a high rate, not a busy disk.
pub const BUSY_DISK_MIN_BYTES: u64 = 8 << 20;

/// What `/proc/stat` can blur in one window (its busy fields are printed
/// in 10 ms ticks, six of them summed, twice): others' CPU time must
/// exceed the threshold by this much before a case is called busy, so a
/// 50 ms command is not flagged on a rounding.
pub const CPU_RESOLUTION_S: f64 = 0.05;

/// The rule in words, as footnotes and `compare` say it.
pub const BUSY_RULE: &str = "other processes used ≥ 0.5 cores or moved ≥ 10 MiB/s on the disk under the target";

/// What everything but the case did during its window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Others {
    /// The window's length, seconds.
    pub window_s: f64,
    /// CPU seconds others used in it, when measured.
    pub cpu_s: Option<f64>,
    /// Bytes others read from and wrote to the disk under the target,
    /// when measured.
    pub disk_bytes: Option<u64>,
    /// The 1-minute load average at the window's start and end, when read.
    pub load1: Option<(f64, f64)>,
}

/// How many busy cases a footnote names before it counts the rest.
const NAMED: usize = 8;

/// The busy cases among `cases`, and how many cases there are.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BusyCases {
    /// Every case counted.
    pub cases: usize,
    /// The busy ones, named as [`names`] names them.
    pub busy: Vec<String>,
}

impl BusyCases {
    /// The busy cases among `cases`.
    pub fn of(cases: &[&Case]) -> BusyCases {
        BusyCases { cases: cases.len(), busy: names(cases) }
    }

    /// `2 of 6 cases ran while other processes used ≥ 0.5 cores or ...:
    /// xfs r2, ext4 r1`; `None` when none was busy.
    pub fn sentence(&self) -> Option<String> {
        let counted = if self.cases == 1 { "The case".to_string() } else { self.count()? };
        Some(format!("{counted} ran while {BUSY_RULE}: {}", self.listed()?))
    }

    /// `2 of 6 cases`; `None` when none was busy.
    pub fn count(&self) -> Option<String> {
        let n = self.busy.len();
        let noun = if self.cases == 1 { "case" } else { "cases" };
        (n > 0).then(|| format!("{n} of {} {noun}", self.cases))
    }

    /// The busy cases' names, the first [`NAMED`] of them and how many
    /// more: `xfs r2, ext4 r1`; `None` when none was busy.
    pub fn listed(&self) -> Option<String> {
        let n = self.busy.len();
        let mut named: Vec<String> = self.busy.iter().take(NAMED).cloned().collect();
        if n > NAMED {
            named.push(format!("and {} more", n - NAMED));
        }
        (n > 0).then(|| named.join(", "))
    }

    /// The footnote a table of these cases prints once: the sentence and
    /// what it means.
    pub fn footnote(&self) -> Option<String> {
        self.sentence().map(|s| format!("{s} — timings there are less reliable."))
    }
}

/// The busy cases among `cases`, each as its place and repeat (`xfs r2`),
/// after its scenario when `cases` are of more than one (`mmap-fill xfs
/// r2`) and with the parameters that tell it from its scenario's other
/// cases (`replace-files ext4 files=1000 r1`).
pub fn names(cases: &[&Case]) -> Vec<String> {
    let many = cases.iter().any(|c| c.scenario != cases[0].scenario);
    let mut out: Vec<String> = Vec::new();
    for case in cases.iter().filter(|c| c.busy.is_some()) {
        let mut name = if many { format!("{} {}", case.scenario, case.place()) } else { case.place() };
        for (key, value) in &case.params {
            let varies = cases.iter().any(|o| o.scenario == case.scenario && o.params.get(key) != Some(value));
            if varies {
                let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
                name.push_str(&format!(" {key}={value}"));
            }
        }
        name.push_str(&format!(" r{}", case.repeat));
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

impl Others {
    /// Others' CPU in cores busy on average.
    pub fn cores(&self) -> Option<f64> {
        self.cpu_s.filter(|_| self.window_s > 0.0).map(|s| s / self.window_s)
    }

    /// Others' disk I/O in MiB/s.
    pub fn disk_mibps(&self) -> Option<f64> {
        self.disk_bytes.and_then(|b| mib_per_s(b as f64, self.window_s))
    }

    /// The case's busy note (`others used 1.4 cores on average (load 7.4 →
    /// 7.9)`), or `None` when others stayed under both thresholds (or
    /// could not be measured: an unknown is not called busy).
    pub fn busy_note(&self) -> Option<String> {
        let mut said = Vec::new();
        let cpu = self.cpu_s.zip(self.cores());
        if let Some((_, cores)) = cpu.filter(|&(s, _)| s >= BUSY_CORES * self.window_s + CPU_RESOLUTION_S) {
            let load = self.load1.map(|(a, b)| format!(" (load {a:.1} → {b:.1})")).unwrap_or_default();
            said.push(format!("others used {cores:.1} cores on average{load}"));
        }
        let disk = self.disk_bytes.zip(self.disk_mibps());
        if let Some((_, rate)) = disk.filter(|&(b, r)| b >= BUSY_DISK_MIN_BYTES && r >= BUSY_DISK_MIBPS) {
            said.push(format!("others moved {rate:.1} MiB/s on the disk under the target"));
        }
        (!said.is_empty()).then(|| said.join("; "))
    }
}

/// Whether a case's busy values decide beside its quiet ones: when they
/// are the greater number (a machine busy most of the time leaves too few
/// quiet values to test, and its busy ones are as good as any it gives);
/// otherwise the quiet ones decide alone.
pub fn busy_ones_decide(quiet: usize, busy: usize) -> bool {
    quiet < busy
}

#[cfg(test)]
mod tests {
    use super::*;

    fn others(window_s: f64, cpu_s: Option<f64>, disk_bytes: Option<u64>) -> Others {
        Others { window_s, cpu_s, disk_bytes, load1: Some((1.0, 2.31)) }
    }

    #[test]
    fn busy_from_either_threshold_with_the_numbers_said() {
        assert_eq!(others(2.0, Some(0.5), Some(0)).busy_note(), None);
        let cpu = others(2.0, Some(2.0), Some(0)).busy_note().unwrap();
        assert_eq!(cpu, "others used 1.0 cores on average (load 1.0 → 2.3)");
        let disk = others(2.0, Some(0.0), Some(40 << 20)).busy_note().unwrap();
        assert_eq!(disk, "others moved 20.0 MiB/s on the disk under the target");
        let both = others(2.0, Some(2.0), Some(40 << 20)).busy_note().unwrap();
        assert!(both.contains("cores") && both.contains("; others moved"), "{both}");
    }

    #[test]
    fn the_footnote_names_the_busy_cases_once() {
        let mut cases = Vec::new();
        for (fs, repeat, busy) in [("ext4", 1, true), ("xfs", 1, false), ("xfs", 2, true), ("btrfs", 1, false)] {
            let mut c = Case::new("mmap-fill", fs, serde_json::Map::new(), repeat);
            c.busy = busy.then(|| "others used 1.0 cores on average".to_string());
            cases.push(c);
        }
        let refs: Vec<&Case> = cases.iter().collect();
        let b = BusyCases::of(&refs);
        assert_eq!(b.busy, ["ext4 r1", "xfs r2"]);
        assert_eq!(
            b.footnote().unwrap(),
            format!("2 of 4 cases ran while {BUSY_RULE}: ext4 r1, xfs r2 — timings there are less reliable.")
        );
        // Of several scenarios and parameter sets: each named apart.
        let mut other = Case::new("replace-files", "ext4", serde_json::Map::new(), 1);
        other.params.insert("files".into(), 1000.into());
        other.busy = Some("x".into());
        let mut sibling = other.clone();
        sibling.params.insert("files".into(), 10.into());
        sibling.busy = None;
        let refs = [&cases[0], &other, &sibling];
        assert_eq!(names(&refs), ["mmap-fill ext4 r1", "replace-files ext4 files=1000 r1"]);
        let quiet: Vec<&Case> = cases.iter().filter(|c| c.busy.is_none()).collect();
        assert_eq!(BusyCases::of(&quiet).footnote(), None);
    }

    #[test]
    fn short_windows_and_unknowns_are_not_called_busy() {
        // 0.6 cores over 50 ms is 30 ms: within what /proc/stat blurs.
        assert_eq!(others(0.05, Some(0.03), None).busy_note(), None);
        // 4 MiB in 0.1 s is 40 MiB/s, but one host journal commit's worth.
        assert_eq!(others(0.1, None, Some(4 << 20)).busy_note(), None);
        assert_eq!(others(1.0, None, None).busy_note(), None);
        assert_eq!(others(0.0, Some(1.0), Some(1 << 30)).busy_note(), None);
        assert_eq!(others(0.0, Some(1.0), None).cores(), None);
    }
}
