#!/usr/bin/env bash
# Install the Debian packages named, never removing or downgrading a
# package this machine has. apt's own plan is read first (`apt-get -s`):
# one that would remove a package (a newer qemu-utils that the
# distribution's QEMU breaks, say) or replace one with an older version is
# refused, naming each and what to do, and nothing is installed. Then apt
# installs with --no-remove, so it cannot remove one either. Run as root,
# after `apt-get update` (setup.sh does both); exit 3 when refused.
set -euo pipefail
[ $# -gt 0 ] || exit 0
export DEBIAN_FRONTEND=noninteractive

if ! plan=$(apt-get -s install --no-install-recommends "$@" 2>&1); then
    echo "setup: apt cannot install $*:" >&2
    echo "$plan" >&2
    exit 3
fi
# `Remv NAME [VERSION]`; `Inst NAME [OLD] (NEW ...)` when NAME is installed.
mapfile -t removed < <(awk '$1 == "Remv" { print $2 " " $3 }' <<<"$plan")
downgraded=()
while read -r name old new; do
    if dpkg --compare-versions "$new" lt "$old"; then
        downgraded+=("$name $old -> $new")
    fi
done < <(awk '$1 == "Inst" && $3 ~ /^\[/ { print $2, substr($3, 2, length($3) - 2), substr($4, 2) }' <<<"$plan")

if [ ${#removed[@]} -gt 0 ] || [ ${#downgraded[@]} -gt 0 ]; then
    echo "setup: to install $* apt would change packages this machine has, which setup never does:" >&2
    for package in "${removed[@]}"; do echo "  remove $package" >&2; done
    for package in "${downgraded[@]}"; do echo "  downgrade $package" >&2; done
    echo "setup: nothing was installed. Install $* yourself in a way that keeps them (from the release the installed package came from, as in \`apt-get install -t bookworm-backports ...\`), or change them yourself if you mean to; then run this again." >&2
    exit 3
fi

echo "setup: installing $*" >&2
apt-get install -y -qq --no-install-recommends --no-remove "$@" >/dev/null
