//! One case, measured: make the target, prepare the work, start every
//! probe, run the work on this thread (inside the case's memory cgroup
//! when it has one), sync, stop the probes,
//! read back cold if asked, map the layout, release — and hand back a
//! [`Case`] whatever happened, so one failing target never stops the
//! others.
//!
//! What is timed: the probes whose window is the work alone (wall, user
//! and system seconds) cover the work; the others also cover one `syncfs`
//! after it, so that data the work left dirty is counted as written by it
//! (its cost is reported as `sync_s`).
//!
//! What is believed: a case whose data did not reach the device is
//! failed, never `ok`. The `syncfs` calls go through one descriptor opened
//! before the work is prepared, so they report every writeback error since
//! (the kernel's per-opener error cursor); and the kernel log is watched
//! for errors about the target's device from the moment it is made until
//! it is released ([`KernelLog`]).

use std::path::Path;

use super::Lab;
use super::deferred::Deferred;
use super::kernel_log::KernelLog;
use super::layout::{Decided, add_layout_figures};
use crate::error::{Error, Result};
use crate::probe::blockstat::BlockDevice;
use crate::probe::cold::{self, ColdMethod};
use crate::probe::{PROBES, ProbeCtx, ReadBackTrace, Reading, Window};
use crate::record::{Better, Case, FigureSpec, Kind, Status};
use crate::scenario::WorkSpec;
use crate::scenario::Work;
use super::Condition;
use crate::harness::conditions::cgroup::MemoryCgroup;
use crate::ledger::{Resource, Token};
use crate::harness::conditions::{neighbour, sysctl};
use crate::site::{Made, TargetOptions, TargetSpec};

/// The cost of the `syncfs` after the work, declared once.
pub const SYNC_FIGURE: FigureSpec = FigureSpec::new("sync_s", "s", Better::Lower, Kind::Timing)
    .heading("sync s")
    .about("time of the syncfs after the work, which writes what it left dirty");

/// The phases [`Lab::measure`] reports to a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Making the target (image, mkfs, mount).
    Make,
    /// Aging and filling an image for the cache (once per key).
    Age,
    /// Running the work.
    Work,
    /// Reading back with a cold cache.
    ColdRead,
    /// Mapping the layout.
    Layout,
    /// Booting a guest and running the case in it.
    Guest,
    /// Judging the recording's crash states (`--crash`).
    Crash,
    /// Releasing the target.
    Release,
}

impl Phase {
    /// A word for progress lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Make => "making",
            Phase::Age => "aging (once: the image is cached)",
            Phase::Work => "running",
            Phase::ColdRead => "cold read",
            Phase::Layout => "mapping layout",
            Phase::Guest => "in a guest (boot, work, power-off)",
            Phase::Crash => "judging crash states",
            Phase::Release => "releasing",
        }
    }
}

impl Lab {
    /// Make `spec`, run `work` (built from `job`) in it with every probe
    /// around, read back and map, release. Never fails: failures are the
    /// case's status.
    pub fn measure(
        &self,
        spec: &TargetSpec,
        job: &WorkSpec,
        condition: &Condition,
        repeat: u32,
        progress: &dyn Fn(Phase),
        work: &mut dyn Work,
    ) -> Case {
        if let Some(kernel) = super::guest::guest_kernel(condition) {
            let disk_bytes = self.options_for(&*work, None).size_bytes.unwrap_or(crate::site::DEFAULT_SIZE_BYTES);
            let case = self.measure_in_guest(spec, job, condition, repeat, progress, kernel, disk_bytes);
            work.came_back(&case);
            return case;
        }
        let mut case = Case::new(&job.scenario, &spec.label(), job.params.clone(), repeat);
        case.conditions = condition.as_map();
        // A case that sets sysctls holds the machine's lock exclusively
        // while it runs, and only then.
        let exclusive = match self.hold_for(condition) {
            Ok(taken) => taken,
            Err(e) => {
                fail(&mut case, format!("taking the machine's sysctl lock for the case's sysctls: {e}"));
                return case;
            }
        };
        // What the case alone holds (its sysctls, its memory cgroup), put
        // back when it ends, newest first.
        let mut held = Vec::new();
        let what = What { condition, progress };
        self.measure_held(spec, &what, &mut case, work, &mut held);
        for token in held.into_iter().rev() {
            if let Err(e) = self.ledger().release(token) {
                fail(&mut case, format!("putting back what the case held: {e}"));
            }
        }
        if exclusive {
            self.back_to_shared();
        }
        case
    }

