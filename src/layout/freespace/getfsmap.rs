//! Reading a mounted file system's free space: open what the user named,
//! find its block size, size and group geometry, stream GETFSMAP's free
//! records through a [`FreeSpaceAccumulator`], and say in words why not when
//! the kernel refuses.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{DEFAULT_REFERENCE_BYTES, FreeSpace, FreeSpaceAccumulator, FsIdentity, GroupGeometry, GroupKind};
use crate::error::{Error, ErrorKind, Result, describe_io};
use crate::layout::ext_super::ExtSuperblock;
use crate::layout::fsinfo::magic;
use crate::layout::mounts;
use crate::sys::fsmap::{FMH_OF_DEV_T, FsmapBuffer, encode_dev};

/// Records fetched per GETFSMAP call (64 KiB of buffer), as many as
/// e2freefrag asks for.
const RECORDS_PER_CALL: usize = 1024;

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
/// The headline `fragmented_share` is taken against the default reference
/// (1 MiB).
pub fn measure(path: &Path, groups: bool) -> Result<FreeSpace> {
    measure_with_reference(path, groups, DEFAULT_REFERENCE_BYTES)
}

/// [`measure`], with `fragmented_share` counting free extents shorter than
/// `reference_bytes` (rounded up to a whole block, see
/// [`FreeSpaceAccumulator::with_reference`]).
pub fn measure_with_reference(path: &Path, groups: bool, reference_bytes: u64) -> Result<FreeSpace> {
    let (file, shown) = open_target(path)?;
    let target = probe(&file, &shown)?;
    let geometry = if groups { target.groups.clone().ok() } else { None };
    let mut acc = FreeSpaceAccumulator::new(target.block_size, geometry).with_reference(reference_bytes);
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

