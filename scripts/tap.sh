#!/usr/bin/env bash
# Runs the TAP tests in tests/t with PostgreSQL::Test::Cluster. The clusters
# they create refuse to run as root, so prove runs as the postgres user with a
# scratch TESTDIR it owns.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pgxs_perl="$(dirname "$("$PG_CONFIG" --pgxs)")/../test/perl"
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
trap 'rm -rf "$testdir"' EXIT
runuser -u postgres -- env \
    PATH="$("$PG_CONFIG" --bindir):$PATH" PG_CONFIG="$PG_CONFIG" \
    TESTDIR="$testdir" PG_REGRESS=/bin/false \
    PGPORT=$((30000 + RANDOM % 20000)) \
    MINHASH_SRC="$root" \
    prove -I "$pgxs_perl" -I "$root/tests/t" --timer "${tests[@]/#/$root/}"
