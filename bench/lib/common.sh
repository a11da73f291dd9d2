# Helpers shared by the benchmark's sections (sourced by bench/run.sh).
# Expects PGHOST/PGPORT/... from the scratch cluster's env file, PGBIN,
# RESULTS (this run's output directory), DATA (the corpus: docs.tsv,
# truth.tsv, baskets.tsv, ...) and BENCH_BIN (the CMake build directory,
# build/core, holding minhash-gen, core_bench and hash_families).

# psql: unaligned tuples only, stop at the first error.
q() { psql -X -q -v ON_ERROR_STOP=1 -tA "$@"; }

# Milliseconds taken by one SQL statement (psql's \timing: wall time at the
# client, so it includes the round trip, as a user sees it). GUCs for the
# statement go in PGOPTIONS.
sql_ms() {
    psql -X -q -v ON_ERROR_STOP=1 -c '\timing on' -c "$1" | awk '/^Time: / { t = $2 } END { if (t == "") exit 1; print t }'
}

# Fastest of N runs of one statement, in milliseconds.
best_ms() {
    local n=$1 sql=$2 best="" t
    for _ in $(seq 1 "$n"); do
        t=$(sql_ms "$sql") || return 1
        best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    echo "$best"
}

have_fn() { [ "$(q -c "SELECT count(*) FROM pg_proc WHERE proname = '$1'")" != 0 ]; }
have_am() { [ "$(q -c "SELECT count(*) FROM pg_am WHERE amname = '$1'")" != 0 ]; }
have_table() { [ "$(q -c "SELECT count(*) FROM pg_class WHERE relname = '$1'")" != 0 ]; }

# Arithmetic and formatting (awk, so no bc dependency).
calc() { awk "BEGIN { x = $1; print x }"; }
fmt() { awk -v x="$2" "BEGIN { if (x == \"\" || x == \"-\") print \"-\"; else printf \"$1\", x }"; }
# pass/miss for "measured OP target" (OP is <= or >=); "-" when unmeasured.
verdict() {
    local measured=$1 op=$2 target=$3
    if [ -z "$measured" ] || [ "$measured" = "-" ]; then echo "not measured"; return; fi
    awk -v m="$measured" -v t="$target" -v op="$op" \
        'BEGIN { ok = (op == "<=") ? (m <= t) : (m >= t); print ok ? "pass" : "MISS" }'
}

# Tables: rows are '|'-separated cells. Printed as aligned Markdown, also
# appended to $RESULTS/report.md for BENCHMARKS.md.
tbl_start() {
    TBL_TITLE=$1
    TBL_ROWS=$(mktemp)
    echo "$2" >"$TBL_ROWS"
}
tbl_row() { echo "$1" >>"$TBL_ROWS"; }
tbl_note() { TBL_NOTES+=("$1"); }
tbl_end() {
    {
        echo
        echo "#### $TBL_TITLE"
        echo
        awk -F'|' '
            { for (i = 1; i <= NF; i++) { gsub(/^ +| +$/, "", $i); cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
              if (NF > nf) nf = NF; nr = NR }
            END {
              for (r = 1; r <= nr; r++) {
                line = "|"
                for (i = 1; i <= nf; i++) line = line sprintf(" %-" w[i] "s |", cell[r, i])
                print line
                if (r == 1) { line = "|"; for (i = 1; i <= nf; i++) { s = ""; for (k = 0; k < w[i] + 2; k++) s = s "-"; line = line s "|" }; print line }
              }
            }' "$TBL_ROWS"
        for n in "${TBL_NOTES[@]}"; do echo; echo "$n"; done
    } | tee -a "$RESULTS/report.md"
    rm -f "$TBL_ROWS"
    TBL_NOTES=()
}
TBL_NOTES=()

# A section whose feature has not landed says so instead of printing numbers.
not_available() {
    echo | tee -a "$RESULTS/report.md"
    echo "not available: $1 not built" | tee -a "$RESULTS/report.md"
}

# Latency of one pgbench script over a single connection, prepared
# statements, per-transaction log (-l). Prints "count p50_ms p99_ms mean_ms".
# $1 script file, $2 seconds, further args go to pgbench (-D var=value ...).
pgbench_latency() {
    local script=$1 secs=$2
    shift 2
    local prefix
    prefix="$RESULTS/pgbench/$(basename "$script" .sql)-$RANDOM"
    mkdir -p "$RESULTS/pgbench"
    "$PGBIN/pgbench" -n -M prepared -c 1 -j 1 -T "$secs" -l --log-prefix="$prefix" \
        -f "$script" "$@" >"$prefix.out" 2>&1 || { cat "$prefix.out" >&2; return 1; }
    # Log line: client_id transaction_no time_us script_no epoch epoch_us
    cat "$prefix".[0-9]* | awk '{ print $3 }' | sort -n | awk '
        { v[NR] = $1; s += $1 }
        END {
            if (NR == 0) exit 1
            p50 = v[int(0.50 * (NR - 1)) + 1]; p99 = v[int(0.99 * (NR - 1)) + 1]
            printf "%d %.3f %.3f %.3f\n", NR, p50 / 1000, p99 / 1000, s / NR / 1000
        }'
}

# The scan node a query uses on table docs, for the tables' "plan" column.
plan_of() {
    psql -X -q -tA -c "EXPLAIN (COSTS OFF) $1" |
        grep -oE '(Index Only Scan|Index Scan|Bitmap Index Scan|Seq Scan)( Backward)? (using|on) (docs[a-z_0-9]*)' |
        grep -vE 'queries' | tail -n 1
}

# "cpu_s wall_s" of one statement: the backend's CPU time from
# /proc/self/schedstat (nanoseconds on the CPU, read through pg_read_file as
# superuser) and the client's wall time. Per-core rates use the CPU time: on
# this shared 2-core machine wall time also counts waiting for a CPU.
sql_cpu() {
    psql -X -q -tA -v ON_ERROR_STOP=1 -c "SELECT pg_read_file('/proc/self/schedstat')" \
        -c '\timing on' -c "$1" -c '\timing off' -c "SELECT pg_read_file('/proc/self/schedstat')" |
        awk '
            /^Time: / { wall = $2 / 1000; next }
            /^[0-9]+ [0-9]+ [0-9]+$/ { n++; cpu[n] = $1 / 1e9 }
            END { if (n < 2 || wall == "") exit 1; printf "%.6f %.3f\n", cpu[n] - cpu[1], wall }'
}

# Fastest of N runs by CPU time: "cpu_s wall_s".
best_cpu() {
    local n=$1 sql=$2 best="" r
    for _ in $(seq 1 "$n"); do
        r=$(sql_cpu "$sql") || return 1
        best=$(awk -v a="$best" -v b="$r" 'BEGIN { split(b, x, " "); split(a, y, " "); print (a == "" || x[1] < y[1]) ? b : a }')
    done
    echo "$best"
}

# Section header with the time since the run started (stdout only).
section() { echo "== $1 == (+$(( $(date +%s) - ${started:-$(date +%s)} ))s)"; }
