#!/usr/bin/env bash
# One lsh index build on a cold cluster kept by `bench/run.sh --keep` (the
# 10M figures in BENCHMARKS.md, "Index build"): the cluster restarted, its files
# written back and dropped from the kernel's page cache, then
# CREATE INDEX ... USING lsh (sig) WITH (threshold = 0.5) with WORKERS
# parallel maintenance workers and maintenance_work_mem = MWM; the index is
# dropped again. Prints wall and CPU (the postmaster's reaped children:
# backend and workers) and the workers launched.
#
#   bash bench/build_cold.sh CLUSTER_DIR WORKERS [MWM]
#
# CLUSTER_DIR: the kept scratch cluster (its pg/ directory), with docs(sig).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${1:?usage: bench/build_cold.sh CLUSTER_DIR WORKERS [MWM]}
workers=${2:?} mwm=${3:-1GB}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
bash scripts/pgcluster.sh stop "$dir/pg" >/dev/null 2>&1
# shellcheck source=bench/lib/timed_pairs.sh
. bench/lib/timed_pairs.sh
drop_page_cache "$dir/pg/data/base"
bash scripts/pgcluster.sh start "$dir/pg" >/dev/null
# shellcheck disable=SC1091
. "$dir/pg/env"
pm=$(head -n 1 "$dir/pg/data/postmaster.pid")
load=$(cut -d' ' -f1-3 /proc/loadavg)
c0=$(_children_cpu "$pm")
out=$(psql -X -q -v ON_ERROR_STOP=1 -c "SET max_parallel_maintenance_workers = $workers" \
    -c "SET maintenance_work_mem = '$mwm'" -c "SET client_min_messages = debug1" -c '\timing on' \
    -c "CREATE INDEX docs_sig_lsh_cold ON docs USING lsh (sig) WITH (threshold = 0.5)" 2>&1)
rc=$?
sleep 1   # the backend reaped
c1=$(_children_cpu "$pm")
ms=$(awk '/^Time: / { t = $2 } END { print t }' <<<"$out")
launched=$(grep -o '[0-9]* of [0-9]* parallel workers launched' <<<"$out" || echo "serial")
size=$(psql -X -tAc "SELECT pg_size_pretty(pg_relation_size('docs_sig_lsh_cold'))" 2>/dev/null)
psql -X -q -c "DROP INDEX IF EXISTS docs_sig_lsh_cold" -c CHECKPOINT >/dev/null
[ "$rc" = 0 ] || { echo "$out" >&2; exit 1; }
tck=$(getconf CLK_TCK)
echo "workers=$workers mwm=$mwm ($launched): wall $(awk "BEGIN { printf \"%.1f\", $ms / 1000 }") s," \
    "CPU $(awk "BEGIN { printf \"%.1f\", ($c1 - $c0) / $tck }") s, size $size, load before $load"
