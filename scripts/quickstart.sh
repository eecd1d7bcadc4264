#!/usr/bin/env bash
# Quick start: install what is missing, build fslab and (as root) install
# it, look at where the blocks of this machine's own files went, then (root)
# reproduce the five seed reports on fresh ext2, ext3, ext4, xfs and btrfs
# file systems and say which this kernel still shows. Only fslab's own
# images are formatted, and released. The run goes to the default store, so
# `fslab runs` and `fslab show last` find it next.
set -euo pipefail
cd "$(dirname "$0")/.."
root=false
[ "$(id -u)" = 0 ] && root=true

# Only what the quick start needs; scripts/test.sh installs what the tests
# need besides. Nothing the machine has is removed or downgraded.
bash scripts/setup.sh

# How long the build and the preset took, in README's words.
minutes() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
started=$SECONDS
echo "== cargo build --release (from clean it takes minutes; see README)"
cargo build --release --locked -q
echo "== built target/release/fslab in $(minutes $((SECONDS - started)))"
built=target/release/fslab

# The binary, its man pages and its shell completion, generated from its
# own command line: into target/share always; as root, where man and bash
# look for them, beside the binary in /usr/local/bin.
mkdir -p target/share/man/man1 target/share/completions
"$built" man --dir target/share/man/man1
for shell in bash zsh fish; do "$built" completions "$shell" > "target/share/completions/fslab.$shell"; done
if $root; then
    install -D -m 755 "$built" /usr/local/bin/fslab
    install -d /usr/local/share/man/man1 /usr/local/share/bash-completion/completions
    install -m 644 target/share/man/man1/*.1 /usr/local/share/man/man1/
    install -m 644 target/share/completions/fslab.bash /usr/local/share/bash-completion/completions/fslab
    fslab=/usr/local/bin/fslab
    echo "== installed $fslab, man fslab (and fslab-map, ...) and bash completion for fslab under /usr/local/share"
    found=$(command -v fslab || true)
    if [ "$found" != "$fslab" ]; then
        echo "   (but \`fslab\` here runs ${found:-nothing}: call $fslab, or put /usr/local/bin first in PATH)"
    fi
else
    fslab=$PWD/$built
    echo "== not root, so nothing installed: call fslab as $fslab"
    echo "   (or put it on your PATH: install -D -m 755 $fslab ~/.local/bin/fslab);"
    echo "   man pages: man -l target/share/man/man1/fslab.1; completions in target/share/completions"
fi

tree=${1:-/usr}
echo
echo "== fslab frag $tree: fragmentation of every file below it"
"$fslab" frag --top 5 "$tree"

# (head closes the pipe early: that is not a failure here)
biggest=$(find "$tree" -xdev -type f -size +1M -printf '%s %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2- || true)
if [ -n "$biggest" ]; then
    echo
    echo "== fslab map: the largest file under $tree, drawn to target/map.svg"
    "$fslab" map --no-list --svg target/map.svg "$biggest"
fi

echo
echo "== fslab free: free-space fragmentation of the file system holding $tree"
"$fslab" free "$tree" || echo "(fslab free needs a file system with GETFSMAP: ext4 or xfs)"

if $root; then
    echo
    echo "== fslab run --preset seeds: the five reports on fresh ext2, ext3, ext4, xfs and btrfs (see README for how long)"
    started=$SECONDS
    "$fslab" run --preset seeds --tag seeds
    echo "== the preset took $(minutes $((SECONDS - started)))"
    echo
    echo "== fslab report: the run as one HTML page, target/report.html"
    "$fslab" report last -o target/report.html
    echo
    echo "== next: fslab runs (the stored runs), fslab show last (this one again), man fslab"
else
    echo
    echo "(not root: skipping the scenarios on scratch file systems; try: $fslab run replace-files --dir /var/tmp)"
fi
