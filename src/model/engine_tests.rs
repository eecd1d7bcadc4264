//! The engine's other promises: layouts cost what the equations say,
//! results repeat to the bit, bad requests are refused, caches and queues
//! behave as stated.

use super::builtin::find;
use super::calibration_tests::{Seeded, disk_spec, with_disk};
use super::geometry::Geometry;
use super::seek::SeekCurve;
use super::{Replay, Request, Served, Span, read_layout, replay};
use crate::error::ErrorKind;

/// The time to read `extents` extents of `64 MiB / extents` each, `gap`
/// bytes apart, from `start`, by the equations alone: every byte at the
/// media rate where it lies, and between extents a seek over the
/// cylinders crossed and the turn of the platter to the next one.
fn by_the_equations(g: &Geometry, curve: &SeekCurve, start: u64, extents: u64, gap: u64) -> f64 {
    let length = (64 << 20) / extents;
    let turn = g.revolution();
    let mut total = 0.0;
    for k in 0..extents {
        let s = start + k * (length + gap);
        total += (g.track(s + length) - g.track(s)) * turn;
        if k + 1 < extents {
            let (from, to) = (s + length, s + length + gap);
            let seek = curve.time(g.cylinder(to).abs_diff(g.cylinder(from)));
            let phase = (g.track(to) - g.track(from)) - seek / turn;
            total += seek + (phase - phase.floor()) * turn;
        }
    }
    total
}

#[test]
fn layouts_of_1_64_and_4096_extents_cost_what_the_equations_say() {
    let profile = find("hdd-7200-2009").unwrap();
    let spec = disk_spec(&profile);
    let g = Geometry::new(&spec);
    let curve = SeekCurve::fit(spec.track_to_track_s, spec.average_seek_s, spec.full_stroke_s, g.cylinders()).unwrap();
    let (start, gap) = (1 << 30, 4 << 20); // gaps beyond a 1 MiB read-ahead
    let mut times = Vec::new();
    for extents in [1u64, 64, 4096] {
        let length = (64 << 20) / extents;
        let spans: Vec<Span> = (0..extents).map(|k| Span { physical: start + k * (length + gap), length }).collect();
        let cost = read_layout(&profile, &[spans]).unwrap();
        let expected = by_the_equations(&g, &curve, start, extents, gap);
        let off = (cost.read.seconds - expected).abs() / expected;
        assert!(off < 1e-9, "{extents} extents: {} s, the equations {} s", cost.read.seconds, expected);
        assert_eq!(cost.read.read_bytes, 64 << 20);
        let ideal = by_the_equations(&g, &curve, start, 1, 0);
        assert!((cost.ideal.seconds - ideal).abs() / ideal < 1e-9);
        times.push((extents, cost.read.seconds, cost.ratio().unwrap()));
    }
    assert_eq!(times[0].2, 1.0, "one extent is the ideal");
    assert!(times[0].1 < times[1].1 && times[1].1 < times[2].1, "{times:?}");
    // The ratios as the equations give them.
    let ideal = by_the_equations(&g, &curve, start, 1, 0);
    for &(extents, _, ratio) in &times[1..] {
        let expected = by_the_equations(&g, &curve, start, extents, gap) / ideal;
        assert!((ratio - expected).abs() / expected < 1e-9, "{extents}: {ratio} vs {expected}");
    }
}

#[test]
fn a_small_forward_gap_is_read_through_when_that_is_sooner() {
    // Extents 16 KiB apart across a cylinder's end: the read-ahead reaches
    // the next one sooner than a seek and the platter's turn would, so each
    // gap costs its bytes' time and the arm never seeks.
    let profile = find("hdd-7200-2009").unwrap();
    let spec = disk_spec(&profile);
    let g = Geometry::new(&spec);
    // Cylinder 200 starts within the 4 KiB after `last`; the eighth gap
    // runs from 8 KiB before it to 8 KiB after.
    let last = g.bytes_before(f64::from(spec.heads) * 200.0) as u64 / 4096 * 4096;
    assert_eq!((g.cylinder(last), g.cylinder(last + 4096)), (199, 200));
    let (length, gap) = (64u64 << 10, 16u64 << 10);
    let start = last - 8192 - 8 * length - 7 * gap;
    let spans: Vec<Span> = (0..16).map(|k| Span { physical: start + k * (length + gap), length }).collect();
    let cost = read_layout(&profile, &[spans]).unwrap();
    let end = start + 16 * (length + gap) - gap;
    let through = (g.track(end) - g.track(start)) * g.revolution();
    assert!((cost.read.seconds - through).abs() / through < 1e-9, "{} vs {through}", cost.read.seconds);
    assert_eq!(cost.read.seeks, 0);
}

