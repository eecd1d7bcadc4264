#!/usr/bin/env bash
# Start this machine's PostgreSQL server (Debian's cluster) for the store
# tests, make a role and a database of this run's own, and print their URL
# on stdout -- the only thing this script prints there, since callers
# capture it; everything the cluster tools say goes to stderr. Run as root;
# a running server is left as it is. `postgres.sh drop URL` drops the
# role and database that URL names (scripts/test.sh does, on exit).
#
# The role is no door for other local users: its name and password are
# random, made here and written nowhere but the URL printed (which only the
# caller holds: test.sh keeps it in its environment, root's alone); it may
# log in (over TCP with that password; the server's socket admits a local
# user only as the role of their own name) but not make databases or
# roles. Its database is made here, as the postgres superuser, owned by
# it: the tests make a schema in it for each store.
#
# The work runs inside `start_server >&2` rather than after `exec 3>&1
# 1>&2`: bash keeps the saved stdout close-on-exec there, so the server
# does not inherit the caller's pipe and `$(...)` sees its end.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
    echo "postgres: run as root (it starts the server and makes roles as the postgres superuser)" >&2
    exit 3
fi

# The cluster's version and port, the server started and taking work.
find_server() {
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
}

# SQL as the postgres superuser, over the server's socket.
as_postgres() {
    runuser -u postgres -- psql -X -q -p "$port" -v ON_ERROR_STOP=1 "$@"
}

start_server() {
    find_server
    local suffix secret
    suffix=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
    secret=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
    role="fslab_test_$suffix"
    # The password reaches psql on its stdin, never on a command line.
    as_postgres <<SQL
CREATE ROLE $role LOGIN NOCREATEDB NOCREATEROLE NOSUPERUSER PASSWORD '$secret';
CREATE DATABASE $role OWNER $role;
REVOKE ALL ON DATABASE $role FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE $role TO $role;
SQL
    url="postgres://$role:$secret@127.0.0.1:$port/$role"
    # Prove the URL works the way the tests will use it before handing it out.
    PGCONNECT_TIMEOUT=10 psql -X "$url" -q -A -t -c 'SELECT 1' >/dev/null
    echo "postgres: server $version/main up, tests use role and database $role on port $port"
}

drop_role() {
    local given=$1
    # Only a role this script makes: fslab_test_ and 12 hex digits.
    if ! [[ "$given" =~ ^postgres://(fslab_test_[0-9a-f]{12}):[^@]*@[^/]+/([a-z0-9_]+)$ ]]; then
        echo "postgres: drop takes the URL postgres.sh printed, not '${given%%:*}...'" >&2
        exit 2
    fi
    role=${BASH_REMATCH[1]}
    find_server
    as_postgres <<SQL
DROP DATABASE IF EXISTS $role WITH (FORCE);
DROP ROLE IF EXISTS $role;
SQL
    echo "postgres: dropped role and database $role"
}

case "${1:-}" in
"")
    url=
    start_server >&2
    echo "$url"
    ;;
drop)
    [ $# -eq 2 ] || { echo "postgres: usage: postgres.sh [drop URL]" >&2; exit 2; }
    drop_role "$2" >&2
    ;;
*)
    echo "postgres: usage: postgres.sh [drop URL]" >&2
    exit 2
    ;;
esac
