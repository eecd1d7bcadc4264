//! What a recorded case's device kept (`--crash-record`), for the case's
//! record: where the recording is, what its write log holds, and the
//! marks taken while it was written.

use serde::{Deserialize, Serialize};

/// The most names a work marks durable that are kept (a mark each, the
/// first of its name): beyond them, new names are counted, not kept, so
/// what a command writes to `FSLAB_CRASH_MARK` cannot grow the record,
/// the store, an export or a report without bound (as flush ticks are
/// capped).
pub const MAX_DURABLE_NAMES: usize = 5000;

/// One mark: what had just returned, and how many entries the write log
/// counted then (its super block's count, which the driver rewrites at
/// every flush it logs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashMark {
    /// What returned (`work_start`: the syncfs after the work was
    /// prepared; `work_end`: the syncfs after the work).
    pub what: String,
    /// The entries the log counted just after it returned.
    pub entries: u64,
    /// Seconds since the recording started.
    pub at_s: f64,
}

/// A case's recording: the image from before the work and the write log
/// that rebuild its device at any point, and what the log holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrashRecord {
    /// The folder holding `before.img`, `writes.log` and
    /// `recording.json`, when kept (`--crash-record`); else where it was.
    pub folder: String,
    /// Whether the folder was kept after the case.
    pub kept: bool,
    /// The recorder (`qemu-storage-daemon version 7.2.22 ...`).
    pub recorder: String,
    /// The cap on the log's size, in bytes.
    pub cap_bytes: u64,
    /// Set when the log reached its cap: at least this many bytes of log
    /// were needed (the case is failed, and the run exits 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed_bytes: Option<u64>,
    /// Entries in the log.
    pub entries: u64,
    /// Flush entries.
    pub flushes: u64,
    /// Discard entries.
    pub discards: u64,
    /// Bytes of data the logged writes carried.
    pub write_bytes: u64,
    /// The log's length, from its start to the end of its last entry.
    pub log_bytes: u64,
    /// The content hash of the image before the work (SHA-256 over its
    /// length and every 1 MiB block that is not all zeros, with its
    /// index: equal images, and only they, share it).
    pub before_sha256: String,
    /// The content hash of the image when the recorder stopped, after the
    /// unmount: what replaying the whole log onto the image before gives.
    pub end_sha256: String,
    /// The marks, in the order taken (a name marked durable once, its
    /// first mark; at most [`MAX_DURABLE_NAMES`] names).
    pub marks: Vec<CrashMark>,
    /// Durable marks of new names past the names kept, counted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub marks_left_out: u64,
    /// The crash states judged (`--crash MODEL`), when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<CrashStates>,
    /// Set when the states could not be judged for a reason the run
    /// exits with (the case is failed too): 2 when the work's checker
    /// could not start (`exec --check`), 3 when the machine cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_exit: Option<u8>,
}

/// The crash states of a recording, judged (`--crash MODEL`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrashStates {
    /// The model (`flush`, `prefix`, `subset:K`).
    pub model: String,
    /// The seed `subset` drew with (`--crash-seed`).
    pub seed: u64,
    /// The log entry the states start from: the work's start (everything
    /// before it was synced).
    pub from_entry: u64,
    /// States the model gave.
    pub total: u64,
    /// States judged: all of them, or the cap's share spread evenly.
    pub judged: u64,
    /// The cap on states judged (`--crash-max-states`).
    pub cap: u64,
    /// The work's checker, or why there is none (then a state is judged by
    /// mount and the file system's checker alone).
    pub checker: String,
    /// The first bad state (fewest log entries), when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_bad: Option<BadState>,
    /// Every distinct bad outcome (the same detail and classes are one), in
    /// the order first met, each with the states that showed it: at most
    /// [`MAX_BAD_OUTCOMES`]; empty in records made before they were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bad_outcomes: Vec<BadOutcome>,
    /// Bad states whose outcome was none of those kept (past the cap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_outcomes_left_out: u64,
    /// Names marked durable before any flush since the work began: the
    /// device had promised nothing of the work when the program said it
    /// was safe, so no crash state can hold them durable yet.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub marks_before_flush: u64,
    /// Every state judged and what it showed, in log order; empty in
    /// records made before states were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<StateOutcome>,
    /// The log's flush entries from `from_entry` on: where the device
    /// promised what came before, drawn beside the states.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flush_entries: Vec<u64>,
    /// The release of the kernel that mounted and checked the states:
    /// the one the work ran on, a guest's too. Empty in records made
    /// before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kernel: String,
}

/// One crash state judged: where it lies on the log, and what was wrong.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StateOutcome {
    /// The last log entry it holds.
    pub entry: u64,
    /// The entries it holds whole (0..prefix).
    pub prefix: u64,
    /// Entries of its epoch it holds beyond them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extra: u64,
    /// What was wrong (as [`BadState::classes`]); empty for a good state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
    /// Files not new past their durability point.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub violations: u64,
}

impl StateOutcome {
    /// `good`, `durability` when a file broke its durability point, else
    /// the first class: the colour a state is drawn in.
    pub fn outcome(&self) -> &str {
        if self.violations > 0 {
            "durability"
        } else {
            self.classes.iter().map(String::as_str).find(|c| *c != "durability").unwrap_or("good")
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether a figure is a safety count that must stay 0: a `crash_*` count
/// where fewer is better (states bad, by class, durability violations).
/// One that was 0 on every base case and is not on the new side is a
/// regression whatever the statistics say (`compare`).
pub fn must_be_zero(name: &str, unit: &str, better: crate::record::Better) -> bool {
    name.starts_with("crash_") && unit == "count" && better == crate::record::Better::Lower
}

/// The most distinct bad outcomes a case's states keep.
pub const MAX_BAD_OUTCOMES: usize = 16;

/// One distinct bad outcome and the states that showed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BadOutcome {
    /// What was seen (as [`BadState::detail`]).
    pub detail: String,
    /// What was wrong (as [`BadState::classes`]), in the first state.
    pub classes: Vec<String>,
    /// The states that showed it.
    pub states: u64,
    /// The first of them: its last log entry.
    pub first_entry: u64,
}

impl BadOutcome {
    /// Count the bad state at `entry` with `classes` and `detail` into
    /// `outcomes` (a new one while fewer than [`MAX_BAD_OUTCOMES`] are
    /// kept); false when it fitted none kept and there was no room.
    pub fn count(outcomes: &mut Vec<BadOutcome>, entry: u64, classes: &[String], detail: &str) -> bool {
        if let Some(o) = outcomes.iter_mut().find(|o| o.detail == detail && o.classes == classes) {
            o.states += 1;
            o.first_entry = o.first_entry.min(entry);
            return true;
        }
        if outcomes.len() >= MAX_BAD_OUTCOMES {
            return false;
        }
        outcomes.push(BadOutcome { detail: detail.to_string(), classes: classes.to_vec(), states: 1, first_entry: entry });
        true
    }
}

/// A crash state judged bad.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BadState {
    /// The last log entry it holds.
    pub entry: u64,
    /// Flushes before it: the epoch it is in.
    pub epoch: u64,
    /// The entries it holds whole (0..prefix).
    pub prefix: u64,
    /// Entries of its epoch it holds beyond them.
    pub extra: u64,
    /// What was wrong: `empty`, `torn`, `missing`, `unmountable`,
    /// `fsck_failed`, `durability`.
    pub classes: Vec<String>,
    /// What was seen: the files and their states, or the mount's or the
    /// checker's words.
    pub detail: String,
}

