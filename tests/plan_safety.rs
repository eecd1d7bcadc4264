//! What `run --plan` refuses before anything is made, as root: a device
//! the plan formats, unless this machine names it again and it is the
//! disk the planner gave up; and every case the command line would refuse
//! (its parameters, its repeat, its room on this machine's scratch disk).
//! And how a plan whose shards have not all run is shown and compared:
//! "N of M cases stored", never "interrupted or killed".

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{Lab, LoopDevice, root_or_skip};
use fslab::plan::{PlanFile, case_key};
use fslab::plan::shard::shard_of;

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// `fslab plan --scratch SCRATCH ARGS -o lab/NAME`, exit 0; the file.
fn plan_in(lab: &Lab, scratch: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = lab.dir.path().join(name);
    let mut all = vec!["plan", "--scratch", scratch.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", path.to_str().unwrap()]);
    lab.expect(&all, 0);
    path
}

/// The plan at `path`, changed by `edit` and sealed again (each case's key
/// and the id its content gives, as someone editing it by hand would), as
/// lab/NAME.
fn resealed(lab: &Lab, path: &Path, name: &str, edit: impl FnOnce(&mut PlanFile)) -> String {
    let mut file = PlanFile::read(&std::fs::read(path).unwrap(), "plan").unwrap();
    edit(&mut file);
    for c in &mut file.cases {
        let before = std::mem::take(&mut c.case.key);
        c.case.key = case_key(&c.case.scenario, &c.case.params, &c.case.target, &c.case.conditions, c.case.repeat);
        if c.shard_key == before {
            c.shard_key = c.case.key.clone();
        }
    }
    file.id = file.id_of();
    let out = lab.dir.path().join(name);
    std::fs::write(&out, fslab::json_document("plan", &file)).unwrap();
    out.to_str().unwrap().to_string()
}

/// Whether the first MiB of `image` holds nothing but zeros (never
/// formatted).
fn untouched(image: &Path) -> bool {
    use std::io::Read as _;
    let mut head = vec![0u8; 1 << 20];
    std::fs::File::open(image).unwrap().read_exact(&mut head).unwrap();
    head.iter().all(|b| *b == 0)
}

#[test]
fn a_plan_formats_a_device_only_where_it_is_named_again_and_is_the_disk_planned() {
    if !root_or_skip("plan_device_named_again") {
        return;
    }
    let lab = Lab::new();
    let (a, b) = (LoopDevice::new(512), LoopDevice::new(640));
    // The path the plan names, pointing at one disk and then another, as
    // one name does on two machines.
    let disk = lab.dir.path().join("disk");
    std::os::unix::fs::symlink(&a.device, &disk).unwrap();
    let disk = disk.to_str().unwrap();
    let p = plan_in(&lab, &lab.scratch(), "p.json", &["replace-files", "--fs", "ext4", "--device", disk, "--destroy-data-on", disk]);
    let p = p.to_str().unwrap();
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    // Nobody named the disk on this machine.
    let out = lab.expect(&["run", "--plan", p, "--scratch", scratch], 2);
    assert!(said(&out).contains(&format!("--destroy-data-on {disk}")), "{}", said(&out));
    let file = PlanFile::read(&std::fs::read(p).unwrap(), "p").unwrap();
    assert!(!file.run_args.iter().any(|a| a.starts_with("--destroy-data-on")), "the agreement is not carried: {:?}", file.run_args);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    let identity = &json["plan"]["device"];
    assert_eq!(identity["size_bytes"].as_u64(), Some(512 << 20), "{identity}");
    let image = rustix::fs::stat(&a.image).unwrap();
    assert_eq!(identity["backing_file"]["inode"].as_u64(), Some(image.st_ino), "{identity}");
    // Another device named than the plan's.
    let out = lab.expect(&["run", "--plan", p, "--destroy-data-on", &b.device, "--scratch", scratch], 2);
    assert!(said(&out).contains("name the same device"), "{}", said(&out));
    // The name now leads to another disk.
    std::fs::remove_file(disk).unwrap();
    std::os::unix::fs::symlink(&b.device, disk).unwrap();
    let out = lab.expect(&["run", "--plan", p, "--destroy-data-on", disk, "--scratch", scratch], 2);
    assert!(said(&out).contains("not the disk the plan was made for") && said(&out).contains("640 MiB"), "{}", said(&out));
    assert!(untouched(&a.image) && untouched(&b.image), "a refused plan formatted a disk");
    assert!(!lab.store().exists(), "a refused plan stored a run");
    // The disk planned, named again here: formatted, and only it.
    std::fs::remove_file(disk).unwrap();
    std::os::unix::fs::symlink(&a.device, disk).unwrap();
    lab.expect(&["run", "--plan", p, "--destroy-data-on", disk, "--scratch", scratch], 0);
    assert!(!untouched(&a.image) && untouched(&b.image));
    lab.assert_nothing_left("after the device plan");
}

#[test]
fn run_plan_refuses_what_the_command_line_refuses_before_anything_is_made() {
    if !root_or_skip("plan_checked_as_run") {
        return;
    }
    let lab = Lab::new();
    let scratch = lab.scratch();
    let scratch = scratch.to_str().unwrap();
    let refused = |plan: &str, code: i32, says: &[&str]| {
        let out = lab.expect(&["run", "--plan", plan, "--scratch", scratch], code);
        for s in says {
            assert!(said(&out).contains(s), "{plan} should say {s:?}:\n{}", said(&out));
        }
        assert!(!lab.store().exists(), "{plan}: a refused plan stored a run");
        lab.assert_nothing_left(plan);
    };
    let fresh = plan_in(&lab, &lab.scratch(), "fresh.json", &["replace-files", "--fs", "ext4"]);
    refused(&resealed(&lab, &fresh, "repeat-0.json", |f| f.cases[0].case.repeat = 0), 2, &["repeat 0"]);
    refused(&resealed(&lab, &fresh, "no-args.json", |f| f.run_args.clear()), 2, &["no scenario"]);
    let sized = plan_in(&lab, &lab.scratch(), "sized.json", &["mmap-fill", "--fs", "ext4", "--size", "256M", "--set", "size=16M"]);
    let set = |name: &str, key: &str, value: serde_json::Value| {
        resealed(&lab, &sized, name, |f| {
            f.cases[0].case.params.insert(key.into(), value);
        })
    };
    refused(&set("size-1g.json", "size", "1G".into()), 2, &["mmap-fill on ext4", "--size 256 MiB"]);
    refused(&set("size-1000.json", "size", 1000.into()), 2, &["--set size=1000: must be a whole number of pages"]);
    let tree = plan_in(&lab, &lab.scratch(), "tree.json", &["tree-copy", "--fs", "ext4", "--set", "size=16M"]);
    let nowhere = resealed(&lab, &tree, "nowhere.json", |f| {
        f.cases[0].case.params.insert("source".into(), "/nonexistent".into());
    });
    refused(&nowhere, 2, &["source=/nonexistent"]);
    // Planned where the scratch disk is large, run where it is small: the
    // preset's stream, sized by the planning machine's free disk, does not
    // fit here (the same flags here size it to fit).
    let mut large = LoopDevice::new(64 << 10);
    let large_scratch = large.format_and_mount("ext4", &["-q"], None).join("scratch");
    let mut small = LoopDevice::new(3 << 10);
    let small_scratch = small.format_and_mount("ext4", &["-q"], None).join("scratch");
    for dir in [&large_scratch, &small_scratch] {
        std::fs::create_dir(dir).unwrap();
    }
    let streamed = plan_in(&lab, &large_scratch, "stream.json", &["direct-stream", "--preset", "seeds", "--fs", "ext4"]);
    let out = lab.expect(&["run", "--plan", streamed.to_str().unwrap(), "--scratch", small_scratch.to_str().unwrap()], 3);
    assert!(said(&out).contains("free on the scratch folder's file system"), "{}", said(&out));
    assert_eq!(std::fs::read_dir(&small_scratch).unwrap().count(), 0, "the small scratch was used");
    assert!(!lab.store().exists());
    lab.assert_nothing_left("after the stream too large here");
}

#[test]
fn a_plan_whose_shards_have_not_run_is_shown_and_compared_as_n_of_m_cases_stored() {
    if !root_or_skip("plan_n_of_m") {
        return;
    }
    let lab = Lab::new();
    let p = plan_in(&lab, &lab.scratch(), "p.json", &["replace-files", "--fs", "ext4,xfs", "--set", "strategy=fsync-each,none", "--repeat", "2"]);
    let file = PlanFile::read(&std::fs::read(&p).unwrap(), "p").unwrap();
    let id = file.id.clone();
    let p = p.to_str().unwrap();
    // The shard of 4 holding the fewest cases (at least one).
    let (shard, held) = (1..=4u32)
        .map(|k| (k, file.cases.iter().filter(|c| shard_of(&c.shard_key, 4) == k).count()))
        .filter(|(_, n)| *n > 0)
        .min_by_key(|(_, n)| *n)
        .unwrap();
    assert!(held < 8);
    let scratch = lab.scratch();
    lab.expect(&["run", "--plan", p, "--shard", &format!("{shard}/4"), "--scratch", scratch.to_str().unwrap()], 0);
    let stored = format!("{held} of 8 cases stored");
    let shown = said(&lab.expect(&["show", p], 0));
    assert!(shown.contains(&stored) && shown.contains("shards not run"), "{shown}");
    assert!(!shown.contains("interrupted or killed"), "{shown}");
    let json = common::fslab_json(&["show", p, "--json", "--store", lab.store().to_str().unwrap()]);
    assert_eq!(json["run"]["complete"], false);
    assert_eq!(json["run"]["plan"]["stored"].as_u64(), Some(held as u64), "{}", json["run"]["plan"]);
    assert_eq!(json["run"]["plan"]["cases"].as_u64(), Some(8));
    let out = lab.command().args(["compare", p, p, "--json", "--allow-undecided"]).output().unwrap();
    let compared: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(&out)));
    let c = &compared["compare"];
    assert_eq!(c["new_incomplete"], serde_json::json!([id]), "{c}");
    assert_eq!(c["new_plans"], serde_json::json!([{"id": id, "stored": held, "cases": 8}]), "{c}");
    let out = lab.command().args(["compare", p, p, "--allow-undecided"]).output().unwrap();
    assert!(said(&out).contains(&format!("plan {id} of plan {id}: {stored}")), "{}", said(&out));
    assert!(!said(&out).contains("killed or interrupted"), "{}", said(&out));
    lab.assert_nothing_left("after the shard");
}
