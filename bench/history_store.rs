//! How fast `fslab history` answers over a store of 200 nights: one real
//! run's record (its `--json`), stored 200 times as a night each (times
//! wobbling by up to 1%, 12% slower from the 151st), then `fslab history`
//! timed whole over that store, five times.
//!
//! Usage (bench/history-postgres.sh runs it):
//!   cargo bench --bench history_store -- STORE RUN.json FSLAB

use std::process::Command;
use std::time::{Duration, Instant};

use fslab::record::RunRecord;

fn main() {
    // `cargo test` runs every bench target too, without `--bench` and
    // without a store: this one needs bench/history-postgres.sh.
    if !std::env::args().any(|a| a == "--bench") {
        println!("history_store: a benchmark, not a test; bench/history-postgres.sh runs it");
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [store, run, fslab] = &args[..] else {
        eprintln!("usage: cargo bench --bench history_store -- STORE RUN.json FSLAB");
        std::process::exit(2);
    };
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(run).expect("read the run")).expect("a run's --json");
    let run: RunRecord = serde_json::from_value(json["run"].clone()).expect("a run record");
    let mut into = fslab::store::Store::open(store).expect("open the store");
    let started = Instant::now();
    for night in fslab::history::series::nights(&run, 200, "nightly", 150, 1.12) {
        into.put_run(&night).expect("store a night");
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
