#!/usr/bin/env bash
# Install the Debian packages named, never removing or downgrading a
# package this machine has. Run as root; setup.sh calls it.
#
#   apt-install.sh [--update] PACKAGE...
#
# --update refreshes apt's package lists first (alone, it does only that).
# apt's own plan is read before anything is installed (`apt-get -s`). A
# wanted package whose plan would remove or downgrade one the machine has is
# found by planning each alone; it is then installed from the release the
# threatened package came from (a `qemu-utils` from bookworm-backports
# makes `qemu-system-x86` come from bookworm-backports too), after adding
# that release to apt's sources when they do not list it, from the mirror
# that serves the machine's own release, and saying so. What still would
# remove or downgrade is refused, naming each package, with nothing
# installed (exit 3). apt then installs with --no-remove.
#
# apt's locks are waited for (up to FSLAB_APT_LOCK_WAIT seconds, 1200 by
# default), naming who holds them, instead of failing: on a freshly booted
# machine unattended-upgrades often holds them for minutes.
#
# Everything apt reads and writes follows APT_CONFIG, so a test can give it
# a status file, sources and lists of its own. FSLAB_APT_SIMULATE=1 decides
# as above but installs nothing: it prints the plans it would carry out.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
update=false
if [ "${1:-}" = --update ]; then update=true; shift; fi
simulate=${FSLAB_APT_SIMULATE:-}
lock_wait=${FSLAB_APT_LOCK_WAIT:-1200}
[[ "$lock_wait" =~ ^[0-9]+$ ]] || { echo "setup: FSLAB_APT_LOCK_WAIT must be whole seconds, not '$lock_wait'" >&2; exit 2; }
apt_opts=(-o "DPkg::Lock::Timeout=$lock_wait")

# The files whose locks apt and dpkg take, as this APT_CONFIG places them.
apt_dir() { apt-config shell v "$1" | sed -n "s/^v='\(.*\)'$/\1/p"; }
# dpkg's own folder: its status file's.
admin=$(dirname "$(apt_dir Dir::State::status/f)")
# The version of NAME the machine has installed, or nothing.
installed_version() {
    dpkg-query --admindir="$admin" -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null | awk '$1 == "installed" { print $2 }' || true
}
lock_files() {
    printf '%s\n' "$admin/lock-frontend" "$admin/lock" "$(apt_dir Dir::State::lists/d)lock" \
        "$(apt_dir Dir::Cache::archives/d)lock"
}

