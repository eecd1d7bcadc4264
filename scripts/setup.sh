#!/usr/bin/env bash
# Install what fslab and its tests need on a Debian machine, only when missing:
# the mkfs tools of every file system the tests make, filefrag/e2freefrag
# (e2fsprogs), xfs_io/xfs_db (xfsprogs), losetup (util-linux), git (for --age git:), hyperfine for
# the benchmarks, fio (exec --parse fio and its test), a PostgreSQL server for the store tests and Chromium for
# the report's browser test; QEMU and a static busybox for guests (--kernel: the guest's initramfs has
# no C library, so busybox-static, not busybox), xz and zstd to unpack a guest kernel, and apt's package
# lists when they lack Debian's 6.1 kernel (the guest tests fetch it). Needs root to install; does nothing when all is
# present.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/sbin/$1" ] || [ -x "/usr/sbin/$1" ]; }
have mkfs.ext4   || need+=(e2fsprogs)
have e2freefrag  || need+=(e2fsprogs)
have mkfs.xfs    || need+=(xfsprogs)
have xfs_io      || need+=(xfsprogs)
have mkfs.btrfs  || need+=(btrfs-progs)
have losetup     || need+=(mount)
have hyperfine   || need+=(hyperfine)
have fio         || need+=(fio)
have gcc         || need+=(gcc)
have git         || need+=(git)
[ -x /usr/bin/time ] || need+=(time)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
have chromium    || need+=(chromium)
have qemu-system-x86_64 || need+=(qemu-system-x86)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
# Unpacking a guest kernel's bzImage (xz for Debian's) and compressed modules.
have xz          || need+=(xz-utils)
have zstd        || need+=(zstd)

if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing packages: ${need[*]}; run as root (or: sudo apt-get install ${need[*]})" >&2
        exit 3
    fi
    echo "setup: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi

# The guest tests fetch Debian's 6.1 kernel once (scripts/debian-kernel.sh), which needs apt's
# package lists: a fresh machine has none until `apt-get update`.
if [ "$(id -u)" -eq 0 ] && ! [ -e /var/cache/fslab/debian-kernel/current ] \
    && [ -z "$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null)" ]; then
    echo "setup: apt knows no linux-image-6.1.0-N-amd64 package: apt-get update" >&2
    apt-get update -qq
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is missing; install a Rust toolchain (https://rustup.rs) first" >&2
    exit 3
fi
