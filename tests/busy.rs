//! Cases measured on a busy machine: others' CPU beside a case is seen and
//! the case flagged once in the tables, `show` and `compare`; the case's
//! own CPU — a command that burns every core — is never counted as
//! others'. Other tests and builds may share the machine, so each check
//! holds on a loaded machine as on a quiet one.

mod common;

use std::sync::Mutex;

use common::{BusyLoops, Lab, cases, figure, root_or_skip};

/// One test at a time: one's busy loops would be the other's others.
static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn a_case_beside_busy_loops_is_flagged_once_in_its_table_show_and_compare() {
    if !root_or_skip("a_case_beside_busy_loops_is_flagged") {
        return;
    }
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::new();
    let json = {
        let _loaders = BusyLoops::start();
        lab.exec_json(&["--fs", "ext4", "--repeat", "2", "--", "sleep", "1"], 0)
    };
    let id = json["run"]["id"].as_str().expect("a run id").to_string();
    for case in cases(&json) {
        let others = figure(case, "host_others_cores").expect("others' CPU measured");
        assert!(others >= 0.5, "others used {others} cores beside busy loops: {case}");
        let note = case["busy"].as_str().unwrap_or_else(|| panic!("not flagged busy: {case}"));
        assert!(note.starts_with("others used "), "{note}");
        for name in ["host_load1_start", "host_load1_end", "host_others_read_bytes", "host_others_written_bytes"] {
            assert!(figure(case, name).is_some(), "{name} of a loop-device case: {case}");
        }
    }
    let shown = String::from_utf8(lab.expect(&["show", &id], 0).stdout).unwrap();
    let joined = shown.replace("\n  ", " ");
    let footnote = "2 of 2 cases ran while other processes used ≥ 0.5 cores or moved ≥ 10 MiB/s on the disk under \
                    the target: ext4 r1, ext4 r2 — timings there are less reliable.";
    assert_eq!(joined.matches(footnote).count(), 1, "{shown}");
    assert!(shown.lines().all(|l| l.chars().count() <= 120), "{shown}");
    // Compared with itself: said once, for both sides, and never a
    // regression (the host figures are not judged).
    let compared = String::from_utf8(lab.expect(&["compare", &id, &id], 0).stdout).unwrap();
    assert_eq!(compared.matches("Busy machine (").count(), 1, "{compared}");
    assert!(compared.replace('\n', " ").contains("2 of 2 cases of"), "{compared}");
    // The CSV export carries the note in its busy column (the last but
    // the guest's, empty on the host), on every row.
    let csv = String::from_utf8(lab.expect(&["export", &id, "--csv"], 0).stdout).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",fill,busy,guest"), "{csv}");
    for line in lines {
        let (guest, busy) = {
            let mut fields = line.rsplit(',');
            (fields.next().unwrap(), fields.next().unwrap())
        };
        assert!(guest.is_empty() && busy.contains("others used "), "a row without the busy note: {line}");
    }
    lab.assert_nothing_left("after a busy exec");
}

#[test]
fn a_command_burning_every_core_is_the_cases_own_cpu_not_others() {
    if !root_or_skip("a_command_burning_every_core") {
        return;
    }
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let lab = Lab::new();
    // Four loops per CPU, so the command has most of a loaded machine too.
    let burn = format!(
        "for n in $(seq {}); do (i=0; while [ $i -lt 250000 ]; do i=$((i+1)); done) & done; wait",
        4 * cpus
    );
    let json = lab.exec_json(&["--fs", "ext4", "--", "sh", "-c", &burn], 0);
    let case = &cases(&json)[0];
    let f = |name: &str| figure(case, name).unwrap_or_else(|| panic!("{name} measured: {case}"));
    // The command's CPU as the cpu probe has it (its children's), and the
    // load probe's window: the work and its sync, and a little more.
    let own_s = f("user_s") + f("sys_s");
    let window = f("wall_s") + f("sync_s") + 0.05;
    let (others, busy, kernel) = (f("host_others_cores"), f("host_busy_cores"), f("host_kernel_cores"));
    eprintln!("others {others:.3}, busy {busy:.3}, kernel threads {kernel:.3}, own {:.3} cores on {cpus} CPUs", own_s / window);
    assert!(own_s > 0.2, "the command used {own_s} s of CPU");
    // Others are what the machine used less kernel threads and less the
    // case, the command's CPU included: counted as others' it would take
    // them to busy − kernel. The slack is /proc/stat's 10 ms ticks.
    let slack = 0.05 + 0.12 / window;
    assert!(others <= busy - kernel - own_s / window + slack, "others {others} cores; busy {busy}, kernel {kernel}, own {own_s} s: {case}");
    assert!(busy <= cpus as f64 + slack, "busy {busy} cores on {cpus} CPUs");
    lab.assert_nothing_left("after a burning exec");
}
