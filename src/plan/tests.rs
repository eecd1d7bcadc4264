//! Plans built from requests, as the command line would fill them, on a
//! machine whose answers the test gives: no root, no disk, no CLI.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::*;
use crate::error::Result;
use crate::scenario::Work;
use crate::scenario::params::{Params, Scale};
use crate::site::{FsType, TargetOptions, TargetSpec};

/// A machine with room and a memory controller.
struct Roomy;

impl Machine for Roomy {
    fn scratch_free_bytes(&self, _scratch: &Path) -> u64 {
        100 << 30
    }

    fn memory_limits(&self) -> std::result::Result<(), String> {
        Ok(())
    }

    fn check_disk(&self, _: &TargetSpec, _: &TargetOptions, _: &dyn Work, _: f64) -> Result<()> {
        Ok(())
    }
}

/// The target flags' defaults, as clap gives them, on `fs`.
pub(super) fn target(fs: &[FsType]) -> TargetRequest {
    TargetRequest {
        neighbour_fsync: Vec::new(),
        fs: fs.to_vec(),
        dir: None,
        device: None,
        destroy_data_on: None,
        scratch: PathBuf::from("/var/tmp/fslab-plan-test"),
        size: None,
        mkfs_opt: Vec::new(),
        mount_opt: Vec::new(),
        sysctl: Vec::new(),
        memory: Vec::new(),
        age: None,
        fill: Vec::new(),
        age_cache: None,
        age_images: 1,
        interval: 1.0,
        disk: None,
        disk_profile: None,
        vm: GuestRequest {
            kernel: Vec::new(),
            kernel_modules: None,
            vm_memory: Vec::new(),
            vm_cpus: 2,
            vm_timeout: 1800,
            kernel_cache: PathBuf::from(crate::vm::prepare::DEFAULT_KERNEL_CACHE),
        },
        crash_record: false,
        crash_log_cap: None,
        crash: None,
        crash_seed: None,
        crash_max_states: None,
        crash_host_log: None,
    }
}

/// `run SCENARIO --fs FS... --set SET... --repeat N`.
fn request(scenario: &str, fs: &[FsType], set: &[&str], repeat: u32) -> RunRequest {
    RunRequest {
        scenarios: vec![scenario.to_string()],
        target: target(fs),
        set: set.iter().map(|s| s.parse().unwrap()).collect(),
        repeat,
        scale: Scale::Small,
        preset: None,
    }
}

fn keys(plan: &RunPlan) -> Vec<String> {
    plan.cases.iter().map(|c| c.key.clone()).collect()
}

/// Each case as `scenario target@condition size rR`.
fn said(plan: &RunPlan) -> Vec<String> {
    plan.cases
        .iter()
        .map(|c| format!("{} {}@{} {} r{}", c.scenario, c.target, c.condition, c.params["size"], c.repeat))
        .collect()
}

fn matrix() -> RunRequest {
    let mut asked = request("mmap-fill", &[FsType::Ext4, FsType::Xfs], &["size=64M,128M"], 2);
    asked.target.memory = vec![("256M".into(), 256 << 20), ("1G".into(), 1 << 30)];
    asked
}

#[test]
fn the_same_request_gives_the_same_cases_and_keys_in_the_run_s_order() {
    let first = run::plan(&matrix(), &Roomy).unwrap();
    let again = run::plan(&matrix(), &Roomy).unwrap();
    assert_eq!(first.cases, again.cases);
    // Parameters, then target, then condition, then repeat.
    let m = 1 << 20;
    let want: Vec<String> = [64 * m, 128 * m]
        .iter()
        .flat_map(|size| {
            ["ext4", "xfs"].into_iter().flat_map(move |fs| {
                ["256M", "1G"].into_iter().flat_map(move |memory| (1..=2).map(move |r| format!("mmap-fill {fs}@{memory} {size} r{r}")))
            })
        })
        .collect();
    assert_eq!(said(&first), want);
    let distinct: BTreeSet<String> = keys(&first).into_iter().collect();
    assert_eq!(distinct.len(), 16, "every case has a key of its own");
    assert_eq!(first.harness.conditions.len(), 2);
    for case in &first.cases {
        assert_eq!(first.target(case).label(), case.target);
        assert_eq!(first.condition(case).place(&case.target), format!("{}@{}", case.target, case.condition));
    }
}

