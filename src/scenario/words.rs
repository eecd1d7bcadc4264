//! A work said again as an fslab command line: what another fslab (a
//! guest's) is given to do the same work once. A scenario is `run NAME`
//! with a `--set` per parameter; a command is `exec` with the flags that
//! shape its work and, last, `--` and the command itself.

use super::{WorkSpec, exec};

/// The words of an fslab command line that does one work, in three parts
/// so the caller can put its own flags (target, conditions) between them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkWords {
    /// The subcommand and what names the work: `run replace-files`, `exec`.
    pub command: Vec<String>,
    /// The flags that shape the work: `--set files=200`, `--cold-read`,
    /// `--parse=fio`, `--check=CMD`.
    pub flags: Vec<String>,
    /// What comes after every flag: `--` and the command's words, for
    /// `exec`; nothing for a scenario.
    pub last: Vec<String>,
    /// Whether the work sees the environment fslab runs in: a command
    /// inherits it, so another fslab doing the command must be given it.
    pub inherits_env: bool,
}

impl WorkSpec {
    /// The command line that does this work once; `Err` says which
    /// parameter cannot be said on one.
    pub fn words(&self) -> Result<WorkWords, String> {
        if self.scenario == exec::NAME {
            return exec::CommandWork::from_params(&self.params).map(|work| work.words()).map_err(|e| e.message);
        }
        let mut flags = Vec::new();
        for (name, value) in &self.params {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if text.contains(',') {
                // `--set` reads a comma as a list of values.
                return Err(format!("parameter {name}={text} holds a comma, which `--set` would split"));
            }
            flags.push("--set".into());
            flags.push(format!("{name}={text}"));
        }
        Ok(WorkWords { command: vec!["run".into(), self.scenario.clone()], flags, last: Vec::new(), inherits_env: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_is_run_with_its_parameters_set() {
        let mut params = serde_json::Map::new();
        params.insert("strategy".into(), "fsync-each".into());
        params.insert("files".into(), 200.into());
        let words = WorkSpec { scenario: "replace-files".into(), params: params.clone() }.words().unwrap();
        assert_eq!(words.command, ["run", "replace-files"]);
        assert_eq!(words.flags, ["--set", "strategy=fsync-each", "--set", "files=200"]);
        assert!(words.last.is_empty() && !words.inherits_env);
        params.insert("path".into(), "./a,b".into());
        let bad = WorkSpec { scenario: "replace-files".into(), params };
        assert!(bad.words().unwrap_err().contains("comma"));
    }

    #[test]
    fn a_command_is_exec_with_the_flags_that_shape_it_and_the_command_last() {
        let work = exec::CommandWork {
            argv: vec!["sh".into(), "-c".into(), "echo a,b --repeat 2".into()],
            cold_read: true,
            parse: Some(exec::OutputParser::Fio),
            echo: exec::Echo::Streams,
            check: Some("test -f a; exit $?".into()),
            marks: None,
        };
        let words = WorkSpec { scenario: exec::NAME.into(), params: work.params() }.words().unwrap();
        assert_eq!(words.command, ["exec"]);
        assert_eq!(words.flags, ["--cold-read", "--parse=fio", "--check=test -f a; exit $?"]);
        assert_eq!(words.last, ["--", "sh", "-c", "echo a,b --repeat 2"]);
        assert!(words.inherits_env);
        let plain = exec::CommandWork { cold_read: false, parse: None, check: None, ..work };
        assert!(WorkSpec { scenario: exec::NAME.into(), params: plain.params() }.words().unwrap().flags.is_empty());
    }
}
