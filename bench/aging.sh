#!/usr/bin/env bash
# Aging benchmark: what `--age` costs the first time, against its budget,
# and that a second run of the same key costs nothing.
#
# For each file system it ages a SIZE scratch image with PROFILE (the
# issue's yardstick: 2 GiB, churn to 80% in 4 rounds, within 30 s here),
# through a fresh cache, then runs the same key again. It prints, per file
# system: the time to make the entry (mkfs, aging, unmount, keeping the
# image in the cache and hashing it) against the 30 s budget, as GiB of
# image per second and MiB written by aging per second, the fill reached,
# and the second run's aging time (0: the cache hit).
#
# Usage: sudo bench/aging.sh [SIZE] [PROFILE] [FS,...]
#   SIZE     image size (default 2G)
#   PROFILE  aging profile (default churn)
#   FS       file systems (default xfs,ext4,btrfs)
# Needs root and python3; builds fslab --release. Exit 0 when every aging
# took under 30 s and every second run hit the cache, 1 when not, 3 when it
# cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."

size=${1:-2G}
profile=${2:-churn}
fs_list=${3:-xfs,ext4,btrfs}
[ "$(id -u)" -eq 0 ] || { echo "run as root: aging makes scratch loop file systems" >&2; exit 3; }
command -v python3 >/dev/null || { echo "python3 is missing: apt-get install python3" >&2; exit 3; }

cargo build --release --locked -q
fslab=$PWD/target/release/fslab

out=$(mktemp -d /var/tmp/fslab-aging-XXXXXX)
trap 'rm -rf "$out"' EXIT

status=0
for fs in ${fs_list//,/ }; do
    for pass in first second; do
        # The smallest work there is: the run is here for its starting state.
        "$fslab" run create-file --json --no-store --fs "$fs" --size "$size" --set size=4M \
            --age "$profile" --scratch "$out/scratch" --age-cache "$out/cache" >"$out/$fs-$pass.json"
    done
    python3 - "$out/$fs-first.json" "$out/$fs-second.json" "$fs" "$size" <<'PY' || status=1
import json, sys
budget = 30.0
first, second = (json.load(open(p))["run"]["cases"][0] for p in sys.argv[1:3])
fs, size = sys.argv[3], sys.argv[4]
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
image = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
s1, s2 = first["start"], second["start"]
fill = first["figures"]["start_fill"]["value"]
free_extents = first["figures"]["start_free_extents"]["value"]
free_extents = "no GETFSMAP" if free_extents is None else f"{free_extents:.0f}"
secs = s1["aging_seconds"]
written = next((n for n in s1.get("notes", []) if n.startswith("aging made")), "")
mib = int(written.split("writing ")[1].split(" MiB")[0]) if "writing " in written else None
rate = f", {mib / secs:.0f} MiB written per s" if mib else ""
hit = s2["cache_hit"] and s2["aging_seconds"] == 0
ok = secs < budget and hit
print(f"{fs:6} {size}: made in {secs:.1f} s of the {budget:.0f} s budget ({secs / budget:.2f}, "
      f"{'ok' if secs < budget else 'OVER'}; {image / secs / 2**30:.2f} GiB of image per s{rate}), "
      f"fill {fill:.1%}, free extents: {free_extents}; "
      f"second run: aging {s2['aging_seconds']:.1f} s, cache {'hit' if s2['cache_hit'] else 'MISS'}")
sys.exit(0 if ok else 1)
PY
done
exit $status
