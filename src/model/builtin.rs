//! The drives the model knows by name, each with where its figures come
//! from (`fslab list --disks` shows them; a profile file adds one).
//!
//! A profile's `source` opens with the datasheet or drive it rests on, up
//! to its first colon (what a listing's `source` column shows), then the
//! figures taken from it and what was assumed where it says nothing.
//! Assumptions shared by the rotating disks here:
//! - the inner-diameter rate is half the outer one, unless the datasheet
//!   gives both (Hitachi's Deskstar 7K500 specification: 64.8 MB/s
//!   sustained in zone 0, 31.0 in zone 29, 0.48 of it);
//! - a full stroke not on the datasheet is 1.7 times the average seek, the
//!   ratio of Hitachi's Travelstar 5K320 (20 / 12 ms) and IBM's Deskstar
//!   75GXP (14.7 / 8.5 ms);
//! - the buffer is cut into 16 read segments.
//!
//! Rates are datasheet MB/s (10^6 bytes a second), as bytes a second.

use super::profile::{DiskSpec, Drive, Profile, SsdSpec};
use crate::error::{Error, Result};

const MB: u64 = 1_000_000;
const GB: u64 = 1_000_000_000;
const MIB: u64 = 1 << 20;

/// A rotating disk's profile from its figures.
fn disk(name: &str, about: &str, source: &str, spec: DiskSpec) -> Profile {
    Profile { name: name.into(), about: about.into(), source: source.into(), drive: Drive::Disk(spec) }
}

/// An SSD's profile from its figures.
fn ssd(name: &str, about: &str, source: &str, spec: SsdSpec) -> Profile {
    Profile { name: name.into(), about: about.into(), source: source.into(), drive: Drive::Ssd(spec) }
}

/// The drive a run models when not told (`--disk`).
pub const DEFAULT: &str = "hdd-7200";

/// Every built-in profile, in the order a listing shows them.
pub fn builtin() -> Vec<Profile> {
    vec![
        disk(
            "hdd-7200",
            "a current 7200 rpm drive, from its datasheet figures",
            "WD Ultrastar DC HC310 class: a current 7200 rpm drive in round figures, 0.6 ms track-to-track and \
             8.0 ms average read seek and 205 MB/s at the outer diameter (the HC310's specification gives 0.23 ms \
             single-track, 7.4 ms average read seek, 4.16 ms average latency and a 256 MB buffer); assumed: full \
             stroke 1.7 x average, inner rate half the outer, 4 TB, 8 heads, 256 MiB buffer, write cache on, NCQ 32",
            DiskSpec {
                capacity_bytes: 4000 * GB,
                rpm: 7200,
                heads: 8,
                track_to_track_s: 0.6e-3,
                average_seek_s: 8.0e-3,
                full_stroke_s: 13.6e-3,
                outer_bytes_per_s: 205 * MB,
                inner_bytes_per_s: 102_500_000,
                buffer_bytes: 256 * MIB,
                segments: 16,
                write_cache: true,
                queue_depth: 32,
            },
        ),
        disk(
            "hdd-7200-desktop",
            "a slower desktop 7200 rpm drive",
            "WD Blue 1 TB desktop class: a 7200 rpm, 1 TB drive with a 64 MB buffer (WD10EZEX), in a slower \
             desktop drive's round figures, 1.0 ms track-to-track, 13.0 ms average seek and 150 MB/s at the outer \
             diameter; assumed: full stroke 1.7 x average, inner rate half the outer, 4 heads, 64 MiB buffer, write \
             cache on, NCQ 32",
            DiskSpec {
                capacity_bytes: 1000 * GB,
                rpm: 7200,
                heads: 4,
                track_to_track_s: 1.0e-3,
                average_seek_s: 13.0e-3,
                full_stroke_s: 22.1e-3,
                outer_bytes_per_s: 150 * MB,
                inner_bytes_per_s: 75 * MB,
                buffer_bytes: 64 * MIB,
                segments: 16,
                write_cache: true,
                queue_depth: 32,
            },
        ),
        disk(
            "hdd-7200-2009",
            "seed 000's 2009 desktop disk: a 7200 rpm drive that streams 70 MB/s",
            "Seagate Barracuda 7200.10 class: 0.8 ms track-to-track, 8.5 ms average read seek and 4.16 ms \
             average latency, the class's figures (ST3750640AS: 750 GB, 8 heads, 16 MB \
             buffer); 70 MB/s at the outer diameter, the streaming rate of seed 000's disk; assumed: full stroke \
             1.7 x average, inner rate half the outer, write cache on and NCQ 32, as SATA drives ship",
            DiskSpec {
                capacity_bytes: 750 * GB,
                rpm: 7200,
                heads: 8,
                track_to_track_s: 0.8e-3,
                average_seek_s: 8.5e-3,
                full_stroke_s: 14.5e-3,
                outer_bytes_per_s: 70 * MB,
                inner_bytes_per_s: 35 * MB,
                buffer_bytes: 16 * MIB,
                segments: 16,
                write_cache: true,
                queue_depth: 32,
            },
        ),
        disk(
            "scsi-15k-2004",
            "a 2004 15,000 rpm SCSI disk",
            "Seagate Cheetah 15K.4 manual: ST3146854, 146.8 GB, 8 heads, 8 MB buffer, 0.2 ms \
             track-to-track and 3.5 ms average read seek, 2.0 ms average latency, 96 to 58 MB/s sustained from \
             the outer to the inner zone; assumed: full stroke 1.7 x average, write cache off, as such disks ran \
             behind RAID controllers (a profile file can turn it on), tagged queue 64",
            DiskSpec {
                capacity_bytes: 146_800 * MB,
                rpm: 15_000,
                heads: 8,
                track_to_track_s: 0.2e-3,
                average_seek_s: 3.5e-3,
                full_stroke_s: 6.0e-3,
                outer_bytes_per_s: 96 * MB,
                inner_bytes_per_s: 58 * MB,
                buffer_bytes: 8 * MIB,
                segments: 16,
                write_cache: false,
                queue_depth: 64,
            },
        ),
        disk(
            "laptop-5400",
            "a 2008 laptop 5400 rpm disk",
            "Hitachi Travelstar 5K320 spec: its OEM specification, 320 GB, 4 heads, 8 MB buffer, 1.0 ms single-track, 12 \
             ms average and 20 ms full-stroke read seek, 5.5 ms average latency; assumed: 65 MB/s at the outer \
             diameter (the pages read give no media rate) and half that inside, write cache on, NCQ 32",
            DiskSpec {
                capacity_bytes: 320 * GB,
                rpm: 5400,
                heads: 4,
                track_to_track_s: 1.0e-3,
                average_seek_s: 12.0e-3,
                full_stroke_s: 20.0e-3,
                outer_bytes_per_s: 65 * MB,
                inner_bytes_per_s: 32_500_000,
                buffer_bytes: 8 * MIB,
                segments: 16,
                write_cache: true,
                queue_depth: 32,
            },
        ),
        ssd(
            "ssd-plp",
            "a datacenter SATA SSD with power-loss protection",
            "Intel SSD DC S3700 spec: its product specification, 400 GB, 50 µs read and 65 µs write latency, 500 / 460 MB/s \
             sequential, 75,000 random 4 KiB reads a second at queue depth 32 (so 4 commands in parallel: 4 / \
             (50 µs + 4 KiB at 500 MB/s) = 69,000), enhanced power-loss data protection; assumed: a flush then \
             costs a command round trip, 20 µs (Mark Callaghan's 'SSDs, power loss protection and fsync latency', \
             smalldatum.blogspot.com, measured 12 to 58 µs on drives with it)",
            SsdSpec {
                capacity_bytes: 400 * GB,
                read_latency_s: 50e-6,
                write_latency_s: 65e-6,
                read_bytes_per_s: 500 * MB,
                write_bytes_per_s: 460 * MB,
                parallel: 4,
                flush_s: 20e-6,
                power_loss_protection: true,
                queue_depth: 32,
            },
        ),
        ssd(
            "ssd-no-plp",
            "a consumer SATA SSD without power-loss protection",
            "Samsung 850 EVO spec: its specification, 1 TB, 540 / 520 MB/s sequential, 10,000 random 4 KiB reads and 40,000 \
             writes a second at queue depth 1 (so 92 µs read and 17 µs write latency once the 4 KiB transfer is \
             taken out), 98,000 reads at queue depth 32 (10 in parallel), no power-loss protection; assumed: a \
             flush programs what its cache holds, 2 ms (the same measurements: about a millisecond and more on \
             drives without it)",
            SsdSpec {
                capacity_bytes: 1000 * GB,
                read_latency_s: 92e-6,
                write_latency_s: 17e-6,
                read_bytes_per_s: 540 * MB,
                write_bytes_per_s: 520 * MB,
                parallel: 10,
                flush_s: 2e-3,
                power_loss_protection: false,
                queue_depth: 32,
            },
        ),
    ]
}

