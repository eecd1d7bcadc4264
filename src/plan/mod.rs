//! The plan: which cases a run has, built from what was asked and
//! checked before anything is made.
//!
//! The command line parses its flags into a request ([`RunRequest`],
//! [`ExecRequest`], [`HuntRequest`]; each holds a [`TargetRequest`], none
//! knows clap) and prints; this room turns a request into what
//! [`crate::harness::Run::start`] needs (the harness's [`Plan`]: targets,
//! conditions, sysctls, how targets start, guests) and, for `run` and
//! `exec`, the ordered list of [`PlannedCase`]s the run measures one by
//! one. Every contradiction is refused here with the flag named (`--fill`,
//! `--kernel`), and with `--preset seeds` the seeds' settings, conditions,
//! variants and, at the end, verdicts come from here too.
//!
//! A plan's cases are plain data: scenario, canonical parameters, target
//! and condition labels, repeat, and a key that depends on those alone
//! ([`case_key`]). The order is the run's: scenario, parameters, target,
//! condition, repeat.
//!
//! A plan can be written down (`fslab plan`, [`PlanFile`]) and run in
//! shares on many machines ([`shard`]): each case then keeps its key and
//! the plan's id in the store.
//!
//! What the plan asks of the machine (free space for the images, a memory
//! controller) goes through [`Machine`], so a plan is built the same in a
//! test as on the host.

mod adopt;
mod case;
pub mod disk;
pub mod exec;
mod file;
mod guest;
pub mod hunt;
pub mod hunt_axis;
mod machine;
pub mod measure;
mod preset;
pub mod run;
pub mod shard;
mod target;

pub use case::{PlannedCase, case_key};
pub use exec::ExecRequest;
pub use file::{FileCase, MAX_PLAN_FILE, PlanFile};
pub use guest::{GuestRequest, kernel_list, parse_vm_memory};
pub use hunt::HuntRequest;
pub use machine::{Host, Machine};
pub use run::{PresetName, RunPlan, RunRequest, verdicts_of};
pub use target::{
    SysctlList, TargetRequest, check_images_repeated, harness_plan, parse_fill_value, parse_memory, parse_neighbour_value, parse_sysctl_list,
};

pub use crate::harness::Plan;

#[cfg(test)]
mod tests;
