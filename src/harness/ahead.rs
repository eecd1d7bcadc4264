//! Aged images made ahead, on every core: before a run's first case, the
//! aged or filled images its cases start from and the cache lacks are
//! made at once, as many at a time as the machine has cores, instead of
//! one by one as each first case reaches its own.
//!
//! The design decision: aging is one thread of file operations on one
//! file system (and the copy and hash into the cache one more pass), so
//! two images on two cores take about the time of one; images of
//! different file systems share nothing but the scratch folder's disk. An
//! image is made exactly as a case would make it (`start::make_entry`,
//! under the cache's per-key lock, so a run elsewhere waits or helps as
//! it would), and the first case to start from it records it as made by
//! this run, with its aging time. One that cannot be made is left for its
//! case to try again and fail with the reason, as without this.

use std::sync::Mutex;
use std::time::Instant;

use super::start::{StartPlan, made_of, make_entry};
use super::{Condition, Lab};
use crate::age_cache::{self, CacheEntry, Provenance};
use crate::scenario::Work;
use crate::site::{TargetOptions, TargetSpec};

/// One image to make: its key, and what makes it.
struct Wanted {
    key: String,
    spec: TargetSpec,
    options: TargetOptions,
    start: StartPlan,
}

/// A case of the run, as far as its start goes.
pub struct CaseStart<'a> {
    /// Its target.
    pub spec: &'a TargetSpec,
    /// Its condition.
    pub condition: &'a Condition,
    /// Its work (the image's size follows what it writes).
    pub work: &'a dyn Work,
    /// Its repeat (an aged start of several images picks one by it).
    pub repeat: u32,
}

impl Lab {
    /// Make the images `cases` start from that neither this run nor the
    /// cache holds yet, up to the machine's cores at a time, when there
    /// are two or more (one is made by its first case as before). `say`
    /// is told what is made and what it took. Never fails: an image that
    /// cannot be made here is left to its case.
    pub fn age_ahead(&self, cases: &[CaseStart], say: &dyn Fn(&str)) {
        let wanted = self.wanted(cases);
        if wanted.len() < 2 {
            return;
        }
        let Ok(cache) = self.image_cache() else { return };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(wanted.len());
        say(&format!("aging {} images for the cache before the first case, {cores} at a time", wanted.len()));
        let started = Instant::now();
        let queue = Mutex::new(wanted);
        let made: Mutex<Vec<(String, CacheEntry, Provenance, f64)>> = Mutex::new(Vec::new());
        let failed: Mutex<Vec<String>> = Mutex::new(Vec::new());
        // What the threads share: the ledger, the run's id and the cache.
        let (ledger, run_id) = (self.ledger(), self.id.as_str());
        std::thread::scope(|scope| {
            for worker in 1..=cores {
                let (queue, made, failed) = (&queue, &made, &failed);
                // Each worker's folders are its own: two images of one file
                // system would otherwise want the same run folder name.
                let run_id = format!("{run_id}-age{worker}");
                scope.spawn(move || {
                    loop {
                        let Some(job) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop() else { return };
                        if crate::interrupt::pending().is_some() {
                            return;
                        }
                        let short: String = job.key.chars().take(12).collect();
                        let what = format!("the aged image {short} of {}, which another run is making", job.spec.label());
                        let began = Instant::now();
                        let entry = cache.entry_for(&job.key, &what, || {
                            let made_of = made_of(&job.spec, &job.options, &job.start);
                            make_entry(ledger, &run_id, &job.spec, &job.options, &job.start, cache, made_of)
                        });
                        match entry {
                            Ok((entry, how)) => {
                                let took = if how == Provenance::Made { began.elapsed().as_secs_f64() } else { 0.0 };
                                made.lock().unwrap_or_else(|p| p.into_inner()).push((job.key, entry, how, took));
                            }
                            Err(e) => failed.lock().unwrap_or_else(|p| p.into_inner()).push(format!("{}: {e}", job.spec.label())),
                        }
                    }
                });
            }
        });
        let made = made.into_inner().unwrap_or_else(|p| p.into_inner());
        say(&format!("aged {} images in {:.1} s", made.len(), started.elapsed().as_secs_f64()));
        for why in failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            say(&format!("not aged ahead, so its first case tries again: {why}"));
        }
        let mut bases = self.bases.borrow_mut();
        let mut ahead = self.made_ahead.borrow_mut();
        for (key, entry, how, took) in made {
            bases.insert(key.clone(), std::sync::Arc::new(entry));
            ahead.insert(key, (how, took));
        }
    }

    /// The images `cases` start from that this run has not made and the
    /// cache does not hold, each once, in the order first needed.
    fn wanted(&self, cases: &[CaseStart]) -> Vec<Wanted> {
        let mut seen = std::collections::HashSet::new();
        let mut wanted = Vec::new();
        for case in cases {
            if super::guest::guest_kernel(case.condition).is_some() || !case.spec.needs_scratch() {
                continue;
            }
            let Ok(Some(start)) = StartPlan::for_condition(self.plan.start.as_ref(), case.condition) else { continue };
            let options = super::measure::options_for(&self.plan, case.work, Some(&start));
            let Ok((_, start)) = start.for_repeat(case.repeat) else { continue };
            let key = age_cache::key_of(&made_of(case.spec, &options, &start));
            if !seen.insert(key.clone()) || self.bases.borrow().contains_key(&key) {
                continue;
            }
            let cached = self.image_cache().ok().and_then(|cache| cache.lookup(&key).ok().flatten()).is_some();
            if !cached {
                wanted.push(Wanted { key, spec: case.spec.clone(), options, start });
            }
        }
        // Popped from the end: the first needed is made first.
        wanted.reverse();
        wanted
    }
}
