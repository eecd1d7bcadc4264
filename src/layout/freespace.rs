//! Free-space fragmentation of a mounted file system, from GETFSMAP's free
//! records: how many free extents, the largest, a power-of-two histogram as
//! e2freefrag and `xfs_db freesp` print it, the share in extents of 1 MiB
//! or more, 1 - largest/free, and the same per allocation or block group.
//!
//! The one design decision: **a free extent is a maximal run of physically
//! adjacent free blocks**, and a run that only a block-group boundary cuts
//! is one extent. That is how e2freefrag counts offline (its
//! `scan_block_bitmap` walks the whole bitmap and never breaks a run at a
//! group edge) and online (it counts GETFSMAP's free records as they come,
//! and ext4's GETFSMAP keeps the free extent that ends a group,
//! `gfi_lastfree`, and lengthens it with one that starts the next). fslab
//! merges adjacent free records itself as well, so its count does not rest
//! on the kernel doing so. XFS free extents cannot cross an allocation group
//! (every AG starts with its headers), so nothing changes there. Only the
//! `--groups` view splits extents at group edges, because there each group
//! is its own allocator.
//!
//! Everything streams: records go through a [`FreeSpaceAccumulator`] as the
//! kernel returns them; memory is one GETFSMAP buffer plus one entry per
//! group when groups are asked for.
//!
//! What "free" means, and where other tools differ (measured on Linux 6.18,
//! e2fsprogs 1.47, xfsprogs 6.1):
//! - GETFSMAP reports the allocator's view, which can run ahead of the
//!   disk. On a mounted ext4, a locality-group preallocation (the 512 blocks,
//!   `mb_group_prealloc`, that small files are carved from) counts as used
//!   as a whole until unmount: three 8 KiB files took 512 blocks while
//!   mounted, 6 after a remount. On the 256 MiB test fs: 46,282 free blocks
//!   mounted, 46,753 after a remount; e2freefrag online and offline print the
//!   same two numbers. On XFS, the blocks of just-deleted files come back
//!   when background inode inactivation (inodegc) gets to them: 173 free
//!   extents right after `rm`, 203 after `sync` (once only 181, and 203
//!   after a remount). An unmount settles both.
//! - `xfs_db freesp` also counts each block on the AG free list (AGFL) as a
//!   one-block free extent; GETFSMAP does not call them free (they are
//!   reserved for the free-space btrees), and neither does fslab.
//! - Root-reserved blocks (ext4 `-m`) are free here, as in e2freefrag.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ext_super::ExtSuperblock;
use super::fsinfo::magic;
use super::mounts;
use crate::error::{Error, ErrorKind, Result, describe_io};
use crate::sys::fsmap::{FMH_OF_DEV_T, FsmapBuffer, encode_dev};

/// Free extents of at least this many bytes count towards `share_1mib`.
pub const SHARE_THRESHOLD_BYTES: u64 = 1 << 20;

/// Records fetched per GETFSMAP call (64 KiB of buffer), as many as
/// e2freefrag asks for.
const RECORDS_PER_CALL: usize = 1024;

/// Free space of one file system, as `free --json` prints it under `free`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreeSpace {
    /// The mount point, from mountinfo (else the path as given).
    pub mount_point: String,
    /// File-system type name (`ext4`, `xfs`, ...).
    pub fs_type: String,
    /// What is mounted there (the device), when mountinfo says.
    pub device: Option<String>,
    /// File-system block size in bytes; histogram buckets are in blocks.
    pub block_size: u32,
    /// Size of the file system (its data device) in bytes.
    pub total_bytes: u64,
    /// Free bytes: the sum of all free extents.
    pub free_bytes: u64,
    /// Free extents, adjacent free records merged.
    pub free_extents: u64,
    /// The largest free extent in bytes (0 when nothing is free).
    pub largest_bytes: u64,
    /// Fraction of free bytes in free extents of 1 MiB or more; `null` when
    /// nothing is free.
    pub share_1mib: Option<f64>,
    /// 1 - largest/free, the free-space fragmentation figure fsperf tracks;
    /// `null` when nothing is free.
    pub fragmentation: Option<f64>,
    /// Non-empty power-of-two buckets, smallest first.
    pub histogram: Vec<FreeBucket>,
    /// Per allocation group (xfs) or block group (ext4), with `--groups`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<GroupFree>>,
    /// What `groups` are (for printing), when there are groups.
    #[serde(skip)]
    pub group_kind: Option<GroupKind>,
}

