//! Argument parsing and printing; nothing else.
//!
//! Each subcommand is one file here that turns its arguments into calls on
//! `layout` (or `report`; `run`, `exec` and `hunt` read theirs into a
//! request for `plan`, and measure what it plans) and prints what comes
//! back. Results go to stdout,
//! errors to stderr as `fslab: PATH: what went wrong (what to do)`, and the
//! exit code is the contract's (`docs/DESIGN.md`): 0 done, 2 usage, 3 environment,
//! 4 failed; `compare` adds 1 (a regression) and 5 (undecided), `status` 6
//! (a plan's cases missing). A closed
//! stdout (`fslab ... | head`) is not an error.

mod across;
mod bisect;
mod bisect_args;
mod cleanup;
mod compare;
mod crash_table;
mod examples;
mod exec;
mod export;
mod runs;
mod show;
mod list;
mod disks;
mod report;
mod request;
mod run;
mod table;
mod verdicts;
mod format;
mod frag;
mod history;
mod hunt;
mod hunt_args;
mod hunt_said;
mod free;
mod kernels;
mod map;
mod output;
mod plan;
mod shell;
mod shown;
mod status;
mod store_place;
mod target_args;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};

use crate::error::ErrorKind;

pub(crate) use output::{Out, print, write_error};

pub use crate::SCHEMA;
pub use hunt_args::HuntArgs;
pub use target_args::TargetArgs;

/// fslab: a laboratory for file-system layout and write-path performance.
#[derive(Debug, Parser)]
#[command(name = "fslab", version = crate::VERSION, about, long_about = None, max_term_width = 100)]
#[command(after_help = examples::ENVIRONMENT)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Extent map of each file: every extent, then extents, perfection and
    /// layout score (what `filefrag -v` and `xfs_bmap -v` show).
    Map(MapArgs),
    /// Fragmentation of every regular file under each PATH, walked in
    /// parallel.
    Frag(FragArgs),
    /// Free-space fragmentation of a mounted file system (GETFSMAP: ext4,
    /// xfs).
    Free(FreeArgs),
    /// Run any command on fresh scratch file systems (or in a directory)
    /// with every probe around it: CPU, block I/O, journal commits,
    /// timeline, cold read-back, layout of what it left.
    #[command(after_help = examples::EXEC)]
    Exec(Box<ExecArgs>),
    /// The scenarios (one per seed report), their parameters, defaults
    /// and the seeds' values; the aging profiles (--ages); the disk
    /// model's drives (--disks).
    List(ListArgs),
    /// Run scenarios on fresh file systems (or in a directory), across a
    /// matrix of file systems and parameter values.
    #[command(after_help = examples::RUN)]
    Run(Box<RunCommandArgs>),
    /// Write the cases `fslab run` would measure with these flags into a
    /// plan file, each with a stable key, so shards of it can run on many
    /// machines (`fslab run --plan PLAN --shard K/N`) into one store.
    Plan(Box<PlanArgs>),
    /// What a store holds of a plan: per machine the cases done and
    /// failed, and the missing ones named. Exits 0 when every case is done,
    /// 4 when one failed, 6 when some are missing.
    Status(StatusArgs),
    /// Find where a seed's claim flips along one condition or parameter:
    /// measure both ends of `--vary KEY=LO..HI`, then bisect.
    Hunt(Box<HuntArgs>),
    /// Find the first kernel or commit where a figure or a verdict
    /// changes: measure both ends of an ordered axis, then bisect, each
    /// step a stored run (started again, it resumes from the store).
    #[command(after_help = examples::BISECT)]
    Bisect(Box<bisect_args::BisectArgs>),
    /// Where a series of stored runs changed, per case, figure and
    /// machine: each change once, with its run, its step and the window
    /// it falls in (and the bisect that would find it); drift said as
    /// drift; `can't tell` with the noise where a step would be missed.
    /// With --gate, exits 1 on a change for the worse, 5 when undecided.
    History(Box<history::HistoryArgs>),
    /// The runs a store holds, a line each.
    Runs(RunsArgs),
    /// Print a stored run again (its tables, or --json).
    Show(ShowArgs),
    /// Write a stored run as JSON (the `run --json` shape) or CSV (a row
    /// per figure).
    Export(ExportArgs),
    /// Regression verdicts between two runs, tags or stores: exact figures
    /// exactly, timings with a bootstrap interval and a rank test over the
    /// repeats. Exits 1 when anything gated regressed, 5 when the repeats
    /// cannot decide.
    #[command(after_help = examples::COMPARE)]
    Compare(CompareArgs),
    /// One self-contained HTML page of a run: bars per file system with
    /// their spread, extent-map strips, timelines with detected drops, and
    /// the comparison against --compare BASE.
    #[command(after_help = examples::REPORT)]
    Report(ReportArgs),
    /// Release every mount, loop device, image and sysctl that a killed
    /// fslab run left behind (runs still alive are not touched).
    Cleanup(CleanupArgs),
    /// What a kernel image can do here as a guest (`--kernel`): its
    /// modules, the file systems it can mount, how it boots, acceleration;
    /// `--list debian`: Debian's packaged kernels, by name.
    Kernels(KernelsArgs),
    /// Print a completion script for SHELL (bash, zsh, fish, elvish,
    /// powershell), generated from this command line.
    Completions(shell::CompletionsArgs),
    /// Print the manual page fslab(1), or write a page per subcommand
    /// into --dir.
    Man(shell::ManArgs),
}

