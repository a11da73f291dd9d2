#!/usr/bin/env bash
# One all-pairs call on a cold cluster kept by `bench/run.sh --keep` (the
# 10M figures in BENCHMARKS.md, "All pairs and clusters"): the cluster restarted,
# its files written back and dropped from the kernel's page cache
# (posix_fadvise DONTNEED), so the walk starts from disk as for a table
# larger than memory; then one call with effective_cache_size = 16GB,
# WORKERS parallel workers and DEBUG1 logged to the server log (the phase
# times). Prints wall and CPU (the postmaster's reaped children: backend and
# workers).
#
#   bash bench/pairs_cold.sh CLUSTER_DIR SO WORKERS pairs|pairs_table|clusters [TIMEOUT_S]
#
# CLUSTER_DIR: the kept scratch cluster (its pg/ directory), with docs and
# docs_sig_lsh; SO: a minhash.so copied into $PG_CONFIG's library directory
# first (to compare builds), or "-" to keep the installed one.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${1:?usage: bench/pairs_cold.sh CLUSTER_DIR SO WORKERS pairs|pairs_table|clusters [TIMEOUT_S]}
so=${2:?} workers=${3:?} what=${4:?} timeout=${5:-0}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
bash scripts/pgcluster.sh stop "$dir/pg" >/dev/null 2>&1
[ "$so" != - ] && cp "$so" "$("$PG_CONFIG" --pkglibdir)/minhash.so"
# shellcheck source=bench/lib/timed_pairs.sh
. bench/lib/timed_pairs.sh
drop_page_cache "$dir/pg/data/base"
bash scripts/pgcluster.sh start "$dir/pg" >/dev/null
# shellcheck disable=SC1091
. "$dir/pg/env"
pm=$(head -n 1 "$dir/pg/data/postmaster.pid")
cpu() { awk '{ print $16 + $17 }' "/proc/$pm/stat"; }
case $what in
pairs) sql="SELECT count(*) FROM minhash_similar_pairs('docs_sig_lsh', 'id', 0.5)" ;;
pairs_table) sql="CREATE TABLE pairs_new AS SELECT key_a AS a, key_b AS b FROM minhash_similar_pairs('docs_sig_lsh', 'id', 0.5)" ;;
clusters) sql="SELECT count(*), count(DISTINCT cluster_id) FROM minhash_clusters('docs_sig_lsh', 'id', 0.5)" ;;
*) echo "unknown query: $what" >&2; exit 2 ;;
esac
load=$(cut -d' ' -f1-3 /proc/loadavg)
c0=$(cpu)
t0=$(date +%s.%N)
psql -X -c "SET effective_cache_size = '16GB'" -c "SET max_parallel_workers_per_gather = $workers" \
    -c "SET minhash.pairs_min_parallel_index_size = 0" -c "SET statement_timeout = '${timeout}s'" \
    -c "SET client_min_messages = debug1" -c "SET log_min_messages = debug1" -c '\timing on' \
    -c "$sql" 2>&1 | grep -v '% of index' | tail -n 8
t1=$(date +%s.%N)
sleep 1
c1=$(cpu)
echo "so=$so workers=$workers what=$what wall=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s" \
     "cpu=$(awk "BEGIN { printf \"%.1f\", ($c1 - $c0) / $(getconf CLK_TCK) }") s load_before=$load"
echo "phases (server log):"
grep -E 'minhash_(similar_pairs|clusters): (index .* read ahead|table and index|resolving|the ends|[0-9]+ rows fetched|[0-9]+ leaves)' \
    "$dir/pg/server.log" | tail -n 6 | cut -c1-160
bash scripts/pgcluster.sh stop "$dir/pg" >/dev/null