/// One histogram bucket: free extents of `2^k` to `2^(k+1) - 1` blocks
/// (e2freefrag's rows; `xfs_db freesp`'s `from`/`to`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FreeBucket {
    /// Smallest extent size in the bucket, bytes (`2^k` blocks).
    pub min_bytes: u64,
    /// Largest extent size in the bucket, bytes, inclusive
    /// (`2^(k+1) - 1` blocks).
    pub max_bytes: u64,
    /// Free extents in the bucket.
    pub extents: u64,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// Free space of one group, extents split at the group's edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GroupFree {
    /// Group number.
    pub group: u64,
    /// Where the group starts on the device, bytes.
    pub start_bytes: u64,
    /// Group length in bytes (the last group may be shorter).
    pub length_bytes: u64,
    /// Free bytes in the group.
    pub free_bytes: u64,
    /// Free extents in the group.
    pub free_extents: u64,
    /// Largest free extent inside the group, bytes.
    pub largest_bytes: u64,
}

/// How a file system's data device is cut into groups, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupGeometry {
    /// What the file system calls a group, for printing.
    pub kind: GroupKind,
    /// Where group 0 starts (ext: `s_first_data_block` blocks in).
    pub first_bytes: u64,
    /// Length of every group but possibly the last.
    pub group_bytes: u64,
    /// End of the last group: the size of the data device.
    pub end_bytes: u64,
}

/// Allocation groups (xfs) or block groups (ext2/3/4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    /// XFS allocation groups.
    AllocationGroup,
    /// ext2/3/4 block groups.
    BlockGroup,
}

impl GroupKind {
    /// The name for a column header.
    pub fn name(self) -> &'static str {
        match self {
            GroupKind::AllocationGroup => "allocation group",
            GroupKind::BlockGroup => "block group",
        }
    }
}

impl GroupGeometry {
    /// Number of groups.
    pub fn count(&self) -> u64 {
        if self.group_bytes == 0 {
            return 0;
        }
        self.end_bytes.saturating_sub(self.first_bytes).div_ceil(self.group_bytes)
    }

    /// The group holding byte `offset`, if any.
    fn group_of(&self, offset: u64) -> Option<u64> {
        if offset < self.first_bytes || offset >= self.end_bytes || self.group_bytes == 0 {
            return None;
        }
        Some((offset - self.first_bytes) / self.group_bytes)
    }

    /// `[start, end)` of group `g`.
    fn bounds(&self, g: u64) -> (u64, u64) {
        let start = self.first_bytes + g * self.group_bytes;
        (start, (start + self.group_bytes).min(self.end_bytes))
    }
}

/// The power-of-two bucket of an extent of `blocks` blocks: k with
/// `2^k <= blocks < 2^(k+1)` — e2freefrag's `ul_log2(size)` (its row k+1,
/// row 0 holding sub-block extents that cannot occur) and the default bins of
/// `xfs_db freesp` (`-b`, from 1 doubling). A zero-block extent goes to 0.
pub fn bucket_of(blocks: u64) -> usize {
    blocks.max(1).ilog2() as usize
}

/// 1 - largest/free (fsperf's free-space fragmentation): 0 when all free
/// space is one extent, towards 1 when it is dust. `None` when nothing is
/// free, where the ratio means nothing.
pub fn fragmentation(largest_bytes: u64, free_bytes: u64) -> Option<f64> {
    (free_bytes > 0).then(|| 1.0 - largest_bytes as f64 / free_bytes as f64)
}

/// `part / whole` as a fraction, `None` when `whole` is 0.
pub fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    extents: u64,
    bytes: u64,
    largest: u64,
}

impl Tally {
    fn add(&mut self, bytes: u64) {
        self.extents += 1;
        self.bytes += bytes;
        self.largest = self.largest.max(bytes);
    }
}

