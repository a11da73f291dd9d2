#!/usr/bin/env bash
# Fast ingest, two builds side by side (issue 13.2): the inserting backend's
# CPU per row into a table with the primary key only and into one with an lsh
# index (fastupdate on, the default pending list limit), and the CPU of `%`
# queries with a pending list almost at its limit and with an empty one,
# alternating the builds (and which goes first) round by round.
#
#   bash bench/experiments/ingest_compare.sh BASE_PG_CONFIG NEW_PG_CONFIG [rows] [rounds]
#
# Each PG_CONFIG names a private PostgreSQL installation with one build of
# minhash installed; each gets its own scratch cluster (shared_buffers 3GB,
# checkpoint_timeout 1h, synchronous_commit off) with the same data:
# m(id int primary key, sig minhash) of `rows` synthetic 30-element sets with
# an lsh index (fastupdate = on), m_pk the same rows with the primary key
# only, and a pool of 200,000 more rows. Per round and build (backend CPU,
# /proc/self/schedstat; WAL from pg_current_wal_insert_lsn):
#  - pk_us:        20,000 rows into m_pk, 20 INSERT ... SELECT of 1,000, each its own transaction;
#  - lsh_us, lsh_wal: the same 20,000 rows into m (merges happen when the list passes its limit);
#  - ckpt_us, ckpt_wal: 20,000 more into m right after a CHECKPOINT (each leaf a merge
#    touches pays its full-page image once);
#  - pct_full_us:  1000 `%` queries (t = 0.5) with 7,000 rows pending (just below the 4MB limit);
#  - pct_empty_us: the same queries after minhash_lsh_clean_pending_list.
# log_checkpoints is on: SCRATCH_KEEP=1 keeps the clusters' logs, to see
# whether a checkpoint fell inside a steady phase (its WAL per row says so).
# PENDING_LIMIT_KB=N sets the lsh index's pending_list_limit in both (default:
# the GUC's 4MB). The tables grow by 47,000 rows a round, the same in both clusters. Ends with
# medians and new/base ratios, and the x PK only ratios (pk_us / lsh_us).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS_DEFAULT=1000000
# shellcheck source=bench/lib/two_builds.sh
. bench/lib/two_builds.sh
two_builds_args ingest_compare "$@"

start() {  # name pg_config
    PG_CONFIG=$2 scratch_cluster "$1" "shared_buffers = 3GB" "maintenance_work_mem = 1GB" \
        "jit = off" "autovacuum = off" "max_wal_size = 8GB" "checkpoint_timeout = 1h" \
        "synchronous_commit = off" "log_checkpoints = on" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v pool_lo=1100001 -v pool_hi=1300000 \
        -v lsh_opts="${PENDING_LIMIT_KB:+, pending_list_limit = $PENDING_LIMIT_KB}" \
        -f bench/sql/synthetic_ingest.sql
    psql -X -q -v ON_ERROR_STOP=1 \
        -c "CREATE TABLE qs AS SELECT row_number() OVER () AS n, sig FROM m ORDER BY hashint4(id) LIMIT 1000"
}
start base "$BASE"
start new "$NEW"

# INSERT ... SELECT of 1,000 pool rows per statement: $1 table, $2 first id - 1, $3 rows
batches() {
    local b
    for ((b = 0; b < $3 / 1000; b++)); do
        echo "INSERT INTO $1 SELECT * FROM pool WHERE id > $(($2 + b * 1000)) AND id <= $(($2 + b * 1000 + 1000));"
    done
}

measure() {  # cluster round
    local lo=$((1100000 + ($2 - 1) * 47000))
    # shellcheck disable=SC1090
    . "$SCRATCH/$1/env"
    {
        cat <<'SQL'
CREATE TEMP TABLE r (k text, v float8);
CREATE FUNCTION pg_temp.cpu_us() RETURNS float8 LANGUAGE sql AS
  $$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 / 1000 $$;
CREATE FUNCTION pg_temp.pct_us() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE c0 float8; cnt bigint; q minhash;
BEGIN
  SET LOCAL enable_seqscan = off;
  c0 := pg_temp.cpu_us();
  FOR q IN SELECT sig FROM qs ORDER BY n LOOP
    SELECT count(*) INTO cnt FROM m WHERE sig % q;
  END LOOP;
  RETURN (pg_temp.cpu_us() - c0) / 1000;
END $$;
SQL
        echo "SELECT pg_temp.cpu_us() AS c0 \\gset"
        batches m_pk "$lo" 20000
        echo "INSERT INTO r SELECT 'pk_us', (pg_temp.cpu_us() - :c0) / 20000;"
        echo "SELECT pg_temp.cpu_us() AS c0, pg_current_wal_insert_lsn() AS l0 \\gset"
        batches m "$lo" 20000
        echo "INSERT INTO r SELECT 'lsh_us', (pg_temp.cpu_us() - :c0) / 20000;"
        echo "INSERT INTO r SELECT 'lsh_wal', pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / 20000;"
        echo "CHECKPOINT;"
        echo "SELECT pg_temp.cpu_us() AS c0, pg_current_wal_insert_lsn() AS l0 \\gset"
        batches m $((lo + 20000)) 20000
        echo "INSERT INTO r SELECT 'ckpt_us', (pg_temp.cpu_us() - :c0) / 20000;"
        echo "INSERT INTO r SELECT 'ckpt_wal', pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / 20000;"
        echo "SELECT minhash_lsh_clean_pending_list('m_sig') \\gset"
        batches m $((lo + 40000)) 7000
        echo "SELECT 1 AS pending_ok FROM minhash_lsh_stats('m_sig') WHERE pending_rows = 7000 \\gset"
        echo "INSERT INTO r SELECT 'pct_full_us', pg_temp.pct_us();"
        echo "SELECT minhash_lsh_clean_pending_list('m_sig') \\gset"
        echo "INSERT INTO r SELECT 'pct_empty_us', pg_temp.pct_us();"
        echo "SELECT string_agg(k || '=' || round(v::numeric, 2), ' ' ORDER BY k) FROM r;"
    } | psql -X -qtA -v ON_ERROR_STOP=1 | tail -n 1
}

echo "rows=$rows rounds=$rounds pending_list_limit=${PENDING_LIMIT_KB:-default} base=$BASE new=$NEW; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$SCRATCH/rounds.txt
two_builds_rounds measure "$out"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
two_builds_medians "$out"
# the x PK only ratio of each round (both rates from the same minutes), then their median
awk '
    { v = $3; n[v]++; for (i = 4; i <= NF; i++) { split($i, kv, "="); val[v, kv[1], n[v]] = kv[2] } }
    function medarr(a, m,    i, j, t) {
        for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
        for (v = 1; v <= 2; v++) { b = v == 1 ? "base" : "new"
            for (i = 1; i <= n[b]; i++) { r1[i] = val[b, "pk_us", i] / val[b, "lsh_us", i]; r2[i] = val[b, "pk_us", i] / val[b, "ckpt_us", i] }
            x[v] = medarr(r1, n[b]); y[v] = medarr(r2, n[b]) }
        printf "x PK only (pk_us / lsh_us, median of the rounds):  base %.2f  new %.2f\n", x[1], x[2]
        printf "x PK only after a CHECKPOINT (pk_us / ckpt_us):  base %.2f  new %.2f\n", y[1], y[2]
    }' "$out"
