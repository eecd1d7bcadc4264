//! The drives the model knows by name, each with where its figures come
//! from (`fslab list --disks` will show them; a profile file adds one).
//!
//! Where a datasheet says nothing the figure is an assumption, said as
//! such in `source`. Assumptions shared by every rotating disk here:
//! - the inner-diameter rate is half the outer one (Hitachi's Deskstar
//!   7K500 specification: 64.8 MB/s sustained in zone 0, 31.0 in zone 29,
//!   0.48 of it), unless the datasheet gives both;
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
#[allow(clippy::too_many_arguments)]
fn disk(name: &str, about: &str, source: &str, spec: DiskSpec) -> Profile {
    Profile { name: name.into(), about: about.into(), source: source.into(), drive: Drive::Disk(spec) }
}

/// Every built-in profile, in the order a listing shows them.
pub fn builtin() -> Vec<Profile> {
    vec![
        disk(
            "hdd-7200",
            "a current 7200 rpm drive, from its datasheet figures",
            "issue 30's figures for a current 7200 rpm datasheet drive: 0.6 ms track-to-track and 8.0 ms average \
             read seek, 205 MB/s at the outer diameter (WD's Ultrastar DC HC310 specification is of the class: \
             0.23 ms single-track, 7.4 ms average read seek, 4.16 ms average latency); full stroke 1.7 x average; \
             inner rate half the outer; 4 TB, 8 heads, 256 MiB buffer, write cache on, NCQ 32 (assumed, typical \
             of the class)",
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
            "issue 30's figures for a slower desktop 7200 rpm drive: 1.0 ms track-to-track, 13.0 ms average seek, \
             150 MB/s; full stroke 1.7 x average; inner rate half the outer; 1 TB, 4 heads, 64 MiB buffer, write \
             cache on, NCQ 32 (assumed)",
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
            "Seagate Barracuda 7200.10 class (ST3750640AS, 750 GB, 4 platters, 8 heads, 16 MB buffer): 0.8 ms \
             track-to-track, 8.5 ms average read seek, 4.16 ms average latency; 70 MB/s at the outer diameter as \
             seed 000 states its disk ('a 7200rpm disk that can do 70MB/s sequential'); full stroke 1.7 x average; \
             inner rate half the outer; write cache on and NCQ 32, as SATA drives ship",
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
            "Seagate Cheetah 15K.4 (ST3146854, 146.8 GB, 8 heads, 8 MB buffer): 0.2 ms track-to-track and 3.5 ms \
             average read seek, 2.0 ms average latency, 96 to 58 MB/s sustained from the outer to the inner \
             zone; full stroke 1.7 x average; write cache off, as such disks ran behind RAID controllers (a \
             profile file can turn it on); tagged queue 64",
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
            "Hitachi Travelstar 5K320 (320 GB, 2 platters, 4 heads, 8 MB buffer): 1.0 ms single-track, 12 ms \
             average and 20 ms full-stroke read seek, 5.5 ms average latency (its OEM specification); 65 MB/s at \
             the outer diameter (assumed: the specification pages read give no media rate) and half that inside; \
             write cache on, NCQ 32",
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
        Profile {
            name: "ssd-plp".into(),
            about: "a datacenter SATA SSD with power-loss protection".into(),
            source: "Intel SSD DC S3700 (400 GB) product specification: 50 us read and 65 us write latency, 500 / \
                     460 MB/s sequential, 75,000 random 4 KiB reads a second at queue depth 32 (so 4 commands in \
                     parallel: 4 / (50 us + 4 KiB at 500 MB/s) = 69,000), enhanced power-loss data protection; a \
                     flush then costs a command round trip, 20 us (assumed; fsync on such drives measures tens of \
                     us, Callaghan, smalldatum.blogspot.com, 2025)"
                .into(),
            drive: Drive::Ssd(SsdSpec {
                capacity_bytes: 400 * GB,
                read_latency_s: 50e-6,
                write_latency_s: 65e-6,
                read_bytes_per_s: 500 * MB,
                write_bytes_per_s: 460 * MB,
                parallel: 4,
                flush_s: 20e-6,
                power_loss_protection: true,
                queue_depth: 32,
            }),
        },
        Profile {
            name: "ssd-no-plp".into(),
            about: "a consumer SATA SSD without power-loss protection".into(),
            source: "Samsung 850 EVO (1 TB) specification: 540 / 520 MB/s sequential, 10,000 random 4 KiB reads \
                     and 40,000 writes a second at queue depth 1 (so 92 us read and 17 us write latency once the \
                     4 KiB transfer is taken out), 98,000 reads at queue depth 32 (10 in parallel); no power-loss \
                     protection, so a flush programs what its cache holds: 2 ms (assumed; fsync on consumer SSDs \
                     without it measures milliseconds, Callaghan, smalldatum.blogspot.com, 2025)"
                .into(),
            drive: Drive::Ssd(SsdSpec {
                capacity_bytes: 1000 * GB,
                read_latency_s: 92e-6,
                write_latency_s: 17e-6,
                read_bytes_per_s: 540 * MB,
                write_bytes_per_s: 520 * MB,
                parallel: 10,
                flush_s: 2e-3,
                power_loss_protection: false,
                queue_depth: 32,
            }),
        },
    ]
}

/// The built-in profile called `name`.
pub fn find(name: &str) -> Option<Profile> {
    builtin().into_iter().find(|p| p.name == name)
}

/// The profile called `name` among the built-in ones and `added` (from
/// profile files); an unknown name is bad input (exit 2) listing the known.
pub fn by_name(name: &str, added: &[Profile]) -> Result<Profile> {
    let all: Vec<Profile> = builtin().into_iter().chain(added.iter().cloned()).collect();
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

/// The listing of `profiles`: per profile its name and what it is, its
/// figures in one line, and where they come from.
pub fn describe(profiles: &[Profile]) -> String {
    let mut out = String::new();
    for p in profiles {
        out.push_str(&format!(
            "{:<18}{}\n{:<18}{}\n{:<18}source: {}\n",
            crate::text::escape(&p.name),
            crate::text::escape(&p.about),
            "",
            p.summary(),
            "",
            crate::text::escape(&p.source)
        ));
    }
    out
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
        assert!(describe(&all).contains("hdd-7200-2009"));
    }

    #[test]
    fn an_unknown_name_is_refused_listing_the_known_ones() {
        let e = by_name("hdd-7201", &[]).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(e.message.contains("hdd-7200-2009") && e.message.contains("ssd-plp"), "{}", e.message);
        assert_eq!(by_name("laptop-5400", &[]).unwrap().name, "laptop-5400");
    }
}