/// Turns free records, in ascending physical order on one device, into
/// [`FreeSpace`] figures: adjacent records merge into one extent (see the
/// module doc); memory does not grow with the number of records.
#[derive(Debug, Clone)]
pub struct FreeSpaceAccumulator {
    block_size: u64,
    /// The free run being built: `[start, end)`.
    pending: Option<(u64, u64)>,
    total: Tally,
    at_least_1mib: u64,
    /// (extents, bytes) per bucket k.
    buckets: Vec<(u64, u64)>,
    groups: Option<(GroupGeometry, Vec<Tally>)>,
}

impl FreeSpaceAccumulator {
    /// An empty accumulator for a file system with `block_size`-byte blocks,
    /// also splitting per group when `groups` is given.
    pub fn new(block_size: u32, groups: Option<GroupGeometry>) -> Self {
        FreeSpaceAccumulator {
            block_size: u64::from(block_size.max(1)),
            pending: None,
            total: Tally::default(),
            at_least_1mib: 0,
            buckets: Vec::new(),
            groups: groups.map(|g| (g, vec![Tally::default(); g.count() as usize])),
        }
    }

    /// Add one free record of `length` bytes at byte `physical`. A record
    /// that starts where the pending run ends extends it.
    pub fn push(&mut self, physical: u64, length: u64) {
        if length == 0 {
            return;
        }
        let end = physical.saturating_add(length);
        match &mut self.pending {
            Some((_, pending_end)) if *pending_end == physical => *pending_end = end,
            _ => {
                self.flush();
                self.pending = Some((physical, end));
            }
        }
    }

    fn flush(&mut self) {
        let Some((start, end)) = self.pending.take() else { return };
        let bytes = end - start;
        self.total.add(bytes);
        if bytes >= SHARE_THRESHOLD_BYTES {
            self.at_least_1mib += bytes;
        }
        let k = bucket_of(bytes / self.block_size);
        if self.buckets.len() <= k {
            self.buckets.resize(k + 1, (0, 0));
        }
        self.buckets[k].0 += 1;
        self.buckets[k].1 += bytes;
        if let Some((geometry, tallies)) = &mut self.groups {
            let mut at = start;
            while at < end {
                let Some(g) = geometry.group_of(at) else { break };
                let (_, group_end) = geometry.bounds(g);
                let piece_end = end.min(group_end);
                if let Some(tally) = tallies.get_mut(g as usize) {
                    tally.add(piece_end - at);
                }
                at = piece_end;
            }
        }
    }

    /// The figures, for a file system of `total_bytes`.
    pub fn finish(mut self, identity: FsIdentity, total_bytes: u64) -> FreeSpace {
        self.flush();
        let bs = self.block_size;
        let histogram = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, (extents, _))| *extents > 0)
            .map(|(k, &(extents, bytes))| FreeBucket {
                min_bytes: (1u64 << k) * bs,
                max_bytes: ((1u64 << (k + 1)) - 1) * bs,
                extents,
                bytes,
            })
            .collect();
        let group_kind = self.groups.as_ref().map(|(geometry, _)| geometry.kind);
        let groups = self.groups.map(|(geometry, tallies)| {
            tallies
                .iter()
                .enumerate()
                .map(|(g, t)| {
                    let (start, end) = geometry.bounds(g as u64);
                    GroupFree {
                        group: g as u64,
                        start_bytes: start,
                        length_bytes: end - start,
                        free_bytes: t.bytes,
                        free_extents: t.extents,
                        largest_bytes: t.largest,
                    }
                })
                .collect()
        });
        FreeSpace {
            mount_point: identity.mount_point,
            fs_type: identity.fs_type,
            device: identity.device,
            block_size: bs as u32,
            total_bytes,
            free_bytes: self.total.bytes,
            free_extents: self.total.extents,
            largest_bytes: self.total.largest,
            share_1mib: share(self.at_least_1mib, self.total.bytes),
            fragmentation: fragmentation(self.total.largest, self.total.bytes),
            histogram,
            groups,
            group_kind,
        }
    }
}

/// Which file system the figures are about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsIdentity {
    /// Mount point.
    pub mount_point: String,
    /// Type name.
    pub fs_type: String,
    /// Mounted device.
    pub device: Option<String>,
}

