#!/usr/bin/env bash
# The minhash benchmark (`make bench`).
#
#   bash bench/run.sh [--scale 10k|100k|1m|10m|10k-long|100k-long|1m-long] [--smoke] [--no-plots]
#                     [--profile] [--keep] [--sections "index forest"]
#
# Builds the extension and bench/'s programs (CMake, build/core), generates (or reuses) the
# deterministic corpus for the scale, starts a scratch cluster, loads the data
# and prints one set of tables: signature throughput beside the standalone
# core loop, the lsh index (build, size, inserts), query latency with recall
# and precision against exact Jaccard, the baselines a user would pick
# instead, all-pairs, and targets vs measurements. Then regenerates the seed
# papers' experiments as plots in bench/plots/.
#
# A -long scale (issue 13) generates documents of 2-4 KB instead
# (minhash-gen docs --long: mail- and web-like text, TOASTed in PostgreSQL)
# and runs only the signature section on them (bench/lib/section_toast.sh):
# pglz, lz4 and uncompressed out-of-line storage side by side.
# --scale 10m (issue 13): 10,000,000 documents of the normal generator,
# streamed (minhash-gen --join 0: planted pairs only as the truth, no corpus
# in memory), loaded by one COPY computing the signatures, and by default
# only the sections that scale (index queries allpairs vacuum): no baskets,
# no sequential-scan, GIN, pg_trgm or RUM baselines, no self-join, no
# inserts (see BENCHMARKS.md "How to run" for times and disk).
# --smoke: 10k rows and short runs (about two minutes): what CI can afford.
# --profile: also perf-profile the signature scan and the index queries.
# --rows N: the scale's settings and code path on N rows instead (to try
#   the 10m path quickly: --scale 10m --rows 20000).
# --keep: leave the scratch cluster's directory behind (for inspection).
# --sections LIST: run only these sections (space- or comma-separated, of
#   truth throughput index queries allpairs targets forest compact vacuum ingest profile plots)
#   after loading the data; "forest" and "vacuum" need "index" (its indexes).
#   Default: all but vacuum (which deletes 10% of the rows); at 10m
#   "index queries allpairs vacuum".
# A section whose feature has not been built prints "not available: ...".
# Tables also go to bench/results/<scale>/report.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bench=$root/bench

scale=10k smoke=0 plots=1 keep=0 profile=0 sections=all rows_override=""
while [ $# -gt 0 ]; do
    case "$1" in
    --scale) scale=${2:?--scale needs 10k, 100k, 1m, 10m or one of the first three with -long}; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --no-plots) plots=0; shift ;;
    --keep) keep=1; shift ;;
    --rows) rows_override=${2:?--rows needs a number}; shift 2 ;;
    --profile) profile=1; shift ;;
    --sections) sections=" ${2//,/ } "; shift 2 ;;
    *) echo "usage: bench/run.sh [--scale 10k|100k|1m|10m|10k-long|100k-long|1m-long] [--smoke] [--no-plots] [--profile] [--keep] [--rows N] [--sections LIST]" >&2; exit 2 ;;
    esac
done
[ "$smoke" = 1 ] && scale=10k
long=0
case "$scale" in *-long) long=1; scale=${scale%-long} ;; esac

# Per-scale knobs: latency queries, queries scored for recall (index methods,
# the sequential scans, pg_trgm), seconds per pgbench run, shared_buffers.
case "$scale" in
10k)  ROWS=10000;   NQ=1000; NREC=1000; NREC_SLOW=200; NREC_TRGM=50; PGB_SECS=10; SHARED=256MB ;;
100k) ROWS=100000;  NQ=1000; NREC=1000; NREC_SLOW=50;  NREC_TRGM=5;  PGB_SECS=10; SHARED=1GB ;;
1m)   ROWS=1000000; NQ=1000; NREC=1000; NREC_SLOW=20;  NREC_TRGM=0;  PGB_SECS=15; SHARED=4GB ;;
10m)  ROWS=10000000; NQ=1000; NREC=1000; NREC_SLOW=0;  NREC_TRGM=0;  PGB_SECS=15; SHARED=6GB ;;
*) echo "unknown scale: $scale" >&2; exit 2 ;;
esac
[ -n "$rows_override" ] && ROWS=$rows_override
CORE_MIN_TIME=0.5
PLOT_BUDGET_S=20
if [ "$smoke" = 1 ]; then
    NQ=200; NREC=200; NREC_SLOW=50; NREC_TRGM=10; PGB_SECS=2; CORE_MIN_TIME=0.1; PLOT_BUDGET_S=0.5
fi
EXTRA=$((ROWS / 20))   # rows inserted after the index build (then deleted again)
# 10m: no insert test (at 2,700 rows/s its 500k rows alone would take minutes).
big=0; [ "$scale" = 10m ] && { big=1; EXTRA=0; }
label=$scale; [ "$smoke" = 1 ] && label=smoke
if [ "$long" = 1 ]; then
    label=$scale-long; EXTRA=0; plots=0
    SHARED=$([ "$ROWS" -ge 1000000 ] && echo 6GB || echo 1GB)
fi
export ROWS NQ NREC NREC_SLOW NREC_TRGM PGB_SECS EXTRA CORE_MIN_TIME PLOT_BUDGET_S smoke scale label big

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
RESULTS=$bench/results/$label
DATA=$bench/data/$ROWS; [ "$long" = 1 ] && DATA=$bench/data/long-$ROWS
export RESULTS DATA root bench
rm -rf "$RESULTS"
mkdir -p "$RESULTS" "$DATA"
started=$(date +%s)

