//! Shared file mappings (`mmap(MAP_SHARED)`), for the mmap-fill scenario.
//!
//! The scenario stores into a file through memory, page by page, as a
//! program using a mapped file does; the kernel allocates the file's blocks
//! as the dirtied pages are written back. [`SharedMap`] owns one such
//! mapping and offers the few accesses the seed's program makes, each a
//! single volatile load or store at the start of a page, so the compiler
//! neither drops nor merges them.
//!
//! A store to a mapped page the file system cannot allocate (no space, an
//! I/O error) is not an error return but a SIGBUS. [`SharedMap::in_child`]
//! runs the accesses in a forked child, so such a fault ends the child,
//! and the caller gets it back as a [`ChildEnd`] instead of dying of it.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::ptr::NonNull;

/// The system's page size (`sysconf(_SC_PAGESIZE)`).
pub fn page_size() -> usize {
    // SAFETY: sysconf only reads a configuration value.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// A readable and writable `MAP_SHARED` mapping of a file's first bytes.
///
/// Page-start accesses check the page number against the mapping (one
/// compare) and are otherwise plain volatile loads and stores, so a loop of
/// them costs what the same loop costs in C.
pub struct SharedMap {
    ptr: NonNull<u8>,
    len: usize,
    page: usize,
    pages: usize,
    mapped: bool,
    /// The view [`in_child`](SharedMap::in_child) hands its work: a page
    /// past the end ends the child instead of panicking in it.
    in_child: bool,
}

impl SharedMap {
    /// `mmap(NULL, len, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0)`: map the
    /// first `len` bytes (more than 0, a whole number of pages) of the file
    /// open read-write on `fd`. The mapping outlives nothing: the caller
    /// keeps the file at least `len` long while it is mapped (a store past
    /// the end of a file raises SIGBUS).
    pub fn new(fd: impl AsFd, len: usize) -> io::Result<SharedMap> {
        let page = page_size();
        if len == 0 || len % page != 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{len} bytes is not a whole number of pages")));
        }
        let fd = fd.as_fd().as_raw_fd();
        // SAFETY: a new mapping at an address of the kernel's choosing; no
        // existing memory is touched. The result is checked before use.
        let raw = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(raw.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(SharedMap { ptr, len, page, pages: len / page, mapped: true, in_child: false })
    }

    /// Pages in the mapping.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Mapped bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: [`new`](Self::new) refuses 0).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte of `page`; panics past the end (a
    /// caller's bug, not input), or in a child ends it with
    /// [`CHILD_OUT_OF_RANGE`].
    #[inline(always)]
    fn page_start(&self, page: usize) -> *mut u8 {
        if page >= self.pages {
            self.past_the_end(page);
        }
        // SAFETY: page < pages, so the offset stays inside the mapping.
        unsafe { self.ptr.as_ptr().add(page * self.page) }
    }

    #[cold]
    #[inline(never)]
    fn past_the_end(&self, page: usize) -> ! {
        if self.in_child {
            // SAFETY: _exit ends this forked child at once; a panic here
            // could wait forever on a lock another thread of the parent
            // held at the fork.
            unsafe { libc::_exit(CHILD_OUT_OF_RANGE) }
        }
        panic!("page {page} is past the mapping's {} pages", self.pages)
    }

    /// A volatile load of the first byte of `page` (faults the page in for
    /// reading).
    #[inline(always)]
    pub fn read_byte(&self, page: usize) -> u8 {
        let p = self.page_start(page);
        // SAFETY: p is inside the live mapping, readable, and any byte
        // value is valid. Other writers to the file can change it at any
        // time; the volatile load takes whatever is there.
        unsafe { p.read_volatile() }
    }

    /// A volatile store to the first byte of `page` (dirties it).
    #[inline(always)]
    pub fn write_byte(&self, page: usize, value: u8) {
        let p = self.page_start(page);
        // SAFETY: p is inside the live mapping, which is writable; no Rust
        // reference to the mapped bytes exists to be invalidated.
        unsafe { p.write_volatile(value) }
    }

    /// A volatile load of the `i32` at the start of `page`, then a volatile
    /// store of `value` there; returns what was loaded. This is one store
    /// of the seed's program: look at the word (is it already written?),
    /// then write it.
    #[inline(always)]
    pub fn load_then_store(&self, page: usize, value: i32) -> i32 {
        let p = self.page_start(page).cast::<i32>();
        // SAFETY: p is inside the live, readable and writable mapping and
        // aligned (pages are, and an i32 is 4 bytes at a page start); any
        // bit pattern is a valid i32. No Rust reference to it exists.
        unsafe {
            let old = p.read_volatile();
            p.write_volatile(value);
            old
        }
    }

    /// `msync(addr, len, MS_SYNC)`: write every dirty page of the mapping
    /// back and wait for it.
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: the whole range is this live mapping.
        let rc = unsafe { libc::msync(self.ptr.as_ptr().cast(), self.len, libc::MS_SYNC) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// `munmap(addr, len)`, explicitly, so its cost can be timed and its
    /// error seen (dropping a mapping unmaps it too, silently).
    pub fn unmap(mut self) -> io::Result<()> {
        self.mapped = false;
        // SAFETY: the mapping is live, and `self` is consumed, so no access
        // can follow.
        let rc = unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }
}

/// How a child running [`SharedMap::in_child`] ended without handing
/// back its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnd {
    /// Killed by this signal (SIGBUS: a page could not be allocated or
    /// read; SIGINT, SIGKILL: stopped from outside).
    Signal(i32),
    /// Exited with this status without finishing: [`CHILD_OUT_OF_RANGE`]
    /// for an access past the mapping, [`CHILD_PANICKED`] if the work
    /// panicked, [`CHILD_ORPHANED`] if fslab died first.
    Exit(i32),
}

/// How [`SharedMap::fill_in_child`]'s msync and munmap went: when each
/// ended, and its errno (0: done).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flushed {
    /// When `msync` returned.
    pub synced: std::time::Instant,
    /// `msync`'s errno, 0 if it succeeded.
    pub sync_errno: i32,
    /// When `munmap` returned.
    pub unmapped: std::time::Instant,
    /// `munmap`'s errno, 0 if it succeeded.
    pub unmap_errno: i32,
}