# Wait until no process holds one of apt's locks, saying once who does.
wait_for_apt() {
    local files holders said=false start=$SECONDS
    files=$(lock_files | sed 's://*:/:g')
    while :; do
        holders=$(lslocks -n -r -o PID,PATH 2>/dev/null \
            | awk -v files="$files" 'BEGIN { n = split(files, f, "\n"); for (i = 1; i <= n; i++) want[f[i]] = 1 }
                                     ($2 in want) && $1 != "'$$'" { print $1 " " $2 }' | sort -u)
        [ -n "$holders" ] || return 0
        if ! $said; then
            while read -r pid file; do
                echo "setup: apt's lock $file is held by pid $pid ($(ps -o comm=,user= -p "$pid" 2>/dev/null | awk '{ print $1 ", user " $2 }' || true)); waiting up to ${lock_wait} s" >&2
            done <<<"$holders"
            said=true
        fi
        if (( SECONDS - start >= lock_wait )); then
            echo "setup: apt's lock is still held after ${lock_wait} s (FSLAB_APT_LOCK_WAIT); nothing was installed: run setup again once it is free" >&2
            exit 3
        fi
        sleep 2
    done
}

apt_update() {
    wait_for_apt
    apt-get "${apt_opts[@]}" update -qq
}

# apt's plan to install the packages named (after any `-t RELEASE`).
plan_of() { apt-get -s install --no-install-recommends "$@" 2>&1; }

# What a plan (on stdin) would do to packages the machine has, a line each:
# `remove NAME [VERSION]` or `downgrade NAME OLD -> NEW`.
harms_of() {
    awk '
        $1 == "Remv" { print "remove " $2 " " $3 }
        $1 == "Inst" && $3 ~ /^\[/ { print "check " $2 " " substr($3, 2, length($3) - 2) " " substr($4, 2) }
    ' | while read -r what name old new; do
        if [ "$what" = remove ]; then
            echo "remove $name $old"
        elif dpkg --compare-versions "$new" lt "$old"; then
            echo "downgrade $name $old -> $new"
        fi
    done
}

# The release (suite) the installed version of a package came from: the
# archive apt lists beside it, else Debian's backports naming (`~bpo12+1`
# on Debian 12 is that codename's backports); empty when it cannot be told.
release_of_installed() {
    local name=$1 version release
    version=$(installed_version "$name")
    [ -n "$version" ] || return 0
    release=$(apt-cache policy "$name" | awk -v v="$version" '
        $1 == "***" { mine = ($2 == v); next }
        /^     [^ ]/ { mine = 0 }
        mine && $2 !~ /^\// && NF >= 3 { split($3, s, "/"); print s[1]; exit }')
    if [ -z "$release" ] && [[ "$version" =~ ~bpo([0-9]+)\+ ]]; then
        # shellcheck disable=SC1091
        local id codename
        id=$(. /etc/os-release && echo "${VERSION_ID:-}")
        codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
        if [ "${BASH_REMATCH[1]}" = "$id" ] && [ -n "$codename" ]; then release="$codename-backports"; fi
    fi
    echo "$release"
}

# Make apt know a release: add it to the sources when they do not list it
# (the mirror and keyring of the machine's own Debian release), then
# refresh the lists. Fails (status 1) when it cannot.
know_release() {
    local release=$1 base site parts file
    if ! apt-get indextargets --format '$(RELEASE)' | grep -qxF "$release"; then
        base=${release%-*}
        site=$(apt-get indextargets --format '$(RELEASE) $(ORIGIN) $(SITE)' | awk -v b="$base" '$1 == b && $2 == "Debian" { print $3; exit }')
        if [ -z "$site" ] || [ "$base" = "$release" ]; then
            echo "setup: apt's sources list no Debian $base to take $release's mirror from" >&2
            return 1
        fi
        parts=$(apt_dir Dir::Etc::sourceparts/d)
        file="${parts%/}/fslab-$release.sources"
        local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
        {
            echo "# Added by fslab's scripts/setup.sh: a package this machine has came from $release,"
            echo "# and installing what fslab needs from $base alone would remove or downgrade it."
            echo "# apt installs from $release only what is asked for from it (-t $release)."
            echo "Types: deb"
            echo "URIs: $site"
            echo "Suites: $release"
            echo "Components: main"
            [ -e "$keyring" ] && echo "Signed-By: $keyring"
        } >"$file.new"
        mv "$file.new" "$file"
        echo "setup: added $release ($site, as $base) to apt's sources: $file" >&2
    fi
    if ! apt-cache policy | grep -qE "[ ,]n=$release(,|$)"; then
        apt_update
    fi
    apt-cache policy | grep -qE "[ ,]n=$release(,|$)" || {
        echo "setup: apt's lists still hold nothing of $release after apt-get update" >&2
        return 1
    }
}

refuse() {
    echo "setup: nothing was installed. Install those yourself in a way that keeps what the machine has, or change it yourself if you mean to; then run this again." >&2
    exit 3
}

if $update; then apt_update; fi
[ $# -gt 0 ] || exit 0
wait_for_apt

# What installing the packages named (after any `-t RELEASE`) would do to
# packages the machine has, a line each (as harms_of says it), or, where apt
# finds no plan, `hold NAME VERSION` for each installed package its
# complaint names (`Depends: qemu-system-common (= 7.2) but 10.0 is to be
# installed`). Status 1, with apt's words, when apt finds no plan and names
# no installed package.
troubles_of() {
    local plan name held=""
    if plan=$(plan_of "$@"); then
        harms_of <<<"$plan"
        return 0
    fi
    # ` qemu-utils : Breaks: qemu-system-common (< 8.0) but 7.2 is to be
    # installed`: either side may be the installed one.
    for name in $({ sed -n 's/^ \+\([a-z0-9][a-z0-9.+-]*\) : .*/\1/p' <<<"$plan"
                   grep -oE '(Depends|Breaks|Conflicts): [a-z0-9][a-z0-9.+-]*' <<<"$plan" | awk '{ print $2 }'; } | sort -u); do
        version=$(installed_version "$name")
        if [ -n "$version" ]; then held+="hold $name $version"$'\n'; fi
    done
    if [ -z "$held" ]; then
        echo "$plan"
        return 1
    fi
    printf '%s' "$held"
}

said() { sed 's/^hold \([^ ]*\) \(.*\)/need another \1 than the installed \2 (apt finds no plan that keeps it)/' | paste -sd, | sed 's/,/, /g'; }

# The packages the machine has from a backports release, a line each:
# NAME RELEASE.
backported() {
    local name release
    dpkg-query --admindir="$admin" -W -f='${db:Status-Status} ${Package} ${Version}\n' \
        | awk '$1 == "installed" && $3 ~ /~bpo[0-9]+\+/ { print $2 }' | while read -r name; do
            release=$(release_of_installed "$name")
            if [ -n "$release" ]; then echo "$name $release"; fi
        done
}

plain=("$@")
declare -A from=()   # a package to take from another release -> that release
if ! troubles=$(troubles_of "$@") || [ -n "$troubles" ]; then
    plain=()
    for package in "$@"; do
        if troubles=$(troubles_of "$package"); then
            if [ -z "$troubles" ]; then plain+=("$package"); continue; fi
            echo "setup: installing $package would $(said <<<"$troubles")" >&2
            names=$(awk '{ print $2 }' <<<"$troubles" | paste -sd' ')
            releases=$(while read -r _ name _; do release_of_installed "$name"; done <<<"$troubles" | sort -u)
        else
            # No plan, and apt names nothing installed: what the machine
            # has from backports is the likely cause.
            kept=$(backported)
            if [ -z "$kept" ]; then
                echo "setup: apt cannot install $package:" >&2
                echo "$troubles" >&2
                exit 3
            fi
            echo "setup: apt finds no plan to install $package from the machine's own release:" >&2
            grep -E '^ +[^ ]+ : ' <<<"$troubles" >&2 || true
            names=$(awk '{ print $1 }' <<<"$kept" | paste -sd' ')
            releases=$(awk '{ print $2 }' <<<"$kept" | sort -u)
        fi
        if [ -z "$releases" ] || [ "$(wc -l <<<"$releases")" -ne 1 ]; then
            echo "setup: which one release $names came from cannot be told (apt-cache policy lists none, and the version is not a backport)" >&2
            refuse
        fi
        echo "setup: $names came from $releases: taking $package from $releases too" >&2
        know_release "$releases" || refuse
        from[$package]=$releases
    done
    # Each plan again, as it will be carried out.
    for package in "${!from[@]}"; do
        if ! troubles=$(troubles_of -t "${from[$package]}" "$package") || [ -n "$troubles" ]; then
            echo "setup: from ${from[$package]} too, installing $package would $(said <<<"$troubles")" >&2
            refuse
        fi
    done
    if [ ${#plain[@]} -gt 0 ] && { ! troubles=$(troubles_of "${plain[@]}") || [ -n "$troubles" ]; }; then
        echo "setup: together, installing ${plain[*]} would $(said <<<"$troubles")" >&2
        refuse
    fi
fi

install() {
    local said=$1; shift
    echo "setup: installing $said" >&2
    if [ -n "$simulate" ]; then
        plan_of "$@" | grep -E "^(Inst|Remv) " || true
    else
        apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends --no-remove "$@" >/dev/null
    fi
}
if [ ${#plain[@]} -gt 0 ]; then install "${plain[*]}" "${plain[@]}"; fi
for package in "${!from[@]}"; do
    install "$package from ${from[$package]}" -t "${from[$package]}" "$package"
done
