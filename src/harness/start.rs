//! Where a case starts when not on a fresh file system (`--age`,
//! `--fill`): an image aged and filled once per key, kept in the image
//! cache, and copied for every case, so each case and repeat starts from
//! the same blocks and aging is paid once.
//!
//! The key is what the image is made of: the target's label and kind,
//! its mkfs arguments and mount options, the image size, the aging
//! profile's identity (its parameters, and the content of a profile file
//! or the commits of a repository), the fill, and the aging code's
//! version. The kernel is not in it: a cache shared between kernels gives
//! them the same starting blocks, which is what comparing them needs.
//!
//! The starting state is measured on each case's copy before the work,
//! as `start_*` figures: fill, free space and its fragmentation, and the
//! files aging left with their layout score. The work runs in a folder of
//! its own (`work`) beside aging's, so the work's layout figures count
//! only what it wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{Condition, Lab, Phase};
use crate::age::{self, AgeSpec};
use crate::error::{Error, Result};
use crate::layout::freespace;
use crate::layout::tree::{self, TreeOptions};
use crate::record::{Better, Case, FigureSpec, FreeBucketCount, Kind, StartRecord};
use crate::age_cache::{self, CacheEntry, EntryMeta, ImageCache, Provenance};
use crate::site::{Made, TargetOptions, TargetSpec};

/// How every scratch target starts (`--age`, `--fill`).
#[derive(Debug, Clone)]
pub struct StartPlan {
    /// The aging profile, when aged.
    pub age: Option<AgeSpec>,
    /// The profile's identity for the key ([`AgeSpec::resolve`]).
    pub age_identity: Option<String>,
    /// Fill to this fraction after aging.
    pub fill: Option<f64>,
    /// The cache folder (`--age-cache`); `None`: inside the scratch folder.
    pub cache_dir: Option<PathBuf>,
    /// Independent images of an aged start (`--age-images`, at least 1):
    /// repeat R starts from image ((R-1) mod N)+1, aged from the profile's
    /// seed moved on by its index.
    pub images: u32,
}

impl StartPlan {
    /// The fullest the target is before the work: the fill asked, or the
    /// level aging leaves it at, whichever is higher.
    pub fn level(&self) -> f64 {
        let aged = self.age.as_ref().and_then(AgeSpec::fill_fraction).unwrap_or(0.0);
        self.fill.unwrap_or(0.0).max(aged)
    }

    /// The start of a case under `condition`: its age and fill, when it
    /// has them, replace the run's (`run`); `None` for a fresh target.
    pub fn for_condition(run: Option<&StartPlan>, condition: &Condition) -> Result<Option<StartPlan>> {
        let fresh = |start: &StartPlan| start.age.is_none() && start.fill.is_none();
        if condition.age.is_none() && condition.fill.is_none() {
            return Ok(run.filter(|r| !fresh(r)).cloned());
        }
        let mut start = run.cloned().unwrap_or(StartPlan { age: None, age_identity: None, fill: None, cache_dir: None, images: 1 });
        if let Some(age) = &condition.age {
            let spec: AgeSpec = age.parse().map_err(|e: String| Error::usage(format!("age {age}: {e}")))?;
            StartPlan::check_images(&spec, start.images)?;
            start.age_identity = Some(spec.resolve()?);
            start.age = Some(spec);
        }
        if let Some(fill) = &condition.fill {
            start.fill = Some(crate::units::parse_fill(fill).map_err(|e| Error::usage(format!("fill {fill}: {e}")))?);
        }
        Ok(Some(start))
    }

    /// Refuse (exit 2) more than one image of a profile no seed varies.
    pub fn check_images(age: &AgeSpec, images: u32) -> Result<()> {
        if images > 1 && age.with_seed_offset(1).is_none() {
            return Err(Error::usage(format!(
                "--age-images {images}: {} ages the same image every time (no seed decides it); leave --age-images out",
                age.canonical()
            )));
        }
        Ok(())
    }

    /// The start of repeat `repeat` (1-based): its image's index (0-based)
    /// and the plan aged from that image's seed.
    pub(super) fn for_repeat(&self, repeat: u32) -> Result<(u32, StartPlan)> {
        let image = repeat.saturating_sub(1) % self.images.max(1);
        let mut start = self.clone();
        if image > 0 {
            if let Some(age) = self.age.as_ref().and_then(|a| a.with_seed_offset(u64::from(image))) {
                start.age_identity = Some(age.resolve()?);
                start.age = Some(age);
            }
        }
        Ok((image, start))
    }

}

