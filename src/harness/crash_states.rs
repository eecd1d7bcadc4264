//! `--crash MODEL`: a recorded case's crash states, judged once its
//! recording has ended, and what they showed as the case's figures and
//! its record's `crash.states`.
//!
//! A state is bad when it will not mount (`unmountable`), when the file
//! system's checker finds damage (`fsck_failed`), or when the work's
//! checker finds a file empty, torn, or missing though it existed before
//! the work, or a durability violation: a file not new in a state that
//! holds the flush its sync call returned after (its `durable:NAME`
//! mark), its new contents nowhere whole (`NAME.dpkg-new` counts before
//! the rename), or not new under its own name once the state holds the
//! flush of the harness's own syncfs after the work (`work_end`). A
//! checker that judges a state whole (`exec --check`) makes it bad by its
//! own verdict (`check_failed`), and learns which names the work marked
//! durable by then.
//!
//! The design decision on kinds: every figure here is a timing. Judging
//! the same log with the same model and seed gives the same counts (the
//! states are a function of them, and each is rebuilt byte for byte), but
//! the log is not a function of the work: how many flushes it holds and
//! where writeback put each write between them follows the journal's
//! timer and when writeback ran, as `log_entries` does. A count that
//! moves with the log is compared over repeats, never as an exact value.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::crash::marks::durable_from;
pub use crate::crash::states::Model;
use crate::crash::states::{epoch_of, states};
use crate::crash::WriteLog;
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::record::{BadOutcome, BadState, Better, Case, CrashRecord, CrashStates, FigureSpec, Kind, StateOutcome};
use crate::scenario::durable::{FileState, Looked, StateAt, StateChecker};
use crate::site::{Made, StateSeen};

/// How crash states are chosen and judged (`--crash`, `--crash-seed`,
/// `--crash-max-states`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashPlan {
    /// The model.
    pub model: Model,
    /// The seed `subset` draws with.
    pub seed: u64,
    /// The most states judged per case.
    pub max_states: usize,
}

/// `--crash-seed` when none is given.
pub const DEFAULT_SEED: u64 = 31;
/// `--crash-max-states` when none is given: at about a third of a second
/// a state (measured: `bench/crash_states.sh`), a case's states take a
/// minute or two.
pub const DEFAULT_MAX_STATES: usize = 300;

const fn count(name: &'static str, heading: &'static str, about: &'static str) -> FigureSpec {
    FigureSpec::new(name, "count", Better::Lower, Kind::Timing).heading(heading).about(about)
}

const STATES: FigureSpec = FigureSpec::new("crash_states", "count", Better::Higher, Kind::Timing)
    .heading("states")
    .about("crash states judged (--crash MODEL), from the work's start to the log's end");
const BAD: FigureSpec = count("crash_bad", "bad", "crash states judged bad for any reason");
const EMPTY: FigureSpec = count("crash_empty", "empty", "crash states with a file of the work empty");
const TORN: FigureSpec = count("crash_torn", "torn", "crash states with a file of the work torn (a mix, or the wrong length)");
const MISSING: FigureSpec = count("crash_missing", "missing", "crash states missing a file that existed before the work");
const UNMOUNTABLE: FigureSpec = count("crash_unmountable", "unmountable", "crash states the kernel would not mount");
const FSCK: FigureSpec =
    count("crash_fsck_failed", "fsck failed", "crash states the file system's read-only checker found damaged, after the mount's recovery");
const VIOLATIONS: FigureSpec = count(
    "crash_durability_violations",
    "violations",
    "files not new in crash states at or after their durability point, summed over states",
);
const CHECK_FAILED: FigureSpec =
    count("crash_check_failed", "check failed", "crash states the work's own checker judged bad (exec --check: a non-zero exit)");
const FIRST_BAD: FigureSpec = FigureSpec::new("crash_first_bad_entry", "count", Better::Higher, Kind::Timing)
    .heading("first bad")
    .about("the last log entry the earliest bad crash state holds");
const STATE_MS: FigureSpec = FigureSpec::new("crash_state_ms", "ms", Better::Lower, Kind::Timing)
    .heading("ms/state")
    .about("the judging's time over its crash states: rebuild, mount, look, unmount, check (a check overlaps the next state)");

/// The most flush entries a record keeps for drawing: a few thousand
/// ticks are already more than a page's axis can tell apart.
const MAX_FLUSHES_KEPT: usize = 5000;

/// The figures, declared once.
pub const FIGURES: &[FigureSpec] = &[STATES, BAD, EMPTY, TORN, MISSING, UNMOUNTABLE, FSCK, CHECK_FAILED, VIOLATIONS, FIRST_BAD, STATE_MS];

