//! Page-aligned buffers for O_DIRECT I/O.
//!
//! O_DIRECT wants the user buffer aligned to the device's logical block
//! (4 KiB covers every device here); a `Vec<u8>` gives no such promise.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Alignment of every [`AlignedBuf`]: one page.
pub const ALIGN: usize = 4096;

/// A zeroed byte buffer whose start is aligned to [`ALIGN`].
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is plain owned memory, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (more than 0).
    pub fn zeroed(len: usize) -> AlignedBuf {
        assert!(len > 0, "an aligned buffer needs a length");
        let layout = Layout::from_size_align(len, ALIGN).expect("a buffer size below isize::MAX");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points at len initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, ALIGN).expect("the layout it was made with");
        // SAFETY: allocated in `zeroed` with this very layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf").field("len", &self.len).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_and_writable() {
        for len in [1, 4096, 512 * 1024 + 7] {
            let mut b = AlignedBuf::zeroed(len);
            assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[len - 1] = 9;
            assert_eq!(b.as_slice()[len - 1], 9);
        }
    }
}
