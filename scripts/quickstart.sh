#!/usr/bin/env bash
# Quick start: install what is missing, build fslab, look at where the
# blocks of this machine's own files went, then (root) reproduce the five
# seed reports on fresh ext2, ext3, ext4, xfs and btrfs file systems and say
# which this kernel still shows. Only fslab's own images are formatted, and
# released.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cargo build --release --locked -q
fslab=target/release/fslab

# Man pages and shell completion, generated from fslab's own command line:
# into target/share always, and where man and bash look for them as root.
mkdir -p target/share/man/man1 target/share/completions
"$fslab" man --dir target/share/man/man1
for shell in bash zsh fish; do "$fslab" completions "$shell" > "target/share/completions/fslab.$shell"; done
if [ "$(id -u)" = 0 ]; then
    install -d /usr/local/share/man/man1 /usr/local/share/bash-completion/completions
    install -m 644 target/share/man/man1/*.1 /usr/local/share/man/man1/
    install -m 644 target/share/completions/fslab.bash /usr/local/share/bash-completion/completions/fslab
    echo "== installed man fslab (and fslab-map, ...) and bash completion for fslab under /usr/local/share"
else
    echo "== man pages in target/share/man/man1 (man -l target/share/man/man1/fslab.1), completions in target/share/completions"
fi

tree=${1:-/usr}
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

if [ "$(id -u)" = 0 ]; then
    echo
    echo "== fslab run --preset seeds: the five reports on fresh ext2, ext3, ext4, xfs and btrfs (a few minutes)"
    "$fslab" run --preset seeds --store target/fslab.db --tag seeds
    echo
    echo "== fslab report: the run as one HTML page, target/report.html"
    "$fslab" report last --store target/fslab.db -o target/report.html
else
    echo
    echo "(not root: skipping the scenarios on scratch file systems; try: $fslab run replace-files --dir /var/tmp)"
fi
