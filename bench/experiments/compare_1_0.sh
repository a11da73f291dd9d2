#!/usr/bin/env bash
# Issue 10's cost targets: index size, build time and p50 CPU per `%` query at
# the design threshold of the current build against the 1.0 release, on the
# same data in the same cluster, alternating the two libraries.
#
#   PG_CONFIG=... bash bench/experiments/compare_1_0.sh [rows] [rounds]
#
# Builds 1.0 (commit 14e919a, the v1.0 tag: clones may lack the tag; V10 to
# override) from git history in a scratch directory, installs
# each library in turn into PG_CONFIG's installation (restarting a scratch
# cluster) and, per round and library: CREATE INDEX (maintenance_work_mem
# 1GB: \timing and the backend's CPU time), pg_relation_size, and for 2000 `%` queries at threshold 0.5
# run in a PL/pgSQL loop (after 100 of warm-up): the median time of one query
# inside the backend (clock_timestamp; a 0.1 ms query is rarely preempted, so
# the median is its CPU time even on a loaded machine) and the backend's mean
# CPU time per query over the loop (/proc/self/schedstat, whose resolution is
# a scheduler tick, hence over the whole loop). Reinstalls the current tree at the end.
# Ends with the medians over the rounds and the ratios 1.1 / 1.0, and the load
# average (the machine may be shared: the CPU figures are what to compare).
# The data: clusters of 10 variants of 100-element sets (docs/lsh.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
rows=${1:-100000}
rounds=${2:-3}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PG_CONFIG
# shellcheck source=bench/lib/beside_1_0.sh
. bench/lib/beside_1_0.sh
beside_1_0 compare

install_lib() {  # directory
    make -s -C "$1" install >/dev/null
    bash "$root/scripts/pgcluster.sh" stop "$scratch/pg" >/dev/null 2>&1 || true
    scratch_cluster pg "shared_buffers = 1GB" \
        "maintenance_work_mem = 1GB" "jit = off" "autovacuum = off" "max_wal_size = 8GB" >/dev/null
}

load() {  # database: the same rows, with the installed library's extension version
    psql -X -q -c "CREATE DATABASE $1" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -d "$1" -f "$root/bench/sql/variant_clusters.sql" >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -d "$1" <<SQL
VACUUM ANALYZE d;
CREATE TABLE qs AS SELECT row_number() OVER () AS n, sig FROM d ORDER BY hashint4(id) LIMIT 2000;
SQL
}
install_lib "$scratch/v10"
load v10
install_lib "$root"
load v11

measure() {  # label (PGDATABASE is set)
    local ms size cpu
    psql -X -q -c "DROP INDEX IF EXISTS d_lsh" >/dev/null
    # wall time (\timing) and the backend's CPU time (schedstat) of the build
    ms=$(psql -X -q -tA -c "SELECT pg_read_file('/proc/self/schedstat')" -c '\timing on' \
        -c "SET maintenance_work_mem = '1GB'" \
        -c "CREATE INDEX d_lsh ON d USING lsh (sig) WITH (threshold = 0.5)" -c '\timing off' \
        -c "SELECT pg_read_file('/proc/self/schedstat')" |
        awk '/^Time: / { t = $2 } /^[0-9]+ [0-9]+ [0-9]+$/ { n++; c[n] = $1 }
             END { printf "%s build_cpu_ms=%.0f", t, (c[n] - c[1]) / 1e6 }')
    size=$(psql -X -qtA -c "SELECT pg_relation_size('d_lsh')")
    cpu=$(psql -X -qtA -v ON_ERROR_STOP=1 <<'SQL'
SET enable_seqscan = off;
CREATE TEMP TABLE per_query (us float8);
CREATE TEMP TABLE batch (cpu_us float8);
DO $$
DECLARE s text; c0 float8; c1 float8; t0 timestamptz; cnt bigint; q minhash;
BEGIN
  FOR q IN SELECT sig FROM qs ORDER BY n LIMIT 100 LOOP   -- warm-up
    SELECT count(*) INTO cnt FROM d WHERE sig % q;
  END LOOP;
  s := pg_read_file('/proc/self/schedstat'); c0 := split_part(s, ' ', 1)::float8;
  FOR q IN SELECT sig FROM qs ORDER BY n LOOP
    t0 := clock_timestamp();
    SELECT count(*) INTO cnt FROM d WHERE sig % q;
    INSERT INTO per_query VALUES (extract(epoch FROM clock_timestamp() - t0) * 1e6);
  END LOOP;
  s := pg_read_file('/proc/self/schedstat'); c1 := split_part(s, ' ', 1)::float8;
  INSERT INTO batch VALUES ((c1 - c0) / 1000 / (SELECT count(*) FROM qs));
END $$;
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY us)::numeric, 1) || ' mean_cpu_us=' ||
       round((SELECT cpu_us FROM batch)::numeric, 1) FROM per_query;
SQL
)
    echo "$1 build_ms=$ms size=$size p50_us=$cpu"
}

echo "rows=$rows rounds=$rounds $(versions_line); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$scratch/rounds.txt
for r in $(seq 1 "$rounds"); do
    install_lib "$scratch/v10"
    PGDATABASE=v10 measure "round $r 1.0 " | tee -a "$out"
    install_lib "$root"
    PGDATABASE=v11 measure "round $r 1.1 " | tee -a "$out"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
# medians per version of: build wall ms, build CPU ms, size, p50 us, mean CPU us
awk '
    { v = $3; n[v]++
      for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[2] == "") continue; val[v, kv[1], n[v]] = kv[2]; keys[kv[1]] = 1 }
      if ($4 ~ /^build_ms=/) { split($4, kv, "="); val[v, "build_ms", n[v]] = kv[2] } }
    function median(v, k,    m, i, j, t, a) {
        m = 0; for (i = 1; i <= n[v]; i++) if ((v, k, i) in val) a[++m] = val[v, k, i] + 0
        for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return m == 0 ? "" : (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2)
    }
    END {
        split("build_ms build_cpu_ms size p50_us mean_cpu_us", ks, " ")
        printf "%-12s %12s %12s %8s\n", "median of", "1.0", "1.1", "1.1/1.0"
        for (i = 1; i <= 5; i++) {
            a = median("1.0", ks[i]); b = median("1.1", ks[i])
            printf "%-12s %12s %12s %8.3f\n", ks[i], a, b, (a > 0 ? b / a : 0)
        }
    }' "$out"
