//! The flags of `fslab hunt`.

use clap::Args;

use super::TargetArgs;

/// Arguments of `fslab hunt`.
#[derive(Debug, Args)]
pub struct HuntArgs {
    /// The scenario whose seed's claim is hunted (see `fslab list`).
    #[arg(value_name = "SCENARIO")]
    pub scenario: String,
    /// Targets and measurement (one target: a hunt follows one place).
    #[command(flatten)]
    pub target: TargetArgs,
    /// What to vary, from LO to HI: `memory`, a sysctl key, or a numeric
    /// parameter of the scenario (`memory=128M..1G`, `size=16M..1G`).
    #[arg(long, value_name = "KEY=LO..HI")]
    pub vary: String,
    /// A scenario parameter held at one value: `size=256M`. Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<crate::scenario::params::Setting>,
    /// Measure each point N times (a point whose repeats disagree, that
    /// ran busy or that breaks a single flip is measured N times more,
    /// once).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// The most points to measure, both ends included.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(2..))]
    pub steps: u32,
    /// Small default parameter values or the seeds' own.
    #[arg(long, value_enum, default_value_t = crate::scenario::params::Scale::Small)]
    pub scale: crate::scenario::params::Scale,
}
