#!/usr/bin/env bash
# Two builds of the current version side by side (e.g. a refactoring against
# the commit it started from): the backend CPU of `%` queries, ORDER BY <%>
# LIMIT 10 queries, one all-pairs call, one VACUUM and one minhash_lsh_check
# on the same table, alternating the builds (and which one goes first)
# round by round.
#
#   bash bench/experiments/compare_builds.sh BASE_PG_CONFIG NEW_PG_CONFIG [rows] [rounds]
#
# Each PG_CONFIG names a private PostgreSQL installation with one build of
# minhash installed (`make install` with that PG_CONFIG); each gets its own
# scratch cluster with the same rows (the data of bench/experiments/compare_1_0.sh: clusters
# of 10 variants of 100-element sets) and the same lsh index (threshold 0.5),
# both running for the whole comparison. Per round and build:
#  - pct_us: 2000 `%` queries (after 100 of warm-up) in a PL/pgSQL loop, the
#    backend's CPU time per query (/proc/self/schedstat, over the loop);
#  - knn_us: 200 `ORDER BY sig <%> q LIMIT 10` queries, the same way;
#  - pairs_ms: one minhash_similar_pairs(index, 'id') call (backend CPU);
#  - vacuum_ms: DELETE of 1% of the rows, then VACUUM (backend CPU), the rows
#    put back afterwards (inserted again: VACUUM has work each round);
#  - check_ms: minhash_lsh_check(index) (backend CPU; its row count is 0).
# Ends with the medians over the rounds and the ratios new / base, and the
# load average (the machine may be shared: CPU time is what to compare).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS_DEFAULT=100000
# shellcheck source=bench/lib/two_builds.sh
. bench/lib/two_builds.sh
two_builds_args compare_builds "$@"

start() {  # name pg_config
    PG_CONFIG=$2 scratch_cluster "$1" "shared_buffers = 512MB" "maintenance_work_mem = 512MB" \
        "jit = off" "autovacuum = off" "max_wal_size = 4GB" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -f bench/sql/variant_clusters.sql >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE INDEX d_lsh ON d USING lsh (sig) WITH (threshold = 0.5);
VACUUM ANALYZE d;
CREATE TABLE qs AS SELECT row_number() OVER () AS n, sig FROM d ORDER BY hashint4(id) LIMIT 2000;
CREATE TABLE gone AS SELECT * FROM d WHERE hashint4(id + 7) % 100 = 0;
SQL
}
start base "$BASE"
start new "$NEW"

measure() {  # cluster round
    # shellcheck disable=SC1090
    . "$SCRATCH/$1/env"
    psql -X -qtA -v ON_ERROR_STOP=1 <<'SQL' | tr '\n' ' '
SET enable_seqscan = off;
CREATE TEMP TABLE r (k text, v float8);
CREATE FUNCTION pg_temp.cpu_us() RETURNS float8 LANGUAGE sql AS
  $$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 / 1000 $$;
DO $$
DECLARE c0 float8; cnt bigint; q minhash;
BEGIN
  FOR q IN SELECT sig FROM qs ORDER BY n LIMIT 100 LOOP   -- warm-up
    SELECT count(*) INTO cnt FROM d WHERE sig % q;
  END LOOP;
  c0 := pg_temp.cpu_us();
  FOR q IN SELECT sig FROM qs ORDER BY n LOOP
    SELECT count(*) INTO cnt FROM d WHERE sig % q;
  END LOOP;
  INSERT INTO r VALUES ('pct_us', (pg_temp.cpu_us() - c0) / 2000);
  c0 := pg_temp.cpu_us();
  FOR q IN SELECT sig FROM qs ORDER BY n LIMIT 200 LOOP
    SELECT count(*) INTO cnt FROM (SELECT id FROM d ORDER BY sig <%> q LIMIT 10) s;
  END LOOP;
  INSERT INTO r VALUES ('knn_us', (pg_temp.cpu_us() - c0) / 200);
  c0 := pg_temp.cpu_us();
  SELECT count(*) INTO cnt FROM minhash_similar_pairs('d_lsh', 'id');
  INSERT INTO r VALUES ('pairs_ms', (pg_temp.cpu_us() - c0) / 1000);
  c0 := pg_temp.cpu_us();
  SELECT count(*) INTO cnt FROM minhash_lsh_check('d_lsh');
  IF cnt <> 0 THEN RAISE EXCEPTION 'minhash_lsh_check found % problems', cnt; END IF;
  INSERT INTO r VALUES ('check_ms', (pg_temp.cpu_us() - c0) / 1000);
END $$;
DELETE FROM d WHERE id IN (SELECT id FROM gone);
SELECT pg_temp.cpu_us() AS c0 \gset
VACUUM d;
INSERT INTO r SELECT 'vacuum_ms', (pg_temp.cpu_us() - :c0) / 1000;
INSERT INTO d SELECT * FROM gone;
SELECT string_agg(k || '=' || round(v::numeric, 1), ' ' ORDER BY k) FROM r;
SQL
    echo
}

echo "rows=$rows rounds=$rounds base=$BASE new=$NEW; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$SCRATCH/rounds.txt
two_builds_rounds measure "$out"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
two_builds_medians "$out"