/// One state's verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Verdict {
    /// What was wrong (`empty`, `torn`, `missing`, `unmountable`,
    /// `fsck_failed`, `check_failed`, `unreadable`, `durability`).
    pub classes: BTreeSet<&'static str>,
    /// Files not new past their durability point.
    pub violations: u64,
    /// What was seen, for a bad state.
    pub detail: String,
}

/// Where each file's new contents must be durable, as entry counts a
/// state must hold (`durable_from` of its mark), and where everything
/// must be (the `work_end` mark's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Points {
    /// Per name the work marked, its first mark's.
    pub files: BTreeMap<String, usize>,
    /// The harness's syncfs after the work.
    pub end: Option<usize>,
}

/// Judge one state, holding the entries `0..prefix` whole, from what the
/// host saw and what the work's checker found (`None` without one).
pub(super) fn verdict(seen: &StateSeen, looked: Option<&std::result::Result<Looked, String>>, prefix: usize, points: &Points) -> Verdict {
    let mut v = Verdict::default();
    let mut said = Vec::new();
    if let Some(why) = &seen.unmountable {
        v.classes.insert("unmountable");
        said.push(format!("unmountable: {why}"));
    }
    if let Some(why) = &seen.fsck_failed {
        v.classes.insert("fsck_failed");
        said.push(why.clone());
    }
    match looked {
        Some(Ok(Looked::Verdict(Some(words)))) => {
            v.classes.insert("check_failed");
            said.push(format!("the checker {words}"));
        }
        Some(Ok(Looked::Verdict(None))) | None => {}
        Some(Err(why)) => {
            v.classes.insert("unreadable");
            said.push(format!("the checker could not read the work folder: {why}"));
        }
        Some(Ok(Looked::Files(files))) => {
            let mut odd = Vec::new();
            for f in files {
                let class = match f.state {
                    FileState::Empty => Some("empty"),
                    FileState::Torn => Some("torn"),
                    FileState::Missing if f.existed => Some("missing"),
                    _ => None,
                };
                let past_end = points.end.is_some_and(|end| prefix >= end);
                let past_own = points.files.get(&f.name).is_some_and(|&d| prefix >= d);
                let violated = (past_end && f.state != FileState::New) || (past_own && !f.new_somewhere);
                if violated {
                    v.violations += 1;
                    v.classes.insert("durability");
                }
                if let Some(class) = class {
                    v.classes.insert(class);
                }
                if class.is_some() || violated {
                    let mark = if violated { " (durable)" } else { "" };
                    odd.push(format!("{} {}{mark}", f.name, f.state.as_str()));
                }
            }
            if !odd.is_empty() {
                said.push(odd.join(", "));
            }
        }
    }
    v.detail = said.join("; ");
    v
}

/// The durability points of `record`'s marks in `log`, and the entry the
/// states start from (the `work_start` mark's: the work's setup was
/// synced there).
pub(super) fn points(log: &WriteLog, record: &CrashRecord) -> (usize, Points) {
    let mut points = Points::default();
    let mut from = 0;
    for mark in &record.marks {
        let at = durable_from(log, mark.entries);
        match mark.what.as_str() {
            "work_start" => from = at,
            "work_end" => points.end = Some(at),
            other => {
                if let Some(name) = other.strip_prefix(super::recording::DURABLE_PREFIX) {
                    points.files.entry(name.to_string()).or_insert(at);
                }
            }
        }
    }
    (from, points)
}

impl Points {
    /// The names marked durable whose flush a state holding `0..prefix`
    /// holds, in the order of their points (then by name).
    pub fn durable_at(&self, prefix: usize) -> Vec<String> {
        let mut held: Vec<(usize, &String)> = self.files.iter().filter(|(_, at)| **at <= prefix).map(|(n, at)| (*at, n)).collect();
        held.sort();
        held.into_iter().map(|(_, n)| n.clone()).collect()
    }
}

