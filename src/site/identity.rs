//! Which disk a device path names: what a plan records of the `--device`
//! its planner gave up, so that a machine running the plan formats that
//! disk and no other that the same path happens to name there.
//!
//! A path is no identity (`/dev/sdb` is whatever disk enumerated second),
//! so the identity is what the disk says of itself, read from sysfs: its
//! size, and its serial number and WWN (World Wide Name) where it has
//! them; for a partition, its number and first sector too, with its
//! disk's serial and WWN; for a loop device, which has neither, the
//! device and inode numbers of the file behind it (`LOOP_GET_STATUS64`).
//! A disk that reports none of these is known by its size alone.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// What a block device is, as far as it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// Its size in bytes.
    pub size_bytes: u64,
    /// Its serial number (its disk's, for a partition), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Its WWN or `wwid` (its disk's, for a partition), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
    /// For a partition: its number and first sector on its disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Partition>,
    /// For a loop device: the file behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_file: Option<BackingFile>,
}

/// A partition's place on its disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// Its number (`sda3`: 3).
    pub number: u32,
    /// Its first 512-byte sector.
    pub start_sector: u64,
}

/// The file behind a loop device, by `stat`'s numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackingFile {
    /// The device number of the file system holding it.
    pub device: u64,
    /// Its inode number there.
    pub inode: u64,
}

impl std::fmt::Display for DeviceIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", crate::units::bytes_short(self.size_bytes))?;
        if let Some(serial) = &self.serial {
            write!(f, ", serial {}", crate::text::escape(serial))?;
        }
        if let Some(wwn) = &self.wwn {
            write!(f, ", WWN {}", crate::text::escape(wwn))?;
        }
        if let Some(p) = &self.partition {
            write!(f, ", partition {} from sector {}", p.number, p.start_sector)?;
        }
        if let Some(b) = &self.backing_file {
            write!(f, ", a loop device over inode {} of device {}:{}", b.inode, rustix::fs::major(b.device), rustix::fs::minor(b.device))?;
        }
        Ok(())
    }
}

/// The identity of the block device at `device` (followed to it): exit 2
/// when it is no block device, 3 when sysfs cannot say its size.
pub fn identity(device: &Path) -> Result<DeviceIdentity> {
    use std::os::unix::fs::FileTypeExt as _;
    let shown = crate::text::path(device);
    let meta = fs::metadata(device).map_err(|e| Error::usage(format!("--device {shown}: {}", crate::error::describe_io(&e))))?;
    if !meta.file_type().is_block_device() {
        return Err(Error::usage(format!("--device {shown}: not a block device")));
    }
    let name = fs::canonicalize(device)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .ok_or_else(|| Error::usage(format!("--device {shown}: no name under /dev")))?;
    // /sys/class/block/NAME links to the device's folder; a partition's
    // folder is inside its disk's.
    let link = Path::new("/sys/class/block").join(&name);
    let folder = fs::canonicalize(&link).map_err(|e| Error::io(&link, "find the device in sysfs", e))?;
    let sectors: u64 = read(&folder.join("size"))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::environment(format!("--device {shown}: sysfs gives no size for {name}")))?;
    let partition = match (read(&folder.join("partition")), read(&folder.join("start"))) {
        (Some(number), Some(start)) => Some(Partition {
            number: number.parse().unwrap_or_default(),
            start_sector: start.parse().unwrap_or_default(),
        }),
        _ => None,
    };
    let disk: PathBuf = if partition.is_some() { folder.parent().map_or(folder.clone(), Path::to_path_buf) } else { folder.clone() };
    let first = |names: &[&str]| names.iter().find_map(|n| read(&disk.join(n)).filter(|v| !v.is_empty()));
    let backing_file = if name.starts_with("loop") && partition.is_none() {
        let file = fs::File::open(device).map_err(|e| Error::io(device, "open the device", e))?;
        crate::sys::loop_dev::backing(&file)
            .map_err(|e| Error::io(device, "read the loop device's backing file", e))?
            .map(|(device, inode)| BackingFile { device, inode })
    } else {
        None
    };
    Ok(DeviceIdentity {
        size_bytes: sectors.saturating_mul(512),
        serial: first(&["device/serial", "serial"]),
        wwn: first(&["device/wwid", "wwid", "device/wwn"]),
        partition,
        backing_file,
    })
}

/// A sysfs attribute's text, trimmed.
fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_no_block_device_has_no_identity() {
        let e = identity(Path::new("/dev/null")).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Usage);
        assert!(e.message.contains("not a block device"), "{}", e.message);
        assert!(identity(Path::new("/nonexistent/fslab-disk")).is_err());
    }

    #[test]
    fn an_identity_is_said_with_what_it_holds() {
        let id = DeviceIdentity {
            size_bytes: 512 << 20,
            serial: Some("S3Z1NB0K".into()),
            wwn: None,
            partition: Some(Partition { number: 2, start_sector: 2048 }),
            backing_file: None,
        };
        assert_eq!(id.to_string(), "512 MiB, serial S3Z1NB0K, partition 2 from sector 2048");
    }
}
