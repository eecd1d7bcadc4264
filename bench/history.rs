//! The change-point detector of `fslab history` on seeded synthetic
//! series: how often it finds a step, where, and how often it calls pure
//! noise a change.
//!
//! Each cell is SERIES series of 30 values (level 1, relative noise CV,
//! independent or AR(1) with rho 0.5) with a step at run 15 (none in the
//! step-free rows), judged with the default threshold of 5%.
//!
//! Usage: cargo bench --bench history [-- SERIES]   (default 1000 a cell)

use std::time::Instant;

use fslab::history::detect::{Verdict, detect, synthetic};

fn main() {
    let series: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1000);
    let (n, at, threshold) = (30, 15, 0.05);
    println!("{series} series a cell, {n} runs, a step at run {} (index {at}), threshold 5%", at + 1);
    println!();
    println!("| noise CV | AR(1) rho | step | found (±2 runs) | found elsewhere | small | steady | can't tell | drift |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let started = Instant::now();
    let mut judged = 0u64;
    for rho in [0.0, 0.5] {
        for cv in [0.01, 0.02, 0.03] {
            for step in [0.0, 0.02, 0.05, 0.10] {
                let mut counts = [0u64; 6];
                for seed in 0..series {
                    let seed =
                        seed * 1_000_003 + (cv * 1000.0) as u64 * 7919 + (step * 1000.0) as u64 * 104_729 + (rho * 10.0) as u64;
                    let y = synthetic(n, if step == 0.0 { n } else { at }, step, cv, rho, seed);
                    let f = detect(&y, false, threshold);
                    judged += 1;
                    let near = f.changes.iter().any(|c| c.at.abs_diff(at) <= 2);
                    let slot = match f.verdict {
                        Verdict::Changed if near && step != 0.0 => 0,
                        Verdict::Changed => 1,
                        Verdict::Steady if !f.small.is_empty() => 2,
                        Verdict::Steady => 3,
                        Verdict::CantTell => 4,
                        Verdict::Drift => 5,
                        Verdict::Varies => unreachable!("timings do not vary"),
                    };
                    counts[slot] += 1;
                }
                let pct = |k: usize| format!("{:.1}%", 100.0 * counts[k] as f64 / series as f64);
                let step_word = if step == 0.0 { "none".to_string() } else { format!("{:.0}%", step * 100.0) };
                println!(
                    "| {:.0}% | {rho} | {step_word} | {} | {} | {} | {} | {} | {} |",
                    cv * 100.0,
                    if step == 0.0 { "–".to_string() } else { pct(0) },
                    pct(1),
                    pct(2),
                    pct(3),
                    pct(4),
                    pct(5)
                );
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!();
    println!(
        "{judged} series judged in {secs:.2} s ({:.0} µs a series, critical values simulated once per length)",
        secs * 1e6 / judged as f64
    );
}
