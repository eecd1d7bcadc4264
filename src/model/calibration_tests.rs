//! The model held to published calibration: each test states the figure
//! the equations or a datasheet give, computed here apart from the engine,
//! and what the engine must come within.

use super::builtin::find;
use super::geometry::Geometry;
use super::profile::{DiskSpec, Drive, Profile};
use super::{Request, replay};

/// A seeded generator for random requests (splitmix64): the same seed
/// gives the same requests everywhere.
pub(super) struct Seeded(u64);

impl Seeded {
    pub(super) fn new(seed: u64) -> Self {
        Seeded(seed)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A 4 KiB-aligned offset for a 4 KiB request anywhere on `capacity`.
    pub(super) fn block(&mut self, capacity: u64) -> u64 {
        (self.next() % (capacity / 4096 - 1)) * 4096
    }
}

pub(super) fn disk_spec(profile: &Profile) -> DiskSpec {
    match &profile.drive {
        Drive::Disk(d) => d.clone(),
        Drive::Ssd(_) => panic!("{} is not a disk", profile.name),
    }
}

/// `profile` with its disk figures changed by `change`.
pub(super) fn with_disk(profile: &Profile, change: impl FnOnce(&mut DiskSpec)) -> Profile {
    let mut spec = disk_spec(profile);
    change(&mut spec);
    Profile { drive: Drive::Disk(spec), ..profile.clone() }
}

fn random_reads(capacity: u64, n: usize, seed: u64) -> Vec<Request> {
    let mut rng = Seeded::new(seed);
    (0..n).map(|_| Request::read(rng.block(capacity), 4096)).collect()
}

/// The mean media rate over the disk, by the equations: the rate squared
/// falls linearly with the byte offset (geometry.rs), so the mean over
/// bytes of the time per byte is ∫ dp / R(p) over C.
fn mean_seconds_per_byte(spec: &DiskSpec) -> f64 {
    let (o, i) = (spec.outer_bytes_per_s as f64, spec.inner_bytes_per_s as f64);
    // ∫₀¹ (o² − (o² − i²) x)^(-1/2) dx = 2 (o − i) / (o² − i²) = 2 / (o + i)
    2.0 / (o + i)
}

#[test]
fn random_4k_reads_at_depth_1_take_average_seek_half_a_turn_and_the_transfer() {
    for name in ["hdd-7200", "hdd-7200-desktop", "hdd-7200-2009", "scsi-15k-2004", "laptop-5400"] {
        let profile = find(name).unwrap();
        let spec = disk_spec(&profile);
        let n = 20_000;
        let m = replay(&profile, random_reads(spec.capacity_bytes, n, 7), 1).unwrap();
        let half_turn = 30.0 / f64::from(spec.rpm);
        let expected = spec.average_seek_s + half_turn + 4096.0 * mean_seconds_per_byte(&spec);
        let mean = m.seconds / n as f64;
        let off = (mean - expected) / expected;
        assert!(off.abs() < 0.05, "{name}: {:.3} ms a read, expected {:.3} ms ({:+.1}%)", mean * 1e3, expected * 1e3, off * 100.0);
        assert_eq!(m.reads, n as u64);
    }
}

#[test]
fn a_sequential_read_runs_at_the_media_rate_where_it_lies() {
    let profile = find("hdd-7200").unwrap();
    let spec = disk_spec(&profile);
    let (o, i) = (spec.outer_bytes_per_s as f64, spec.inner_bytes_per_s as f64);
    let c = spec.capacity_bytes as f64;
    let bytes: u64 = 64 << 20;
    for at in [0, spec.capacity_bytes / 2, spec.capacity_bytes - bytes] {
        let reads = (0..bytes / (128 << 10)).map(|k| Request::read(at + k * (128 << 10), 128 << 10));
        let m = {
            let mut drive = super::device(&profile);
            drive.park(at);
            super::queue::replay(drive.as_mut(), &profile, reads, 1).unwrap()
        };
        // R(p)² = o² − (o² − i²) p / C, taken at the middle of the stretch.
        let mid = at as f64 + bytes as f64 / 2.0;
        let rate = (o * o - (o * o - i * i) * mid / c).sqrt();
        let got = bytes as f64 / m.seconds;
        assert!((got - rate).abs() / rate < 1e-3, "at {at}: {got} bytes/s, expected {rate}");
        assert_eq!(m.positioning_s, 0.0, "a stream never waits");
        assert_eq!(m.seeks, 0);
    }
}

#[test]
fn a_flush_after_scattered_writes_costs_their_destaging() {
    let cached = find("hdd-7200-2009").unwrap();
    let through = with_disk(&cached, |d| d.write_cache = false);
    let spec = disk_spec(&cached);
    let mut rng = Seeded::new(11);
    let writes: Vec<Request> = (0..64).map(|_| Request::write(rng.block(spec.capacity_bytes), 4096)).collect();

    let before = replay(&cached, writes.iter().copied(), 1).unwrap();
    assert_eq!(before.seconds, 0.0, "cached writes complete at once");
    assert_eq!(before.dirty_left_bytes, 64 * 4096);

    let flushed = replay(&cached, writes.iter().copied().chain([Request::flush()]), 1).unwrap();
    assert_eq!(flushed.destaged_bytes, 64 * 4096);
    assert_eq!(flushed.dirty_left_bytes, 0);

    // Destaging is writing them through in elevator order from the arm
    // (at byte 0): ascending.
    let mut sorted = writes.clone();
    sorted.sort_by_key(|w| w.offset);
    let direct = replay(&through, sorted, 1).unwrap();
    assert!((flushed.seconds - direct.seconds).abs() < 1e-12, "{} vs {}", flushed.seconds, direct.seconds);

    // Each costs a short seek (64 writes sweep the disk once) and a
    // fraction of a turn: more than nothing, less than a random write.
    let per_write = flushed.seconds / 64.0;
    let turn = 60.0 / f64::from(spec.rpm);
    assert!(per_write > spec.track_to_track_s && per_write < spec.average_seek_s + turn, "{per_write}");

    // A second flush, with nothing dirty, costs nothing.
    let twice = replay(&cached, writes.iter().copied().chain([Request::flush(), Request::flush()]), 1).unwrap();
    assert_eq!(twice.seconds, flushed.seconds);
}

#[test]
fn a_flush_costs_tens_of_microseconds_with_power_loss_protection_and_milliseconds_without() {
    let fsyncs = |name: &str| {
        let trace = (0..100u64).flat_map(|k| [Request::write(k * 4096, 4096), Request::flush()]);
        replay(&find(name).unwrap(), trace, 1).unwrap().seconds / 100.0
    };
    let (plp, no_plp) = (fsyncs("ssd-plp"), fsyncs("ssd-no-plp"));
    // A 4 KiB write and its flush, by the profiles' figures.
    let plp_expected = 65e-6 + 4096.0 / 460e6 + 20e-6;
    let no_plp_expected = 17e-6 + 4096.0 / 520e6 + 2e-3;
    assert!((plp - plp_expected).abs() < 1e-9, "{plp}");
    assert!((no_plp - no_plp_expected).abs() < 1e-9, "{no_plp}");
    assert!(plp < 100e-6, "tens of µs: {plp}");
    assert!(no_plp > 1e-3, "milliseconds: {no_plp}");
}

#[test]
fn queueing_reorders_shortest_positioning_first_and_beats_depth_1_on_random_reads() {
    let profile = find("hdd-7200").unwrap();
    let spec = disk_spec(&profile);
    // Far then near: at depth 2 the near one goes first, exactly as if
    // issued first.
    let far = Request::read(spec.capacity_bytes - (1 << 20), 4096);
    let near = Request::read(1 << 20, 4096);
    let in_order = replay(&profile, [far, near], 1).unwrap();
    let reordered = replay(&profile, [far, near], 2).unwrap();
    let near_first = replay(&profile, [near, far], 1).unwrap();
    assert_eq!(reordered.seconds, near_first.seconds);
    assert!(reordered.seconds < in_order.seconds);

    let reads = random_reads(spec.capacity_bytes, 4000, 3);
    let qd1 = replay(&profile, reads.iter().copied(), 1).unwrap();
    let qd32 = replay(&profile, reads.iter().copied(), 32).unwrap();
    let gain = qd1.seconds / qd32.seconds;
    assert!(gain > 1.8, "depth 32 only {gain:.2} times depth 1");
    assert_eq!(qd32.reads, 4000);
}

#[test]
fn a_request_continuing_where_the_head_is_costs_only_its_transfer() {
    // Write cache off, so writes go to the media.
    let profile = find("scsi-15k-2004").unwrap();
    let g = Geometry::new(&disk_spec(&profile));
    let at = 10 << 30;
    for (first, second) in [
        (Request::write(at, 64 << 10), Request::write(at + (64 << 10), 64 << 10)),
        (Request::read(at, 64 << 10), Request::read(at + (64 << 10), 64 << 10)),
    ] {
        let one = replay(&profile, [first], 1).unwrap();
        let two = replay(&profile, [first, second], 1).unwrap();
        let transfer = (g.track(at + (128 << 10)) - g.track(at + (64 << 10))) * g.revolution();
        assert!((two.seconds - one.seconds - transfer).abs() < 1e-12, "{:?}", second.op);
        assert_eq!(two.positioning_s, one.positioning_s);
        assert_eq!(two.seeks, one.seeks);
    }
}

#[test]
fn the_track_buffer_serves_a_re_read() {
    let profile = find("hdd-7200-2009").unwrap();
    let (a, b) = (Request::read(5 << 30, 4096), Request::read(500 << 30, 4096));
    let twice = replay(&profile, [a, b], 1).unwrap();
    let thrice = replay(&profile, [a, b, a], 1).unwrap();
    assert_eq!(thrice.seconds, twice.seconds, "the re-read costs nothing");
    assert_eq!(thrice.buffer_hits, 1);
    // With one segment, b's read takes a's place and the re-read goes to
    // the media again.
    let one_segment = with_disk(&profile, |d| d.segments = 1);
    let again = replay(&one_segment, [a, b, a], 1).unwrap();
    assert_eq!(again.buffer_hits, 0);
    assert!(again.seconds > twice.seconds + 1e-3);
}
