# A crash state as the program reading `data` meets it: bad when the file
# is missing, is not one whole version (SIZE bytes of "version K" lines),
# or is older than the newest version marked durable.
set -u
[ -e data ] || { echo "data is missing"; exit 1; }
size=$(wc -c < data)
[ "$size" -eq "$SIZE" ] || { echo "data has $size bytes, not $SIZE (torn or empty)"; exit 1; }
version=$(head -n 1 data); version=${version#version }
case "$version" in '' | *[!0-9]*) echo "data is no version: it starts $(head -c 16 data | od -An -c | tr -s ' ')"; exit 1 ;; esac
yes "version $version" | head -c "$SIZE" | cmp -s - data || { echo "data mixes versions (it starts as version $version)"; exit 1; }
newest=$(tail -n 1 "$FSLAB_CRASH_DURABLE"); newest=${newest#v-}
[ "${newest:-0}" -le "$version" ] || { echo "data is version $version, older than version $newest marked durable"; exit 1; }
