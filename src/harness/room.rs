//! Room on a scratch file system, checked before anything is made: a work
//! that cannot survive running out of space (mmap-fill, where a store
//! that finds no block is a SIGBUS) is refused when the `--size` it was
//! given cannot hold what it needs.
//!
//! The rule is an estimate from above of what each file system keeps for
//! itself right after fslab's mkfs, measured on kernel 6.18 with
//! e2fsprogs 1.47, xfsprogs 6.1 and btrfs-progs 6.2 at 128 MiB to 16 GiB
//! (free space seen by statvfs, for unprivileged users): a fixed part and
//! a share of the size, each rounded up, so the estimate is never below
//! what was measured — for xfs also what mmap-fill's scattered stores
//! were measured to hold in reservations (see [`kept_by`]). mkfs options that reserve more (`-m`, a larger log)
//! are not modelled: the work's own check of the free space, and the case
//! failing on a fault, still hold there.

use crate::error::{Error, Result};
use crate::scenario::Work;
use crate::site::{FsType, TargetOptions, TargetSpec};
use crate::units::bytes_short;

const MIB: u64 = 1 << 20;

/// What `fs` keeps for itself: a fixed number of MiB and a percentage of
/// the size. Measured (kept / size): ext2 16/128 MiB to 1,120/16,384;
/// ext3 20 to 1,248; ext4 22.5 to 1,264; xfs 81/300 to 210/16,384 (the
/// log and allocation groups); btrfs 81/128 to 529/4,096 (metadata and
/// system chunks, duplicated).
///
/// xfs is given far more: each page a scattered store dirties is its own
/// delayed allocation until writeback, and holds a worst-case block-map
/// reservation beside its block, so mmap-fill in the seed's order faulted
/// with 3.5 times the file free at 300 MiB (80 MiB file; 60 fit), 1.4
/// times at 1 GiB (650 MiB; 540 fit) and 1.5 times at 2 GiB (1,260 MiB;
/// 1,200 fit). 192 MiB + 33% keeps under each of those limits.
fn kept_by(fs: FsType) -> (u64, u64, &'static str) {
    match fs {
        FsType::Ext2 => (16, 7, "for its metadata"),
        FsType::Ext3 | FsType::Ext4 => (32, 9, "for its journal and metadata"),
        FsType::Xfs => (
            192,
            33,
            "for its log and metadata, and for the block-map reservations scattered stores hold until written back",
        ),
        FsType::Btrfs => (128, 10, "for its metadata and system chunks"),
    }
}

/// The bytes a new `size`-byte `fs` leaves for files, by the rule above.
pub fn usable(fs: FsType, size: u64) -> u64 {
    let (fixed_mib, percent, _) = kept_by(fs);
    size.saturating_sub(fixed_mib * MIB).saturating_sub(size / 100 * percent)
}

/// The smallest whole-MiB size whose usable space holds `needed`.
fn size_for(fs: FsType, needed: u64) -> u64 {
    let (fixed_mib, percent, _) = kept_by(fs);
    let raw = (needed + fixed_mib * MIB) as u128 * 100 / (100 - percent) as u128;
    let mut size = (raw as u64).div_ceil(MIB) * MIB;
    while usable(fs, size) < needed {
        size += MIB;
    }
    size
}

/// Refuse (exit 2) a scratch target whose `--size` cannot hold what
/// `work` needs; targets fslab sizes itself, devices and folders pass.
pub fn check_room(spec: &TargetSpec, options: &TargetOptions, work: &dyn Work) -> Result<()> {
    let (Some(room), Some(size), Some(fs)) = (work.room_needed(), options.size_bytes, spec.scratch_fs()) else {
        return Ok(());
    };
    let (needed, usable) = (room.bytes, usable(fs, size));
    if needed <= usable {
        return Ok(());
    }
    let (fixed_mib, percent, why) = kept_by(fs);
    Err(Error::usage(format!(
        "needs {} free ({}), but --size {} of {} leaves about {} for it ({} keeps up to {fixed_mib} MiB \
         + {percent}% of its size {why}): give --size {} or more, or a smaller --set size",
        bytes_short(needed),
        room.what,
        bytes_short(size),
        fs.name(),
        bytes_short(usable),
        fs.name(),
        bytes_short(size_for(fs, needed)),
    )))
}

/// Refuse (exit 2) a `--size` that leaves too little free for `work`
/// once the target is filled to `level` before it (`--fill`, or the level
/// aging leaves): what is free then is at most the unfilled share of the
/// image. Without `--size` fslab sizes the image for the fill itself.
pub fn check_start_room(options: &TargetOptions, level: f64, work: &dyn Work) -> Result<()> {
    let Some(size) = options.size_bytes else { return Ok(()) };
    if level <= 0.0 {
        return Ok(());
    }
    let needed = work.space_needed();
    let left = (size as f64 * (1.0 - level)) as u64;
    if needed <= left {
        return Ok(());
    }
    let smallest = ((needed as f64 / (1.0 - level)).ceil() as u64).div_ceil(MIB) * MIB;
    Err(Error::usage(format!(
        "writes up to {}, but --size {} filled to {:.0}% before the work leaves at most {} free: give --size {} or more, \
         a lower --fill, or a smaller --set size",
        bytes_short(needed),
        bytes_short(size),
        level * 100.0,
        bytes_short(left),
        bytes_short(smallest),
    )))
}