/// Arguments of `fslab map`.
#[derive(Debug, Args)]
pub struct MapArgs {
    /// Regular files to map.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Leave the per-extent list out; print only the figures.
    #[arg(long)]
    pub no_list: bool,
    /// Flush each file before mapping it (as `filefrag -s`), so delayed
    /// allocations get their real locations.
    #[arg(long)]
    pub sync: bool,
    /// Also draw each file as an SVG strip into OUT (with several files,
    /// OUT gets the file's number before its extension: map-1.svg, ...).
    #[arg(long, value_name = "OUT")]
    pub svg: Option<PathBuf>,
    /// Unit of the offsets and lengths in the text list: file-system
    /// blocks (as filefrag -v), bytes, or 512-byte sectors (as xfs_bmap).
    /// JSON is always in bytes.
    #[arg(long, value_enum, default_value_t = MapUnits::Blocks)]
    pub units: MapUnits,
    /// The modelled drive to read each file on.
    #[command(flatten)]
    pub disk: DiskArgs,
}

/// Which modelled drive reading a layout is timed on: shared by `map`,
/// `frag`, `run`, `exec` and `hunt`.
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// Time reading the layout on this modelled drive (`fslab list
    /// --disks`): a built-in profile, or the one --disk-profile adds. run,
    /// exec and hunt use hdd-7200 unless told (the seeds preset: each
    /// seed's own disk, where its report names one); map and frag model
    /// only when told.
    #[arg(long, value_name = "PROFILE")]
    pub disk: Option<String>,
    /// Add the drive a JSON profile file describes
    /// (examples/disk-profile.json); given alone, it is the disk. Read
    /// only when named: a regular file of at most 64 KiB, root's or yours.
    #[arg(long, value_name = "FILE")]
    pub disk_profile: Option<PathBuf>,
}

/// The unit `fslab map` prints offsets and lengths in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MapUnits {
    /// File-system blocks (`filefrag -v`'s unit).
    Blocks,
    /// Bytes.
    Bytes,
    /// 512-byte sectors (`xfs_bmap`'s unit).
    Sectors,
}

/// Arguments of `fslab frag`.
#[derive(Debug, Args)]
pub struct FragArgs {
    /// Directories (or files) to walk.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// How many of the most fragmented files (those in more than one
    /// extent) to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Descend into other file systems mounted below PATH.
    #[arg(long)]
    pub cross_mounts: bool,
    /// The modelled drive to read the tree on.
    #[command(flatten)]
    pub disk: DiskArgs,
}

