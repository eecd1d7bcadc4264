//! Wall, user and system time of the measured work, as `time(1)` prints
//! them: the seeds' "real / user / sys".
//!
//! The design decision: user and system time are the thread that does the
//! work plus this process's waited-for children (`getrusage` THREAD +
//! CHILDREN), so work a scenario runs in a child (`tar`, `cp`) counts, as
//! it did for the seeds' authors, while the probes' own threads — the
//! timeline sampler and the trace reader, which parses every traced event —
//! do not. Work done in-process must run on the thread that started the
//! clock.

use std::time::Instant;

use super::{Probe, ProbeCtx, Reading, Running, Window};
use crate::record::{Better, FigureSpec, Figures, Kind};
use crate::sys::rusage::{CpuTimes, Who, cpu_times};

/// A running clock: started before the work, stopped after it.
#[derive(Debug, Clone, Copy)]
pub struct CpuClock {
    wall: Instant,
    own: CpuTimes,
    children: CpuTimes,
}

/// The time the work took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuSpan {
    /// Elapsed (wall-clock) seconds.
    pub wall_s: f64,
    /// Seconds in user mode, the working thread and waited-for children.
    pub user_s: f64,
    /// Seconds in the kernel, the working thread and waited-for children.
    pub sys_s: f64,
}

impl CpuClock {
    /// Start the clock now.
    pub fn start() -> CpuClock {
        CpuClock { wall: Instant::now(), own: read(Who::Thread), children: read(Who::Children) }
    }

    /// The time since [`start`](CpuClock::start). Children count only once
    /// they have been waited for, so stop after waiting for them.
    pub fn stop(&self) -> CpuSpan {
        let wall_s = self.wall.elapsed().as_secs_f64();
        let (own, children) = (read(Who::Thread), read(Who::Children));
        // Rounding in the µs→s conversion must not make a delta negative.
        let delta = |now: f64, then: f64| (now - then).max(0.0);
        CpuSpan {
            wall_s,
            user_s: delta(own.user_s, self.own.user_s) + delta(children.user_s, self.children.user_s),
            sys_s: delta(own.sys_s, self.own.sys_s) + delta(children.sys_s, self.children.sys_s),
        }
    }
}

/// getrusage cannot fail for THREAD or CHILDREN with a valid pointer
/// (EFAULT and EINVAL are its only errors), so a failure is a bug.
fn read(who: Who) -> CpuTimes {
    cpu_times(who).expect("getrusage(RUSAGE_THREAD/CHILDREN) does not fail")
}

/// The figures of a [`CpuSpan`].
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("wall_s", "s", Better::Lower, Kind::Timing).heading("wall s").about("elapsed time of the work"),
    FigureSpec::new("user_s", "s", Better::Lower, Kind::Timing)
        .heading("user s")
        .about("user CPU time of the work's thread and its waited-for children"),
    FigureSpec::new("sys_s", "s", Better::Lower, Kind::Timing)
        .heading("sys s")
        .about("system CPU time of the work's thread and its waited-for children"),
];

impl CpuSpan {
    /// Put `wall_s`, `user_s` and `sys_s` into `figures`.
    pub fn add_figures(&self, figures: &mut Figures) {
        for (spec, value) in FIGURES.iter().zip([self.wall_s, self.user_s, self.sys_s]) {
            figures.put(spec, Some(value), "");
        }
    }
}

/// The probe: `time(1)`'s real, user and sys of the work alone.
#[derive(Debug)]
pub struct Cpu;

impl Probe for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn figures(&self) -> &'static [FigureSpec] {
        FIGURES
    }

    fn window(&self) -> Window {
        Window::Work
    }

    fn start<'a>(&self, _ctx: &ProbeCtx<'a>) -> Box<dyn Running + 'a> {
        Box::new(CpuClock::start())
    }
}

impl Running for CpuClock {
    fn stop(self: Box<Self>) -> Reading {
        let mut reading = Reading::default();
        CpuClock::stop(&self).add_figures(&mut reading.figures);
        reading
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_loop_is_user_time() {
        let clock = CpuClock::start();
        let mut x = 1u64;
        // At least 50 ms, and until 30 ms of CPU were had (a busy machine
        // gives this thread a share of a core), for at most 5 s.
        let busy = |clock: &CpuClock| {
            let s = clock.stop();
            s.wall_s < 0.05 || (s.user_s < 0.03 && s.wall_s < 5.0)
        };
        while busy(&clock) {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(2862933555777941757).wrapping_add(3037000493));
            }
        }
        let span = clock.stop();
        assert!(span.wall_s >= 0.05, "{span:?}");
        assert!(span.user_s > 0.02, "{span:?}");
        let mut f = Figures::new();
        span.add_figures(&mut f);
        assert_eq!(f.value("user_s"), Some(span.user_s));
        assert_eq!(f.get("wall_s").unwrap().kind, Kind::Timing);
        assert_eq!(f.iter().map(|(n, _)| n).collect::<Vec<_>>(), ["wall_s", "user_s", "sys_s"]);
    }

    #[test]
    fn a_waited_for_child_counts() {
        let clock = CpuClock::start();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let span = clock.stop();
        // The shell loop takes about 0.2 s of user time here. Other tests'
        // threads add to SELF, so check the children's share on its own.
        let children = read(Who::Children).user_s - clock.children.user_s;
        assert!(children > 0.05, "children {children} s, {span:?}");
        assert!(span.user_s >= children, "{span:?}");
    }
}
