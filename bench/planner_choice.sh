#!/usr/bin/env bash
# Does the planner pick the faster plan for lsh queries? For each table size,
# threshold and query form: the plan chosen with default settings and its
# execution time, beside the same query forced onto each alternative
# (BENCHMARKS.md, "Planner choice").
#
#   bash bench/planner_choice.sh [--sizes "1000 10000 100000 1000000"]
#                                [--thresholds "0.3 0.5 0.7 0.9"] [--reps 3]
#                                [--timeout 60] [--selfjoin-max 100000] [--chosen-only] [--keep]
#
# Data: the benchmark's corpus (bench/gen, documents in clusters of
# near-duplicates), generated once for the largest size into
# bench/data/planner-<rows>/; the first N rows make the table of size N. The
# table holds only (id int primary key, sig minhash) and the default lsh
# index: the case least favourable to the index (a sequential scan reads the
# fewest pages). The probe set is 100 of the table's rows picked by a hash.
#
# Query forms (minhash.similarity_threshold = t):
#   single    SELECT id FROM pc_docs WHERE sig % (SELECT sig FROM pc_probe WHERE pid = k)
#             (10 probes, k = 1..10; the time is their mean)
#   join      SELECT count(*) FROM pc_probe p JOIN pc_docs d ON d.sig % p.sig
#   selfjoin  SELECT count(*) FROM pc_docs a JOIN pc_docs b ON a.id < b.id AND a.sig % b.sig
#             (sizes up to --selfjoin-max)
#   lateral   SELECT count(*) FROM pc_probe p,
#               LATERAL (SELECT d.id FROM pc_docs d ORDER BY d.sig <%> p.sig LIMIT 10) x
#             (no threshold: once per size)
# Settings: "chosen" is PostgreSQL's defaults (shared_buffers sized to hold the
# data, which pg_prewarm loads first, and jit off: a plan forced by
# enable_* = off costs over jit_above_cost and would be compiled; everything
# else as initdb leaves it, parallel query included); "no index" sets enable_indexscan,
# enable_indexonlyscan and enable_bitmapscan off; "index scan" sets
# enable_seqscan and enable_bitmapscan off; "bitmap" sets enable_seqscan and
# enable_indexscan off; for the self-join also "lsh, no primary key": the
# primary key dropped in a transaction rolled back afterwards, and
# enable_seqscan off (the planner's only other index for it). Time: the
# server's "Execution Time" of EXPLAIN (ANALYZE, TIMING OFF), so planning and
# the client's round trip are left out, in a session that ran a warm-up probe
# first (as a pooled connection); the settings measured in turn, --reps
# rounds, the best of each (one round for a run over 5 s); the chosen plan's
# time is the best of every measurement of that plan (the defaults, and the
# forced settings that give the same plan), as the machine's load varies. A
# run over --timeout seconds is cancelled and shown as "> timeout".
# --chosen-only measures the chosen plans alone: to compare two builds' choices
# (run it from a checkout of the other build, whose PG_CONFIG it installs into).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

sizes="1000 10000 100000 1000000" thresholds="0.3 0.5 0.7 0.9" reps=3 timeout=60 selfjoin_max=100000 keep=0 chosen_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --thresholds) thresholds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --selfjoin-max) selfjoin_max=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --chosen-only) chosen_only=1; shift ;;
    *) sed -n '2,12p' "$0" >&2; exit 2 ;;
    esac
done
max=0
for n in $sizes; do [ "$n" -gt "$max" ] && max=$n; done

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
RESULTS=$root/bench/results/planner_choice
DATA=$root/bench/data/planner-$max
mkdir -p "$RESULTS" "$DATA"
: >"$RESULTS/plans.log"

make -s -j2 >/dev/null
make -s install >/dev/null
cmake -S . -B build/core -DCMAKE_BUILD_TYPE=Release >"$RESULTS/build.log" 2>&1
cmake --build build/core -j2 --target minhash-gen >>"$RESULTS/build.log" 2>&1
gen=build/core/minhash-gen
if [ ! -s "$DATA/docs.tsv" ] || [ "$gen" -nt "$DATA/docs.tsv" ]; then
    # --join 0: the same rows, streamed a cluster at a time; the cross-cluster
    # truth join it skips is not used here and takes longer than the rest at 10M
    "$gen" docs --rows "$max" --out "$DATA/docs.tsv.part" --truth "$DATA/truth.tsv" --join 0
    mv "$DATA/docs.tsv.part" "$DATA/docs.tsv"