/// Arguments of `fslab kernels`.
#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// Kernel images (a bzImage/vmlinuz or vmlinux); `host` is the running
    /// kernel; `debian:NAME` (a list, a range A..B) Debian's packaged
    /// kernel, fetched into the kernel cache when absent.
    #[arg(required_unless_present = "list", value_name = "IMAGE")]
    pub images: Vec<String>,
    /// List the kernels of Debian's archive apt knows, oldest first, with
    /// their package version, size and whether the kernel cache holds
    /// them: `debian`, or `debian:RANGE` (debian:6.1.0-47..6.1.0-57).
    #[arg(long, value_name = "debian[:RANGE]", conflicts_with_all = ["images", "kernel_modules"])]
    pub list: Option<String>,
    /// The module tree (`lib/modules/RELEASE`) to use instead of the one
    /// beside the image or in /lib/modules.
    #[arg(long, value_name = "DIR")]
    pub kernel_modules: Option<PathBuf>,
    /// Where Debian's kernels (debian:NAME) are kept, under debian/NAME.
    #[arg(long, value_name = "DIR", default_value = crate::vm::prepare::DEFAULT_KERNEL_CACHE)]
    pub kernel_cache: PathBuf,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fslab free`.
#[derive(Debug, Args)]
pub struct FreeArgs {
    /// Mount point (or any path) of the file system to inspect.
    #[arg(value_name = "MOUNTPOINT")]
    pub mount_point: PathBuf,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also break the figures down per allocation group / block group.
    #[arg(long)]
    pub groups: bool,
    /// The headline counts free space in extents shorter than this (K, M,
    /// G; rounded up to a whole block): the shortest free extent a write
    /// you care about should find.
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = free::parse_reference)]
    pub reference: u64,
}

/// Which store to use: shared by every command that reads or writes runs.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store: an SQLite file, or a PostgreSQL URL
    /// (postgres://user:password@host/database). Else $FSLAB_STORE (empty
    /// counts as unset), else /var/lib/fslab/fslab.db for root,
    /// $XDG_DATA_HOME/fslab/fslab.db (~/.local/share/fslab/fslab.db) for
    /// anyone else. To store runs, its folder must be yours alone (the
    /// default's is made 0700).
    #[arg(long = "store", value_name = "PATH|URL", value_parser = crate::store::location::parse,
          default_value_t = crate::store::location::from_environment())]
    pub location: String,
}

/// Arguments of `fslab exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Targets and measurement.
    #[command(flatten)]
    pub target: TargetArgs,
    /// After the command, empty the cache and read every file it left,
    /// in directory order.
    #[arg(long)]
    pub cold_read: bool,
    /// Run the command N times on each target (a fresh file system each
    /// time), every run a stored case.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// First run the command N times on each target unrecorded (fresh file
    /// systems too), to warm the page cache with its program and the
    /// machine: warmup cases are neither stored nor shown.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warmup: u32,
    /// Show the command's stdout and stderr as it runs (still kept in the
    /// record); with --json its stdout goes to stderr.
    #[arg(long)]
    pub show_output: bool,
    /// Read the command's own results from its stdout as figures:
    /// `fio` (fio --output-format=json) gives each job's bandwidth, IOPS
    /// and p50/p99 completion latency.
    #[arg(long, value_enum, value_name = "PROGRAM")]
    pub parse: Option<crate::scenario::exec::OutputParser>,
    /// With --crash: judge each crash state by this shell command (run
    /// by /bin/sh -c in the state's work folder, after the mount's
    /// recovery): exit 0 good, anything else bad. FSLAB_CRASH_DURABLE
    /// names a file listing, one a line, what the command marked durable
    /// (lines it wrote to FSLAB_CRASH_MARK) by then.
    #[arg(long, value_name = "CMD", requires = "crash")]
    pub check: Option<String>,
    /// Show every figure, one column each, however wide the tables get
    /// (by default they fit 120 columns: the seed's figures first, then
    /// the common ones while they fit).
    #[arg(long)]
    pub wide: bool,
    /// The command and its arguments (after `--`). It runs in the work
    /// folder, with FSLAB_MOUNT (that folder), FSLAB_FS (the file system's
    /// type) and FSLAB_DEVICE (its block device, when there is one) set.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

/// Arguments of `fslab run`: the flags that decide its cases and how it
/// runs them, and a plan to run instead.
#[derive(Debug, Args)]
pub struct RunCommandArgs {
    /// The cases and how they run.
    #[command(flatten)]
    pub run: RunArgs,
    /// Run the cases of this plan (`fslab plan`) instead of naming them:
    /// the plan decides the cases, so only --shard and this machine's own
    /// flags (--scratch, --age-cache, --kernel-cache, --store, --no-store,
    /// --tag, --json, --progress, --wide) go with it. Each case is stored
    /// under the plan's id and its key, replacing the same case stored
    /// before.
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// With --plan, run only shard K of N: the cases whose shard key
    /// hashes to K (cases sharing an aged image share a shard). K from 1;
    /// `slurm/N` reads K-1 from SLURM_ARRAY_TASK_ID, `k8s/N` from
    /// JOB_COMPLETION_INDEX, `env:VAR/N` from VAR (0-based indexes, as the
    /// engines number their tasks).
    #[arg(long, value_name = "K/N", requires = "plan", value_parser = crate::plan::shard::parse_shard)]
    pub shard: Option<crate::plan::shard::ShardSpec>,
}

/// Arguments of `fslab plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The flags `fslab run` would be given.
    #[command(flatten)]
    pub run: RunArgs,
    /// The plan file to write (whole or not at all).
    #[arg(short, long, value_name = "PLAN")]
    pub output: PathBuf,
}

