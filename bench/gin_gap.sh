#!/usr/bin/env bash
# The lsh index against GIN over the same bands (issue 13.5), side by side and
# warm, by the backend's CPU time per query.
#
#   PG_CONFIG=... bash bench/gin_gap.sh [rows] [rounds]
#
# One scratch cluster: the first `rows` documents of $GAP_DATA/docs.tsv
# (default bench/data/1000000, made by bench/run.sh --scale 1m), the queries
# table bench/run.sh uses (GAP_NQ rows, picked by hashint4(id)), an lsh index
# WITH (threshold = 0.5) and a GIN index over minhash_bands(sig, b, r) with
# the lsh index's own b and r (so both see the same candidates). Then, per
# round and for t = 0.5 and 0.8, each side in its own backend: an untimed
# warm-up batch (GAP_WARM), then the GAP_NQ timed queries in one statement
# (CROSS JOIN LATERAL), the backend's CPU time from /proc/self/schedstat and
# its minor page faults from /proc/self/stat, per query.
#
# The warm-up decides what the backend has seen. Both kinds give it the
# catalog caches, the index's cached tree levels and the shared library:
#   GAP_WARM=same (default)  the timed queries themselves, then 200 MB of
#                            private memory written and read, which flushes
#                            the CPU's caches (32 MB of L3 here): the pages
#                            are mapped into the backend, as in a long-lived
#                            (pooled) connection, but not in the CPU's caches,
#                            as for a stream of different queries;
#   GAP_WARM=other           GAP_NQ other queries: the timed queries' pages
#                            are new to the backend, and each first touch of
#                            a shared-buffer page is a minor page fault (the
#                            kernel maps it into the backend), which a new
#                            connection pays and a pooled one has paid.
# All relations are prewarmed into shared buffers (pg_prewarm) first, unless
# GAP_PREWARM=0 (a table larger than shared buffers: the warm-up batches
# then bring in the pages the timed queries read). The sides alternate (which goes first
# changes each round), so both see the same noise from a shared machine.
# Ends with the medians, the ratio GIN / lsh and the answers' agreement.
#
#   GAP_SO="base.so new.so"  two builds of minhash.so: the lsh side is run with
#                            each in turn, copied over the installation's
#                            minhash.so before its backend starts (the builds
#                            must share the SQL objects)
#   GAP_PERF=1               also a perf profile of the lsh side's timed statement at t = 0.5 (its backend warmed as a round's)
#   GAP_CLUSTER=DIR          reuse a cluster kept by an earlier run
#                            (SCRATCH_KEEP=1 keeps it: DIR is $SCRATCH/c)
#   GAP_SHARED_BUFFERS       the new cluster's shared_buffers (5GB)
#   SCRATCH_PARENT           where the scratch directory goes (/var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
rounds=${2:-5}
NQ=${GAP_NQ:-1000}
DATA=${GAP_DATA:-bench/data/1000000}
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
# shellcheck source=scripts/pgcluster.sh
. scripts/pgcluster.sh
# shellcheck source=bench/lib/docs_tsv.sh
. bench/lib/docs_tsv.sh
q() { psql -X -q -v ON_ERROR_STOP=1 -tA "$@"; }

scratch_dir gin_gap
if [ -n "${GAP_CLUSTER:-}" ]; then
    bash scripts/pgcluster.sh stop "$GAP_CLUSTER"   # a fresh start: a new port, this run's settings
    bash scripts/pgcluster.sh start "$GAP_CLUSTER"
    scratch_at_exit "bash scripts/pgcluster.sh stop '$GAP_CLUSTER'"
    # shellcheck disable=SC1090,SC1091
    . "$GAP_CLUSTER/env"
else
    [ -f "$DATA/docs.tsv" ] || { echo "no $DATA/docs.tsv: run bench/run.sh --scale 1m once, or set GAP_DATA" >&2; exit 1; }
    scratch_cluster c "shared_buffers = ${GAP_SHARED_BUFFERS:-5GB}" "maintenance_work_mem = 1GB" "jit = off" \
        "autovacuum = off" "max_wal_size = 8GB" "wal_level = minimal" "max_wal_senders = 0"
    load_docs_tsv "$DATA/docs.tsv" "$rows"
    q -c "CREATE INDEX docs_sig_lsh ON docs USING lsh (sig) WITH (threshold = 0.5)"
    read -r B R < <(q -F' ' -c "SELECT bands, rows FROM minhash_lsh_stats('docs_sig_lsh')")
    q -c "CREATE INDEX docs_bands_gin ON docs USING gin (minhash_bands(sig, $B, $R))"
    q -c "VACUUM ANALYZE"
fi
read -r B R < <(q -F' ' -c "SELECT bands, rows FROM minhash_lsh_stats('docs_sig_lsh')")
# The queries as bench/run.sh picks them (by hashint4(id)), twice as many:
# qid <= NQ are timed, the others warm the backend up.
if [ "$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'queries'")" = 0 ] ||
    [ "$(q -c "SELECT count(*) FROM queries")" -lt $((2 * NQ)) ]; then
    q <<SQL
