//! A fake target kind for tests: a plain folder that claims no device and
//! no capability, so the harness can be tested without root (as hyperfine
//! tests its scheduler with a mock executor), beside the tests that make
//! real file systems on loop devices.

use std::path::{Path, PathBuf};

use super::TargetOptions;
use super::held::Held;
use super::kind::{Caps, Made, TargetKind};
use crate::ledger::{Ledger, Resource};
use crate::error::{Error, Result};
use crate::record::TargetRecord;

/// A target that is a new folder under `parent`, with no device behind it.
#[derive(Debug, Clone)]
pub struct Fake {
    /// Where the folder is made.
    pub parent: PathBuf,
    /// When set, making the target fails with this message.
    pub fail_make: Option<&'static str>,
}

impl TargetKind for Fake {
    fn label(&self) -> String {
        "fake".to_string()
    }

    fn needs_root(&self) -> bool {
        false
    }

    fn check(&self) -> Result<()> {
        Ok(())
    }

    fn make<'l>(&self, ledger: &'l Ledger, _options: &TargetOptions, run_id: &str) -> Result<Box<dyn Made + 'l>> {
        if let Some(why) = self.fail_make {
            return Err(Error::failed(why));
        }
        let mut held = Held::new(ledger);
        let dir = self.parent.join(format!("fslab-fake-{run_id}"));
        let token = held.record(Resource::WorkDir(dir.clone()))?;
        std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, "create", e))?;
        let id = crate::ledger::folder::FileId::of(std::fs::File::open(&dir).map_err(|e| Error::io(&dir, "open", e))?)
            .map_err(|e| Error::io(&dir, "stat", e))?;
        held.prove(token, crate::ledger::proof::Proof::File(id))?;
        Ok(Box::new(FakeMade { held, dir }))
    }
}

#[derive(Debug)]
struct FakeMade<'l> {
    held: Held<'l>,
    dir: PathBuf,
}

impl Made for FakeMade<'_> {
    fn work_dir(&self) -> &Path {
        &self.dir
    }

    fn fs_type(&self) -> &str {
        "fake"
    }

    fn record(&self) -> TargetRecord {
        TargetRecord { fs_type: "fake".into(), ..TargetRecord::default() }
    }

    fn caps(&self) -> Caps {
        Caps::default()
    }

    fn backing_path(&self) -> Option<&Path> {
        None
    }

    fn remount(&mut self) -> Result<()> {
        Err(Error::failed("a fake target cannot be remounted"))
    }

    fn release(mut self: Box<Self>) -> Result<()> {
        self.held.release()
    }
}
