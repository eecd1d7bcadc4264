//! The harness tested without root, on the fake target kind and the
//! template scenario: what a case holds when everything works, when the
//! target cannot be made, and when the work fails — and that nothing is
//! left behind.

use std::time::Duration;

use super::*;
use crate::record::Status;
use crate::scenario::WorkSpec;
use crate::scenario::params::{self, Scale};
use crate::scenario::{Scenario, Work, WorkOutcome};
use crate::site::fake::Fake;
use crate::ledger::Ledger;
use crate::site::{TargetOptions, TargetSpec};

fn folder() -> tempfile::TempDir {
    crate::test_temp::dir("")
}

fn lab(parent: &std::path::Path, fail_make: Option<&'static str>) -> (Lab, TargetSpec) {
    let spec: TargetSpec = std::sync::Arc::new(Fake { parent: parent.to_path_buf(), fail_make });
    let plan = Plan {
        targets: vec![spec.clone()],
        target_options: TargetOptions { scratch: parent.join("scratch"), ..Default::default() },
        sysctls: Vec::new(),
        conditions: vec![Condition::default()],
        interval: Duration::from_millis(100),
        cold_read: crate::harness::ColdRead::AsAsked,
        guest: None,
        crash: None,
        start: None,
        disk: crate::model::builtin::find("hdd-7200").unwrap(),
        scenario_disks: Vec::new(),
    };
    (Lab::open_in(plan, &parent.join("state")).unwrap(), spec)
}

fn skeleton_job() -> (WorkSpec, Box<dyn Work>) {
    let s = crate::scenario::skeleton::Skeleton;
    let p = params::expand(s.params(), &[], Scale::Small).unwrap().remove(0);
    (WorkSpec { scenario: s.name().into(), params: p.to_json() }, s.work(&p))
}

#[test]
fn a_case_on_a_target_without_devices_has_every_probe_figure() {
    let dir = folder();
    let (lab, spec) = lab(dir.path(), None);
    let (job, mut work) = skeleton_job();
    let case = lab.measure(&spec, &job, &Condition::default(), 1, &|_| {}, work.as_mut());
    assert_eq!(case.status, Status::Ok, "{:?}", case.error);
    assert_eq!((case.scenario.as_str(), case.fs.as_str(), case.target.fs_type.as_str()), ("skeleton", "fake", "fake"));
    // Every probe put in every figure it declares (or the xfs-only one
    // is the exception), measured or missing with a reason.
    for probe in crate::probe::PROBES {
        for f in probe.figures().iter().filter(|f| f.name != "log_forces") {
            let got = case.figures.get(f.name).unwrap_or_else(|| panic!("{} did not put {}", probe.name(), f.name));
            assert_eq!((got.unit.as_ref(), got.better, got.kind), (f.unit, f.better, f.kind), "{}", f.name);
            assert!(got.value.is_some() || got.missing.as_deref().is_some_and(|m| !m.is_empty()), "{}", f.name);
        }
    }
    // No device: counters and traces are missing, never 0.
    assert_eq!(case.figures.value("written_bytes"), None);
    assert!(case.figures.get("written_bytes").unwrap().missing.as_deref().unwrap().contains("no block-layer counters"));
    assert_eq!(case.figures.value("journal_commits"), None);
    assert!(case.figures.value("wall_s").is_some_and(|w| w > 0.0));
    assert!(case.figures.value("sync_s").is_some());
    assert_eq!(case.figures.value("files_written"), Some(4.0));
    assert_eq!(case.figures.value("files"), Some(4.0));
    assert_eq!(case.figures.value("bytes"), Some((4 * 65536) as f64));
    // The work's own time comes first, the sync's right after it.
    let names: Vec<&str> = case.figures.iter().map(|(n, _)| n).collect();
    assert_eq!(&names[..4], ["wall_s", "user_s", "sys_s", "sync_s"]);
    assert!(!case.timeline.is_empty());
    let work_dir = dir.path().join(format!("fslab-fake-{}", lab.id));
    assert!(!work_dir.exists(), "the target was released");
    lab.close().unwrap();
}

#[test]
fn a_target_that_cannot_be_made_is_a_failed_case() {
    let dir = folder();
    let (lab, spec) = lab(dir.path(), Some("no room at the inn"));
    let (job, mut work) = skeleton_job();
    let case = lab.measure(&spec, &job, &Condition::default(), 2, &|_| {}, work.as_mut());
    assert_eq!(case.status, Status::Failed);
    assert_eq!(case.error.as_deref(), Some("no room at the inn"));
    assert_eq!(case.repeat, 2);
    assert!(case.figures.is_empty());
    lab.close().unwrap();
}

/// Work that fails half-way.
struct Broken;

impl Work for Broken {
    fn run(&mut self, dir: &std::path::Path, _ledger: &Ledger) -> crate::error::Result<WorkOutcome> {
        std::fs::write(dir.join("half"), b"x").unwrap();
        Err(crate::error::Error::failed("the disk caught fire"))
    }
}

#[test]
fn failing_work_is_a_failed_case_and_its_target_is_released() {
    let dir = folder();
    let (lab, spec) = lab(dir.path(), None);
    let job = WorkSpec { scenario: "broken".into(), params: serde_json::Map::new() };
    let phases = std::cell::RefCell::new(Vec::new());
    let case = lab.measure(&spec, &job, &Condition::default(), 1, &|p| phases.borrow_mut().push(p), &mut Broken);
    assert_eq!(case.status, Status::Failed);
    assert_eq!(case.error.as_deref(), Some("the disk caught fire"));
    assert_eq!(*phases.borrow(), [Phase::Make, Phase::Work, Phase::Release]);
    assert!(!dir.path().join(format!("fslab-fake-{}", lab.id)).exists());
    lab.close().unwrap();
}

#[test]
fn the_catalog_declares_every_headline_printed_and_table_figure_once() {
    let catalog = catalog();
    let mut names: Vec<&str> = catalog.figures.iter().map(|f| f.name).collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "a figure is declared twice");
    let lists = [crate::record::catalog::TABLE_COMMON, crate::record::catalog::EXEC_TABLE];
    for s in &catalog.scenarios {
        for name in s.headline.iter().chain(s.printed).chain(lists.iter().copied().flatten()) {
            assert!(catalog.figure(name).is_some(), "{}: {name} is not declared", s.name);
        }
        // What the report charts first: every seed says what its author printed.
        assert_eq!(s.seed.is_some(), !s.printed.is_empty(), "{}: the figures its seed printed", s.name);
    }
    assert_eq!(catalog.heading("journal_commits"), "commits");
    assert_eq!(catalog.heading("no_such_figure"), "no_such_figure");
}
