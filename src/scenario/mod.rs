//! Scenarios: each seed report as a reproducible workload, one file each
//! behind [`Scenario`], listed once in [`SCENARIOS`]; no scenario knows
//! another. `fslab exec`'s command is work of the same shape
//! ([`exec::CommandWork`]).
//!
//! The design decision: a scenario only says what its parameters are and
//! what work one set of values makes; where the work runs and how it is
//! measured belong to the harness. What a seed claimed, and the comparison
//! that shows it (`--preset seeds`), is a second trait, [`Seeded`], so a
//! scenario with no seed behind it needs none of that. `skeleton.rs` is
//! the template for a new one: one file plus one line in [`SCENARIOS`].

mod create_file;
mod direct_stream;
pub mod durable;
pub mod exec;
mod mmap_fill;
pub mod params;
mod programs;
mod replace_files;
pub mod seeds;
#[cfg(test)]
pub mod skeleton;
pub mod tree_copy;
mod words;

use std::path::Path;

pub use seeds::{Preset, PresetCondition, Variant};
pub use words::WorkWords;

use crate::error::{Error, Result};
use crate::probe::cold;
use crate::probe::timeline::TimelinePoint;
use crate::record::{Catalog, Case, FigureSpec, Figures, ScenarioInfo, Verdict};
use crate::ledger::Ledger;

/// What the work itself hands back.
#[derive(Debug, Default)]
pub struct WorkOutcome {
    /// Figures only the work knows (a scenario's own).
    pub figures: Figures,
    /// The command's output (exec).
    pub command: Option<crate::record::CommandOutput>,
    /// Why the work counts as failed, if it does.
    pub failure: Option<String>,
}

/// Free space a work needs, and what for (said when a `--size` is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room {
    /// Bytes that must be free.
    pub bytes: u64,
    /// What they hold, for the message: "a 206 MiB file and ...".
    pub what: String,
}

/// Measured work: an unmeasured preparation (the seed's setup), then the
/// measured run.
pub trait Work {
    /// Set the stage in `dir`, outside the measured window. Processes it
    /// starts are recorded in `ledger` while they run.
    fn prepare(&mut self, _dir: &Path, _ledger: &Ledger) -> Result<()> {
        Ok(())
    }

    /// Do the work in `dir`; everything here is measured. Processes it
    /// starts are recorded in `ledger` while they run.
    fn run(&mut self, dir: &Path, ledger: &Ledger) -> Result<WorkOutcome>;

    /// Whether a cold read-back belongs to this work even without
    /// `--cold-read` (the scenarios whose seeds read their files back).
    fn wants_cold_read(&self) -> bool {
        false
    }

    /// The read size of the cold read-back (seed 003 scanned with 64 KiB
    /// reads).
    fn cold_read_bytes(&self) -> usize {
        cold::DEFAULT_READ_BYTES
    }

    /// Bytes the work will write, so a scratch image is made big enough
    /// when the user did not give `--size`.
    fn space_needed(&self) -> u64 {
        0
    }

    /// The free space the work cannot run without, or `None` when running
    /// out of space is one of its results (a write's ENOSPC is reported
    /// like any other outcome). A `--size` too small for it is refused
    /// before anything is made.
    fn room_needed(&self) -> Option<Room> {
        None
    }

    /// How long the work runs at most when it runs for a set time (a
    /// stream of so many seconds), for estimating a run's time left.
    fn time_limit(&self) -> Option<std::time::Duration> {
        None
    }

    /// The timeline interval the work needs to be judged, when finer than
    /// the run's `--interval`: a stream limited by time samples often
    /// enough that a disk fast enough to end it early by its byte limit
    /// still leaves the drop detector its intervals.
    fn timeline_interval(&self) -> Option<std::time::Duration> {
        None
    }

    /// Look at the run's timeline once sampling stopped, and add figures
    /// drawn from it (direct-stream's drop detector).
    fn review(&mut self, _timeline: &[TimelinePoint], _figures: &mut Figures) {}

    /// Whether the work, as it ran, allocated every block its files hold
    /// by its own calls (O_DIRECT writes, a fallocate the file system
    /// did), so where they went is the workload's doing and the layout
    /// figures are exact (on file systems that place them so: not btrfs).
    /// By default it did not: buffered writes leave allocation to
    /// writeback, whose timing moves them. Asked after [`run`](Work::run).
    fn allocates_itself(&self) -> bool {
        false
    }

