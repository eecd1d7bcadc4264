//! Running a bisect: each point the [`Search`] asks for is measured as a
//! run of its own (stored, tagged `bisect:ID` and `bisect:ID@POINT`), its
//! samples handed back, every step said as it goes; a bisect started
//! again with the same flags reads the steps already stored and goes on
//! from there.
//!
//! The id is a digest of what decides the answer (the axis, the rule and
//! the work, as the command line describes them), so the same question
//! finds its own steps and a different one never reuses them.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::git::Repo;
use super::judge::{self, Change, Samples};
use super::search::{Ask, Next, Outcome, Point, Search};
use crate::error::{Error, Result};
use crate::harness::Run;
use crate::ledger::{Ledger, Resource};
use crate::plan::{self, ExecRequest, Host, RunRequest};
use crate::progress::Mode;
use crate::record::RunRecord;

/// What a point's run measures.
#[derive(Debug)]
pub enum Work {
    /// A command (`fslab exec`).
    Exec(ExecRequest),
    /// A scenario (`fslab run SCENARIO`).
    Scenario(RunRequest),
}

/// The axis: kernels, or commits built from a repository.
#[derive(Debug)]
pub enum Axis {
    /// Kernels in order (images, `host`, or names `--kernel` takes).
    Kernels(Vec<Point>),
    /// Commits, good first.
    Git {
        /// The repository.
        repo: Repo,
        /// The build command, run in each commit's tree.
        build: String,
        /// The commits.
        points: Vec<Point>,
    },
}

impl Axis {
    /// The points, good end first.
    pub fn points(&self) -> &[Point] {
        match self {
            Axis::Kernels(points) | Axis::Git { points, .. } => points,
        }
    }
}

/// A bisect to run.
#[derive(Debug)]
pub struct Bisect<'a> {
    /// The axis.
    pub axis: Axis,
    /// What counts as the change.
    pub change: Change,
    /// Repeats of a timing's first measure of a point.
    pub first: u32,
    /// The most a timing's point is measured.
    pub ceiling: u32,
    /// Where steps are stored (none: no resuming).
    pub store: Option<&'a str>,
    /// The user's tags, on every step's run.
    pub tags: Vec<String>,
    /// How each step's run says its progress.
    pub progress: Mode,
    /// The folder builds are made in (the scratch folder).
    pub scratch: PathBuf,
    /// The command line's description of the work and rule, for the id.
    pub identity: String,
    /// Whether the work sets sysctls: then each step takes the machine's
    /// sysctl lock for itself; otherwise the bisect holds it shared from
    /// its first step to its last, so no other run changes the machine's
    /// settings between two steps, nor makes every step wait its turn.
    pub sets_sysctls: bool,
}

/// One measure of a point, as said.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Step {
    /// The point's index on the axis.
    pub point: usize,
    /// The stored run that measured it, when stored.
    pub run: Option<String>,
    /// The values it gave (deciding figure), or the words.
    pub values: Vec<f64>,
    /// How the point read after it.
    pub reading: String,
}

/// How a bisect ended.
#[derive(Debug)]
pub struct Ended {
    /// The bisect's id.
    pub id: String,
    /// The search, with every sample.
    pub search: Search,
    /// The outcome; `None` when interrupted.
    pub outcome: Option<Outcome>,
    /// The steps measured in this process, in order.
    pub steps: Vec<Step>,
    /// Points whose samples came from the store.
    pub resumed: Vec<usize>,
}

/// What builds the work of a point: the point, its build tree on a git
/// axis, and the repeats.
pub type MakeWork<'a> = dyn FnMut(&Point, Option<&Path>, u32) -> Result<Work> + 'a;

