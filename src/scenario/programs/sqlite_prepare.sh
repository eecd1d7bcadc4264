# The stage: nothing to build; the sqlite3 shell must be here (the run
# makes the database, since its creation is part of what a crash can catch).
command -v sqlite3 > /dev/null || { echo "sqlite3 is not installed: apt-get install sqlite3" >&2; exit 1; }