    /// Whether a clock decided how much the work wrote (its time limit came
    /// before its byte limit), so what its files are (their bytes, the
    /// fewest extents they could have) and where they went vary with the
    /// machine's speed and load: every layout figure but the file count is
    /// then a timing. By default the work's own parameters decide it.
    /// Asked after [`run`](Work::run).
    fn amount_timed(&self) -> bool {
        false
    }

    /// Take the way to mark durability points, before [`run`](Work::run),
    /// when the device's writes are recorded: the work calls it as each
    /// sync call that makes one of its files durable returns. By default
    /// it marks none (the harness's own syncfs after the work is the
    /// durability point of everything).
    fn mark_durable_with(&mut self, _mark: durable::Durable) {}

    /// How a crash state of the work's files is judged; `None` for a work
    /// with no checker (its states are judged by mount and the file
    /// system's checker alone).
    fn state_checker(&self) -> Option<Box<dyn durable::StateChecker>> {
        None
    }

    /// The work ran in a guest and came back as `case`: show here what
    /// it would have shown while running (a command its kept output, as
    /// `--show-output` asks). By default nothing.
    fn came_back(&mut self, _case: &Case) {}
}

/// The work of a case as data: what another process needs to build it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkSpec {
    /// Scenario name, or `exec` for a command.
    pub scenario: String,
    /// Its parameters, as the case records them.
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// A workload: its parameters, and the work for one set of values.
pub trait Scenario: Sync {
    /// Name used on the command line (`replace-files`).
    fn name(&self) -> &'static str;
    /// One line on what it shows.
    fn about(&self) -> &'static str;
    /// Its parameters.
    fn params(&self) -> &'static [params::ParamSpec];
    /// The work for one case.
    fn work(&self, params: &params::Params) -> Box<dyn Work>;
    /// Figures it adds beyond the probes', declared once.
    fn figures(&self) -> &'static [FigureSpec] {
        &[]
    }
    /// The figures its table shows first: the ones the seed printed.
    fn headline(&self) -> &'static [&'static str] {
        &[]
    }
    /// Refuse values that parse but cannot work together (an O_DIRECT
    /// block size that is not a multiple of 4096), before anything is made;
    /// the message names the parameter and what to give instead.
    fn check(&self, _params: &params::Params) -> std::result::Result<(), String> {
        Ok(())
    }
    /// The seed report behind it, when there is one.
    fn seeded(&self) -> Option<&dyn Seeded> {
        None
    }
}

/// A scenario that reproduces a seed report: the seed, the comparison it
/// made, and its claim judged on a run.
pub trait Seeded {
    /// The seed report it reproduces (`002`).
    fn seed(&self) -> &'static str;
    /// The comparison the seed made, for `--preset seeds`.
    fn preset(&self) -> Preset;
    /// Whether `cases` (this scenario's, from the preset) still show what
    /// the seed reported; judged on the medians of their repeats, on exact
    /// figures where the claim has them.
    fn verdict(&self, cases: &[&Case]) -> Verdict;
    /// The figures the seed's author printed (their program's output, the
    /// tool they read), in the order they matter to the claim: the report
    /// charts them first, before the verdict's deciding figure and the
    /// rest of the headline.
    fn printed(&self) -> &'static [&'static str];
    /// What the seed reported, in the figures its verdict weighs and a
    /// dozen words (`ext3, 2009: mean extent 21 KiB; read at 18 MB/s of
    /// 70`): the line the verdict's summary sets under the places' ones.
    /// The seed's own numbers, never new ones.
    fn reported(&self) -> &'static str;
    /// Preset settings that depend on the machine: given the bytes free
    /// where the scratch images go, `(key, value)` pairs read as `--set`
    /// reads them, after [`Preset::settings`] and before the user's own.
    fn preset_sized(&self, free_bytes: u64) -> Vec<(&'static str, String)> {
        let _ = free_bytes;
        Vec::new()
    }
    /// The preset's settings when the run judges crash states (`--preset
    /// seeds --crash MODEL`), in place of [`Preset::settings`]' for the
    /// same keys; none: the scenario runs without crash states then (its
    /// seed is not about what survives a crash).
    fn crash_settings(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// The programs people run that the seed is about, each with the
    /// settings `--preset seeds` gives it (`("dpkg", &[("unsafe_io",
    /// "no,yes")])`): the preset runs each beside this scenario, on its
    /// places, under its conditions and drive, and [`Seeded::verdict`] is
    /// given their cases with its own, so it can say what the real program
    /// costs and what its switch loses.
    fn programs(&self) -> &'static [(&'static str, &'static [(&'static str, &'static str)])] {
        &[]
    }
    /// Settings of the seed's comparison that are evidence beside the
    /// claim, not part of it, as `(key, value held, why)`: `hunt` holds
    /// each at that value unless `--set` names it, since a point is judged
    /// on the claim alone and the evidence's cases would add to its time
    /// (mmap-fill's posix_fallocate, the seed's workaround, takes half as
    /// long or more under a tight memory limit as the file it is compared
    /// with).
    fn hunt_holds(&self) -> &'static [(&'static str, &'static str, &'static str)] {
        &[]
    }
}

