#!/usr/bin/env bash
# Runs the TAP tests in tests/t with PostgreSQL::Test::Cluster. The clusters
# they create refuse to run as root, so prove runs as the postgres user with a
# scratch TESTDIR it owns.
#
#   scripts/tap.sh [tests/t/NNN_name.pl ...]   default: every tests/t/*.pl
#
# On failure the tail of each test's log (and its servers' logs) is printed,
# since the scratch directory is removed; MINHASH_TAP_KEEP=1 keeps it instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pgxs_dir="$(dirname "$("$PG_CONFIG" --pgxs)")/.."
pgxs_perl="$pgxs_dir/test/perl"
# Cluster::init runs `$PG_REGRESS --config-auth` and bails out if it fails, so
# this must be the real pg_regress (PGXS ships it next to the perl modules).
pg_regress="$pgxs_dir/test/regress/pg_regress"
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    mapfile -t tests < <(ls tests/t/*.pl 2>/dev/null | sort)
fi
if [ ${#tests[@]} -eq 0 ]; then
    echo "no TAP tests" >&2
    exit 1
fi
testdir=$(mktemp -d /tmp/minhash-tap.XXXXXX)
chown postgres: "$testdir"
if [ "${MINHASH_TAP_KEEP:-0}" = 1 ]; then
    trap 'echo "TAP scratch kept in $testdir"' EXIT
else
    trap 'rm -rf "$testdir"' EXIT
fi
status=0
runuser -u postgres -- env \
    PATH="$("$PG_CONFIG" --bindir):$PATH" PG_CONFIG="$PG_CONFIG" \
    TESTDIR="$testdir" PG_REGRESS="$pg_regress" \
    PGPORT=$((30000 + RANDOM % 20000)) \
    MINHASH_SRC="$root" \
    prove -I "$pgxs_perl" -I "$root/tests/t" --timer "${tests[@]/#/$root/}" || status=$?
if [ "$status" -ne 0 ]; then
    for log in "$testdir"/tmp_check/log/*; do
        [ -f "$log" ] || continue
        echo "===== tail of $log ====="
        tail -n 80 "$log"
    done
fi
exit "$status"
