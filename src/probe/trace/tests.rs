//! The trace session on real loop devices, and its figures.

use super::*;
use crate::probe::blockstat::{BlockDevice, BlockStat};
use crate::probe::testutil::{LoopDevice, root_or_skip, run};
use crate::ledger::give_back::unmount;
use std::io::Write;
use std::sync::atomic::AtomicUsize;

fn counts() -> TraceCounts {
    TraceCounts {
        journal_commits: Some(20),
        journal_commit_starts: Some(20),
        block_requests: 90,
        seeks: 30,
        seek_distance_bytes: 4096,
        ..TraceCounts::default()
    }
}

#[test]
fn figures_by_file_system_and_missing_not_zero() {
    let mut f = Figures::new();
    add_figures(Some(&counts()), "ext4", "", &mut f);
    assert_eq!(f.value("journal_commits"), Some(20.0));
    assert_eq!(f.value("seek_distance_bytes"), Some(4096.0));
    assert_eq!(f.value("trace_lost_events"), Some(0.0));
    assert!(f.get("log_forces").is_none());

    let mut f = Figures::new();
    add_figures(Some(&counts()), "xfs", "", &mut f);
    assert_eq!(f.value("journal_commits"), None, "xfs counts log writes, which this kernel lacked");
    assert!(f.get("log_forces").unwrap().missing.as_deref().unwrap().contains("xfs_log_force"));
    let xfs = TraceCounts { xfs_log_writes: Some(4), xfs_log_forces: Some(21), ..counts() };
    add_figures(Some(&xfs), "xfs", "", &mut f);
    assert_eq!((f.value("journal_commits"), f.value("log_forces")), (Some(4.0), Some(21.0)));

    let mut f = Figures::new();
    add_figures(Some(&counts()), "btrfs", "", &mut f);
    assert_eq!(f.get("journal_commits").unwrap().missing.as_deref(), Some("no journal tracepoints for btrfs"));
    assert_eq!(f.value("block_requests"), Some(90.0));

    let mut f = Figures::new();
    add_figures(None, "ext4", "tracepoints need root", &mut f);
    for name in ["journal_commits", "block_requests", "seeks", "seek_distance_bytes", "trace_lost_events"] {
        assert_eq!(f.get(name).unwrap().missing.as_deref(), Some("tracepoints need root"), "{name}");
    }

    let lossy = TraceCounts { lost_events: 12, ..counts() };
    let mut f = Figures::new();
    add_figures(Some(&lossy), "ext3", "", &mut f);
    assert_eq!(f.value("seeks"), None);
    assert_eq!(f.value("journal_commits"), None);
    assert!(f.get("seeks").unwrap().missing.as_deref().unwrap().contains("12 events lost"));
    assert_eq!(f.value("trace_lost_events"), Some(12.0));
}

#[test]
fn the_modelled_figures_are_the_replay_s_or_missing_with_why() {
    let disk = crate::model::builtin::find("ssd-plp").unwrap();
    let mut model = modelled::Modelling::new(&disk, "work");
    model.request("W", 2048, 8, Some(1.0));
    model.request("FF", 0, 0, Some(1.001));
    let traced = TraceCounts { model: Some(model.finish()), ..counts() };
    let reading = window_reading(Some(&traced), "ext4", "");
    let seconds = reading.figures.value("modelled_work_s").unwrap();
    assert!(seconds > 0.0 && seconds < 1e-3, "a 4 KiB write and a flush on an SSD: {seconds} s");
    assert_eq!(reading.figures.value("modelled_seeks"), Some(0.0));
    assert_eq!(reading.figures.get("modelled_work_s").unwrap().kind, Kind::Timing);
    assert_eq!(reading.requests.len(), 1);
    assert_eq!((reading.requests[0].phase.as_str(), reading.requests[0].disk.as_str()), ("work", "ssd-plp"));
    // Requests lost: no cost and no sample, as no count.
    let lossy = TraceCounts { lost_events: 3, ..traced.clone() };
    let reading = window_reading(Some(&lossy), "ext4", "");
    assert!(reading.figures.get("modelled_work_s").unwrap().missing.as_deref().unwrap().contains("3 events lost"));
    assert!(reading.requests.is_empty());
    let reading = window_reading(None, "ext4", "tracepoints need root");
    assert_eq!(reading.figures.get("modelled_seeks").unwrap().missing.as_deref(), Some("tracepoints need root"));
    let reading = window_reading(Some(&counts()), "ext4", "");
    assert_eq!(reading.figures.get("modelled_work_s").unwrap().missing.as_deref(), Some("no drive was given to model"));
    let mut past = modelled::Modelling::new(&disk, "work");
    past.request("R", disk.capacity_bytes() / 512, 8, None);
    let refused = TraceCounts { model: Some(past.finish()), ..counts() };
    let why = window_reading(Some(&refused), "ext4", "").figures.get("modelled_work_s").unwrap().missing.clone().unwrap();
    assert!(why.starts_with("the disk model cannot replay the requests: a read of 4096 bytes"), "{why}");
}

