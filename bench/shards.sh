#!/usr/bin/env bash
# Sharded vs single node, side by side in one run (docs/scale-out.md).
#
#   bash bench/shards.sh [--rows N] [--shards S] [--queries Q] [--work-mem WM] [--keep | --dir DIR]
#
# --dir DIR keeps the clusters in DIR and, when DIR already holds them (from an
# earlier --dir run with the same --rows and --shards), restarts them instead of
# building and loading again. --work-mem sets work_mem for every session.
#
# Builds S loopback shards and a coordinator with scripts/shards.sh --demo N
# (clusters of 5 near-duplicate texts, hash-partitioned on id over foreign
# partitions), copies the same rows into a plain table with an lsh index on
# the coordinator (the single node), and measures on both:
#  - Q threshold queries minhash_similar(sig, q, 0.5) and Q ORDER BY <%> LIMIT 10
#    queries (with the threshold filter, so each shard uses its index): wall
#    time of the whole run and CPU time of all the clusters' processes
#    (postmaster utime + stime + reaped children's, plus live children's, from
#    /proc: every backend's CPU, including the shards' postgres_fdw sessions);
#  - all pairs: minhash_similar_pairs on the single node, the band-key recipe
#    of docs/scale-out.md over the shards: wall, CPU, pairs, and the
#    coordinator backend's peak anonymous memory (RssAnon sampled every 20 ms;
#    shared buffers are not counted).
# Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
rows=100000 shards=4 queries=200 keep=0 fixed=""
while [ $# -gt 0 ]; do
    case "$1" in
    --rows) rows=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --dir) fixed=$2; keep=1; shift 2 ;;
    --work-mem) export PGOPTIONS="-c work_mem=$2"; shift 2 ;;
    *) echo "usage: bench/shards.sh [--rows N] [--shards S] [--queries Q] [--work-mem WM] [--keep | --dir DIR]" >&2; exit 2 ;;
    esac
done

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
if [ -n "$fixed" ]; then
    # a directory kept between runs: stop the clusters at exit, keep the files
    dir=$fixed
    mkdir -p "$dir"
    chmod 755 "$dir"
    chown postgres: "$dir" 2>/dev/null || true
    trap 'bash scripts/shards.sh stop "$dir" >/dev/null 2>&1 || true; echo "kept $dir" >&2' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
else
    SCRATCH_KEEP=$keep
    scratch_dir shards
    dir=$SCRATCH
    # scripts/shards.sh starts the clusters (with scripts/pgcluster.sh) and stops them
    scratch_at_exit 'bash scripts/shards.sh stop "$dir" >/dev/null 2>&1'
fi

coord() { (. "$dir/coord/env" && "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"); }

# CPU seconds of every cluster: postmaster (with reaped children) + live children
cluster_cpu() {
    local total=0 c pm hz
    hz=$(getconf CLK_TCK)
    for c in "$dir"/coord "$dir"/shard*; do
        pm=$(head -1 "$c/data/postmaster.pid")
        # one line per process: "pid (comm) state ppid ... utime stime cutime cstime ..."
        total=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v pm="$pm" -v hz="$hz" -v t="$total" '
            BEGIN { s = t }
            {
                pid = $1; line = $0; sub(/^.*\) /, "", line); split(line, f, " ")
                if (pid == pm) s += (f[12] + f[13] + f[14] + f[15]) / hz
                else if (f[2] == pm) s += (f[12] + f[13]) / hz
            }
            END { printf "%.2f", s }')
    done
    echo "$total"
}

now() { date +%s.%N; }

# run NAME FILE: wall and CPU of one psql run of FILE on the coordinator
declare -A WALL CPU
run() {
    local name=$1 file=$2 t0 c0 t1 c1
    c0=$(cluster_cpu); t0=$(now)
    coord -f "$file" >/dev/null
    t1=$(now); sleep 0.2; c1=$(cluster_cpu)
    WALL[$name]=$(echo "$t1 - $t0" | bc -l)
    CPU[$name]=$(echo "$c1 - $c0" | bc -l)
}

if [ -f "$dir/coord/data/PG_VERSION" ]; then
    echo "restarting the clusters in $dir ..." >&2
    bash scripts/shards.sh start "$dir" "$shards" >/dev/null
    load_s=$(cat "$dir/load_seconds")
else
    echo "building $shards shards + coordinator with $rows rows ..." >&2
    t0=$(now)
    nice bash scripts/shards.sh start "$dir" "$shards" --demo "$rows" >/dev/null
    load_s=$(echo "$(now) - $t0" | bc -l)
    echo "$load_s" >"$dir/load_seconds"
