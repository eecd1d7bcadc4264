#!/usr/bin/env bash
# Fetch Debian 12's newest 6.1 kernel package for guests (`fslab run --kernel`) and print the
# path of its vmlinuz. Usage: scripts/debian-kernel.sh [CACHE_DIR]
# (default /var/cache/fslab/debian-kernel).
#
# The entry CACHE_DIR/PKGVERSION is the package as `dpkg -x` leaves it (boot/vmlinuz-REL,
# lib/modules/REL), with the module tree pruned to what guests load (file systems, virtio,
# block, 9p, lib, crypto: tens of MB instead of ~430 MB); fslab finds the tree beside the image
# by itself. CACHE_DIR/current names the entry in use: when it is complete, nothing is fetched
# (no network). A flock on CACHE_DIR/.lock lets parallel callers fetch once. Needs root (to
# write the cache) and `apt-get update` done once on a fresh machine.
# With FSLAB=PATH (or fslab on PATH) the pruned tree is checked with `fslab kernels` first:
# every file system must resolve and the kernel be ready.
# Exit: 0 printed the path; 3 the environment lacks something (no package found, no tool);
# 4 the fetch or the check failed.
set -euo pipefail

cache=${1:-/var/cache/fslab/debian-kernel}
say() { echo "debian-kernel: $*" >&2; }

for tool in apt-cache apt-get dpkg-deb flock sort; do
    command -v "$tool" >/dev/null 2>&1 || { say "$tool is missing: this needs a Debian machine with apt"; exit 3; }
done
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

# The vmlinuz of the entry `current` names, when the entry is complete.
complete_vmlinuz() {
    local entry="$cache/$1" image rel
    for image in "$entry"/boot/vmlinuz-*; do
        [ -f "$image" ] || continue
        rel=${image##*/vmlinuz-}
        if [ -d "$entry/lib/modules/$rel/kernel" ] && [ -f "$entry/lib/modules/$rel/modules.builtin" ]; then
            echo "$image"
            return 0
        fi
    done
    return 1
}

if [ -e "$cache/current" ] || [ -L "$cache/current" ]; then
    if [ -L "$cache/current" ]; then name=$(readlink "$cache/current"); else name=$(head -n1 "$cache/current"); fi
    name=${name##*/}
    if [ -n "$name" ] && image=$(complete_vmlinuz "$name"); then
        echo "$image"
        exit 0
    fi
    say "$cache/current names '$name', which is incomplete: fetching again"
fi

package=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{print $1}' | sort -V | tail -n1)
if [ -z "$package" ]; then
    say "apt-cache finds no linux-image-6.1.0-N-amd64 package: run \`apt-get update\` (as root) on a Debian 12 machine first, or give fslab a kernel image yourself"
    exit 3
fi

work=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
mkdir "$work/deb" "$work/root"
# apt drops to _apt for downloads; a folder _apt can write avoids its "unsandboxed" warning.
id _apt >/dev/null 2>&1 && chown _apt "$work/deb" 2>/dev/null || true
say "downloading $package"
started=$SECONDS
(cd "$work/deb" && apt-get download -q "$package" >&2) || { say "apt-get download $package failed"; exit 4; }
deb=$(ls "$work/deb"/*.deb)
version=$(dpkg-deb -f "$deb" Version)
say "unpacking $package $version ($(du -h "$deb" | cut -f1)) after $((SECONDS - started)) s"
dpkg-deb -x "$deb" "$work/root"
rm -rf "$work/deb" "$work/root/usr/share/doc"

rel=$(ls "$work/root/lib/modules")
tree="$work/root/lib/modules/$rel"
before=$(du -sm "$tree" | cut -f1)
# Keep what guests load: file systems and what they use (fs, lib, crypto, arch/x86/crypto),
# virtio and its block device (drivers/virtio, drivers/block), 9p (net/9p); and every modules.*
# file at the tree's top, which lies outside kernel/. fslab's own fetch (`--kernel debian:NAME`)
# prunes by the same rule (src/distro/prune.rs, KEEP): change both together.
keep_only() { # keep_only DIR NAME...: remove every entry of DIR but the NAMEs
    local dir=$1 entry
    shift
    for entry in "$dir"/*; do
        [ -e "$entry" ] || continue
        case " $* " in *" ${entry##*/} "*) ;; *) rm -rf "$entry" ;; esac
    done
}
keep_only "$tree/kernel" fs lib crypto arch drivers net
keep_only "$tree/kernel/arch" x86
[ -d "$tree/kernel/arch/x86" ] && keep_only "$tree/kernel/arch/x86" crypto
keep_only "$tree/kernel/drivers" virtio block
keep_only "$tree/kernel/net" 9p
after=$(du -sm "$tree" | cut -f1)
say "pruned the modules of $rel from $before MB to $after MB"

image="$work/root/boot/vmlinuz-$rel"
fslab=${FSLAB:-$(command -v fslab || true)}
if [ -n "$fslab" ]; then
    report=$("$fslab" kernels --json "$image") || { say "fslab kernels $image failed"; exit 4; }
    if ! grep -q '"ready": *true' <<<"$report" || grep -q '"available": *false' <<<"$report"; then
        say "the pruned kernel is not ready for guests or misses a file system:"
        echo "$report" >&2
        exit 4
    fi
    say "checked with fslab kernels: ready, every file system resolves"
fi

rm -rf "${cache:?}/$version"
mv "$work/root" "$cache/$version"
ln -sfn "$version" "$cache/current.new"
mv -T "$cache/current.new" "$cache/current"
say "fetched $package $version in $((SECONDS - started)) s: $(du -sh "$cache/$version" | cut -f1) in $cache/$version"
echo "$cache/$version/boot/vmlinuz-$rel"
