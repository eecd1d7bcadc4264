//! `getrusage(2)`: user and system CPU time of this process or of its
//! waited-for children.
//!
//! rustix 1.1 has no getrusage, so this is the one libc call; it hands back
//! seconds as `f64` so nothing above `sys` sees a `struct rusage`.

use std::io;

/// Whose CPU time to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// Every thread of this process (`RUSAGE_SELF`).
    SelfProcess,
    /// The calling thread only (`RUSAGE_THREAD`).
    Thread,
    /// Children that have terminated and been waited for, and their own
    /// waited-for descendants (`RUSAGE_CHILDREN`).
    Children,
}

/// CPU time consumed, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    /// Time spent in user mode.
    pub user_s: f64,
    /// Time spent in the kernel on the process's behalf.
    pub sys_s: f64,
}

/// `getrusage(who)`'s user and system times.
pub fn cpu_times(who: Who) -> io::Result<CpuTimes> {
    let who = match who {
        Who::SelfProcess => libc::RUSAGE_SELF,
        Who::Thread => libc::RUSAGE_THREAD,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one struct rusage through the pointer, which
    // points at a live, properly aligned, zero-initialised rusage.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the struct was zero-initialised (a valid rusage: all integer
    // fields) and the kernel filled it on success.
    let usage = unsafe { usage.assume_init() };
    Ok(CpuTimes { user_s: seconds(usage.ru_utime), sys_s: seconds(usage.ru_stime) })
}

fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeval_to_seconds() {
        assert_eq!(seconds(libc::timeval { tv_sec: 2, tv_usec: 250_000 }), 2.25);
    }

    #[test]
    fn own_cpu_time_grows_with_work() {
        // Work until this thread has had 20 ms of CPU (on a loaded machine
        // 30 ms of wall time may give it less), then the process's count
        // must have grown at least as much.
        let before = cpu_times(Who::SelfProcess).unwrap();
        let thread = cpu_times(Who::Thread).unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        loop {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            let now = cpu_times(Who::Thread).unwrap();
            if now.user_s + now.sys_s - thread.user_s - thread.sys_s >= 0.02 {
                break;
            }
            assert!(start.elapsed().as_secs() < 60, "the thread got no 20 ms of CPU in a minute: {thread:?} {now:?}");
        }
        let after = cpu_times(Who::SelfProcess).unwrap();
        assert!(after.user_s + after.sys_s - before.user_s - before.sys_s >= 0.02, "{before:?} {after:?}");
        assert!(cpu_times(Who::Children).is_ok());
    }
}