#[test]
fn a_changed_parameter_changes_exactly_the_keys_of_its_cases() {
    let before = run::plan(&matrix(), &Roomy).unwrap();
    let mut changed = matrix();
    changed.set = vec!["size=64M,256M".parse().unwrap()];
    let after = run::plan(&changed, &Roomy).unwrap();
    for (old, new) in before.cases.iter().zip(&after.cases) {
        let kept = old.params["size"] == 64 << 20;
        assert_eq!(old.key == new.key, kept, "{old:?}\n{new:?}");
    }
}

#[test]
fn a_case_keeps_its_key_when_cases_are_added_beside_it() {
    let alone = run::plan(&request("replace-files", &[FsType::Ext4], &["strategy=none"], 1), &Roomy).unwrap();
    let more = request("replace-files", &[FsType::Btrfs, FsType::Ext4, FsType::Xfs], &["strategy=fsync-each,none"], 3);
    let more = run::plan(&more, &Roomy).unwrap();
    assert_eq!(alone.cases.len(), 1);
    assert_eq!(more.cases.len(), 18);
    let found = more.cases.iter().find(|c| c.key == alone.cases[0].key).expect("the ext4 case is still there");
    assert_eq!((found.target.as_str(), found.repeat, &found.params), ("ext4", 1, &alone.cases[0].params));
}

#[test]
fn the_seeds_preset_plans_131_cases_each_of_which_builds_its_work_again() {
    let mut seeds = request("mmap-fill", &[], &[], 1);
    seeds.scenarios.clear();
    seeds.preset = Some(PresetName::Seeds);
    let plan = run::plan(&seeds, &Roomy).unwrap();
    assert_eq!(plan.cases.len(), 131);
    let distinct: BTreeSet<&str> = plan.cases.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(distinct.len(), 131);
    // dpkg both ways right after seed 002's cases, on its places.
    let places = |scenario: &str| -> Vec<(String, String)> {
        let of = plan.cases.iter().filter(|c| c.scenario == scenario);
        of.map(|c| (c.target.clone(), c.condition.clone())).collect::<BTreeSet<_>>().into_iter().collect()
    };
    assert_eq!(places("dpkg"), places("replace-files"));
    let order: Vec<&str> = plan.cases.iter().map(|c| c.scenario.as_str()).collect();
    let first_dpkg = order.iter().position(|s| *s == "dpkg").unwrap();
    assert_eq!((order[first_dpkg - 1], order.iter().filter(|s| **s == "dpkg").count()), ("replace-files", 10));
    // The variant comes right after its file system, for tree-copy alone.
    let tree: Vec<&str> = plan.cases.iter().filter(|c| c.scenario == "tree-copy").map(|c| c.target.as_str()).collect();
    assert_eq!(tree, ["ext2", "ext2-1k", "ext3", "ext4", "xfs", "btrfs"]);
    // The preset's conditions belong to their scenario alone.
    let places: BTreeSet<(&str, &str)> = plan.cases.iter().map(|c| (c.scenario.as_str(), c.condition.as_str())).collect();
    let aged = places.iter().filter(|(_, condition)| condition.contains("age=")).collect::<Vec<_>>();
    assert_eq!(aged, [&("create-file", "age=churn,fill=80%")]);
    // The run builds each case's work from its plain record.
    for case in &plan.cases {
        let scenario = crate::scenario::find(&case.scenario).unwrap();
        let params = Params::from_json(scenario.params(), &case.params).unwrap();
        assert_eq!(params.to_json(), case.params, "{}", case.key);
        assert!(plan.work(case).is_ok());
    }
    // Without a memory controller the preset's limits are left out.
    struct NoCgroups;
    impl Machine for NoCgroups {
        fn scratch_free_bytes(&self, scratch: &Path) -> u64 {
            Roomy.scratch_free_bytes(scratch)
        }
        fn memory_limits(&self) -> std::result::Result<(), String> {
            Err("none mounted".into())
        }
        fn check_disk(&self, t: &TargetSpec, o: &TargetOptions, w: &dyn Work, l: f64) -> Result<()> {
            Roomy.check_disk(t, o, w, l)
        }
    }
    let without = run::plan(&seeds, &NoCgroups).unwrap();
    assert!(without.cases.iter().all(|c| !c.conditions.contains_key("memory")));
    assert!(without.cases.iter().all(|c| plan.cases.iter().any(|p| p.key == c.key)), "the other cases keep their keys");
}

