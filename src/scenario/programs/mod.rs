//! Programs people run, as scenarios: each is a real program driven by a
//! short shell script of ours in three parts — a stage set outside the
//! measured window, the measured run, and a checker of each crash state —
//! so the program's cost (its flushes, journal commits and modelled time)
//! and its safety (crash states judged by its own tools) are measured
//! together, under every condition a case can have.
//!
//! The run goes through `exec`'s machinery (`run_command`: its process
//! group recorded in the ledger, its output kept, its durability points
//! taken from `FSLAB_CRASH_MARK` where the program promises them), and
//! the checker is `exec --check`'s ([`CommandChecker`]): what a user
//! could write by hand, built in. Each script sees the case's parameters
//! as shell variables (upper case) and `SETUP`, a folder of fslab's
//! outside the target where the stage keeps what the run reads (the
//! packages dpkg installs); the scripts are in this folder beside their
//! scenario: `dpkg`, `git`, `sqlite` and `atomic-replace`.

mod dpkg;
mod git;
mod replace;
mod sqlite;

use std::path::Path;

pub use dpkg::DPKG;
pub use git::GIT;
pub use replace::ATOMIC_REPLACE;
pub use sqlite::SQLITE;

use super::durable::{Durable, StateChecker};
use super::exec::{self, CommandChecker, Echo};
use super::params::{ParamSpec, Params};
use super::{Scenario, Work, WorkOutcome};
use crate::error::{Error, Result};
use crate::ledger::Ledger;

/// A program's scripts.
#[derive(Debug, Clone, Copy)]
pub struct Scripts {
    /// Sets the stage in the work's folder (not measured).
    pub prepare: &'static str,
    /// The measured work.
    pub run: &'static str,
    /// Judges a crash state in its work folder: exit 0 good.
    pub check: &'static str,
}

/// A program as a scenario: what `list` says of it, its parameters, its
/// scripts, and what a case's parameters give them.
#[derive(Debug)]
pub struct Program {
    /// The scenario's name.
    pub name: &'static str,
    /// One line on what it runs.
    pub about: &'static str,
    /// Its parameters.
    pub params: &'static [ParamSpec],
    /// Its scripts.
    pub scripts: Scripts,
    /// A case's variables for the scripts (names as they read them) and
    /// the bytes its work needs.
    pub vars: fn(&Params) -> Vars,
}

/// A case's variables for a program's scripts and the bytes it needs.
pub type Vars = (Vec<(&'static str, String)>, u64);

/// The scripts `NAME_prepare.sh`, `NAME_run.sh` and `NAME_check.sh` of
/// this folder.
macro_rules! scripts {
    ($name:literal) => {
        super::Scripts {
            prepare: include_str!(concat!($name, "_prepare.sh")),
            run: include_str!(concat!($name, "_run.sh")),
            check: include_str!(concat!($name, "_check.sh")),
        }
    };
}
use scripts;

impl Scenario for Program {
    fn name(&self) -> &'static str {
        self.name
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }
    fn headline(&self) -> &'static [&'static str] {
        &["wall_s", "journal_commits", "flushes"]
    }
    fn work(&self, params: &Params) -> Box<dyn Work> {
        let (vars, space) = (self.vars)(params);
        Box::new(ProgramWork::new(self.scripts, vars, space))
    }
}

/// One case of a program.
pub struct ProgramWork {
    scripts: Scripts,
    /// `NAME=value` lines the scripts start with.
    vars: Vec<(String, String)>,
    setup: Option<tempfile::TempDir>,
    marks: Option<Durable>,
    space: u64,
}

impl ProgramWork {
    /// The work of `scripts` with `vars` (names as the scripts read them,
    /// values that are numbers or words), needing `space` bytes.
    pub fn new(scripts: Scripts, vars: Vec<(&str, String)>, space: u64) -> ProgramWork {
        let vars = vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        ProgramWork { scripts, vars, setup: None, marks: None, space }
    }