/// The built-in profile called `name`.
pub fn find(name: &str) -> Option<Profile> {
    builtin().into_iter().find(|p| p.name == name)
}

/// The profile called `name` among the built-in ones and `added` (from
/// profile files); an unknown name is bad input (exit 2) listing the known.
pub fn by_name(name: &str, added: &[Profile]) -> Result<Profile> {
    let all = all(added);
    if let Some(p) = all.iter().find(|p| p.name == name) {
        return Ok(p.clone());
    }
    let known: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
    Err(Error::usage(format!(
        "no disk profile `{}`; the known ones are {} (or add one with a profile file)",
        crate::text::escape(name),
        known.join(", ")
    )))
}

/// The built-in profiles, then `added` (from profile files): what a
/// listing shows, in its order.
pub fn all(added: &[Profile]) -> Vec<Profile> {
    builtin().into_iter().chain(added.iter().cloned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_profile_passes_its_checks_and_names_are_unique() {
        let all = builtin();
        for p in &all {
            p.check().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
        let mut names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for p in &all {
            let (named, _) = p.source.split_once(':').unwrap_or_else(|| panic!("{}: its source names its datasheet first", p.name));
            assert!(named.chars().count() <= 32, "{}: `{named}` fits the listing's source column", p.name);
        }
    }

    #[test]
    fn a_source_names_the_datasheet_class_a_reader_can_look_up() {
        // A user has the datasheets, not this project's issue tracker: a
        // source that cites an issue sends them nowhere.
        for p in builtin() {
            for text in [&p.about, &p.source] {
                assert!(!text.to_lowercase().contains("issue"), "{}: {text}", p.name);
            }
        }
        let (named, _) = find("hdd-7200").unwrap().source.split_once(':').map(|(n, r)| (n.to_string(), r.to_string())).unwrap();
        assert_eq!(named, "WD Ultrastar DC HC310 class");
    }

    #[test]
    fn an_unknown_name_is_refused_listing_the_known_ones() {
        let e = by_name("hdd-7201", &[]).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(e.message.contains("hdd-7200-2009") && e.message.contains("ssd-plp"), "{}", e.message);
        assert_eq!(by_name("laptop-5400", &[]).unwrap().name, "laptop-5400");
    }
}
