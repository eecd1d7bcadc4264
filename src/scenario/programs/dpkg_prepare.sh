# dpkg's stage (not measured): PACKAGES packages of FILES files each, built
# twice with dpkg-deb into the setup folder (version 1.0 and 2.0, every
# file's bytes new in 2.0), and 1.0 installed into ./root.
set -eu
for version in 1.0 2.0; do
    mkdir -p "$SETUP/$version"
    p=1
    while [ "$p" -le "$PACKAGES" ]; do
        tree="$SETUP/tree-$version-$p"
        mkdir -p "$tree/DEBIAN" "$tree/usr/share/fslab-$p"
        f=1
        while [ "$f" -le "$FILES" ]; do
            head -c 16384 /dev/urandom > "$tree/usr/share/fslab-$p/file-$f"
            f=$((f + 1))
        done
        printf 'Package: fslab-%s\nVersion: %s\nArchitecture: all\nMaintainer: fslab <fslab@localhost>\nDescription: files for a crash test\n' \
            "$p" "$version" > "$tree/DEBIAN/control"
        (cd "$tree" && find usr -type f -exec md5sum {} + > DEBIAN/md5sums)
        dpkg-deb -Znone --root-owner-group --build "$tree" "$SETUP/$version/fslab-$p.deb" > /dev/null
        rm -rf "$tree"
        p=$((p + 1))
    done
done
mkdir -p root/var/lib/dpkg/info root/var/lib/dpkg/updates root/var/lib/dpkg/triggers
: > root/var/lib/dpkg/status
dpkg --root="$PWD/root" --install "$SETUP"/1.0/*.deb > /dev/null