#[test]
fn the_seeds_preset_with_crash_judges_seed_002_s_five_strategies_and_nothing_else() {
    let mut seeds = request("mmap-fill", &[], &[], 1);
    seeds.scenarios.clear();
    seeds.preset = Some(PresetName::Seeds);
    seeds.target.crash = Some(crate::harness::crash_states::Model::Flush);
    let plan = run::plan(&seeds, &Roomy).unwrap();
    let crashed: Vec<&PlannedCase> = plan.cases.iter().filter(|c| c.conditions.contains_key("crash")).collect();
    assert!(crashed.iter().all(|c| ["replace-files", "dpkg"].contains(&c.scenario.as_str()) && c.conditions["crash"] == "flush"));
    let seed: Vec<&&PlannedCase> = crashed.iter().filter(|c| c.scenario == "replace-files").collect();
    let strategies: BTreeSet<&str> = seed.iter().map(|c| c.params["strategy"].as_str().unwrap()).collect();
    assert_eq!(strategies, ["fsync-each", "in-place", "in-place-fsync", "rename-no-fsync", "writeback-batch"].into());
    assert_eq!(seed.len(), 25, "five strategies on the five file systems");
    assert_eq!(crashed.len(), 25 + 10, "and dpkg both ways on each");
    assert_eq!(plan.cases.len(), 131 - 20 + 35, "the other seeds' cases as without --crash");
    // The user's --set still wins, for the seed and for its program.
    seeds.set = vec!["strategy=fsync-each".parse().unwrap(), "unsafe_io=yes".parse().unwrap()];
    let plan = run::plan(&seeds, &Roomy).unwrap();
    assert_eq!(plan.cases.iter().filter(|c| c.conditions.contains_key("crash")).count(), 5 + 5);
}

#[test]
fn exec_plans_each_target_and_condition_repeat_by_repeat() {
    let mut asked = target(&[FsType::Ext4, FsType::Xfs]);
    asked.sysctl = vec![parse_sysctl_list("vm.dirty_ratio=10,20").unwrap()];
    let work = crate::scenario::exec::CommandWork {
        argv: vec!["true".into()],
        cold_read: false,
        parse: None,
        echo: crate::scenario::exec::Echo::Off,
        check: None,
        marks: None,
    };
    let plan = exec::plan(&ExecRequest { target: asked, repeat: 2, warmup: 0, work }, &Roomy).unwrap();
    let got: Vec<String> = plan.cases.iter().map(|c| format!("{}@{} r{}", c.target, c.condition, c.repeat)).collect();
    let want = [
        "ext4@vm.dirty_ratio=10 r1",
        "ext4@vm.dirty_ratio=10 r2",
        "ext4@vm.dirty_ratio=20 r1",
        "ext4@vm.dirty_ratio=20 r2",
        "xfs@vm.dirty_ratio=10 r1",
        "xfs@vm.dirty_ratio=10 r2",
        "xfs@vm.dirty_ratio=20 r1",
        "xfs@vm.dirty_ratio=20 r2",
    ];
    assert_eq!(got, want);
    assert!(plan.cases.iter().all(|c| c.scenario == "exec" && c.params["command"] == serde_json::json!(["true"])));
    assert!(plan.verdicts(&[]).is_empty());
}

