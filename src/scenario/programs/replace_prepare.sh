# The stage: the file the run replaces, version 0, made durable (file and
# folder synced) before the measured work begins.
set -eu
yes "version 0" | head -c "$SIZE" > data
sync data .
