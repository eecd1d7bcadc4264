#!/usr/bin/env bash
# Benchmark: `fslab frag` against `find | xargs filefrag` and against the
# syscall floor (bench/syscall-floor.c: getdents64, then openat, FIEMAP and
# close per file, on every core) over the same tree of 100,000 files, warm
# and cold cache, with hyperfine. Prints the ratios filefrag/fslab (higher
# is better for fslab) and fslab/floor (1.0 is the floor), and checks that
# all three counted the same extents.
#
# Usage: sudo bench/frag-vs-filefrag.sh [FILES] [FS]
#   FILES  files in the tree (default 100000), in directories of 1000
#   FS     file system to build the tree on (default ext4)
# Needs root (a loop-mounted scratch file system, drop_caches), hyperfine,
# python3, gcc and a release build (made here).
set -euo pipefail
cd "$(dirname "$0")/.."

files=${1:-100000}
fs=${2:-ext4}
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

echo "== warm cache"
hyperfine --style basic --warmup 2 --runs 10 --export-json "$work/warm.json" \
    -n fslab "$fslab_cmd >/dev/null" -n filefrag "$filefrag_cmd >/dev/null" -n floor "$floor_cmd >/dev/null"
echo "== cold cache (drop_caches before every run)"
hyperfine --style basic --runs 5 --prepare 'sync; echo 3 > /proc/sys/vm/drop_caches' --export-json "$work/cold.json" \
    -n fslab "$fslab_cmd >/dev/null" -n filefrag "$filefrag_cmd >/dev/null" -n floor "$floor_cmd >/dev/null"

python3 - "$work/warm.json" "$work/cold.json" "$files" <<'PY'
import json, sys, statistics
for label, path in (("warm", sys.argv[1]), ("cold", sys.argv[2])):
    runs = {r["command"]: r["times"] for r in json.load(open(path))["results"]}
    f, g, b = (statistics.median(runs[n]) for n in ("fslab", "filefrag", "floor"))
    print(f"{label}: {sys.argv[3]} files, median fslab {f:.3f} s, filefrag {g:.3f} s, floor {b:.3f} s; "
          f"filefrag/fslab = {g / f:.2f} (goal >= 2.5), fslab/floor = {f / b:.2f} (goal <= 1.1)")
PY