/// Arguments of `fslab status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The plan: its file, or its id in the store.
    #[arg(value_name = "PLAN")]
    pub plan: String,
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Also say which of N shards each missing case is in (the N it was
    /// run with), so the shard to run again is known.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub shards: Option<u32>,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The flags of `fslab run` that decide its cases and how it runs them
/// (shared by `run` and `plan`).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenarios to run (see `fslab list`); none with --preset: all.
    #[arg(value_name = "SCENARIO")]
    pub scenarios: Vec<String>,
    /// Targets and measurement.
    #[command(flatten)]
    pub target: TargetArgs,
    /// A scenario parameter; several values make a matrix: `size=64M,1G`.
    /// Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE[,VALUE...]")]
    pub set: Vec<crate::scenario::params::Setting>,
    /// Run every case N times.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Small sizes (minutes for everything) or the seeds' own.
    #[arg(long, value_enum, default_value_t = crate::scenario::params::Scale::Small)]
    pub scale: crate::scenario::params::Scale,
    /// Run a named set of comparisons: `seeds` runs each seed's own
    /// comparison (all scenarios, or those named) on every target and ends
    /// with a verdict per seed.
    #[arg(long, value_name = "NAME", value_parser = ["seeds"])]
    pub preset: Option<String>,
    /// Show every figure, one column each, however wide the tables get
    /// (by default they fit 120 columns: the seed's figures first, then
    /// the common ones while they fit).
    #[arg(long)]
    pub wide: bool,
}

/// Arguments of `fslab list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the aging profiles (`--age`) with their parameters instead.
    #[arg(long, conflicts_with = "disks")]
    pub ages: bool,
    /// List the drives the disk model knows instead: kind, rpm, seeks,
    /// media rates, cache, what a flush costs, and each one's source.
    #[arg(long)]
    pub disks: bool,
    /// With --disks, add the drive a JSON profile file describes
    /// (examples/disk-profile.json): read only when named, a regular file
    /// of at most 64 KiB, root's or yours.
    #[arg(long, value_name = "FILE", requires = "disks")]
    pub disk_profile: Option<PathBuf>,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fslab runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Only runs with this tag.
    #[arg(long, value_name = "NAME")]
    pub tag: Option<String>,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Show every column whole, however wide the lines get (by default
    /// they fit 120 columns: long scenario, target, setup and tag lists
    /// are cut with `…`; run ids never are).
    #[arg(long)]
    pub wide: bool,
}

/// Arguments of `fslab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id (or a unique start of one), a tag, `last`, or a file: a
    /// store, or a run's --json output.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Show every figure, one column each, however wide the tables get
    /// (by default they fit 120 columns: the seed's figures first, then
    /// the common ones while they fit).
    #[arg(long)]
    pub wide: bool,
    /// Give the seeds' verdicts with a row per place and all its evidence
    /// (by default places that got the same word from the same test share
    /// a line; --json always has every place).
    #[arg(long)]
    pub why: bool,
}

