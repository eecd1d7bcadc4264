//! Walking a path as root without being steered by another user: one
//! component at a time, each opened `O_NOFOLLOW` from the folder before,
//! no component resolved twice.
//!
//! The design decision: a symlink is followed only when it belongs to root
//! or to the one user fslab trusts besides (the effective user for its own
//! folders; the invoking user, `SUDO_UID`, for the files a command names)
//! and every folder above it does too and is written by no one else
//! (sticky folders like `/tmp` excepted, where no one may rename another's
//! entry). Anyone else could have put the link there, or swapped the
//! folder holding it, to point root at a file of their choice. Its own
//! folders fslab holds to more ([`Rules::strict`]): every folder on the
//! way must be safe, link or not.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

use crate::error::Error;

/// What a walk trusts and makes.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// The one user trusted besides root: whose folders may lie on the way
    /// and whose links are followed.
    pub trusted: u32,
    /// Refuse at once any folder on the way another user could change
    /// (fslab's own folders); otherwise such a folder is passed, and only a
    /// link below it is refused.
    pub strict: bool,
    /// Make missing folders (0700) on the way.
    pub create: bool,
}

impl Rules {
    /// The rules for paths a command is given to read or write (`-o`,
    /// `--svg`, a store or a run's file): links and folders of root or of
    /// the invoking user ([`invoking_user`]), nothing made.
    pub fn for_named_files() -> Rules {
        Rules { trusted: invoking_user(), strict: false, create: false }
    }
}

/// Who ran fslab: `SUDO_UID` when root runs it under sudo, else the
/// effective user.
pub fn invoking_user() -> u32 {
    let me = rustix::process::geteuid();
    let sudo = || std::env::var("SUDO_UID").ok().and_then(|u| u.parse::<u32>().ok());
    if me.is_root() { sudo().unwrap_or(0) } else { me.as_raw() }
}

/// A folder another user could change what is in: neither root's nor the
/// trusted user's, or written by others without the sticky bit.
fn folder_is_open(stat: &rustix::fs::Stat, trusted: u32) -> bool {
    let owner = stat.st_uid == 0 || stat.st_uid == trusted;
    !owner || (stat.st_mode & 0o022 != 0 && stat.st_mode & 0o1000 == 0)
}

/// A folder on the way that another user could change: where, its owner
/// and its mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenFolder {
    /// Its canonical path.
    pub path: PathBuf,
    /// Its owner.
    pub uid: u32,
    /// Its permission bits (with the sticky bit).
    pub mode: u32,
}

impl OpenFolder {
    /// `/x belongs to uid 65534` or `/x is writable by others (mode 777)`.
    pub fn words(&self, trusted: u32) -> String {
        if self.uid != 0 && self.uid != trusted {
            format!("{} belongs to uid {} (mode {:o})", self.path.display(), self.uid, self.mode)
        } else {
            format!("{} is writable by others (mode {:o})", self.path.display(), self.mode)
        }
    }
}

/// Why a walk stopped.
#[derive(Debug)]
pub enum Refusal {
    /// An I/O error at this path (`ENOENT` for a missing component).
    Io(PathBuf, io::Error),
    /// A symlink at this path belongs to this uid, neither root nor the
    /// trusted user.
    ForeignLink(PathBuf, u32),
    /// A strict walk met this folder, which another user could change.
    OpenParent(OpenFolder),
    /// A symlink at this path lies below a folder another user could
    /// change.
    LinkBelowOpen(PathBuf, OpenFolder),
}