/// A tracefs to use: the mounted one, or one mounted for the test.
struct Tracefs {
    path: PathBuf,
    _mounted: Option<(MountedTracefs, tempfile::TempDir)>,
}

struct MountedTracefs(PathBuf);

impl Drop for MountedTracefs {
    fn drop(&mut self) {
        if let Err(e) = unmount(&self.0) {
            eprintln!("{e}");
        }
    }
}

impl Tracefs {
    fn get() -> Tracefs {
        if let Some(path) = find_tracefs() {
            return Tracefs { path, _mounted: None };
        }
        let dir = crate::test_temp::dir("");
        run("mount", &["-t", "tracefs", "nodev", dir.path().to_str().unwrap()]);
        let guard = MountedTracefs(dir.path().to_path_buf());
        // The guard first: a tuple drops in order, and the folder can only be
        // removed once tracefs is unmounted from it.
        Tracefs { path: dir.path().to_path_buf(), _mounted: Some((guard, dir)) }
    }
}

fn instance_name() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("fslab-test-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// 20 appends of 4 KiB to `path`, each followed by fsync when asked.
fn appends(path: &Path, fsync: bool) {
    let mut f = fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    for _ in 0..20 {
        f.write_all(&[7u8; 4096]).unwrap();
        if fsync {
            f.sync_all().unwrap();
        }
    }
}

fn traced(tracefs: &Path, dev: &BlockDevice, work: impl FnOnce()) -> TraceCounts {
    let req = TraceRequest {
        tracefs: tracefs.to_path_buf(),
        instance: instance_name(),
        dev_t_kernel: dev.dev_t_kernel(),
        model: None,
    };
    let session = TraceSession::start(&req).unwrap();
    assert!(req.instance_dir().is_dir());
    work();
    let counts = session.stop();
    assert!(!req.instance_dir().exists(), "the instance is removed");
    counts
}

#[test]
fn fsync_on_ext4_commits_the_journal_each_time() {
    if !root_or_skip("fsync_on_ext4_commits_the_journal_each_time") {
        return;
    }
    let tracefs = Tracefs::get();
    let mut lo = LoopDevice::new(256);
    let (mnt, dev) = ext4_on(&mut lo, None);
    let file = mnt.join("f");
    let mut stat = None;
    let synced = traced(&tracefs.path, &dev, || {
        let before = idle_stat(&dev);
        appends(&file, true);
        stat = Some(dev.read().unwrap().since(&before));
    });
    let stat = stat.unwrap();
    assert_eq!(synced.lost_events, 0, "{synced:?}");
    assert!(synced.journal_commits.unwrap() >= 20, "{synced:?}");
    assert!(synced.journal_commit_starts.unwrap() >= 20, "{synced:?}");
    assert!(synced.block_requests > 0 && synced.write_requests > 0, "{synced:?}");
    assert!(synced.seeks > 0, "journal and data are apart: {synced:?}");
    // Two independent counters of the same requests: every request the
    // stat file saw complete inside the trace window was issued in it
    // (none was in flight when it was read), so the trace must have
    // seen it. Alone on the machine the two are equal (106 = 5 reads
    // + 61 writes + 40 flushes here); another test's sync(2) adds
    // requests at the window's edges that only the trace sees.
    let stat_requests = stat.read_ios + stat.write_ios + stat.discard_ios.unwrap() + stat.flush_ios.unwrap();
    assert!(synced.block_requests >= stat_requests, "{synced:?} {stat:?}");
    assert!(synced.flush_requests >= stat.flush_ios.unwrap(), "{synced:?} {stat:?}");
    // A flush per commit at least; two on this kernel, whose loop
    // device has no FUA, so a commit block's PREFLUSH|FUA write becomes
    // a flush, the write, and another flush.
    assert!(stat.flush_ios.unwrap() >= 20, "{stat:?}");
    let lazy = traced(&tracefs.path, &dev, || appends(&file, false));
    assert!(lazy.journal_commits.unwrap() <= 3, "{lazy:?}");
    let mut f = Figures::new();
    add_figures(Some(&synced), "ext4", "", &mut f);
    assert!(f.value("journal_commits").unwrap() >= 20.0);
    assert_eq!(f.value("block_requests"), Some(synced.block_requests as f64));
}

/// An ext4 made on `lo` and mounted with `opts`: its mount point and
/// device. No lazy init: its background writes would race the counters.
fn ext4_on(lo: &mut LoopDevice, opts: Option<&str>) -> (PathBuf, BlockDevice) {
    let mnt = lo.format_and_mount("ext4", &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"], opts);
    (mnt, BlockDevice::from_dev(lo.major, lo.minor).unwrap())
}

/// The device's counters once nothing is in flight on it.
fn idle_stat(dev: &BlockDevice) -> BlockStat {
    for _ in 0..100 {
        let stat = dev.read().unwrap();
        if stat.in_flight == 0 {
            return stat;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{dev:?} stays busy");
}

#[test]
fn fsync_on_xfs_forces_and_writes_the_log_each_time() {
    if !root_or_skip("fsync_on_xfs_forces_and_writes_the_log_each_time") {
        return;
    }
    let tracefs = Tracefs::get();
    // mkfs.xfs refuses file systems under 300 MiB.
    let mut lo = LoopDevice::new(512);
    let mnt = lo.format_and_mount("xfs", &["-q", "-f"], None);
    let dev = BlockDevice::from_dev(lo.major, lo.minor).unwrap();
    let synced = traced(&tracefs.path, &dev, || appends(&mnt.join("f"), true));
    assert!(synced.xfs_log_writes.unwrap() >= 20, "{synced:?}");
    assert!(synced.xfs_log_forces.unwrap() >= 20, "{synced:?}");
    assert!(synced.flush_requests >= 20, "{synced:?}");
    let lazy = traced(&tracefs.path, &dev, || appends(&mnt.join("g"), false));
    assert!(lazy.xfs_log_writes.unwrap() <= 3, "{lazy:?}");
    let mut f = Figures::new();
    add_figures(Some(&synced), "xfs", "", &mut f);
    assert_eq!(f.value("journal_commits"), synced.xfs_log_writes.map(|n| n as f64));
    assert_eq!(f.value("log_forces"), synced.xfs_log_forces.map(|n| n as f64));
}

#[test]
fn a_leftover_instance_is_removed_and_a_clash_is_refused() {
    if !root_or_skip("a_leftover_instance_is_removed") {
        return;
    }
    let tracefs = Tracefs::get();
    let req = TraceRequest { tracefs: tracefs.path.clone(), instance: instance_name(), dev_t_kernel: 7 << 20, model: None };
    let dir = req.instance_dir();
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("events/block/block_rq_issue/enable"), "1").unwrap();
    let err = TraceSession::start(&req).unwrap_err();
    assert!(err.message.contains("fslab cleanup"), "{}", err.message);
    assert!(dir.is_dir(), "a clash leaves the other instance alone");
    remove_instance(&dir).unwrap();
    assert!(!dir.exists());
    remove_instance(&dir).unwrap();
    // A session dropped without stop (a panic) removes its instance.
    drop(TraceSession::start(&req).unwrap());
    assert!(!dir.exists());
}

#[test]
fn a_split_session_counts_the_window_and_what_the_unmount_commits_apart() {
    if !root_or_skip("a_split_session_counts_the_window_and_the_unmount_apart") {
        return;
    }
    let tracefs = Tracefs::get();
    let mut lo = LoopDevice::new(256);
    let (mnt, dev) = ext4_on(&mut lo, Some("data=journal"));
    let req = TraceRequest { tracefs: tracefs.path.clone(), instance: instance_name(), dev_t_kernel: dev.dev_t_kernel(), model: None };
    let mut session = TraceSession::start(&req).unwrap();
    appends(&mnt.join("f"), true);
    let window = session.split().unwrap();
    // After the window: writes nothing syncs, which the unmount commits.
    appends(&mnt.join("g"), false);
    unmount(&mnt).unwrap();
    let later = session.stop();
    assert!(!req.instance_dir().exists(), "the instance is removed");
    assert_eq!((window.lost_events, later.lost_events), (0, 0), "{window:?} {later:?}");
    assert!(window.journal_commits.unwrap() >= 1, "{window:?}");
    assert!(later.journal_commits.unwrap() >= 1, "the unmount commits what was left: {later:?}");
    // data=journal's checkpoint writes the data again, after the window.
    assert!(later.write_requests > 0, "{later:?}");
    let mut f = Figures::new();
    let (value, _) = journal_commits(Some(&later), "ext4", "");
    f.put(&DEFERRED_FIGURES[0], value, "");
    assert_eq!(f.value("deferred_journal_commits"), later.journal_commits.map(|n| n as f64));
}

/// 64 KiB O_DIRECT reads or writes of the bare device at each of
/// `offsets`, one after another; writes end with an fsync, which the
/// device gets as a flush.
fn direct(device: &str, offsets: &[u64], write: bool) {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let file = fs::OpenOptions::new().read(true).write(write).custom_flags(libc::O_DIRECT).open(device).unwrap();
    let mut buf = crate::sys::aligned::AlignedBuf::zeroed(64 << 10);
    for &offset in offsets {
        if write {
            file.write_all_at(buf.as_slice(), offset).unwrap();
        } else {
            file.read_exact_at(buf.as_mut_slice(), offset).unwrap();
        }
    }
    if write {
        file.sync_all().unwrap();
    }
}

/// What the model says of the requests `direct` makes, computed here
/// from the offsets: a replay parked over the first, one at a time.
fn expected(disk: &crate::model::Profile, offsets: &[u64], write: bool) -> crate::model::Modelled {
    use crate::model::{Replay, Request};
    let mut replay = Replay::new(disk, 1);
    replay.park(offsets[0]);
    for &offset in offsets {
        let request = if write { Request::write(offset, 64 << 10) } else { Request::read(offset, 64 << 10) };
        replay.push(request, &mut |_| {}).unwrap();
    }
    if write {
        replay.push(Request::flush(), &mut |_| {}).unwrap();
    }
    replay.finish(&mut |_| {}).unwrap()
}

#[test]
fn direct_requests_on_a_bare_device_cost_what_the_model_says_of_them_and_random_ones_more() {
    if !root_or_skip("direct_requests_cost_what_the_model_says") {
        return;
    }
    let tracefs = Tracefs::get();
    let lo = LoopDevice::new(1024);
    // Whatever udev reads of a new device, before the trace starts.
    let _ = std::process::Command::new("udevadm").arg("settle").status();
    let dev = BlockDevice::from_dev(lo.major, lo.minor).unwrap();
    let disk = crate::model::builtin::find("hdd-7200").unwrap();
    let sequential: Vec<u64> = (0..64).map(|k| (1 << 20) + k * (64 << 10)).collect();
    // 64 places spread over the device, in no order (a multiplicative
    // walk over its 16,384 slots of 64 KiB).
    let random: Vec<u64> = (1..=64u64).map(|k| (k * 7919 % 16_381 + 1) * (64 << 10)).collect();
    let mut seconds = Vec::new();
    for (offsets, write) in [(&sequential, false), (&random, false), (&sequential, true), (&random, true)] {
        let req = TraceRequest {
            tracefs: tracefs.path.clone(),
            instance: instance_name(),
            dev_t_kernel: dev.dev_t_kernel(),
            model: Some((disk.clone(), "work")),
        };
        let session = TraceSession::start(&req).unwrap();
        direct(&lo.device, offsets, write);
        let counts = session.stop();
        assert_eq!(counts.lost_events, 0);
        let model = counts.model.as_ref().expect("modelled");
        let want = expected(&disk, offsets, write);
        assert_eq!(model.modelled.as_ref().unwrap(), &want, "write {write}: the traced stream is the one made");
        let stream = &model.stream;
        use crate::record::RequestOp;
        let op = if write { RequestOp::Write } else { RequestOp::Read };
        let mut made: Vec<(u64, u64, RequestOp)> = offsets.iter().map(|&o| (o, 64 << 10, op)).collect();
        if write {
            made.push((0, 0, RequestOp::Flush));
        }
        let traced: Vec<(u64, u64, RequestOp)> = stream.points.iter().map(|p| (p.offset, p.length, p.op)).collect();
        assert_eq!((stream.requests, stream.every, stream.flushes), (64, 1, u64::from(write)));
        assert_eq!(traced, made);
        let figures = window_reading(Some(&counts), "raw", "").figures;
        assert_eq!(figures.value("modelled_work_s"), Some(want.seconds));
        assert_eq!(figures.value("modelled_seeks"), Some(want.seeks as f64));
        seconds.push(want.seconds);
    }
    // Random reads pay a seek and a turn each, sequential ones their
    // transfer alone: the model's ratio, well past 10 on a 7200 rpm disk.
    let reads = seconds[1] / seconds[0];
    assert!(reads > 10.0, "random reads {} s, sequential {} s", seconds[1], seconds[0]);
    // Writes land in the drive's cache; the flush writes them in one
    // sweep, which still costs the random ones more.
    assert!(seconds[3] > seconds[2], "{seconds:?}");
}
