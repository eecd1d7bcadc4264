"""Apache Otava's change-point detector (its defaults: window 50, p 0.001,
no minimum magnitude) on the synthetic cells of `cargo bench --bench
history`: 30 runs, level 1, relative noise CV (independent or AR(1) with
rho 0.5), a step at index 15 or none. Prints a markdown table: found within
2 runs of the step, a change elsewhere (any change in a step-free series),
none. Usage: python3 history_otava.py [SERIES]   (default 1000 a cell)"""

import sys
import time

import numpy as np
from otava.analysis import compute_change_points
from otava.series import AnalysisOptions

RUNS, AT, NEAR = 30, 15, 2


def series(rng, rho, cv, step):
    """One series: AR(1) noise of unit variance, scaled to cv, on a level
    that steps by `step` at AT."""
    e = np.empty(RUNS)
    e[0] = rng.standard_normal()
    shocks = rng.standard_normal(RUNS)
    for i in range(1, RUNS):
        e[i] = rho * e[i - 1] + np.sqrt(1.0 - rho * rho) * shocks[i]
    level = np.where(np.arange(RUNS) >= AT, 1.0 + step, 1.0)
    return level * (1.0 + cv * e)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    options = AnalysisOptions()
    rng = np.random.default_rng(20240601)
    started = time.time()
    print(f"Otava: window {options.window_len}, p {options.max_pvalue}, min magnitude {options.min_magnitude}; "
          f"{n} series a cell")
    print("| noise CV | AR(1) rho | step | found (±2 runs) | a change elsewhere | none |")
    print("|---:|---:|---:|---:|---:|---:|")
    for rho in (0.0, 0.5):
        for cv in (0.01, 0.02, 0.03):
            for step in (0.0, 0.02, 0.05, 0.10):
                counts = [0, 0, 0]
                for _ in range(n):
                    values = [float(v) for v in series(rng, rho, cv, step)]
                    points, _ = compute_change_points(values, window_len=options.window_len,
                                                      max_pvalue=options.max_pvalue,
                                                      min_magnitude=options.min_magnitude)
                    at = [p.index for p in points]
                    if not at:
                        counts[2] += 1
                    elif step > 0 and any(abs(i - AT) <= NEAR for i in at):
                        counts[0] += 1
                    else:
                        counts[1] += 1
                pct = [f"{100.0 * c / n:.1f}%" for c in counts]
                found = "–" if step == 0 else pct[0]
                word = "none" if step == 0 else f"{step:.0%}"
                print(f"| {cv:.0%} | {rho} | {word} | {found} | {pct[1]} | {pct[2]} |", flush=True)
    print(f"\n{24 * n} series in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
