//! Opening and closing a batch of files with one system call each, through
//! io_uring, where a walk would otherwise make one call per file for both.
//!
//! The design decision: only what runs inline is sent to the ring. Opens go
//! as `openat2` with `RESOLVE_CACHED`, so a name whose path is in the dentry
//! cache opens inside the submitting call, and one that would need a disk
//! read comes back `EAGAIN` and is opened by a plain `openat` on the calling
//! thread, as it would be without the ring (instead of going to io_uring's
//! worker threads, which cost more than they save on a cold tree). Closes
//! always run inline. Where the kernel has no io_uring, or refuses it (a
//! sysctl, a container's seccomp filter), or lacks `openat2`'s cached
//! lookups, every call is the plain one: the results are the same, only the
//! number of system calls differs.

use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

use io_uring::{IoUring, opcode, types};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// `RESOLVE_CACHED` from `<linux/openat2.h>`: fail with `EAGAIN` rather
/// than block on a lookup.
const RESOLVE_CACHED: u64 = 0x20;

/// Opens and closes files in batches; one per thread.
pub struct BatchFiles {
    /// None where io_uring cannot be used here: plain calls only.
    ring: Option<IoUring>,
    capacity: usize,
}

impl BatchFiles {
    /// A batcher sending up to `capacity` operations per call, or making
    /// plain calls where io_uring is not available.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, 4096);
        let ring = u32::try_from(capacity).ok().and_then(|n| IoUring::new(n).ok());
        BatchFiles { ring, capacity }
    }

    /// A batcher that makes plain calls only (to compare the two ways).
    pub fn plain() -> Self {
        BatchFiles { ring: None, capacity: 1 }
    }

    /// Whether calls go through io_uring.
    pub fn batched(&self) -> bool {
        self.ring.is_some()
    }

    /// Open each of `names` in directory `dir` with `flags` (no mode: files
    /// are never created), appending one result per name, in order, to
    /// `out`.
    pub fn open_all<'n>(
        &mut self,
        dir: BorrowedFd<'_>,
        names: impl IntoIterator<Item = &'n CStr>,
        flags: OFlags,
        out: &mut Vec<Result<OwnedFd, Errno>>,
    ) {
        let names: Vec<&CStr> = names.into_iter().collect();
        for chunk in names.chunks(self.capacity) {
            let first = out.len();
            if !self.open_chunk(dir, chunk, flags, out) {
                out.truncate(first);
                out.extend(chunk.iter().map(|name| open_plain(dir, name, flags)));
            }
        }
    }

    /// One chunk through the ring; false (and nothing left open) when the
    /// ring cannot do it, so the caller opens the chunk plainly.
    fn open_chunk(
        &mut self,
        dir: BorrowedFd<'_>,
        names: &[&CStr],
        flags: OFlags,
        out: &mut Vec<Result<OwnedFd, Errno>>,
    ) -> bool {
        let Some(ring) = self.ring.as_mut() else { return false };
        let how = types::OpenHow::new().flags(u64::from(flags.bits())).resolve(RESOLVE_CACHED);
        for (i, name) in names.iter().enumerate() {
            let entry = opcode::OpenAt2::new(types::Fd(dir.as_raw_fd()), name.as_ptr(), &how)
                .build()
                .user_data(i as u64);
            // SAFETY: the name and `how` outlive the operation: `complete`
            // below waits for every operation pushed here before this
            // function returns. The queue has room: it holds `capacity`
            // entries, is empty between calls, and `names` is at most that.
            if unsafe { ring.submission().push(&entry) }.is_err() {
                self.ring = None;
                return false;
            }
        }
        let mut results: Vec<Option<i32>> = vec![None; names.len()];
        if !complete(ring, &mut results) {
            // What did open is closed; the ring is not used again (an
            // open still in flight when the ring failed, which never
            // happens on a working kernel, would leave its descriptor).
            for fd in results.iter().flatten().filter(|r| **r >= 0) {
                // SAFETY: a non-negative open result is a descriptor the
                // kernel just installed for this call and nobody else owns.
                drop(unsafe { OwnedFd::from_raw_fd(*fd) });
            }
            self.ring = None;
            return false;
        }
        let mut unsupported = false;
        for (name, result) in names.iter().zip(results) {
            let result = result.unwrap_or(-libc::EIO);
            out.push(match result {
                // SAFETY: as above: a fresh descriptor owned by no one else.
                fd if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
                // Not in the dentry cache: the plain call does the lookup.
                e if e == -libc::EAGAIN => open_plain(dir, name, flags),
                // A kernel without openat2 or its cached lookups: say
                // nothing, open plainly, and stop using the ring.
                e if e == -libc::EINVAL => {
                    unsupported = true;
                    open_plain(dir, name, flags)
                }
                e => Err(Errno::from_raw_os_error(-e)),
            });
        }
        if unsupported {
            self.ring = None;
        }
        true
    }

    /// Close every descriptor of `fds`; errors of close are not reported
    /// (as dropping an `OwnedFd` does not).
    pub fn close_all(&mut self, fds: impl IntoIterator<Item = OwnedFd>) {
        let mut fds = fds.into_iter().peekable();
        while fds.peek().is_some() {
            let Some(ring) = self.ring.as_mut() else {
                fds.for_each(drop);
                return;
            };
            let mut pushed = 0;
            while pushed < self.capacity {
                let Some(fd) = fds.next() else { break };
                let entry = opcode::Close::new(types::Fd(fd.as_fd().as_raw_fd())).build().user_data(pushed as u64);
                // SAFETY: the operation refers to no memory of ours. The
                // queue has room (see `open_chunk`).
                if unsafe { ring.submission().push(&entry) }.is_ok() {
                    // The ring owns the descriptor now: it closes it.
                    let _ = fd.into_raw_fd();
                    pushed += 1;
                } else {
                    drop(fd);
                }
            }
            let mut results = vec![None; pushed];
            if !complete(ring, &mut results) {
                // Never close again what the ring may have closed: a number
                // closed twice can be another thread's new file by then.
                self.ring = None;
            }
        }
    }
}

