//! The target flags `run`, `exec` and `hunt` share: where work runs, under
//! which conditions, and how it is measured and recorded.

use std::path::PathBuf;

use clap::Args;

use super::{DiskArgs, StoreArgs, request};

/// Where work runs and how it is measured: shared by `exec` and `run`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// File systems to make, comma-separated (default: all five).
    #[arg(long, value_delimiter = ',', value_name = "FS,...", conflicts_with = "dir")]
    pub fs: Vec<crate::site::FsType>,
    /// Run in a new folder inside this existing directory instead (no root
    /// needed; root-only figures are then missing).
    #[arg(long, value_name = "PATH", conflicts_with = "device")]
    pub dir: Option<PathBuf>,
    /// Make the file systems on this real block device instead of a loop
    /// device. Everything on it is destroyed; needs --destroy-data-on
    /// naming the same device.
    #[arg(long, value_name = "DEV", requires = "destroy_data_on")]
    pub device: Option<PathBuf>,
    /// Agree that the --device named is formatted.
    #[arg(long, value_name = "DEV")]
    pub destroy_data_on: Option<PathBuf>,
    /// Folder for images and mount points.
    #[arg(long, value_name = "DIR", default_value = crate::site::DEFAULT_SCRATCH)]
    pub scratch: PathBuf,
    /// Size of each image (sparse): 512M, 2G, ... [default: 2G]
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_bytes)]
    pub size: Option<u64>,
    /// Extra mkfs arguments for one file system, split as a shell would
    /// (but never run by one): `ext2=-b 1024`. Repeatable.
    #[arg(long, value_name = "FS=ARGS", value_parser = crate::site::parse_fs_value)]
    pub mkfs_opt: Vec<(crate::site::FsType, String)>,
    /// Mount options for one file system: `ext4=nodelalloc`. Repeatable.
    #[arg(long, value_name = "FS=OPTS", value_parser = crate::site::parse_fs_value)]
    pub mount_opt: Vec<(crate::site::FsType, String)>,
    /// Set a sysctl, restored afterwards: `vm.dirty_ratio=90` for the whole
    /// run; a list (`vm.dirty_background_bytes=16M,64M`) is a matrix axis,
    /// each case under one value. Repeatable; needs root.
    #[arg(long, value_name = "KEY=VALUE[,VALUE...]", value_parser = crate::plan::parse_sysctl_list)]
    pub sysctl: Vec<crate::plan::SysctlList>,
    /// Run the measured work in a memory cgroup limited to SIZE (its page
    /// cache included): a list (`192M,1G`) is a matrix axis, as --fs is.
    /// Needs root and a memory cgroup controller.
    #[arg(long, value_name = "SIZE[,SIZE...]", value_delimiter = ',', value_parser = crate::plan::parse_memory)]
    pub memory: Vec<(String, u64)>,
    /// Age each scratch file system before the work: `churn`,
    /// `churn:fill=80%,rounds=4`, `tree`, `free-frag`, `file:PATH`,
    /// `git:REPO[:N]` (see `fslab list --ages`). Deterministic; the aged
    /// image is kept in the cache and copied for every case.
    #[arg(long, value_name = "PROFILE[:K=V,...]")]
    pub age: Option<crate::age::AgeSpec>,
    /// Fill each scratch file system to PCT before the work (after any
    /// aging), with filler files: `80%` or `0.8`; a list (`50%,80%,95%`)
    /// is a matrix axis, as --memory is.
    #[arg(long, value_name = "PCT[,PCT...]", value_delimiter = ',', value_parser = crate::plan::parse_fill_value)]
    pub fill: Vec<(String, f64)>,
    /// Where aged and filled images are kept [default: SCRATCH/age-cache].
    #[arg(long, value_name = "DIR")]
    pub age_cache: Option<PathBuf>,
    /// Age N independent images of each aged start, each from its own
    /// seed (the profile's seed, seed+1, ...): repeat R starts from image
    /// ((R-1) mod N)+1, so give --repeat N or more; a verdict then says
    /// how many images it rests on and reads `mixed` when they disagree.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub age_images: u32,
    /// Record every write each scratch device completes (a
    /// qemu-storage-daemon logs them between the loop device and the
    /// image, in the dm-log-writes format) and keep each case's recording
    /// in the scratch folder: RUN-LABEL-recN/ holds before.img (the image
    /// before the work), writes.log and recording.json. Cases run as
    /// FS@crash=record, and --json gives each its `crash` record.
    #[arg(long, conflicts_with_all = ["dir", "device"])]
    pub crash_record: bool,
    /// The most a case's write log may take with --crash-record or
    /// --crash [default: 4G]; a case whose log reaches it fails, saying the
    /// size needed, and the run exits 2.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_bytes)]
    pub crash_log_cap: Option<u64>,
    /// Record every write (as --crash-record, kept only with it too), then
    /// judge each case's crash states: `flush` (the device after each
    /// flush), `prefix` (after each write) or `subset:K` (each epoch's
    /// start and K subsets of its unflushed writes). Each state is
    /// rebuilt, mounted, looked at by the work's checker and checked by
    /// the file system's own; cases run as FS@crash=MODEL.
    #[arg(long, value_name = "MODEL", conflicts_with = "dir")]
    pub crash: Option<crate::crash::Model>,
    /// Inside a guest only: the write log the host's QEMU keeps of
    /// `--device`'s writes, shared read-only; the guest marks, reads and
    /// judges its crash states from it with its own kernel.
    #[arg(long, value_name = "LOG", hide = true, requires_all = ["crash", "device"])]
    pub crash_host_log: Option<PathBuf>,
    /// The seed subset:K draws its subsets with [default: 31].
    #[arg(long, value_name = "N", requires = "crash")]
    pub crash_seed: Option<u64>,
    /// The most crash states judged per case [default: 300]; more are
    /// thinned evenly over the log, and the output says so.
    #[arg(long, value_name = "N", requires = "crash", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub crash_max_states: Option<u32>,
    /// Beside the work, another writer appends to a file of its own in
    /// the same folder and fsyncs it, at once and then every INTERVAL (`1s`,
    /// `250ms`; `0s`: one after another), as a neighbour process would, so
    /// the journal or log commits mid-work; `off` for none. A list (`off,1s`) is an axis; cases run as
    /// FS@neighbour_fsync=1s, and count its fsyncs in neighbour_fsyncs.
    #[arg(long, value_name = "INTERVAL[,INTERVAL...]", value_delimiter = ',', value_parser = crate::plan::parse_neighbour_value)]
    pub neighbour_fsync: Vec<(String, Option<std::time::Duration>)>,
    /// Timeline sampling interval in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub interval: f64,
    /// The modelled drive the layout's read time is for.
    #[command(flatten)]
    pub disk: DiskArgs,
    /// A name for this run, to compare by later; repeatable.
    #[arg(long, value_name = "NAME")]
    pub tag: Vec<String>,
    /// Other kernels, booted in guests.
    #[command(flatten)]
    pub vm: request::KernelArgs,
    /// Where runs are kept: an SQLite file, or postgres://user:pw@host/db.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Do not store this run (wins over --store and FSLAB_STORE).
    #[arg(long)]
    pub no_store: bool,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// How progress is said on stderr while cases run: `auto` is the bar
    /// on a terminal and a line per case start and end elsewhere (a log,
    /// nohup, CI); `json` says each as one JSON object a line.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = crate::progress::Mode::Auto)]
    pub progress: crate::progress::Mode,
}
