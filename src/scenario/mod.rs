//! Measured work on targets: the harness every scenario (and `fslab exec`)
//! runs through.
//!
//! A [`Lab`] is one run: it owns the ledger, the sysctls in force and the
//! tracefs it uses. [`Lab::measure`] makes one target, puts every probe
//! around the work, optionally reads everything back cold, maps the layout
//! of what the work left, and releases the target — returning a [`Case`]
//! whatever happened, so one failing target never stops the others.
//!
//! What is timed: wall, user and system seconds cover the work alone. The
//! block and trace counters also cover one `syncfs` after it, so that data
//! the work left dirty is counted as written by it (its cost is reported
//! as `sync_s`).

mod environment;
pub mod exec;
pub mod params;
mod create_file;
mod direct_stream;
mod mmap_fill;
mod replace_files;
mod tree_copy;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use environment::Environment;
pub use verdict::{Preset, Variant, Verdict};

use crate::error::{Error, Result};
use crate::layout::tree::{self, TreeOptions};
use crate::record::{Better, Figures, Kind};
pub use crate::record::{Case, KeptMap, RunRecord, Status, TargetRecord, KEPT_MAPS, KEPT_RECORDS, run_id, utc_now};
use crate::probe::blockstat::{self, BlockDevice, BlockStat};
use crate::probe::cold::{self, ColdMethod};
use crate::probe::cpu::CpuClock;
use crate::probe::timeline::{Sampler, TimelinePoint};
use crate::probe::trace::{self, TraceRequest, TraceSession};
use crate::target::ledger::{self, CleanedRun, Ledger, Resource};
use crate::target::sysctl::{self, SysctlLock, SysctlSetting};
use crate::target::{Target, TargetOptions, TargetSpec};

/// What to run on, and how to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Targets, in order.
    pub targets: Vec<TargetSpec>,
    /// How to make scratch targets.
    pub target_options: TargetOptions,
    /// Sysctls in force for the whole run.
    pub sysctls: Vec<SysctlSetting>,
    /// Timeline sampling interval.
    pub interval: Duration,
    /// Read everything back with a cold cache after the work.
    pub cold_read: bool,
}

/// What the work itself hands back.
#[derive(Debug, Default)]
pub struct WorkOutcome {
    /// Figures only the work knows (a scenario's own).
    pub figures: Figures,
    /// The command's output (exec).
    pub command: Option<exec::CommandOutput>,
    /// Why the work counts as failed, if it does.
    pub failure: Option<String>,
}

/// Measured work: an unmeasured preparation (the seed's setup), then the
/// measured run.
pub trait Work {
    /// Set the stage in `dir`, outside the measured window.
    fn prepare(&mut self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    /// Do the work in `dir`; everything here is measured.
    fn run(&mut self, dir: &Path) -> Result<WorkOutcome>;

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

    /// Look at the run's timeline once sampling stopped, and add figures
    /// drawn from it (direct-stream's drop detector).
    fn review(&mut self, _timeline: &[TimelinePoint], _figures: &mut Figures) {}
}

/// A seed report as a reproducible workload: its parameters, and the work
/// for one set of values. Every scenario is one file behind this trait,
/// listed in [`SCENARIOS`]; no scenario knows another.
pub trait Scenario: Sync {
    /// Name used on the command line (`replace-files`).
    fn name(&self) -> &'static str;
    /// The seed report it reproduces (`002`).
    fn seed(&self) -> &'static str;
    /// One line on what it shows.
    fn about(&self) -> &'static str;
    /// Its parameters.
    fn params(&self) -> &'static [params::ParamSpec];
    /// Figures it adds beyond the probes', with their meaning.
    fn own_figures(&self) -> &'static [(&'static str, &'static str)];
    /// The figures its table shows first: the ones the seed printed.
    fn headline(&self) -> &'static [&'static str];
    /// Refuse values that parse but cannot work together (an O_DIRECT
    /// block size that is not a multiple of 4096), before anything is made;
    /// the message names the parameter and what to give instead.
    fn check(&self, _params: &params::Params) -> std::result::Result<(), String> {
        Ok(())
    }
    /// The work for one case.
    fn work(&self, params: &params::Params) -> Box<dyn Work>;
    /// The comparison the seed made, for `--preset seeds`.
    fn preset(&self) -> Preset;
    /// Whether `cases` (this scenario's, from the preset) still show what
    /// the seed reported; judged on exact figures only.
    fn verdict(&self, cases: &[&Case]) -> Verdict;
}

