#!/usr/bin/env bash
# Rows resolved in table order (issue 13.4; docs/pairs.md, "Tables larger
# than memory"): minhash_similar_pairs with the rows fetched as pairs come
# (effective_cache_size above the table and index), against rows resolved in
# table order (effective_cache_size below them), with the index read ahead
# (effective_cache_size above the index) or not, warm (everything in shared buffers)
# and cold (the cluster restarted and its files dropped from the kernel's
# page cache with posix_fadvise(DONTNEED), so every read goes to the disk as
# for a table larger than memory). Wall time, backend CPU (the postmaster's
# reaped-children CPU around one psql connection), pairs (must not depend
# on the mode). Modes alternate within each round.
#
#   bash bench/experiments/pairs_table_order.sh DOCS.tsv [ROWS] [ROUNDS]
#
# DOCS.tsv: build/core/minhash-gen docs --rows N --out DOCS.tsv --truth T.tsv
# The cluster lives under $SCRATCH_PARENT (default /tmp), removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
docs=${1:?usage: bench/experiments/pairs_table_order.sh DOCS.tsv [ROWS] [ROUNDS]}
rows=${2:-1000000}
rounds=${3:-3}
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir tableorder
conf=("shared_buffers = '4GB'" "work_mem = '64MB'" "autovacuum = off" "max_wal_size = '8GB'"
      "max_parallel_workers_per_gather = 0")
scratch_cluster pg "${conf[@]}" >/dev/null
# shellcheck source=bench/lib/docs_tsv.sh
. bench/lib/docs_tsv.sh
load_docs_indexed "$docs" "$rows"
datadir=$(psql -X -tAc 'SHOW data_directory')
echo "docs: $(psql -X -tAc "SELECT format('%s rows, table %s, index %s', count(*), pg_size_pretty(pg_table_size('docs')), pg_size_pretty(pg_relation_size('docs_sig_lsh'))) FROM docs"); $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
# shellcheck source=bench/lib/timed_pairs.sh
. bench/lib/timed_pairs.sh
cold() {
    psql -X -q -c CHECKPOINT
    bash scripts/pgcluster.sh stop "$SCRATCH/pg" >/dev/null
    drop_page_cache "$datadir/base"
    bash scripts/pgcluster.sh start "$SCRATCH/pg" "${conf[@]}" >/dev/null
    # shellcheck disable=SC1091
    . "$SCRATCH/pg/env"   # a new port
}
# effective_cache_size between the index's size and the table's plus the index's
index_kb=$(psql -X -tAc "SELECT pg_relation_size('docs_sig_lsh') / 1024 + 8")
pm() { head -n 1 "$datadir/postmaster.pid"; }
q="minhash_similar_pairs('docs_sig_lsh', 'id', 0.5)"
psql -X -q -c "SELECT count(*) FROM $q" >/dev/null   # warm
sleep 1   # its backend reaped before the first CPU reading
echo "| cache | resolution | round | wall s | backend CPU s | pairs | load average before |"
echo "|---|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
    for cache in warm cold; do
        for mode in "as they come, index read ahead|1TB" "table order, index read ahead|${index_kb}kB" \
                    "table order, no read-ahead|1"; do
            [ "$cache" = cold ] && cold
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            res=$(timed_count "$(pm)" "$q" "SET effective_cache_size = '${mode#*|}'")
            echo "| $cache | ${mode%|*} | $r | ${res} | $load |"
        done
    done
done