/// The key of the aged or filled image a case of `work` on `spec` under
/// `condition`, repeat `repeat`, starts from in `plan` (the key its run
/// looks the image up by, [`age_cache::key_of`]); `None` when it starts
/// fresh. Read before anything is made: cases that share a key share an
/// image, so a machine that runs them all ages it once.
pub fn start_key(plan: &super::Plan, spec: &TargetSpec, condition: &Condition, work: &dyn crate::scenario::Work, repeat: u32) -> Result<Option<String>> {
    let Some(start) = StartPlan::for_condition(plan.start.as_ref(), condition)? else { return Ok(None) };
    if !spec.needs_scratch() {
        return Ok(None);
    }
    let options = super::measure::options_for(plan, work, Some(&start));
    let (_, start) = start.for_repeat(repeat)?;
    Ok(Some(age_cache::key_of(&made_of(spec, &options, &start))))
}

/// The starting-state figures, declared once.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec::new("start_fill", "ratio", Better::Lower, Kind::Exact)
        .heading("fill")
        .about("share of the file system's blocks in use before the work (statvfs)"),
    FigureSpec::new("start_free_bytes", "bytes", Better::Higher, Kind::Exact)
        .heading("free MiB")
        .about("free space before the work, the sum of the free extents"),
    FigureSpec::new("start_free_extents", "count", Better::Lower, Kind::Exact)
        .heading("free ext")
        .about("free extents before the work (adjacent free records merged)"),
    FigureSpec::new("start_free_largest_bytes", "bytes", Better::Higher, Kind::Exact)
        .heading("largest MiB")
        .about("the largest free extent before the work"),
    FigureSpec::new("start_fragmented_share", "ratio", Better::Lower, Kind::Exact)
        .heading("free <1MiB")
        .about("share of free space before the work in free extents shorter than 1 MiB"),
    FigureSpec::new("start_files", "count", Better::Lower, Kind::Exact)
        .heading("files")
        .about("files aging and filling left on the target"),
    FigureSpec::new("start_layout_score", "ratio", Better::Higher, Kind::Exact)
        .heading("score")
        .about("layout score of the files aging and filling left (1 is perfect)"),
];

fn spec(name: &str) -> &'static FigureSpec {
    FIGURES.iter().find(|f| f.name == name).expect("declared above")
}

/// The folder, below the target's root, the work runs in when the target
/// was aged or filled.
pub const WORK_FOLDER: &str = "work";

impl Lab {
    /// The cache entry `spec` starts from under `start` (the case's, from
    /// [`StartPlan::for_condition`]), made now (aged, filled and stored)
    /// when the cache has none; `None` when the case starts fresh or
    /// `spec` is no scratch target.
    pub(super) fn base_for(
        &self,
        spec: &TargetSpec,
        options: &TargetOptions,
        case: &mut Case,
        progress: &dyn Fn(Phase),
        start: Option<&StartPlan>,
    ) -> Result<Option<Arc<CacheEntry>>> {
        let Some(start) = start else { return Ok(None) };
        if !spec.needs_scratch() {
            return Ok(None);
        }
        let (image, start) = start.for_repeat(case.repeat)?;
        let start = &start;
        let made_of = made_of(spec, options, start);
        let key = age_cache::key_of(&made_of);
        if let Some(why) = self.failed_bases.borrow().get(&key) {
            return Err(Error::failed(format!("{why} (the image of this case's start could not be made in an earlier case)")));
        }
        let cache = self.image_cache()?;
        let mut bases = self.bases.borrow_mut();
        let (entry, how, took) = match bases.get(&key) {
            Some(entry) => match self.made_ahead.borrow_mut().remove(&key) {
                // Made for this run before its first case: this case is
                // the first to start from it.
                Some((how, took)) => (entry.clone(), how, took),
                None => (entry.clone(), Provenance::Found, 0.0),
            },
            None => {
                let short: String = key.chars().take(12).collect();
                let what = format!("the aged image {short} of {}, which another run is making", spec.label());
                let started = Instant::now();
                let made = cache.entry_for(&key, &what, || {
                    progress(Phase::Age);
                    make_entry(self.ledger(), &self.id, spec, options, start, cache, made_of)
                });
                match made {
                    Ok((entry, how)) => (Arc::new(entry), how, started.elapsed().as_secs_f64()),
                    Err(e) => {
                        self.failed_bases.borrow_mut().insert(key, e.message.clone());
                        return Err(e);
                    }
                }
            }
        };
        bases.insert(key.clone(), entry.clone());
        let made_here = how == Provenance::Made;
        case.start = Some(StartRecord {
            age: start.age.as_ref().map(AgeSpec::canonical),
            fill: start.fill,
            cache_key: key,
            image_hash: entry.meta.image_hash.clone(),
            cache_hit: !made_here,
            notes: entry.meta.notes.clone(),
            free_histogram: Vec::new(),
            aging_seconds: if made_here { took } else { 0.0 },
            waited_seconds: match how {
                Provenance::MadeByAnother { waited_s } => waited_s,
                _ => 0.0,
            },
            image: if start.images > 1 { image + 1 } else { 0 },
        });
        Ok(Some(entry))
    }

