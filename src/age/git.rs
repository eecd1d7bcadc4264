//! `--age git:REPO[:N]`: check out N successive first-parent commits of
//! REPO's HEAD onto `age/tree/`, oldest first — the first whole, then each
//! next one as its diff (deleted files unlinked, added and changed files
//! unlinked and made anew, as git checkout does) — the way Conway et al.
//! (FAST 2017) aged file systems.
//!
//! fslab runs as root and the repository may be hostile, so:
//! - git never checks anything out and runs no hooks or filters: only the
//!   plumbing commands `rev-list`, `ls-tree`, `diff-tree` and
//!   `cat-file --batch` run, with `--git-dir` given, with no shell, the
//!   environment cleared but for PATH and [`GIT_ENV`], no system or global
//!   config, and [`GIT_CONFIG`] over the repository's;
//! - git never runs as root: as the uid/gid owning the repository folder,
//!   or as nobody when that is root (a repository nobody cannot read is
//!   refused, saying so); its git dir, a linked worktree's common dir and
//!   their config must belong to that owner too, and be written by no one
//!   else, or git would run what another user's config says as the owner;
//! - git fetches nothing and reaches no remote: a partial clone's missing
//!   object is not fetched lazily (the fetch would run the repository's
//!   `core.sshCommand`, `ext::` command, `uploadpack`, credential helper
//!   or `core.askPass`), no protocol is allowed, and ssh and login prompts
//!   get ours; an object missing from the N commits is bad input;
//! - fslab writes every file itself, walking each path from `age/` with
//!   `O_NOFOLLOW` and refusing empty, `.`, `..` and `.git` components and
//!   absolute paths;
//! - symlinks are made as symlinks (symlinkat; never followed: a later
//!   path through one fails instead of escaping), submodules are skipped.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use super::Aged;
use super::writer::Writer;
use crate::error::{Error, Result};

/// The user git runs as for a repository of root's: nobody (and nogroup).
const NOBODY: u32 = 65534;