/// Every scenario, in seed order.
pub static SCENARIOS: &[&dyn Scenario] = &[
    &mmap_fill::MmapFill,
    &tree_copy::TreeCopy,
    &replace_files::ReplaceFiles,
    &create_file::CreateFile,
    &direct_stream::DirectStream,
];

/// The registry as data, for readers of results (the report) that must
/// not depend on the code that measures. Scenario figures carry only their
/// meaning here: no reader of the catalog asks them for more yet.
pub fn catalog() -> crate::record::Catalog {
    use crate::record::{Catalog, FigureSpec, ScenarioInfo};
    let scenarios = SCENARIOS
        .iter()
        .map(|s| ScenarioInfo {
            name: s.name(),
            seed: Some(s.seed()),
            about: s.about(),
            params: s.params().iter().map(|p| p.name).collect(),
            headline: s.headline(),
            figures: &[],
        })
        .collect();
    let figures = SCENARIOS
        .iter()
        .flat_map(|s| s.own_figures())
        .map(|&(name, about)| FigureSpec { name, unit: "", better: Better::Lower, kind: Kind::Exact, heading: "", about })
        .collect();
    Catalog { scenarios, figures }
}

/// The scenario called `name`, or a usage error listing them.
pub fn find(name: &str) -> Result<&'static dyn Scenario> {
    SCENARIOS.iter().copied().find(|s| s.name() == name).ok_or_else(|| {
        let known: Vec<&str> = SCENARIOS.iter().map(|s| s.name()).collect();
        Error::usage(format!("unknown scenario `{name}`: choose from {} (see `fslab list`)", known.join(", ")))
    })
}

/// The phases [`Lab::measure`] reports to a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Making the target (image, mkfs, mount).
    Make,
    /// Running the work.
    Work,
    /// Reading back with a cold cache.
    ColdRead,
    /// Mapping the layout.
    Layout,
    /// Releasing the target.
    Release,
}

impl Phase {
    /// A word for progress lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Make => "making",
            Phase::Work => "running",
            Phase::ColdRead => "cold read",
            Phase::Layout => "mapping layout",
            Phase::Release => "releasing",
        }
    }
}

/// One run: its ledger, sysctls and tracing.
#[derive(Debug)]
pub struct Lab {
    /// The run's id.
    pub id: String,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    plan: Plan,
    tracefs: Option<PathBuf>,
    instances: std::cell::Cell<u32>,
    // Declared before the lock so the ledger (which restores sysctls) is
    // dropped first.
    ledger: Ledger,
    _sysctl_lock: Option<SysctlLock>,
}

/// Release what dead runs left (fslab's start-up duty and `fslab cleanup`).
pub fn cleanup_dead_runs() -> Result<Vec<CleanedRun>> {
    ledger::cleanup_dead(&ledger::state_dir())
}

impl Lab {
    /// Check the plan can run here, then start the run: ledger, sysctls,
    /// tracefs. Nothing is made before every target passed its checks.
    pub fn open(plan: Plan) -> Result<Lab> {
        crate::interrupt::install();
        crate::target::check(&plan.targets)?;
        let root = rustix::process::geteuid().is_root();
        if !plan.sysctls.is_empty() && !root {
            return Err(Error::environment("--sysctl needs root: run as root, or leave --sysctl out"));
        }
        for setting in &plan.sysctls {
            sysctl::read(&setting.key)?;
        }
        let id = run_id();
        let state = ledger::state_dir();
        let sysctl_lock = if plan.sysctls.is_empty() { None } else { Some(sysctl::lock(&state)?) };
        let ledger = Ledger::create(&state, &id)?;
        let mut lab = Lab { id, started_at: utc_now(), plan, tracefs: None, instances: std::cell::Cell::new(0), ledger, _sysctl_lock: sysctl_lock };
        sysctl::apply(&lab.ledger, &lab.plan.sysctls)?;
        if root {
            lab.tracefs = lab.tracefs_root();
        }
        Ok(lab)
    }

