//! Comparing runs with statistics (placeholder until the compare module lands).

pub mod stats;