impl Flushed {
    /// `msync`'s outcome as an `io::Result`.
    pub fn synced(&self) -> io::Result<()> {
        if self.sync_errno == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(self.sync_errno)) }
    }

    /// `munmap`'s outcome as an `io::Result`.
    pub fn unmapped(&self) -> io::Result<()> {
        if self.unmap_errno == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(self.unmap_errno)) }
    }
}

/// The exit status of a child that accessed a page past the mapping.
pub const CHILD_OUT_OF_RANGE: i32 = 100;
/// The exit status of a child whose work panicked.
pub const CHILD_PANICKED: i32 = 101;
/// The exit status of a child that found its parent gone before it began.
pub const CHILD_ORPHANED: i32 = 102;

impl SharedMap {
    /// Run `work` on this mapping in a forked child and hand back what it
    /// returned, or how the child ended if it did not finish — a SIGBUS
    /// from a store the file system could not back ends the child only.
    ///
    /// The child shares the mapping (it is `MAP_SHARED`), so its stores
    /// reach the file and the page cache as the parent's would; its CPU
    /// time counts in `RUSAGE_CHILDREN` once it is waited for (here). It
    /// dies with fslab (`PR_SET_PDEATHSIG`) and by SIGINT, SIGTERM and
    /// SIGHUP (their default action, not fslab's handler).
    ///
    /// `work` runs in a copy of a multi-threaded process in which only
    /// this thread exists: it must only load and store memory and read
    /// the clock — no allocation, lock, I/O, print or panic (a panic's
    /// message may wait forever on a lock another thread held at the
    /// fork; one that does not ends the child with [`CHILD_PANICKED`]).
    /// The accesses it is handed cannot panic: a page past the end ends
    /// the child with [`CHILD_OUT_OF_RANGE`]. `T` is
    /// handed back through a shared anonymous page, so it must be plain
    /// data (`Copy`) no larger than a page.
    pub fn in_child<T: Copy>(&self, work: impl FnOnce(&SharedMap) -> T) -> io::Result<Result<T, ChildEnd>> {
        let slot_len = self.page;
        if std::mem::size_of::<T>() > slot_len || std::mem::align_of::<T>() > slot_len {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the child's result is larger than a page"));
        }
        // SAFETY: a new anonymous shared mapping of one page at an address
        // of the kernel's choosing; the result is checked before use.
        let slot = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                slot_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if slot == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ended = self.fork_and_wait(slot.cast::<T>(), work);
        // SAFETY: `slot` is the live one-page mapping made above; the child
        // is gone and nothing refers to it after this.
        let ended = ended.map(|ended| ended.map(|()| unsafe { slot.cast::<T>().read_volatile() }));
        // SAFETY: as above; the value was copied out.
        unsafe { libc::munmap(slot, slot_len) };
        ended
    }

