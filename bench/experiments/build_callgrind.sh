#!/usr/bin/env bash
# Where an lsh index build's CPU goes, 1.0 against the current tree, counted
# instead of timed: on a shared machine the build's CPU time swings by 20-40%
# between runs of the same library, while instruction counts repeat exactly.
#
#   PG_CONFIG=... bash bench/experiments/build_callgrind.sh [rows]      (default 50000)
#
# Needs valgrind (scripts/install-deps.sh valgrind). Builds 1.0 (commit
# 14e919a, the v1.0 tag; V10 to override) from git history in a scratch
# directory, and for each library in turn: installs it into PG_CONFIG's
# installation (the current tree's goes back at the end), loads the rows of
# bench/experiments/compare_1_0.sh into a scratch cluster, stops it, and runs
# CREATE INDEX ... USING lsh (sig) WITH (threshold = 0.5) in a single-user
# backend under callgrind, counting the instructions of lshbuild and what it
# calls. Prints, per library, the total and the parts: the heap scan's
# callback (band keys, data pages, feeding the sort), the band keys alone,
# tuplesort_putdatum, tuplesort_performsort, tuplesort_getdatum, and the
# rest. The callgrind files stay in the scratch directory with SCRATCH_KEEP=1.
# The counts leave out the kernel (page faults, writes) and memory stalls:
# they say which code runs more, not how long the machine takes.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
rows=${1:-50000}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
    echo "bench/experiments/build_callgrind.sh: valgrind is missing (scripts/install-deps.sh valgrind)" >&2
    exit 1
fi
bindir=$("$PG_CONFIG" --bindir)
# shellcheck source=bench/lib/beside_1_0.sh
. bench/lib/beside_1_0.sh
beside_1_0 callgrind

as_postgres() {
    if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}

# inclusive instructions of the first function whose name matches (0 if none);
# awk reads to the end, as a closed pipe would fail the pipeline (pipefail)
incl() {  # file pattern
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
        awk -v pat="$2" '!found && $0 ~ pat { gsub(",", "", $1); print $1; found = 1 }
                         END { if (!found) print 0 }'
}

profile() {  # label source-directory
    local out=$scratch/$1.out
    make -s -C "$2" install >/dev/null
    scratch_cluster "pg_$1" "shared_buffers = 1GB" "maintenance_work_mem = 1GB" "jit = off" \
        "autovacuum = off" "max_wal_size = 8GB" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -f "$root/bench/sql/variant_clusters.sql" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
VACUUM ANALYZE d;
CHECKPOINT;
SQL
    bash "$root/scripts/pgcluster.sh" stop "$scratch/pg_$1"
    printf "SET maintenance_work_mem = '1GB';\nCREATE INDEX d_lsh ON d USING lsh (sig) WITH (threshold = 0.5);\n" \
        >"$scratch/build.sql"
    chmod 644 "$scratch/build.sql"
    as_postgres valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='lshbuild*' \
        "$bindir/postgres" --single -D "$scratch/pg_$1/data" postgres <"$scratch/build.sql" \
        >"$scratch/$1.log" 2>&1
    grep -q "ERROR" "$scratch/$1.log" && { cat "$scratch/$1.log" >&2; exit 1; }
    local total cb keys put sort get
    total=$(incl "$out" 'lshbuild[(]')
    cb=$(incl "$out" 'lsh_build_callback[(]')
    keys=$(incl "$out" 'lsh_band_keys[(]')
    put=$(incl "$out" 'tuplesort_putdatum')
    sort=$(incl "$out" 'tuplesort_performsort')
    get=$(incl "$out" 'tuplesort_getdatum')
    echo "$1 $total $cb $keys $put $sort $get"
}

echo "rows=$rows $(versions_line)"
profile 1.0 "$scratch/v10" >"$scratch/counts.txt"
profile 1.1 "$root" >>"$scratch/counts.txt"
awk '
    { for (i = 2; i <= 7; i++) v[$1, i] = $i; labels[++n] = $1 }
    END {
        split("total scan_callback band_keys putdatum performsort getdatum", name, " ")
        printf "%-28s %15s %15s %8s\n", "instructions (callgrind)", "1.0", "1.1", "1.1/1.0"
        for (i = 2; i <= 7; i++) {
            r = v["1.0", i] + 0 > 0 ? v["1.1", i] / v["1.0", i] : 0
            printf "%-28s %15d %15d %8.3f\n", name[i - 1], v["1.0", i], v["1.1", i], r
        }
        printf "%-28s %15d %15d\n", "rest (leaves, tree, WAL)",
               v["1.0", 2] - v["1.0", 3] - v["1.0", 6] - v["1.0", 7] + 0,
               v["1.1", 2] - v["1.1", 3] - v["1.1", 6] - v["1.1", 7] + 0
    }' "$scratch/counts.txt"