# shellcheck source=bench/lib/common.sh
. "$bench/lib/common.sh"
for f in "$bench"/lib/section_*.sh; do . "$f"; done

section "dependencies and build"
bash scripts/install-deps.sh gnuplot-nox postgresql-15-rum
PGBIN=$("$PG_CONFIG" --bindir)
export PGBIN

if ! ls src/core/*.cpp >/dev/null 2>&1; then
    not_available "core library (src/core)"
    exit 0
fi
# bench's programs are CMake targets linking the core library (CMakeLists.txt),
# built in scripts/coretest.sh's directory: the core is compiled once for both.
BENCH_BIN=$root/build/core
export BENCH_BIN
if ! { cmake -S . -B "$BENCH_BIN" -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$BENCH_BIN" -j2 --target minhash-gen core_bench hash_families; } \
       >"$RESULTS/build.log" 2>&1; then
    tail -n 40 "$RESULTS/build.log" >&2
    exit 1
fi

have_ext=0
if ls src/pg/*.cpp >/dev/null 2>&1; then
    make -s -j2 >/dev/null
    make -s install >/dev/null
    have_ext=1
fi
export have_ext

section "data ($ROWS rows + $EXTRA for inserts)"
gen=$BENCH_BIN/minhash-gen
stale=0
files="docs truth baskets baskets_truth perms"; [ "$long" = 1 ] && files=docs
[ "$big" = 1 ] && files="docs truth"
for f in $files; do
    if [ ! -s "$DATA/$f.tsv" ] || [ "$gen" -nt "$DATA/$f.tsv" ]; then stale=1; fi
done
if [ "$stale" = 1 ] && [ "$long" = 1 ]; then
    "$gen" docs --long --rows "$ROWS" --out "$DATA/docs.tsv"
elif [ "$stale" = 1 ] && [ "$big" = 1 ]; then
    # Streamed: about 9 GB of text; files renamed into place once complete.
    "$gen" docs --rows "$ROWS" --join 0 --out "$DATA/docs.tsv.part" --truth "$DATA/truth.tsv.part"
    mv "$DATA/truth.tsv.part" "$DATA/truth.tsv"
    mv "$DATA/docs.tsv.part" "$DATA/docs.tsv"
elif [ "$stale" = 1 ]; then
    "$gen" docs --rows $((ROWS + EXTRA)) --out "$DATA/docs.tsv" --truth "$DATA/truth.tsv"
    "$gen" baskets --rows "$ROWS" --out "$DATA/baskets.tsv" --truth "$DATA/baskets_truth.tsv"
    "$gen" perms --words 50 --count 20 --out "$DATA/perms.tsv"
fi

# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
SCRATCH_KEEP=$keep
# 10m: the cluster holds about 30 GB (table, WAL, index): under /var/tmp
# unless SCRATCH_PARENT says otherwise.
[ "$big" = 1 ] && SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
# ... and keeps its WAL to about 2 GB (checkpoints recycle it) rather than 8.
WALMAX=8GB; [ "$big" = 1 ] && WALMAX=2GB
# effective_cache_size: two thirds of the machine's memory, the usual advice
# (the all-pairs walk reads in table order beyond it: docs/pairs.md).
CACHE_MB=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 2 / 3 }' /proc/meminfo)
scratch_dir bench
scratch_cluster pg \
    "shared_buffers = $SHARED" "effective_cache_size = ${CACHE_MB}MB" \
    "maintenance_work_mem = 1GB" "work_mem = 64MB" \
    "max_parallel_workers_per_gather = 0" "max_parallel_maintenance_workers = 0" \
    "jit = off" "autovacuum = off" "max_wal_size = $WALMAX" "checkpoint_timeout = 1h" \
    "synchronous_commit = off"

{
    echo "### Scale $label: $ROWS rows ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), load average at start: $(cut -d' ' -f1-3 /proc/loadavg), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown))"
} | tee "$RESULTS/report.md"

if [ "$have_ext" = 1 ] && ! q -c "CREATE EXTENSION minhash" 2>"$RESULTS/create_extension.err"; then
    cat "$RESULTS/create_extension.err" >&2
    have_ext=0
fi

if [ "$long" = 1 ]; then
    load_toast
    section_toast
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RESULTS/report.md"
    echo "total benchmark time: $(( $(date +%s) - started )) s (tables in ${RESULTS#$root/}/report.md)"
    exit 0
fi

# wanted NAME: whether --sections (default: every section but vacuum) includes NAME.
[ "$sections" = all ] && [ "$big" = 1 ] && sections=" index queries allpairs vacuum "
wanted() { { [ "$sections" = all ] && [ "$1" != vacuum ]; } || [[ "$sections" == *" $1 "* ]]; }
if [ "$big" = 1 ]; then load_data_big; else load_data; fi
wanted truth && check_truth
wanted throughput && section_throughput
wanted index && section_index
wanted queries && section_queries
wanted allpairs && section_allpairs
wanted targets && section_targets
wanted forest && section_forest
wanted compact && section_compact
wanted vacuum && section_vacuum
wanted ingest && section_ingest
[ "$profile" = 1 ] && wanted profile && section_profile
[ "$plots" = 1 ] && wanted plots && section_plots

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RESULTS/report.md"
echo
echo "total benchmark time: $(( $(date +%s) - started )) s (tables in ${RESULTS#$root/}/report.md)"
