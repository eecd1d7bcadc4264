# A crash state as an administrator meets it: dpkg's own recovery
# (--configure -a) first; then bad when the database cannot be read, when
# a package dpkg lists as installed has a file that is not what its
# md5sums say (--verify of those packages), or when a package marked
# durable is not 2.0 and installed.
# A package dpkg itself flags as half-installed is what dpkg promises
# after a crash (reinstall it), not a loss.
set -u
db="$PWD/root/var/lib/dpkg"
[ -f "$db/status" ] || { echo "no dpkg database: $db/status is missing"; exit 1; }
dpkg --root="$PWD/root" --configure -a > /dev/null 2>&1
listed=$(dpkg-query --admindir="$db" -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' 2>&1) || {
    echo "dpkg-query cannot read the database: $listed"; exit 1; }
installed=$(printf '%s\n' "$listed" | awk '$3 == "ii" { print $1 }')
if [ -n "$installed" ]; then
    # shellcheck disable=SC2086 # package names are words
    verified=$(dpkg --root="$PWD/root" --verify $installed 2>&1)
    if [ -n "$verified" ]; then
        first=$(printf '%s\n' "$verified" | head -n 3 | awk '{ print $NF }' | tr '\n' ' ')
        echo "dpkg --verify of installed packages: $(printf '%s\n' "$verified" | wc -l) files not as recorded," \
            "first ${first% }"
        exit 1
    fi
fi
while read -r package; do
    case "$(printf '%s\n' "$listed" | grep "^$package ")" in
        "$package 2.0 ii"*) ;;
        *) echo "$package was marked durable but reads: $(printf '%s\n' "$listed" | grep "^$package " || echo absent)"; exit 1 ;;
    esac
done < "$FSLAB_CRASH_DURABLE"
