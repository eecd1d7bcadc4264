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
        command.pre_exec(|| rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).map_err(std::io::Error::from));
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

/// Why [`spawn_recorded`] started nothing.
#[derive(Debug)]
pub enum NotStarted<E> {
    /// The program could not be started (fork, exec, or the gate).
    Spawn(std::io::Error),
    /// `record` failed, so the program was never let run.
    Record(E),
}

/// Start `command` and hand its pid to `record` before the program runs.
/// The forked child sends its pid, then waits at a gate; the gate opens
/// once `record` has succeeded. A pid exists only once forked, so without
/// the gate a run killed between fork and record would leave a program
/// running that no ledger names; with it, a child whose parent died (or
/// whose record failed) reads the gate closed and exits before exec.
pub fn spawn_recorded<T: Send, E: Send>(
    command: &mut Command,
    record: impl FnOnce(u32) -> Result<T, E> + Send,
) -> Result<(std::process::Child, T), NotStarted<E>> {
    use rustix::io::Errno;
    use rustix::pipe::{PipeFlags, pipe_with};
    use std::os::fd::{AsRawFd, BorrowedFd};
    let pipes = pipe_with(PipeFlags::CLOEXEC).and_then(|p| Ok((p, pipe_with(PipeFlags::CLOEXEC)?)));
    let ((pid_read, pid_write), (gate_read, gate_write)) = pipes.map_err(|e| NotStarted::Spawn(e.into()))?;
    let (pid_w, gate_r, gate_w) = (pid_write.as_raw_fd(), gate_read.as_raw_fd(), gate_write.as_raw_fd());
    // SAFETY: runs in the forked child before exec. close, getpid, write
    // and read are async-signal-safe; the closure allocates nothing (its
    // errors are raw OS errors). The three descriptors stay open in the
    // parent until spawn has returned; the child closes its own copy of
    // the gate's writing end first, so the parent's death reads as its end.
    unsafe {
        command.pre_exec(move || {
            rustix::io::close(gate_w);
            let pid = rustix::process::getpid().as_raw_nonzero().get().to_ne_bytes();
            if rustix::io::write(BorrowedFd::borrow_raw(pid_w), &pid) != Ok(pid.len()) {
                return Err(std::io::Error::from_raw_os_error(Errno::PIPE.raw_os_error()));
            }
            let mut byte = [0u8; 1];
            loop {
                match rustix::io::read(BorrowedFd::borrow_raw(gate_r), &mut byte) {
                    Ok(1) => return Ok(()),
                    Err(Errno::INTR) => continue,
                    _ => return Err(std::io::Error::from_raw_os_error(Errno::CANCELED.raw_os_error())),
                }
            }
        });
    }
    // The child is forked by this thread: PR_SET_PDEATHSIG fires when the
    // thread that forked it ends, so the pid is read and recorded on
    // another, which opens the gate.
    std::thread::scope(|scope| {
        let recorder = scope.spawn(move || {
            let mut pid = [0u8; 4];
            let mut got = 0;
            while got < pid.len() {
                match rustix::io::read(&pid_read, &mut pid[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(Errno::INTR) => {}
                    Err(_) => break,
                }
            }
            let pid = u32::from_ne_bytes(pid);
            let recorded = (got == pid.to_ne_bytes().len() && pid != 0).then(|| record(pid));
            if let Some(Ok(_)) = &recorded {
                let _ = rustix::io::write(&gate_write, &[1]);
            }
            drop(gate_write); // a child not let go reads the gate closed
            recorded
        });
        let spawned = command.spawn();
        if spawned.is_err() {
            // No pid may come: say so, a pid of 0 (read only if none came).
            let _ = rustix::io::write(&pid_write, &[0u8; 4]);
        }
        let recorded = recorder.join().unwrap_or(None);
        match (spawned, recorded) {
            (Ok(child), Some(Ok(value))) => Ok((child, value)),
            // Not let go, a child cannot have started; one that did is
            // ended all the same.
            (Ok(mut child), not) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(match not {
                    Some(Err(e)) => NotStarted::Record(e),
                    _ => NotStarted::Spawn(std::io::Error::other("the program started without sending its pid")),
                })
            }
            (Err(_), Some(Err(e))) => Err(NotStarted::Record(e)),
            (Err(e), _) => Err(NotStarted::Spawn(e)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_runs_only_once_recorded_and_never_when_the_record_fails() {
        let dir = tempfile::tempdir().unwrap();
        let ran = dir.path().join("ran");
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!("touch {}", ran.display()));
        // While it is recorded, the child is still a copy of this process.
        let me = std::fs::read_link("/proc/self/exe").unwrap();
        let (mut child, seen) = spawn_recorded(&mut command, |pid| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok::<_, ()>((std::fs::read_link(format!("/proc/{pid}/exe")).unwrap(), ran.exists()))
        })
        .unwrap();
        assert!(child.wait().unwrap().success());
        assert_eq!(seen, (me, false), "the program ran before its record");
        assert!(ran.exists());

        std::fs::remove_file(&ran).unwrap();
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!("touch {}", ran.display()));
        match spawn_recorded(&mut command, |_| Err::<(), _>("the ledger is full")) {
            Err(NotStarted::Record(why)) => assert_eq!(why, "the ledger is full"),
            other => panic!("{:?}", other.map(|_| ())),
        }
        assert!(!ran.exists(), "a program whose record failed ran");
        let missing = spawn_recorded(&mut Command::new("/nonexistent/program"), |_| Ok::<_, ()>(()));
        assert!(matches!(missing, Err(NotStarted::Spawn(_))));
    }
}
