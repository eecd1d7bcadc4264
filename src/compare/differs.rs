//! What differs between the setups of a comparison's two sides, said
//! before any row: a figure that moved means little until one knows that
//! the new side mounted ext4 `sync`, ran another kernel, or started from an
//! aged image. Only what the run records hold is compared; what is the
//! same on both sides is not mentioned.

use serde::Serialize;

use crate::record::{Case, RunRecord};

/// One setting that differs: `ext4 mount: defaults → sync`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// What the setting is: `kernel`, `ext4 mount`, `sysctl vm.dirty_ratio`.
    pub what: String,
    /// Its value on the base side (several pooled runs' distinct values
    /// joined by ` | `).
    pub base: String,
    /// Its value on the new side, likewise.
    pub new: String,
}

/// What a side's runs say of one setting: every distinct value, in order
/// of first appearance.
type Values = Vec<String>;

/// One aspect of how a case's target was set up, as text.
type Aspect<'a> = (&'a str, &'a dyn Fn(&Case) -> String);

/// The settings in which `base` and `new` differ, machine and software
/// first, then sysctls, then per target (in the order the base ran them,
/// those both sides ran): mkfs arguments, mount options, conditions, how
/// the file system started and the drive its requests were modelled on.
pub fn differences(base: &[RunRecord], new: &[RunRecord]) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut add = |what: String, b: Values, n: Values| {
        if !same(&b, &n) {
            out.push(Difference { what, base: b.join(" | "), new: n.join(" | ") });
        }
    };
    let per_run = |runs: &[RunRecord], f: &dyn Fn(&RunRecord) -> String| distinct(runs.iter().map(f));
    add("fslab".into(), per_run(base, &|r| r.environment.fslab_version.clone()), per_run(new, &|r| r.environment.fslab_version.clone()));
    add("kernel".into(), per_run(base, &|r| r.environment.kernel.clone()), per_run(new, &|r| r.environment.kernel.clone()));
    add("machine".into(), per_run(base, &machine), per_run(new, &machine));
    add("disk".into(), per_run(base, &disk), per_run(new, &disk));
    for tool in names(base, new, |r| r.environment.tools.keys().cloned().collect()) {
        let version = |r: &RunRecord| match r.environment.tools.get(&tool) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "not installed".into(),
        };
        add(tool.clone(), per_run(base, &version), per_run(new, &version));
    }
    for key in names(base, new, |r| r.sysctls.iter().map(|(k, _)| k.clone()).collect()) {
        let value = |r: &RunRecord| {
            r.sysctls.iter().find(|(k, _)| *k == key).map_or_else(|| "as the machine had it".to_string(), |(_, v)| v.clone())
        };
        add(format!("sysctl {key}"), per_run(base, &value), per_run(new, &value));
    }
    // Cases in guests (`--kernel`): the kernel each ran on is said per
    // target, with the guest's acceleration and size, rather than as
    // conditions.
    let guests = base.iter().chain(new).flat_map(|r| &r.cases).any(|c| c.guest.is_some() || c.conditions.contains_key("kernel"));
    for target in targets(base).into_iter().filter(|t| targets(new).contains(t)) {
        let per_case = |runs: &[RunRecord], f: &dyn Fn(&Case) -> String| {
            distinct(runs.iter().flat_map(|r| &r.cases).filter(|c| c.fs == target).map(f))
        };
        let aspects: [Aspect<'_>; 5] =
            [("mkfs", &mkfs), ("mount", &mount), ("conditions", &conditions), ("start", &start), ("modelled on", &modelled_on)];
        for (aspect, f) in aspects {
            add(format!("{target} {aspect}"), per_case(base, f), per_case(new, f));
        }
        if guests {
            let per_case_in_run = |runs: &[RunRecord]| {
                distinct(runs.iter().flat_map(|r| r.cases.iter().filter(|c| c.fs == target).map(move |c| kernel_of(r, c))))
            };
            add(format!("{target} kernel"), per_case_in_run(base), per_case_in_run(new));
        }
    }
    out
}

/// The kernel a case ran on, said when a side ran cases in guests:
/// `6.18.44 (host)`, `6.1.0-56-amd64 (guest, TCG, VM 512M, 2 CPUs)`.
fn kernel_of(run: &RunRecord, c: &Case) -> String {
    match &c.guest {
        Some(g) => format!("{} (guest, {}, VM {}, {} CPUs)", g.release, g.accel.to_uppercase(), g.memory, g.cpus),
        None => format!("{} (host)", run.environment.kernel),
    }
}

