//! The few raw syscalls fslab needs that no crate wraps: FIEMAP, FIGETBSZ,
//! GETFSMAP, XFS geometry, getrusage, a death signal for children, shared
//! file mappings, loop devices attached by descriptor, aligned buffers for
//! O_DIRECT, glibc's preallocation, and batches of opens and closes sent
//! through io_uring (the one crate-wrapped interface here, for its unsafe
//! pushes).
//!
//! Every `unsafe` block of the crate is in this module. Each function here
//! names the ioctl it issues, takes its descriptor as `AsFd`, and hands back
//! plain Rust values, so nothing above `sys` touches a kernel struct.

pub mod aligned;
pub mod fiemap;
pub mod fsmap;
pub mod ioctl;
pub mod loop_dev;
pub mod mmap;
pub mod prealloc;
pub mod rusage;
pub mod sync_range;
pub mod uring;
pub mod process;
pub mod xfs;