/// The whole environment git runs with, but PATH.
const GIT_ENV: &[(&str, &str)] = &[
    ("HOME", "/nonexistent"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    // A partial clone's missing object is not fetched from its promisor
    // remotes (git 2.39.4 and later; Debian's 2.39.5 has it).
    ("GIT_NO_LAZY_FETCH", "1"),
    // Set and naming no protocol: no transport at all. The repository's
    // `protocol.<name>.allow` outranks `protocol.allow`, not this.
    ("GIT_ALLOW_PROTOCOL", "none"),
    // Should ssh or a login prompt be reached anyway: nothing of the
    // repository's (`core.sshCommand`, `core.askPass`) runs.
    ("GIT_SSH_COMMAND", "false"),
    ("GIT_ASKPASS", ""),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// `-c` settings, which outrank the repository's config: no fsmonitor or
/// hooks, no protocol, no credential helper.
const GIT_CONFIG: &[&str] =
    &["core.fsmonitor=false", "core.hooksPath=/dev/null", "protocol.allow=never", "credential.helper="];

/// A repository located and checked, and whom git runs as.
#[derive(Debug, Clone)]
pub struct Repo {
    shown: PathBuf,
    git_dir: PathBuf,
    git: PathBuf,
    /// The uid and gid git runs as when fslab is root: the folder's, but
    /// nobody for root and nogroup for a root group.
    runs_as: (u32, u32),
    /// git runs as nobody because the repository is root's.
    as_nobody: bool,
}

/// One path of a commit's tree: its git mode, blob id and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// `100644`, `100755`, `120000` (symlink) or `160000` (submodule).
    pub mode: String,
    /// The blob's id.
    pub id: String,
    /// The path in the tree.
    pub path: Vec<u8>,
}

impl Repo {
    /// The repository at `path`: a work tree (`path/.git` a directory, or
    /// a `gitdir:` file as in a linked worktree) or a bare repository,
    /// with its git dir, common dir and their config checked to be the
    /// folder owner's. Errors are usage errors.
    pub fn locate(path: &Path) -> Result<Repo> {
        let shown = path.to_path_buf();
        let bad = |what: String| Error::usage(format!("--age git:{}: {what}", shown.display()));
        let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        if !meta.is_dir() {
            return Err(bad("not a directory; give a git repository".into()));
        }
        let owners = Owners { repo: path, uid: meta.uid() };
        let dot_git = path.join(".git");
        let git_dir = match std::fs::symlink_metadata(&dot_git) {
            Ok(m) if m.is_dir() => dot_git,
            Ok(m) if m.is_file() => {
                let text = owners.read(&dot_git, ".git file")?;
                let target = text
                    .strip_prefix("gitdir:")
                    .map(str::trim)
                    .ok_or_else(|| bad(".git is a file without a `gitdir:` line".into()))?;
                path.join(target)
            }
            _ if path.join("HEAD").is_file() && path.join("objects").is_dir() => path.to_path_buf(),
            _ => return Err(bad("not a git repository (no .git, and not a bare repository)".into())),
        };
        owners.folder(&git_dir, "git dir")?;
        owners.file(&git_dir.join("config"), "config")?;
        owners.file(&git_dir.join("config.worktree"), "config")?;
        if owners.file(&git_dir.join("commondir"), "commondir file")? {
            let common = owners.read(&git_dir.join("commondir"), "commondir file")?;
            let common = git_dir.join(common.trim());
            let common = common.canonicalize().map_err(|e| owners.bad(format!("its common dir {}: {e}", common.display())))?;
            owners.folder(&common, "common dir")?;
            owners.file(&common.join("config"), "config")?;
        }
        let git = crate::site::fs_type::find_program("git")
            .ok_or_else(|| Error::environment("git is not installed; install it (apt-get install git) for --age git:"))?;
        let as_nobody = meta.uid() == 0 && rustix::process::geteuid().is_root();
        let runs_as = match (meta.uid(), meta.gid()) {
            (0, _) => (NOBODY, NOBODY),
            (uid, 0) => (uid, NOBODY),
            owner => owner,
        };
        Ok(Repo { shown, git_dir, git, runs_as, as_nobody })
    }

    /// A git command on the repository, hardened as the module says.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.git);
        c.env_clear().env("PATH", "/usr/local/bin:/usr/bin:/bin").envs(GIT_ENV.iter().copied()).current_dir("/");
        for setting in GIT_CONFIG {
            c.args(["-c", setting]);
        }
        c.arg("--git-dir").arg(&self.git_dir).args(args).stdin(Stdio::null());
        if rustix::process::geteuid().is_root() {
            c.uid(self.runs_as.0).gid(self.runs_as.1);
        }
        c
    }

    /// Run a git command to its end; its stdout. Failures are usage errors
    /// (the repository is the user's input).
    fn output(&self, args: &[&str]) -> Result<Vec<u8>> {
        let out = self
            .command(args)
            .output()
            .map_err(|e| Error::environment(format!("run {}: {e}", self.git.display())))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let said = said.trim();
            let repo = self.shown.display();
            if self.as_nobody && (said.contains("not a git repository") || said.contains("Permission denied")) {
                return Err(Error::usage(format!(
                    "--age git:{repo}: git runs as nobody (uid {NOBODY}) for a repository of root's, and nobody cannot read it (git {}: {said}); let nobody read it (chmod -R o+rX {repo}, and o+x on each folder above it), or chown -R it to an unprivileged user",
                    args[0]
                )));
            }
            return Err(Error::usage(format!("--age git:{repo}: git {} failed: {said}", args.join(" "))));
        }
        Ok(out.stdout)
    }

    /// The `n` first-parent commits ending at HEAD, oldest first, with
    /// every object their trees need; a usage error when there are fewer,
    /// or when an object is missing.
    pub fn first_parent_commits(&self, n: u32) -> Result<Vec<String>> {
        let n_text = n.to_string();
        let out = self.output(&["rev-list", "--first-parent", "-n", &n_text, "HEAD", "--"])?;
        let mut ids: Vec<String> = String::from_utf8_lossy(&out).lines().map(str::to_string).collect();
        if ids.len() < n as usize {
            return Err(Error::usage(format!(
                "--age git:{}:{n}: HEAD has only {} first-parent commits; ask for at most that many (a shallow clone has 1: fetch its history)",
                self.shown.display(),
                ids.len()
            )));
        }
        // Submodules' commits are not followed, as aging skips them.
        let args = ["rev-list", "--objects", "--no-object-names", "--missing=print", "--first-parent", "-n", &n_text, "HEAD", "--"];
        let out = self.output(&args)?;
        let text = String::from_utf8_lossy(&out);
        let missing: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix('?')).collect();
        if let Some(first) = missing.first() {
            return Err(self.missing(first, missing.len()));
        }
        ids.reverse();
        Ok(ids)
    }

    /// Object `id` (one of `count` missing) is not in the repository.
    fn missing(&self, id: &str, count: usize) -> Error {
        let others = match count {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Error::usage(format!(
            "--age git:{}: object {id}{others} is missing from the repository; fslab fetches nothing: clone a partial clone (--filter) again without the filter, and repair a damaged repository (git fsck names what is lost)",
            self.shown.display()
        ))
    }

    /// Every file of `commit`'s tree.
    pub fn ls_tree(&self, commit: &str) -> Result<Vec<TreeEntry>> {
        let out = self.output(&["ls-tree", "-r", "-z", "--full-tree", commit])?;
        out.split(|&b| b == 0)
            .filter(|r| !r.is_empty())
            .map(|record| {
                let tab = record.iter().position(|&b| b == b'\t').ok_or_else(|| self.garbled("ls-tree"))?;
                let head = String::from_utf8_lossy(&record[..tab]);
                let mut words = head.split(' ');
                let (mode, _kind, id) = (words.next(), words.next(), words.next());
                match (mode, id) {
                    (Some(mode), Some(id)) => {
                        Ok(TreeEntry { mode: mode.to_string(), id: id.to_string(), path: record[tab + 1..].to_vec() })
                    }
                    _ => Err(self.garbled("ls-tree")),
                }
            })
            .collect()
    }

    /// What changed from `from` to `to`: (deleted paths with their old
    /// mode, added or changed entries).
    pub fn diff(&self, from: &str, to: &str) -> Result<(Vec<TreeEntry>, Vec<TreeEntry>)> {
        let out = self.output(&["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-commit-id", from, to])?;
        let mut fields = out.split(|&b| b == 0).filter(|f| !f.is_empty());
        let (mut gone, mut new) = (Vec::new(), Vec::new());
        while let Some(head) = fields.next() {
            let path = fields.next().ok_or_else(|| self.garbled("diff-tree"))?.to_vec();
            let head = String::from_utf8_lossy(head);
            let w: Vec<&str> = head.trim_start_matches(':').split(' ').collect();
            let [old_mode, new_mode, old_id, new_id, status] = w[..] else {
                return Err(self.garbled("diff-tree"));
            };
            let old = TreeEntry { mode: old_mode.into(), id: old_id.into(), path: path.clone() };
            let next = TreeEntry { mode: new_mode.into(), id: new_id.into(), path };
            match status.chars().next() {
                Some('D') => gone.push(old),
                Some('A') => new.push(next),
                // Changed, or a type change: unlinked, then made anew.
                Some('M' | 'T') => {
                    gone.push(old);
                    new.push(next);
                }
                _ => return Err(self.garbled("diff-tree")),
            }
        }
        Ok((gone, new))
    }

    fn garbled(&self, what: &str) -> Error {
        Error::failed(format!("--age git:{}: git {what} printed what fslab cannot read", self.shown.display()))
    }
}