/// The same set of values, whatever the order.
fn same(a: &Values, b: &Values) -> bool {
    a.len() == b.len() && a.iter().all(|v| b.contains(v))
}

/// Distinct values in order of first appearance.
fn distinct(values: impl Iterator<Item = String>) -> Values {
    let mut out: Values = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Names (tools, sysctl keys) either side's runs have, in order.
fn names(base: &[RunRecord], new: &[RunRecord], of: impl Fn(&RunRecord) -> Vec<String>) -> Values {
    distinct(base.iter().chain(new).flat_map(of))
}

/// Target labels a side ran, in order.
fn targets(runs: &[RunRecord]) -> Values {
    distinct(runs.iter().flat_map(|r| &r.cases).map(|c| c.fs.clone()))
}

/// `AMD EPYC, 2 CPUs, 23.5 GiB`.
fn machine(r: &RunRecord) -> String {
    let e = &r.environment;
    let mut parts = vec![e.cpu.clone().unwrap_or_else(|| e.machine.clone()), format!("{} CPUs", e.cpus)];
    if let Some(bytes) = e.memory_bytes {
        parts.push(crate::units::bytes_short(bytes));
    }
    parts.join(", ")
}

/// `vda (rotational, mq-deadline)`, or `unknown`.
fn disk(r: &RunRecord) -> String {
    let Some(d) = &r.environment.disk else { return "unknown".into() };
    let mut about = Vec::new();
    if let Some(model) = &d.model {
        about.push(model.clone());
    }
    match d.rotational {
        Some(true) => about.push("rotational".into()),
        Some(false) => about.push("not rotational".into()),
        None => {}
    }
    if let Some(s) = &d.scheduler {
        about.push(s.clone());
    }
    if about.is_empty() { d.name.clone() } else { format!("{} ({})", d.name, about.join(", ")) }
}

fn mkfs(c: &Case) -> String {
    if c.target.mkfs_args.is_empty() { "none".into() } else { c.target.mkfs_args.join(" ") }
}

/// Mount options, `defaults` when none were given.
fn mount(c: &Case) -> String {
    c.target.mount_opts.clone().filter(|o| !o.is_empty()).unwrap_or_else(|| "defaults".into())
}

/// The drive the disk model stood in for (`--disk`), or `none` for a case
/// that modelled nothing (run before the model, or where nothing could be
/// traced).
fn modelled_on(c: &Case) -> String {
    c.target.disk.clone().unwrap_or_else(|| "none".into())
}

/// `memory=256M, vm.dirty_ratio=5`, or `none`; the kernel and the
/// guest's memory are the `kernel` aspect's.
fn conditions(c: &Case) -> String {
    let said: Vec<String> =
        c.conditions.iter().filter(|(k, _)| !matches!(k.as_str(), "kernel" | "vm_memory")).map(|(k, v)| format!("{k}={v}")).collect();
    if said.is_empty() { "none".into() } else { said.join(", ") }
}

/// `fresh`, or `aged churn:..., filled to 80% (image 3fa2c1d09b7e)`: the
/// profile, fill and cache entry, not whether the image came from the
/// cache (which differs between runs of one setup).
fn start(c: &Case) -> String {
    let Some(s) = &c.start else { return "fresh".into() };
    let mut parts = Vec::new();
    if let Some(age) = &s.age {
        parts.push(format!("aged {age}"));
    }
    if let Some(fill) = s.fill {
        parts.push(format!("filled to {:.0}%", fill * 100.0));
    }
    let key: String = s.cache_key.chars().take(12).collect();
    format!("{} (image {key})", parts.join(", then "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::{case, run};
    use crate::record::StartRecord;

    fn ext4(mount_opts: Option<&str>) -> Case {
        let mut c = case("replace-files", "ext4", &[], 1, |_| {});
        c.target.mkfs_args = vec!["-F".into(), "-q".into()];
        c.target.mount_opts = mount_opts.map(String::from);
        c
    }

    #[test]
    fn the_same_setup_differs_in_nothing() {
        let a = [run("a", vec![ext4(None)])];
        assert_eq!(differences(&a, &a), []);
    }

    #[test]
    fn mount_options_kernel_and_sysctls_are_named() {
        let base = [run("a", vec![ext4(None)])];
        let mut new = run("b", vec![ext4(Some("sync"))]);
        new.environment.kernel = "6.2".into();
        new.sysctls.push(("vm.dirty_ratio".into(), "5".into()));
        let d = differences(&base, &[new]);
        let said: Vec<String> = d.iter().map(|d| format!("{}: {} → {}", d.what, d.base, d.new)).collect();
        assert_eq!(said, ["kernel: 6.1 → 6.2", "sysctl vm.dirty_ratio: as the machine had it → 5", "ext4 mount: defaults → sync"]);
    }

    #[test]
    fn targets_on_one_side_only_and_pooled_runs_are_said_fairly() {
        // xfs only in the new side: not a setup difference (the one-sided
        // lists say it). Two base runs with both mounts: both named.
        let mut xfs = ext4(Some("noatime"));
        xfs.fs = "xfs".into();
        let base = [run("a", vec![ext4(None)]), run("b", vec![ext4(Some("sync"))])];
        let d = differences(&base, &[run("c", vec![ext4(Some("sync")), xfs.clone()])]);
        assert_eq!(d, [Difference { what: "ext4 mount".into(), base: "defaults | sync".into(), new: "sync".into() }]);
        // The same values in another order are the same.
        let other = [run("b", vec![ext4(Some("sync"))]), run("a", vec![ext4(None)])];
        assert_eq!(differences(&base, &other), []);
    }

    #[test]
    fn a_guest_s_kernel_acceleration_and_size_are_named_per_target() {
        // The host's ext4 against the same ext4 in a TCG guest of 6.1: the
        // run's kernel is the host's on both sides, the case's is not.
        let mut host = ext4(None);
        host.conditions.insert("kernel".into(), "6.1".into());
        let mut guest = ext4(None);
        guest.conditions.insert("kernel".into(), "6.1.0-56-amd64".into());
        guest.conditions.insert("vm_memory".into(), "512M".into());
        guest.guest = Some(crate::record::guest::tests::guest(true));
        let d = differences(&[run("a", vec![host.clone()])], &[run("b", vec![guest.clone()])]);
        let said: Vec<String> = d.iter().map(|d| format!("{}: {} → {}", d.what, d.base, d.new)).collect();
        assert_eq!(said, ["ext4 kernel: 6.1 (host) → 6.1.0-56-amd64 (guest, TCG, VM 512M, 2 CPUs)"]);
        // The same guest under KVM, in a bigger VM: acceleration and size.
        let mut kvm = guest.clone();
        let g = kvm.guest.as_mut().unwrap();
        (g.accel, g.emulated, g.memory) = ("kvm".into(), false, "4G".into());
        let d = differences(&[run("a", vec![guest.clone()])], &[run("b", vec![kvm])]);
        assert_eq!(d[0].new, "6.1.0-56-amd64 (guest, KVM, VM 4G, 2 CPUs)");
        assert_eq!(differences(&[run("a", vec![guest.clone()])], &[run("b", vec![guest])]), []);
    }

    #[test]
    fn conditions_start_and_tools_are_named() {
        let mut aged = ext4(None);
        aged.conditions.insert("memory".into(), "256M".into());
        aged.start = Some(StartRecord {
            age: Some("churn:delete=50%".into()),
            fill: Some(0.8),
            cache_key: "3fa2c1d09b7e0000".into(),
            cache_hit: true,
            ..Default::default()
        });
        let mut new = run("b", vec![aged]);
        new.environment.tools.insert("mke2fs".into(), "mke2fs 1.47.0".into());
        let d = differences(&[run("a", vec![ext4(None)])], &[new]);
        let said: Vec<String> = d.iter().map(|d| format!("{}: {} → {}", d.what, d.base, d.new)).collect();
        assert_eq!(
            said,
            [
                "mke2fs: not installed → mke2fs 1.47.0",
                "ext4 conditions: none → memory=256M",
                "ext4 start: fresh → aged churn:delete=50%, then filled to 80% (image 3fa2c1d09b7e)",
            ]
        );
    }

    #[test]
    fn the_drive_a_side_modelled_on_is_named() {
        let on = |disk: Option<&str>| {
            let mut c = ext4(None);
            c.target.disk = disk.map(String::from);
            run("x", vec![c])
        };
        let d = differences(&[on(Some("ssd-plp"))], &[on(Some("hdd-7200"))]);
        assert_eq!(d, [Difference { what: "ext4 modelled on".into(), base: "ssd-plp".into(), new: "hdd-7200".into() }]);
        assert_eq!(differences(&[on(None)], &[on(Some("hdd-7200"))])[0].base, "none", "a run from before the model");
        assert_eq!(differences(&[on(Some("hdd-7200"))], &[on(Some("hdd-7200"))]), []);
    }
}