/// What must be known before reading the map: the identity, the block size,
/// the size and the group geometry.
struct Target {
    identity: FsIdentity,
    magic: i64,
    block_size: u32,
    /// From the geometry; `None` when it could not be read.
    total_bytes: Option<u64>,
    groups: std::result::Result<GroupGeometry, String>,
    /// The data device in `new_encode_dev` form: records on other devices
    /// (an external log, a realtime device) are not its free space.
    data_dev: u32,
}

/// Measure the free space of the mounted file system holding `path` (a
/// mount point, any path in it, or a mounted block device), per group too
/// when `groups`. Kernels that restrict GETFSMAP want CAP_SYS_ADMIN (Linux
/// 6.18 lets any user read it on ext4 and xfs); the ext group geometry
/// comes from the device's superblock, which needs read access to it.
pub fn measure(path: &Path, groups: bool) -> Result<FreeSpace> {
    let (file, shown) = open_target(path)?;
    let target = probe(&file, &shown)?;
    let geometry = if groups { target.groups.clone().ok() } else { None };
    let mut acc = FreeSpaceAccumulator::new(target.block_size, geometry);
    let mut buffer = FsmapBuffer::new(RECORDS_PER_CALL);
    let data_dev = target.data_dev;
    // GETFSMAP maps every block of the device, so the end of its last record
    // is the size of the file system when the geometry could not be read.
    let mut mapped_end = 0;
    buffer
        .for_each(&file, |record, oflags| {
            if oflags & FMH_OF_DEV_T == 0 || record.fmr_device == data_dev {
                mapped_end = mapped_end.max(record.end());
                if record.is_free() {
                    acc.push(record.fmr_physical, record.fmr_length);
                }
            }
        })
        .map_err(|e| getfsmap_error(&shown, &target, e))?;
    if let (true, Err(why)) = (groups, &target.groups) {
        return Err(Error::environment(format!("{}: cannot split by group: {why}", shown.display())));
    }
    let total = target.total_bytes.unwrap_or(mapped_end);
    Ok(acc.finish(target.identity, total))
}

/// Open what `path` names for the ioctl: a directory or file as it is, a
/// block device as its mount point. FIFOs and the like are refused before
/// opening, so nothing blocks.
fn open_target(path: &Path) -> Result<(File, PathBuf)> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat", e))?;
    let kind = meta.file_type();
    let shown = if kind.is_block_device() {
        use std::os::unix::fs::MetadataExt;
        let rdev = meta.rdev();
        let mount = mounts::find_by_device(rustix::fs::major(rdev), rustix::fs::minor(rdev)).ok_or_else(|| {
            Error::usage(format!(
                "{}: is not mounted; fslab free reads a mounted file system's map (GETFSMAP): mount it and give the mount point",
                path.display()
            ))
        })?;
        mount.mount_point
    } else if kind.is_dir() || kind.is_file() {
        path.to_path_buf()
    } else {
        return Err(Error::usage(format!(
            "{}: is neither a directory, a file nor a block device; give the mount point",
            path.display()
        )));
    };
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&shown)
        .map_err(|e| Error::io(&shown, "open", e))?;
    Ok((file, shown))
}

