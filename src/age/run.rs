//! Carrying a [`Plan`] out on a mounted file system: a first fill that
//! lands on a fill level (measured with statvfs after syncfs, on a file
//! system that has only had files made), then rounds of deletions each
//! refilled by the plan's own account of the bytes freed, a syncfs after
//! each fill phase (before anything is deleted: with delayed allocation, a
//! file deleted before writeback never had blocks, and aging would do
//! nothing).

use std::io;

use super::Aged;
use super::plan::{Op, Plan};
use super::writer::Writer;
use crate::error::{Error, Result};

/// A fill phase stops when the level is this close below its target.
const TOLERANCE: f64 = 0.003;
/// Fill passes at most (each measures, then writes what is still missing).
const MAX_PASSES: u32 = 6;

/// Carry out `ops`, counting into `aged`; `Ok(false)` when the file system
/// ran out of space (the rest of `ops` is left undone).
pub fn execute(writer: &mut Writer, ops: &[Op], aged: &mut Aged) -> Result<bool> {
    for op in ops {
        crate::interrupt::check()?;
        let path = match op {
            Op::MkDir(p) | Op::Create { path: p, .. } | Op::Remove(p) | Op::RmDir(p) => p,
        };
        let done = match op {
            Op::MkDir(p) => writer.mkdir(p.as_bytes()),
            Op::Create { path, size } => writer.create(path.as_bytes(), *size).map(|written| {
                aged.files_made += 1;
                aged.bytes_written += written;
            }),
            // A file the full file system never let be made is not there.
            Op::Remove(p) => ignore_missing(writer.remove(p.as_bytes()).map(|()| aged.files_deleted += 1)),
            Op::RmDir(p) => ignore_missing(writer.rmdir(p.as_bytes())),
        };
        match done {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) => {
                return Ok(false);
            }
            Err(e) => return Err(Error::io(&writer.path().join(path), "age", e)),
        }
    }
    Ok(true)
}

fn ignore_missing(done: io::Result<()>) -> io::Result<()> {
    match done {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Fill to `target` with the plan's files: measure after a syncfs, write
/// what is missing, repeat (metadata and block rounding are learnt from
/// the first pass) until within [`TOLERANCE`]. Ends synced; the level.
pub fn fill_to(writer: &mut Writer, plan: &mut dyn Plan, target: f64, aged: &mut Aged) -> Result<f64> {
    // Aim a little short at first: what a byte of data costs is learnt.
    let mut cost = 1.05;
    let mut last: Option<(f64, u64)> = None;
    let mut room = true;
    for pass in 0..=MAX_PASSES {
        writer.syncfs()?;
        let (level, total, block) = writer.level()?;
        if let Some((before, budget)) = last {
            let used = (level - before) * total as f64;
            if used > 0.0 && budget > 0 {
                cost = (used / budget as f64).max(1.0);
            }
        }
        if level >= target - TOLERANCE || pass == MAX_PASSES || !room {
            return Ok(level);
        }
        let budget = ((target - level) * total as f64 / cost) as u64;
        if budget < block {
            return Ok(level);
        }
        let ops = plan.fill(budget);
        room = execute(writer, &ops, aged)?;
        last = Some((level, budget));
    }
    unreachable!("the last pass returns")
}

/// Setup, the first fill, then `rounds` rounds of delete + refill, each
/// reported to `progress`; `stop` (after each fill, with the level) ends
/// the rounds early when it says so.
pub fn churn(
    writer: &mut Writer,
    plan: &mut dyn Plan,
    fill: f64,
    rounds: u32,
    progress: &dyn Fn(&str),
    stop: &mut dyn FnMut(&Writer) -> Result<bool>,
) -> Result<Aged> {
    let mut aged = Aged::default();
    execute(writer, &plan.setup(), &mut aged)?;
    progress(&format!("filling to {}", pct(fill)));
    let level = fill_to(writer, plan, fill, &mut aged)?;
    progress(&format!("filled to {}", pct(level)));
    if stop(writer)? {
        return Ok(aged);
    }
    // Each round puts back what it deleted, by the plan's account: the
    // level stays where the first fill measured it, and the operations
    // do not depend on when the file system frees deleted blocks.
    let keep = plan.live_bytes();
    for round in 1..=rounds {
        let ops = plan.delete(round);
        let files = ops.iter().filter(|op| matches!(op, Op::Remove(_))).count();
        progress(&format!("round {round}/{rounds}: deleting {files} files"));
        execute(writer, &ops, &mut aged)?;
        progress(&format!("round {round}/{rounds}: filling to {}", pct(fill)));
        let freed = keep.saturating_sub(plan.live_bytes());
        if freed > 0 {
            execute(writer, &plan.fill(freed), &mut aged)?;
        }
        writer.syncfs()?;
        aged.rounds = round;
        if stop(writer)? {
            break;
        }
    }
    Ok(aged)
}

/// `0.8` as `80.0%`.
pub fn pct(level: f64) -> String {
    format!("{:.1}%", level * 100.0)
}
