#!/usr/bin/env bash
# Checks that the SQL tour in README.md is true: runs every ```sql block in a
# throwaway cluster (the extension must be installed) and compares what psql
# prints with the plain ``` block that follows it, if any. A developer tool:
#
#   bash demo/check-readme.sh            (honours PG_CONFIG, as all scripts do)
#
# Blocks run in order, each in its own psql session (so a SET must sit in the
# block of the query it affects); trailing whitespace is ignored.
set -euo pipefail
cd "$(dirname "$0")/.."
PGBIN=$("${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --bindir)

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir readme
scratch=$SCRATCH

# README.md -> $scratch/NN.sql and, for a block followed by output, $scratch/NN.out
awk -v dir="$scratch" '
    /^```sql$/ { n++; file = sprintf("%s/%02d.sql", dir, n); inblock = 1; last = "sql"; next }
    /^```$/ && inblock { inblock = 0; close(file); next }
    /^```$/ && !inblock && last == "sql" && n > 0 {
        file = sprintf("%s/%02d.out", dir, n); inblock = 1; last = "out"; next }
    /^```/ { last = "other"; next }
    inblock { print > file; next }
    /[^[:space:]]/ { last = "text" }
' README.md

scratch_cluster cluster >/dev/null

# trailing whitespace and trailing blank lines do not count
normalize() { sed 's/[[:space:]]*$//' | awk 'NF { for (; b > 0; b--) print ""; print; next } { b++ }'; }

failed=0
for sql in "$scratch"/*.sql; do
    out=${sql%.sql}.out
    got=${sql%.sql}.got
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -f "$sql" >"$got" 2>&1 \
        || { echo "FAIL: $(basename "$sql") did not run:"; cat "$sql" "$got"; failed=1; continue; }
    if [ -f "$out" ]; then
        if diff -u <(normalize <"$out") <(normalize <"$got") >"$got.diff"; then
            echo "ok:   $(basename "$sql") (output matches)"
        else
            echo "FAIL: $(basename "$sql") output differs:"
            cat "$sql" "$got.diff"
            failed=1
        fi
    else
        echo "ok:   $(basename "$sql") (runs)"
    fi
done
exit $failed
