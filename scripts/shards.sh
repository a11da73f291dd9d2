#!/usr/bin/env bash
# A coordinator and N shard clusters on this machine (loopback), to try the
# sharded setup of docs/scale-out.md: hash partitioning with postgres_fdw
# foreign partitions.
#
#   scripts/shards.sh start DIR N [--demo ROWS]   N shards + a coordinator under DIR
#   scripts/shards.sh stop DIR                    stop them all
#
# Each cluster is a scripts/pgcluster.sh cluster (postgres user, free port,
# scratch directory): DIR/coord and DIR/shard1..N, each with its DIR/x/env to
# source. `start` on existing directories restarts them (new ports; the
# coordinator's servers are updated). `start` creates the minhash extension everywhere, postgres_fdw on
# the coordinator, and a foreign server per shard (shard1..N) with
# extensions 'minhash' (so minhash_similar(sig, q, t) and <%> are shipped)
# and async_capable 'true' (the shards are scanned concurrently).
#
# --demo ROWS also creates the table of docs/scale-out.md, sharded: on every
# shard docs(id, body, sig) with an lsh index and the view docs_bands; on the
# coordinator the partitioned docs and docs_bands with one foreign partition
# per shard, and ROWS generated rows inserted through the coordinator: half
# of them in clusters of 5 near-duplicates, half unique.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
cmd=${1:?usage: shards.sh start DIR N [--demo ROWS] | stop DIR}
dir=${2:?usage: shards.sh start DIR N [--demo ROWS] | stop DIR}

psql_in() {
    # psql_in CLUSTERDIR [psql args...]: psql on that cluster, stop at the first error
    local c=$1
    shift
    (. "$c/env" && PGOPTIONS="-c client_min_messages=warning" "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@")
}

case "$cmd" in
start)
    n=${3:?usage: shards.sh start DIR N [--demo ROWS]}
    demo_rows=""
    if [ "${4:-}" = "--demo" ]; then demo_rows=${5:?--demo needs a row count}; fi
    mkdir -p "$dir"
    chmod 755 "$dir"
    for i in $(seq 1 "$n"); do
        bash scripts/pgcluster.sh start "$dir/shard$i"
        psql_in "$dir/shard$i" -c "CREATE EXTENSION IF NOT EXISTS minhash"
    done
    bash scripts/pgcluster.sh start "$dir/coord"
    psql_in "$dir/coord" -c "CREATE EXTENSION IF NOT EXISTS minhash" \
        -c "CREATE EXTENSION IF NOT EXISTS postgres_fdw"
    for i in $(seq 1 "$n"); do
        port=$(. "$dir/shard$i/env" && echo "$PGPORT")
        # a restarted shard listens on a new port: its server follows it
        psql_in "$dir/coord" <<EOT
DO \$\$
BEGIN
    IF EXISTS (SELECT FROM pg_foreign_server WHERE srvname = 'shard$i') THEN
        ALTER SERVER shard$i OPTIONS (SET port '$port');
    ELSE
        CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
            OPTIONS (host '127.0.0.1', port '$port', dbname 'postgres', extensions 'minhash',
                     async_capable 'true', fetch_size '1000', batch_size '1000');
        CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i OPTIONS (user 'postgres');
    END IF;
END
\$\$;
EOT
    done
    if [ -n "$demo_rows" ]; then
        for i in $(seq 1 "$n"); do
            psql_in "$dir/shard$i" <<'EOT'
CREATE TABLE docs (id bigint NOT NULL, body text, sig minhash);
CREATE INDEX docs_sig_lsh ON docs USING lsh (sig);
-- the band keys of every row: what the all-pairs recipe exchanges
CREATE VIEW docs_bands AS
    SELECT d.id, b.band::int AS band, b.key
    FROM docs d, unnest(minhash_bands(d.sig, 30, 4)) WITH ORDINALITY AS b(key, band);
EOT
        done
        {
            echo "CREATE TABLE docs (id bigint NOT NULL, body text, sig minhash) PARTITION BY HASH (id);"
            echo "CREATE TABLE docs_bands (id bigint, band int, key bigint) PARTITION BY HASH (id);"
            for i in $(seq 1 "$n"); do
                echo "CREATE FOREIGN TABLE docs_s$i PARTITION OF docs"
                echo "    FOR VALUES WITH (MODULUS $n, REMAINDER $((i - 1))) SERVER shard$i OPTIONS (table_name 'docs');"
                echo "CREATE FOREIGN TABLE docs_bands_s$i PARTITION OF docs_bands"
                echo "    FOR VALUES WITH (MODULUS $n, REMAINDER $((i - 1))) SERVER shard$i OPTIONS (table_name 'docs_bands', fetch_size '10000');"
            done
            # half the rows in clusters of 5 near-duplicates (row id is member id % 5 of
            # cluster id / 5, even clusters), the other half unique (own words)
            echo "INSERT INTO docs SELECT id, body, minhash(body) FROM ("
            echo "  SELECT id, (SELECT string_agg('w' || (c * 1000 + j)::text, ' ')"
            echo "              FROM generate_series(1, 40) j) || ' v' || (id % 5)::text AS body"
            echo "  FROM (SELECT id, CASE WHEN (id / 5) % 2 = 0 THEN id / 5 ELSE -id END AS c"
            echo "        FROM generate_series(1, $demo_rows) id) g) s;"
        } | psql_in "$dir/coord"
        # settled tables: no autovacuum of the fresh rows later, during measurements
        for i in $(seq 1 "$n"); do psql_in "$dir/shard$i" -c "VACUUM ANALYZE docs"; done
        psql_in "$dir/coord" -c "ANALYZE docs"
    fi
    echo "coordinator: . $dir/coord/env; shards: $dir/shard1..$n"
    ;;
stop)
    for c in "$dir"/coord "$dir"/shard*; do
        if [ -d "$c" ]; then bash scripts/pgcluster.sh stop "$c"; fi
    done
    ;;
*)
    echo "usage: shards.sh start DIR N [--demo ROWS] | stop DIR" >&2
    exit 2
    ;;
esac