    /// The plan this lab runs.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The run's ledger, for work that starts processes or makes files
    /// that must be released.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// A tracefs to use: the mounted one, or a private mount made (and
    /// recorded) for this run. `None` if tracefs cannot be had.
    fn tracefs_root(&self) -> Option<PathBuf> {
        if let Some(root) = trace::find_tracefs() {
            return Some(root);
        }
        let dir = self.plan.target_options.scratch.join(format!("{}-tracefs", self.id));
        std::fs::create_dir_all(&self.plan.target_options.scratch).ok()?;
        self.ledger.record(Resource::MountPoint(dir.clone())).ok()?;
        std::fs::create_dir(&dir).ok()?;
        self.ledger.record(Resource::Mount(dir.clone())).ok()?;
        let ok = self
            .ledger
            .tool_command("mount")
            .args(["-t", "tracefs", "nodev"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(dir)
    }

    /// Make `spec`, run `work` in it with every probe around, read back
    /// and map, release. Never fails: failures are the case's status.
    pub fn measure(
        &self,
        spec: &TargetSpec,
        scenario: &str,
        params: serde_json::Map<String, serde_json::Value>,
        repeat: u32,
        progress: &dyn Fn(Phase),
        work: &mut dyn Work,
    ) -> Case {
        let mut case = Case::new(scenario, &spec.label(), params, repeat);
        progress(Phase::Make);
        let made = crate::interrupt::check()
            .and_then(|()| Target::make(&self.ledger, spec, &self.options_for(&*work), &self.id));
        let mut target = match made {
            Ok(t) => t,
            Err(e) => {
                case.status = Status::Failed;
                case.error = Some(e.to_string());
                return case;
            }
        };
        case.target = TargetRecord {
            fs_type: target.fs_type.clone(),
            device: target.device.as_ref().map(|d| d.display().to_string()),
            mkfs_args: target.mkfs_args.clone(),
            mount_opts: target.mount_opts.clone(),
            cold_method: None,
        };
        if let Err(e) = self.measure_on(&mut target, &mut case, progress, work) {
            case.status = Status::Failed;
            case.error = Some(e.to_string());
        }
        progress(Phase::Release);
        if let Err(e) = target.release() {
            case.status = Status::Failed;
            case.error.get_or_insert_with(|| format!("releasing the target: {e}"));
        }
        case
    }

    /// The target options for `work`: the plan's, with an image large
    /// enough for what the work writes when the user gave no `--size`.
    fn options_for(&self, work: &dyn Work) -> TargetOptions {
        let mut options = self.plan.target_options.clone();
        if options.size_bytes.is_none() {
            options.size_bytes = Some(image_size_for(work.space_needed()));
        }
        options
    }

    fn measure_on(
        &self,
        target: &mut Target,
        case: &mut Case,
        progress: &dyn Fn(Phase),
        work: &mut dyn Work,
    ) -> Result<()> {
        crate::interrupt::check()?;
        let devices = Devices::of(target);
        work.prepare(&target.work_dir)?;
        // Whatever mkfs and mount left in flight is not the work's.
        sync_fs(&target.work_dir);

        progress(Phase::Work);
        let tracing = self.start_trace(devices.scratch.as_ref());
        let before = devices.read();
        let sampler = Sampler::start(self.plan.interval, devices.scratch.clone());
        let clock = CpuClock::start();
        let outcome = work.run(&target.work_dir);
        let span = clock.stop();
        let sync_started = std::time::Instant::now();
        sync_fs(&target.work_dir);
        let sync_s = sync_started.elapsed().as_secs_f64();
        let timeline = sampler.stop();
        let after = devices.read();
        let counts = match tracing {
            Ok(session) => Ok(session.stop()),
            Err(why) => Err(why),
        };
        let outcome = outcome?;

        let figures = &mut case.figures;
        span.add_figures(figures);
        figures.set("sync_s", sync_s, "s", Better::Lower, Kind::Timing);
        devices.add_delta_figures(&before, &after, figures);
        match &counts {
            Ok(c) => trace::add_figures(Some(c), &target.fs_type, "", figures),
            Err(why) => trace::add_figures(None, &target.fs_type, why, figures),
        }
        case.command = outcome.command;
        figures.extend(outcome.figures);
        work.review(&timeline, figures);
        case.timeline = timeline;
        if let Some(failure) = outcome.failure {
            case.status = Status::Failed;
            case.error = Some(failure);
        }

        if self.plan.cold_read || work.wants_cold_read() {
            crate::interrupt::check()?;
            progress(Phase::ColdRead);
            let method = make_cold(target)?;
            case.target.cold_method = Some(method.as_str().to_string());
            let before = devices.read();
            let read_back = cold::read_tree(&target.work_dir, work.cold_read_bytes())?;
            let after = devices.read();
            let read_ios = match (&before.scratch, &after.scratch) {
                (Some(b), Some(a)) => Some(a.since(b).read_ios),
                _ => None,
            };
            cold::add_figures(&read_back, method, read_ios, figures);
        }

        crate::interrupt::check()?;
        progress(Phase::Layout);
        case.maps = add_layout_figures(&target.work_dir, figures)?;
        Ok(())
    }

    /// Start tracing the scratch device, or say why not.
    fn start_trace(&self, device: Option<&BlockDevice>) -> std::result::Result<TraceSession, String> {
        let Some(root) = &self.tracefs else {
            return Err(if rustix::process::geteuid().is_root() {
                "tracefs is not available".into()
            } else {
                "tracepoints need root".into()
            });
        };
        let Some(device) = device else { return Err("no block device to trace".into()) };
        let n = self.instances.get() + 1;
        self.instances.set(n);
        let request = TraceRequest {
            tracefs: root.clone(),
            instance: format!("fslab-{}-{n}", self.id),
            dev_t_kernel: device.dev_t_kernel(),
        };
        let token = self
            .ledger
            .record(Resource::TraceInstance(request.instance_dir()))
            .map_err(|e| e.to_string())?;
        let session = TraceSession::start(&request).map_err(|e| e.to_string());
        if session.is_err() {
            let _ = self.ledger.release(token);
        }
        session
    }

    /// Finish the run: release everything and report what could not be.
    pub fn close(self) -> Result<()> {
        let errors = self.ledger.release_all();
        match errors.first() {
            None => Ok(()),
            Some(e) => Err(Error::failed(format!("could not release everything: {e} (run `fslab cleanup`)"))),
        }
    }
}

/// The scratch device and the disk under it (the image's, or the dir's).
struct Devices {
    scratch: Option<BlockDevice>,
    backing: Option<BlockDevice>,
}

struct DeviceStats {
    scratch: Option<BlockStat>,
    backing: Option<BlockStat>,
}

impl Devices {
    fn of(target: &Target) -> Devices {
        let named = |p: &Path| p.file_name().and_then(|n| BlockDevice::from_name(&n.to_string_lossy()).ok());
        match (&target.device, &target.image) {
            (Some(device), image) => Devices {
                scratch: named(device),
                backing: image
                    .as_deref()
                    .and_then(|i| BlockDevice::holding(i).ok().flatten())
                    .map(|d| d.whole_disk()),
            },
            (None, _) => {
                let holding = BlockDevice::holding(&target.work_dir).ok().flatten();
                Devices { backing: holding.as_ref().map(|d| d.whole_disk()), scratch: holding }
            }
        }
    }

    fn read(&self) -> DeviceStats {
        DeviceStats {
            scratch: self.scratch.as_ref().and_then(|d| d.read().ok()),
            backing: self.backing.as_ref().and_then(|d| d.read().ok()),
        }
    }

    fn add_delta_figures(&self, before: &DeviceStats, after: &DeviceStats, figures: &mut Figures) {
        for (prefix, b, a, what) in [
            ("", &before.scratch, &after.scratch, "the scratch device"),
            ("backing_", &before.backing, &after.backing, "the disk under it"),
        ] {
            let delta = b.as_ref().zip(a.as_ref()).map(|(b, a)| a.since(b));
            let why = format!("no block-layer counters for {what}");
            blockstat::add_figures(delta.as_ref(), prefix, &why, figures);
        }
    }
}

/// An image size for work that writes `needed` bytes: the default, or
/// room for the data plus a quarter and 256 MiB for metadata and journal,
/// in whole MiB.
fn image_size_for(needed: u64) -> u64 {
    let wanted = needed + needed / 4 + (256 << 20);
    crate::target::DEFAULT_SIZE_BYTES.max(wanted.div_ceil(1 << 20) << 20)
}

/// Empty the cache the right way for this target.
fn make_cold(target: &mut Target) -> Result<ColdMethod> {
    if target.can_remount() {
        target.remount()?;
        Ok(ColdMethod::Remount)
    } else if rustix::process::geteuid().is_root() {
        cold::drop_caches().map_err(|e| Error::io(Path::new("/proc/sys/vm/drop_caches"), "write", e))?;
        Ok(ColdMethod::DropCaches)
    } else {
        cold::fadvise_tree(&target.work_dir)?;
        Ok(ColdMethod::Fadvise)
    }
}

/// Layout of everything under `dir`: the `frag` walk's totals as figures,
/// and the maps of its most fragmented files to keep.
fn add_layout_figures(dir: &Path, figures: &mut Figures) -> Result<Vec<KeptMap>> {
    let options = TreeOptions { threads: 2, top: KEPT_MAPS, largest: KEPT_MAPS, cross_mounts: false };
    let report = tree::scan(&[dir.to_path_buf()], &options).map_err(|e| Error::io(dir, "map the layout", e))?;
    let s = &report.summary;
    let exact = |f: &mut Figures, name: &str, v: u64| f.set(name, v as f64, "count", Better::Lower, Kind::Exact);
    exact(figures, "files", s.files);
    figures.set("bytes", s.bytes as f64, "bytes", Better::Lower, Kind::Exact);
    exact(figures, "extents", s.extents);
    exact(figures, "records", s.records);
    let perfection = (s.perfection_unknown_files == 0).then_some(s.perfection_extents as f64);
    figures.set_opt("perfection", perfection, "count", Better::Lower, Kind::Exact, "perfection unknown for some files");
    exact(figures, "fragmented_files", s.fragmented_files);
    let why = "no file with data";
    figures.set_opt("layout_score", s.layout_score_bytes, "ratio", Better::Higher, Kind::Exact, why);
    // Where one file lands after another depends on which CPU wrote it
    // (ext4's and xfs's per-CPU allocation groups), so the gaps between
    // files are timings, not exact figures: they vary run to run.
    let why = "no two files with data in one directory";
    figures.set_opt("next_file_contiguous", s.next_file_contiguous, "ratio", Better::Higher, Kind::Timing, why);
    let seek = (s.next_file_pairs > 0).then_some(s.next_file_seek_bytes as f64);
    figures.set_opt("next_file_seek_bytes", seek, "bytes", Better::Lower, Kind::Timing, why);
    if s.errors > 0 {
        let first = report.errors.first().map(|e| format!("{}: {}", e.path, e.error)).unwrap_or_default();
        return Err(Error::failed(format!("{} files could not be mapped; first: {first}", s.errors)));
    }
    // The most fragmented files first; when fewer are fragmented, the
    // largest of the rest, so a run that left one contiguous file still
    // shows where it went.
    let mut keep: Vec<&str> = report.worst.iter().map(|w| w.path.as_str()).collect();
    for large in &report.largest {
        if keep.len() < KEPT_MAPS && !keep.contains(&large.path.as_str()) {
            keep.push(&large.path);
        }
    }
    keep.iter().map(|path| keep_map(dir, Path::new(path))).collect()
}

/// Read the extent map of `path` (one of the files under `dir`) to keep.
fn keep_map(dir: &Path, path: &Path) -> Result<KeptMap> {
    let (file, meta) = crate::layout::open_regular(path)?;
    let fs = crate::layout::FsInfo::probe(&file).map_err(|e| Error::io(path, "statfs", e))?;
    let mut buffer = crate::sys::fiemap::FiemapBuffer::new(crate::layout::extent_map::DEFAULT_BATCH);
    let mut extent_list = Vec::new();
    let mut truncated = false;
    let acc = crate::layout::map_open_file(&file, fs.block_size, &mut buffer, false, |e, _| {
        if extent_list.len() < KEPT_RECORDS {
            extent_list.push(*e);
        } else {
            truncated = true;
        }
        Ok(())
    })
    .map_err(|e| Error::io(path, "FIEMAP", e))?;
    let figures = acc.finish(meta.len());
    Ok(KeptMap {
        path: path.strip_prefix(dir).unwrap_or(path).display().to_string(),
        size: meta.len(),
        block_size: fs.block_size,
        device_bytes: fs.total_bytes,
        extents: figures.extents,
        truncated,
        extent_list,
    })
}

/// `syncfs` on the file system holding `dir`; a failure only means less
/// is flushed, so it is not an error.
fn sync_fs(dir: &Path) {
    if let Ok(fd) = rustix::fs::open(dir, rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty()) {
        let _ = rustix::fs::syncfs(&fd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_grow_only_past_the_default() {
        assert_eq!(image_size_for(0), crate::target::DEFAULT_SIZE_BYTES);
        assert_eq!(image_size_for(1 << 30), crate::target::DEFAULT_SIZE_BYTES);
        assert_eq!(image_size_for(32 << 30), (40 << 30) + (256 << 20));
    }
}
