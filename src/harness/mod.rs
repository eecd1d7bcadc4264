//! The harness: how a run goes, from a plan to a stored record. It is the
//! one place that knows the order of things — make the target, start the
//! probes, run the work, sync, stop, read back, map, release, store — so
//! `exec`, `run` and `hunt` are short loops over [`Run::measure`].
//!
//! Where a case's work runs is chosen by its condition, in one place
//! (`Lab::measure`): under a kernel other than the host's, the whole case
//! goes to a guest that runs this same binary (`guest.rs`); otherwise the
//! work runs on the harness's own thread, moved into the case's memory
//! cgroup around the work when the case has a limit (`measure.rs`). A new
//! place to run is a new arm there.
//!
//! The design decision: everything here sits above scenarios, probes,
//! targets and the store, and below the command line; it prints nothing
//! but its progress on stderr (`crate::progress`).

mod ahead;
mod condition;
pub mod crash_states;
pub mod conditions;
mod deferred;
mod environment;
mod guest;
pub mod hunt;
mod keep;
mod kernel_log;
mod lab;
mod layout;
mod measure;
mod memory;
mod modelled;
mod pool;
mod recording;
mod room;
mod run;
mod start;

pub use ahead::CaseStart;
pub use condition::{CaseSysctl, Condition, KernelChoice, matrix, with_fills, with_kernels, with_neighbours};
pub use environment::read_environment;
pub use guest::{DEFAULT_VM_MEMORY, GuestPlan};
pub use keep::{Keeper, writable as writable_store};
pub use lab::{ColdRead, Lab, Plan, cleanup_dead_runs};
pub use measure::{Phase, SYNC_FIGURE};
pub use room::{check_disk, check_room, check_start_room};
pub use run::{Finished, Run};
pub use start::{StartPlan, start_key};

use crate::record::Catalog;

/// Every scenario and every figure this fslab declares: the probes', the
/// harness's own, the deferred work's, the cold read's, the layout's and
/// its modelled read's, and each scenario's.
pub fn catalog() -> Catalog {
    let mut lists: Vec<&'static [crate::record::FigureSpec]> = Vec::new();
    for probe in crate::probe::PROBES {
        lists.push(probe.figures());
        if probe.name() == "cpu" {
            lists.push(std::slice::from_ref(&SYNC_FIGURE));
        }
    }
    lists.push(crate::probe::blockstat::BACKING_FIGURES);
    lists.extend(crate::probe::PROBES.iter().map(|probe| probe.deferred_figures()));
    lists.push(crate::probe::cold::FIGURES);
    lists.push(crate::probe::trace::COLD_FIGURES);
    lists.push(memory::FIGURES);
    lists.push(recording::FIGURES);
    lists.push(conditions::neighbour::FIGURES);
    lists.push(crash_states::FIGURES);
    lists.push(layout::FIGURES);
    lists.push(modelled::FIGURES);
    lists.push(start::FIGURES);
    crate::scenario::catalog(&lists)
}

#[cfg(test)]
mod tests;