fi
coord <<'EOT'
DROP TABLE IF EXISTS docs_local, cand, cand_ids;
CREATE TABLE docs_local AS SELECT * FROM docs;
ALTER TABLE docs_local ADD PRIMARY KEY (id);
CREATE INDEX docs_local_lsh ON docs_local USING lsh (sig);
VACUUM ANALYZE docs_local;
EOT

# the same query rows for both (every 97th row, from the local copy so that
# both pay the same query-signature lookup)
qfile_thr_local=$dir/thr_local.sql qfile_thr_shard=$dir/thr_shard.sql
qfile_knn_local=$dir/knn_local.sql qfile_knn_shard=$dir/knn_shard.sql
: >"$qfile_thr_local"; : >"$qfile_thr_shard"; : >"$qfile_knn_local"; : >"$qfile_knn_shard"
for i in $(seq 1 "$queries"); do
    id=$(( (i * 9973) % rows + 1 ))
    q="(SELECT sig FROM docs_local WHERE id = $id)"
    echo "SELECT count(*) FROM docs_local WHERE minhash_similar(sig, $q, 0.5);" >>"$qfile_thr_local"
    echo "SELECT count(*) FROM docs WHERE minhash_similar(sig, $q, 0.5);" >>"$qfile_thr_shard"
    echo "SELECT id FROM docs_local WHERE minhash_similar(sig, $q, 0.5) ORDER BY sig <%> $q LIMIT 10;" >>"$qfile_knn_local"
    echo "SELECT id FROM docs WHERE minhash_similar(sig, $q, 0.5) ORDER BY sig <%> $q LIMIT 10;" >>"$qfile_knn_shard"
done
# warm both once (caches, relcache, fdw connections are per session anyway)
coord -f "$qfile_thr_local" >/dev/null; coord -f "$qfile_thr_shard" >/dev/null
run thr_local "$qfile_thr_local"; run thr_shard "$qfile_thr_shard"
run knn_local "$qfile_knn_local"; run knn_shard "$qfile_knn_shard"

# all pairs; the coordinator backend's RssAnon sampled while it runs
cat >"$dir/pairs_local.sql" <<'EOT'
SET application_name = 'bench_allpairs';
SELECT count(*) AS pairs FROM minhash_similar_pairs('docs_local_lsh', 'id', 0.5);
EOT
# the band-key recipe of docs/scale-out.md, one file per step, each run in a
# fresh backend so that each step's peak is its own
cat >"$dir/pairs_shard_1.sql" <<'EOT'
SET application_name = 'bench_allpairs';
-- every sort, hash and index build of the coordinator within work_mem
SELECT set_config('maintenance_work_mem',
                  greatest(pg_size_bytes(current_setting('work_mem')), 1024 * 1024) / 1024 || 'kB', false) \g /dev/null
SET hash_mem_multiplier = 1;
CREATE UNLOGGED TABLE cand_ids AS
  SELECT DISTINCT id FROM (SELECT id, count(*) OVER (PARTITION BY key) AS n FROM docs_bands) b
  WHERE n > 1;
ALTER TABLE cand_ids ADD PRIMARY KEY (id);
EOT
cat >"$dir/pairs_shard_2.sql" <<'EOT'
SET application_name = 'bench_allpairs';
CREATE UNLOGGED TABLE cand (id bigint, sig minhash);
DO $$
DECLARE
  per_batch int := least(greatest(pg_size_bytes(current_setting('work_mem')) / 256, 256), 512);
  ids bigint[];
BEGIN
  SET LOCAL plan_cache_mode = force_generic_plan;
  SELECT array_agg(id ORDER BY id) INTO ids
    FROM (SELECT id FROM cand_ids ORDER BY id LIMIT per_batch) s;
  WHILE ids IS NOT NULL LOOP
    INSERT INTO cand SELECT id, sig FROM docs WHERE id = ANY (ids);
    SELECT array_agg(id ORDER BY id) INTO ids
      FROM (SELECT id FROM cand_ids WHERE id > ids[cardinality(ids)] ORDER BY id LIMIT per_batch) s;
  END LOOP;
END
$$;
EOT
cat >"$dir/pairs_shard_3.sql" <<'EOT'
SET application_name = 'bench_allpairs';
SELECT set_config('maintenance_work_mem',
                  greatest(pg_size_bytes(current_setting('work_mem')), 1024 * 1024) / 1024 || 'kB', false) \g /dev/null
