//! A program's history as a bisect axis (`--repo DIR --good REV`): the
//! commits from the good one to the bad one along first parents, each
//! exported into a folder of fslab's and built there by the user's
//! command.
//!
//! Safety, as root: the repository is held to the folder rule (root's or
//! the invoking user's, written by no one else) before git reads it, and
//! git and the build run as the repository's owner, never as root for
//! another user's tree, with neither the system's nor a global git
//! configuration. The repository is only read: each commit leaves it by
//! `git archive`, so nothing of fslab's lands in its `.git` and its work
//! tree is never checked out. A repository with uncommitted changes is
//! refused, since a bisect measures commits, not the work tree.

use std::io::Read as _;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::search::Point;
use crate::error::{Error, Result};
use crate::ledger::given;

/// How many lines of a failed build's output a skip quotes.
const QUOTED_LINES: usize = 6;

/// A repository checked and ready to be read.
#[derive(Debug)]
pub struct Repo {
    /// Its top folder, canonical.
    pub path: PathBuf,
    /// The owner git and the builds run as: user and group ids.
    pub owner: (u32, u32),
}

impl Repo {
    /// Check `path` (the folder rule, a git work tree, nothing uncommitted)
    /// and open it.
    pub fn open(path: &Path) -> Result<Repo> {
        let dir = given::open_dir(path, "--repo")?;
        let meta = std::fs::metadata(&dir.path).map_err(|e| Error::io(&dir.path, "--repo", e))?;
        let repo = Repo { path: dir.path.clone(), owner: (meta.uid(), meta.gid()) };
        let top = repo.git_text(&["rev-parse", "--show-toplevel"]).map_err(|why| {
            Error::usage(format!("{}: not a git repository ({why}); give --repo the folder of a clone", path.display()))
        })?;
        if Path::new(top.trim()) != repo.path {
            return Err(Error::usage(format!(
                "{}: a folder inside the repository {}; give --repo its top folder",
                path.display(),
                top.trim()
            )));
        }
        let changed = repo.git_text(&["status", "--porcelain", "--untracked-files=no"]).map_err(Error::failed)?;
        if !changed.trim().is_empty() {
            let files: Vec<&str> = changed.lines().take(5).map(|l| l.get(3..).unwrap_or(l)).collect();
            return Err(Error::usage(format!(
                "{}: uncommitted changes ({}{}): commit or stash them first; a bisect builds commits, never the work tree",
                path.display(),
                files.join(", "),
                if changed.lines().count() > 5 { ", ..." } else { "" }
            )));
        }
        Ok(repo)
    }

