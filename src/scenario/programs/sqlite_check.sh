# A crash state as the next program to open the database meets it (SQLite
# rolls back a hot journal or replays the WAL on open): bad when
# `PRAGMA integrity_check` is not ok, or when a row marked durable is
# missing. No database at all is bad only once a row was durable.
set -u
durable=$(wc -l < "$FSLAB_CRASH_DURABLE")
if [ ! -e db ]; then
    [ "$durable" -eq 0 ] && exit 0
    echo "no database, $durable rows committed"; exit 1
fi
said=$(sqlite3 -init /dev/null -batch db 'PRAGMA integrity_check' 2>&1)
[ "$said" = ok ] || { echo "integrity_check: $(printf '%s\n' "$said" | head -n 1)"; exit 1; }
[ "$durable" -eq 0 ] && exit 0
last=$(tail -n 1 "$FSLAB_CRASH_DURABLE"); last=${last#row-}
have=$(sqlite3 -init /dev/null -batch db "SELECT count(*) FROM t WHERE k <= $last" 2>&1)
[ "$have" = "$last" ] || { echo "$((last - ${have:-0})) of $last committed rows lost (read: $(printf '%s\n' "$have" | head -n 1))"; exit 1; }