CREATE INDEX cand_sig_lsh ON cand USING lsh (sig) WITH (bands = 30, rows = 4);
EOT
cat >"$dir/pairs_shard_4.sql" <<'EOT'
SET application_name = 'bench_allpairs';
SELECT count(*) AS pairs FROM minhash_similar_pairs('cand_sig_lsh', 'id', 0.5);
EOT
declare -A PEAK PAIRS STEPS STEPWALL
# pairs_run NAME FILE...: each FILE in a fresh psql session (a fresh backend);
# wall and CPU of them all, the backend's peak RssAnon per file and overall
pairs_run() {
    local name=$1 peak=0 steps="" walls="" file speak pid t0 c0 t1 c1 ts psqlpid kb
    shift
    c0=$(cluster_cpu); t0=$(now)
    : >"$dir/$name.out"
    for file in "$@"; do
        ts=$(now)
        coord -At -f "$file" >>"$dir/$name.out" &
        psqlpid=$!
        speak=0 pid=""
        while kill -0 "$psqlpid" 2>/dev/null; do
            if [ -z "$pid" ]; then
                pid=$( (. "$dir/coord/env" && "$PGBIN/psql" -XAtc \
                    "SELECT pid FROM pg_stat_activity WHERE application_name = 'bench_allpairs'") 2>/dev/null || true)
            fi
            if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
                kb=$(awk '/^RssAnon/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
                [ "${kb:-0}" -gt "$speak" ] && speak=$kb
            fi
            sleep 0.02
        done
        wait "$psqlpid"
        # the backend exits after its client: let it go before the next step
        while [ -n "$pid" ] && [ -e "/proc/$pid" ]; do sleep 0.05; done
        [ "$speak" -gt "$peak" ] && peak=$speak
        steps="$steps${steps:+ / }$speak"
        walls="$walls${walls:+ / }$(printf '%.1f s' "$(echo "$(now) - $ts" | bc -l)")"
    done
    t1=$(now); sleep 0.2; c1=$(cluster_cpu)
    WALL[$name]=$(echo "$t1 - $t0" | bc -l)
    CPU[$name]=$(echo "$c1 - $c0" | bc -l)
    PEAK[$name]=$peak
    STEPS[$name]=$steps
    STEPWALL[$name]=$walls
    PAIRS[$name]=$(tail -1 "$dir/$name.out")
}
pairs_run pairs_local "$dir/pairs_local.sql"
pairs_run pairs_shard "$dir"/pairs_shard_[1-4].sql
echo "SET application_name = 'bench_allpairs'; SELECT pg_sleep(1);" >"$dir/idle.sql"
pairs_run idle "$dir/idle.sql"
band_rows=$(coord -Atc "SELECT count(*) FROM docs_bands")
cand_rows=$(coord -Atc "SELECT count(*) FROM cand")
coord -c "DROP TABLE cand, cand_ids"
work_mem=$(coord -Atc "SHOW work_mem")

printf '\n%s rows, %s loopback shards + coordinator (built and loaded through the coordinator in %.0f s), work_mem %s, %s queries each\n\n' \
    "$rows" "$shards" "$load_s" "$work_mem" "$queries"
echo "| measure | single node | $shards shards |"
echo "|---|---|---|"
printf '| %s: wall / CPU of all clusters | %.2f s / %.2f s | %.2f s / %.2f s |\n' \
    "$queries x minhash_similar(sig, q, 0.5)" "${WALL[thr_local]}" "${CPU[thr_local]}" "${WALL[thr_shard]}" "${CPU[thr_shard]}"
printf '| %s: wall / CPU of all clusters | %.2f s / %.2f s | %.2f s / %.2f s |\n' \
    "$queries x ... ORDER BY sig <%> q LIMIT 10" "${WALL[knn_local]}" "${CPU[knn_local]}" "${WALL[knn_shard]}" "${CPU[knn_shard]}"
printf '| all pairs (0.5): wall / CPU of all clusters | %.2f s / %.2f s | %.2f s / %.2f s |\n' \
    "${WALL[pairs_local]}" "${CPU[pairs_local]}" "${WALL[pairs_shard]}" "${CPU[pairs_shard]}"
printf '| all pairs: pairs found | %s | %s |\n' "${PAIRS[pairs_local]}" "${PAIRS[pairs_shard]}"
printf '| all pairs: coordinator backend peak RssAnon | %s kB | %s kB |\n' "${PEAK[pairs_local]}" "${PEAK[pairs_shard]}"
printf '| all pairs: band rows shipped / candidate rows (signatures shipped) | - | %s / %s |\n' "$band_rows" "$cand_rows"
printf '| all pairs, sharded steps (1 candidates from band keys / 2 their signatures / 3 index build / 4 walk): wall | - | %s |\n' "${STEPWALL[pairs_shard]}"
printf '| all pairs, sharded steps 1 / 2 / 3 / 4, each in a fresh backend: peak RssAnon (kB) | - | %s |\n' "${STEPS[pairs_shard]}"
printf '| an idle fresh backend (SELECT pg_sleep(1)): RssAnon | %s kB | |\n' "${PEAK[idle]}"