/// Arguments of `fslab export`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("format").required(true).args(["csv", "json"]))]
pub struct ExportArgs {
    /// A run id (or a unique start of one), a tag, `last`, or a file.
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
    /// One row per figure of every case.
    #[arg(long)]
    pub csv: bool,
    /// The run as `fslab run --json` prints it.
    #[arg(long)]
    pub json: bool,
    /// Write to FILE (whole or not at all) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// How `compare` (and `report --compare`) judge.
#[derive(Debug, Args)]
pub struct CompareOptionArgs {
    /// Smallest change that counts: the confidence interval of the ratio
    /// must clear it (`5%` or `0.05`).
    #[arg(long, value_name = "SHARE", default_value = "5%")]
    pub threshold: String,
    /// Significance level (false discovery rate over the figures tested).
    #[arg(long, value_name = "LEVEL", default_value = "0.05")]
    pub alpha: String,
    /// Judge host-wide figures (backing_*: the whole disk under the
    /// target, other users included) too; by default they are shown, not
    /// judged.
    #[arg(long)]
    pub host_figures: bool,
}

/// Arguments of `fslab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run id (or a unique start of one), a tag, `last`, or a file; with
    /// `--history`, the series (a tag, a plan id, or a store).
    #[arg(value_name = "RUN")]
    pub run: String,
    /// The HTML file to write (whole or not at all).
    #[arg(short, long, value_name = "FILE.html")]
    pub output: PathBuf,
    /// Add the comparison of RUN against this base.
    #[arg(long, value_name = "BASE", conflicts_with = "history")]
    pub compare: Option<String>,
    /// Draw RUN's runs as a history instead, oldest first: each figure's
    /// series with its change points (as `fslab history`), judged against
    /// `--threshold`.
    #[arg(long)]
    pub history: bool,
    /// How the comparison judges.
    #[command(flatten)]
    pub compare_options: CompareOptionArgs,
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Arguments of `fslab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base: a run id (or a unique start of one), a tag (its runs'
    /// repeats pooled), `last`, or a file (a store, or a run's --json).
    #[arg(value_name = "BASE")]
    pub base: String,
    /// What is compared against the base, named the same ways.
    #[arg(value_name = "NEW")]
    pub new: String,
    /// The store to read.
    #[command(flatten)]
    pub store: StoreArgs,
    /// How it judges.
    #[command(flatten)]
    pub options: CompareOptionArgs,
    /// Only these figures fail the comparison (or leave it undecided),
    /// each at its own threshold when given (`extents`, `wall_s:10%`;
    /// repeatable, or a comma list); the others are shown, not gated. A
    /// gated exact figure without a threshold fails on any change.
    #[arg(long, value_name = "FIGURE[:THRESHOLD]", value_delimiter = ',', action = clap::ArgAction::Append)]
    pub gate: Vec<String>,
    /// Read gates from FILE: one `--gate` value a line, `#` comments.
    /// Never read unless named.
    #[arg(long, value_name = "FILE")]
    pub gate_file: Option<PathBuf>,
    /// Exit 0, not 5, when the repeats cannot decide a gated figure that
    /// moved past its threshold for the worse (still said).
    #[arg(long)]
    pub allow_undecided: bool,
    /// List every figure, not only those that changed.
    #[arg(long)]
    pub all: bool,
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print a Markdown table (for a pull request or an issue).
    #[arg(long)]
    pub markdown: bool,
}

/// Arguments of `fslab cleanup`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Print JSON (schema fslab/1) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also empty the cache of aged images: every entry, complete or
    /// not, and nothing else in its folder.
    #[arg(long)]
    pub cache: bool,
    /// Wait for live runs to let go of the machine's sysctl lock, queued
    /// as a run queues for it, then put back what dead runs left (without
    /// it, sysctls a live run may have set are left and reported, exit 4).
    #[arg(long)]
    pub wait: bool,
    /// The cache folder to empty [default: SCRATCH/age-cache].
    #[arg(long, value_name = "DIR", requires = "cache")]
    pub age_cache: Option<PathBuf>,
    /// The scratch folder whose cache to empty (the default cache folder
    /// lies in it).
    #[arg(long, value_name = "DIR", default_value = crate::site::DEFAULT_SCRATCH)]
    pub scratch: PathBuf,
}

/// Parse the command line, run, and turn the outcome into an exit code.
pub fn main() -> ExitCode {
    let parsed = Cli::command().try_get_matches().and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { ErrorKind::Usage.exit_code() } else { 0 });
        }
    };
    // What each flag's value came from: `plan` keeps those given, `run
    // --plan` refuses those that decide cases.
    let given = matches.subcommand().map(|(_, m)| m).unwrap_or(&matches);
    // Only commands that make targets release dead runs first (`cleanup`
    // does nothing else); reading commands leave other runs' leftovers,
    // and what is said about them, to those.
    if matches!(cli.command, Command::Run(_) | Command::Exec(_) | Command::Hunt(_) | Command::Bisect(_)) {
        cleanup::on_start();
    }
    let outcome = match &cli.command {
        Command::Map(args) => map::run(args),
        Command::Frag(args) => frag::run(args),
        Command::Free(args) => free::run(args),
        Command::Kernels(args) => kernels::run(args),
        Command::Exec(args) => exec::run(args),
        Command::List(args) => list::run(args),
        Command::Run(args) => run::run(args, given),
        Command::Plan(args) => plan::run(args, given),
        Command::Status(args) => status::run(args),
        Command::Hunt(args) => hunt::run(args),
        Command::Bisect(args) => bisect::run(args),
        Command::History(args) => history::run(args),
        Command::Runs(args) => runs::run(args),
        Command::Show(args) => show::run(args),
        Command::Export(args) => export::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Report(args) => report::run(args),
        Command::Cleanup(args) => cleanup::run(args),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args),
    };
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            // Whatever text an error quotes (a stored label, a guest's
            // console) reaches the terminal without its control characters.
            eprintln!("fslab: {}", crate::text::escape_keeping_lines(&e.message));
            e.exit_code()
        }
    };
    // Everything is released by now; an interrupted run dies of its signal.
    crate::interrupt::die_if_interrupted();
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
