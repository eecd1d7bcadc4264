#!/usr/bin/env bash
# The hunt the README shows, timed whole against its budget: where seed
# 000's claim (a file filled through a mapping in the seed's order ends in
# pieces) starts to show along a memory limit, for a 256 MiB file on xfs,
# from 128 MiB to 1 GiB.
#
# It prints the bracket, the wall time against the 60 s budget (the
# binary's, /usr/bin/time), the steps and cases measured, and each point's
# value with its cases' seconds, so the slow points are seen. A point that
# ran busy is measured twice: run it alone for the figure the budget is
# for (the script says how many points ran busy).
#
# Usage: sudo bench/hunt.sh [BUDGET_S] [FSLAB]
#   BUDGET_S  the budget in seconds (default 60)
#   FSLAB     the fslab binary (default: target/release/fslab, built here)
# Needs root, a memory controller, python3 and /usr/bin/time. Exit 0 within
# the budget with a bracket, 1 over it or without one, 3 when it cannot run
# here.
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${1:-60}
fslab=${2:-}
[ "$(id -u)" -eq 0 ] || { echo "run as root: a hunt makes scratch loop file systems and memory cgroups" >&2; exit 3; }
command -v python3 >/dev/null || { echo "python3 is missing: apt-get install python3" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing: apt-get install time" >&2; exit 3; }
if [ -z "$fslab" ]; then
    cargo build --release --locked -q
    fslab=$PWD/target/release/fslab
fi

out=$(mktemp -d /var/tmp/fslab-hunt-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT

status=0
/usr/bin/time -f '%e' -o "$out/time" \
    "$fslab" hunt mmap-fill --fs xfs --set size=256M --vary memory=128M..1G --no-store --json \
    --progress lines --scratch "$out/scratch" >"$out/hunt.json" 2>"$out/progress" || status=$?
if [ "$status" -ne 0 ]; then
    tail -5 "$out/progress" >&2
    echo "the hunt ended with exit $status" >&2
    exit 1
fi

python3 - "$out/time" "$out/hunt.json" "$budget" "$out/progress" <<'PY'
import collections, json, re, sys
wall = float(open(sys.argv[1]).read().split()[-1])
hunt = json.load(open(sys.argv[2]))["hunt"]
budget = float(sys.argv[3])
# Each case's time, from its progress line ("memory 215M r1 ok in 35.7 s",
# "... ok in 1 min 2 s").
took = collections.defaultdict(list)
for line in open(sys.argv[4]):
    m = re.search(r"memory (\S+) r\d+ ok in (?:(\d+) min )?([\d.]+) s", line)
    if m:
        took[m.group(1)].append(60 * int(m.group(2) or 0) + float(m.group(3)))
steps = hunt["steps"]
busy = [s["shown"] for s in steps if s.get("ran_busy")]
print(hunt["summary"])
print()
print(f"{'point':>8}  {'claim':6}  {'figure':>9}  case seconds")
for s in steps:
    secs = ", ".join(f"{t:.1f}" for t in took.get(s["shown"], [])) or "-"
    figure = "-" if s["value_of_figure"] is None else f"{s['value_of_figure']:,.0f}"
    claim = {True: "shows", False: "gone"}.get(s["shows"], "?")
    print(f"{s['shown']:>8}  {claim:6}  {figure:>9}  {secs}")
ok = wall <= budget and hunt["outcome"] == "bracket"
print()
print(f"hunt whole: {wall:.1f} s of the {budget:.0f} s budget ({wall / budget:.2f}, {'ok' if ok else 'OVER'}); "
      f"{len(steps)} steps, {sum(map(len, took.values()))} cases; outcome {hunt['outcome']}")
if busy:
    print(f"{len(busy)} of {len(steps)} points ran busy and were measured again ({', '.join(busy)}): "
          "the budget is for the hunt alone")
sys.exit(0 if ok else 1)
PY
