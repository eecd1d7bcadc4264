//! What a command is told about where it runs (`FSLAB_MOUNT`, `FSLAB_FS`,
//! `FSLAB_DEVICE`), and the figures of its own window: the block device's
//! counters read just before it starts and just after it ends, before
//! fslab's `syncfs` — what the work itself wrote, beside the case's totals
//! that include that sync.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::layout::mounts;
use crate::probe::blockstat::{BlockDevice, BlockStat};
use crate::record::{Better, FigureSpec, Figures, Kind};

/// The command's own exit status, and the figures of the work's window.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("exit_status", "status", Better::Lower, Kind::Exact)
        .heading("exit")
        .about("the command's exit status (128 + N when killed by signal N, as a shell says)"),
    FigureSpec::new("work_mbps", "MiB/s", Better::Higher, Kind::Timing)
        .heading("work MiB/s")
        .about("bytes written to the scratch device while the command ran, in MiB (2^20 bytes) per second of it (fslab's syncfs after it not counted)"),
    FigureSpec::new("work_written_bytes", "bytes", Better::Lower, Kind::Timing)
        .heading("work MiB wr")
        .about("bytes written to the scratch device while the command ran (written_bytes adds fslab's syncfs after it)"),
    FigureSpec::new("work_write_ios", "count", Better::Lower, Kind::Timing)
        .heading("work wr I/Os")
        .about("write I/Os the scratch device completed while the command ran (write_ios adds fslab's syncfs after it)"),
];

/// Where a command runs: its folder, the file system's type and the block
/// device under it, when there is one.
#[derive(Debug, Clone)]
pub struct Place {
    /// The work folder (the command's working directory).
    pub dir: PathBuf,
    /// The file system's type as the mount table names it.
    pub fs_type: Option<String>,
    /// The block device the file system sits on.
    pub device: Option<BlockDevice>,
}

impl Place {
    /// The place of `dir`, found from the mount table and sysfs.
    pub fn of(dir: &Path) -> Place {
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        // The longest mount point above the folder; the topmost of those
        // stacked there (mountinfo lists them in mount order).
        let mount = mounts::all()
            .into_iter()
            .filter(|m| real.starts_with(&m.mount_point))
            .fold(None::<mounts::MountEntry>, |best, m| match best {
                Some(b) if b.mount_point.as_os_str().len() > m.mount_point.as_os_str().len() => Some(b),
                _ => Some(m),
            });
        let device = BlockDevice::holding(dir).ok().flatten();
        Place { dir: dir.to_path_buf(), fs_type: mount.map(|m| m.fs_type), device }
    }

    /// The environment the command gets: `FSLAB_MOUNT` always,
    /// `FSLAB_FS` and `FSLAB_DEVICE` when known (the device only when its
    /// `/dev` node is there).
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let mut env = vec![("FSLAB_MOUNT", self.dir.clone().into_os_string())];
        if let Some(fs) = &self.fs_type {
            env.push(("FSLAB_FS", fs.into()));
        }
        if let Some(device) = &self.device {
            let node = Path::new("/dev").join(&device.name);
            if node.exists() {
                env.push(("FSLAB_DEVICE", node.into_os_string()));
            }
        }
        env
    }

    /// Start the work's window: the device's counters and the clock now.
    pub fn open_window(&self) -> WorkWindow {
        WorkWindow { before: self.device.as_ref().map(|d| d.read()), started: Instant::now() }
    }
}

/// The counters and clock at the start of the command.
#[derive(Debug)]
pub struct WorkWindow {
    before: Option<std::io::Result<BlockStat>>,
    started: Instant,
}

impl WorkWindow {
    /// End the window now and put its figures into `figures`: measured,
    /// or missing with the reason.
    pub fn close(self, device: Option<&BlockDevice>, figures: &mut Figures) {
        let seconds = self.started.elapsed().as_secs_f64();
        let delta = match (self.before, device) {
            (Some(Ok(before)), Some(device)) => device.read().map(|after| after.since(&before)).map_err(|e| e.to_string()),
            (Some(Err(e)), _) => Err(format!("the device's counters could not be read: {e}")),
            _ => Err("no block device under the work folder to count writes on".to_string()),
        };
        let (mbps, written, ios, rate_why) = match &delta {
            Ok(d) => {
                let (mbps, why) = crate::units::rate(d.written_bytes() as f64, seconds);
                (mbps, Some(d.written_bytes() as f64), Some(d.write_ios as f64), why)
            }
            Err(e) => (None, None, None, e.clone()),
        };
        let why = delta.err().unwrap_or_default();
        for (spec, (value, why)) in FIGURES[1..].iter().zip([(mbps, &rate_why), (written, &why), (ios, &why)]) {
            figures.put(spec, value, why);
        }
    }
}

/// The `exit_status` figure of a command that ended with `code` or was
/// killed by `signal`.
pub fn put_exit_status(code: Option<i32>, signal: Option<i32>, figures: &mut Figures) {
    let status = code.or(signal.map(|s| 128 + s)).map(f64::from);
    figures.put(&FIGURES[0], status, "the command ended neither by exit nor by a signal");
}
