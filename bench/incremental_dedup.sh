#!/usr/bin/env bash
# Incremental dedup: a batch of new documents against an lsh-indexed table
# (BENCHMARKS.md, "Incremental dedup: a batch against an index").
# minhash_match(index, 'id', 'batch', 'id', 'sig', t) against the per-row
# join through the index in its two forms (%>= with the threshold in the
# query, and % with minhash.similarity_threshold; enable_seqscan = off,
# jit = off: one lsh probe per batch row, the join's best plan here) and the
# sequential-scan plan (a nested loop comparing every pair, timed on the
# batch's first 100 rows and scaled to the batch). Per threshold and round,
# the methods alternate; each call runs in a new connection (a batch job's).
# Wall time and CPU time (what the postmaster reaped from the backend), and
# the rows returned. minhash_match runs twice, at the cluster's work_mem
# (64MB) and at PostgreSQL's default memory settings (work_mem 4MB,
# hash_mem_multiplier 2: "match_default"), where a batch larger than what
# hash_mem holds takes a pass over the index per chunk. Then the same in one
# warm backend that has run each query before (its CPU from
# /proc/self/schedstat, and its minor page faults); the pairs of
# minhash_match and of the join are compared (both EXCEPTs, which must be
# empty).
#
#   bash bench/incremental_dedup.sh DOCS.tsv [ROWS] [BATCH] [ROUNDS] [THRESHOLDS]
#
# DOCS.tsv: build/core/minhash-gen docs --rows N --out DOCS.tsv --truth T.tsv
# with N >= ROWS + BATCH (default 1000000 + 10000; THRESHOLDS "0.5 0.8",
# ROUNDS 3). The batch is BATCH documents drawn at random from the first
# ROWS + BATCH (so that it holds near-duplicates of indexed rows, as new
# documents of a crawl do), the indexed table the other ROWS. The cluster
# (shared_buffers 4GB, work_mem 64MB) lives under $SCRATCH_PARENT (default
# /tmp) and is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:?usage: bench/incremental_dedup.sh DOCS.tsv [ROWS] [BATCH] [ROUNDS] [THRESHOLDS]}
rows=${2:-1000000}
batch=${3:-10000}
rounds=${4:-3}
thresholds=${5:-"0.5 0.8"}
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir incdedup
scratch_cluster pg "shared_buffers = '4GB'" "work_mem = '64MB'" "autovacuum = off" \
    "max_wal_size = '8GB'" "max_parallel_workers_per_gather = 0" >/dev/null
pm=$(head -n 1 "$(psql -X -tAc 'SHOW data_directory')/postmaster.pid")

psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION minhash;
CREATE TABLE docs_raw (id int, cluster int, body text);
\copy docs_raw FROM '$docs'
DELETE FROM docs_raw WHERE id > $rows + $batch;
CREATE TABLE batch AS SELECT id, body FROM docs_raw ORDER BY hashint4(id), id LIMIT $batch;
CREATE TABLE docs AS SELECT id, body FROM docs_raw WHERE id NOT IN (SELECT id FROM batch);
DROP TABLE docs_raw;
ALTER TABLE docs ADD COLUMN sig minhash;
UPDATE docs SET sig = minhash(body);
ALTER TABLE batch ADD COLUMN sig minhash;
UPDATE batch SET sig = minhash(body);
ALTER TABLE docs ADD PRIMARY KEY (id);
ALTER TABLE batch ADD PRIMARY KEY (id);
CREATE TABLE batch100 AS SELECT * FROM batch ORDER BY id LIMIT 100;
VACUUM ANALYZE docs;
VACUUM ANALYZE batch;
VACUUM ANALYZE batch100;
CREATE INDEX docs_sig_lsh ON docs USING lsh (sig);
CHECKPOINT;
SQL
# every page in shared buffers before the first timing: each method reads the same ones
psql -X -q -c "CREATE EXTENSION pg_prewarm" -c "SELECT pg_prewarm('docs'), pg_prewarm('docs_sig_lsh'), pg_prewarm('batch')" >/dev/null

# shellcheck source=bench/lib/timed_pairs.sh
. bench/lib/timed_pairs.sh
echo "docs: $(psql -X -tAc "SELECT format('%s rows, index %s, batch %s rows', count(*), pg_size_pretty(pg_relation_size('docs_sig_lsh')), (SELECT count(*) FROM batch)) FROM docs")"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo

match_q() { echo "minhash_match('docs_sig_lsh', 'id', 'batch', 'id', 'sig', $1)"; }
join_ge_q() { echo "(SELECT n.id, o.id FROM batch n JOIN docs o ON o.sig %>= ROW(n.sig, $1)::minhash_query) j"; }
join_pct_q() { echo "(SELECT n.id, o.id FROM batch n JOIN docs o ON o.sig % n.sig) j"; }
forced=("SET enable_seqscan = off" "SET jit = off")
# minhash_match at PostgreSQL's default memory settings rather than the
# cluster's work_mem: a batch larger than a chunk costs a pass per chunk
default_mem=("SET work_mem = '4MB'" "SET hash_mem_multiplier = 2")