fi

# shared_buffers: the largest table and index (about 1.4 kB a row) and room
shared_mb=$(( max * 14 / 10000 + 256 ))
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
SCRATCH_KEEP=$keep
scratch_dir planner
scratch_cluster pg "shared_buffers = ${shared_mb}MB" "jit = off"

q() { psql -X -q -v ON_ERROR_STOP=1 -tA "$@"; }
q -c "CREATE EXTENSION minhash" -c "CREATE EXTENSION pg_prewarm"
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE UNLOGGED TABLE pc_raw (id int, cluster int, body text);
\copy pc_raw FROM '$DATA/docs.tsv'
CREATE TABLE pc_all AS SELECT id, minhash(body) AS sig FROM pc_raw;
DROP TABLE pc_raw;
SQL

{
    echo "### Planner choice ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)," \
         "load average at start: $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo
    if [ "$chosen_only" = 1 ]; then
        echo "| rows | t | query | chosen plan | chosen ms |"
        echo "|---|---|---|---|---|"
    else
        echo "| rows | t | query | chosen plan | chosen ms | no index | index scan | bitmap | lsh, no primary key | chosen / best |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    fi
} | tee "$RESULTS/report.md"

# The scans of pc_docs in a plan, outer first: "lsh", "lsh bitmap", "pkey", "seq".
plan_label() {
    grep -oE '(Parallel )?(Seq Scan on|Index Scan using|Index Only Scan using|Bitmap Index Scan on) pc_docs[a-z_]*' |
        sed -E 's/(Parallel )?Seq Scan on pc_docs$/\1seq/; s/Bitmap Index Scan on pc_docs_sig/lsh bitmap/;
                s/Index Scan using pc_docs_sig/lsh/; s/.*pc_docs_pkey/pkey/; s/^Parallel seq/parallel seq/' |
        paste -sd '+' -
}

# once SETTINGS QUERY...: one session runs the queries in turn under these
# settings, after a warm-up probe with the defaults (loading the library, the
# relation caches and the lsh index's cached levels, as a pooled connection
# has them); prints "ms|plan", the mean of their execution times, or
# "timeout|plan" if one was cancelled.
once() {
    local settings=$1 end="" sql out plan
    shift
    [[ "$settings" == *BEGIN* ]] && end="ROLLBACK;"
    sql="SELECT 1 FROM pc_docs WHERE sig % (SELECT sig FROM pc_probe WHERE pid = 100) LIMIT 1;
         SET statement_timeout = '${timeout}s'; $settings"
    for query in "$@"; do sql+=" EXPLAIN (ANALYZE, TIMING OFF) $query;"; done
    sql+=" $end"
    if ! out=$(psql -X -q -v ON_ERROR_STOP=1 <<<"$sql" 2>&1); then
        grep -q 'statement timeout' <<<"$out" || { echo "$out" >&2; return 1; }
        plan=$(psql -X -q <<<"$settings EXPLAIN $1; $end" | plan_label)
        echo "timeout|$plan"
        return
    fi
    { echo "-- $settings"; echo "$out"; } >>"$RESULTS/plans.log"
    plan=$(awk '/Execution Time:/ { exit } { print }' <<<"$out" | plan_label)
    awk -v n=$# -v plan="$plan" '/Execution Time:/ { s += $3 } END { printf "%s|%s\n", s / n, plan }' <<<"$out"
}

fmt_ms() { [ "${1%%|*}" = timeout ] && echo "> ${timeout}000" || awk -v x="${1%%|*}" 'BEGIN { printf (x < 10 ? "%.3f" : x < 1000 ? "%.1f" : "%.0f"), x }'; }