    /// `script` with the variables set first, `SETUP` among them.
    fn text(&self, script: &str) -> String {
        let mut text = String::new();
        let setup = self.setup.as_ref().map(|d| d.path().to_string_lossy().into_owned()).unwrap_or_default();
        for (name, value) in
            std::iter::once(("SETUP", setup.as_str())).chain(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        {
            text.push_str(&format!("{name}={}\n", quoted(value)));
        }
        text.push_str(script);
        text
    }
}

/// `value` in single quotes for the shell.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

impl Work for ProgramWork {
    fn prepare(&mut self, dir: &Path, ledger: &Ledger) -> Result<()> {
        use std::os::unix::process::ExitStatusExt;
        let setup = tempfile::Builder::new()
            .prefix("fslab-program-")
            .tempdir()
            .map_err(|e| Error::io(&std::env::temp_dir(), "make the program's setup folder", e))?;
        self.setup = Some(setup);
        // As the run: recorded before it runs, in a group of its own that
        // ends when it has, its output kept (bounded), whatever escaped
        // its group named and ended.
        let argv = ["/bin/sh".into(), "-c".into(), self.text(self.scripts.prepare).into()];
        let outcome = exec::run_command(ledger, &argv, dir, Echo::Off, None)?;
        crate::interrupt::check()?;
        let Some(failure) = outcome.failure else { return Ok(()) };
        let output = outcome.command.unwrap_or_default();
        let ended = match (output.exit_code, output.signal) {
            (Some(code), _) if code != 0 => std::process::ExitStatus::from_raw(code << 8).to_string(),
            (_, Some(signal)) => std::process::ExitStatus::from_raw(signal).to_string(),
            _ => failure,
        };
        let tail: Vec<&str> = output.stderr.lines().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
        Err(Error::failed(format!("setting the program's stage failed ({ended}): {}", tail.join(" / "))))
    }

    fn run(&mut self, dir: &Path, ledger: &Ledger) -> Result<WorkOutcome> {
        let argv = ["/bin/sh".into(), "-c".into(), self.text(self.scripts.run).into()];
        exec::run_command(ledger, &argv, dir, Echo::Off, self.marks.take())
    }

    fn mark_durable_with(&mut self, mark: Durable) {
        self.marks = Some(mark);
    }

    fn state_checker(&self) -> Option<Box<dyn StateChecker>> {
        Some(Box::new(CommandChecker { command: self.text(self.scripts.check) }))
    }

    fn space_needed(&self) -> u64 {
        self.space
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_for_the_shell() {
        assert_eq!(super::quoted("a b"), "'a b'");
        assert_eq!(super::quoted("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_stage_is_recorded_while_it_runs_and_what_it_left_running_ends_with_it() {
        // A stage that leaves a process behind (holding its stderr) and
        // fails: prepare returns, says the stage's last words, and the
        // process is gone.
        let dir = crate::test_temp::dir("");
        let prepare = "sleep 300 & echo $! > left.pid; echo 'no such package: x' >&2; exit 3";
        let scripts = Scripts { prepare, run: "true", check: "true" };
        let mut work = ProgramWork::new(scripts, vec![("N", "1".into())], 0);
        let ledger = Ledger::for_tests();
        let started = std::time::Instant::now();
        let err = work.prepare(dir.path(), &ledger).unwrap_err().to_string();
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "waited for the process left behind");
        assert!(err.contains("exit status: 3") && err.contains("no such package: x"), "{err}");
        let pid: i32 = std::fs::read_to_string(dir.path().join("left.pid")).unwrap().trim().parse().unwrap();
        let gone = (0..100).any(|_| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Gone, or a zombie waiting for init to reap it.
            let done = stat.is_empty() || stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'));
            if !done {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            done
        });
        assert!(gone, "the stage's sleep {pid} is still running");
        let mut ok = ProgramWork::new(Scripts { prepare: "test \"$N\" = 1", run: "true", check: "true" }, vec![("N", "1".into())], 0);
        ok.prepare(dir.path(), &ledger).unwrap();
    }
}
