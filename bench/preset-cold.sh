#!/usr/bin/env bash
# The preset from a cold cache, then again with its images cached: `fslab
# run --preset seeds` with an empty age cache, timed whole by /usr/bin/time
# against its budget (5 minutes on this kind of machine), then the same
# run over the cache the first one filled, against its own (3 minutes).
# Each is split into its parts from the run's own progress lines: the aged
# images made before the first case, then the cases of each scenario (each
# case whole: make, work, probes, cold read, layout, release), cases
# started from an aged image apart (the first of each image copies it into
# the run's pool, the others reflink it).
#
# Usage: sudo bench/preset-cold.sh [BUDGET_S] [FSLAB] [CACHED_BUDGET_S]
#   BUDGET_S         the cold run's budget in seconds (default 300)
#   FSLAB            the fslab binary (default: target/release/fslab, built here)
#   CACHED_BUDGET_S  the cached run's budget in seconds (default 180; none:
#                    the cold run alone)
# Needs root, python3 and /usr/bin/time; about 25 GiB free in /var/tmp
# while it runs (five aged images in the cache, and their copies in the
# run's reflink pool where /var/tmp is not btrfs). Exit 0 when
# each run is within its budget, 1 when one is over or a case failed, 3
# when it cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${1:-300}
fslab=${2:-}
cached_budget=${3:-180}
[ "$(id -u)" -eq 0 ] || { echo "run as root: the preset makes scratch loop file systems" >&2; exit 3; }
command -v python3 >/dev/null || { echo "python3 is missing: apt-get install python3" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing: apt-get install time" >&2; exit 3; }
if [ -z "$fslab" ]; then
    cargo build --release --locked -q
    fslab=$PWD/target/release/fslab
fi

out=$(mktemp -d /var/tmp/fslab-preset-cold-XXXXXX)
trap 'rm -rf "$out"' EXIT

# One run of the preset over the cache in $out/cache, timed and split.
# Progress goes line by line to stderr when it is not a terminal.
timed() {
    local label=$1 budget=$2
    /usr/bin/time -f '%e %U %S' -o "$out/time" \
        "$fslab" run --preset seeds --no-store --json --progress lines \
        --scratch "$out/scratch" --age-cache "$out/cache" >"$out/run.json" 2>"$out/progress" || true
    python3 - "$out/time" "$out/progress" "$out/run.json" "$budget" "$label" <<'PY'
import collections, json, re, sys
wall, user, system = (float(x) for x in open(sys.argv[1]).read().split()[-3:])
progress = open(sys.argv[2]).read().splitlines()
budget, label = float(sys.argv[4]), sys.argv[5]
try:
    cases = json.load(open(sys.argv[3]))["run"]["cases"]
except (ValueError, KeyError):
    print("the run gave no JSON; its last progress lines:", *progress[-10:], sep="\n")
    sys.exit(1)
aged = next((l for l in progress if l.startswith("aged ")), None)
aging_s = float(re.search(r"in ([0-9.]+) s", aged).group(1)) if aged else 0.0
per = collections.defaultdict(lambda: [0, 0.0])
for line in progress:
    m = re.search(r"\] [0-9:]+ (\S+) on (\S+) r\d+ (?:ok|failed) in (?:(\d+) min )?([0-9.]+) s", line)
    if m:
        # Cases started from an aged image apart: each copies it first.
        part = m.group(1) + (" aged" if "@age=" in m.group(2) else "")
        per[part][0] += 1
        per[part][1] += 60 * int(m.group(3) or 0) + float(m.group(4))
failed = [c for c in cases if c["status"] != "ok"]
print(f"preset {label}: {wall:.0f} s ({wall / 60:.1f} min) against a budget of {budget:.0f} s "
      f"({wall / budget:.2f}x, {'ok' if wall <= budget else 'OVER'}), {len(cases)} cases, {len(failed)} failed; "
      f"CPU {user + system:.0f} s")
print(f"  {'aging before the first case':28} {aging_s:7.1f} s   ({aged or 'no image aged ahead'})")
for scenario, (n, s) in sorted(per.items(), key=lambda kv: -kv[1][1]):
    print(f"  {scenario + ' cases':28} {s:7.1f} s   ({n} cases, {s / n:.1f} s each)")
rest = wall - aging_s - sum(s for _, s in per.values())
print(f"  {'the rest (start, verdicts, end)':28} {rest:7.1f} s")
sys.exit(0 if wall <= budget and not failed else 1)
PY
}

status=0
timed "from a cold cache" "$budget" || status=1
if [ "$cached_budget" != none ]; then
    echo
    timed "with its images cached" "$cached_budget" || status=1
fi
exit "$status"
