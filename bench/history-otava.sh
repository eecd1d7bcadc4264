#!/usr/bin/env bash
# Apache Otava's detector on the cells of `cargo bench --bench history`, for
# the README's table beside fslab history's own rates. Installs Otava from
# PyPI into a fresh virtual environment of its own (removed at exit).
# Usage: bash bench/history-otava.sh [SERIES]   (default 1000 a cell)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$(mktemp -d "${TMPDIR:-/tmp}/fslab-otava.XXXXXX")
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'apache-otava==0.8.0' >&2
"$venv/bin/python" "$here/history_otava.py" "$@"
