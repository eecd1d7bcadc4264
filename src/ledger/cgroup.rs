//! The memory controller fslab's per-case cgroups (`--memory`) live under,
//! the names it gives them, and their release: tasks still in one are
//! moved to its parent, then it is removed. A release acts only on a
//! folder so named, strictly inside the memory controller's mount as
//! mountinfo shows it at release time; nothing else is ever removed (a
//! cgroup folder can only be removed when it has no tasks and no children,
//! so even then nothing but an empty cgroup goes). Making one and putting
//! the work in it is the harness's (`harness::conditions::cgroup`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::proof::Outcome;
use crate::error::{Error, Result};

/// Which cgroup interface holds the memory controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// The legacy hierarchy: `memory.limit_in_bytes`.
    V1,
    /// The unified hierarchy: `memory.max`.
    V2,
}

impl CgroupVersion {
    /// `v1` or `v2`, as the record says it.
    pub fn as_str(self) -> &'static str {
        match self {
            CgroupVersion::V1 => "v1",
            CgroupVersion::V2 => "v2",
        }
    }
}

/// Where a made memory cgroup is and which interface it speaks: what a
/// reader of its files (a probe sampling its page cache) needs, without
/// the means to make or enter one.
#[derive(Debug, Clone, Copy)]
pub struct CgroupAt<'a> {
    /// Its folder.
    pub path: &'a Path,
    /// Its interface.
    pub version: CgroupVersion,
}

/// Where the memory controller is mounted, and which version it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryController {
    /// cgroup v1 or v2.
    pub version: CgroupVersion,
    /// Its mount point (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup`).
    pub mount: PathBuf,
}

/// The memory controller of this machine: v2 when the unified hierarchy
/// offers it, else v1; an environment error (exit 3) when neither does.
pub fn memory_controller() -> Result<MemoryController> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Error::io(Path::new("/proc/self/mountinfo"), "read", e))?;
    find_controller(&mountinfo, |mount| {
        fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default()
    })
    .ok_or_else(|| {
        Error::environment(
            "--memory needs a memory cgroup controller, and this machine has none mounted (neither cgroup v2 with \
             `memory` in cgroup.controllers nor a cgroup v1 `memory` hierarchy): mount one, or leave --memory out",
        )
    })
}

/// The controller in `mountinfo`: a cgroup2 mount whose controllers
/// (`controllers_of`) include memory wins over a v1 `memory` mount.
fn find_controller(mountinfo: &str, controllers_of: impl Fn(&Path) -> String) -> Option<MemoryController> {
    let mut v1 = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let Some(mount) = left.split(' ').nth(4) else { continue };
        let mut right = right.split(' ');
        let fs_type = right.next().unwrap_or("");
        let options = right.nth(1).unwrap_or("");
        let mount = PathBuf::from(unescape(mount));
        if fs_type == "cgroup2" && controllers_of(&mount).split_whitespace().any(|c| c == "memory") {
            return Some(MemoryController { version: CgroupVersion::V2, mount });
        }
        if fs_type == "cgroup" && options.split(',').any(|o| o == "memory") && v1.is_none() {
            v1 = Some(MemoryController { version: CgroupVersion::V1, mount });
        }
    }
    v1
}