/// Judge the crash states of the ended recording `record` of `target`
/// under `plan`: the work's checker (if any) looks in the folder
/// `work_rel` of each mounted state, any process it starts in `ledger`.
/// Puts the figures into `case` and the summary into `record.states`. A
/// checker that judges states whole and cannot run ends the judging with
/// its error.
pub(super) fn judge(
    ledger: &Ledger,
    target: &mut dyn Made,
    case: &mut Case,
    record: &mut CrashRecord,
    plan: &CrashPlan,
    checker: Option<&dyn StateChecker>,
    work_rel: &Path,
) -> Result<()> {
    let log = target.recorded_log()?;
    let (from, points) = points(&log, record);
    let chosen = states(log.entries(), from, plan.model, plan.seed, plan.max_states);
    let mut looked: Vec<Option<std::result::Result<Looked, String>>> = vec![None; chosen.states.len()];
    let judging = std::time::Instant::now();
    let seen = target.judge_states(&log, &chosen.states, &mut |i, root| {
        if let Some(checker) = checker {
            let durable = points.durable_at(chosen.states[i].prefix);
            let at = StateAt { ledger, durable: &durable };
            looked[i] = Some(match checker.check(&root.join(work_rel), &at) {
                Err(e) if checker.whole() => return Err(e),
                other => other.map_err(|e| e.to_string()),
            });
        }
        Ok(())
    })?;
    let judging_ms = judging.elapsed().as_secs_f64() * 1e3;
    if seen.len() != chosen.states.len() {
        return Err(Error::failed(format!("{} crash states judged of {}", seen.len(), chosen.states.len())));
    }
    let mut by_class: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut bad, mut violations) = (0u64, 0u64);
    let mut first_bad: Option<BadState> = None;
    let (mut bad_outcomes, mut bad_outcomes_left_out) = (Vec::new(), 0u64);
    let mut outcomes = Vec::with_capacity(chosen.states.len());
    for ((state, seen), looked) in chosen.states.iter().zip(&seen).zip(&looked) {
        let v = verdict(seen, looked.as_ref(), state.prefix, &points);
        violations += v.violations;
        for class in &v.classes {
            *by_class.entry(class).or_default() += 1;
        }
        let entry = state.last_entry().unwrap_or(0) as u64;
        outcomes.push(StateOutcome {
            entry,
            prefix: state.prefix as u64,
            extra: state.extra.len() as u64,
            classes: v.classes.iter().map(|c| c.to_string()).collect(),
            violations: v.violations,
        });
        if v.classes.is_empty() {
            continue;
        }
        bad += 1;
        let classes: Vec<String> = v.classes.iter().map(|c| c.to_string()).collect();
        if !BadOutcome::count(&mut bad_outcomes, entry, &classes, &v.detail) {
            bad_outcomes_left_out += 1;
        }
        if first_bad.as_ref().is_none_or(|b| entry < b.entry) {
            first_bad = Some(BadState {
                entry,
                epoch: epoch_of(log.entries(), state.prefix) as u64,
                prefix: state.prefix as u64,
                extra: state.extra.len() as u64,
                classes,
                detail: v.detail,
            });
        }
    }
    let judged = chosen.states.len();
    let f = &mut case.figures;
    f.put(&STATES, Some(judged as f64), "");
    f.put(&BAD, Some(bad as f64), "");
    // Which counts the checker can give: files' classes, or its verdicts.
    let (files, whole) = match checker {
        Some(c) if c.whole() => (Err("the work's checker judges each state whole (by its exit status), naming no files"), Ok(())),
        Some(_) => (Ok(()), Err("the work's checker judges files, not whole states")),
        None => (Err("the work has no checker"), Err("the work has no checker")),
    };
    let kinds = [
        (&EMPTY, "empty", files),
        (&TORN, "torn", files),
        (&MISSING, "missing", files),
        (&UNMOUNTABLE, "unmountable", Ok(())),
        (&FSCK, "fsck_failed", Ok(())),
        (&CHECK_FAILED, "check_failed", whole),
    ];
    for (spec, class, given) in kinds {
        let value = given.map(|()| by_class.get(class).copied().unwrap_or(0) as f64);
        f.put(spec, value.ok(), value.err().unwrap_or(""));
    }
    f.put(&VIOLATIONS, files.ok().map(|()| violations as f64), files.err().unwrap_or(""));
    f.put(&FIRST_BAD, first_bad.as_ref().map(|b| b.entry as f64), "no crash state was bad");
    f.put(&STATE_MS, (judged > 0).then(|| judging_ms / judged as f64), "no crash state to judge");
    record.states = Some(CrashStates {
        model: plan.model.to_string(),
        seed: plan.seed,
        from_entry: from as u64,
        total: chosen.total as u64,
        judged: judged as u64,
        cap: plan.max_states as u64,
        checker: match checker {
            Some(checker) => checker.about(),
            None => format!("none for {}: judged by mount and the file system's checker", case.scenario),
        },
        first_bad,
        bad_outcomes,
        bad_outcomes_left_out,
        marks_before_flush: marks_before_flush(from, &points),
        outcomes,
        flush_entries: log.entries().iter().enumerate().skip(from).filter(|(_, e)| e.is_flush()).map(|(i, _)| i as u64).take(MAX_FLUSHES_KEPT).collect(),
        kernel: rustix::system::uname().release().to_string_lossy().into_owned(),
    });
    Ok(())
}

