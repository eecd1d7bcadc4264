//! The survey's tests: hand-made cases under Debian kernels and the host,
//! and a catalog written out here (the report may not read the registry).

use super::chart::Chart;
use super::*;
use crate::record::{GuestRecord, ScenarioInfo};

/// A Debian guest kernel's record, emulated or not.
fn guest(release: &str, emulated: bool) -> GuestRecord {
    let abi = crate::record::release::short_release(release);
    GuestRecord {
        kernel: format!("debian:{abi}"),
        release: release.to_string(),
        accel: if emulated { "tcg" } else { "kvm" }.to_string(),
        emulated,
        why_emulated: None,
        memory: "1G".to_string(),
        memory_bytes: 1 << 30,
        cpus: 2,
        boot_s: None,
        wall_s: 20.0,
        qemu: "QEMU emulator version 7.2.0".to_string(),
        emulation_sysctls: Vec::new(),
    }
}

/// A case of `scenario` on `fs` with `strategy`, under a kernel (its
/// release, and whether it is the host's rather than a guest's), with `extents` (exact) and `wall_s` (a timing).
pub(crate) fn case(
    scenario: &str,
    fs: &str,
    strategy: &str,
    (kernel, host): (&str, bool),
    repeat: u32,
    extents: f64,
    wall_s: f64,
) -> Case {
    let mut params = serde_json::Map::new();
    params.insert("strategy".into(), strategy.into());
    params.insert("files".into(), 20.into());
    let mut case = Case::new(scenario, fs, params, repeat);
    case.conditions.insert(KERNEL.into(), kernel.into());
    if !host {
        case.guest = Some(guest(kernel, false));
    }
    case.figures.set("extents", extents, "count", Better::Lower, Kind::Exact);
    case.figures.set("wall_s", wall_s, "s", Better::Lower, Kind::Timing);
    case.figures.set("files", 20.0, "count", Better::Lower, Kind::Exact);
    case
}

/// A catalog of replace-files and mmap-fill with small headlines.
pub(crate) fn catalog() -> Catalog {
    let info = |name, seed, headline| ScenarioInfo {
        name,
        seed: Some(seed),
        about: "",
        params: vec![],
        headline,
        printed: &[],
        figures: &[],
    };
    Catalog {
        scenarios: vec![
            info("mmap-fill", "000", &["extents", "perfection", "wall_s"]),
            info("replace-files", "002", &["wall_s", "extents", "files", "journal_commits"]),
        ],
        figures: Vec::new(),
    }
}

/// A run of `cases`, read from the JSON a store would hand back.
pub(crate) fn run(cases: Vec<Case>) -> RunRecord {
    let mut run: RunRecord = serde_json::from_value(serde_json::json!({
        "id": "20260101T000000Z-1-00000000", "tag": null, "command": ["fslab", "run"], "sysctls": [], "cases": [],
        "environment": {"fslab_version": "0.1.0", "kernel": "6.18.44", "machine": "x86_64", "cpu": null, "cpus": 2,
                        "memory_bytes": null, "tools": {}, "disk": null}
    }))
    .expect("a run record");
    run.cases = cases;
    run
}

/// The kernels of the surveys below, given out of order.
pub(crate) const KERNELS: [(&str, bool); 4] =
    [("6.18.44", true), ("6.12.57+deb12-amd64", false), ("6.1.0-57-amd64", false), ("6.1.0-47-amd64", false)];

/// replace-files on ext4 with two strategies, two repeats each, under
/// every kernel of [`KERNELS`]: extents 3 everywhere but 6 under
/// 6.12.57 (fsync-each only); wall_s moving within its repeats.
pub(crate) fn replace_files_survey() -> RunRecord {
    let mut cases = Vec::new();
    for (kernel, host) in KERNELS {
        for strategy in ["fsync-each", "in-place"] {
            for repeat in 1..=2 {
                let extents = if kernel.starts_with("6.12") && strategy == "fsync-each" { 6.0 } else { 3.0 };
                let wall = 1.0 + f64::from(repeat) * 0.2 + if host { 0.05 } else { 0.0 };
                cases.push(case("replace-files", "ext4", strategy, (kernel, host), repeat, extents, wall));
            }
        }
    }
    run(cases)
}

