//! `fslab free MOUNTPOINT`: free-space fragmentation (placeholder until the
//! GETFSMAP reader lands).

use std::process::ExitCode;

use super::FreeArgs;
use crate::error::{Error, Result};

/// Run `fslab free`.
pub fn run(args: &FreeArgs) -> Result<ExitCode> {
    Err(Error::environment(format!("{}: fslab free is not built yet", args.mount_point.display())))
}