#[test]
fn contradictions_are_refused_with_the_flag_named() {
    let mut guests = request("replace-files", &[FsType::Ext4], &[], 1);
    guests.target.vm.kernel = vec!["/nonexistent/vmlinuz".into()];
    guests.target.fill = vec![parse_fill_value("80%").unwrap()];
    let refused = |asked: &RunRequest| run::plan(asked, &Roomy).err().map(|e| e.message).unwrap_or_default();
    assert!(refused(&guests).starts_with("--fill with --kernel IMAGE"), "{}", refused(&guests));
    let mut images = request("replace-files", &[FsType::Ext4], &[], 1);
    images.target.age_images = 3;
    assert!(refused(&images).contains("give --repeat 3 or more"), "{}", refused(&images));
    let unknown = request("replace-files", &[FsType::Ext4], &["sise=1M"], 1);
    assert!(refused(&unknown).starts_with("--set sise: no parameter `sise` in replace-files"), "{}", refused(&unknown));
}

#[test]
fn the_preset_and_a_hunt_read_a_seeds_cases_on_its_disk_and_a_plain_run_on_the_runs() {
    let mut preset = request("mmap-fill", &[FsType::Xfs], &[], 1);
    preset.preset = Some(PresetName::Seeds);
    let plan = run::plan(&preset, &Roomy).unwrap();
    assert_eq!(plan.harness.disk_for("mmap-fill").name, "hdd-7200-2009");
    let plain = run::plan(&request("mmap-fill", &[FsType::Xfs], &[], 1), &Roomy).unwrap();
    assert_eq!(plain.harness.disk_for("mmap-fill").name, "hdd-7200", "a seed's disk is the preset's");
    let hunt = |disk: Option<&str>| {
        let mut target = target(&[FsType::Xfs]);
        target.disk = disk.map(String::from);
        let request = HuntRequest {
            scenario: "replace-files".into(),
            target,
            vary: "files=20..200".into(),
            set: Vec::new(),
            repeat: 1,
            steps: 4,
            scale: Scale::Small,
        };
        hunt::plan(&request, &Roomy).unwrap().harness.disk_for("replace-files").name.clone()
    };
    assert_eq!((hunt(None), hunt(Some("ssd-no-plp"))), ("laptop-5400".to_string(), "ssd-no-plp".to_string()));
}

#[test]
fn a_hunt_holds_evidence_at_the_claims_value_reads_nothing_back_and_keeps_the_comparison() {
    let hunt = |scenario: &str, vary: &str, set: &[&str]| {
        let request = HuntRequest {
            scenario: scenario.into(),
            target: target(&[FsType::Xfs]),
            vary: vary.into(),
            set: set.iter().map(|s| s.parse().unwrap()).collect(),
            repeat: 1,
            steps: 4,
            scale: Scale::Small,
        };
        hunt::plan(&request, &Roomy).unwrap()
    };
    let words = |plan: &hunt::HuntPlan, key: &str| -> Vec<String> {
        let (_, sets) = plan.points.at(plan.points.vary.axis.hi).unwrap();
        sets.iter().map(|p| p.word(key).to_string()).collect()
    };
    // mmap-fill's posix_fallocate is the seed's workaround: held out.
    let mmap = hunt("mmap-fill", "memory=64M..256M", &[]);
    assert_eq!(words(&mmap, "prealloc"), ["none"]);
    assert_eq!(mmap.held.iter().map(|h| (h.key, h.value)).collect::<Vec<_>>(), [("prealloc", "none")]);
    assert_eq!(mmap.harness.cold_read, crate::harness::ColdRead::Never);
    // --set names it: the user's value, nothing held.
    let set = hunt("mmap-fill", "memory=64M..256M", &["prealloc=posix_fallocate"]);
    assert_eq!((words(&set, "prealloc"), set.held.len()), (vec!["posix_fallocate".to_string()], 0));
    // replace-files' two strategies are the claim: both measured.
    let replace = hunt("replace-files", "files=20..200", &[]);
    assert_eq!(words(&replace, "strategy").len(), 2, "{:?}", words(&replace, "strategy"));
    assert!(replace.held.is_empty());
}
