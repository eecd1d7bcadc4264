//! What the figures and scenarios are, as data: each figure declared once
//! (name, unit, direction, kind, column heading, meaning) where it is
//! measured, and gathered here for whoever prints results.
//!
//! The design decision: readers of results (tables, CSV, `compare`,
//! `report`) get a [`Catalog`] handed to them instead of reaching into the
//! scenario and probe registries, so they never depend on the code that
//! measures. The CLI builds the catalog once from the registries.

use super::figures::{Better, Kind};

/// One figure's declaration: everything about it but its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FigureSpec {
    /// The name in JSON, the store and `--set` lists (`journal_commits`).
    pub name: &'static str,
    /// The base unit, one of [`UNITS`].
    pub unit: &'static str,
    /// Which direction is an improvement.
    pub better: Better,
    /// Exact (repeats on a rerun) or timing.
    pub kind: Kind,
    /// A short column heading (`commits`); the name when empty.
    pub heading: &'static str,
    /// What it means, in a sentence (`fslab list`, report captions).
    pub about: &'static str,
}

impl FigureSpec {
    /// A figure of `name` with no heading or meaning of its own yet.
    pub const fn new(name: &'static str, unit: &'static str, better: Better, kind: Kind) -> FigureSpec {
        FigureSpec { name, unit, better, kind, heading: "", about: "" }
    }

    /// The same figure with a short column heading.
    pub const fn heading(mut self, heading: &'static str) -> FigureSpec {
        self.heading = heading;
        self
    }

    /// The same figure with its meaning.
    pub const fn about(mut self, about: &'static str) -> FigureSpec {
        self.about = about;
        self
    }

    /// The same figure as one case measured it, when that case decides its
    /// kind (layout figures are exact where the work allocated every
    /// block itself, timings where writeback did).
    pub const fn with_kind(mut self, kind: Kind) -> FigureSpec {
        self.kind = kind;
        self
    }
}

/// Every unit a figure may carry: one convention, binary, for sizes and
/// rates (docs/guide.md, "Units"): sizes in `bytes` (printed in KiB, MiB,
/// GiB), rates in `MiB/s` (2^20 bytes a second); fio's own bandwidth
/// stays in `bytes/s` as fio prints it, so it equals fio's `bw_bytes`.
/// Times in `s` (`ms` and `us` where the kernel or the figure counts
/// so); `count`s, `IO/s`, `I/Os per MiB`, `ratio`s, `%` and exit `status`;
/// the machine's load in `cores` busy on average and its `load` average.
pub const UNITS: &[&str] = &["s", "ms", "us", "bytes", "MiB/s", "bytes/s", "IO/s", "I/Os per MiB", "count", "ratio", "%", "status", "cores", "load"];

/// Figures every scenario's table shows after its headline figures, while
/// they fit the table's width: first the memory cgroup's (only a case
/// that ran under a limit has them; they say why its layout changed),
/// then what the work wrote and left. A figure with a deferred twin shown
/// in tables ([`DEFERRED_TWINS`]) has it right after it.
pub const TABLE_COMMON: &[&str] = &[
    "memory_peak_bytes",
    "memory_limit_hits",
    "memory_scanned_pages",
    "memory_reclaimed_pages",
    "memory_dirty_bytes",
    "memory_writeback_bytes",
    "written_bytes",
    "flushes",
    "journal_commits",
    "files",
    "extents",
    "perfection",
    "layout_score",
];

/// The columns of a command's (`exec`) table, most important first (the
/// table shows them while they fit; the memory cgroup's only when the
/// command ran under a limit): a command has no headline of its own.
pub const EXEC_TABLE: &[&str] = &[
    "wall_s",
    "user_s",
    "sys_s",
    "memory_peak_bytes",
    "memory_limit_hits",
    "work_mbps",
    "written_bytes",
    "write_ios",
    "flushes",
    "journal_commits",
    "extents",
    "perfection",
    "layout_score",
    "cold_read_mbps",
    "cold_read_ios_per_mib",
    "read_ios",
    "files",
    "seeks",
    "work_written_bytes",
    "work_write_ios",
    "exit_status",
];

/// A window figure and its deferred twin: what the same counter counted
/// after the work and its syncfs, up to and including the unmount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeferredTwin {
    /// The window's figure (`journal_commits`).
    pub window: &'static str,
    /// What the window left for later (`deferred_journal_commits`).
    pub deferred: &'static str,
    /// Their sum, as `compare` judges it (`total_journal_commits`).
    pub total: &'static str,
    /// Whether tables show the twin right after the window's figure.
    pub in_tables: bool,
}

/// Every window figure with a deferred twin.
pub const DEFERRED_TWINS: &[DeferredTwin] = &[
    DeferredTwin { window: "written_bytes", deferred: "deferred_written_bytes", total: "total_written_bytes", in_tables: true },
    DeferredTwin { window: "write_ios", deferred: "deferred_write_ios", total: "total_write_ios", in_tables: false },
    DeferredTwin { window: "flushes", deferred: "deferred_flushes", total: "total_flushes", in_tables: false },
    DeferredTwin {
        window: "journal_commits",
        deferred: "deferred_journal_commits",
        total: "total_journal_commits",
        in_tables: true,
    },
];

/// Figures the report charts for every scenario after its headline ones:
/// fewer than a table shows, since each is a chart of its own.
pub const CHART_COMMON: &[&str] = &["extents", "journal_commits", "wall_s"];

/// Figures the report draws as a mark on another figure's bars, never as
/// a chart of their own, as `(mark, on)`: perfection is a reference for
/// extents (the fewest the file could have), not a measurement to compare.
pub const CHART_MARKS: &[(&str, &str)] = &[("perfection", "extents")];

/// What the report charts for a command's cases.
pub const EXEC_CHART: &[&str] = &["wall_s", "user_s", "sys_s", "extents", "journal_commits"];

/// One scenario as readers of results need it.
#[derive(Debug, Clone)]
pub struct ScenarioInfo {
    /// Its name (`mmap-fill`).
    pub name: &'static str,
    /// The seed report it reproduces (`000`), if it has one.
    pub seed: Option<&'static str>,
    /// One line on what it shows.
    pub about: &'static str,
    /// Its parameters' names, in order.
    pub params: Vec<&'static str>,
    /// The figures its table shows first (the ones the seed printed).
    pub headline: &'static [&'static str],
    /// The figures the seed's author printed (`Seeded::printed`): what the
    /// report charts first. Empty for a scenario with no seed.
    pub printed: &'static [&'static str],
    /// The figures it measures beyond the probes'.
    pub figures: &'static [FigureSpec],
}

/// Every scenario and every declared figure, in registry order.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The scenarios, in seed order.
    pub scenarios: Vec<ScenarioInfo>,
    /// Every figure: the probes', the layout's, then each scenario's.
    pub figures: Vec<FigureSpec>,
}

impl Catalog {
    /// The scenario called `name`, if this fslab knows it.
    pub fn scenario(&self, name: &str) -> Option<&ScenarioInfo> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    /// The declaration of figure `name`, if any.
    pub fn figure(&self, name: &str) -> Option<&FigureSpec> {
        self.figures.iter().find(|f| f.name == name)
    }

    /// A column heading for `name`: its declared heading, else the name.
    pub fn heading<'a>(&'a self, name: &'a str) -> &'a str {
        self.figure(name).map(|f| f.heading).filter(|h| !h.is_empty()).unwrap_or(name)
    }

    /// What `name` means, when it was declared with a meaning.
    pub fn about(&self, name: &str) -> Option<&'static str> {
        self.figure(name).map(|f| f.about).filter(|a| !a.is_empty())
    }
}
