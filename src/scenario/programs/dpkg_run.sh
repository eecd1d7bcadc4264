# The measured work: dpkg upgrades every package to 2.0 in one call
# (with --force-unsafe-io when UNSAFE_IO is yes; else --no-force-unsafe-io,
# since a machine's /etc/dpkg/dpkg.cfg.d may force it for every call, as
# container images often do). dpkg has made the upgrade durable when it
# returns: each package is marked then.
set -eu
if [ "$UNSAFE_IO" = yes ]; then unsafe=--force-unsafe-io; else unsafe=--no-force-unsafe-io; fi
dpkg --root="$PWD/root" $unsafe --install "$SETUP"/2.0/*.deb
if [ -n "${FSLAB_CRASH_MARK:-}" ]; then
    p=1
    while [ "$p" -le "$PACKAGES" ]; do
        echo "fslab-$p" > "$FSLAB_CRASH_MARK"
        p=$((p + 1))
    done
fi
