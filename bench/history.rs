//! The change-point detector of `fslab history` on seeded synthetic
//! series: how often it finds a step, where, and how often it calls pure
//! noise a change.
//!
//! Each cell is SERIES series of 30 values (level 1, relative noise CV,
//! independent or AR(1) with rho 0.5) with a step at run 15 (none in the
//! step-free rows), judged with the default threshold of 5%: first each
//! series alone, then as `fslab history` judges a machine's timings, the
//! lag-one autocorrelation pooled over each machine's 20 series (a cell's
//! series taken twenty at a time as one machine's).
//!
//! Below the table, the bound any detector meets on correlated noise: a
//! likelihood-ratio test told that a series is either AR(1) noise of
//! rho 0.5 with no step or independent noise with one step (the two
//! cells a 30-run series must tell apart), at CV 2%. It knows more than
//! any detector can (the rho, and that there are only two stories), so
//! no detector beats its power at its false-alarm rate.
//!
//! Usage: cargo bench --bench history [-- SERIES]   (default 1000 a cell)

use std::time::Instant;

use fslab::history::detect::{Finding, Verdict, detect, detect_with, pool, synthetic};

/// The series of one machine whose correlation is pooled, in the second
/// table: a nightly history's timing figures.
const MACHINE: usize = 20;

fn main() {
    let series: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1000);
    let (n, at, threshold) = (30, 15, 0.05);
    println!("{series} series a cell, {n} runs, a step at run {} (index {at}), threshold 5%", at + 1);
    let started = Instant::now();
    let mut judged = 0u64;
    // Each cell's series, judged alone and then with the correlation
    // pooled over each machine's MACHINE series.
    let mut rows: Vec<(String, [u64; 6], [u64; 6])> = Vec::new();
    for rho in [0.0, 0.5] {
        for cv in [0.01, 0.02, 0.03] {
            for step in [0.0, 0.02, 0.05, 0.10] {
                let ys: Vec<Vec<f64>> = (0..series)
                    .map(|seed| {
                        let seed = seed * 1_000_003
                            + (cv * 1000.0) as u64 * 7919
                            + (step * 1000.0) as u64 * 104_729
                            + (rho * 10.0) as u64;
                        synthetic(n, if step == 0.0 { n } else { at }, step, cv, rho, seed)
                    })
                    .collect();
                let alone: Vec<Finding> = ys.iter().map(|y| detect(y, false, threshold)).collect();
                let mut pooled = Vec::with_capacity(ys.len());
                for (y, f) in ys.chunks(MACHINE).zip(alone.chunks(MACHINE)) {
                    let p = pool(&f.iter().filter_map(|f| f.noise.map(|n| n.rho)).collect::<Vec<_>>());
                    pooled.extend(y.iter().map(|y| detect_with(y, false, threshold, p)));
                }
                judged += 2 * series;
                let tally = |found: &[Finding]| {
                    let mut counts = [0u64; 6];
                    for f in found {
                        counts[slot(f, step, at)] += 1;
                    }
                    counts
                };
                let step_word = if step == 0.0 { "none".to_string() } else { format!("{:.0}%", step * 100.0) };
                rows.push((format!("| {:.0}% | {rho} | {step_word} |", cv * 100.0), tally(&alone), tally(&pooled)));
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    for (title, pooled) in [("Each series alone", false), ("The correlation pooled over each machine's 20 series", true)] {
        println!();
        println!("{title}:");
        println!();
        println!("| noise CV | AR(1) rho | step | found (±2 runs) | found elsewhere | small | steady | can't tell | drift |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (cell, alone, with) in &rows {
            let counts = if pooled { with } else { alone };
            let pct = |k: usize| format!("{:.1}%", 100.0 * counts[k] as f64 / series as f64);
            let found = if cell.ends_with("none |") { "–".to_string() } else { pct(0) };
            println!("{cell} {found} | {} | {} | {} | {} | {} |", pct(1), pct(2), pct(3), pct(4), pct(5));
        }
    }
    bound(4 * series);
    println!();
    println!(
        "{judged} series judged in {secs:.2} s ({:.0} µs a series, critical values simulated once per length)",
        secs * 1e6 / judged as f64
    );
}

/// Which column a finding counts in: found near the step, a change
/// elsewhere (or in step-free noise), small, steady, can't tell, drift.
fn slot(f: &Finding, step: f64, at: usize) -> usize {
    let near = f.changes.iter().any(|c| c.at.abs_diff(at) <= 2);
    match f.verdict {
        Verdict::Changed if near && step != 0.0 => 0,
        Verdict::Changed => 1,
        Verdict::Steady if !f.small.is_empty() => 2,
        Verdict::Steady => 3,
        Verdict::CantTell => 4,
        Verdict::Drift => 5,
        Verdict::Varies => unreachable!("timings do not vary"),
    }
}

/// The log-likelihood ratio of "independent noise, one step (at its best
/// split)" over "AR(1) noise of `rho`, one level" for the logarithms `y`,
/// each variance at its maximum-likelihood value.
fn step_over_correlated(y: &[f64], rho: f64) -> f64 {
    let n = y.len() as f64;
    let sq = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
    };
    let split = (3..=y.len() - 3).map(|k| sq(&y[..k]) + sq(&y[k..])).fold(f64::INFINITY, f64::min);
    // Prais-Winsten: the first value scaled, the rest quasi-differenced.
    let s0 = (1.0 - rho * rho).sqrt();
    let z: Vec<(f64, f64)> =
        (0..y.len()).map(|t| if t == 0 { (s0 * y[0], s0) } else { (y[t] - rho * y[t - 1], 1.0 - rho) }).collect();
    let level = z.iter().map(|(v, x)| v * x).sum::<f64>() / z.iter().map(|(_, x)| x * x).sum::<f64>();
    let innovations = z.iter().map(|(v, x)| (v - level * x).powi(2)).sum::<f64>();
    -n / 2.0 * (split / n).ln() + n / 2.0 * (innovations / n).ln() - 0.5 * (1.0 - rho * rho).ln()
}

/// The informed test's power and false alarms at CV 2% on `series`
/// series a side.
fn bound(series: u64) {
    let (cv, rho, n) = (0.02, 0.5, 30);
    let ratios = |step: f64, at: usize, noise_rho: f64, salt: u64| {
        let mut r: Vec<f64> = (0..series)
            .map(|seed| {
                let y: Vec<f64> = synthetic(n, at, step, cv, noise_rho, seed * 31 + salt).iter().map(|v| v.ln()).collect();
                step_over_correlated(&y, rho)
            })
            .collect();
        r.sort_by(f64::total_cmp);
        r
    };
    let (noise, stepped) = (ratios(0.0, n, rho, 1), ratios(0.05, 15, 0.0, 2));
    let share = |v: &[f64], above: f64| 100.0 * v.iter().filter(|x| **x > above).count() as f64 / v.len() as f64;
    let at_power = stepped[stepped.len() / 10];
    let at_alarms = noise[noise.len() * 99 / 100];
    println!();
    println!(
        "The bound at CV 2%, {series} series a side: a test told the noise is AR(1) rho {rho} or independent with one \
         5% step finds {:.1}% of the steps when it calls 1% of the correlated noise changed, and calls {:.1}% of it \
         changed when it finds 90%.",
        share(&stepped, at_alarms),
        share(&noise, at_power)
    );
}