/// 5,000 requests at random places: a flush, two writes and four reads in
/// every seven, 4 to 128 KiB each.
fn mixed_stream(profile: &crate::model::Profile) -> Vec<Request> {
    let mut rng = Seeded::new(5);
    let capacity = profile.capacity_bytes();
    (0..5000)
        .map(|k| match k % 7 {
            0 => Request::flush(),
            1 | 2 => Request::write(rng.block(capacity), 4096 * (1 + rng.next() % 32)),
            _ => Request::read(rng.block(capacity), 4096 * (1 + rng.next() % 32)),
        })
        .collect()
}

#[test]
fn the_same_stream_gives_the_same_figures_to_the_bit() {
    let profile = find("hdd-7200-2009").unwrap();
    let trace = mixed_stream(&profile);
    let a = replay(&profile, trace.iter().copied(), 8).unwrap();
    let b = replay(&profile, trace.iter().copied(), 8).unwrap();
    assert_eq!(a, b);
    // Pinned: a change of these bits is a change of the model, to be said.
    assert_eq!(a.seconds.to_bits(), GOLDEN_SECONDS_BITS, "{} s ({:#x})", a.seconds, a.seconds.to_bits());
}

/// The modelled seconds of the stream above.
const GOLDEN_SECONDS_BITS: u64 = 0x404a_89ef_8cff_31ad;

#[test]
fn a_stream_given_request_by_request_costs_what_it_costs_whole() {
    let profile = find("hdd-7200-2009").unwrap();
    let trace = mixed_stream(&profile);
    for depth in [1, 8, 32] {
        let whole = replay(&profile, trace.iter().copied(), depth).unwrap();
        let mut given = Replay::new(&profile, depth);
        let mut served: Vec<Served> = Vec::new();
        let mut seqs = Vec::new();
        for (k, request) in trace.iter().enumerate() {
            seqs.push(given.push(*request, &mut |s| served.push(*s)).unwrap());
            // An empty read between: skipped, as a whole replay skips it.
            if k % 100 == 0 {
                assert_eq!(given.push(Request::read(4096, 0), &mut |s| served.push(*s)).unwrap(), None);
            }
            // Bounded: what is not yet served is at most the queue and
            // the requests waiting to be issued into it.
            assert!(seqs.len() - served.len() <= 2 * depth as usize + 1, "depth {depth}: {} waiting", seqs.len() - served.len());
        }
        let modelled = given.finish(&mut |s| served.push(*s)).unwrap();
        assert_eq!(modelled, whole, "depth {depth}");
        assert_eq!(seqs, (0..5000).map(Some).collect::<Vec<_>>());
        // Every request served once, each completing after it started and
        // no later than the stream's end; at depth 1 in issue order.
        let mut order: Vec<u64> = served.iter().map(|s| s.seq).collect();
        if depth == 1 {
            assert!(order.windows(2).all(|w| w[0] < w[1]));
        }
        order.sort_unstable();
        assert_eq!(order, (0..5000).collect::<Vec<_>>());
        assert!(served.iter().all(|s| s.start <= s.done && s.done <= modelled.seconds));
        assert!(served.iter().all(|s| s.request == trace[s.seq as usize]));
    }
    let depth8 = replay(&profile, trace.iter().copied(), 8).unwrap();
    assert_eq!(depth8.seconds.to_bits(), GOLDEN_SECONDS_BITS, "the whole stream still costs what it did");
}

#[test]
fn a_request_past_the_disk_is_refused_naming_the_profile_and_empty_ones_are_skipped() {
    let profile = find("laptop-5400").unwrap();
    let past = Request::read(profile.capacity_bytes() - 4096, 8192);
    let e = replay(&profile, [Request::read(0, 4096), past], 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage);
    assert!(e.message.contains("laptop-5400") && e.message.contains("beyond"), "{}", e.message);
    let e = replay(&profile, [Request::write(u64::MAX - 1, 4096)], 1).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage);
    let m = replay(&profile, [Request::read(4096, 0), Request::write(0, 0)], 1).unwrap();
    assert_eq!((m.requests, m.seconds), (0, 0.0));
    let e = read_layout(&profile, &[[Span { physical: profile.capacity_bytes(), length: 4096 }]]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage);
    // Offsets no device has, where adding a length passes 2^64: refused,
    // never an overflow.
    let top = u64::MAX - 100;
    let e = read_layout(&profile, &[[Span { physical: top, length: 4096 }, Span { physical: top, length: 4096 }]]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage);
    let e = read_layout(&profile, &[[Span { physical: top, length: 300 << 10 }]]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage);
}

