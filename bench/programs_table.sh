#!/usr/bin/env bash
# What a crash leaves of the programs people run, as a table like ALICE's
# (OSDI 2014) for today's kernel: dpkg, git, SQLite and the atomic-replace
# idiom, each under its settings, on ext4 (ordered and data=journal), xfs
# and btrfs, alone and beside a neighbour fsyncing in the same folder.
#
# Each cell is "bad states of states judged" (`--crash flush`: every state
# after a flush the device was sent), alone / beside the neighbour; the
# cost column is the work's flushes on ext4 alone. Below the table, the
# most frequent bad outcome of each program, as its checker said it.
#
# Every case is one of eight stored runs (one per program and ext4 mode),
# so `fslab report RUN` draws the states of each and `fslab show RUN` the
# crash table; the run ids are printed at the end.
#
# Usage: sudo bench/programs_table.sh [MAX_STATES] [FSLAB]
#   MAX_STATES  states judged at most a case, thinned evenly (default 100)
#   FSLAB       the fslab binary (default: target/release/fslab, built here)
# Needs root, dpkg-deb, git, sqlite3, qemu-storage-daemon and python3.
# Exit 0 when the table was made, 1 when a run failed, 3 when it cannot
# run here. About 40 minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."

max_states=${1:-100}
fslab=${2:-}
[ "$(id -u)" -eq 0 ] || { echo "run as root: crash states are mounted on loop devices" >&2; exit 3; }
for tool in dpkg-deb git sqlite3 qemu-storage-daemon python3; do
    command -v "$tool" >/dev/null || { echo "$tool is missing: bash scripts/setup.sh installs what fslab needs" >&2; exit 3; }
done
if [ -z "$fslab" ]; then
    cargo build --release --locked -q
    fslab=$PWD/target/release/fslab
fi

out=$(mktemp -d /var/tmp/fslab-programs-XXXXXX)
# Kept when a run failed, for its cases; removed once the table is made.
trap 'status=$?; [ "$status" -ne 0 ] || rm -rf "$out"' EXIT

declare -A settings=(
    [dpkg]="--set unsafe_io=no,yes"
    [git]="--set fsync=default,committed,all"
    [sqlite]="--set journal=delete,truncate,wal --set synchronous=normal,full,extra"
    [atomic-replace]="--set form=full,no-dir-sync,no-file-sync,none"
)
for program in dpkg git sqlite atomic-replace; do
    for mode in ordered journal; do
        if [ "$mode" = ordered ]; then where=(--fs ext4,xfs,btrfs); else where=(--fs ext4 --mount-opt ext4=data=journal); fi
        echo "== $program, ${where[*]}" >&2
        # shellcheck disable=SC2086 # the settings are words on purpose
        "$fslab" run "$program" "${where[@]}" ${settings[$program]} --crash flush \
            --crash-max-states "$max_states" --neighbour-fsync off,0s --tag programs-table \
            --json --progress lines >"$out/$program-$mode.json" \
            || { echo "the $program run ($mode) failed; its cases are in $out/$program-$mode.json" >&2; exit 1; }
    done
done

python3 - "$out" <<'PY'
import json, re, sys
from collections import Counter, defaultdict

out = sys.argv[1]
programs = ["dpkg", "git", "sqlite", "atomic-replace"]
columns = ["ext4", "ext4 data=journal", "xfs", "btrfs"]
cells = defaultdict(dict)  # (program, setting) -> {(column, neighbour): (bad, judged)}
flushes = {}
outcomes = defaultdict(Counter)
runs = []
kernel = ""
for program in programs:
    for mode in ["ordered", "journal"]:
        run = json.load(open(f"{out}/{program}-{mode}.json"))["run"]
        runs.append(f"{run['id']} ({program}{', data=journal' if mode == 'journal' else ''})")
        for case in run["cases"]:
            setting = ", ".join(f"{k}={v}" for k, v in sorted(case["params"].items())
                                if k in ("unsafe_io", "fsync", "journal", "synchronous", "form"))
            column = case["fs"] + (" data=journal" if mode == "journal" else "")
            beside = "neighbour_fsync" in case["conditions"]
            states = (case.get("crash") or {}).get("states")
            if case["status"] != "ok" or not states:
                cells[(program, setting)][(column, beside)] = None
                continue
            kernel = states.get("kernel", kernel)
            bad = int(case["figures"]["crash_bad"]["value"] or 0)
            cells[(program, setting)][(column, beside)] = (bad, states["judged"])
            if column == "ext4" and not beside:
                flushes[(program, setting)] = case["figures"]["flushes"]["value"]
            for o in states.get("bad_outcomes", []):
                said = o["detail"].split("its output:\n")[-1].splitlines()[0] if o["detail"] else ",".join(o["classes"])
                outcomes[program][re.sub(r"\d+", "N", said)[:70]] += o["states"]

def cell(v):
    if v is None:
        return "failed"
    bad, judged = v
    return f"{bad}/{judged}"

print(f"Bad crash states of states judged (alone / beside a neighbour's fsync), kernel {kernel}")
print()
print("| program, setting | flushes | " + " | ".join(columns) + " |")
print("|---|---:|" + "---|" * len(columns))
for (program, setting), row in cells.items():
    f = flushes.get((program, setting))
    texts = [f"{cell(row.get((c, False)))} / {cell(row.get((c, True)))}" for c in columns]
    bold = ["**" + t + "**" if any(v and v[0] for v in (row.get((c, False)), row.get((c, True)))) else t
            for c, t in zip(columns, texts)]
    print(f"| {program}, {setting} | {'' if f is None else int(f)} | " + " | ".join(bold) + " |")
print()
for program in programs:
    if outcomes[program]:
        said, n = outcomes[program].most_common(1)[0]
        print(f"- {program}: most often \"{said}\" ({n} states; {len(outcomes[program])} kinds in all)")
print()
print("runs: " + "; ".join(runs) + " (fslab report RUN, fslab show RUN)")
PY
