//! A recorded case (`--crash-record`): the marks the harness takes around
//! the work, and what the write log holds once the recording ends, as the
//! case's figures and its `crash` record.
//!
//! The figures count what the device was sent from the first mount to
//! the recorder's stop (the work's window lies between the `work_start`
//! and `work_end` marks). They are timings: how many writes and flushes a
//! file system issues follows its journal's timer and when writeback ran,
//! as `journal_commits` and `flushes` do.

use crate::record::{Better, Case, CrashRecord, FigureSpec, Kind, Status};
use crate::site::Made;

const ENTRIES: FigureSpec = FigureSpec::new("log_entries", "count", Better::Lower, Kind::Timing)
    .heading("log entries")
    .about("entries of the recorded write log: every write, discard and flush the device completed, mount to stop");
const FLUSHES: FigureSpec = FigureSpec::new("log_flushes", "count", Better::Lower, Kind::Timing)
    .heading("log flushes")
    .about("flush entries of the recorded write log (a FUA write is logged as the write and a flush)");
const BYTES: FigureSpec = FigureSpec::new("log_bytes", "bytes", Better::Lower, Kind::Timing)
    .heading("log MiB")
    .about("length of the recorded write log: the writes' data and a 512-byte header per entry");

/// The figures, declared once.
pub const FIGURES: &[FigureSpec] = &[ENTRIES, FLUSHES, BYTES];

/// Mark that `what` has just returned, for a recorded target; nothing for
/// the rest.
pub(super) fn mark(target: &dyn Made, what: &str) -> crate::error::Result<()> {
    target.marker().map_or(Ok(()), |marker| mark_on(&marker, what))
}

/// Mark that `what` has just returned on `marker`.
fn mark_on(marker: &crate::crash::Marker, what: &str) -> crate::error::Result<()> {
    marker.mark(what).map(drop).map_err(|e| {
        crate::error::Error::failed(format!("reading the write log's count for the mark {what}: {e}"))
    })
}

/// What the work marks as durable is marked `durable:NAME`.
pub const DURABLE_PREFIX: &str = "durable:";

/// Hand a recorded target's marker to the work, for its durability
/// points (`durable:NAME`); nothing for the rest.
pub(super) fn hand_marker(target: &dyn Made, work: &mut dyn crate::scenario::Work) {
    let Some(marker) = target.marker() else { return };
    work.mark_durable_with(std::sync::Arc::new(move |what: &str| {
        let what = format!("{DURABLE_PREFIX}{what}");
        marker.mark_durable(&what).map_err(|e| {
            crate::error::Error::failed(format!("reading the write log's count for the mark {what}: {e}"))
        })
    }));
}

/// End a recorded target's recording, whatever the case's outcome so far,
/// and put its figures into `case`: the record, still held for
/// [`finish`] (its crash states may be judged in between). A log that
/// reached its cap fails the case, first of its reasons (the errors the
/// refused writes caused come after it), saying the size needed; its
/// recording is given back and its record put into the case at once.
pub(super) fn end(target: &mut dyn Made, case: &mut Case) -> Option<CrashRecord> {
    let record = match target.end_recording() {
        Ok(Some(record)) => record,
        Ok(None) => return None,
        Err(e) => {
            super::measure::fail(case, format!("ending the recording: {e}"));
            return None;
        }
    };
    if let Some(needed) = record.needed_bytes {
        fail_at_cap(case, record.cap_bytes, needed);
        case.crash = Some(record);
        return None;
    }
    let figures = &mut case.figures;
    figures.put(&ENTRIES, Some(record.entries as f64), "");
    figures.put(&FLUSHES, Some(record.flushes as f64), "");
    figures.put(&BYTES, Some(record.log_bytes as f64), "");
    Some(record)
}

/// Fail `case` for a write log that reached its cap of `cap` bytes when
/// at least `needed` were wanted, first of its reasons (the errors the
/// refused writes caused come after it), saying the cap to give.
pub(super) fn fail_at_cap(case: &mut Case, cap: u64, needed: u64) {
    let others = case.error.take();
    super::measure::fail(
        case,
        format!(
            "the write log reached its cap of {} (--crash-log-cap): the device was sent at least {} to log, so give \
             --crash-log-cap {} or more; the recording was not kept",
            crate::units::bytes_short(cap),
            crate::units::bytes_short(needed),
            suggested_cap(needed)
        ),
    );
    if let Some(others) = others {
        super::measure::fail(case, others);
    }
}

/// Keep an ended recording (for a case that is ok and was not
/// interrupted, when the run keeps recordings) or give it back, and put
/// its record into `case`.
pub(super) fn finish(target: &mut dyn Made, case: &mut Case, mut record: CrashRecord) {
    let keep = case.status == Status::Ok && crate::interrupt::pending().is_none();
    if let Err(e) = target.finish_recording(&mut record, keep) {
        super::measure::fail(case, format!("ending the recording: {e}"));
    }
    case.crash = Some(record);
}

/// A cap to give for a log that needed at least `needed` bytes: a quarter
/// more, in whole GiB.
fn suggested_cap(needed: u64) -> String {
    let gib = (needed + needed / 4).div_ceil(1 << 30);
    format!("{gib}G")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cap_suggested_leaves_a_quarter_more_in_whole_gib() {
        assert_eq!(super::suggested_cap(1 << 30), "2G");
        assert_eq!(super::suggested_cap((4 << 30) + 1), "6G");
        assert_eq!(super::suggested_cap(100 << 20), "1G");
    }
}
