//! The template for a new scenario: copy this file, rename the struct and
//! its name, and add one line to [`SCENARIOS`](super::SCENARIOS). It is
//! compiled with the tests only, and the harness's own tests run it, so
//! the template always builds and measures.
//!
//! What a scenario must give: a name, a line about it, its parameters, and
//! the work for one set of values. Everything else has a default: figures
//! of its own (declared once, in [`FIGURES`]), a headline for its table,
//! a check of parameter combinations, and — for a seed report — a
//! [`Seeded`](super::Seeded) impl with the seed's comparison and verdict.

use std::io::Write;
use std::path::Path;

use super::params::{ParamKind, ParamSpec, Params};
use super::{Scenario, Work, WorkOutcome};
use crate::error::{Error, Result};
use crate::record::{Better, FigureSpec, Kind};
use crate::ledger::Ledger;

const PARAMS: [ParamSpec; 2] = [
    ParamSpec { name: "files", kind: ParamKind::Count { max: 1_000_000 }, small: "4", full: "64", seed: "-", about: "files to write" },
    ParamSpec { name: "size", kind: ParamKind::Size, small: "64K", full: "1M", seed: "-", about: "bytes per file" },
];

/// Figures the work measures itself, declared once.
const FIGURES: &[FigureSpec] = &[FigureSpec::new("files_written", "count", Better::Higher, Kind::Exact)
    .heading("written")
    .about("files the work wrote")];

/// The template scenario: write a few files and fsync each.
#[derive(Debug)]
pub struct Skeleton;

impl Scenario for Skeleton {
    fn name(&self) -> &'static str {
        "skeleton"
    }
    fn about(&self) -> &'static str {
        "the template: write a few files and fsync each"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &PARAMS
    }
    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }
    fn work(&self, params: &Params) -> Box<dyn Work> {
        Box::new(WriteFiles { files: params.number("files"), size: params.number("size") as usize })
    }
}

/// The work: everything in `run` is measured; `prepare` (not needed here)
/// would set the stage outside the measured window.
#[derive(Debug)]
pub struct WriteFiles {
    /// How many files.
    pub files: u64,
    /// Bytes per file.
    pub size: usize,
}

impl Work for WriteFiles {
    fn run(&mut self, dir: &Path, _ledger: &Ledger) -> Result<WorkOutcome> {
        let data = vec![0x5a; self.size];
        for i in 0..self.files {
            let path = dir.join(format!("file-{i}"));
            let mut file = std::fs::File::create(&path).map_err(|e| Error::io(&path, "create", e))?;
            file.write_all(&data).map_err(|e| Error::io(&path, "write", e))?;
            file.sync_all().map_err(|e| Error::io(&path, "fsync", e))?;
        }
        let mut outcome = WorkOutcome::default();
        outcome.figures.put(&FIGURES[0], Some(self.files as f64), "");
        Ok(outcome)
    }

    fn space_needed(&self) -> u64 {
        self.files * self.size as u64
    }
}
