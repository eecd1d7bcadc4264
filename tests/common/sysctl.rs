//! Real sysctls in tests: read, write, wait for a run to set one, and a
//! guard that puts the machine back however a test ends.

use std::time::Duration;

/// The writeback limits given two ways; setting one member zeroes the other.
pub const PAIRS: [(&str, &str); 2] =
    [("vm.dirty_bytes", "vm.dirty_ratio"), ("vm.dirty_background_bytes", "vm.dirty_background_ratio")];

/// `/proc/sys/...` for a dotted key.
pub fn path(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

/// The value now.
pub fn read(key: &str) -> String {
    std::fs::read_to_string(path(key)).unwrap().trim().to_string()
}

/// Set it, or panic.
pub fn write(key: &str, value: &str) {
    std::fs::write(path(key), value).unwrap_or_else(|e| panic!("{key}={value}: {e}"));
}

/// Run `f` holding the machine's sysctl lock shared, as a measuring run
/// does: no fslab run (another suite's, a user's preset) is changing
/// sysctls meanwhile, so what `f` reads is the machine's own. Without the
/// lock file (no root run since boot), just `f`.
pub fn quiet<T>(f: impl FnOnce() -> T) -> T {
    let Ok(lock) = std::fs::File::open("/run/fslab/sysctl.lock") else { return f() };
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockShared).expect("take the sysctl lock shared");
    let out = f();
    drop(lock);
    out
}

/// Held by a test that writes the machine's sysctls itself or counts on
/// them holding still for its length: an exclusive lock on a file of the
/// suites' own in /run, so two suites on one machine (CI beside a
/// developer's run) take turns at these tests instead of setting the same
/// knobs under each other. Take it before anything else in the test (and
/// before [`Saved::now`]); it is released when dropped.
pub fn one_suite_at_a_time() -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open("/run/fslab-tests-sysctl.lock")
        .expect("open /run/fslab-tests-sysctl.lock");
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).expect("take the suites' sysctl test lock");
    lock
}

/// The four writeback values, as found; dropping puts back those that
/// differ then (the member of each pair that was set) and a few other
/// knobs as well. Read and put back under the machine's sysctl lock
/// ([`quiet`]), so another run's setting is neither saved nor undone.
pub struct Saved(Vec<(String, String)>);

impl Saved {
    /// The four, and `others`, as they are now.
    pub fn now(others: &[&str]) -> Saved {
        let keys: Vec<&str> = PAIRS.iter().flat_map(|(a, b)| [*a, *b]).chain(others.iter().copied()).collect();
        quiet(|| Saved(keys.iter().map(|k| (k.to_string(), read(k))).collect()))
    }

    /// One saved value.
    pub fn get(&self, key: &str) -> &str {
        &self.0.iter().find(|(k, _)| k == key).unwrap().1
    }

    /// Every saved value against the machine's now, or the differences.
    pub fn differences(&self) -> Vec<String> {
        quiet(|| self.0.iter().filter(|(k, v)| read(k) != *v).map(|(k, v)| format!("{k} is {}, was {v}", read(k))).collect())
    }
}

impl Drop for Saved {
    fn drop(&mut self) {
        quiet(|| self.put_back());
    }
}

impl Saved {
    fn put_back(&self) {
        if self.0.iter().all(|(k, v)| std::fs::read_to_string(path(k)).is_ok_and(|now| now.trim() == v)) {
            return;
        }
        for (bytes, ratio) in PAIRS {
            let _ = if self.get(bytes) != "0" {
                std::fs::write(path(bytes), self.get(bytes))
            } else {
                // Writing the ratio zeroes the bytes only if the ratio changes.
                let _ = std::fs::write(path(ratio), if self.get(ratio) == "1" { "2" } else { "1" });
                std::fs::write(path(ratio), self.get(ratio))
            };
        }
        for (key, value) in self.0.iter().filter(|(k, _)| !k.starts_with("vm.dirty_")) {
            let _ = std::fs::write(path(key), value);
        }
    }
}

/// Wait until `key` reads `value` (`run` set it), or panic once the run
/// has worked 30 s (a wait for another run's lock not counted) or ended.
pub fn wait_for(key: &str, value: &str, run: &mut super::Watched) {
    run.until(Duration::from_secs(30), &format!("{key} never became {value}"), || read(key) == value);
}

/// `fslab cleanup --wait` (exit 0): cleanup leaves a dead run's sysctls
/// alone while another run holds the machine's sysctl lock (rightly), and
/// a machine running the suite may also run other fslab work, a preset
/// holding the lock shared for its whole run and the next one taking it
/// at once. `--wait` queues for it as a run does, so the wait is for the
/// runs already holding it, never starved by the ones that follow.
pub fn cleanup_when_the_lock_is_free(lab: &super::Lab) -> std::process::Output {
    let out = lab.command().args(["cleanup", "--wait"]).output().expect("run fslab cleanup --wait");
    assert_eq!(
        out.status.code(),
        Some(0),
        "fslab cleanup --wait\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