#[test]
fn a_full_write_cache_destages_to_make_room_and_fua_writes_go_through() {
    let profile = find("hdd-7200-2009").unwrap(); // 16 MiB of write cache
    let capacity = profile.capacity_bytes();
    let mut rng = Seeded::new(9);
    let writes: Vec<Request> = (0..20).map(|_| Request::write(rng.block(capacity), 1 << 20)).collect();
    let m = replay(&profile, writes.iter().copied(), 1).unwrap();
    assert!(m.destaged_bytes >= 4 << 20, "{}", m.destaged_bytes);
    assert!(m.seconds > 0.0);
    assert_eq!(m.dirty_left_bytes + m.destaged_bytes, 20 << 20);

    let fua = replay(&profile, [Request::write(1 << 30, 4096).with_fua()], 1).unwrap();
    assert!(fua.seconds > 0.0);
    assert_eq!(fua.dirty_left_bytes, 0);
    // A FUA write replaces what the cache held of it.
    let over = replay(&profile, [Request::write(1 << 30, 8192), Request::write(1 << 30, 4096).with_fua()], 1).unwrap();
    assert_eq!(over.dirty_left_bytes, 4096);
}

#[test]
fn a_read_of_what_the_cache_holds_is_a_hit_and_a_flush_divides_what_it_destages() {
    let profile = find("hdd-7200-2009").unwrap();
    let m = replay(&profile, [Request::write(3 << 30, 65536), Request::read(3 << 30, 4096)], 1).unwrap();
    assert_eq!((m.buffer_hits, m.seconds), (1, 0.0));
    let m = replay(&profile, [Request::write(3 << 30, 4096), Request::flush(), Request::write(9 << 30, 4096)], 32).unwrap();
    assert_eq!((m.destaged_bytes, m.dirty_left_bytes), (4096, 4096), "the write after the flush waits for it");
}

#[test]
fn an_ssd_runs_at_its_datasheet_rates_queued_and_not() {
    let iops = |name: &str, depth: u32| {
        let profile = find(name).unwrap();
        let mut rng = Seeded::new(1);
        let reads: Vec<Request> = (0..20_000).map(|_| Request::read(rng.block(profile.capacity_bytes()), 4096)).collect();
        20_000.0 / replay(&profile, reads, depth).unwrap().seconds
    };
    // Samsung 850 EVO: 10,000 at depth 1, 98,000 at 32; Intel DC S3700: 75,000 at 32.
    for (name, depth, datasheet, within) in [("ssd-no-plp", 1, 10_000.0, 0.05), ("ssd-no-plp", 32, 98_000.0, 0.05), ("ssd-plp", 32, 75_000.0, 0.1)] {
        let got = iops(name, depth);
        assert!((got - datasheet).abs() / datasheet < within, "{name} at {depth}: {got:.0} reads a second");
    }
    // Sequential 1 MiB reads run at the link's rate.
    let profile = find("ssd-plp").unwrap();
    let m = replay(&profile, (0..256u64).map(|k| Request::read(k << 20, 1 << 20)), 32).unwrap();
    let rate = (256u64 << 20) as f64 / m.seconds;
    assert!((rate - 500e6).abs() / 500e6 < 0.01, "{rate}");
}

#[test]
fn a_disk_with_its_write_cache_off_pays_for_every_write() {
    let cached = find("hdd-7200").unwrap();
    let through = with_disk(&cached, |d| d.write_cache = false);
    let mut rng = Seeded::new(2);
    let writes: Vec<Request> = (0..200).map(|_| Request::write(rng.block(cached.capacity_bytes()), 4096)).collect();
    let on = replay(&cached, writes.iter().copied(), 1).unwrap();
    let off = replay(&through, writes.iter().copied(), 1).unwrap();
    assert_eq!(on.seconds, 0.0);
    assert!(off.seconds / 200.0 > 8e-3, "each a random write: {}", off.seconds / 200.0);
}

#[test]
fn an_ssd_without_power_loss_protection_holds_what_was_written_until_a_flush() {
    let writes = || (0..8u64).map(|k| Request::write(k << 20, 4096));
    let no_plp = find("ssd-no-plp").unwrap();
    assert_eq!(replay(&no_plp, writes(), 1).unwrap().dirty_left_bytes, 8 * 4096);
    assert_eq!(replay(&no_plp, writes().chain([Request::flush()]), 1).unwrap().dirty_left_bytes, 0);
    assert_eq!(replay(&find("ssd-plp").unwrap(), writes(), 1).unwrap().dirty_left_bytes, 0, "its cache survives a power loss");
}
