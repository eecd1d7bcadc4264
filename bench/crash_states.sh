#!/usr/bin/env bash
# Crash-state benchmark: what judging a replace-files case's crash states
# costs, per state and per case, on ext4, xfs and btrfs (--crash, capped at
# 100 states a case: the goal is 20 states a second on every file system);
# with KERNEL, the same in a QEMU guest of that kernel, which judges its
# states itself (capped at 20 states a case: the goal is 1 state a second).
#
# Each run is one `fslab run replace-files --crash MODEL` case, timed whole
# by /usr/bin/time (make, work, recording's end, every state judged,
# release); crash_state_ms is fslab's judging time over its states (rebuild,
# attach, mount, the checker's look, unmount, the file system's checker,
# release; one state's checker runs while the next is made).
#
# Usage: sudo bench/crash_states.sh [RUNS] [MODEL] [FSLAB] [KERNEL]
#   RUNS    runs per file system (default 3)
#   MODEL   the crash model (default subset:8)
#   FSLAB   the fslab binary (default: target/release/fslab, built here)
#   KERNEL  a guest's kernel, as --kernel takes it (debian:6.1.0-57, say;
#           default none: on the host)
# Needs root, qemu-storage-daemon, python3 and /usr/bin/time (and for a
# guest, QEMU and busybox: bash scripts/setup.sh). Exit 0 when every run
# judged at least its goal's states a second, 1 when one did not, 3 when it
# cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
model=${2:-subset:8}
fslab=${3:-}
kernel=${4:-none}
cap=100 goal=20 guest=()
if [ "$kernel" != none ]; then
    cap=20 goal=1 guest=(--kernel "$kernel")
fi
[ "$(id -u)" -eq 0 ] || { echo "run as root: crash states are mounted on loop devices" >&2; exit 3; }
command -v qemu-storage-daemon >/dev/null || { echo "qemu-storage-daemon is missing: apt-get install qemu-system-common" >&2; exit 3; }
command -v python3 >/dev/null || { echo "python3 is missing: apt-get install python3" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is missing: apt-get install time" >&2; exit 3; }
if [ -z "$fslab" ]; then
    cargo build --release --locked -q
    fslab=$PWD/target/release/fslab
fi

out=$(mktemp -d /var/tmp/fslab-crash-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT

for fs in ext4 xfs btrfs; do
    for run in $(seq "$runs"); do
        /usr/bin/time -f %e -o "$out/$fs-$run.time" "$fslab" run replace-files --fs "$fs" --size 512M \
            --crash "$model" --crash-max-states "$cap" --set strategy=fsync-each --set files=40 "${guest[@]}" \
            --no-store --json --scratch "$out/scratch" >"$out/$fs-$run.json" 2>"$out/$fs-$run.err" \
            || { echo "$fs run $run failed:"; cat "$out/$fs-$run.err"; exit 1; }
    done
done

python3 - "$out" "$runs" "$model" "$cap" "$goal" "$kernel" <<'PY'
import json, sys, statistics
out, runs, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cap, goal, kernel = int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
where = "on the host" if kernel == "none" else f"in a guest of {kernel}"
slow = False
print(f"replace-files, 40 files, fsync-each, --crash {model}, at most {cap} states a case, {where}; {runs} runs each")
print(f"{'fs':6} {'states':>7} {'ms/state':>14} {'states/s':>10} {'case s':>14} {'s per 100 states':>17}  (goal: {goal:g} a second)")
for fs in ["ext4", "xfs", "btrfs"]:
    states, ms, case_s = [], [], []
    for run in range(1, runs + 1):
        case = json.load(open(f"{out}/{fs}-{run}.json"))["run"]["cases"][0]
        f = case["figures"]
        if case["status"] != "ok":
            sys.exit(f"{fs} run {run}: {case['error']}")
        states.append(f["crash_states"]["value"])
        ms.append(f["crash_state_ms"]["value"])
        case_s.append(float(open(f"{out}/{fs}-{run}.time").read().split()[-1]))
    per100 = [c / s * 100 for c, s in zip(case_s, states)]
    rate = [1000 / m for m in ms]
    slow |= min(rate) < goal
    rng = lambda xs, fmt: f"{fmt.format(min(xs))}-{fmt.format(max(xs))}"
    print(f"{fs:6} {rng(states, '{:.0f}'):>7} {rng(ms, '{:.0f}'):>14} {rng(rate, '{:.1f}' if goal < 10 else '{:.0f}'):>10} {rng(case_s, '{:.1f}'):>14} {rng(per100, '{:.1f}'):>17}")
sys.exit(1 if slow else 0)
PY
