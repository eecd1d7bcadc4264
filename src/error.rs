//! Errors that tell the user what went wrong and what to do about it.
//!
//! Every error carries the exit code the command-line contract gives it
//! (`docs/DESIGN.md`): 2 for bad input, 3 when the environment cannot do the job,
//! 4 when the work itself failed. System errors name the path they concern
//! and turn the errno into advice.

use std::fmt;
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// Which part of the contract an error falls under; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The user asked for something impossible: a missing path, a
    /// directory where a file was wanted, a bad flag value. Exit 2.
    Usage,
    /// The machine cannot do it: not root, a tool missing, a file system
    /// without the ioctl. Exit 3.
    Environment,
    /// The work started and failed. Exit 4.
    Failed,
}

impl ErrorKind {
    /// The process exit code the contract assigns to this kind.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage => 2,
            ErrorKind::Environment => 3,
            ErrorKind::Failed => 4,
        }
    }
}

/// An error with its contract kind and a one-line message for the user.
#[derive(Debug, Clone)]
pub struct Error {
    /// Decides the exit code.
    pub kind: ErrorKind,
    /// What went wrong and, where we know it, what to do.
    pub message: String,
}

/// fslab's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Usage, message: message.into() }
    }

    /// An environment error (exit 3).
    pub fn environment(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Environment, message: message.into() }
    }

    /// A failure of the work itself (exit 4).
    pub fn failed(message: impl Into<String>) -> Self {
        Error { kind: ErrorKind::Failed, message: message.into() }
    }

    /// An I/O error met while working on `path`, doing `what`, classified
    /// by its errno and given advice. The path is shown with its control
    /// characters escaped ([`crate::text::path`]): a file name is not the
    /// message's to end or recolour.
    pub fn io(path: &Path, what: &str, err: io::Error) -> Self {
        let errno = err.raw_os_error();
        let (kind, advice) = classify_errno(errno);
        let mut message = format!("{}: {what}: {}", crate::text::path(path), describe_io(&err));
        if let Some(advice) = advice {
            message.push_str(" (");
            message.push_str(advice);
            message.push(')');
        }
        Error { kind, message }
    }

    /// The same error with `context` put in front of its message.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The exit code for this error.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.kind.exit_code())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Write a message to stderr, dropping it if stderr cannot take it (a
/// closed pipe, a full disk): what the crate's `eprintln!` calls. A lost
/// warning is no reason to stop a run half-way; the exit code still
/// carries the outcome.
pub fn to_stderr(message: fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = io::stderr().lock().write_fmt(message);
}

/// What a file that is not a regular one is, in words (`a character
/// device`), for refusals that say what was found.
pub fn file_type_words(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "an unknown kind of file"
    }
}

/// An io::Error's text without Rust's "(os error N)" suffix, which tells a
/// user nothing the words do not.
pub fn describe_io(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// Map an errno to the contract kind and a piece of advice.
fn classify_errno(errno: Option<i32>) -> (ErrorKind, Option<&'static str>) {
    match errno {
        Some(libc::ENOENT) => (ErrorKind::Usage, Some("check the path")),
        Some(libc::ENOTDIR) => (ErrorKind::Usage, Some("a component of the path is not a directory")),
        Some(libc::ELOOP) => (ErrorKind::Usage, Some("symbolic links are not followed")),
        Some(libc::EISDIR) => (ErrorKind::Usage, Some("give a regular file, or use `fslab frag` for a tree")),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            (ErrorKind::Environment, Some("permission denied: run as root or pick files you can read"))
        }
        Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => (
            ErrorKind::Environment,
            Some("this file system does not support the ioctl; use a file on ext2/3/4, xfs or btrfs"),
        ),
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            (ErrorKind::Environment, Some("too many open files: raise `ulimit -n` or lower --threads"))
        }
        _ => (ErrorKind::Failed, None),
    }
}

/// " (did you mean `x`?)" when one of `known` is within two edits of
/// `word`, or is the only one that begins with it (three letters at
/// least: `mmap` for `mmap-fill`); empty otherwise. For messages about a
/// mistyped name: scenario names, `--set` keys, aging profiles.
pub fn did_you_mean(word: &str, known: &[&str]) -> String {
    let close = closest(word, known).filter(|(d, _)| *d <= 2).map(|(_, k)| k);
    let prefixed = || {
        let mut starting = known.iter().filter(|k| word.len() >= 3 && k.starts_with(word));
        match (starting.next(), starting.next()) {
            (Some(k), None) => Some(*k),
            _ => None,
        }
    };
    close.or_else(prefixed).map(|k| format!(" (did you mean `{k}`?)")).unwrap_or_default()
}

/// The one of `known` nearest `word`, for a message about a name that is
/// not known: the closest within two edits, else the shortest that
/// contains it (three letters at least: `commits` for `journal_commits`),
/// else the fewest edits away. `None` only when `known` is empty.
pub fn nearest<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    let within = closest(word, known).filter(|(d, _)| *d <= 2).map(|(_, k)| k);
    let containing = || known.iter().filter(|k| word.len() >= 3 && k.contains(word)).min_by_key(|k| k.len()).copied();
    within.or_else(containing).or_else(|| closest(word, known).map(|(_, k)| k))
}

/// The fewest edits from `word` to one of `known`, and that one (the
/// first in alphabetical order among equals).
fn closest<'a>(word: &str, known: &[&'a str]) -> Option<(usize, &'a str)> {
    known.iter().map(|k| (edit_distance(word, k), *k)).min()
}

/// Levenshtein distance between `a` and `b`, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_contract() {
        assert_eq!(ErrorKind::Usage.exit_code(), 2);
        assert_eq!(ErrorKind::Environment.exit_code(), 3);
        assert_eq!(ErrorKind::Failed.exit_code(), 4);
    }

    #[test]
    fn io_errors_name_the_path_and_advise() {
        let err = Error::io(
            Path::new("/x/y"),
            "open",
            io::Error::from_raw_os_error(libc::ENOENT),
        );
        assert_eq!(err.kind, ErrorKind::Usage);
        assert!(err.message.starts_with("/x/y: open: No such file or directory"), "{}", err.message);
        assert!(!err.message.contains("os error"));

        let err = Error::io(Path::new("/t"), "FIEMAP", io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        assert_eq!(err.kind, ErrorKind::Environment);
        assert!(err.message.contains("does not support"));
    }

    #[test]
    fn a_mistyped_name_gets_the_nearest_known_one() {
        let known = ["mmap-fill", "tree-copy", "replace-files"];
        assert_eq!(did_you_mean("replace_files", &known), " (did you mean `replace-files`?)");
        assert_eq!(did_you_mean("mmap", &known), " (did you mean `mmap-fill`?)");
        assert_eq!(did_you_mean("fio", &known), "");
        assert_eq!(did_you_mean("tr", &known), "", "too short to be a prefix");
        // The nearest is named even when none is close.
        assert_eq!(nearest("replace_files", &known), Some("replace-files"));
        assert_eq!(nearest("copy", &known), Some("tree-copy"));
        assert_eq!(nearest("fio", &known), Some("mmap-fill"), "the fewest edits");
        assert_eq!(nearest("x", &[]), None);
    }
}