    /// The mapping's whole life as the seed's program lives it, in a
    /// child ([`in_child`](SharedMap::in_child)): `work`, then
    /// `msync(MS_SYNC)`, then `munmap` of the child's copy, each end
    /// timed, so a fault in any of them is the child's and the unmapping
    /// is timed where the stores' page tables are torn down. The parent's
    /// own copy is untouched and unmapped when dropped.
    pub fn fill_in_child<T: Copy>(
        &self,
        work: impl FnOnce(&SharedMap) -> T,
    ) -> io::Result<Result<(T, Flushed), ChildEnd>> {
        self.in_child(|view| {
            let value = work(view);
            // SAFETY: the whole range is the child's live copy of the
            // mapping; after munmap nothing touches it (the child returns
            // and exits).
            let (sync_errno, synced, unmap_errno, unmapped) = unsafe {
                let rc = libc::msync(view.ptr.as_ptr().cast(), view.len, libc::MS_SYNC);
                let sync_errno = if rc < 0 { *libc::__errno_location() } else { 0 };
                let synced = std::time::Instant::now();
                let rc = libc::munmap(view.ptr.as_ptr().cast(), view.len);
                let unmap_errno = if rc < 0 { *libc::__errno_location() } else { 0 };
                (sync_errno, synced, unmap_errno, std::time::Instant::now())
            };
            (value, Flushed { synced, sync_errno, unmapped, unmap_errno })
        })
    }

    /// fork; in the child, run `work`, store its result at `slot` and
    /// `_exit(0)`; in the parent, wait. `Ok(Ok(()))` means `slot` holds
    /// the child's result.
    fn fork_and_wait<T: Copy>(&self, slot: *mut T, work: impl FnOnce(&SharedMap) -> T) -> io::Result<Result<(), ChildEnd>> {
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        // SAFETY: fork duplicates the process; the child runs only the
        // block below, which makes async-signal-safe calls (signal,
        // prctl, getppid, _exit), runs `work` (bound by the contract
        // above to touch memory only) and never returns from this frame.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: in the child. Default dispositions so an interrupt
            // ends it; the death signal so it never outlives fslab; then
            // the work, whose panic must not unwind into the parent's code.
            unsafe {
                for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(CHILD_ORPHANED);
                }
                let view = SharedMap { mapped: false, in_child: true, ..*self };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&view))) {
                    Ok(value) => {
                        slot.write_volatile(value);
                        libc::_exit(0)
                    }
                    Err(_) => libc::_exit(CHILD_PANICKED),
                }
            }
        }
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child and writes one int.
            let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
            if rc == pid {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(if libc::WIFSIGNALED(status) {
            Err(ChildEnd::Signal(libc::WTERMSIG(status)))
        } else if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            Ok(())
        } else {
            Err(ChildEnd::Exit(libc::WEXITSTATUS(status)))
        })
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: the mapping is live and this is its last use.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        }
    }
}

