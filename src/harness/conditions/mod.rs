//! The conditions the harness applies around a case's work: sysctls
//! (`--sysctl`), a memory cgroup (`--memory`) and a neighbour's fsync
//! (`--neighbour-fsync`). What they leave set is given back through the
//! ledger (`crate::ledger::sysctl`, `crate::ledger::cgroup`); the
//! neighbour's file is in the scratch file system, which goes with it.

pub mod cgroup;
pub mod neighbour;
pub mod sysctl;
