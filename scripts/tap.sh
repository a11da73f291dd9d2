#!/usr/bin/env bash
# Runs the TAP tests in tests/t (PostgreSQL::Test::Cluster) through PGXS:
# `make installcheck MINHASH_TAP=1`, i.e. PGXS's TAP_TESTS / prove_installcheck
# (the Makefile). The clusters they create refuse to run as root, so make runs
# as the postgres user; what this wrapper adds to that is:
#
# - The clone may sit in a directory the postgres user cannot enter (root's
#   home, `mktemp -d`: mode 0700), so the postgres user never reads it: the
#   tests and the source tree (tracked and untracked files, for tests that
#   read them through $MINHASH_SRC) are copied into a scratch directory
#   (scripts/pgcluster.sh's scratch_dir), with the history as a bare
#   repository (150_upgrade and 161_pending_upgrade build the 1.0 and 1.1
#   releases from it), and make runs
#   there. Permissions of the clone and its parents are left alone.
# - A run that executes no test (unreadable or missing files, prove's
#   "Result: NOTESTS"), runs fewer files than asked, or in which a test file
#   skips itself, is a failure, never a silent pass: prove's exit status
#   alone does not say so.
#
#   scripts/tap.sh [tests/t/NNN_name.pl ...]   default: every tests/t/*.pl
#                                               (but 200_citus.pl with MINHASH_SKIP_CITUS=1)
#
# On failure the tail of each test's log (and its servers' logs) is printed,
# since the scratch directory is removed; MINHASH_TAP_KEEP=1 keeps it instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    mapfile -t tests < <(ls tests/t/*.pl 2>/dev/null | sort)
    # The Citus test needs Citus (scripts/citus.sh); left out only when asked.
    if [ "${MINHASH_SKIP_CITUS:-0}" = 1 ]; then
        mapfile -t tests < <(printf '%s\n' "${tests[@]}" | grep -v '/200_citus\.pl$')
        echo "############################################################################" >&2
        echo "# MINHASH_SKIP_CITUS=1: tests/t/200_citus.pl (Citus) is NOT run" >&2
        echo "############################################################################" >&2
    fi
fi
if [ ${#tests[@]} -eq 0 ]; then
    echo "no TAP tests" >&2
    exit 1
fi
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
SCRATCH_KEEP=${MINHASH_TAP_KEEP:-0}
scratch_dir tap
src=$SCRATCH/src
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z -co --exclude-standard \
        | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
        | tar --null -T - -cf - | tar -C "$src" -xf -
    git clone -q --bare "$(git rev-parse --show-toplevel)" "$src/.git"
else
    tar --exclude=./build -cf - . | tar -C "$src" -xf -
fi
# Tests named on the command line may be ignored by git or lie elsewhere:
# each is run from its copy, <its path under the clone> (or extra/) in $src.
copies=()
for t in "${tests[@]}"; do
    [ -r "$t" ] || { echo "TAP: cannot read $t" >&2; exit 1; }
    rel=$(realpath -m --relative-to="$root" "$t")
    case "$rel" in ../*) rel=extra/$(basename "$t") ;; esac
    mkdir -p "$src/$(dirname "$rel")"
    cp "$t" "$src/$rel"
    copies+=("$rel")
done
chown -R postgres: "$SCRATCH"

status=0
log=$SCRATCH/prove.log
(cd "$src" && runuser -u postgres -- env PG_CONFIG="$PG_CONFIG" MINHASH_SRC="$src" \
    make -s installcheck MINHASH_TAP=1 PG_CONFIG="$PG_CONFIG" PROVE_TESTS="${copies[*]}") 2>&1 \
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
    for log in "$src"/tmp_check/log/*; do
        [ -f "$log" ] || continue
        echo "===== tail of $log ====="
        tail -n 80 "$log"
    done
fi
exit "$status"
