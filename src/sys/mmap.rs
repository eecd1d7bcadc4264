//! Shared file mappings (`mmap(MAP_SHARED)`), for the mmap-fill scenario.
//!
//! The scenario stores into a file through memory, page by page, as a
//! program using a mapped file does; the kernel allocates the file's blocks
//! as the dirtied pages are written back. [`SharedMap`] owns one such
//! mapping and offers the few accesses the seed's program makes, each a
//! single volatile load or store at the start of a page, so the compiler
//! neither drops nor merges them.

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
        Ok(SharedMap { ptr, len, page, pages: len / page, mapped: true })
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
    /// caller's bug, not input).
    #[inline(always)]
    fn page_start(&self, page: usize) -> *mut u8 {
        assert!(page < self.pages, "page {page} is past the mapping's {} pages", self.pages);
        // SAFETY: page < pages, so the offset stays inside the mapping.
        unsafe { self.ptr.as_ptr().add(page * self.page) }
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
    #[should_panic(expected = "past the mapping")]
    fn a_page_past_the_end_is_a_panic_not_a_stray_store() {
        let file = tempfile::tempfile().unwrap();
        file.set_len(page_size() as u64).unwrap();
        let map = SharedMap::new(&file, page_size()).unwrap();
        map.write_byte(1, 1);
    }
}
