//! Children that do not outlive fslab: `prctl(PR_SET_PDEATHSIG)` set
//! between fork and exec.

use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::Signal;

/// Make the child that `command` starts receive SIGKILL when fslab dies,
/// even by SIGKILL, so a measured program never keeps writing to (and
/// holding busy) a scratch file system that nobody will release. Only the
/// direct child gets it; its own children are found by process group.
pub fn kill_with_parent(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only
    // makes one async-signal-safe system call (prctl); it allocates nothing
    // and touches no lock.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
}

/// Let the child that `command` starts inherit descriptor `fd` (which
/// fslab opened close-on-exec). The flag is cleared in the child only,
/// after fork, so no other child of fslab inherits it.
pub fn inherit_fd(command: &mut Command, fd: std::os::fd::RawFd) {
    // SAFETY: runs in the forked child before exec; fcntl(F_SETFD) is
    // async-signal-safe and the closure allocates nothing. `fd` stays open
    // in the parent for the child's whole life (the caller owns it).
    unsafe {
        command.pre_exec(move || {
            let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty()).map_err(std::io::Error::from)
        });
    }
}
