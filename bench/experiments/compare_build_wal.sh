#!/usr/bin/env bash
# Two builds of minhash.so side by side in ONE cluster, for CREATE INDEX only
# (issue 13.4: how the build WAL-logs its pages): per round each build makes
# the same lsh index on the same rows, alternating which goes first, and the
# script reports per build the wall time, the building backend's CPU
# (/proc/self/schedstat around the statement) and the WAL it wrote
# (pg_current_wal_insert_lsn before and after), then the medians and the
# ratios new / base. The first round also checks that both builds make the
# same index: the md5 of every page past its LSN and checksum (bytes 11 on;
# pageinspect's get_raw_page), which must match.
#
#   bash bench/experiments/compare_build_wal.sh PG_CONFIG BASE_SO NEW_SO [rows] [rounds] [shared_buffers]
#
# BASE_SO and NEW_SO are two builds of minhash.so (`make` with this
# PG_CONFIG, the file copied aside); each is moved into PG_CONFIG's pkglibdir
# as minhash.so (a rename, so a running backend keeps its mapping) before a
# build, which runs in a new session and so loads it; the file found there at
# the start is put back at the end. The rows are those of
# bench/sql/variant_clusters.sql, maintenance_work_mem = 1GB (bench/run.sh's);
# a CHECKPOINT precedes every build.
# With UNLOGGED=1 each round also builds with NEW_SO on an unlogged copy of
# the table ("new-unlogged": no WAL at all), which prices the WAL itself.
# Scratch data goes under $SCRATCH_PARENT (default /var/tmp): at 1M rows the
# index is about 730 MB and each build writes as much WAL.
set -euo pipefail
cd "$(dirname "$0")/../.."
usage='usage: bench/experiments/compare_build_wal.sh PG_CONFIG BASE_SO NEW_SO [rows] [rounds] [shared_buffers]'
PG_CONFIG=${1:?$usage}
BASE_SO=$(realpath "${2:?$usage}")
NEW_SO=$(realpath "${3:?$usage}")
rows=${4:-1000000}
rounds=${5:-3}
sb=${6:-512MB}
export PG_CONFIG
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir build-wal

lib=$("$PG_CONFIG" --pkglibdir)/minhash.so
cp -p "$lib" "$SCRATCH/minhash.so.orig"
scratch_at_exit "cp -p '$SCRATCH/minhash.so.orig' '$lib.tmp' && mv -f '$lib.tmp' '$lib'"
use_so() {  # file
    cp -p "$1" "$lib.tmp" && mv -f "$lib.tmp" "$lib"
}

use_so "$NEW_SO"
scratch_cluster c "shared_buffers = $sb" "maintenance_work_mem = 1GB" "jit = off" \
    "autovacuum = off" "max_wal_size = 4GB" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -f bench/sql/variant_clusters.sql >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION pageinspect' -c 'VACUUM ANALYZE d'
if [ "${UNLOGGED:-0}" = 1 ]; then
    psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE UNLOGGED TABLE du AS SELECT * FROM d' -c 'VACUUM ANALYZE du'
fi

# one build: prints "wall_s cpu_s wal_mb pages"
build() {  # so [table]
    use_so "$1"
    psql -X -qtA -v ON_ERROR_STOP=1 -v t="${2:-d}" <<'SQL'
SET client_min_messages = warning;
DROP INDEX IF EXISTS d_lsh;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS l0,
       split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS c0,
       clock_timestamp() AS t0 \gset
CREATE INDEX d_lsh ON :t USING lsh (sig) WITH (threshold = 0.5);
SELECT round(extract(epoch FROM clock_timestamp() - :'t0')::numeric, 2),
       round((split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :c0) / 1e9, 2),
       round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / 1048576.0, 1),
       pg_relation_size('d_lsh') / current_setting('block_size')::int;
SQL
}

# md5 of the index's pages past pd_lsn and pd_checksum
pages_md5() {
    psql -X -qtA -v ON_ERROR_STOP=1 -c "
SELECT md5(string_agg(md5(substr(get_raw_page('d_lsh', b::int), 11)), '' ORDER BY b))
FROM generate_series(0, pg_relation_size('d_lsh') / current_setting('block_size')::int - 1) b"
}

echo "rows=$rows rounds=$rounds shared_buffers=$sb"
echo "round build wall_s cpu_s wal_mb pages"
: >"$SCRATCH/results"
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then order="base new"; else order="new base"; fi
    [ "${UNLOGGED:-0}" = 1 ] && order="$order new-unlogged"
    for b in $order; do
        if [ "$b" = base ]; then so=$BASE_SO; else so=$NEW_SO; fi
        if [ "$b" = new-unlogged ]; then
            echo "$r $b $(build "$so" du | tr '|' ' ')" | tee -a "$SCRATCH/results"
            continue
        fi
        line=$(build "$so" | tr '|' ' ')
        echo "$r $b $line" | tee -a "$SCRATCH/results"
        if [ "$r" -eq 1 ]; then
            echo "$b $(pages_md5)" >>"$SCRATCH/md5"
        fi
    done
done
if [ "$(awk '{print $2}' "$SCRATCH/md5" | sort -u | wc -l)" -eq 1 ]; then
    echo "pages: identical past LSN and checksum ($(head -1 "$SCRATCH/md5" | awk '{print $2}'))"
else
    echo "pages: DIFFER"; cat "$SCRATCH/md5"; exit 1
fi
awk '
function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ n[$2]++; w[$2, n[$2]] = $3; c[$2, n[$2]] = $4; l[$2, n[$2]] = $5 }
END {
    for (b in n) {
        for (i = 1; i <= n[b]; i++) { x[i] = w[b, i] } mw[b] = median(x, n[b])
        for (i = 1; i <= n[b]; i++) { x[i] = c[b, i] } mc[b] = median(x, n[b])
        for (i = 1; i <= n[b]; i++) { x[i] = l[b, i] } ml[b] = median(x, n[b])
        printf "median %s: wall %.2f s, backend CPU %.2f s, WAL %.1f MB\n", b, mw[b], mc[b], ml[b]
    }
    if ("new-unlogged" in n)
        printf "new-unlogged / new: wall %.3f, CPU %.3f\n", mw["new-unlogged"] / mw["new"], mc["new-unlogged"] / mc["new"]
    printf "new / base: wall %.3f, CPU %.3f, WAL %.3f\n", mw["new"] / mw["base"], mc["new"] / mc["base"], ml["new"] / ml["base"]
}' "$SCRATCH/results"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
