//! The conditions the harness applies around a case's work: sysctls
//! (`--sysctl`) and a memory cgroup (`--memory`). What they leave set is
//! given back through the ledger (`crate::ledger::sysctl`,
//! `crate::ledger::cgroup`).

pub mod cgroup;
pub mod sysctl;
