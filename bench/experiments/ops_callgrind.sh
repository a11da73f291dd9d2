#!/usr/bin/env bash
# Two builds of the current version counted instead of timed: the
# instructions (callgrind) of the index's operations on the same rows, for a
# refactoring that should change none of them. On a shared machine CPU times
# swing by 20-40% between rounds; instruction counts repeat exactly.
#
#   bash bench/experiments/ops_callgrind.sh BASE_PG_CONFIG NEW_PG_CONFIG [rows]   (default 30000)
#
# Each PG_CONFIG names a private PostgreSQL installation with one build of
# minhash installed (`make install` with that PG_CONFIG). For each build: a
# scratch cluster with the rows of bench/sql/variant_clusters.sql, an lsh
# index (threshold 0.5) and 300 query signatures, stopped; then, one
# statement at a time in a single-user backend under callgrind, counting the
# instructions inside the index's functions:
#  - pct: 300 `%` queries (LATERAL; lshgettuple, lshgetbitmap, lshrescan);
#  - knn: 300 `ORDER BY sig <%> q LIMIT 10` queries (the same functions);
#  - pairs: minhash_similar_pairs(index, 'id') (pairs_walk);
#  - insert: 5% more rows, one INSERT (lshinsert: slots, appends, splits).
# Prints per operation both counts, new / base, and each count(*) result
# (which must agree). Needs valgrind (scripts/install-deps.sh valgrind).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
usage="usage: bench/experiments/ops_callgrind.sh BASE_PG_CONFIG NEW_PG_CONFIG [rows]"
BASE=${1:?$usage}
NEW=${2:?$usage}
rows=${3:-30000}
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
    echo "bench/experiments/ops_callgrind.sh: valgrind is missing (scripts/install-deps.sh valgrind)" >&2
    exit 1
fi
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir ops_callgrind

as_postgres() {
    if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

statement() {  # operation
    case $1 in
    pct) echo "SET enable_seqscan = off; SELECT count(*) FROM qs, LATERAL (SELECT id FROM d WHERE d.sig % qs.sig OFFSET 0) x;" ;;
    knn) echo "SET enable_seqscan = off; SELECT count(*) FROM qs, LATERAL (SELECT id FROM d ORDER BY d.sig <%> qs.sig LIMIT 10) x;" ;;
    pairs) echo "SELECT count(*) FROM minhash_similar_pairs('d_lsh', 'id');" ;;
    insert) echo "INSERT INTO d SELECT id + 100000000, c, m, sig FROM d WHERE id % 20 = 0;" ;;
    esac
}
collected() {  # operation
    case $1 in
    pct | knn) echo "--toggle-collect=lshgettuple* --toggle-collect=lshgetbitmap* --toggle-collect=lshrescan*" ;;
    pairs) echo "--toggle-collect=pairs_walk*" ;;
    insert) echo "--toggle-collect=lshinsert*" ;;
    esac
}

out=$SCRATCH/counts.txt
for b in base new; do
    pgc=$BASE
    [ "$b" = new ] && pgc=$NEW
    PG_CONFIG=$pgc scratch_cluster "$b" "shared_buffers = 256MB" "jit = off" "autovacuum = off" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -f "$root/bench/sql/variant_clusters.sql" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE INDEX d_lsh ON d USING lsh (sig) WITH (threshold = 0.5);
VACUUM ANALYZE d;
CREATE TABLE qs AS SELECT row_number() OVER () AS n, sig FROM d ORDER BY hashint4(id) LIMIT 300;
CHECKPOINT;
SQL
    PG_CONFIG=$pgc bash scripts/pgcluster.sh stop "$SCRATCH/$b"
    for op in pct knn pairs insert; do
        statement "$op" >"$SCRATCH/q.sql"
        chmod 644 "$SCRATCH/q.sql"
        # shellcheck disable=SC2046 # the options are words
        as_postgres valgrind --tool=callgrind --callgrind-out-file="$SCRATCH/$b.$op.cg" $(collected "$op") \
            "$("$pgc" --bindir)/postgres" --single -D "$SCRATCH/$b/data" postgres \
            <"$SCRATCH/q.sql" >"$SCRATCH/$b.$op.log" 2>&1
        grep -q ERROR "$SCRATCH/$b.$op.log" && { cat "$SCRATCH/$b.$op.log" >&2; exit 1; }
        ir=$(callgrind_annotate "$SCRATCH/$b.$op.cg" 2>/dev/null |
            awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        result=$(grep -o 'count = "[0-9]*"' "$SCRATCH/$b.$op.log" | tr -dc '0-9' || true)
        echo "$b $op $ir ${result:--}" | tee -a "$out"
    done
done
awk '{ ir[$1, $2] = $3; res[$1, $2] = $4 }
     END {
         printf "%-8s %15s %15s %9s  %s\n", "", "base Ir", "new Ir", "new/base", "result base / new"
         split("pct knn pairs insert", ops, " ")
         for (i = 1; i <= 4; i++) {
             o = ops[i]
             printf "%-8s %15d %15d %9.4f  %s / %s\n", o, ir["base", o], ir["new", o],
                 (ir["base", o] > 0 ? ir["new", o] / ir["base", o] : 0), res["base", o], res["new", o]
         }
     }' "$out"
