#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster for tests, demos and benchmarks.
#
#   scripts/pgcluster.sh start DIR [postgres.conf lines...]   initdb (if needed) + start
#   scripts/pgcluster.sh stop DIR                              stop (no error if not running)
#
# The server refuses to run as root, so it runs as the `postgres` user, listens
# on a free port on 127.0.0.1 and on a socket in DIR. `start` writes DIR/env,
# to be sourced: it exports PGHOST, PGPORT, PGUSER and PGDATABASE.
#
# The postgres user must be able to reach DIR: put it in a directory it can
# enter (mktemp -d /tmp/NAME.XXXXXX, then chown postgres: it), never in the
# clone, which may sit in a directory only its owner can enter (root's home,
# plain `mktemp -d`). The server's commands run from DIR, not from the
# caller's working directory, for the same reason.
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
cmd=${1:?usage: pgcluster.sh start|stop DIR}
dir=${2:?usage: pgcluster.sh start|stop DIR}
shift 2
dir=$(realpath -m "$dir")

# PostgreSQL's programs return to their working directory after resolving
# their own path, and warn when they cannot: run them from DIR.
as_postgres() {
    if [ "$(id -un)" = postgres ]; then
        (cd "$dir" && "$@")
    else
        (cd "$dir" && runuser -u postgres -- "$@")
    fi
}

port_is_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

case "$cmd" in
start)
    mkdir -p "$dir"
    chown postgres: "$dir" 2>/dev/null || true
    if ! (cd / && runuser -u postgres -- test -w "$dir" -a -x "$dir") 2>/dev/null \
        && [ "$(id -un)" != postgres ]; then
        echo "pgcluster.sh: the postgres user cannot enter $dir (is one of its parents" \
            "private, such as a 0700 home or mktemp -d directory?): use a directory it can" \
            "reach, e.g. one made by 'mktemp -d /tmp/NAME.XXXXXX' and chowned to postgres" >&2
        exit 1
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_postgres "$PGBIN/initdb" -D "$dir/data" -U postgres --auth=trust \
            --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
        {
            echo "listen_addresses = '127.0.0.1'"
            echo "unix_socket_directories = '$dir'"
            echo "fsync = off"
            echo "max_connections = 50"
            for line in "$@"; do echo "$line"; done
        } | as_postgres tee -a "$dir/data/postgresql.conf" >/dev/null
    fi
    port=""
    for _ in $(seq 1 50); do
        candidate=$((20000 + RANDOM % 40000))
        if port_is_free "$candidate"; then port=$candidate; break; fi
    done
    [ -n "$port" ] || { echo "no free port" >&2; exit 1; }
    as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port" start >/dev/null \
        || { cat "$dir/server.log" >&2; exit 1; }
    cat >"$dir/env" <<EOT
export PGHOST='$dir'
export PGPORT='$port'
export PGUSER=postgres
export PGDATABASE=postgres
EOT
    chmod 644 "$dir/env"
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    fi
    ;;
*)
    echo "usage: pgcluster.sh start|stop DIR" >&2
    exit 2
    ;;
esac