/// How many names were marked durable when the log held no flush since
/// the work began at entry `from` (a mark's point is where the last flush
/// before it ends).
fn marks_before_flush(from: usize, points: &Points) -> u64 {
    points.files.values().filter(|&&at| at <= from).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::durable::FileJudged;

    fn file(name: &str, state: FileState, new_somewhere: bool) -> FileJudged {
        FileJudged { name: name.into(), state, existed: name.starts_with("exist_"), new_somewhere }
    }

    fn clean() -> StateSeen {
        StateSeen { unmountable: None, fsck_failed: None }
    }

    fn marked() -> Points {
        Points { files: [("exist_1".to_string(), 10), ("new_1".to_string(), 20)].into(), end: Some(30) }
    }

    fn judged(files: Vec<FileJudged>, prefix: usize) -> Verdict {
        verdict(&clean(), Some(&Ok(Looked::Files(files))), prefix, &marked())
    }

    #[test]
    fn empty_torn_and_a_lost_old_file_are_bad_and_a_new_one_not_yet_there_is_not() {
        let v = judged(vec![file("exist_1", FileState::Old, false), file("new_1", FileState::Missing, false)], 5);
        assert!(v.classes.is_empty(), "{v:?}");
        let v = judged(vec![file("exist_1", FileState::Missing, false), file("new_1", FileState::Empty, false)], 5);
        assert_eq!(v.classes.iter().copied().collect::<Vec<_>>(), ["empty", "missing"]);
        assert_eq!(v.detail, "exist_1 missing, new_1 empty");
        let v = judged(vec![file("exist_1", FileState::Torn, false)], 5);
        assert_eq!(v.classes.iter().copied().collect::<Vec<_>>(), ["torn"]);
    }

    #[test]
    fn a_file_not_new_past_its_own_point_is_a_violation_unless_its_temporary_name_holds_it() {
        // Past exist_1's point (10), before new_1's (20).
        let v = judged(vec![file("exist_1", FileState::Old, false), file("new_1", FileState::Missing, false)], 10);
        assert_eq!((v.violations, v.detail.as_str()), (1, "exist_1 old (durable)"));
        let v = judged(vec![file("exist_1", FileState::Old, true), file("new_1", FileState::Missing, false)], 10);
        assert_eq!(v.violations, 0, "exist_1.dpkg-new holds it: {v:?}");
        // Past the work's end, only the name itself counts.
        let v = judged(vec![file("exist_1", FileState::Old, true), file("new_1", FileState::New, true)], 30);
        assert_eq!(v.violations, 1);
        assert!(v.classes.contains("durability"));
    }

    #[test]
    fn a_state_that_will_not_mount_or_check_is_bad_without_a_checker() {
        let seen = StateSeen { unmountable: Some("mount: bad superblock".into()), fsck_failed: None };
        let v = verdict(&seen, None, 5, &marked());
        assert_eq!(v.classes.iter().copied().collect::<Vec<_>>(), ["unmountable"]);
        let seen = StateSeen { unmountable: None, fsck_failed: Some("e2fsck -f -n ended with exit 4".into()) };
        assert_eq!(verdict(&seen, None, 5, &marked()).detail, "e2fsck -f -n ended with exit 4");
        let v = verdict(&clean(), Some(&Err("EIO".into())), 5, &marked());
        assert_eq!(v.classes.iter().copied().collect::<Vec<_>>(), ["unreadable"]);
    }

    #[test]
    fn marks_become_points_at_their_flushes() {
        let (_dir, log) = crate::crash::log::tests::log_of(crate::crash::log::tests::QEMU_LOG);
        let log = log.unwrap();
        let mark = |what: &str, entries| crate::record::CrashMark { what: what.into(), entries, at_s: 0.0 };
        let record = CrashRecord {
            marks: vec![mark("work_start", 2), mark("durable:a", 5), mark("work_end", 7), mark("other", 7)],
            ..CrashRecord::default()
        };
        let (from, p) = points(&log, &record);
        assert_eq!(from, 2);
        assert_eq!(p.files, [("a".to_string(), 2)].into());
        assert_eq!(p.end, Some(7));
    }

    #[test]
    fn a_name_is_durable_from_its_first_mark_and_a_checker_verdict_judges_whole() {
        let p = Points { files: [("b".to_string(), 4), ("a".to_string(), 9), ("c".to_string(), 4)].into(), end: Some(30) };
        assert_eq!(p.durable_at(3), Vec::<String>::new());
        assert_eq!(p.durable_at(4), ["b", "c"]);
        assert_eq!(p.durable_at(9), ["b", "c", "a"]);
        let v = verdict(&clean(), Some(&Ok(Looked::Verdict(Some("exited with status 1: db corrupt".into())))), 5, &marked());
        assert_eq!(v.classes.iter().copied().collect::<Vec<_>>(), ["check_failed"]);
        assert_eq!(v.detail, "the checker exited with status 1: db corrupt");
        assert!(verdict(&clean(), Some(&Ok(Looked::Verdict(None))), 40, &marked()).classes.is_empty(), "past work_end too");
    }
}
