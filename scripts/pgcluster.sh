#!/usr/bin/env bash
# Throwaway PostgreSQL clusters for tests, demos and benchmarks: the project's
# one copy of the start / stop / clean-up logic.
#
# Run as a command:
#   scripts/pgcluster.sh start DIR [postgres.conf lines...]   initdb (if needed) + start
#   scripts/pgcluster.sh stop DIR                              stop (no error if not running)
#
# Sourced by a script that needs a scratch directory (and clusters in it)
# that disappears however the script ends:
#   . scripts/pgcluster.sh
#   scratch_dir NAME              SCRATCH=$(mktemp -d /tmp/minhash-NAME.XXXXXX)
#                                 (or under $SCRATCH_PARENT instead of /tmp),
#                                 owned by postgres, and the clean-up armed:
#                                 on exit, failure, Ctrl-C or TERM, the
#                                 clusters started by scratch_cluster are
#                                 stopped, then the scratch_at_exit commands
#                                 run (last added first), then SCRATCH is removed
#                                 unless SCRATCH_KEEP=1 (then it is named)
#   scratch_cluster SUB [conf...] starts a cluster in $SCRATCH/SUB (as
#                                 `start` above) and sources its env file
#   scratch_at_exit 'COMMAND'     one more clean-up step (eval'd, errors ignored)
#
# The server refuses to run as root, so it runs as the `postgres` user, listens
# on a free port on 127.0.0.1 and on a socket in DIR. `start` writes DIR/env,
# to be sourced: it exports PGHOST, PGPORT, PGUSER and PGDATABASE.
#
# The postgres user must be able to reach DIR: put it in a directory it can
# enter (scratch_dir, or mktemp -d /tmp/NAME.XXXXXX chowned to postgres),
# never in the clone, which may sit in a directory only its owner can enter
# (root's home, plain `mktemp -d`). The server's commands run from DIR, not
# from the caller's working directory, for the same reason.

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    _pgcluster_script=$(realpath "${BASH_SOURCE[0]}")
    _scratch_clusters=()
    _scratch_hooks=()
    SCRATCH=""

    scratch_dir() {
        local name=${1:?usage: scratch_dir NAME}
        SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/tmp}/minhash-$name.XXXXXX")
        chmod 755 "$SCRATCH"
        chown postgres: "$SCRATCH" 2>/dev/null || true
        trap _scratch_cleanup EXIT
        # An explicit exit on a signal runs the EXIT trap.
        trap 'exit 130' INT
        trap 'exit 143' TERM
    }

    scratch_cluster() {
        local sub=${1:?usage: scratch_cluster SUBDIR [postgres.conf lines...]}
        shift
        [ -n "$SCRATCH" ] || { echo "scratch_cluster: call scratch_dir first" >&2; return 1; }
        case " ${_scratch_clusters[*]} " in
        *" $SCRATCH/$sub "*) ;;
        *) _scratch_clusters+=("$SCRATCH/$sub") ;;
        esac
        bash "$_pgcluster_script" start "$SCRATCH/$sub" "$@"
        # shellcheck disable=SC1090,SC1091
        . "$SCRATCH/$sub/env"
    }

    scratch_at_exit() { _scratch_hooks+=("$1"); }

    _scratch_cleanup() {
        local i
        for ((i = ${#_scratch_clusters[@]} - 1; i >= 0; i--)); do
            bash "$_pgcluster_script" stop "${_scratch_clusters[$i]}" >/dev/null 2>&1 || true
        done
        for ((i = ${#_scratch_hooks[@]} - 1; i >= 0; i--)); do
            eval "${_scratch_hooks[$i]}" || true
        done
        if [ -n "$SCRATCH" ] && [ -d "$SCRATCH" ]; then
            if [ "${SCRATCH_KEEP:-0}" = 1 ]; then
                echo "scratch directory kept: $SCRATCH" >&2
            else
                rm -rf "$SCRATCH"
            fi
        fi
    }
    return 0
fi

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
