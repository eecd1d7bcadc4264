#!/usr/bin/env bash
# Install what is missing on a Debian machine, and only that: what the quick
# start needs (the mkfs tools of the five file systems, filefrag and
# e2freefrag from e2fsprogs, xfs_io from xfsprogs, losetup from mount, gcc to
# link the build, git for --age git:); with --tests (scripts/test.sh) also
# what only the tests and benchmarks need: /usr/bin/time, hyperfine, fio
# (exec --parse fio), strace (what a file costs frag), sqlite3 (exec --check's
# real program), a PostgreSQL server (the store tests), Slurm's controller,
# node daemon and client with munge (the sharding test's single-node
# cluster, scripts/slurm.sh), Chromium (the
# report's browser test), QEMU and a static busybox for guests (--kernel: the
# guest's initramfs has no C library, so busybox-static), xz and zstd to
# unpack a guest kernel, and apt's package lists when they lack Debian's 6.1
# kernel (the guest tests fetch it). Packages go in through
# scripts/apt-install.sh, which waits for apt's lock and never removes or
# downgrades a package the machine has: a package that would is taken from
# the release the kept one came from (QEMU from bookworm-backports beside
# its qemu-utils), adding that release to apt's sources if need be. Needs root to install; does nothing when all is present.
set -euo pipefail
cd "$(dirname "$0")"

tests=false
case "${1:-}" in
    --tests) tests=true ;;
    "") ;;
    *) echo "setup: unknown argument $1 (give --tests for what the tests need too)" >&2; exit 2 ;;
esac

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/sbin/$1" ] || [ -x "/usr/sbin/$1" ]; }
have mkfs.ext4   || need+=(e2fsprogs)
have e2freefrag  || need+=(e2fsprogs)
have mkfs.xfs    || need+=(xfsprogs)
have xfs_io      || need+=(xfsprogs)
have mkfs.btrfs  || need+=(btrfs-progs)
have losetup     || need+=(mount)
have gcc         || need+=(gcc)
have git         || need+=(git)
if $tests; then
    [ -x /usr/bin/time ] || need+=(time)
    have hyperfine   || need+=(hyperfine)
    have fio         || need+=(fio)
    have strace      || need+=(strace)
    have sqlite3     || need+=(sqlite3)
    compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
    have slurmctld   || need+=(slurmctld)
    have slurmd      || need+=(slurmd)
    have sbatch      || need+=(slurm-client)
    have munged      || need+=(munge)
    have chromium    || need+=(chromium)
    have qemu-system-x86_64 || need+=(qemu-system-x86)
    dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
    # Unpacking a guest kernel's bzImage (xz for Debian's) and compressed modules.
    have xz          || need+=(xz-utils)
    have zstd        || need+=(zstd)
fi

if [ ${#need[@]} -gt 0 ]; then
    mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing packages: ${need[*]}; run as root (or: sudo apt-get install --no-remove ${need[*]})" >&2
        exit 3
    fi
    bash apt-install.sh --update "${need[@]}"
fi

# The guest tests fetch Debian's 6.1 kernel once (scripts/debian-kernel.sh), which needs apt's
# package lists: a fresh machine has none until `apt-get update`.
if $tests && [ "$(id -u)" -eq 0 ] && ! [ -e /var/cache/fslab/debian-kernel/current ] \
    && [ -z "$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null)" ]; then
    echo "setup: apt knows no linux-image-6.1.0-N-amd64 package: apt-get update" >&2
    bash apt-install.sh --update
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is missing; install a Rust toolchain (https://rustup.rs) first" >&2
    exit 3
fi
