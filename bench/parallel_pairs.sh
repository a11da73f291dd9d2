#!/usr/bin/env bash
# Parallel all-pairs walk (issue 13): minhash_similar_pairs and
# minhash_clusters with 0, 1 and 2 parallel workers
# (max_parallel_workers_per_gather; the 1M-row index is far above
# minhash.pairs_min_parallel_index_size; the leader gathers, the workers
# walk: docs/pairs.md), wall time and CPU time (the backend
# plus its workers: the postmaster's reaped-children CPU, read around one psql
# connection that runs only the query), and the result's row count, which
# must not depend on the workers. The worker counts alternate within each
# round, so a change in the machine's load hits them alike.
#
#   bash bench/parallel_pairs.sh DOCS.tsv [ROWS] [ROUNDS]
#
# DOCS.tsv: build/core/minhash-gen docs --rows N --out DOCS.tsv --truth T.tsv
# The cluster lives under $SCRATCH_PARENT (default /tmp), removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:?usage: bench/parallel_pairs.sh DOCS.tsv [ROWS] [ROUNDS]}
rows=${2:-1000000}
rounds=${3:-3}
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir parpairs
scratch_cluster pg "shared_buffers = '4GB'" "work_mem = '64MB'" "autovacuum = off" \
    "max_wal_size = '8GB'" "max_worker_processes = 8" "max_parallel_workers = 8" >/dev/null
pm=$(head -n 1 "$(psql -X -tAc 'SHOW data_directory')/postmaster.pid")
# shellcheck source=bench/lib/docs_tsv.sh
. bench/lib/docs_tsv.sh
load_docs_indexed "$docs" "$rows"
echo "docs: $(psql -X -tAc "SELECT format('%s rows, index %s', count(*), pg_size_pretty(pg_relation_size('docs_sig_lsh'))) FROM docs"); $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
# warm the buffers: the first walk reads the index from disk
psql -X -q -c "SELECT count(*) FROM minhash_similar_pairs('docs_sig_lsh', 'id', 0.5)" >/dev/null
sleep 1   # its backend reaped before the first CPU reading
# shellcheck source=bench/lib/timed_pairs.sh
. bench/lib/timed_pairs.sh
queries=("minhash_similar_pairs('docs_sig_lsh', 'id', 0.5)" "minhash_clusters('docs_sig_lsh', 'id', 0.5)")
echo "| query | workers | round | wall s | CPU s (backend + workers) | rows | load average before |"
echo "|---|---|---|---|---|---|---|"
for q in "${queries[@]}"; do
    for r in $(seq 1 "$rounds"); do
        for w in 0 1 2; do
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            res=$(timed_count "$pm" "$q" "SET max_parallel_workers_per_gather = $w")
            echo "| ${q%%(*} | $w | $r | ${res} | $load |"
        done
    done
done
