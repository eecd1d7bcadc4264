//! The plan: what a run measures, built from what was asked and checked
//! before anything is made.
//!
//! The command line reads its target flags into a [`TargetRequest`] (no
//! clap here) and this room turns it into what
//! [`crate::harness::Run::start`] needs, the harness's [`Plan`]: targets,
//! conditions, sysctls, how targets start, guests. Every contradiction is
//! refused here with the flag named (`--fill`, `--kernel`); `hunt`'s
//! `--vary` axis is read here too.

mod guest;
pub mod hunt_axis;
mod target;

pub use guest::{GuestRequest, parse_vm_memory};
pub use target::{
    SysctlList, TargetRequest, check_images_repeated, harness_plan, parse_fill_value, parse_memory, parse_sysctl_list,
};

pub use crate::harness::Plan;
