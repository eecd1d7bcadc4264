#!/usr/bin/env bash
# `fslab history` over 200 stored runs of the seeds' replace-files in one
# PostgreSQL store (scripts/postgres.sh's server): one real run, stored as
# 200 nights, then the history timed whole, five times. The goal: under 2 s.
#
# Usage: sudo bench/history-postgres.sh
# Exit 0 when the median is under 2 s, 1 when not, 3 when it cannot run here.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root: the real run makes a scratch file system" >&2; exit 3; }
url=$(bash scripts/postgres.sh) || { echo "no PostgreSQL server (scripts/postgres.sh)" >&2; exit 3; }
cargo build --release --locked -q
out=$(mktemp -d /var/tmp/fslab-history-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT
target/release/fslab run replace-files --fs ext4 --size 128M --no-store --json --progress none >"$out/run.json"
# A schema of the bench's own, dropped at the end.
schema="fslab_history_bench_$$"
psql "$url" -qc "CREATE SCHEMA $schema" >/dev/null
trap 'psql "$url" -qc "SET client_min_messages = warning; DROP SCHEMA IF EXISTS '"$schema"' CASCADE" >/dev/null; rm -rf "$out"' EXIT
store="$url?options=-csearch_path%3D$schema"
cargo bench --bench history_store -q -- "$store" "$out/run.json" "$PWD/target/release/fslab" | tee "$out/said"
median=$(sed -n 's/.*median \([0-9.]*\) s.*/\1/p' "$out/said")
python3 -c "import sys; sys.exit(0 if float('$median') < 2 else 1)"
