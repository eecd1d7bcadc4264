#!/usr/bin/env bash
# Start this machine's PostgreSQL server (Debian's cluster) for the store
# tests, make the role they use, and print its URL on stdout -- the only
# thing this script prints there, since callers capture it; everything the
# cluster tools say goes to stderr. Run as root; safe to run again (a
# running server and an existing role are left as they are).
#
# The work runs inside `start_server >&2` rather than after `exec 3>&1
# 1>&2`: bash keeps the saved stdout close-on-exec there, so the server
# does not inherit the caller's pipe and `$(...)` sees its end.
set -euo pipefail

start_server() {
    version=$(ls /usr/lib/postgresql 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -1 || true)
    if [ -z "$version" ] || [ ! -x "/usr/lib/postgresql/$version/bin/postgres" ]; then
        echo "postgres: no PostgreSQL server installed (apt-get install postgresql)"
        exit 3
    fi
    cluster() { pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main"'; }
    if [ -z "$(cluster)" ]; then
        pg_createcluster "$version" main
    fi
    if [ "$(cluster | awk '{ print $4 }')" != online ]; then
        pg_ctlcluster "$version" main start
    fi
    port=$(cluster | awk '{ print $3 }')
    if ! [[ "$port" =~ ^[0-9]+$ ]]; then
        echo "postgres: cannot tell the port of cluster $version/main (pg_lsclusters says: $(cluster))"
        exit 3
    fi
    # A server just started may still be recovering; wait for it to take work.
    for _ in $(seq 60); do
        pg_isready -q -h 127.0.0.1 -p "$port" && break
        sleep 0.5
    done
    runuser -u postgres -- psql -q -p "$port" -v ON_ERROR_STOP=1 <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fslab_test') THEN
    CREATE ROLE fslab_test LOGIN CREATEDB PASSWORD 'fslab_test';
  END IF;
END $$;
SQL
    url="postgres://fslab_test:fslab_test@127.0.0.1:$port/postgres"
    # Prove the URL works the way the tests will use it before handing it out.
    psql "$url" -q -A -t -c 'SELECT 1' >/dev/null
    echo "postgres: server $version/main up, tests use $url"
}

url=
start_server >&2
echo "$url"