    fn measure_held(&self, spec: &TargetSpec, what: &What<'_>, case: &mut Case, work: &mut dyn Work, held: &mut Vec<Token>) {
        let progress = what.progress;
        progress(Phase::Make);
        let settings: Vec<_> = what.condition.sysctls.iter().map(|s| s.setting.clone()).collect();
        let set = crate::interrupt::check().and_then(|()| sysctl::apply(self.ledger(), &settings));
        // Read once per case: a `git:` profile's identity runs git.
        let start = super::StartPlan::for_condition(self.plan.start.as_ref(), what.condition);
        let mut options = self.options_for(&*work, start.as_ref().ok().and_then(Option::as_ref));
        if what.condition.crash.is_none() {
            options.record = None;
            options.host_log = None;
        }
        let made = set.and_then(|tokens| {
            held.extend(tokens);
            options.base_image = self.base_for(spec, &options, case, progress, start?.as_ref())?;
            options.pooled = self.pooled_for(options.base_image.as_deref(), &options)?;
            spec.make(self.ledger(), &options, &self.id)
        });
        let mut target = match made {
            Ok(t) => t,
            Err(e) => {
                case.status = Status::Failed;
                case.error = Some(e.to_string());
                return;
            }
        };
        case.target = target.record();
        case.target.disk = Some(self.plan.disk_for(&case.scenario).name.clone());
        let mut kernel_log = KernelLog::watch(device_names(target.as_ref()));
        if let Err(e) = self.measure_on(target.as_mut(), what, case, work, held) {
            fail(case, e.to_string());
        }
        // Read before a recording ends: a case the kernel failed keeps none.
        if let Some(why) = kernel_log.as_mut().and_then(KernelLog::failure) {
            fail(case, why);
        }
        let recording = super::recording::end(target.as_mut(), case);
        if let Some(why) = kernel_log.as_mut().and_then(KernelLog::failure) {
            fail(case, why);
        }
        if let Some(mut record) = recording {
            // Judged after the kernel log's last read: a crash state's
            // mount may complain about a device the case's once was.
            if let Some(plan) = self.plan.crash.as_ref().filter(|_| case.status == Status::Ok) {
                progress(Phase::Crash);
                let checker = work.state_checker();
                let rel = if case.start.is_some() { Path::new(super::start::WORK_FOLDER) } else { Path::new("") };
                let judged = crate::interrupt::check().and_then(|()| {
                    super::crash_states::judge(self.ledger(), target.as_mut(), case, &mut record, plan, checker.as_deref(), rel)
                });
                if let Err(e) = judged {
                    if e.kind != crate::error::ErrorKind::Failed {
                        record.refused_exit = Some(e.kind.exit_code());
                    }
                    fail(case, format!("judging the crash states: {e}"));
                }
            }
            super::recording::finish(target.as_mut(), case, record);
        }
        progress(Phase::Release);
        if let Err(e) = target.release() {
            fail(case, format!("releasing the target: {e}"));
        }
    }

    /// Make the case's memory cgroup, written to the ledger first (its
    /// entry joins `held`, so it is removed when the case ends).
    fn make_cgroup(&self, case_id: &str, limit: u64, held: &mut Vec<Token>) -> Result<MemoryCgroup> {
        let controller = self.memory.as_ref().ok_or_else(|| Error::failed("a memory limit in a run that found no memory controller"))?;
        let path = controller.place_for(case_id);
        held.push(self.ledger().record(Resource::MemoryCgroup(path.clone()))?);
        MemoryCgroup::make(controller, path, limit)
    }

    /// The target options for `work`: the plan's, with an image large
    /// enough for what the work writes when the user gave no `--size`.
    fn options_for(&self, work: &dyn Work, start: Option<&super::StartPlan>) -> TargetOptions {
        options_for(&self.plan, work, start)
    }