#[test]
fn kernels_come_in_version_order_with_the_host_marked() {
    let runs = [replace_files_survey()];
    let survey = Survey::of(&catalog(), &runs).expect("four kernels");
    let releases: Vec<&str> = survey.kernels.iter().map(|k| k.release.as_str()).collect();
    assert_eq!(releases, ["6.1.0-47-amd64", "6.1.0-57-amd64", "6.12.57+deb12-amd64", "6.18.44"]);
    assert_eq!(survey.kernels.iter().map(|k| k.host).collect::<Vec<_>>(), [false, false, false, true]);
    assert_eq!(survey.kernels[1].given.as_deref(), Some("debian:6.1.0-57"));
    assert_eq!((survey.kernels[3].given.as_deref(), survey.kernels[3].label()), (None, "6.18.44 (host)".to_string()));
}

#[test]
fn a_series_is_a_place_without_its_kernel_and_the_parameters_that_vary() {
    let runs = [replace_files_survey()];
    let survey = Survey::of(&catalog(), &runs).unwrap();
    let scenario = &survey.scenarios[0];
    assert_eq!(scenario.series, ["ext4 strategy=fsync-each", "ext4 strategy=in-place"], "files=20 is shared, so not named");
    let extents = scenario.figures.iter().find(|f| f.name == "extents").unwrap();
    assert_eq!(extents.cells.len(), 2);
    assert!(extents.cells.iter().all(|row| row.len() == 4 && row.iter().all(|c| c.cases.len() == 2)));
    assert_eq!(extents.cells[0][2].values(), [6.0, 6.0], "6.12.57 is third in version order");
    assert_eq!(extents.cells[1][2].values(), [3.0, 3.0]);
}

#[test]
fn figures_are_judged_differs_within_or_same_and_the_differing_come_first() {
    let runs = [replace_files_survey()];
    let survey = Survey::of(&catalog(), &runs).unwrap();
    let judged: Vec<(&str, Change)> = survey.scenarios[0].figures.iter().map(|f| (f.name.as_str(), f.change)).collect();
    assert_eq!(
        judged,
        [("extents", Change::Differs), ("wall_s", Change::WithinRepeats), ("files", Change::Same)],
        "the headline's order within each kind; journal_commits held by no case is left out"
    );
    // A figure measured under some kernels and not others differs too.
    let mut run = replace_files_survey();
    for case in run.cases.iter_mut().filter(|c| c.conditions[KERNEL] == "6.18.44") {
        case.figures.set_missing("files", "count", Better::Lower, Kind::Exact, "not on the host");
    }
    let runs = [run];
    let survey = Survey::of(&catalog(), &runs).unwrap();
    let files = survey.scenarios[0].figures.iter().find(|f| f.name == "files").unwrap();
    assert_eq!(files.change, Change::Differs);
    assert!(files.cells[0][3].is_missing() && files.cells[0][3].missing == ["not on the host"]);
    assert!(files.cells[0][3].apart_from(&files.cells[0][0]) && !files.cells[0][1].apart_from(&files.cells[0][0]));
}

#[test]
fn one_kernel_is_no_survey_and_perfection_is_never_a_figure_of_its_own() {
    let one: Vec<Case> = (1..=2).map(|r| case("mmap-fill", "xfs", "a", ("6.1.0-57-amd64", false), r, 1.0, 1.0)).collect();
    assert!(Survey::of(&catalog(), &[run(one)]).is_none());
    assert!(Survey::of(&catalog(), &[run(Vec::new())]).is_none());
    let mut cases: Vec<Case> = KERNELS.iter().map(|(k, host)| case("mmap-fill", "xfs", "a", (*k, *host), 1, 1.0, 2.0)).collect();
    for case in &mut cases {
        case.figures.set("perfection", 1.0, "count", Better::Lower, Kind::Exact);
    }
    let runs = [run(cases)];
    let survey = Survey::of(&catalog(), &runs).unwrap();
    let names: Vec<&str> = survey.scenarios[0].figures.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["extents", "wall_s"]);
    assert_eq!(survey.scenarios[0].figures[0].change, Change::Same);
    assert_eq!(survey.scenarios[0].figures[1].change, Change::Same, "one repeat each, the same value: not moved");
    assert_eq!(survey.scenarios[0].series, ["xfs"]);
}

