#!/usr/bin/env bash
# Fast ingest on synthetic signatures (issue 13.2, bench/notes/2026-11-23-fast-ingest.md):
# m(id int primary key, sig minhash) with N rows of 30-element sets and an lsh index with
# fastupdate on (default 4MB limit), a copy with the primary key only (bench/sql/synthetic_ingest.sql),
# then 20 INSERT ... SELECT
# of 1,000 rows into each after a CHECKPOINT: backend CPU µs/row and WAL bytes/row, then the
# merge of what is left pending. Runs against the cluster in PGHOST/PGPORT (superuser: it reads
# /proc/self/schedstat through pg_read_file).
#   bash bench/ingest_synthetic.sh [N]   (default 1000000)
set -euo pipefail
n=${1:-1000000}
p() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
p -v rows="$n" -v pool_lo=2100001 -v pool_hi=2120000 -v lsh_opts= -f "$(dirname "$0")/sql/synthetic_ingest.sql"
meas() {
    p -c "CHECKPOINT"
    { echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 AS c0, pg_current_wal_insert_lsn() AS l0 \gset"
      for b in $(seq 0 19); do lo=$((2100000 + b * 1000)); echo "INSERT INTO $1 SELECT * FROM pool WHERE id > $lo AND id <= $((lo + 1000));"; done
      echo "SELECT '$1: CPU µs/row ' || round((split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 - :c0) / 1e3 / 20000, 1) || ', WAL bytes/row ' || round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0') / 20000);"
    } | p -tA
}
meas m_pk
meas m
printf '%s\n' "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 AS c0 \gset" \
    "SELECT minhash_lsh_clean_pending_list('m_sig') AS merged_rows;" \
    "SELECT 'merge of the rest: CPU ms ' || round((split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 - :c0) / 1e6);" | p -tA
p -c "DROP TABLE m, m_pk, pool"