    fn measure_on(
        &self,
        target: &mut dyn Made,
        what: &What<'_>,
        case: &mut Case,
        work: &mut dyn Work,
        held: &mut Vec<Token>,
    ) -> Result<()> {
        let What { condition, progress } = *what;
        crate::interrupt::check()?;
        let devices = Devices::of(target);
        let dir = match &case.start {
            Some(_) => super::start::measure_and_make_work_folder(target.work_dir(), case)?,
            None => target.work_dir().to_path_buf(),
        };
        // Opened before anything is written, so its syncfs reports every
        // writeback error from here on.
        let fs = open_dir(&dir)?;
        work.prepare(&dir, self.ledger())?;
        let neighbour_file = condition.neighbour_fsync.as_ref().map(|_| neighbour::prepare(&dir)).transpose()?;
        // Whatever mkfs and mount left in flight is not the work's.
        syncfs(&fs).map_err(|e| {
            Error::failed(format!("the syncfs after preparing the work failed ({e}): the target does not keep what is written to it"))
        })?;
        super::recording::mark(target, "work_start")?;
        super::recording::hand_marker(target, work);

        progress(Phase::Work);
        let n = self.cases_started.get() + 1;
        self.cases_started.set(n);
        let case_id = format!("{}-{n}", self.id);
        let fs_type = target.fs_type().to_string();
        // Made before the probes start, entered just before the work.
        let cgroup = match &condition.memory {
            Some((_, limit)) => Some((self.make_cgroup(&case_id, *limit, held)?, *limit)),
            None => None,
        };
        if let Some((cgroup, _)) = &cgroup {
            case.target.memory_cgroup = Some(cgroup.describe());
        }
        let ctx = ProbeCtx {
            ledger: self.ledger(),
            case_id: &case_id,
            fs_type: &fs_type,
            caps: target.caps(),
            scratch: devices.scratch.as_ref(),
            backing: devices.backing.as_ref(),
            tracefs: self.tracefs.as_deref().map_err(|why| *why),
            interval: work.timeline_interval().map_or(self.plan.interval, |i| i.min(self.plan.interval)),
            cgroup: cgroup.as_ref().map(|(cgroup, _)| cgroup.at()),
            disk: self.plan.disk_for(&case.scenario),
        };
        // The probes of the work alone start last and stop first.
        let order: Vec<usize> = (0..PROBES.len())
            .filter(|&i| PROBES[i].window() == Window::WorkAndSync)
            .chain((0..PROBES.len()).filter(|&i| PROBES[i].window() == Window::Work))
            .collect();
        let mut running: Vec<_> = order.iter().map(|&i| (i, PROBES[i].start(&ctx))).collect();
        let neighbour = match (&neighbour_file, &condition.neighbour_fsync) {
            (Some(path), Some((_, every))) => Some(neighbour::Neighbour::start(path, *every)?),
            _ => None,
        };
        let outcome = match &cgroup {
            Some((cgroup, _)) => {
                let outcome = cgroup.enter().and_then(|()| work.run(&dir, self.ledger()));
                // Out again before anything else is done, however the work
                // ended (a failed move back fails the case; the cgroup's
                // release then moves fslab out).
                let left = cgroup.leave();
                outcome.and_then(|o| left.map(|()| o))
            }
            None => work.run(&dir, self.ledger()),
        };
        let mut condition_figures = crate::record::Figures::new();
        let neighboured = neighbour.map_or(Ok(()), |n| n.stop(&mut condition_figures));
        if let Some((cgroup, limit)) = &cgroup {
            super::memory::add_figures(cgroup, *limit, &mut condition_figures);
        }
        let mut readings: Vec<Option<Reading>> = (0..PROBES.len()).map(|_| None).collect();
        while running.last().is_some_and(|(i, _)| PROBES[*i].window() == Window::Work) {
            let (i, probe) = running.pop().expect("checked");
            readings[i] = Some(probe.stop());
        }
        let sync_started = std::time::Instant::now();
        let synced = syncfs(&fs);
        let sync_s = sync_started.elapsed().as_secs_f64();
        let marked = super::recording::mark(target, "work_end");
        // Gone before the layout is read and the tree read back.
        let neighbour_gone = neighbour_file.as_deref().map_or(Ok(()), neighbour::remove);
        // Those that count deferred work go on until the first unmount.
        let mut laters = Vec::new();
        while let Some((i, probe)) = running.pop() {
            let (reading, later) = probe.stop_window();
            readings[i] = Some(reading);
            laters.extend(later);
        }
        let mut deferred = Some(Deferred::new(laters));
        // A remount for the cold read must find the file system unused.
        drop(fs);
        let outcome = outcome?;

        // Figures in the probes' order, the sync's cost after the work's
        // own time.
        let figures = &mut case.figures;
        let last_of_work = PROBES.iter().rposition(|p| p.window() == Window::Work);
        if last_of_work.is_none() {
            figures.put(&SYNC_FIGURE, Some(sync_s), "");
        }
        let mut timeline = Vec::new();
        for (i, reading) in readings.into_iter().enumerate() {
            let reading = reading.expect("every probe was stopped");
            figures.extend(reading.figures);
            case.busy = case.busy.take().or(reading.busy);
            case.requests.extend(reading.requests);
            if Some(i) == last_of_work {
                figures.put(&SYNC_FIGURE, Some(sync_s), "");
            }
            timeline.extend(reading.timeline.unwrap_or_default());
        }
        case.command = outcome.command;
        figures.extend(outcome.figures);
        figures.extend(condition_figures);
        work.review(&timeline, figures);
        case.timeline = timeline;
        if let Some(failure) = outcome.failure {
            fail(case, failure);
        }
        if let Err(e) = synced {
            fail(case, format!("the syncfs after the work failed ({e}): what the work wrote did not all reach the device"));
        }
        if let Err(e) = marked {
            fail(case, e.to_string());
        }
        if let Err(why) = neighboured {
            fail(case, why);
        }
        if let Err(e) = neighbour_gone {
            fail(case, e.to_string());
        }

        if self.plan.cold_read.reads(work.wants_cold_read()) {
            crate::interrupt::check()?;
            progress(Phase::ColdRead);
            if target.caps().remount {
                // The remount's unmount ends what the window deferred.
                if let Some(deferred) = deferred.take() {
                    deferred.settle(target, &mut case.figures)?;
                }
            }
            let method = make_cold(target)?;
            case.target.cold_method = Some(method.as_str().to_string());
            let traced = ReadBackTrace::start(&ctx);
            let before = devices.scratch.as_ref().and_then(|d| d.read().ok());
            let read_back = cold::read_tree(&dir, work.cold_read_bytes());
            let after = devices.scratch.as_ref().and_then(|d| d.read().ok());
            let modelled = traced.stop();
            let read_ios = before.zip(after).map(|(b, a)| a.since(&b).read_ios);
            cold::add_figures(&read_back?, method, read_ios, &mut case.figures);
            case.figures.extend(modelled.figures);
            case.requests.extend(modelled.requests);
        }

        crate::interrupt::check()?;
        progress(Phase::Layout);
        let decided = Decided {
            by_the_work: work.allocates_itself() && super::layout::placed_by_the_work(&fs_type),
            amount_timed: work.amount_timed(),
        };
        case.maps = add_layout_figures(&dir, decided, &mut case.figures)?;
        let disk = self.plan.disk_for(&case.scenario);
        super::modelled::add_figures(&dir, decided, disk, &mut case.figures);
        case.target.disk = Some(disk.name.clone());
        if let Some(deferred) = deferred.take() {
            deferred.settle(target, &mut case.figures)?;
        }
        Ok(())
    }
}

