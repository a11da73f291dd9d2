#!/usr/bin/env bash
# A Citus distributed table against a plain table on the coordinator, side by
# side in one run: what the coordinator adds (docs/scale-out.md, "Citus").
#
#   bash bench/citus.sh [--rows N] [--workers W] [--shards S] [--queries Q] [--keep]
#
# Needs Citus in the PostgreSQL of PG_CONFIG (scripts/citus.sh). Starts a
# coordinator and W workers on loopback (scripts/pgcluster.sh clusters; minhash
# preloaded after citus at session start, so that one session can also run
# without it), creates `docs` distributed in S shards (hash on id) with an lsh
# index and the same rows in the plain table `docs_local` on the coordinator:
# the corpus of scripts/shards.sh --demo (half the rows in clusters of 5
# near-duplicate texts, half unique). Measures on both, in the same run:
#  - Q queries of each kind: `%` at 0.6 after SET, minhash_similar(sig, q, 0.5),
#    ORDER BY sig <%> q LIMIT 10 with minhash_similar(sig, q, 0.5);
#  - a join of 20 query signatures (a reference table) with the table on %;
#  - minhash_similar_pairs and minhash_clusters at 0.5;
#  - minhash_agg(body) over the whole table, also in a session without minhash
#    preloaded (Citus then gathers every row to the coordinator);
#  - minhash_lsh_stats.
# For each: wall time, the coordinator's CPU and the workers' CPU (all
# processes of each cluster: postmaster utime + stime with reaped children,
# plus live children, from /proc). Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
rows=100000 workers=2 shards=8 queries=100 keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --rows) rows=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: bench/citus.sh [--rows N] [--workers W] [--shards S] [--queries Q] [--keep]" >&2; exit 2 ;;
    esac
done
bash scripts/citus.sh --check

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
SCRATCH_KEEP=$keep
scratch_dir citus
dir=$SCRATCH
. bench/lib/citus_cluster.sh
# scratch_cluster sources each env; stopped at exit
citus_cluster "$workers" "shared_preload_libraries = 'citus'" "session_preload_libraries = 'minhash'" \
    "max_connections = 100" "max_worker_processes = 16" "shared_buffers = 256MB" \
    "citus.shard_count = $shards" "log_statement = none"

echo "loading $rows rows into docs ($shards shards on $workers workers) and docs_local ..." >&2
t0=$(date +%s.%N)
on coord >/dev/null <<EOT
CREATE EXTENSION minhash;
CREATE TABLE docs (id bigint NOT NULL, body text, sig minhash);
SELECT create_distributed_table('docs', 'id');
-- scripts/shards.sh --demo's corpus: half in clusters of 5 near-duplicates, half unique
CREATE TABLE docs_local AS SELECT id, body, minhash(body) AS sig FROM (
  SELECT id, (SELECT string_agg('w' || (c * 1000 + j)::text, ' ') FROM generate_series(1, 40) j)
             || ' v' || (id % 5)::text AS body
  FROM (SELECT id, CASE WHEN (id / 5) % 2 = 0 THEN id / 5 ELSE -id END AS c
        FROM generate_series(1, $rows) id) g) s;
INSERT INTO docs SELECT * FROM docs_local;
CREATE INDEX docs_lsh ON docs USING lsh (sig);
CREATE INDEX docs_local_lsh ON docs_local USING lsh (sig);
ALTER TABLE docs_local ADD PRIMARY KEY (id);
CREATE TABLE queries (qid int, sig minhash);
SELECT create_reference_table('queries');
INSERT INTO queries SELECT row_number() OVER (ORDER BY id), sig FROM docs_local WHERE id IN (SELECT g * 997 % $rows + 1 FROM generate_series(1, 20) g);
CREATE TABLE queries_local AS SELECT * FROM queries;
VACUUM ANALYZE docs_local, queries_local;
ANALYZE docs, queries;
EOT
for i in $(seq 1 "$workers"); do on "worker$i" -c "VACUUM ANALYZE" >/dev/null; done
load_s=$(echo "$(date +%s.%N) - $t0" | bc -l)

# CPU seconds of one cluster's processes: postmaster (with reaped children) + live children
cluster_cpu() {
    local pm hz
    hz=$(getconf CLK_TCK)
    pm=$(head -1 "$dir/$1/data/postmaster.pid")
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$pm" -v hz="$hz" '
        { pid = $1; line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
          if (pid == pm) s += (f[12] + f[13] + f[14] + f[15]) / hz
          else if (f[2] == pm) s += (f[12] + f[13]) / hz }
        END { printf "%.3f", s }'
}
workers_cpu() {
    local t=0 i
    for i in $(seq 1 "$workers"); do t=$(echo "$t + $(cluster_cpu "worker$i")" | bc -l); done
    echo "$t"
}