impl std::fmt::Debug for SharedMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedMap").field("len", &self.len).field("pages", &self.pages).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn stores_through_the_map_reach_the_file() {
        let page = page_size();
        let mut file = tempfile::tempfile().unwrap();
        file.set_len(3 * page as u64).unwrap();
        let map = SharedMap::new(&file, 3 * page).unwrap();
        assert_eq!(map.pages(), 3);
        assert_eq!(map.load_then_store(2, -7), 0);
        assert_eq!(map.load_then_store(2, 5), -7);
        map.write_byte(0, 0xab);
        assert_eq!(map.read_byte(0), 0xab);
        map.sync().unwrap();
        map.unmap().unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes.len(), 3 * page);
        assert_eq!(bytes[0], 0xab);
        assert_eq!(&bytes[2 * page..2 * page + 4], &5i32.to_ne_bytes());
    }

    #[test]
    fn lengths_that_are_not_whole_pages_are_refused() {
        let file = tempfile::tempfile().unwrap();
        file.set_len(8192).unwrap();
        assert!(SharedMap::new(&file, 0).is_err());
        assert!(SharedMap::new(&file, 100).is_err());
    }

    #[test]
    fn the_childs_stores_reach_the_file_and_its_result_comes_back() {
        let page = page_size();
        let mut file = tempfile::tempfile().unwrap();
        file.set_len(4 * page as u64).unwrap();
        let map = SharedMap::new(&file, 4 * page).unwrap();
        let got = map.in_child(|m| (0..m.pages()).map(|p| i64::from(m.load_then_store(p, p as i32 + 1))).sum::<i64>());
        assert_eq!(got.unwrap(), Ok(0));
        map.sync().unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        assert_eq!(&bytes[3 * page..3 * page + 4], &4i32.to_ne_bytes());
        // The parent sees the child's stores through its own mapping.
        assert_eq!(map.read_byte(1), 2);
    }

    #[test]
    fn a_fill_in_the_child_is_synced_and_unmapped_there() {
        let page = page_size();
        let mut file = tempfile::tempfile().unwrap();
        file.set_len(2 * page as u64).unwrap();
        let map = SharedMap::new(&file, 2 * page).unwrap();
        let before = std::time::Instant::now();
        let (value, flushed) = map.fill_in_child(|m| m.load_then_store(1, 9)).unwrap().unwrap();
        assert_eq!(value, 0);
        assert!(flushed.synced().is_ok() && flushed.unmapped().is_ok());
        assert!(before <= flushed.synced && flushed.synced <= flushed.unmapped);
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        assert_eq!(&bytes[page..page + 4], &9i32.to_ne_bytes());
        map.unmap().unwrap();
    }

    #[test]
    fn a_store_past_the_end_of_the_file_is_the_childs_sigbus_not_ours() {
        let page = page_size();
        let file = tempfile::tempfile().unwrap();
        file.set_len(4 * page as u64).unwrap();
        let map = SharedMap::new(&file, 4 * page).unwrap();
        // Pages 1..3 now lie past the end: a store there raises SIGBUS.
        file.set_len(page as u64).unwrap();
        let got = map.in_child(|m| {
            m.write_byte(0, 1);
            m.write_byte(2, 1);
            7u32
        });
        assert_eq!(got.unwrap(), Err(ChildEnd::Signal(libc::SIGBUS)));
        assert_eq!(map.read_byte(0), 1, "the store before the fault was made");
    }

    #[test]
    fn a_page_past_the_end_in_the_child_ends_the_child_without_a_panic() {
        let file = tempfile::tempfile().unwrap();
        file.set_len(page_size() as u64).unwrap();
        let map = SharedMap::new(&file, page_size()).unwrap();
        let got = map.in_child(|m| m.write_byte(5, 1));
        assert_eq!(got.unwrap(), Err(ChildEnd::Exit(CHILD_OUT_OF_RANGE)));
    }

    #[test]
    #[should_panic(expected = "past the mapping")]
    fn a_page_past_the_end_is_a_panic_not_a_stray_store() {
        let file = tempfile::tempfile().unwrap();
        file.set_len(page_size() as u64).unwrap();
        let map = SharedMap::new(&file, page_size()).unwrap();
        map.write_byte(1, 1);
    }
}
