#!/usr/bin/env bash
# Benchmark: `fslab frag` against `find | xargs filefrag` and against the
# syscall floor (bench/syscall-floor.c: getdents64, then openat, FIEMAP and
# close per file, on every core) over the same tree of 100,000 files, warm
# and cold cache, with hyperfine. Prints the ratios filefrag/fslab (higher
# is better for fslab), fslab/floor (1.0 is the floor) and filefrag/floor
# (the most any program making the floor's calls could reach against
# filefrag here), and checks that all three counted the same extents.
#
# On a shared machine a command's time drifts by more than the gaps being
# measured, so the three are timed in rounds: each round times all three
# back to back (in a shuffled order), a ratio is taken within each round,
# and the figure quoted is the median of the rounds' ratios, with the
# middle half of them beside it.
#
# Usage: sudo bench/frag-vs-filefrag.sh [FILES] [FS] [ROUNDS]
#   FILES   files in the tree (default 100000), in directories of 1000
#   FS      file system to build the tree on (default ext4)
#   ROUNDS  warm rounds of 3 runs each (default 12; cold: half as many
#           rounds of 1 run, the page cache dropped before every run)
# Needs root (a loop-mounted scratch file system, drop_caches), hyperfine,
# python3, gcc and a release build (made here).
set -euo pipefail
cd "$(dirname "$0")/.."

files=${1:-100000}
fs=${2:-ext4}
rounds=${3:-12}
[ "$(id -u)" -eq 0 ] || { echo "run as root: the tree lives on a scratch loop device" >&2; exit 3; }
command -v hyperfine >/dev/null || { echo "hyperfine is missing: apt-get install hyperfine" >&2; exit 3; }

cargo build --release --locked -q
fslab=$PWD/target/release/fslab

work=$(mktemp -d /var/tmp/fslab-bench-XXXXXX)
dev=""
cleanup() {
    mountpoint -q "$work/mnt" 2>/dev/null && umount "$work/mnt"
    [ -n "$dev" ] && losetup -d "$dev"
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
gcc -O2 -pthread -o "$work/syscall-floor" bench/syscall-floor.c

truncate -s 4G "$work/image"
dev=$(losetup --find --show --direct-io=on "$work/image")
case $fs in
    xfs|btrfs) "mkfs.$fs" -q -f "$dev" ;;
    *) "mkfs.$fs" -q -F "$dev" ;;
esac
mkdir "$work/mnt"
mount "$dev" "$work/mnt"

echo "building $files files on $fs ..." >&2
python3 - "$work/mnt/tree" "$files" <<'PY'
import os, sys, random
root, total = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)  # the same tree every run
# Sizes shaped like a source tree: most files a few KiB, some larger.
sizes = [0, 100, 1500, 4096, 7000, 12000, 30000, 70000, 200000]
weights = [2, 10, 25, 20, 15, 12, 8, 6, 2]
blob = os.urandom(256 * 1024)
for n in range(total):
    d = os.path.join(root, "d%03d" % (n // 1000))
    if n % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    size = rng.choices(sizes, weights)[0]
    with open(os.path.join(d, "f%05d.c" % n), "wb") as f:
        f.write(blob[:size])
PY
sync

tree=$work/mnt/tree
threads=$(nproc)
fslab_cmd="$fslab frag --json --threads $threads $tree"
filefrag_cmd="find $tree -type f -print0 | xargs -0 filefrag"
floor_cmd="$work/syscall-floor $tree $threads"

# Same answer first: total extents by fslab and filefrag (contiguous
# records merged), FIEMAP records by fslab and the floor (as returned).
read -r ours records < <($fslab_cmd | python3 -c 'import json,sys; s=json.load(sys.stdin)["summary"]; print(s["extents"], s["records"])')
theirs=$(eval "$filefrag_cmd" | awk -F': ' '{split($NF, w, " "); s += w[1]} END {print s}')
floor=$($floor_cmd | awk '{print $4}')
echo "extents: fslab $ours, filefrag $theirs; FIEMAP records: fslab $records, floor $floor"
[ "$ours" = "$theirs" ] && [ "$records" = "$floor" ] || { echo "MISMATCH in extent totals" >&2; exit 1; }

# One round: the three commands timed back to back in a shuffled order.
round() { # KIND INDEX HYPERFINE-ARGS...
    local kind=$1 index=$2; shift 2
    local args=() name
    for name in $(printf '%s\n' fslab filefrag floor | shuf); do
        case $name in
            fslab) args+=(-n fslab "$fslab_cmd >/dev/null") ;;
            filefrag) args+=(-n filefrag "$filefrag_cmd >/dev/null") ;;
            floor) args+=(-n floor "$floor_cmd >/dev/null") ;;
        esac
    done
    hyperfine --style none "$@" --export-json "$work/$kind-$index.json" "${args[@]}"
}

echo "== warm cache: $rounds rounds of 3 runs each" >&2
for i in $(seq "$rounds"); do round warm "$i" --warmup 1 --runs 3; printf '.' >&2; done
echo >&2
cold_rounds=$(( (rounds + 1) / 2 ))
echo "== cold cache: $cold_rounds rounds of 1 run each, drop_caches before every run" >&2
for i in $(seq "$cold_rounds"); do
    round cold "$i" --runs 1 --prepare 'sync; echo 3 > /proc/sys/vm/drop_caches'
    printf '.' >&2
done
echo >&2

python3 - "$work" "$files" "$(nproc)" <<'PY'
import glob, json, statistics, sys
work, files, cores = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def middle(values):
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values):.2f} ({q[0]:.2f}-{q[2]:.2f})"

print(f"{files:,} files, {cores} cores; each ratio the median of the rounds' own ratios (middle half in brackets)")
print(f"{'cache':<6} {'rounds':>6} {'fslab':>8} {'filefrag':>9} {'floor':>8}  {'fslab/floor':<18} {'filefrag/fslab':<18} {'filefrag/floor':<18}")
for kind in ("warm", "cold"):
    rounds = []
    for path in sorted(glob.glob(f"{work}/{kind}-*.json")):
        runs = {r["command"]: statistics.median(r["times"]) for r in json.load(open(path))["results"]}
        rounds.append(runs)
    times = {n: statistics.median(r[n] for r in rounds) for n in ("fslab", "filefrag", "floor")}
    ratio = lambda a, b: middle([r[a] / r[b] for r in rounds])
    print(f"{kind:<6} {len(rounds):>6} {times['fslab']:>7.3f}s {times['filefrag']:>8.3f}s {times['floor']:>7.3f}s  "
          f"{ratio('fslab', 'floor'):<18} {ratio('filefrag', 'fslab'):<18} {ratio('filefrag', 'floor'):<18}")
print("goals: fslab/floor <= 1.1; filefrag/fslab >= 2.5 (filefrag/floor bounds it)")
PY