DROP TABLE IF EXISTS queries;
CREATE TABLE queries AS
    SELECT (row_number() OVER (ORDER BY hashint4(id), id))::int AS qid, id, sig
    FROM docs ORDER BY hashint4(id), id LIMIT $((2 * NQ));
ALTER TABLE queries ADD PRIMARY KEY (qid);
ANALYZE queries;
SQL
fi
if [ "${GAP_PREWARM:-1}" = 1 ]; then
    q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" -c "SELECT sum(pg_prewarm(c)) FROM unnest(ARRAY['docs', 'docs_sig_lsh', 'docs_bands_gin', 'queries']::regclass[]) c" >/dev/null
fi

LSH="SELECT id FROM docs WHERE sig % q.sig"
# The executor's floor under both: one B-tree probe returning one row per call.
FLOOR="SELECT x.qid FROM queries x WHERE x.qid = q.qid OFFSET 0"
# An application's query is one statement: no Memoize node, which the batch
# form gets on the lsh side only and which never hits (the queries differ).
MEMOIZE=${GAP_MEMOIZE:-off}
# The untimed warm-up batch: other queries (a backend that has not touched
# these pages yet) or the timed queries themselves (see GAP_WARM above).
case ${GAP_WARM:-same} in
same) WARM="q.qid <= $NQ" FLUSH_BYTES=200000000 ;;
other) WARM="q.qid > $NQ" FLUSH_BYTES=1 ;;
*) echo "GAP_WARM is same or other" >&2; exit 2 ;;
esac
gin() { echo "SELECT id FROM docs WHERE minhash_bands(sig, $B, $R) && minhash_bands(q.sig, $B, $R) AND jaccard(sig, q.sig) >= $1"; }
libdir=$("$PG_CONFIG" --pkglibdir)
read -r -a SOS <<<"${GAP_SO:-}"

# "cpu_ms_per_query rows minor_faults_per_query": the warm-up batch untimed,
# then the timed one, in one backend. A minor fault is the kernel mapping a
# page of shared memory into this backend, at its first touch of that page.
STAT="SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1) || ' ' || split_part(pg_read_file('/proc/self/stat'), ' ', 10)"
batch() {  # inner query, threshold
    q -F' ' -c "SET minhash.similarity_threshold = $2" -c "SET jit = off" -c "SET enable_memoize = $MEMOIZE" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($1) d WHERE $WARM" \
        -c "SELECT length(repeat('x', $FLUSH_BYTES))" \
        -c "$STAT" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($1) d WHERE q.qid <= $NQ" \
        -c "$STAT" |
        awk -v nq="$NQ" 'NR == 3 { a = $1; f = $2 } NR == 4 { n = $1 }
            NR == 5 { printf "%.4f %d %.1f\n", ($1 - a) / 1e6 / nq, n, ($2 - f) / nq }'
}

use_so() {  # the build the next backends load
    install -m 755 "$1" "$libdir/minhash.so.gap" && mv -f "$libdir/minhash.so.gap" "$libdir/minhash.so"
}

sides="lsh gin floor"
if [ "${#SOS[@]}" = 2 ]; then
    sides="base gin new floor"
    orig=$SCRATCH/minhash.so.orig
    cp "$libdir/minhash.so" "$orig"
    scratch_at_exit "install -m 755 '$orig' '$libdir/minhash.so'"
fi
side_sql() {  # side t
    case $1 in
    gin) gin "$2" ;;
    floor) echo "$FLOOR" ;;
    *) echo "$LSH" ;;
    esac
}

echo "rows=$(q -c "SELECT count(*) FROM docs") queries=$NQ bands=$B rows_per_band=$R rounds=$rounds sides=$sides"
echo "commit $(git rev-parse --short HEAD); $(date -u +%Y-%m-%dT%H:%MZ); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in 0.5 0.8; do
    echo "plan at t = $t:"
    q -c "SET minhash.similarity_threshold = $t" -c "SET enable_memoize = $MEMOIZE" -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM queries q CROSS JOIN LATERAL ($LSH) d" | sed 's/^/  lsh: /'
    q -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM queries q CROSS JOIN LATERAL ($(gin "$t")) d" | sed 's/^/  gin: /'
done

