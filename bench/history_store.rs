//! How fast `fslab history` answers over a store of 200 nights: one real
//! run's record (its `--json`), stored 200 times as a night each (times
//! wobbling by up to 1%, 12% slower from the 151st), then `fslab history`
//! timed whole over that store, five times.
//!
//! Usage (bench/history-postgres.sh runs it):
//!   cargo bench --bench history_store -- STORE RUN.json FSLAB

use std::process::Command;
use std::time::{Duration, Instant};

use fslab::record::{Kind, RunRecord};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [store, run, fslab] = &args[..] else {
        eprintln!("usage: cargo bench --bench history_store -- STORE RUN.json FSLAB");
        std::process::exit(2);
    };
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(run).expect("read the run")).expect("a run's --json");
    let run: RunRecord = serde_json::from_value(json["run"].clone()).expect("a run record");
    let mut into = fslab::store::Store::open(store).expect("open the store");
    let started = Instant::now();
    for night in 0..200u32 {
        let mut copy = run.clone();
        copy.id = format!("20261101T{:02}{:02}00Z-1-{night:08x}", night / 60, night % 60);
        copy.started_at = format!("2026-11-01T{:02}:{:02}:00Z", night / 60, night % 60);
        copy.tags = vec!["nightly".into()];
        for case in &mut copy.cases {
            let wobble = 1.0 + f64::from((night * 37 + 11) % 21) / 2000.0 - 0.005;
            let slower = if night >= 150 { 1.12 } else { 1.0 };
            let names: Vec<String> = case.figures.iter().map(|(n, _)| n.to_string()).collect();
            for name in names {
                let mut figure = case.figures.get(&name).expect("listed").clone();
                if figure.kind == Kind::Timing && figure.unit == "s" {
                    figure.value = figure.value.map(|v| v * wobble * slower);
                }
                case.figures.insert_figure(&name, figure);
            }
        }
        into.put_run(&copy).expect("store a night");
    }
    drop(into);
    println!("200 runs of {} cases stored in {:.1} s", run.cases.len(), started.elapsed().as_secs_f64());
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new(fslab).args(["history", "nightly", "--store", store]).output().expect("run fslab");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            t.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "fslab history over 200 runs: min {:.2} s, median {:.2} s, max {:.2} s (five runs, the binary whole)",
        times[0].as_secs_f64(),
        times[2].as_secs_f64(),
        times[4].as_secs_f64()
    );
}