# one row of the table: SIZE T FORM QUERY...: the chosen plan and the forced
# alternatives measured in turn, $reps rounds (fewer for runs over 5 s), the
# best of each.
measure() {
    local n=$1 t=$2 form=$3
    shift 3
    local guc="SET minhash.similarity_threshold = ${t/any/0.5};"
    local -a settings=(
        "$guc"
        "$guc SET enable_indexscan = off; SET enable_indexonlyscan = off; SET enable_bitmapscan = off;"
        "$guc SET enable_seqscan = off; SET enable_bitmapscan = off;"
        "$guc SET enable_seqscan = off; SET enable_indexscan = off;")
    [ "$form" = self-join ] &&
        settings+=("BEGIN; ALTER TABLE pc_docs DROP CONSTRAINT pc_docs_pkey; $guc SET LOCAL enable_seqscan = off;")
    [ "$chosen_only" = 1 ] && settings=("$guc")
    local -a best=() slow=()
    local r i res
    for ((r = 0; r < reps; r++)); do
        for i in "${!settings[@]}"; do
            [ -n "${slow[$i]:-}" ] && continue
            res=$(once "${settings[$i]}" "$@") || exit 1
            if [ "${res%%|*}" = timeout ]; then
                best[$i]=$res; slow[$i]=1; continue
            fi
            if [ -z "${best[$i]:-}" ] || awk -v a="${res%%|*}" -v b="${best[$i]%%|*}" 'BEGIN { exit !(a < b) }'; then
                best[$i]=$res
            fi
            awk -v a="${res%%|*}" 'BEGIN { exit !(a > 5000) }' && slow[$i]=1
        done
    done
    # the chosen plan's time: the best measurement of that plan, under the
    # defaults or under a forced setting that gives the same plan
    local chosen=${best[0]} lsh="-|-" fastest ratio
    for i in "${!best[@]}"; do
        [ "${best[$i]#*|}" = "${chosen#*|}" ] && [ "${best[$i]%%|*}" != timeout ] && [ "${chosen%%|*}" != timeout ] &&
            awk -v a="${best[$i]%%|*}" -v b="${chosen%%|*}" 'BEGIN { exit !(a < b) }' && chosen=${best[$i]}
    done
    [ "${#settings[@]}" -gt 4 ] && lsh=${best[4]}
    if [ "$chosen_only" = 1 ]; then
        echo "| $n | $t | $form | ${chosen#*|} | $(fmt_ms "$chosen") |" | tee -a "$RESULTS/report.md"
        return
    fi
    fastest=$(printf '%s\n' "${best[@]:1}" | awk -F'|' '$1 != "timeout" && (b == "" || $1 < b) { b = $1 } END { print b }')
    if [ "${chosen%%|*}" = timeout ] || [ -z "$fastest" ]; then
        ratio="-"
    else
        ratio=$(awk -v c="${chosen%%|*}" -v b="$fastest" 'BEGIN { printf "%.2f", c / b }')
    fi
    cell() { if [ "$1" = "-|-" ]; then echo "-"; else echo "$(fmt_ms "$1") (${1#*|})"; fi; }
    echo "| $n | $t | $form | ${chosen#*|} | $(fmt_ms "$chosen") | $(cell "${best[1]}") | $(cell "${best[2]}") | $(cell "${best[3]}") | $(cell "$lsh") | $ratio |" |
        tee -a "$RESULTS/report.md"
}

for n in $sizes; do
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS pc_docs, pc_probe;
CREATE TABLE pc_docs AS SELECT id, sig FROM pc_all WHERE id <= $n;
ALTER TABLE pc_docs ADD PRIMARY KEY (id);
CREATE INDEX pc_docs_sig ON pc_docs USING lsh (sig);
CREATE TABLE pc_probe AS
    SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int AS pid, id, sig
    FROM pc_docs ORDER BY hashint4(id), id LIMIT 100;
ALTER TABLE pc_probe ADD PRIMARY KEY (pid);
VACUUM ANALYZE pc_docs;
VACUUM ANALYZE pc_probe;
SELECT pg_prewarm('pc_docs') + pg_prewarm('pc_docs_sig') + pg_prewarm('pc_docs_pkey') AS prewarmed \gset
SQL
    singles=()
    for k in $(seq 1 10); do
        singles+=("SELECT id FROM pc_docs WHERE sig % (SELECT sig FROM pc_probe WHERE pid = $k)")
    done
    for t in $thresholds; do
        measure "$n" "$t" "single %" "${singles[@]}"
        measure "$n" "$t" "join, 100 probes" "SELECT count(*) FROM pc_probe p JOIN pc_docs d ON d.sig % p.sig"
        [ "$n" -le "$selfjoin_max" ] &&
            measure "$n" "$t" "self-join" "SELECT count(*) FROM pc_docs a JOIN pc_docs b ON a.id < b.id AND a.sig % b.sig"
    done
    measure "$n" any "LATERAL LIMIT 10, 100 probes" \
        "SELECT count(*) FROM pc_probe p, LATERAL (SELECT d.id FROM pc_docs d ORDER BY d.sig <%> p.sig LIMIT 10) x"
done
{
    echo
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$RESULTS/report.md"
