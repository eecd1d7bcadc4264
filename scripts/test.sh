#!/usr/bin/env bash
# The project's whole check, as CI runs it: set up, lint, run every test.
# As root the tests make real ext2/ext3/ext4/xfs/btrfs file systems on loop
# devices, and skipping one is a failure. Afterwards nothing may be left:
# no mount, loop device or folder of this run's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# `scripts/test.sh -- ARGS` hands ARGS to every test binary: with
# RUSTC_BOOTSTRAP=1, `-- -Zunstable-options --report-time` times each test,
# and the 20 slowest are listed at the end.
test_args=()
if [ "${1:-}" = -- ]; then shift; test_args=("$@"); fi

# What the quick start needs, and what only the tests need: QEMU, a
# static busybox, Chromium, PostgreSQL, fio, hyperfine...
bash scripts/setup.sh --tests

log=$(mktemp)
hold_slurm=false
pg_url=
finish() {
    rm -f "$log"
    if $hold_slurm; then bash scripts/slurm.sh release $$ || true; fi
    # The role and database postgres.sh made for this run, whatever its end.
    if [ -n "$pg_url" ]; then bash scripts/postgres.sh drop "$pg_url" || true; fi
}
trap finish EXIT

if [ "$(id -u)" -eq 0 ]; then
    export FSLAB_REQUIRE_ROOT_TESTS=1
    # The store tests use a real PostgreSQL server, the report test a real
    # browser; as root both are set up here and skipping them is a failure.
    # A role and database of this run's own, with a random password that
    # only this environment (root's) holds; dropped on exit.
    FSLAB_TEST_POSTGRES=$(bash scripts/postgres.sh)
    if ! [[ "$FSLAB_TEST_POSTGRES" =~ ^postgres://[^[:space:]]+$ ]]; then
        echo "test: scripts/postgres.sh gave no server URL" >&2
        exit 3
    fi
    pg_url=$FSLAB_TEST_POSTGRES
    export FSLAB_TEST_POSTGRES FSLAB_REQUIRE_POSTGRES=1 FSLAB_REQUIRE_BROWSER=1
    # The sharding test submits a job array to a single-node Slurm cluster.
    # This run holds it: started if down, stopped at the end once no other
    # suite holds it, and never when it was running before any suite did.
    hold_slurm=true
    SLURM_CONF=$(bash scripts/slurm.sh hold $$)
    export SLURM_CONF FSLAB_TEST_SLURM=1 FSLAB_REQUIRE_SLURM=1
fi

cargo clippy --all-targets --locked -- -D warnings
# --all-targets: unit and integration tests (the crate has no doc tests,
# whose empty block would otherwise close the output); --no-fail-fast: a
# red run lists every failing test, not the first binary's. Its status is
# kept (`|| status=$?`, or `set -e` would stop right here), so a red run
# still gets its leftover check and its total, then fails.
# Loop devices, mounts, and the test folders themselves: every folder,
# image and loop backing file the tests make is named under this run's own
# prefix (tests/common/temp.rs), so what a second suite or a user's fslab
# run beside this one makes or leaves is not counted as this run's.
FSLAB_TEST_PREFIX="fslab-test-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
export FSLAB_TEST_PREFIX
test_resources() {
    (losetup -a; cat /proc/self/mountinfo; ls -d /var/tmp/"$FSLAB_TEST_PREFIX"-* 2>/dev/null) \
        | grep -F -- "/$FSLAB_TEST_PREFIX-" | sort || true
}
before=$(test_resources)
status=0
cargo test --locked --all-targets --no-fail-fast -- "${test_args[@]}" 2>&1 | tee "$log" || status=$?

leftover=$(comm -13 <(echo "$before") <(test_resources))
if [ -n "$leftover" ]; then
    echo "tests left resources behind:" >&2
    echo "$leftover" >&2
    [ "$status" -ne 0 ] || status=1
else
    echo "no loop device, mount or test folder left behind"
fi
if grep -qE '^test .* <[0-9.]+s>$' "$log"; then
    echo "the 20 slowest tests:"
    # awk, not head: nothing may stop reading early, or pipefail fails the run.
    sed -nE 's/^test (.*) \.\.\. [a-zA-Z]+ <([0-9.]+)s>$/\2 \1/p' "$log" | sort -rn \
        | awk 'NR <= 20 { printf "  %8.1f s  %s\n", $1, $2 }'
fi
awk '/^test result:/ { p += $4; f += $6 } END { printf "total: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