    /// The run's image cache, opened once.
    pub(super) fn image_cache(&self) -> Result<&ImageCache> {
        if let Some(cache) = self.image_cache.get() {
            return Ok(cache);
        }
        let dir = self.plan.start.as_ref().and_then(|s| s.cache_dir.clone());
        let dir = dir.unwrap_or_else(|| age_cache::default_dir(&self.plan.target_options.scratch));
        let cache = ImageCache::open(&dir)?;
        Ok(self.image_cache.get_or_init(|| cache))
    }
}

/// Make `spec` fresh for run `run_id`, age and fill it, and keep its image
/// in `cache`: what a case's start needs once, on whichever thread makes
/// it.
pub(super) fn make_entry(
    ledger: &crate::ledger::Ledger,
    run_id: &str,
    spec: &TargetSpec,
    options: &TargetOptions,
    start: &StartPlan,
    cache: &ImageCache,
    made_of: BTreeMap<String, String>,
) -> Result<CacheEntry> {
    let mut fresh = options.clone();
    fresh.base_image = None;
    fresh.pooled = None;
    // Aging is not the work: the entry is made unrecorded.
    fresh.record = None;
    fresh.host_log = None;
    let mut target = spec.make(ledger, &fresh, run_id)?;
    let started = Instant::now();
    let shaped = shape(target.as_mut(), start);
    let image = shaped.and_then(|notes| Ok((notes, target.export_image()?)));
    let aging_seconds = started.elapsed().as_secs_f64();
    let stored = image.and_then(|(notes, image)| {
        let image = image.ok_or_else(|| Error::failed(format!("{}: no image to keep in the cache", spec.label())))?;
        let mut meta = EntryMeta::new(made_of, aging_seconds);
        meta.notes = notes;
        cache.store(ledger, image, meta)
    });
    let released = target.release();
    let entry = stored?;
    released?;
    Ok(entry)
}

/// How far below the level asked an aged or filled image may end (the
/// fill lands within 0.3%; rounds of churn drift a little).
const LEVEL_SLACK: f64 = 0.02;

/// Age and fill the fresh target; what aging said of itself. An image that
/// did not reach the level asked (the file system ran out of inodes or of
/// room first) is an error: it is never kept in the cache.
fn shape(target: &mut dyn Made, start: &StartPlan) -> Result<Vec<String>> {
    let notes = age_and_fill(target, start)?;
    let root = target.work_dir();
    let want = start.level();
    let level = age::fill_level(root)?;
    if want > 0.0 && level < want - LEVEL_SLACK {
        let inodes = rustix::fs::statvfs(root).ok().filter(|v| v.f_files > 0 && v.f_ffree == 0);
        let why = match inodes {
            Some(v) => format!(
                "the file system ran out of inodes (all {} used); give it more (--mkfs-opt FS=\"-i 4096\" on ext2/3/4), a larger --size, or larger files (sizes=)",
                v.f_files
            ),
            None => "the file system ran out of room for more files; give a larger --size or a lower fill".to_string(),
        };
        return Err(Error::failed(format!(
            "aging reached {:.1}% of the {:.0}% asked: {why}; the image is not kept in the cache",
            level * 100.0,
            want * 100.0
        )));
    }
    Ok(notes)
}