#[test]
fn the_chart_draws_kernels_in_order_a_dot_per_repeat_and_a_median_per_kernel() {
    let runs = [replace_files_survey()];
    let survey = Survey::of(&catalog(), &runs).unwrap();
    let scenario = &survey.scenarios[0];
    let figure = &scenario.figures[0];
    let svg = Chart {
        scenario: &scenario.name,
        kernels: &survey.kernels,
        series: &scenario.series,
        figure,
        about: Some("extents, <filefrag>"),
    }
    .render();
    assert!(svg.contains(r#"data-kernels="6.1.0-47-amd64 6.1.0-57-amd64 6.12.57+deb12-amd64 6.18.44""#), "{svg}");
    assert!(svg.contains(r#"data-change="differs""#) && svg.contains(r#"role="img""#));
    assert!(svg.contains("<title>extents against the kernel release: extents, &lt;filefrag&gt;</title>"), "{svg}");
    assert_eq!(svg.matches(r#"<circle class="repeat""#).count(), 16, "2 series × 4 kernels × 2 repeats");
    assert_eq!(svg.matches(r#"<path class="median-mark""#).count(), 8);
    assert_eq!(svg.matches(r#"<polyline class="median""#).count(), 2, "a line per series");
    let ticks: Vec<&str> =
        svg.split(r#"<g class="kernel" data-release=""#).skip(1).map(|t| t.split('"').next().unwrap()).collect();
    assert_eq!(ticks, ["6.1.0-47-amd64", "6.1.0-57-amd64", "6.12.57+deb12-amd64", "6.18.44"]);
    assert_eq!(svg.matches(r#"class="host""#).count(), 1, "one band, the host's");
    assert!(svg.contains(r#"data-release="6.18.44" data-host="true""#));
    assert!(svg.contains(">6.1.0-57<") && !svg.contains(">6.1.0-57-amd64<"), "tick labels leave the flavour off: {svg}");
    assert!(svg.contains("kernel release, in version order") && svg.contains(">extents (count)</text>"), "{svg}");
    let marks: Vec<&str> = svg
        .split(r#"data-series="ext4 strategy=fsync-each" data-release="6.12.57+deb12-amd64" data-value=""#)
        .skip(1)
        .map(|t| t.split('"').next().unwrap())
        .collect();
    assert_eq!(marks, ["6"], "the median mark carries the median");
}

#[test]
fn emulated_timings_are_hollow_and_a_missing_kernel_breaks_the_line() {
    let mut run = replace_files_survey();
    for case in run.cases.iter_mut().filter(|c| c.conditions[KERNEL] == "6.1.0-57-amd64") {
        case.guest = Some(guest("6.1.0-57-amd64", true));
    }
    for case in run.cases.iter_mut().filter(|c| c.conditions[KERNEL] == "6.12.57+deb12-amd64") {
        case.status = Status::Failed;
        case.error = Some("the guest did not boot".into());
        case.figures = crate::record::Figures::new();
    }
    let runs = [run];
    let survey = Survey::of(&catalog(), &runs).unwrap();
    assert!(survey.kernels[1].emulated && !survey.kernels[0].emulated);
    let scenario = &survey.scenarios[0];
    let wall = scenario.figures.iter().find(|f| f.name == "wall_s").unwrap();
    assert_eq!(wall.change, Change::Differs, "measured under three kernels, missing under one");
    let svg = Chart { scenario: &scenario.name, kernels: &survey.kernels, series: &scenario.series, figure: wall, about: None }
        .render();
    assert_eq!(svg.matches(r#"<circle class="repeat emulated""#).count(), 4, "{svg}");
    assert_eq!(svg.matches(r#"<text class="missing""#).count(), 2, "one mark per series");
    assert!(svg.contains("missing: the case failed: the guest did not boot"), "{svg}");
    assert_eq!(
        svg.matches(r#"<polyline class="median""#).count(),
        2,
        "two kernels before the gap; the host alone after it draws no line"
    );
    // Exact figures of an emulated guest are not hollow.
    let extents = scenario.figures.iter().find(|f| f.name == "extents").unwrap();
    let svg =
        Chart { scenario: &scenario.name, kernels: &survey.kernels, series: &scenario.series, figure: extents, about: None }
            .render();
    assert_eq!(svg.matches("repeat emulated").count(), 0);
}
