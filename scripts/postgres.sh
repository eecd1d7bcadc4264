#!/usr/bin/env bash
# Start this machine's PostgreSQL server (Debian's cluster) for the store
# tests, make the role they use, and print its URL. Run as root; safe to
# run again (a running server and an existing role are left as they are).
set -euo pipefail

version=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1)
if [ -z "$version" ]; then
    echo "postgres: no PostgreSQL server installed (apt-get install postgresql)" >&2
    exit 3
fi
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
    pg_createcluster "$version" main >/dev/null
fi
if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" && $4 == "online" { up = 1 } END { exit !up }'; then
    pg_ctlcluster "$version" main start
fi
port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
runuser -u postgres -- psql -q -p "$port" -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fslab_test') THEN
    CREATE ROLE fslab_test LOGIN CREATEDB PASSWORD 'fslab_test';
  END IF;
END $$;
SQL
echo "postgres://fslab_test:fslab_test@127.0.0.1:$port/postgres"
