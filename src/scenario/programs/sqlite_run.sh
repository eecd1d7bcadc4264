# The measured work: a table made, then ROWS transactions of one 4 KiB
# row each, every one its own sqlite3 call (a program's commit, then its
# exit), in JOURNAL mode with SYNCHRONOUS as the case says. A row is
# marked durable once its call returned: SQLite has committed it. The
# shell reads no ~/.sqliterc (-init /dev/null).
set -eu
pragmas="PRAGMA journal_mode=$JOURNAL; PRAGMA synchronous=$SYNCHRONOUS;"
sqlite3 -init /dev/null -batch db "$pragmas CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB);" > /dev/null
i=1
while [ "$i" -le "$ROWS" ]; do
    sqlite3 -init /dev/null -batch db "$pragmas INSERT INTO t VALUES($i, randomblob(4096));" > /dev/null
    if [ -n "${FSLAB_CRASH_MARK:-}" ]; then echo "row-$i" > "$FSLAB_CRASH_MARK"; fi
    i=$((i + 1))
done
