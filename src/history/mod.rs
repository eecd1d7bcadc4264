//! `fslab history`: where a series of stored runs changed, per case and
//! figure and machine, said once per change, and when it cannot tell.
//!
//! [`detect`] finds change points in one series of values and knows
//! nothing of runs; [`series`] makes the series of a list of runs and
//! judges each; [`window`] says what changed between the two runs either
//! side of a change and the bisect that would find which change did it.

pub mod detect;
pub mod series;
pub mod window;

pub use detect::{Finding, Verdict, detect};
pub use series::Series;