/// The condition one case runs under, and where its progress
/// goes: handed down the steps of [`Lab::measure`] together.
#[derive(Clone, Copy)]
struct What<'a> {
    condition: &'a Condition,
    progress: &'a dyn Fn(Phase),
}

/// The scratch device and the disk under it (the image's, or the folder's).
struct Devices {
    scratch: Option<BlockDevice>,
    backing: Option<BlockDevice>,
}

impl Devices {
    fn of(target: &dyn Made) -> Devices {
        if !target.caps().block_stats {
            return Devices { scratch: None, backing: None };
        }
        let scratch = match target.device() {
            Some(device) => device.file_name().and_then(|n| BlockDevice::from_name(&n.to_string_lossy()).ok()),
            None => BlockDevice::holding(target.work_dir()).ok().flatten(),
        };
        let backing =
            target.backing_path().and_then(|p| BlockDevice::holding(p).ok().flatten()).map(|d| d.whole_disk());
        Devices { scratch, backing }
    }
}

/// An image size for work that writes `needed` bytes on a file system
/// filled to `level` (0 for a fresh one) before it: the default, or room
/// for the data plus a quarter and 256 MiB for metadata and journal in
/// the part left free, in whole MiB.
/// The target options of `plan` for `work`: the plan's, with an image
/// large enough for what the work writes when the user gave no `--size`.
pub(super) fn options_for(plan: &super::Plan, work: &dyn Work, start: Option<&super::StartPlan>) -> TargetOptions {
    let mut options = plan.target_options.clone();
    if options.size_bytes.is_none() {
        let level = start.map_or(0.0, super::StartPlan::level);
        options.size_bytes = Some(image_size_for(work.space_needed(), level));
    }
    options
}

