//! The flags of `fslab bisect`.

use std::path::PathBuf;

use clap::Args;

use super::TargetArgs;

/// Arguments of `fslab bisect`: an ordered axis (`--kernel A,B,...` or
/// `--repo DIR --good REV`), the change looked for (`--figure` or
/// `--verdict`), and the work measured at each point (a command after
/// `--`, or `--scenario`).
#[derive(Debug, Args)]
pub struct BisectArgs {
    /// Targets and measurement; `--kernel LIST` is the axis of a kernel
    /// bisect, in order, the good end first.
    #[command(flatten)]
    pub target: TargetArgs,
    /// A program's history as the axis: the git repository (root's or
    /// yours; nothing uncommitted).
    #[arg(long, value_name = "DIR", requires_all = ["good", "build"], conflicts_with = "kernel")]
    pub repo: Option<PathBuf>,
    /// The good end: a commit of --repo, or a kernel of the --kernel list
    /// (default: the list's first).
    #[arg(long, value_name = "REV")]
    pub good: Option<String>,
    /// The bad end: a commit of --repo (default HEAD), or a kernel of the
    /// --kernel list (default: the list's last).
    #[arg(long, value_name = "REV")]
    pub bad: Option<String>,
    /// Build each commit with this shell command, run as the repository's
    /// owner in a folder holding the commit's tree; `{tree}` in the
    /// measured command names that folder. A build that fails skips the
    /// commit.
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// The figure that changes (`journal_commits`, `wall_s`...): an
    /// exact one decides from one run a point, a timing by repeats and
    /// the rank-sum test.
    #[arg(long, value_name = "NAME", required_unless_present = "verdict")]
    pub figure: Option<String>,
    /// Where the figure turns bad: a value for an exact figure (default
    /// midway between the ends), the least change for a timing (default
    /// 5%).
    #[arg(long, value_name = "VALUE|PCT%", requires = "figure", value_parser = crate::bisect::Threshold::parse)]
    pub threshold: Option<crate::bisect::Threshold>,
    /// The verdict word that is bad (`shows`): with --scenario.
    #[arg(long, value_name = "WORD", conflicts_with = "figure", requires = "scenario", value_parser = ["shows", "gone"])]
    pub verdict: Option<String>,
    /// Measure this scenario at each point instead of a command.
    #[arg(long, value_name = "SCENARIO", conflicts_with = "command")]
    pub scenario: Option<String>,
    /// The scenario's parameter values.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "scenario")]
    pub set: Vec<crate::scenario::params::Setting>,
    /// A timing's first measure of a point takes this many repeats; one
    /// more is added at a time until the point is told apart.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=50))]
    pub repeat: u32,
    /// The most a timing's point is measured before it is `can't tell`.
    #[arg(long, value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u32).range(2..=200))]
    pub max_repeat: u32,
    /// The command measured at each point (after `--`), as `fslab exec`
    /// runs it.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}