/// Every scenario, in seed order, then the programs people run.
pub static SCENARIOS: &[&dyn Scenario] = &[
    &mmap_fill::MmapFill,
    &tree_copy::TreeCopy,
    &replace_files::ReplaceFiles,
    &create_file::CreateFile,
    &direct_stream::DirectStream,
    &programs::DPKG,
    &programs::GIT,
    &programs::SQLITE,
    &programs::ATOMIC_REPLACE,
];

/// The scenario called `name`, or a usage error listing them.
pub fn find(name: &str) -> Result<&'static dyn Scenario> {
    SCENARIOS.iter().copied().find(|s| s.name() == name).ok_or_else(|| {
        let known: Vec<&str> = SCENARIOS.iter().map(|s| s.name()).collect();
        Error::usage(format!(
            "unknown scenario `{name}`{}: choose from {} (see `fslab list`)",
            crate::error::did_you_mean(name, &known),
            known.join(", ")
        ))
    })
}

/// The work a case record names, built again from its scenario and
/// parameters: how a runner in another process makes the same work. A
/// command's arguments come back as the record keeps them (UTF-8).
pub fn work_for(spec: &WorkSpec) -> Result<Box<dyn Work>> {
    if spec.scenario == exec::NAME {
        return exec::CommandWork::from_params(&spec.params).map(|w| Box::new(w) as Box<dyn Work>);
    }
    let scenario = find(&spec.scenario)?;
    let params = params::Params::from_json(scenario.params(), &spec.params)
        .map_err(|why| Error::usage(format!("{}: {why}", spec.scenario)))?;
    Ok(scenario.work(&params))
}

/// Every scenario and every declared figure, for whoever prints results.
pub fn catalog(probe_figures: &[&'static [FigureSpec]]) -> Catalog {
    let mut catalog = Catalog::default();
    for list in probe_figures {
        catalog.figures.extend(list.iter().copied());
    }
    catalog.figures.extend(exec::FIGURES.iter().copied());
    for s in SCENARIOS {
        catalog.scenarios.push(ScenarioInfo {
            name: s.name(),
            seed: s.seeded().map(|seeded| seeded.seed()),
            about: s.about(),
            params: s.params().iter().map(|p| p.name).collect(),
            headline: s.headline(),
            printed: s.seeded().map_or(&[][..], |seeded| seeded.printed()),
            figures: s.figures(),
        });
        catalog.figures.extend(s.figures().iter().copied());
    }
    catalog
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_built_again_from_a_case_record() {
        for s in SCENARIOS {
            let params = params::expand(s.params(), &[], params::Scale::Small).unwrap().remove(0);
            let spec = WorkSpec { scenario: s.name().into(), params: params.to_json() };
            let work = work_for(&spec).unwrap_or_else(|e| panic!("{}: {e}", s.name()));
            assert_eq!(work.space_needed(), s.work(&params).space_needed(), "{}", s.name());
        }
        let mut params = serde_json::Map::new();
        params.insert("command".into(), serde_json::json!(["true"]));
        params.insert("cold_read".into(), false.into());
        assert!(work_for(&WorkSpec { scenario: "exec".into(), params }).is_ok());
        let unknown = WorkSpec { scenario: "mmap-fill".into(), params: serde_json::Map::new() };
        let Err(e) = work_for(&unknown) else { panic!("mmap-fill without its parameters was built") };
        assert!(e.to_string().contains("is missing"), "{e}");
    }

    #[test]
    fn no_two_scenarios_declare_one_figure() {
        let catalog = catalog(&[]);
        let mut names: Vec<&str> = catalog.figures.iter().map(|f| f.name).collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "a figure is declared twice");
    }
}
