//! `fslab frag PATH...` (being written).
use std::process::ExitCode;
use super::FragArgs;
use crate::error::Result;
/// Run `fslab frag`.
pub fn run(_args: &FragArgs) -> Result<ExitCode> { Ok(ExitCode::SUCCESS) }