/// Submit what is queued and wait until every one of `results` has its
/// completion (by user data, its index). False when the ring fails.
fn complete(ring: &mut IoUring, results: &mut [Option<i32>]) -> bool {
    let mut left = results.len();
    while left > 0 {
        match ring.submit_and_wait(left) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(_) => return false,
        }
        for cqe in ring.completion() {
            if let Some(slot) = results.get_mut(cqe.user_data() as usize)
                && slot.is_none()
            {
                *slot = Some(cqe.result());
                left -= 1;
            }
        }
    }
    true
}

/// The plain call.
fn open_plain(dir: BorrowedFd<'_>, name: &CStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(dir, name, flags, Mode::empty())
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;
    use std::os::unix::fs::MetadataExt;

    use super::*;

    /// Through the ring or plainly, every name gets the same answer:
    /// the same file, or the same error (a missing name, a symbolic link
    /// refused by `O_NOFOLLOW`), in order, over more names than one call
    /// takes; and the closes leave no descriptor open.
    #[test]
    fn the_ring_and_the_plain_calls_open_the_same_files() {
        let dir = crate::test_temp::dir("");
        let mut names = Vec::new();
        for i in 0..40 {
            let name = format!("f{i}");
            std::fs::write(dir.path().join(&name), vec![1u8; i * 100]).unwrap();
            names.push(CString::new(name).unwrap());
        }
        std::os::unix::fs::symlink("f1", dir.path().join("link")).unwrap();
        names.insert(7, CString::new("missing").unwrap());
        names.insert(20, CString::new("link").unwrap());
        let dir_fd = rustix::fs::open(dir.path(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // Descriptors of this process open on the test's folder (other
        // tests' threads open files of their own meanwhile).
        let open_here = || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|target| target.starts_with(dir.path()))
                .count()
        };

        let answers = |files: &mut BatchFiles| {
            let mut out = Vec::new();
            files.open_all(dir_fd.as_fd(), names.iter().map(|n| n.as_c_str()), flags, &mut out);
            let answers: Vec<Result<u64, Errno>> =
                out.iter().map(|r| r.as_ref().map(|fd| rustix::fs::fstat(fd).unwrap().st_ino).map_err(|e| *e)).collect();
            files.close_all(out.into_iter().flatten());
            answers
        };
        let before = open_here();
        let plain = answers(&mut BatchFiles::plain());
        let mut ring = BatchFiles::new(16);
        let batched = answers(&mut ring);
        assert_eq!(batched, plain);
        assert_eq!(open_here(), before, "a descriptor was left open");
        assert_eq!(plain[7], Err(Errno::NOENT));
        assert_eq!(plain[20], Err(Errno::LOOP));
        let f0 = std::fs::metadata(dir.path().join("f0")).unwrap().ino();
        assert_eq!(plain[0], Ok(f0));
        // Where the kernel allows io_uring, the comparison above was
        // between the two ways, not the plain calls twice.
        if std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").is_ok_and(|v| v.trim() == "0") {
            assert!(ring.batched(), "io_uring is allowed here, but the batcher fell back to plain calls");
        }
    }
}