/// Whose every part of a repository git reads must be: the repository
/// folder's owner's.
struct Owners<'a> {
    repo: &'a Path,
    uid: u32,
}

impl Owners<'_> {
    /// `path`, when there, is the owner's: itself and, a symlink, what it
    /// leads to; false when nothing is there.
    fn file(&self, path: &Path, what: &str) -> Result<bool> {
        let link = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(self.bad(format!("its {what} {}: {e}", path.display()))),
        };
        self.owned(path, what, link.uid())?;
        if link.file_type().is_symlink() {
            let meta = std::fs::metadata(path).map_err(|e| self.bad(format!("its {what} {}: {e}", path.display())))?;
            self.owned(path, what, meta.uid())?;
        }
        Ok(true)
    }

    /// A folder whose config git reads: there, the owner's, and written by
    /// no one else (or anyone could put a config there).
    fn folder(&self, path: &Path, what: &str) -> Result<()> {
        if !self.file(path, what)? {
            return Err(self.bad(format!("its {what} {} does not exist", path.display())));
        }
        let mode = std::fs::metadata(path).map_err(|e| self.bad(format!("its {what} {}: {e}", path.display())))?.mode();
        if mode & 0o002 != 0 {
            return Err(self.bad(format!(
                "its {what} {} may be written by anyone, who could put a config there for git to read; chmod o-w it",
                path.display()
            )));
        }
        Ok(())
    }

    /// The text of a small file of the owner's (`.git`, `commondir`), not
    /// through a symlink.
    fn read(&self, path: &Path, what: &str) -> Result<String> {
        let cannot = |e: std::io::Error| self.bad(format!("its {what} {}: {e}", path.display()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if !meta.is_file() {
            return Err(self.bad(format!("its {what} {} is not a regular file", path.display())));
        }
        self.owned(path, what, meta.uid())?;
        let mut text = String::new();
        file.take(4096).read_to_string(&mut text).map_err(cannot)?;
        Ok(text)
    }

    fn owned(&self, path: &Path, what: &str, uid: u32) -> Result<()> {
        if uid == self.uid {
            return Ok(());
        }
        Err(self.bad(format!(
            "its {what} {} belongs to uid {uid}, the folder to uid {}: git runs as the folder's owner (nobody for root's) and would do what another user's config says; make the whole repository one user's (chown -R), or age a copy of your own",
            path.display(),
            self.uid
        )))
    }

    fn bad(&self, what: String) -> Error {
        Error::usage(format!("--age git:{}: {what}", self.repo.display()))
    }
}

/// A running `git cat-file --batch`: blobs by id, streamed.
struct Blobs {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Blobs {
    fn start(repo: &Repo) -> Result<Blobs> {
        let mut child = repo
            .command(&["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::environment(format!("run git cat-file: {e}")))?;
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        Ok(Blobs { child, input, output })
    }

    /// Ask for blob `id`; its size, with its bytes next on `self.output`
    /// (then one newline, read by [`Blobs::finish`]); `None` when git says
    /// it is missing.
    fn ask(&mut self, id: &str) -> std::io::Result<Option<u64>> {
        writeln!(self.input, "{id}")?;
        self.input.flush()?;
        let mut header = String::new();
        self.output.read_line(&mut header)?;
        let words: Vec<&str> = header.split_whitespace().collect();
        match words[..] {
            [_, "blob", size] => size.parse().map(Some).map_err(|_| std::io::Error::other(format!("git cat-file: {header}"))),
            [_, "missing"] => Ok(None),
            _ => Err(std::io::Error::other(format!("git cat-file: blob {id}: {}", header.trim()))),
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline)
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A path from the repository fslab will write: relative, and no empty,
/// `.`, `..` or `.git` component.
fn safe_path(path: &[u8]) -> bool {
    !path.is_empty()
        && path[0] != b'/'
        && path.split(|&b| b == b'/').all(|c| !c.is_empty() && c != b"." && c != b".." && !c.eq_ignore_ascii_case(b".git"))
}

/// Symlink targets this long or longer (PATH_MAX) are skipped.
const SYMLINK_MAX: u64 = 4096;

/// Where the checkout lives under `age/`.
const TREE: &[u8] = b"tree/";

/// Check out `commits` commits of `repo` onto `writer`'s directory.
pub fn age(writer: &mut Writer, repo: &Path, commits: u32, progress: &dyn Fn(&str)) -> Result<Aged> {
    let repo = Repo::locate(repo)?;
    let ids = repo.first_parent_commits(commits)?;
    let mut blobs = Blobs::start(&repo)?;
    let mut aged = Aged::default();
    let mut skipped = 0u64;
    let base = writer.path().join("tree");
    let at = |path: &[u8], e: std::io::Error| Error::io(&base.join(OsStr::from_bytes(path)), "check out", e);
    for (i, id) in ids.iter().enumerate() {
        crate::interrupt::check()?;
        let (gone, new) = if i == 0 { (Vec::new(), repo.ls_tree(id)?) } else { repo.diff(&ids[i - 1], id)? };
        progress(&format!("commit {}/{}: {} deleted, {} written", i + 1, ids.len(), gone.len(), new.len()));
        let remade: HashSet<&[u8]> = new.iter().map(|e| &e.path[..]).collect();
        for entry in &gone {
            if entry.mode == "160000" || !safe_path(&entry.path) {
                continue;
            }
            let path = [TREE, &entry.path].concat();
            match writer.remove(&path) {
                Ok(()) => aged.files_deleted += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(at(&entry.path, e)),
            }
            // A directory a deletion empties goes too (a file may take its
            // name next), unless the file is only being made anew.
            if !remade.contains(&entry.path[..]) {
                writer.prune_parents(&path);
            }
        }
        for entry in &new {
            crate::interrupt::check()?;
            if entry.mode == "160000" || !safe_path(&entry.path) {
                skipped += 1;
                continue;
            }
            let path = [TREE, &entry.path].concat();
            let len = blobs.ask(&entry.id).map_err(|e| at(&entry.path, e))?.ok_or_else(|| repo.missing(&entry.id, 1))?;
            let made = if entry.mode == "120000" && len >= SYMLINK_MAX {
                skipped += 1;
                std::io::copy(&mut (&mut blobs.output).take(len), &mut std::io::sink()).map(|_| 0)
            } else if entry.mode == "120000" {
                let mut target = vec![0; len as usize];
                blobs.output.read_exact(&mut target).and_then(|()| writer.symlink(&path, &target)).map(|()| 0)
            } else {
                let mode = if entry.mode == "100755" { 0o755 } else { 0o644 };
                writer.create_from(&path, mode, &mut blobs.output, len)
            };
            blobs.finish().map_err(|e| at(&entry.path, e))?;
            aged.bytes_written += made.map_err(|e| at(&entry.path, e))?;
            aged.files_made += 1;
        }
        // Each commit reaches the disk before the next changes it.
        writer.syncfs()?;
        aged.rounds = i as u32 + 1;
    }
    let mut note = format!(
        "checked out {} commits of {} (first-parent, oldest first)",
        ids.len(),
        repo.shown.display()
    );
    if skipped > 0 {
        note.push_str(&format!("; {skipped} submodules, unsafe paths or overlong symlinks skipped"));
    }
    aged.note = Some(note);
    Ok(aged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_paths_without_dot_dot_or_dot_git_are_written() {
        for good in [&b"a"[..], b"src/lib.rs", b".gitignore", b"a/.github/x", b"..a/b"] {
            assert!(safe_path(good), "{}", String::from_utf8_lossy(good));
        }
        for bad in [&b""[..], b"/etc/passwd", b"../x", b"a/../../x", b"a//b", b"./a", b".git/hooks/x", b"a/.GIT/config"] {
            assert!(!safe_path(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
