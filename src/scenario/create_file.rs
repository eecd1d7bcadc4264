//! `create-file` (seed 003). Being written: this stub only holds its place in
//! the scenario list.

use std::path::Path;

use super::params::{ParamSpec, Params};
use super::verdict::{Preset, Verdict};
use super::{Case, Scenario, Work, WorkOutcome};
use crate::error::{Error, Result};

/// The scenario.
#[derive(Debug)]
pub struct CreateFile;

impl Scenario for CreateFile {
    fn name(&self) -> &'static str {
        "create-file"
    }
    fn seed(&self) -> &'static str {
        "003"
    }
    fn about(&self) -> &'static str {
        "not written yet"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn own_figures(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    fn headline(&self) -> &'static [&'static str] {
        &["wall_s"]
    }
    fn work(&self, _params: &Params) -> Box<dyn Work> {
        Box::new(Stub)
    }
    fn preset(&self) -> Preset {
        Preset { settings: &[], variants: &[] }
    }
    fn verdict(&self, _cases: &[&Case]) -> Verdict {
        Verdict::unknown(self.name(), self.seed(), "not written yet")
    }
}

struct Stub;

impl Work for Stub {
    fn run(&mut self, _dir: &Path) -> Result<WorkOutcome> {
        Err(Error::failed("create-file is not written yet"))
    }
}
