#!/usr/bin/env bash
# Runs the TAP tests in tests/t with PostgreSQL::Test::Cluster. The clusters
# they create refuse to run as root, so prove runs as the postgres user with a
# scratch TESTDIR it owns.
#
# The clone may sit in a directory the postgres user cannot enter (root's
# home, `mktemp -d`: mode 0700), so prove never reads it: the tests and the
# source tree (tracked and untracked files, for tests that read them through
# $MINHASH_SRC) are copied into the scratch directory first. Permissions of
# the clone and its parents are left alone.
#
# A run that executes no test (unreadable or missing files, prove's
# "Result: NOTESTS"), or in which a test file skips itself, is a failure,
# never a silent pass.
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
if [ "${MINHASH_TAP_KEEP:-0}" = 1 ]; then
    trap 'echo "TAP scratch kept in $testdir"' EXIT
else
    trap 'rm -rf "$testdir"' EXIT
fi
src=$testdir/src
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z -co --exclude-standard \
        | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
        | tar --null -T - -cf - | tar -C "$src" -xf -
else
    tar --exclude=./build -cf - . | tar -C "$src" -xf -
fi
# The history too, as a bare repository at $src/.git: 150_upgrade builds the
# 1.0 release from it (git archive), and the postgres user cannot read the
# clone's own .git when the clone sits in a private directory.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git clone -q --bare "$(git rev-parse --show-toplevel)" "$src/.git"
fi
# Tests named on the command line may be ignored by git or lie elsewhere:
# each is run from its copy, $src/<its path under the clone> (or $src/extra/).
copies=()
for t in "${tests[@]}"; do
    [ -r "$t" ] || { echo "TAP: cannot read $t" >&2; exit 1; }
    rel=$(realpath -m --relative-to="$root" "$t")
    case "$rel" in ../*) rel=extra/$(basename "$t") ;; esac
    mkdir -p "$src/$(dirname "$rel")"
    cp "$t" "$src/$rel"
    copies+=("$src/$rel")
done
chown -R postgres: "$testdir"

status=0
log=$testdir/prove.log
(cd "$testdir" && runuser -u postgres -- env \
    PATH="$("$PG_CONFIG" --bindir):$PATH" PG_CONFIG="$PG_CONFIG" \
    TESTDIR="$testdir" PG_REGRESS="$pg_regress" \
    TESTDATADIR="$testdir/tmp_check" TESTLOGDIR="$testdir/tmp_check/log" \
    PGPORT=$((30000 + RANDOM % 20000)) \
    MINHASH_SRC="$src" \
    prove -I "$pgxs_perl" -I "$src/tests/t" --timer "${copies[@]}") 2>&1 \
    | tee "$log" || status=$?
# prove's summary: "Files=N, Tests=M, ..." then "Result: PASS".
files=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1/p' "$log" | tail -n 1)
count=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\2/p' "$log" | tail -n 1)
if ! grep -q '^Result: PASS$' "$log" || [ "${files:-0}" -ne ${#tests[@]} ] || [ "${count:-0}" -eq 0 ]; then
    echo "TAP: FAILED: prove ran ${files:-0} of ${#tests[@]} test files, ${count:-0} tests," \
        "result: $(sed -n 's/^Result: //p' "$log" | tail -n 1)" >&2
    [ "$status" -ne 0 ] || status=1
fi
# A test file that skips itself entirely (skip_all) checks nothing: also a failure.
if grep -E '\.pl \.+ skipped:' "$log" >&2; then
    echo "TAP: FAILED: the test files above were skipped" >&2
    [ "$status" -ne 0 ] || status=1
fi
if [ "$status" -ne 0 ]; then
    for log in "$testdir"/tmp_check/log/*; do
        [ -f "$log" ] || continue
        echo "===== tail of $log ====="
        tail -n 80 "$log"
    done
fi
exit "$status"