/// Age, then fill, the fresh target; what aging said of itself.
fn age_and_fill(target: &mut dyn Made, start: &StartPlan) -> Result<Vec<String>> {
    let root = target.work_dir().to_path_buf();
    let quiet = |_: &str| {};
    let mut notes = Vec::new();
    if let Some(age) = &start.age {
        let aged = age::age(&root, age, &quiet)?;
        notes.push(format!(
            "aging made {} files and deleted {} in {} rounds, writing {} MiB",
            aged.files_made,
            aged.files_deleted,
            aged.rounds,
            aged.bytes_written >> 20
        ));
        notes.extend(aged.note);
    }
    if let Some(fill) = start.fill {
        let filled = age::fill(&root, fill, &quiet)?;
        notes.push(match filled.files {
            0 => format!("already {:.1}% full after aging: no filler written", filled.level * 100.0),
            n => format!("filled with {n} files ({} MiB) to {:.1}%", filled.bytes >> 20, filled.level * 100.0),
        });
    }
    Ok(notes)
}

/// What an image is made of: everything that decides its blocks.
pub(super) fn made_of(spec: &TargetSpec, options: &TargetOptions, start: &StartPlan) -> BTreeMap<String, String> {
    let fs = spec.scratch_fs();
    let mut made = BTreeMap::new();
    made.insert("target".to_string(), spec.label());
    if let Some(fs) = fs {
        made.insert("fs".to_string(), fs.name().to_string());
        let args = options.mkfs_args.get(&fs).map(|a| a.join(" ")).unwrap_or_default();
        made.insert("mkfs_args".to_string(), args);
        made.insert("mount_opts".to_string(), options.mount_opts.get(&fs).cloned().unwrap_or_default());
    }
    made.insert("image_bytes".to_string(), options.size_bytes.unwrap_or(crate::site::DEFAULT_SIZE_BYTES).to_string());
    if let Some(identity) = &start.age_identity {
        made.insert("age".to_string(), identity.clone());
    }
    if let Some(fill) = start.fill {
        made.insert("fill".to_string(), format!("{fill}"));
    }
    made.insert("aging_version".to_string(), age::AGING_VERSION.to_string());
    made
}

/// Measure the starting state of the target whose root is `root` into
/// the case's figures and start record, then make the folder the work
/// runs in and return it.
pub(super) fn measure_and_make_work_folder(root: &Path, case: &mut Case) -> Result<PathBuf> {
    let figures = &mut case.figures;
    let level = age::fill_level(root)?;
    figures.put(spec("start_fill"), Some(level), "");
    match freespace::measure(root, false) {
        Ok(free) => {
            figures.put(spec("start_free_bytes"), Some(free.free_bytes as f64), "");
            figures.put(spec("start_free_extents"), Some(free.free_extents as f64), "");
            figures.put(spec("start_free_largest_bytes"), Some(free.largest_bytes as f64), "");
            figures.put(spec("start_fragmented_share"), free.fragmented_share, "nothing free");
            if let Some(start) = case.start.as_mut() {
                start.free_histogram = free
                    .histogram
                    .iter()
                    .filter(|b| b.extents > 0)
                    .map(|b| FreeBucketCount { min_bytes: b.min_bytes, extents: b.extents, bytes: b.bytes })
                    .collect();
            }
        }
        Err(e) => {
            let why = format!("free space not read: {}", e.message);
            for name in ["start_free_bytes", "start_free_extents", "start_free_largest_bytes", "start_fragmented_share"] {
                figures.put(spec(name), None, &why);
            }
        }
    }
    let shaped: Vec<PathBuf> =
        ["age", "fill"].iter().map(|name| root.join(name)).filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir())).collect();
    if shaped.is_empty() {
        figures.put(spec("start_files"), Some(0.0), "");
        figures.put(spec("start_layout_score"), None, "no file before the work");
    } else {
        let options = TreeOptions { threads: 2, top: 0, largest: 0, cross_mounts: false, disk: None };
        let report = tree::scan(&shaped, &options).map_err(|e| Error::io(root, "map the starting files", e))?;
        figures.put(spec("start_files"), Some(report.summary.files as f64), "");
        figures.put(spec("start_layout_score"), report.summary.layout_score_bytes, "no file with data");
    }
    let work = root.join(WORK_FOLDER);
    std::fs::create_dir(&work).map_err(|e| Error::io(&work, "create the work folder", e))?;
    Ok(work)
}
