#!/usr/bin/env bash
# What a crash leaves of the programs people run, as a table like ALICE's
# (OSDI 2014) for today's kernel: dpkg, git, SQLite and the atomic-replace
# idiom, each under its settings, on ext4 (ordered and data=journal), xfs
# and btrfs, alone and beside a neighbour fsyncing in the same folder.
#
# Each cell is "bad states of states judged" (`--crash flush`: every state
# after a flush the device was sent), alone / beside the neighbour; the
# cost column is the work's flushes on ext4 alone. The last column is ext4
# again under another kernel, booted in a QEMU guest (Debian's 6.1 by
# default; emulated where /dev/kvm cannot run it, so fewer states a case).
# Below the table, the most frequent bad outcome of each program, as its
# checker said it.
#
# Every case is one of the stored runs (one per program and ext4 mode on
# the host, one per program and neighbour in the guest), so `fslab report
# RUN` draws the states of each and `fslab show RUN` the crash table; the
# run ids are printed at the end.
#
# Usage: sudo bench/programs_table.sh [MAX_STATES] [FSLAB] [KERNEL] [KERNEL_MAX_STATES]
#   MAX_STATES         states judged at most a host case, thinned evenly (default 100;
#                      none: the guest's column alone)
#   FSLAB              the fslab binary (default: target/release/fslab, built here)
#   KERNEL             the guest's kernel, as --kernel takes it (default
#                      debian:6.1.0-57; none: no guest column)
#   KERNEL_MAX_STATES  states judged at most a guest case (default 20)
# Needs root, dpkg-deb, git, sqlite3, qemu-storage-daemon and python3, and
# for the guest QEMU and a static busybox (bash scripts/setup.sh).
# Exit 0 when the table was made, 1 when a run failed, 2 when nothing was
# asked, 3 when it cannot run here. About 40 minutes on two cores, and 30
# more for the guest's.
set -euo pipefail
cd "$(dirname "$0")/.."

max_states=${1:-100}
fslab=${2:-}
kernel=${3:-debian:6.1.0-57}
kernel_max_states=${4:-20}
[ "$max_states" != none ] || [ "$kernel" != none ] || { echo "nothing to do: MAX_STATES and KERNEL both none" >&2; exit 2; }
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
        [ "$max_states" != none ] || break
        if [ "$mode" = ordered ]; then where=(--fs ext4,xfs,btrfs); else where=(--fs ext4 --mount-opt ext4=data=journal); fi
        echo "== $program, ${where[*]}" >&2
        # shellcheck disable=SC2086 # the settings are words on purpose
        "$fslab" run "$program" "${where[@]}" ${settings[$program]} --crash flush \
            --crash-max-states "$max_states" --neighbour-fsync off,0s --tag programs-table \
            --json --progress lines >"$out/$program-$mode.json" \
            || { echo "the $program run ($mode) failed; its cases are in $out/$program-$mode.json" >&2; exit 1; }
    done
    # A guest takes one neighbour value a run.
    for neighbour in off 0s; do
        [ "$kernel" != none ] || break
        echo "== $program, ext4 under $kernel, neighbour_fsync=$neighbour" >&2
        # shellcheck disable=SC2086 # the settings are words on purpose
        "$fslab" run "$program" --fs ext4 --kernel "$kernel" ${settings[$program]} --crash flush \
            --crash-max-states "$kernel_max_states" --neighbour-fsync "$neighbour" --tag programs-table \
            --json --progress lines >"$out/$program-guest-$neighbour.json" \
            || { echo "the $program run under $kernel failed; its cases are in $out/$program-guest-$neighbour.json" >&2; exit 1; }
    done
done

python3 - "$out" "$kernel" <<'PY'
import json, os, re, sys
from collections import Counter, defaultdict

out, guest = sys.argv[1], sys.argv[2]
programs = ["dpkg", "git", "sqlite", "atomic-replace"]
columns = [c for c in ["ext4", "ext4 data=journal", "xfs", "btrfs"] if os.path.exists(f"{out}/dpkg-ordered.json")]
cells = defaultdict(dict)  # (program, setting) -> {(column, neighbour): (bad, judged)}
flushes = {}
outcomes = defaultdict(Counter)
runs = []
kernel = ""
for program in programs:
    files = [(f"{program}-{mode}.json", mode, None) for mode in ["ordered", "journal"]]
    files += [(f"{program}-guest-{n}.json", "guest", n != "off") for n in ["off", "0s"]]
    for name, mode, guest_beside in files:
        if not os.path.exists(f"{out}/{name}"):
            continue  # a part not asked for: the host's or the guest's
        run = json.load(open(f"{out}/{name}"))["run"]
        runs.append(f"{run['id']} ({program}{', data=journal' if mode == 'journal' else ''}"
                    f"{', ' + guest if mode == 'guest' else ''})")
        for case in run["cases"]:
            setting = ", ".join(f"{k}={v}" for k, v in sorted(case["params"].items())
                                if k in ("unsafe_io", "fsync", "journal", "synchronous", "form"))
            column = case["fs"] + (" data=journal" if mode == "journal" else "")
            beside = "neighbour_fsync" in case["conditions"]
            if mode == "guest":
                release = case["conditions"].get("kernel") or guest
                column, beside = f"ext4, {release} guest", guest_beside
                if column not in columns:
                    columns.append(column)
            states = (case.get("crash") or {}).get("states")
            if case["status"] != "ok" or not states:
                cells[(program, setting)][(column, beside)] = None
                continue
            if mode != "guest":
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

print(f"Bad crash states of states judged (alone / beside a neighbour's fsync), kernel {kernel or 'of the guest'}")
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
        kinds = len(outcomes[program])
        print(f"- {program}: most often \"{said}\" ({n} states; {kinds} kind{'s' if kinds > 1 else ''} in all)")
print()
print("runs: " + "; ".join(runs) + " (fslab report RUN, fslab show RUN)")
PY