pub(super) fn image_size_for(needed: u64, level: f64) -> u64 {
    let wanted = needed + needed / 4 + (256 << 20);
    // In thousandths, so 80% full gives exactly five times the room.
    let free_permille = ((1.0 - level.clamp(0.0, 0.99)) * 1000.0).round() as u64;
    let wanted = (wanted as u128 * 1000).div_ceil(u128::from(free_permille)) as u64;
    crate::site::DEFAULT_SIZE_BYTES.max(wanted.div_ceil(1 << 20) << 20)
}

/// Empty the cache the right way for this target.
fn make_cold(target: &mut dyn Made) -> Result<ColdMethod> {
    if target.caps().remount {
        target.remount()?;
        Ok(ColdMethod::Remount)
    } else if rustix::process::geteuid().is_root() {
        cold::drop_caches().map_err(|e| Error::io(Path::new("/proc/sys/vm/drop_caches"), "write", e))?;
        Ok(ColdMethod::DropCaches)
    } else {
        cold::fadvise_tree(target.work_dir())?;
        Ok(ColdMethod::Fadvise)
    }
}

/// Mark `case` failed for `why`, after any reason it already has (the
/// first failure is usually the cause of the next).
pub(super) fn fail(case: &mut Case, why: String) {
    case.status = Status::Failed;
    case.error = Some(match case.error.take() {
        Some(first) => format!("{first}; {why}"),
        None => why,
    });
}

/// The work folder, opened to reach its file system.
fn open_dir(dir: &Path) -> Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| Error::io(dir, "open the work folder", e.into()))
}

/// `syncfs` on the file system `fs` is open on: write back what is dirty,
/// and report any writeback error since `fs` was opened (EIO, ENOSPC from
/// a device whose own storage ran out).
fn syncfs(fs: &std::os::fd::OwnedFd) -> std::io::Result<()> {
    rustix::fs::syncfs(fs).map_err(std::io::Error::from)
}

/// The kernel names of the target's device and of the disk it is on, for
/// the kernel-log watch: the device fslab made or was given, else the one
/// holding the work folder.
fn device_names(target: &dyn Made) -> Vec<String> {
    let device = match target.device() {
        Some(device) => device.file_name().and_then(|n| BlockDevice::from_name(&n.to_string_lossy()).ok()),
        None => BlockDevice::holding(target.work_dir()).ok().flatten(),
    };
    let mut names = Vec::new();
    if let Some(device) = device {
        let disk = device.whole_disk().name;
        names.push(device.name);
        if !names.contains(&disk) {
            names.push(disk);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_grow_only_past_the_default() {
        assert_eq!(image_size_for(0, 0.0), crate::site::DEFAULT_SIZE_BYTES);
        assert_eq!(image_size_for(1 << 30, 0.0), crate::site::DEFAULT_SIZE_BYTES);
        assert_eq!(image_size_for(32 << 30, 0.0), (40 << 30) + (256 << 20));
        // Filled to 80% first: five times the room, so a fifth is free.
        assert_eq!(image_size_for(2 << 30, 0.8), ((2 << 30) + (512 << 20) + (256 << 20)) * 5);
    }
}