impl Refusal {
    /// Whether the walk stopped at a missing component.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Refusal::Io(_, e) if e.raw_os_error() == Some(libc::ENOENT))
    }

    /// Why a link was not followed, in words, with the rule, when that is
    /// why the walk stopped: `LINK is a symbolic link that belongs to uid
    /// N, ...`.
    pub fn link_words(&self, trusted: u32) -> Option<String> {
        let rule = "fslab follows a link only when it and every folder above it belong to root or you";
        match self {
            Refusal::ForeignLink(link, uid) => Some(format!(
                "{} is a symbolic link that belongs to uid {uid}, not to root or you (uid {trusted}): {rule}",
                link.display()
            )),
            Refusal::LinkBelowOpen(link, folder) => Some(format!(
                "{} is a symbolic link where another user could have made it ({}): {rule}",
                link.display(),
                folder.words(trusted)
            )),
            Refusal::Io(..) | Refusal::OpenParent(_) => None,
        }
    }

    /// The refusal as an error about `path` (as given), met doing `what`:
    /// a link not followed is bad input (exit 2) with what to do; an I/O
    /// error is classified as any other.
    pub fn into_error(self, path: &Path, what: &str, trusted: u32) -> Error {
        let shown = crate::text::path(path);
        if let Some(words) = self.link_words(trusted) {
            return Error::usage(format!("{shown}: {what}: {words}; name the file it points to, or remove the link"));
        }
        match self {
            Refusal::Io(_, e) => Error::io(path, what, e),
            Refusal::OpenParent(folder) | Refusal::LinkBelowOpen(_, folder) => {
                Error::usage(format!("{shown}: {what}: {}", folder.words(trusted)))
            }
            Refusal::ForeignLink(link, uid) => Error::usage(format!("{shown}: {what}: {} belongs to uid {uid}", link.display())),
        }
    }
}

/// A path walked: its canonical form (no link, no `.` or `..`), an
/// `O_PATH` descriptor of what it names, and the first folder on the way
/// another user could change, if any (a lenient walk passes them).
#[derive(Debug)]
pub struct Walked {
    /// The canonical path.
    pub path: PathBuf,
    /// What it names, opened `O_PATH` (a final symlink followed by the
    /// rules, as any other).
    pub fd: OwnedFd,
    /// The first folder passed (or reached) that another user could
    /// change; a strict walk refuses one instead.
    pub open: Option<OpenFolder>,
}

/// The path a file named on the command line is read by: every symlink
/// on the way followed by the rules for named files (another user's
/// refused, exit 2), none left in it. `None` when nothing is there.
pub fn named_file(path: &Path) -> crate::error::Result<Option<PathBuf>> {
    let rules = Rules::for_named_files();
    match walk(path, rules) {
        Ok(walked) => Ok(Some(walked.path)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into_error(path, "read", rules.trusted)),
    }
}