/// Refuse (exit 2) a scratch image larger than what the scratch folder's
/// file system has free: the image is sparse, but the work (or mkfs,
/// which writes its tables across the whole size) may fill it, and a host
/// disk run full fails more than this run. `level` is how full the target
/// starts (`--fill`, or what aging leaves), which the image is sized for.
pub fn check_disk(spec: &TargetSpec, options: &TargetOptions, work: &dyn Work, level: f64) -> Result<()> {
    if !spec.makes_image() {
        return Ok(());
    }
    let (size, how) = match options.size_bytes {
        Some(size) => (size, "--size".to_string()),
        None => {
            let size = super::measure::image_size_for(work.space_needed(), level);
            (size, format!("sized for the {} the work may write", bytes_short(work.space_needed())))
        }
    };
    // The folder may not exist yet: its nearest existing parent is on the
    // same file system as it will be.
    let mut at = options.scratch.as_path();
    let vfs = loop {
        match rustix::fs::statvfs(at) {
            Ok(vfs) => break vfs,
            Err(_) => match at.parent() {
                Some(parent) => at = parent,
                None => return Ok(()),
            },
        }
    };
    let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
    // A recording keeps a copy of the image from before the work and a
    // log of up to its cap beside the image.
    let (need, recording) = match &options.record {
        Some(record) => (
            size.saturating_mul(2).saturating_add(record.cap_bytes),
            format!(", and with its recording (a copy of it and a log of up to {}) {}", bytes_short(record.cap_bytes), bytes_short(size.saturating_mul(2).saturating_add(record.cap_bytes))),
        ),
        None => (size, String::new()),
    };
    if need <= free {
        return Ok(());
    }
    Err(Error::usage(format!(
        "the {} image would be {} ({how}){recording}, more than the {} free on the scratch folder's file system ({}): \
         give a smaller --size or --set size (or --crash-log-cap), or a --scratch folder on a disk with room",
        spec.label(),
        bytes_short(size),
        bytes_short(free),
        at.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_never_exceeds_what_was_measured() {
        // (fs, size MiB, free bytes measured after fslab's mkfs)
        let measured = [
            (FsType::Ext2, 128, 117_485_568u64),
            (FsType::Ext2, 16_384, 16_005_185_536),
            (FsType::Ext3, 300, 268_517_376),
            (FsType::Ext4, 128, 110_607_360),
            (FsType::Ext4, 300, 264_348_672),
            (FsType::Ext4, 16_384, 15_854_100_480),
            (FsType::Xfs, 300, 229_732_352),
            (FsType::Xfs, 1024, 965_767_168),
            (FsType::Btrfs, 128, 49_283_072),
            (FsType::Btrfs, 4096, 3_740_270_592),
            (FsType::Btrfs, 16_384, 16_625_172_480),
        ];
        for (fs, mib, free) in measured {
            assert!(usable(fs, mib * MIB) <= free, "{fs:?} at {mib} MiB: {} > {free}", usable(fs, mib * MIB));
        }
    }

    #[test]
    fn scattered_mapped_stores_that_faulted_on_xfs_are_refused() {
        // (image MiB, the smallest file that faulted in the seed's order)
        for (mib, faulted) in [(300, 80), (1024, 650), (2048, 1260)] {
            let needed = faulted * MIB + faulted * MIB / 16;
            assert!(usable(FsType::Xfs, mib * MIB) < needed, "xfs at {mib} MiB, {faulted} MiB file");
        }
    }

    #[test]
    fn the_suggested_size_is_the_smallest_that_fits() {
        for fs in [FsType::Ext2, FsType::Ext4, FsType::Xfs, FsType::Btrfs] {
            for needed in [MIB, 206 * MIB + 206 * MIB / 16, 5 << 30] {
                let size = size_for(fs, needed);
                assert!(usable(fs, size) >= needed, "{fs:?} {needed}");
                assert!(usable(fs, size - MIB) < needed, "{fs:?} {needed}: {size} is not the smallest");
            }
        }
    }

    #[test]
    fn the_seeds_sigbus_case_is_refused_with_both_figures() {
        // `run mmap-fill --fs xfs --size 300M --set size=206M`.
        let needed = 206 * MIB + 206 * MIB / 16;
        assert!(usable(FsType::Xfs, 300 * MIB) < needed);
        // ext4 held a 226 MiB file at 300 MiB in the seed's order.
        assert!(usable(FsType::Ext4, 300 * MIB) >= needed, "ext4 at 300 MiB holds it");
    }
}
