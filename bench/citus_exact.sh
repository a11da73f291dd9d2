#!/usr/bin/env bash
# minhash_similar_pairs(..., exact => true) on a Citus distributed table: the
# time of the distributed statements and how often the shards compute the
# exact Jaccard of two rows' shingles (docs/scale-out.md, "Citus").
#
#   bash bench/citus_exact.sh [--rows N] [--workers W] [--shards S] [--runs R] [--threshold T] [--long]
#
# Needs Citus in the PostgreSQL of PG_CONFIG (scripts/citus.sh) and
# build/core/minhash-gen (cmake --build build --target minhash-gen). Starts a
# coordinator and W workers on loopback (scripts/pgcluster.sh clusters,
# removed at exit), loads minhash-gen's documents (clusters of up to 10
# near-duplicates; --long: 2-4 KB mail- and web-like texts) into `docs`,
# distributed in S shards (hash on id) with an lsh index, and the same rows
# into the plain table `docs_local`. Runs minhash_similar_pairs at T with
# exact => true R times on each and prints the wall times (median, min), the
# calls of jaccard(anyarray, anyarray) (the shingles) on the workers for one distributed run
# (track_functions = all), and whether both tables gave the same pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
rows=5000 workers=1 shards=4 runs=5 threshold=0.5 long=
while [ $# -gt 0 ]; do
    case "$1" in
    --rows) rows=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --long) long=--long; shift ;;
    *) echo "usage: bench/citus_exact.sh [--rows N] [--workers W] [--shards S] [--runs R] [--threshold T] [--long]" >&2; exit 2 ;;
    esac
done
bash scripts/citus.sh --check
gen=build/core/minhash-gen
[ -x "$gen" ] || { echo "bench/citus_exact.sh: no $gen (cmake --build build --target minhash-gen)" >&2; exit 1; }

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
scratch_dir citus-exact
dir=$SCRATCH
. bench/lib/citus_cluster.sh
citus_cluster "$workers" "shared_preload_libraries = 'citus,minhash'" "max_worker_processes = 16" \
    "shared_buffers = 256MB" "citus.shard_count = $shards" "log_statement = none" "track_functions = all"

# (--long: no truth file, whose exact Jaccard of every planted pair takes minutes)
if [ -n "$long" ]; then
    "$gen" docs --long --rows "$rows" --out "$dir/docs.tsv" >/dev/null
else
    "$gen" docs --rows "$rows" --out "$dir/docs.tsv" --truth "$dir/truth.tsv" --join 0 >/dev/null
fi
chmod a+r "$dir/docs.tsv"
on coord >/dev/null <<EOT
CREATE EXTENSION minhash;
CREATE TABLE docs_local (id bigint NOT NULL, cluster int, body text);
\copy docs_local FROM '$dir/docs.tsv'
ALTER TABLE docs_local ADD COLUMN sig minhash;
UPDATE docs_local SET sig = minhash(body);
CREATE TABLE docs (id bigint NOT NULL, cluster int, body text, sig minhash);
SELECT create_distributed_table('docs', 'id');
INSERT INTO docs SELECT * FROM docs_local;
CREATE INDEX docs_lsh ON docs USING lsh (sig);
CREATE INDEX docs_local_lsh ON docs_local USING lsh (sig);
VACUUM ANALYZE docs_local;
ANALYZE docs;
EOT
for i in $(seq 1 "$workers"); do on "worker$i" -c "VACUUM ANALYZE" >/dev/null; done

pairs() { echo "SELECT count(*), md5(string_agg(key_a || '-' || key_b || ':' || round(similarity::numeric, 12), ',' ORDER BY key_a, key_b)) FROM minhash_similar_pairs('${1}_lsh', 'id', $threshold, exact => true, text_column => 'body')"; }
# time_runs TABLE: R runs, one session each; prints "median min answer"
time_runs() {
    local t=$1 i t0 t1 out times=()
    for i in $(seq 1 "$runs"); do
        t0=$(date +%s.%N)
        out=$(on coord -At -c "$(pairs "$t")")
        t1=$(date +%s.%N)
        times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk -v out="$out" '{ v[NR] = $1 } END { printf "%.3f %.3f %s\n", v[int((NR + 1) / 2)], v[1], out }'
}
on coord -At -c "$(pairs docs)" >/dev/null   # warm the caches
read -r local_med local_min local_out < <(time_runs docs_local)
read -r dist_med dist_min dist_out < <(time_runs docs)

# the workers' calls of jaccard(anyarray, anyarray) (the shingles) during one distributed run
calls() {
    local i s=0
    for i in $(seq 1 "$workers"); do
        s=$((s + $(on "worker$i" -At -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions f
            WHERE f.funcid::regprocedure::text = 'jaccard(anyarray,anyarray)'")))
    done
    echo "$s"
}
sleep 1; c0=$(calls)
on coord -At -c "$(pairs docs)" >/dev/null
sleep 2; c1=$(calls)   # the statistics reach the workers' views when their backends end

echo
echo "$rows rows${long:+ (long)}, $workers worker(s) x $shards shards + coordinator, threshold $threshold, exact => true, $runs runs ($(nproc) cores, load $(uptime | sed 's/.*load average: //'))"
echo
echo "| table | median wall | min wall | pairs | jaccard(anyarray, anyarray) (the shingles) calls on the workers |"
echo "|---|---|---|---|---|"
echo "| plain (coordinator) | $local_med s | $local_min s | ${local_out%%|*} | |"
echo "| distributed | $dist_med s | $dist_min s | ${dist_out%%|*} | $((c1 - c0)) |"
echo
[ "$dist_out" = "$local_out" ] && echo "same pairs and similarities on both" || echo "DIFFERENT pairs: $dist_out vs $local_out"
