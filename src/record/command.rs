//! What a command run as the work (`fslab exec`) printed and how it ended.

use serde::{Deserialize, Serialize};

/// How the command ended and what it printed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CommandOutput {
    /// The argv run.
    pub argv: Vec<String>,
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Standard output (lossy UTF-8), up to the kept limit.
    pub stdout: String,
    /// Standard error (lossy UTF-8), up to the kept limit.
    pub stderr: String,
    /// Bytes of output beyond what was kept, both streams.
    pub dropped_bytes: u64,
}

