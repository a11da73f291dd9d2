#!/usr/bin/env bash
# minhash_clusters on groups of identical rows (boilerplate repeated
# thousands of times), two builds side by side: the wall time of one call
# per mode on N identical rows, and on a corpus of near-duplicate clusters
# with exact duplicates mixed in, a checksum of the clusters of both modes,
# which must be the same for both builds.
#
#   bash bench/clusters_identical.sh BASE_PG_CONFIG NEW_PG_CONFIG [rows] [rounds]
#
# rows (default 100000): the corpus (bench/sql/variant_clusters.sql: rows/10
# clusters of 10 variants), plus 5 rows copied 1,000 times each. The
# identical-row tables have 10,000, 20,000 and 200,000 rows; the base build
# runs the 200,000 only with CLUSTERS_BASE_FULL=1 (a build that lists every
# pair of a group takes over an hour there). Each PG_CONFIG names a private
# installation with one build installed (`make install` with that
# PG_CONFIG), as for bench/compare_builds.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS_DEFAULT=100000
# shellcheck source=bench/lib/two_builds.sh
. bench/lib/two_builds.sh
two_builds_args clusters_identical "$@"
sizes=(10000 20000 200000)

start() {  # name pg_config
    PG_CONFIG=$2 scratch_cluster "$1" "shared_buffers = 1GB" "maintenance_work_mem = 512MB" \
        "jit = off" "autovacuum = off" "max_wal_size = 4GB" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -f bench/sql/variant_clusters.sql >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO d SELECT 100000000 + k * 1000 + j, -1, -1, (SELECT sig FROM d WHERE id = 16 * (k + 1))
FROM generate_series(1, 5) k, generate_series(1, 1000) j;
CREATE INDEX d_lsh ON d USING lsh (sig);
VACUUM ANALYZE d;
SQL
    for n in "${sizes[@]}"; do
        psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE TABLE same_$n (id bigint PRIMARY KEY, sig minhash);
INSERT INTO same_$n SELECT g, minhash('the same boilerplate page repeated thousands of times in a crawl'::text)
FROM generate_series(1, $n) g;
CREATE INDEX same_${n}_lsh ON same_$n USING lsh (sig);
VACUUM ANALYZE same_$n;
SQL
    done
}
start base "$BASE"
start new "$NEW"

measure() {  # cluster round
    local n out="" ms
    # shellcheck disable=SC1090
    . "$SCRATCH/$1/env"
    for n in "${sizes[@]}"; do
        if [ "$1" = base ] && [ "$n" -gt 20000 ] && [ "${CLUSTERS_BASE_FULL:-0}" != 1 ]; then
            continue
        fi
        for mode in connected representative; do
            ms=$(psql -X -qtA -v ON_ERROR_STOP=1 <<SQL
CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS t;
SELECT count(*) FROM minhash_clusters('same_${n}_lsh', 'id', mode => '$mode') HAVING count(*) = $n;
SELECT round(extract(epoch FROM clock_timestamp() - t) * 1000) FROM t0;
SQL
            )
            # the count line first (nothing if the rows are not one cluster), then the time
            [ "$(echo "$ms" | head -1)" = "$n" ] || { echo "same_$n $mode: not one cluster of $n rows" >&2; return 1; }
            out="$out ${mode:0:3}_${n}_ms=$(echo "$ms" | tail -1)"
        done
    done
    for mode in connected representative; do
        out="$out ${mode:0:3}_corpus=$(psql -X -qtA -v ON_ERROR_STOP=1 -c "
SELECT count(*) || '/' || count(DISTINCT cluster_id) || '/' || sum(hashint8(key) # hashint8(cluster_id))
FROM minhash_clusters('d_lsh', 'id', mode => '$mode')" | tr '/' ':')"
    done
    echo "$out"
}
out=$SCRATCH/rounds.txt
two_builds_rounds measure "$out"
echo "== same clusters on the corpus (rows:clusters:checksum), per build and mode"
awk '{ for (i = 4; i <= NF; i++) if ($i ~ /_corpus=/) print $3, $i }' "$out" | sort -u
if [ "$(awk '{ for (i = 4; i <= NF; i++) if ($i ~ /_corpus=/) print $i }' "$out" | sort -u | wc -l)" -ne 2 ]; then
    echo "the builds' clusters differ on the corpus" >&2
    exit 1
fi
echo "== medians (ms)"
sed -E 's/ [a-z]+_corpus=[^ ]*//g' "$out" >"$out.ms"
two_builds_medians "$out.ms"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