/// Walk `path` from `/` (a relative one from the current folder), as the
/// module doc says. Every symlink, the last component's too, is followed by
/// the rules, read through the descriptor that was checked.
pub fn walk(path: &Path, rules: Rules) -> Result<Walked, Refusal> {
    let at = |p: &Path| {
        let p = p.to_path_buf();
        move |e: rustix::io::Errno| Refusal::Io(p, e.into())
    };
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let root = || rustix::fs::open("/", flags | OFlags::DIRECTORY, Mode::empty()).map_err(at(Path::new("/")));
    let mut queue: VecDeque<OsString> = VecDeque::new();
    if path.is_relative() {
        let cwd = std::env::current_dir().map_err(|e| Refusal::Io(PathBuf::from("."), e))?;
        queue.extend(cwd.components().map(|c| c.as_os_str().to_os_string()));
    }
    queue.extend(path.components().map(|c| c.as_os_str().to_os_string()));
    let (mut fd, mut canonical) = (root()?, PathBuf::from("/"));
    let mut open: Option<OpenFolder> = None;
    let mut links = 0;
    while let Some(name) = queue.pop_front() {
        if name == "/" || name == "." || name.is_empty() {
            continue;
        }
        if name == ".." {
            fd = rustix::fs::openat(&fd, "..", flags | OFlags::DIRECTORY, Mode::empty()).map_err(at(&canonical))?;
            canonical.pop();
            continue;
        }
        let here = canonical.join(&name);
        let parent = rustix::fs::fstat(&fd).map_err(at(&canonical))?;
        if folder_is_open(&parent, rules.trusted) && open.is_none() {
            let folder = OpenFolder { path: canonical.clone(), uid: parent.st_uid, mode: parent.st_mode & 0o7777 };
            if rules.strict {
                return Err(Refusal::OpenParent(folder));
            }
            open = Some(folder);
        }
        let next = match rustix::fs::openat(&fd, name.as_os_str(), flags, Mode::empty()) {
            Err(rustix::io::Errno::NOENT) if rules.create => {
                match rustix::fs::mkdirat(&fd, name.as_os_str(), Mode::RWXU) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(at(&here)(e)),
                }
                rustix::fs::openat(&fd, name.as_os_str(), flags, Mode::empty()).map_err(at(&here))?
            }
            other => other.map_err(at(&here))?,
        };
        let stat = rustix::fs::fstat(&next).map_err(at(&here))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::Symlink {
            (fd, canonical) = (next, here);
            continue;
        }
        if stat.st_uid != 0 && stat.st_uid != rules.trusted {
            return Err(Refusal::ForeignLink(here, stat.st_uid));
        }
        if let Some(folder) = open {
            return Err(Refusal::LinkBelowOpen(here, folder));
        }
        links += 1;
        if links > 40 {
            return Err(Refusal::Io(here, io::Error::from_raw_os_error(libc::ELOOP)));
        }
        // Read the very link that was checked, through its descriptor.
        let target = PathBuf::from(OsString::from_vec(
            rustix::fs::readlinkat(&next, "", Vec::new()).map_err(at(&here))?.into_bytes(),
        ));
        if target.is_absolute() {
            (fd, canonical) = (root()?, PathBuf::from("/"));
        }
        for c in target.components().rev() {
            queue.push_front(c.as_os_str().to_os_string());
        }
    }
    // A folder reached is one a link below it may lie in: it counts too.
    // (A strict walk's caller checks its own folder itself.)
    if !rules.strict && open.is_none() {
        let stat = rustix::fs::fstat(&fd).map_err(at(&canonical))?;
        if FileType::from_raw_mode(stat.st_mode) == FileType::Directory && folder_is_open(&stat, rules.trusted) {
            open = Some(OpenFolder { path: canonical.clone(), uid: stat.st_uid, mode: stat.st_mode & 0o7777 });
        }
    }
    Ok(Walked { path: canonical, fd, open })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> tempfile::TempDir {
        crate::test_temp::dir("walk")
    }

    #[test]
    fn links_of_another_user_or_below_their_folder_are_not_followed() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let dir = tmp();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let lenient = Rules { trusted: 0, strict: false, create: false };
        let theirs = dir.path().join("theirs");
        std::os::unix::fs::symlink(&file, &theirs).unwrap();
        std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
        let e = walk(&theirs, lenient).unwrap_err();
        assert!(e.link_words(0).unwrap().contains("belongs to uid 65534"), "{e:?}");
        // Root's link in nobody's folder: they could have swapped it.
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        std::os::unix::fs::chown(&folder, Some(65534), Some(65534)).unwrap();
        std::os::unix::fs::symlink(&file, folder.join("ours")).unwrap();
        let e = walk(&folder.join("ours"), lenient).unwrap_err();
        assert!(e.link_words(0).unwrap().contains(&format!("{} belongs to uid 65534", folder.display())), "{e:?}");
        // Trusted, or no link at all: walked, the folder noted.
        let walked = walk(&theirs, Rules { trusted: 65534, ..lenient }).unwrap();
        assert_eq!(walked.path, file.canonicalize().unwrap());
        std::fs::write(folder.join("plain"), "y").unwrap();
        let walked = walk(&folder.join("plain"), lenient).unwrap();
        assert_eq!(walked.open.map(|o| o.uid), Some(65534));
        assert!(matches!(walk(&folder.join("plain"), Rules { strict: true, ..lenient }), Err(Refusal::OpenParent(_))));
    }
}