    /// The commits from `good` to `bad` along first parents, good first:
    /// the axis. Refuses revisions git does not know, and a good commit
    /// that is not an ancestor of the bad one.
    pub fn commits(&self, good: &str, bad: &str) -> Result<Vec<Point>> {
        let resolve = |rev: &str, flag: &str| {
            if rev.starts_with('-') {
                return Err(Error::usage(format!("{flag} {rev}: a revision cannot start with '-'")));
            }
            self.git_text(&["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")])
                .map(|id| id.trim().to_string())
                .map_err(|_| Error::usage(format!("{flag} {rev}: no such commit in {}", self.path.display())))
        };
        let (good_id, bad_id) = (resolve(good, "--good")?, resolve(bad, "--bad")?);
        if good_id == bad_id {
            return Err(Error::usage(format!("--good {good} and --bad {bad} are the same commit: nothing lies between")));
        }
        if self.git_status(&["merge-base", "--is-ancestor", &good_id, &bad_id]).map_err(Error::failed)? != Some(0) {
            return Err(Error::usage(format!(
                "--good {good} is not an ancestor of --bad {bad}: the good commit must come first in the history"
            )));
        }
        let range = format!("{good_id}..{bad_id}");
        let log = self.git_text(&["log", "--first-parent", "--reverse", "--format=%H %s", &range]).map_err(Error::failed)?;
        let first = self.git_text(&["log", "-1", "--format=%H %s", &good_id]).map_err(Error::failed)?;
        Ok(first.lines().chain(log.lines()).filter_map(point).collect())
    }

    /// Export `commit`'s tree into `into` (a folder the owner can write)
    /// and build it there with `sh -c build`; `Err` the build's failure,
    /// quoted, which skips the commit.
    pub fn build(&self, commit: &str, into: &Path, build: &str) -> std::result::Result<(), String> {
        let mut archive = self
            .git()
            .args(["archive", "--format=tar", commit])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("git archive: {e}"))?;
        let stdout = archive.stdout.take().ok_or("git archive: no output")?;
        let tar = self.as_owner(Command::new("tar")).args(["-x", "-f", "-", "-C"]).arg(into).stdin(stdout).output();
        let archived = archive.wait_with_output().map_err(|e| format!("git archive: {e}"))?;
        let tar = tar.map_err(|e| format!("tar: {e}"))?;
        if !archived.status.success() || !tar.status.success() {
            return Err(format!(
                "exporting {commit} failed: {}{}",
                String::from_utf8_lossy(&archived.stderr).trim(),
                String::from_utf8_lossy(&tar.stderr).trim()
            ));
        }
        let out = self
            .as_owner(Command::new("sh"))
            .args(["-c", build])
            .current_dir(into)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("starting the build (sh -c {build:?}): {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        let mut said = String::from_utf8_lossy(&out.stderr).into_owned();
        said.push_str(&String::from_utf8_lossy(&out.stdout));
        let lines: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(QUOTED_LINES)..].join(" / ");
        Err(format!("the build ({build}) exited {}: {tail}", out.status.code().map_or("by a signal".into(), |c| c.to_string())))
    }

    /// `cmd` made to run as the repository's owner when that is not who
    /// runs fslab.
    fn as_owner(&self, mut cmd: Command) -> Command {
        let me = rustix::process::geteuid().as_raw();
        if self.owner.0 != me {
            cmd.uid(self.owner.0).gid(self.owner.1);
        }
        cmd.env("GIT_CONFIG_NOSYSTEM", "1").env("GIT_CONFIG_GLOBAL", "/dev/null").env("LC_ALL", "C");
        cmd
    }

    /// `git -C REPO` as the owner.
    fn git(&self) -> Command {
        let mut cmd = self.as_owner(Command::new("git"));
        cmd.arg("-C").arg(&self.path);
        cmd
    }

    /// A git command's stdout; `Err` its stderr when it fails.
    fn git_text(&self, args: &[&str]) -> std::result::Result<String, String> {
        let out = self.git().args(args).stdin(Stdio::null()).output().map_err(|e| format!("git: {e} (install git)"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// A git command's exit code (`None`: killed), its output dropped.
    fn git_status(&self, args: &[&str]) -> std::result::Result<Option<i32>, String> {
        let mut child = self
            .git()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("git: {e}"))?;
        let mut err = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        let status = child.wait().map_err(|e| format!("git: {e}"))?;
        match status.code() {
            Some(code) if code <= 1 => Ok(Some(code)),
            _ => Err(format!("git {}: {}", args.join(" "), err.trim())),
        }
    }
}

/// A point from a `%H %s` line.
fn point(line: &str) -> Option<Point> {
    let (id, subject) = line.split_once(' ').unwrap_or((line, ""));
    (id.len() >= 40).then(|| Point { key: id.to_string(), label: id[..10].to_string(), detail: Some(subject.to_string()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_is_a_point_named_by_its_short_id() {
        let p = point("0123456789abcdef0123456789abcdef01234567 fsync every file").unwrap();
        assert_eq!(p.label, "0123456789");
        assert_eq!(p.detail.as_deref(), Some("fsync every file"));
        assert!(point("not a commit").is_none());
    }
}