/// A mountinfo path with its octal escapes (`\040` for a space) undone.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 4).and_then(|d| u8::from_str_radix(d, 8).ok());
        match code {
            Some(c) => {
                out.push(c as char);
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The name fslab gives a case's cgroup: `fslab-` and the case id.
pub fn cgroup_name(case_id: &str) -> String {
    format!("fslab-{case_id}")
}

/// Whether `name` is one fslab gives: `fslab-RUN-N`, where the run id is
/// as `record::run_id` makes it (digits, `T`, `Z`, hex and dashes) and N
/// the case number.
pub fn named_by_fslab(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("fslab-") else { return false };
    let Some((run, n)) = rest.rsplit_once('-') else { return false };
    !run.is_empty()
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && run.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-' || b == b'T' || b == b'Z')
}

impl MemoryController {
    /// Where a case's cgroup goes: v1 below the cgroup fslab runs in (so a
    /// limit above it still holds), v2 below the root (v2 forbids a child
    /// with a controller under a cgroup that holds processes).
    pub fn place_for(&self, case_id: &str) -> PathBuf {
        let parent = match self.version {
            CgroupVersion::V1 => self.mount.join(own_cgroup(self.version).trim_start_matches('/')),
            CgroupVersion::V2 => self.mount.clone(),
        };
        parent.join(cgroup_name(case_id))
    }

    /// The cgroup this process is in now, as a path.
    pub fn own_path(&self) -> PathBuf {
        self.mount.join(own_cgroup(self.version).trim_start_matches('/'))
    }
}

/// This process's cgroup under the memory controller, from
/// `/proc/self/cgroup` (`4:memory:/a/b` in v1, `0::/a/b` in v2).
fn own_cgroup(version: CgroupVersion) -> String {
    let text = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        let ours = match version {
            CgroupVersion::V1 => controllers.split(',').any(|c| c == "memory"),
            CgroupVersion::V2 => controllers.is_empty(),
        };
        if ours {
            return path.to_string();
        }
    }
    "/".to_string()
}

/// Release a memory cgroup a ledger names: refused unless it is named as
/// fslab names them and sits strictly inside the memory controller's mount;
/// tasks still in it are moved to its parent, then it is removed. Gone
/// already: released.
pub fn release(path: &Path) -> Outcome {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if !named_by_fslab(&name) {
        return Ok(Some(format!("not made by fslab: {} is not named as fslab names its cgroups", path.display())));
    }
    let Ok(controller) = memory_controller() else {
        return Ok(Some(format!("not made by fslab: {}: no memory cgroup controller is mounted now", path.display())));
    };
    let inside = path.starts_with(&controller.mount)
        && path != controller.mount
        && path.components().all(|c| matches!(c, std::path::Component::RootDir | std::path::Component::Normal(_)));
    if !inside {
        return Ok(Some(format!(
            "not made by fslab: {} is not inside the memory controller's mount {}",
            path.display(),
            controller.mount.display()
        )));
    }
    if !path.exists() {
        return Ok(None);
    }
    let parent = path.parent().expect("inside a mount, so it has one");
    // Tasks left (a process the work left behind that nothing else
    // ended) are moved out, so the empty cgroup can go.
    let procs = fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.split_whitespace() {
        let _ = fs::write(parent.join("cgroup.procs"), pid);
    }
    let mut last = None;
    for _ in 0..50 {
        match fs::remove_dir(path) {
            Ok(()) => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            // A task moved out may take a moment to leave.
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(Error::io(path, "remove the memory cgroup", last.expect("tried")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_fslabs_alone() {
        assert!(named_by_fslab(&cgroup_name("20261121T093015Z-4242-9f03a1c2-3")));
        for other in ["fslab-", "fslab-x-1", "user.slice", "fslab-20261121T093015Z-4242-9f03a1c2-", "fslab-../x-1"] {
            assert!(!named_by_fslab(other), "{other}");
        }
    }

    #[test]
    fn unified_memory_wins_over_v1_and_v1_is_found_alone() {
        let v1 = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
        let v2 = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let both = format!("{v1}{v2}");
        let none = |_: &Path| String::new();
        let with_memory = |_: &Path| "cpu io memory pids".to_string();
        let found = find_controller(&both, none).unwrap();
        assert_eq!((found.version, found.mount), (CgroupVersion::V1, PathBuf::from("/sys/fs/cgroup/memory")));
        let found = find_controller(&both, with_memory).unwrap();
        assert_eq!((found.version, found.mount), (CgroupVersion::V2, PathBuf::from("/sys/fs/cgroup/unified")));
        assert_eq!(find_controller(v2, none), None);
    }

    #[test]
    fn release_refuses_what_fslab_does_not_name() {
        let refused = release(Path::new("/sys/fs/cgroup/memory/user.slice")).unwrap();
        assert!(refused.is_some_and(|why| why.starts_with("not made by fslab")));
        let outside = release(Path::new("/tmp/fslab-20261121T093015Z-1-ab-1")).unwrap();
        assert!(outside.is_some_and(|why| why.starts_with("not made by fslab")));
    }
}
