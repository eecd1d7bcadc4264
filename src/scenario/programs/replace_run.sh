# The measured work: REPLACES replacements of `data` by a new version,
# written to a temporary file and renamed over it, in the FORM the case
# says: full (sync the temporary file, rename, sync the folder),
# no-dir-sync, no-file-sync, or none. A version is marked durable once its
# replace returned, where the idiom in its full form promises it.
set -eu
k=1
while [ "$k" -le "$REPLACES" ]; do
    yes "version $k" | head -c "$SIZE" > data.tmp
    case "$FORM" in full | no-dir-sync) sync data.tmp ;; esac
    mv data.tmp data
    case "$FORM" in full | no-file-sync) sync . ;; esac
    if [ -n "${FSLAB_CRASH_MARK:-}" ]; then echo "v-$k" > "$FSLAB_CRASH_MARK"; fi
    k=$((k + 1))
done