out=$SCRATCH/rounds.txt
for r in $(seq 1 "$rounds"); do
    order=$sides
    [ $((r % 2)) -eq 0 ] && order=$(echo "$sides" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "\n") }')
    for t in 0.5 0.8; do
        for s in $order; do
            case $s in base) use_so "${SOS[0]}" ;; new) use_so "${SOS[1]}" ;; esac
            res=$(batch "$(side_sql "$s" "$t")" "$t")
            echo "round $r t=$t $s $res" | tee -a "$out"
        done
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# Agreement: the (query, row) pairs one side returns and the other does not.
agree() {  # t
    q -c "SET minhash.similarity_threshold = $1" -c "
        WITH l AS (SELECT q.qid, d.id FROM queries q CROSS JOIN LATERAL ($LSH) d WHERE q.qid <= $NQ),
             g AS (SELECT q.qid, d.id FROM queries q CROSS JOIN LATERAL ($(gin "$1")) d WHERE q.qid <= $NQ)
        SELECT (SELECT count(*) FROM (SELECT * FROM l EXCEPT SELECT * FROM g) x),
               (SELECT count(*) FROM (SELECT * FROM g EXCEPT SELECT * FROM l) x)" | tr '|' ' '
}

echo
echo "| t | $(for s in $sides; do printf '%s CPU ms/q | ' "$s"; done)GIN / lsh | above the floor | faults/q lsh | faults/q GIN | rows lsh | rows GIN | only lsh | only GIN |"
echo "|---|$(for _ in $sides; do printf -- '---|'; done)---|---|---|---|---|---|---|---|"
for t in 0.5 0.8; do
    read -r onlyl onlyg < <(agree "$t")
    awk -v t="$t" -v sides="$sides" -v ol="$onlyl" -v og="$onlyg" '
        $3 == "t=" t { k = $4; n[k]++; v[k, n[k]] = $5; rowsof[k] = $6; fv[k, n[k]] = $7 }
        function median(k, v,    m, i, j, x, a) {
            m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
            for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        END {
            ns = split(sides, s, " "); line = "| " t " |"
            for (i = 1; i <= ns; i++) { med[s[i]] = median(s[i], v); flt[s[i]] = median(s[i], fv); line = line sprintf(" %.4f |", med[s[i]]) }
            l = ("new" in med) ? "new" : ("lsh" in med ? "lsh" : "base")
            if ("base" in med) line = line sprintf(" %.2f (base %.2f) |", med["gin"] / med[l], med["gin"] / med["base"])
            else line = line sprintf(" %.2f |", med["gin"] / med[l])
            line = line sprintf(" %.2f |", (med["gin"] - med["floor"]) / (med[l] - med["floor"]))
            line = line sprintf(" %.1f | %.1f |", flt[l], flt["gin"])
            print line " " rowsof[l] " | " rowsof["gin"] " | " ol " | " og " |"
        }' "$out"
done
echo
case ${GAP_WARM:-same} in
same) warmed="the same $NQ queries untimed and then 200 MB of private memory written and read (the CPU's caches flushed), in the same backend" ;;
other) warmed="$NQ other queries untimed in the same backend" ;;
esac
echo "CPU ms/q: the median over $rounds rounds of the backend's CPU time for one statement of $NQ queries (CROSS JOIN LATERAL), after $warmed, divided by $NQ. faults/q: the backend's minor page faults in that statement, per query (first touches of shared-buffer pages new to the backend). floor: one B-tree probe returning one row per call (${FLOOR}), what any index pays per LATERAL call; above the floor: (GIN - floor) / (lsh - floor). Memoize: $MEMOIZE. only lsh / only GIN: (query, row) pairs returned by one side and not the other."

if [ "${GAP_PERF:-0}" = 1 ]; then
    # The lsh side's backend as a round has it (the same warm-up, the caches
    # flushed), perf attached to it for the timed statement alone.
    data=$SCRATCH/perf.data
    log=$SCRATCH/perf.psql
    [ "${#SOS[@]}" = 2 ] && use_so "${SOS[1]}"
    q -c "SELECT pg_backend_pid()" -c "SET minhash.similarity_threshold = 0.5" -c "SET jit = off" \
        -c "SET enable_memoize = $MEMOIZE" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($LSH) d WHERE $WARM" \
        -c "SELECT length(repeat('x', $FLUSH_BYTES))" -c "SELECT 'timed next'" -c "SELECT pg_sleep(1)" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($LSH) d WHERE q.qid <= $NQ" >"$log" 2>&1 &
    psql_pid=$!
    until grep -q '^timed next$' "$log" 2>/dev/null; do
        kill -0 "$psql_pid" 2>/dev/null || break
        sleep 0.1
    done
    pid=$(head -n 1 "$log")
    perf record -q -F 25000 -g -p "$pid" -o "$data" 2>/dev/null || true   # until the backend exits
    wait "$psql_pid"
    echo
    echo "perf, lsh at t = 0.5, the timed statement (self time, backend $pid, share of its samples):"
    perf report -i "$data" --stdio --no-children --percentage relative --sort dso -g none \
        2>/dev/null | grep -vE '^#|^$' | sed 's/[ -]*$//' | head -n 6
    perf report -i "$data" --stdio --no-children --percentage relative --sort dso,symbol -g none \
        --percent-limit 0.7 2>/dev/null | grep -vE '^#|^$' | sed 's/[ -]*$//' | head -n 30
fi