/// Find the file system's identity, block size, size and group geometry.
fn probe(file: &File, shown: &Path) -> Result<Target> {
    let fd = file.as_fd();
    let st = rustix::fs::fstat(fd).map_err(|e| Error::io(shown, "stat", e.into()))?;
    let sfs = rustix::fs::fstatfs(fd).map_err(|e| Error::io(shown, "statfs", e.into()))?;
    let fs_magic = sfs.f_type as i64;
    let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    // The mount the user named, when the path is one (bind mounts share a
    // device); else the first mount of the device.
    let mount = mounts::find_by_mount_point(shown)
        .filter(|m| (m.major, m.minor) == (major, minor))
        .or_else(|| mounts::find_by_device(major, minor));
    let fs_type = match (&mount, fs_magic) {
        (Some(m), _) => m.fs_type.clone(),
        (None, magic::EXT) => "ext".to_string(),
        (None, magic::XFS) => "xfs".to_string(),
        (None, magic::BTRFS) => "btrfs".to_string(),
        (None, magic::TMPFS) => "tmpfs".to_string(),
        (None, other) => format!("0x{other:x}"),
    };
    let identity = FsIdentity {
        mount_point: mount
            .as_ref()
            .map_or_else(|| shown.display().to_string(), |m| m.mount_point.display().to_string()),
        fs_type,
        device: mount.as_ref().map(|m| m.source.clone()),
    };
    let mut target = Target {
        identity,
        magic: fs_magic,
        block_size: sfs.f_bsize as u32,
        total_bytes: None,
        groups: Err("only xfs and ext2/3/4 have allocation or block groups".to_string()),
        data_dev: encode_dev(major, minor),
    };
    match fs_magic {
        magic::XFS => match crate::sys::xfs::geometry(fd) {
            Ok(g) => {
                let bs = u64::from(g.block_size);
                let end = g.data_blocks * bs;
                target.block_size = g.block_size;
                target.total_bytes = Some(end);
                target.groups = Ok(GroupGeometry {
                    kind: GroupKind::AllocationGroup,
                    first_bytes: 0,
                    group_bytes: u64::from(g.ag_blocks) * bs,
                    end_bytes: end,
                });
            }
            Err(e) => target.groups = Err(format!("XFS geometry unreadable ({})", describe_io(&e))),
        },
        magic::EXT => match mount.as_ref().map(|m| ExtSuperblock::read(Path::new(&m.source))) {
            Some(Ok(sb)) => {
                let bs = u64::from(sb.block_size);
                let end = sb.blocks_count * bs;
                target.block_size = sb.block_size;
                target.total_bytes = Some(end);
                target.groups = Ok(GroupGeometry {
                    kind: GroupKind::BlockGroup,
                    first_bytes: u64::from(sb.first_data_block) * bs,
                    group_bytes: u64::from(sb.blocks_per_group) * bs,
                    end_bytes: end,
                });
            }
            Some(Err(e)) => {
                let source = mount.as_ref().map_or("", |m| m.source.as_str());
                target.groups = Err(format!("superblock of {source} unreadable ({})", describe_io(&e)));
            }
            None => target.groups = Err("no mountinfo entry, so no device to read the superblock from".to_string()),
        },
        _ => {}
    }
    Ok(target)
}

/// A GETFSMAP failure in words: which file system cannot do it, or that it
/// needs root.
fn getfsmap_error(shown: &Path, target: &Target, err: io::Error) -> Error {
    let fs = &target.identity.fs_type;
    let supports = matches!(target.magic, magic::EXT | magic::XFS);
    match err.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => Error::environment(format!(
            "{}: GETFSMAP: {}: fslab free needs root (CAP_SYS_ADMIN) to read the free-space map",
            shown.display(),
            describe_io(&err)
        )),
        Some(libc::ENOTTY) | Some(libc::EOPNOTSUPP) => unsupported(shown, fs, &err),
        Some(libc::EINVAL) if !supports => unsupported(shown, fs, &err),
        _ => {
            let mut e = Error::io(shown, "GETFSMAP", err);
            if e.kind != ErrorKind::Usage {
                e.kind = ErrorKind::Failed;
            }
            e
        }
    }
}

