#!/usr/bin/env bash
# Bisect benchmark: what `fslab bisect` costs and how often a timing bisect
# is right.
#
#  1. One kernel step: `fslab exec --kernel debian:K` of a one-file command,
#     timed whole by /usr/bin/time (prepare, boot, case, power-off, release),
#     with the guest's own boot and wall seconds from its record.
#  2. A whole bisect over eight Debian kernels (6.1.0-47..6.1.0-54) of a
#     command whose journal commits change at 6.1.0-52: its wall time, its
#     steps, and whether it named 6.1.0-52.
#  3. TRIES timing bisects over a 16-commit C program that spins 25% longer
#     from commit 11 (--figure wall_s, no store): how many named commit 11,
#     how many said can't tell, how many named a wrong commit (the goal:
#     none), and their wall times.
#
# Usage: sudo bench/bisect.sh [TRIES] [FSLAB]
#   TRIES  timing bisects (default 10)
#   FSLAB  the fslab binary (default: target/release/fslab, built here)
# Needs root, QEMU, apt (Debian's kernels), git, cc, python3, /usr/bin/time.
# Exit 0 when no bisect named a wrong point, 1 when one did, 3 when it
# cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."

tries=${1:-10}
fslab=${2:-}
[ "$(id -u)" -eq 0 ] || { echo "run as root: bisects make scratch file systems and boot guests" >&2; exit 3; }
for tool in qemu-system-x86_64 git cc python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (scripts/setup.sh --tests installs it)" >&2; exit 3; }
done
if [ -z "$fslab" ]; then
    cargo build --release --locked -q
    fslab=$PWD/target/release/fslab
fi

out=$(mktemp -d /var/tmp/fslab-bisect-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT
mkdir "$out/scratch"

# 1. One kernel step.
/usr/bin/time -f %e -o "$out/step.time" "$fslab" exec --kernel debian:6.1.0-54 --fs ext4 --no-store --json \
    --scratch "$out/scratch" --progress none -- sh -c 'echo x > f; sync f' >"$out/step.json" 2>"$out/step.err" \
    || { echo "the kernel step failed:"; cat "$out/step.err"; exit 1; }

# 2. An eight-kernel bisect.
script='case "$(uname -r)" in 6.1.0-4[0-9]-*|6.1.0-5[01]-*) n=1;; *) n=40;; esac; i=0; while [ $i -lt $n ]; do echo x > f$i; sync f$i; i=$((i+1)); done'
/usr/bin/time -f %e -o "$out/kernels.time" "$fslab" bisect --kernel debian:6.1.0-47..6.1.0-54 --fs ext4 \
    --figure journal_commits --no-store --json --scratch "$out/scratch" --progress none -- sh -c "$script" \
    >"$out/kernels.json" 2>"$out/kernels.err" || { echo "the kernel bisect failed:"; cat "$out/kernels.err"; exit 1; }

# 3. Timing bisects over a program's history.
repo=$out/repo
mkdir "$repo"
git -C "$repo" init -q
for n in $(seq 16); do
    spins=400000000
    [ "$n" -ge 11 ] && spins=500000000
    cat >"$repo/prog.c" <<EOF
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
/* version $n */
int main(void) {
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < ${spins}UL; i++) x += i;
    char name[32], buf[4096] = {0};
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "f%02d", i);
        int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf) return 1;
        close(fd);
    }
    return 0;
}
EOF
    git -C "$repo" add prog.c
    git -C "$repo" -c user.email=bench@example.com -c user.name=bench commit -q -m "commit $n"
done
eleventh=$(git -C "$repo" rev-parse HEAD~5)
for t in $(seq "$tries"); do
    /usr/bin/time -f %e -o "$out/timing-$t.time" "$fslab" bisect --repo "$repo" --good HEAD~15 --build 'cc -O1 -o prog prog.c' \
        --fs ext4 --size 256M --figure wall_s --no-store --json --scratch "$out/scratch" --progress none -- '{tree}/prog' \
        >"$out/timing-$t.json" 2>"$out/timing-$t.err" || true
done

python3 - "$out" "$tries" "$eleventh" <<'PY'
import json, sys, statistics
out, tries, eleventh = sys.argv[1], int(sys.argv[2]), sys.argv[3]
secs = lambda name: float(open(f"{out}/{name}.time").read().split()[-1])
case = json.load(open(f"{out}/step.json"))["run"]["cases"][0]
g = case.get("guest") or {}
print(f"one kernel step (6.1.0-54, {g.get('accel', '?')}): {secs('step'):.1f} s whole; the guest booted in "
      f"{g.get('boot_s') or 0:.1f} s and ran {g.get('wall_s') or 0:.1f} s")
b = json.load(open(f"{out}/kernels.json"))["bisect"]
o = b["outcome"]
named = b["points"][o["first_bad"]]["label"] if o["kind"] == "found" else o["kind"]
print(f"eight-kernel bisect: {secs('kernels'):.0f} s, {b['steps']} steps after the two ends, named {named} (the change: 6.1.0-52)")
right = cant = wrong = 0
times = []
for t in range(1, tries + 1):
    times.append(secs(f"timing-{t}"))
    try:
        b = json.load(open(f"{out}/timing-{t}.json"))["bisect"]
    except (ValueError, KeyError):
        wrong += 1
        print(f"  try {t}: no answer:", open(f"{out}/timing-{t}.err").read()[-400:])
        continue
    o = b["outcome"]
    if o["kind"] == "found":
        if b["points"][o["first_bad"]]["key"] == eleventh:
            right += 1
        else:
            wrong += 1
            print(f"  try {t}: named {b['points'][o['first_bad']]['label']}")
    else:
        cant += 1
print(f"timing bisects (wall_s, commit 11 25% slower): {tries} tries: {right} named commit 11, {cant} can't tell, "
      f"{wrong} wrong; median {statistics.median(times):.0f} s a bisect")
sys.exit(1 if wrong else 0)
PY
