#!/usr/bin/env bash
# Parallel lsh index build (issue 13.3): CREATE INDEX with 0, 1 and 2
# parallel maintenance workers, wall time and CPU time (the backend plus its
# workers: the postmaster's reaped-children CPU, read around one psql
# connection that runs only the CREATE INDEX).
#
#   bash bench/parallel_build.sh DOCS.tsv [ROWS]
#
# DOCS.tsv: build/core/minhash-gen docs --rows N --out DOCS.tsv --truth T.tsv
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:?usage: bench/parallel_build.sh DOCS.tsv [ROWS]}
rows=${2:-1000000}
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir parbench
scratch_cluster pg "shared_buffers = '2GB'" "autovacuum = off" "max_wal_size = '8GB'" >/dev/null
pm=$(head -n 1 "$(psql -X -tAc 'SHOW data_directory')/postmaster.pid")
# shellcheck source=bench/lib/docs_tsv.sh
. bench/lib/docs_tsv.sh
load_docs_tsv "$docs" "$rows"
psql -X -q -v ON_ERROR_STOP=1 <<SQL
-- lsh builds are parallel only on a table with parallel_workers set (docs/lsh.md);
-- max_parallel_maintenance_workers then sets the count per run
ALTER TABLE docs SET (parallel_workers = 2);
SQL
echo "docs: $(psql -X -tAc "SELECT format('%s rows, %s', count(*), pg_size_pretty(pg_table_size('docs'))) FROM docs"); $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
# children's CPU of the postmaster, in clock ticks (fields 16, 17 of /proc/PID/stat)
cpu() { awk '{ print $16 + $17 }' "/proc/$pm/stat"; }
tck=$(getconf CLK_TCK)
echo "| index | workers | wall s | CPU s (backend + workers) | load average before |"
echo "|---|---|---|---|---|"
for expr in "minhash(body)" "sig"; do
    for w in 0 1 2; do
        psql -X -q -c "DROP INDEX IF EXISTS docs_lsh" -c CHECKPOINT
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        c0=$(cpu)
        ms=$(psql -X -q -v ON_ERROR_STOP=1 -c "SET max_parallel_maintenance_workers = $w" \
            -c "SET maintenance_work_mem = '1GB'" -c '\timing on' \
            -c "CREATE INDEX docs_lsh ON docs USING lsh (($expr))" | awk '/^Time: / { t = $2 } END { print t }')
        sleep 1
        c1=$(cpu)
        echo "| lsh ($expr) | $w | $(awk "BEGIN { printf \"%.1f\", $ms / 1000 }") | $(awk "BEGIN { printf \"%.1f\", ($c1 - $c0) / $tck }") | $load |"
    done
done
psql -X -tAc "SELECT count(*) FROM minhash_lsh_check('docs_lsh', true)" | sed 's/^/minhash_lsh_check problems of the last (2-worker) build: /'