fn unsupported(shown: &Path, fs: &str, err: &io::Error) -> Error {
    Error::environment(format!(
        "{}: GETFSMAP is not supported on {fs} ({}); fslab free reads free space from GETFSMAP, which xfs and ext4 \
         implement (btrfs, tmpfs and the ext2 driver do not)",
        shown.display(),
        describe_io(err)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: u64 = 4096;

    fn identity() -> FsIdentity {
        FsIdentity { mount_point: "/m".into(), fs_type: "ext4".into(), device: None }
    }

    fn blocks(start: u64, len: u64) -> (u64, u64) {
        (start * BS, len * BS)
    }

    #[test]
    fn buckets_are_powers_of_two_in_blocks() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 1);
        assert_eq!(bucket_of(3), 1);
        assert_eq!(bucket_of(4), 2);
        assert_eq!(bucket_of(7), 2);
        assert_eq!(bucket_of(32_768), 15);
        assert_eq!(bucket_of(u64::MAX), 63);
    }

    #[test]
    fn fragmentation_and_share_handle_nothing_free() {
        assert_eq!(fragmentation(0, 0), None);
        assert_eq!(fragmentation(10, 10), Some(0.0));
        assert_eq!(fragmentation(1, 4), Some(0.75));
        assert_eq!(share(0, 0), None);
        assert_eq!(share(1, 4), Some(0.25));
    }

    #[test]
    fn adjacent_records_merge_and_figures_add_up() {
        // Free: 1 block at 10; 3 + 2 blocks adjacent at 20 (one extent of
        // 5); 300 blocks (1.17 MiB) at 1000.
        let mut acc = FreeSpaceAccumulator::new(BS as u32, None);
        for (p, l) in [blocks(10, 1), blocks(20, 3), blocks(23, 2), blocks(1000, 300)] {
            acc.push(p, l);
        }
        let f = acc.finish(identity(), 2048 * BS);
        assert_eq!(f.free_extents, 3);
        assert_eq!(f.free_bytes, 306 * BS);
        assert_eq!(f.largest_bytes, 300 * BS);
        assert_eq!(f.share_1mib, Some(300.0 / 306.0));
        assert_eq!(f.fragmentation, Some(1.0 - 300.0 / 306.0));
        assert_eq!(
            f.histogram,
            vec![
                FreeBucket { min_bytes: BS, max_bytes: BS, extents: 1, bytes: BS },
                FreeBucket { min_bytes: 4 * BS, max_bytes: 7 * BS, extents: 1, bytes: 5 * BS },
                FreeBucket { min_bytes: 256 * BS, max_bytes: 511 * BS, extents: 1, bytes: 300 * BS },
            ]
        );
        assert!(f.groups.is_none());
    }

    #[test]
    fn nothing_free_is_null_not_zero() {
        let f = FreeSpaceAccumulator::new(4096, None).finish(identity(), 1 << 20);
        assert_eq!((f.free_extents, f.free_bytes, f.largest_bytes), (0, 0, 0));
        assert_eq!((f.share_1mib, f.fragmentation), (None, None));
        assert!(f.histogram.is_empty());
        let json = serde_json::to_value(&f).unwrap();
        assert!(json["fragmentation"].is_null() && json["share_1mib"].is_null());
        assert!(json.get("groups").is_none());
    }

    #[test]
    fn groups_split_extents_at_their_edges_only_in_their_view() {
        // 1 KiB blocks, first data block 1, 8 blocks per group, 25 blocks:
        // groups [1,9) [9,17) [17,25). A free run 5..20 crosses two edges.
        let bs = 1024;
        let geometry =
            GroupGeometry { kind: GroupKind::BlockGroup, first_bytes: bs, group_bytes: 8 * bs, end_bytes: 25 * bs };
        assert_eq!(geometry.count(), 3);
        let mut acc = FreeSpaceAccumulator::new(bs as u32, Some(geometry));
        acc.push(5 * bs, 4 * bs); // 5..9, as ext4 may report it per group
        acc.push(9 * bs, 11 * bs); // 9..20
        acc.push(22 * bs, 3 * bs); // 22..25
        let f = acc.finish(identity(), 25 * bs);
        assert_eq!(f.free_extents, 2, "the run 5..20 is one extent overall");
        assert_eq!(f.largest_bytes, 15 * bs);
        let groups = f.groups.unwrap();
        let rows: Vec<_> = groups
            .iter()
            .map(|g| (g.start_bytes / bs, g.length_bytes / bs, g.free_bytes / bs, g.free_extents, g.largest_bytes / bs))
            .collect();
        assert_eq!(rows, vec![(1, 8, 4, 1, 4), (9, 8, 8, 1, 8), (17, 8, 6, 2, 3)]);
        assert_eq!(groups.iter().map(|g| g.free_bytes).sum::<u64>(), f.free_bytes);
    }

    #[test]
    fn a_short_last_group_is_counted() {
        let g = GroupGeometry { kind: GroupKind::AllocationGroup, first_bytes: 0, group_bytes: 100, end_bytes: 250 };
        assert_eq!(g.count(), 3);
        assert_eq!(g.bounds(2), (200, 250));
        assert_eq!(g.group_of(249), Some(2));
        assert_eq!(g.group_of(250), None);
    }
}