/// The id of a bisect over `points` described by `identity`.
pub fn id_of(identity: &str, points: &[Point]) -> String {
    let mut digest = Sha256::new();
    digest.update(identity.as_bytes());
    for point in points {
        digest.update(b"\0");
        digest.update(point.key.as_bytes());
    }
    digest.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Run `bisect`; `make` builds the work of a point (with its build tree on
/// a git axis) for a number of repeats; `say` gets each line for people.
pub fn run(bisect: Bisect, make: &mut MakeWork, say: &mut dyn FnMut(&str)) -> Result<Ended> {
    let points = bisect.axis.points().to_vec();
    let id = id_of(&bisect.identity, &points);
    let mut search = Search::new(points.clone(), bisect.change.clone(), bisect.first as usize, bisect.ceiling as usize);
    let (stored, resumed) = resume(&bisect, &id, &mut search)?;
    if !resumed.is_empty() {
        let names: Vec<&str> = resumed.iter().map(|&i| points[i].label.as_str()).collect();
        say(&format!("bisect {id}: resumed from the store, {} already measured ({})", names.len(), names.join(", ")));
    } else {
        say(&format!("bisect {id}: {} points, {} … {}", points.len(), points[0].label, points[points.len() - 1].label));
    }
    let _held = if bisect.sets_sysctls { None } else { Some(crate::ledger::sysctl::pin_shared()?) };
    let mut builds = Builds::new(&bisect, &id)?;
    let mut steps = Vec::new();
    let outcome = loop {
        let i = match search.next_step() {
            Next::Done(outcome) => break Some(outcome),
            Next::Measure(i) => i,
        };
        if crate::interrupt::pending().is_some() {
            break None;
        }
        let point = &points[i];
        let tree = match &bisect.axis {
            Axis::Git { repo, build, .. } => match builds.tree(repo, point, build) {
                Ok(tree) => Some(tree),
                Err(why) => {
                    let failed = Samples { failed: Some(why.clone()), ..Samples::default() };
                    search.add(i, failed);
                    say(&format!("{}: skipped, {why}", point.label));
                    steps.push(Step { point: i, run: None, values: Vec::new(), reading: "skip".into() });
                    continue;
                }
            },
            Axis::Kernels(_) => None,
        };
        let work = make(point, tree.as_deref(), search.repeats() as u32)?;
        let mut tags = bisect.tags.clone();
        let step = stored + steps.len();
        tags.extend([format!("bisect:{id}"), format!("bisect:{id}@{}", point.key), format!("bisect:{id}#{step:05}")]);
        let record = match measure(work, bisect.store, &tags, bisect.progress) {
            Ok(record) => record,
            // Interrupted mid-step: said as such, with how to go on.
            Err(_) if crate::interrupt::pending().is_some() => break None,
            Err(e) => return Err(e),
        };
        let samples = super::samples_of(&record, &bisect.change);
        check_figure(&bisect.change, &record, &samples)?;
        let values = samples.quiet.iter().chain(&samples.busy).copied().collect();
        let asked = search.asked();
        search.add(i, samples);
        let reading = reading_now(&search, i, asked);
        say(&step_line(&search, i, asked, &reading));
        steps.push(Step { point: i, run: Some(record.id.clone()), values, reading });
        if crate::interrupt::pending().is_some() {
            break None;
        }
    };
    builds.close();
    Ok(Ended { id, search, outcome, steps, resumed })
}

/// Read the stored steps of bisect `id` into `search`, in the order they
/// were measured (each step's `bisect:ID#N` tag), each as the answer to
/// what the search asks next, as it was when measured: how many steps
/// were read, and the points they measured.
fn resume(bisect: &Bisect, id: &str, search: &mut Search) -> Result<(usize, Vec<usize>)> {
    let Some(location) = bisect.store else {
        return Ok((0, Vec::new()));
    };
    // Checked as a run checks it, before any lock is waited for.
    let mut store = crate::store::Store::open(&crate::harness::writable_store(location)?)?;
    let keys: BTreeMap<String, usize> = search.points().iter().enumerate().map(|(i, p)| (p.key.clone(), i)).collect();
    let (at, number) = (format!("bisect:{id}@"), format!("bisect:{id}#"));
    let mut stored = Vec::new();
    for run_id in store.ids_tagged(&format!("bisect:{id}"))? {
        let Some(record) = store.load(&run_id)? else {
            continue;
        };
        let Some(&i) = record.tags.iter().find_map(|t| t.strip_prefix(&at)).and_then(|key| keys.get(key)) else {
            continue;
        };
        let step = record.tags.iter().find_map(|t| t.strip_prefix(&number)?.parse::<usize>().ok()).unwrap_or(usize::MAX);
        stored.push((step, stored.len(), i, super::samples_of(&record, &bisect.change)));
    }
    stored.sort_by_key(|&(step, order, ..)| (step, order));
    let count = stored.len();
    let mut found = Vec::new();
    for (_, _, i, samples) in stored {
        search.next_step();
        search.add(i, samples);
        found.push(i);
    }
    found.sort_unstable();
    found.dedup();
    Ok((count, found))
}

/// Measure `work` as a stored run tagged `tags`.
fn measure(work: Work, store: Option<&str>, tags: &[String], progress: Mode) -> Result<RunRecord> {
    let (done, failed) = match work {
        Work::Exec(request) => {
            let plan = plan::exec::plan(&request, &Host)?;
            let mut run = Run::start(plan.harness.clone(), store, tags, plan.cases.len(), progress, None)?;
            let mut work = request.work;
            for case in &plan.cases {
                if run.interrupted() {
                    break;
                }
                let (spec, condition) = (plan.target(case), plan.condition(case));
                let what = format!("exec on {}", condition.place(&spec.label()));
                run.measure(spec, &case.work_spec(), condition, case.repeat, &what, &mut work);
            }
            (run.finish(Vec::new())?, None)
        }
        Work::Scenario(request) => {
            let plan = plan::run::plan(&request, &Host)?;
            let mut run = Run::start(plan.harness.clone(), store, tags, plan.cases.len(), progress, None)?;
            let (verdicts, failed) = plan::measure::measure(&plan, &mut run);
            (run.finish(verdicts)?, failed)
        }
    };
    if let Err(e) = &done.released {
        eprintln!("fslab: {e}");
    }
    done.stored?;
    match failed {
        Some(e) => Err(e),
        None => Ok(done.record),
    }
}

/// A figure no case reports is a mistake in the flags, said with the
/// figures there are.
fn check_figure(change: &Change, record: &RunRecord, samples: &Samples) -> Result<()> {
    let Change::Figure { name, .. } = change else {
        return Ok(());
    };
    let ok: Vec<_> = record.cases.iter().filter(|c| c.status == crate::record::Status::Ok).collect();
    if samples.measured() > 0 || ok.is_empty() || ok.iter().any(|c| c.figures.get(name).is_some()) {
        return Ok(());
    }
    let known: Vec<&str> = ok[0].figures.iter().map(|(n, _)| n).collect();
    Err(Error::usage(format!("--figure {name}: the work measures no such figure{}", crate::error::did_you_mean(name, &known))))
}

/// How point `i` reads now, as a word, after a measure asked for `asked`.
fn reading_now(search: &Search, i: usize, asked: Option<(usize, Ask)>) -> String {
    let last = search.points().len() - 1;
    match asked {
        Some((_, Ask::Confirm)) => "measured again beside the other side".into(),
        _ if i == 0 => "good end".into(),
        _ if i == last => "bad end".into(),
        _ => search.read_now(i).word().into(),
    }
}

/// The line said after a point was measured, for `asked`.
fn step_line(search: &Search, i: usize, asked: Option<(usize, Ask)>, reading: &str) -> String {
    let point = &search.points()[i];
    let (s, role) = match asked {
        Some((_, Ask::Beside(x))) => (&search.beside(x)[usize::from(i != 0)], format!(", beside {}", search.points()[x].label)),
        Some((_, Ask::Confirm)) => match search.confirmed() {
            Some(((_, hi), fresh)) => (&fresh[usize::from(i == hi)], " (the answer's side)".to_string()),
            None => (search.samples(i), String::new()),
        },
        _ => (search.samples(i), String::new()),
    };
    let figure = match search.change() {
        Change::Figure { name, .. } => {
            let values = s.deciding();
            let shown = match (values.len(), s.median()) {
                (1, Some(v)) => judge::shown(v),
                (n, Some(v)) => format!("median {} of {n}", judge::shown(v)),
                _ => "not measured".into(),
            };
            let busy = if s.busy.is_empty() { String::new() } else { format!(", {} busy", s.busy.len()) };
            format!("{name} {shown}{busy}")
        }
        Change::Verdict { .. } => {
            format!("verdict {}", s.words.last().map_or("none", String::as_str))
        }
    };
    let left = match asked {
        Some((_, Ask::Point)) => match search.steps_left() {
            1 => " · ≤ 1 step left".to_string(),
            n => format!(" · ≤ {n} steps left"),
        },
        _ => String::new(),
    };
    let detail = point.detail.as_deref().map(|d| format!(" ({})", clip(d, 40))).unwrap_or_default();
    format!("{}{detail}{role}: {figure} → {reading}{left}", point.label)
}

/// The build trees of a git bisect: one folder per commit in a folder of
/// the scratch folder, recorded in a ledger of the bisect's own before
/// it is made and removed at the end (or by the next fslab if this one
/// is killed).
struct Builds {
    ledger: Option<Ledger>,
    root: Option<PathBuf>,
    trees: BTreeMap<String, std::result::Result<PathBuf, String>>,
}

impl Builds {
    fn new(bisect: &Bisect, id: &str) -> Result<Builds> {
        let Axis::Git { .. } = &bisect.axis else {
            return Ok(Builds { ledger: None, root: None, trees: BTreeMap::new() });
        };
        let scratch = crate::ledger::folder::OwnedDir::open_or_make(&bisect.scratch, crate::ledger::folder::FolderRole::Scratch)?;
        let run_id = format!("bisect-{id}-{}", std::process::id());
        let ledger = Ledger::create(&crate::ledger::state_dir(), &run_id)?;
        // Named as fslab names work folders: a release removes nothing else.
        let root = scratch.path().join(format!("fslab-{run_id}"));
        ledger.set_scratch(scratch)?;
        let token = ledger.record(Resource::WorkDir(root.clone()))?;
        std::fs::create_dir(&root).map_err(|e| Error::io(&root, "making the build folder", e))?;
        let meta = std::fs::symlink_metadata(&root).map_err(|e| Error::io(&root, "stat", e))?;
        ledger.prove(
            token,
            crate::ledger::proof::Proof::File(crate::ledger::folder::FileId { dev: meta.dev(), ino: meta.ino() }),
        )?;
        Ok(Builds { ledger: Some(ledger), root: Some(root), trees: BTreeMap::new() })
    }

    /// The built tree of `point`, built once; `Err` why it cannot be.
    fn tree(&mut self, repo: &Repo, point: &Point, build: &str) -> std::result::Result<PathBuf, String> {
        if let Some(done) = self.trees.get(&point.key) {
            return done.clone();
        }
        let root = self.root.as_ref().ok_or("no build folder")?;
        let tree = root.join(&point.label);
        let made = std::fs::create_dir(&tree)
            .and_then(|()| std::os::unix::fs::chown(&tree, Some(repo.owner.0), Some(repo.owner.1)))
            .map_err(|e| format!("making {}: {e}", tree.display()));
        let built = made.and_then(|()| repo.build(&point.key, &tree, build)).map(|()| tree);
        self.trees.insert(point.key.clone(), built.clone());
        built
    }

    /// Remove every tree and the ledger.
    fn close(self) {
        if let Some(ledger) = self.ledger {
            for e in ledger.release_all() {
                eprintln!("fslab: {e}");
            }
        }
    }
}

/// `text` cut to `width` characters, an ellipsis at the cut.
pub fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
