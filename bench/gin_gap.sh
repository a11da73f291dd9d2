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
# round and for t = 0.5 and 0.8, each side in its own backend: a batch of
# GAP_NQ other queries untimed (catalog caches, the index's cached tree
# levels, the shared library: what a long-lived connection has), then the
# GAP_NQ timed queries in one statement (CROSS JOIN LATERAL), the backend's
# CPU time from /proc/self/schedstat per query. Other queries, not the same
# ones again: a repeat would find its pages in the CPU's caches, which a
# stream of different queries does not. All relations are prewarmed into
# shared buffers (pg_prewarm) first. The sides alternate (which goes first
# changes each round), so both see the same noise from a shared machine.
# Ends with the medians, the ratio GIN / lsh and the answers' agreement.
#
#   GAP_SO="base.so new.so"  two builds of minhash.so: the lsh side is run with
#                            each in turn, copied over the installation's
#                            minhash.so before its backend starts (the builds
#                            must share the SQL objects)
#   GAP_PERF=1               also a perf profile of the lsh batch at t = 0.5
#   GAP_CLUSTER=DIR          reuse a cluster kept by an earlier run
#                            (SCRATCH_KEEP=1 keeps it: DIR is $SCRATCH/c)
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
    scratch_cluster c "shared_buffers = 5GB" "maintenance_work_mem = 1GB" "jit = off" \
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
q -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" -c "SELECT sum(pg_prewarm(c)) FROM unnest(ARRAY['docs', 'docs_sig_lsh', 'docs_bands_gin', 'queries']::regclass[]) c" >/dev/null

LSH="SELECT id FROM docs WHERE sig % q.sig"
# The executor's floor under both: one B-tree probe returning one row per call.
FLOOR="SELECT x.qid FROM queries x WHERE x.qid = q.qid OFFSET 0"
# An application's query is one statement: no Memoize node, which the batch
# form gets on the lsh side only and which never hits (the queries differ).
MEMOIZE=${GAP_MEMOIZE:-off}
gin() { echo "SELECT id FROM docs WHERE minhash_bands(sig, $B, $R) && minhash_bands(q.sig, $B, $R) AND jaccard(sig, q.sig) >= $1"; }
libdir=$("$PG_CONFIG" --pkglibdir)
read -r -a SOS <<<"${GAP_SO:-}"

# "cpu_ms_per_query rows": the warm-up batch untimed, then the timed one, in one backend.
batch() {  # inner query, threshold
    q -c "SET minhash.similarity_threshold = $2" -c "SET jit = off" -c "SET enable_memoize = $MEMOIZE" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($1) d WHERE q.qid > $NQ" \
        -c "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($1) d WHERE q.qid <= $NQ" \
        -c "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)" |
        awk -v nq="$NQ" 'NR == 2 { a = $1 } NR == 3 { n = $1 } NR == 4 { printf "%.4f %d\n", ($1 - a) / 1e6 / nq, n }'
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
echo "| t | $(for s in $sides; do printf '%s CPU ms/q | ' "$s"; done)GIN / lsh | above the floor | rows lsh | rows GIN | only lsh | only GIN |"
echo "|---|$(for _ in $sides; do printf -- '---|'; done)---|---|---|---|---|---|"
for t in 0.5 0.8; do
    read -r onlyl onlyg < <(agree "$t")
    awk -v t="$t" -v sides="$sides" -v ol="$onlyl" -v og="$onlyg" '
        $3 == "t=" t { k = $4; n[k]++; v[k, n[k]] = $5; rowsof[k] = $6 }
        function median(k,    m, i, j, x, a) {
            m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
            for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        END {
            ns = split(sides, s, " "); line = "| " t " |"
            for (i = 1; i <= ns; i++) { med[s[i]] = median(s[i]); line = line sprintf(" %.4f |", med[s[i]]) }
            l = ("new" in med) ? "new" : ("lsh" in med ? "lsh" : "base")
            if ("base" in med) line = line sprintf(" %.2f (base %.2f) |", med["gin"] / med[l], med["gin"] / med["base"])
            else line = line sprintf(" %.2f |", med["gin"] / med[l])
            line = line sprintf(" %.2f |", (med["gin"] - med["floor"]) / (med[l] - med["floor"]))
            print line " " rowsof[l] " | " rowsof["gin"] " | " ol " | " og " |"
        }' "$out"
done
echo
echo "CPU ms/q: the median over $rounds rounds of the backend's CPU time for one statement of $NQ queries (CROSS JOIN LATERAL), after $NQ other queries untimed in the same backend, divided by $NQ. floor: one B-tree probe returning one row per call (${FLOOR}), what any index pays per LATERAL call; above the floor: (GIN - floor) / (lsh - floor). Memoize: $MEMOIZE. only lsh / only GIN: (query, row) pairs returned by one side and not the other."

if [ "${GAP_PERF:-0}" = 1 ]; then
    data=$SCRATCH/perf.data
    [ "${#SOS[@]}" = 2 ] && use_so "${SOS[1]}"
    pid_out=$(perf record -q -F 2999 -g -a -o "$data" -- \
        psql -X -qtA -c "SELECT pg_backend_pid()" -c "SET minhash.similarity_threshold = 0.5" \
        -c "SET enable_memoize = $MEMOIZE" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($LSH) d" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($LSH) d" \
        -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL ($LSH) d" 2>/dev/null)
    pid=$(echo "$pid_out" | head -n 1)
    echo
    echo "perf, lsh at t = 0.5 (self time, backend $pid, share of its samples):"
    perf report -i "$data" --pid "$pid" --stdio --no-children --percentage relative --sort dso -g none \
        2>/dev/null | grep -vE '^#|^$' | sed 's/[ -]*$//' | head -n 6
    perf report -i "$data" --pid "$pid" --stdio --no-children --percentage relative --sort dso,symbol -g none \
        --percent-limit 0.7 2>/dev/null | grep -vE '^#|^$' | sed 's/[ -]*$//' | head -n 30
fi