echo "| t | method | round | wall s | CPU s | rows | load average before |"
echo "|---|---|---|---|---|---|---|"
for t in $thresholds; do
    for r in $(seq 1 "$rounds"); do
        for m in match match_default join_ge join_pct; do
            load=$(cut -d' ' -f1-3 /proc/loadavg)
            case $m in
            match) res=$(timed_count "$pm" "$(match_q "$t")") ;;
            match_default) res=$(timed_count "$pm" "$(match_q "$t")" "${default_mem[@]}") ;;
            join_ge) res=$(timed_count "$pm" "$(join_ge_q "$t")" "${forced[@]}") ;;
            join_pct) res=$(timed_count "$pm" "$(join_pct_q "$t")" "${forced[@]}" "SET minhash.similarity_threshold = $t") ;;
            esac
            echo "| $t | $m | $r | $res | $load |"
        done
    done
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    res=$(timed_count "$pm" "(SELECT n.id, o.id FROM batch100 n JOIN docs o ON minhash_similar(o.sig, n.sig, $t)) j" \
        "SET enable_indexscan = off" "SET enable_bitmapscan = off" "SET jit = off")
    echo "| $t | seq scan, first 100 batch rows (× $((batch / 100)) for the batch) | 1 | $res | $load |"
done

# The same in one backend that has run each query before (a pooled
# connection): its CPU from /proc/self/schedstat, and the minor page faults
# (a new backend faults in every shared buffer page it touches first).
stat() { echo "split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 AS c0, split_part(pg_read_file('/proc/self/stat'), ' ', 10)::int8 AS f0, clock_timestamp() AS w0"; }
echo
echo "In one warm backend (each query run once before):"
echo
echo "| t | method | round | wall s | CPU s | rows | minor faults | load average before |"
echo "|---|---|---|---|---|---|---|---|"
for t in $thresholds; do
    {
        echo "SET enable_seqscan = off; SET jit = off; SET minhash.similarity_threshold = $t;"
        for q in "$(match_q "$t")" "$(join_ge_q "$t")" "$(join_pct_q "$t")"; do
            echo "SELECT count(*) FROM $q;"
        done
        for r in $(seq 1 "$rounds"); do
            for m in match match_default join_ge join_pct; do
                mem="RESET work_mem; RESET hash_mem_multiplier;"
                case $m in
                match) q=$(match_q "$t") ;;
                match_default) q=$(match_q "$t"); mem=$(printf '%s; ' "${default_mem[@]}") ;;
                join_ge) q=$(join_ge_q "$t") ;;
                join_pct) q=$(join_pct_q "$t") ;;
                esac
                echo "$mem"
                echo "SELECT pg_read_file('/proc/loadavg') AS load \gset"
                echo "SELECT $(stat) \gset"
                echo "SELECT count(*) AS n FROM $q \gset"
                echo "SELECT format('| $t | $m | $r | %s | %s | %s | %s | %s |', round(extract(epoch FROM clock_timestamp() - :'w0')::numeric, 3),
                      round((split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 - :c0) / 1e9, 3), :n,
                      split_part(pg_read_file('/proc/self/stat'), ' ', 10)::int8 - :f0, substr(:'load', 1, 14));"
            done
        done
    } | psql -X -q -tA -v ON_ERROR_STOP=1 | grep '^|'
done

echo
echo "Same pairs (minhash_match against the %>= join through the index):"
echo
echo "| t | pairs | only in minhash_match | only in the join | plan of the join |"
echo "|---|---|---|---|---|"
for t in $thresholds; do
    plan=$(psql -X -q -tA -c "SET enable_seqscan = off" -c "SET jit = off" \
        -c "EXPLAIN (COSTS OFF) SELECT n.id, o.id FROM batch n JOIN docs o ON o.sig %>= ROW(n.sig, $t)::minhash_query" |
        sed 's/^ *//; s/^->  //' | paste -sd ';' | sed 's/;/; /g')
    cmp=$(psql -X -q -tA -F' | ' -c "SET enable_seqscan = off" -c "SET jit = off" -c "
        CREATE TEMP TABLE m AS SELECT batch_key AS a, key AS b FROM $(match_q "$t");
        CREATE TEMP TABLE j AS SELECT n.id::bigint AS a, o.id::bigint AS b FROM batch n JOIN docs o ON o.sig %>= ROW(n.sig, $t)::minhash_query;
        SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM (SELECT * FROM m EXCEPT ALL SELECT * FROM j) x),
               (SELECT count(*) FROM (SELECT * FROM j EXCEPT ALL SELECT * FROM m) x)" | tail -n 1)
    echo "| $t | $cmp | $plan |"
done