declare -A WALL CCPU WCPU
# measure NAME FILE [PGOPTIONS]: one psql session running FILE on the coordinator
measure() {
    local name=$1 file=$2 opts=${3:-} t0 c0 w0 t1
    c0=$(cluster_cpu coord); w0=$(workers_cpu); t0=$(date +%s.%N)
    (. "$dir/coord/env" && PGOPTIONS="$opts" "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -f "$file" >"$dir/$name.out")
    t1=$(date +%s.%N); sleep 0.3
    WALL[$name]=$(echo "$t1 - $t0" | bc -l)
    CCPU[$name]=$(echo "$(cluster_cpu coord) - $c0" | bc -l)
    WCPU[$name]=$(echo "$(workers_cpu) - $w0" | bc -l)
}

# the query signatures, as literals (both sides pay nothing to fetch them)
on coord -At -c "SELECT sig FROM docs_local WHERE id IN (SELECT g * 9973 % $rows + 1 FROM generate_series(1, $queries) g)" >"$dir/sigs"
for t in docs docs_local; do
    {
        echo "SET minhash.similarity_threshold = 0.6;"
        while read -r s; do echo "SELECT count(*) FROM $t WHERE sig % '$s';"; done <"$dir/sigs"
    } >"$dir/pct_$t.sql"
    while read -r s; do echo "SELECT count(*) FROM $t WHERE minhash_similar(sig, '$s', 0.5);"; done <"$dir/sigs" >"$dir/thr_$t.sql"
    while read -r s; do echo "SELECT round((sig <%> '$s')::numeric, 6) FROM $t WHERE minhash_similar(sig, '$s', 0.5) ORDER BY sig <%> '$s' LIMIT 10;"; done <"$dir/sigs" >"$dir/knn_$t.sql"
done
q_ref() { [ "$1" = docs ] && echo queries || echo queries_local; }
for t in docs docs_local; do
    echo "SET minhash.similarity_threshold = 0.6; SELECT count(*) FROM $(q_ref $t) q JOIN $t d ON d.sig % q.sig;" >"$dir/join_$t.sql"
    echo "SELECT count(*) FROM minhash_similar_pairs('${t}_lsh', 'id', 0.5);" >"$dir/pairs_$t.sql"
    echo "SELECT count(*) FROM minhash_clusters('${t}_lsh', 'id', 0.5);" >"$dir/clusters_$t.sql"
    echo "SELECT md5(minhash_agg(body)::text) FROM $t;" >"$dir/agg_$t.sql"
    echo "SELECT live_rows, entries FROM minhash_lsh_stats('${t}_lsh');" >"$dir/stats_$t.sql"
done
# warm the caches once
for f in pct thr knn; do measure warm "$dir/${f}_docs.sql"; measure warm "$dir/${f}_docs_local.sql"; done
for f in pct thr knn join pairs clusters agg stats; do
    measure "${f}_docs" "$dir/${f}_docs.sql"
    measure "${f}_docs_local" "$dir/${f}_docs_local.sql"
done
measure agg_gather "$dir/agg_docs.sql" "-c session_preload_libraries="
same() { cmp -s "$dir/$1.out" "$dir/$2.out" && echo same || echo DIFFERENT; }

uptime_s=$(uptime | sed 's/.*load average: //')
echo
echo "$rows rows, $workers workers x $((shards / workers)) shards of docs + coordinator, one machine ($(nproc) cores, load $uptime_s); loaded in $(printf '%.0f' "$load_s") s"
echo
echo "| measure | plain table: wall | distributed: wall | ratio | distributed: coordinator CPU | workers CPU | answer |"
echo "|---|---|---|---|---|---|---|"
row() {
    local name=$1 what=$2
    printf '| %s | %.3f s | %.3f s | %.1fx | %.3f s | %.3f s | %s |\n' "$what" "${WALL[${name}_docs_local]}" \
        "${WALL[${name}_docs]}" "$(echo "${WALL[${name}_docs]} / ${WALL[${name}_docs_local]}" | bc -l)" \
        "${CCPU[${name}_docs]}" "${WCPU[${name}_docs]}" "$(same "${name}_docs" "${name}_docs_local")"
}
row pct "$queries \`%\` queries at 0.6 (after SET)"
row thr "$queries minhash_similar(sig, q, 0.5)"
row knn "$queries ORDER BY <%> LIMIT 10 (with minhash_similar)"
row join "join of 20 query signatures on %"
row pairs "minhash_similar_pairs at 0.5"
row clusters "minhash_clusters at 0.5"
row agg "minhash_agg(body), whole table"
row stats "minhash_lsh_stats"
printf '| minhash_agg(body), minhash not preloaded (rows gathered) | | %.3f s | | %.3f s | %.3f s | %s |\n' \
    "${WALL[agg_gather]}" "${CCPU[agg_gather]}" "${WCPU[agg_gather]}" "$(same agg_gather agg_docs_local)"
echo
echo "pairs: $(cat "$dir/pairs_docs.out" | tr -d ' \n' | sed 's/^count-*//;s/(1row)//') distributed, $(cat "$dir/pairs_docs_local.out" | tr -d ' \n' | sed 's/^count-*//;s/(1row)//') plain"
