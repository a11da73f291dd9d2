# Fast ingest (issue 13.2): batches of rows inserted into a table that already
# holds the scale's ROWS documents, once per index configuration, side by
# side in one run: the primary key only; + GIN over minhash_bands(sig)
# fastupdate off / on; + lsh with 1.1's default (fastupdate off) and with
# today's (fastupdate on, a 1MB pending list), each right after a REINDEX
# (leaves packed as a build leaves them). Then `%` CPU per query with an
# empty pending list, a full one at the default limit and a full 4MB one,
# beside the planner's cost.
#
# The table is a copy of docs (id primary key, cluster, body, sig). Each
# configuration inserts the EXTRA rows of docs_extra (ids shifted so that
# they never collide) in INSERT ... SELECT statements of INGEST_BATCH rows,
# each its own transaction, in one session, after a CHECKPOINT (so each pays
# its first-touch full-page images, as steady ingest between checkpoints
# does). Measured in that session: wall time (server clock), the backend's CPU
# (/proc/self/schedstat), WAL bytes (pg_current_wal_insert_lsn). The table
# grows by EXTRA rows per configuration (5% each): stated in the table.

INGEST_BATCH=${INGEST_BATCH:-1000}

# "cpu_s wall_s wal_bytes" of the SQL on stdin, run in one session.
ingest_measure() {
    {
        echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 AS c0, pg_current_wal_insert_lsn() AS l0, clock_timestamp() AS t0 \\gset"
        cat
        echo "SELECT (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::int8 - :c0) / 1e9, extract(epoch FROM clock_timestamp() - :'t0'), pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'l0');"
    } | psql -X -q -v ON_ERROR_STOP=1 -tA -F' ' | tail -n 1
}

# The batches of configuration number $1 (its id offset): INSERT statements.
ingest_batches() {
    local off=$(( $1 * 100000000 )) b lo hi
    for ((b = 0; b * INGEST_BATCH < EXTRA; b++)); do
        lo=$(( ROWS + b * INGEST_BATCH )); hi=$(( lo + INGEST_BATCH ))
        echo "INSERT INTO ingest SELECT id + $off, cluster, body, sig FROM docs_extra WHERE id > $lo AND id <= $hi;"
    done
}

# One configuration: $1 label, $2 number, $3 SQL that merges what is left
# pending afterwards (or empty). Adds the table row; sets ING_CPU_<n>.
ingest_config() {
    local label=$1 n=$2 merge=$3 r cpu wall wal mr mcpu=0 mwal=0 before
    before=$(q -c "SELECT count(*) FROM ingest")
    q -c "CHECKPOINT" >/dev/null
    r=$(ingest_batches "$n" | ingest_measure) || { tbl_row "$label|error (message above)|-|-|-|-|-|-|-"; return 0; }
    read -r cpu wall wal <<<"$r"
    local merged="-"
    if [ -n "$merge" ]; then
        mr=$(echo "$merge" | ingest_measure) || mr="0 0 0"
        read -r mcpu _ mwal <<<"$mr"
        merged="$(fmt %.0f "$(calc "$mcpu * 1000")") ms, $(fmt %.1f "$(calc "$mwal / 1048576")") MB"
    fi
    eval "ING_CPU_$n=\$cpu ING_MCPU_$n=\$mcpu"
    local pk=${ING_CPU_0:-$cpu}
    tbl_row "$label|$before|$(fmt %.0f "$(calc "$EXTRA / $wall")")|$(fmt %.0f "$(calc "$EXTRA / $cpu")")|$(fmt %.1f "$(calc "$cpu * 1e6 / $EXTRA")")|$(fmt %.2f "$(calc "$pk / $cpu")")|$(fmt %.0f "$(calc "$wal / $EXTRA")")|$merged|$(fmt %.2f "$(calc "$pk / ($cpu + $mcpu)")")"
}

# `%` at threshold 0.5 over the first NREC queries: "cpu_ms_per_query rows_per_query".
# Each the least CPU of three new sessions: a new backend's first queries
# also fault in the shared buffers they touch, which moves one run by 20-40%.
ingest_pct_cpu() {
    local r
    r=$(best_cpu 3 "SELECT count(*) FROM queries q CROSS JOIN LATERAL (SELECT id FROM ingest d WHERE d.sig % q.sig) x WHERE q.qid <= $NREC") || return 1
    local rows
    rows=$(q -c "SELECT count(*) FROM queries q CROSS JOIN LATERAL (SELECT id FROM ingest d WHERE d.sig % q.sig) x WHERE q.qid <= $NREC")
    echo "$(calc "${r% *} * 1000 / $NREC") $(calc "$rows / $NREC")"
}

# The planner's estimate for one `%` query: "startup..total".
ingest_pct_cost() {
    psql -X -q -tA -c "EXPLAIN SELECT id FROM ingest WHERE sig % (SELECT sig FROM queries WHERE qid = 1)" |
        grep -m1 -oE '(Index Scan|Bitmap Index Scan|Seq Scan) [a-z_ ]*ingest[a-z_]* +\(cost=[0-9.]+\.\.[0-9.]+' | sed 's/ *(cost=/: /'
}

# minhash.lsh_pending_list_limit's default, kB (the library loaded first: it defines the setting)
ingest_default_limit() {
    q -c "SELECT minhash_bits('1:[1]')" -c "SELECT boot_val FROM pg_settings WHERE name = 'minhash.lsh_pending_list_limit'" | tail -n 1
}

# `%` with an empty pending list, then with a full one (just below its limit)
# at 256 kB, at the default limit and at 4MB (1.1's default), each measured twice,
# alternating with the empty list; in a table of its own printed after the
# ingest table (ING_PCT_TABLE).
ingest_pending_queries() {
    local pr kb fill off=900000000 row empty
    q -c "SELECT minhash_lsh_clean_pending_list('ingest_lsh')" -c "ANALYZE ingest" >/dev/null
    ING_PCT_TABLE=$(mktemp)
    {
        echo
        echo "#### \`%\` (t = 0.5) through the lsh index of ingest with fastupdate on: CPU per query, $NREC queries"
        echo
        echo "| pending list limit | pending rows | CPU ms/query | rows/query | x empty list | planner's estimate for the index scan |"
        echo "|---|---|---|---|---|---|"
        for kb in 256 1024 4096; do
            for round in 1 2; do
                q -c "SELECT minhash_lsh_clean_pending_list('ingest_lsh')" -c "ANALYZE ingest" >/dev/null
                pr=$(ingest_pct_cpu) || pr="- -"
                empty=${pr% *}
                echo "| - | 0 | $(fmt %.3f "${pr% *}") | $(fmt %.2f "${pr#* }") | 1.00 | $(ingest_pct_cost) |"
                # the rows of signatures of k = 128 (8-byte slot header + 128 values) below the limit
                fill=$(( kb * 1024 / (8 + 4 * 128) - 1 ))
                [ "$fill" -gt "$EXTRA" ] && fill=$EXTRA
                q -c "ALTER INDEX ingest_lsh SET (pending_list_limit = $kb)" \
                  -c "INSERT INTO ingest SELECT id + $off, cluster, body, sig FROM docs_extra WHERE id <= $ROWS + $fill" \
                  -c "ANALYZE ingest" >/dev/null
                off=$((off + 10000000))
                pr=$(ingest_pct_cpu) || pr="- -"
                echo "| $kb kB | $(q -c "SELECT pending_rows FROM minhash_lsh_stats('ingest_lsh')") | $(fmt %.3f "${pr% *}") | $(fmt %.2f "${pr#* }") | $(fmt %.2f "$(calc "${pr% *} / $empty")") | $(ingest_pct_cost) |"
            done
        done
        echo
        echo "A scan reads the pending list and keeps the rows whose band keys (stored beside each pending row id) fall in its probe ranges, as the tree's would, then verifies those against their signatures. Once a session's scans have filtered 16 lists' worth of rows, its backend keeps a copy of the list's keys by band and key and reads only the rows appended since (so each statement here, in a new session, filters the whole list in its first 16 scans, then builds the copy). The planner's estimate counts every pending row (lsh_cost.cpp). Each full list is measured right after the empty one before it (x empty list); each figure is the least CPU of three new sessions."
    } >"$ING_PCT_TABLE"
    q -c "ALTER INDEX ingest_lsh RESET (pending_list_limit)" \
      -c "SELECT minhash_lsh_clean_pending_list('ingest_lsh')" >/dev/null
}

section_ingest() {
    section "fast ingest"
    if [ "$have_ext" != 1 ] || ! have_am lsh || ! have_fn minhash_lsh_clean_pending_list; then
        not_available "lsh index with a pending list (fast ingest)"
        return
    fi
    [ "$smoke" = 1 ] && INGEST_BATCH=100
    q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS ingest" \
      -c "CREATE TABLE ingest (id int PRIMARY KEY, cluster int, body text, sig minhash)" \
      -c "INSERT INTO ingest SELECT id, cluster, body, sig FROM docs" \
      -c "CREATE INDEX IF NOT EXISTS docs_extra_id ON docs_extra (id)" \
      -c "VACUUM ANALYZE ingest" -c "VACUUM ANALYZE docs_extra" >/dev/null
    # the rows to insert in shared buffers before the first configuration (the
    # primary key alone), which would otherwise pay for reading them in alone
    q -c "SELECT sum(length(body)) FROM docs_extra" -c "SELECT count(*) FROM docs_extra WHERE id > 0" >/dev/null
    tbl_start "Fast ingest: $EXTRA rows inserted into a table of $ROWS+ documents (id primary key, body, sig), INSERT ... SELECT of $INGEST_BATCH rows per statement and transaction" \
        "indexes besides the primary key|rows before|rows/s (wall)|rows/s (backend CPU)|CPU µs/row|x PK only (CPU)|WAL bytes/row|then merge what is pending: CPU, WAL|x PK only (CPU, with that merge)"
    ING_CPU_0=""
    ingest_config "none (primary key only)" 0 ""

    q -c "CREATE INDEX ingest_lsh ON ingest USING lsh (sig) WITH (threshold = 0.5, fastupdate = off)" >/dev/null
    local b r
    read -r b r < <(q -F' ' -c "SELECT bands, rows FROM minhash_lsh_stats('ingest_lsh')")
    ingest_config "lsh (sig) WITH (threshold = 0.5): $b bands of $r, fastupdate off (1.1's default)" 1 ""
    # today's defaults, after a REINDEX: leaves packed as the one above started
    q -c "ALTER INDEX ingest_lsh RESET (fastupdate)" -c "REINDEX INDEX ingest_lsh" >/dev/null
    ingest_config "lsh (sig) WITH (threshold = 0.5) after REINDEX, the defaults: fastupdate on, pending list $(ingest_default_limit) kB" 2 "SELECT minhash_lsh_clean_pending_list('ingest_lsh');"
    ingest_pending_queries
    # the former default list (1MB), same leaves
    q -c "ALTER INDEX ingest_lsh SET (pending_list_limit = 1024)" -c "REINDEX INDEX ingest_lsh" >/dev/null
    ingest_config "lsh (sig) WITH (threshold = 0.5, pending_list_limit = 1024) after REINDEX, fastupdate on" 7 "SELECT minhash_lsh_clean_pending_list('ingest_lsh');"
    q -c "ALTER INDEX ingest_lsh RESET (pending_list_limit)" >/dev/null
    # rebuilt with room in its leaves: the rows above split the leaves a
    # build packed to 95% (the default fillfactor) nearly all at once
    q -c "ALTER INDEX ingest_lsh SET (fillfactor = 80, pending_list_limit = 4096)" -c "REINDEX INDEX ingest_lsh" >/dev/null
    ingest_config "lsh (sig) WITH (threshold = 0.5, fillfactor = 80, pending_list_limit = 4096) after REINDEX, fastupdate on" 3 "SELECT minhash_lsh_clean_pending_list('ingest_lsh');"
    # the same room in the leaves with a 1MB list: how much of the gain is the fillfactor's
    q -c "ALTER INDEX ingest_lsh SET (pending_list_limit = 1024)" -c "REINDEX INDEX ingest_lsh" >/dev/null
    ingest_config "lsh (sig) WITH (threshold = 0.5, fillfactor = 80, pending_list_limit = 1024) after REINDEX, fastupdate on" 6 "SELECT minhash_lsh_clean_pending_list('ingest_lsh');"

    q -c "DROP INDEX ingest_lsh" >/dev/null
    q -c "CREATE INDEX ingest_gin ON ingest USING gin (minhash_bands(sig, $b, $r)) WITH (fastupdate = off)" >/dev/null
    ingest_config "GIN (minhash_bands(sig, $b, $r)), fastupdate off" 4 ""
    q -c "ALTER INDEX ingest_gin SET (fastupdate = on)" >/dev/null
    ingest_config "GIN (minhash_bands(sig, $b, $r)), fastupdate on" 5 "SELECT gin_clean_pending_list('ingest_gin');"
    q -c "DROP INDEX ingest_gin" >/dev/null
    # the primary key alone once more: how far the baseline itself moved during the run
    ingest_config "none (primary key only), again at the end" 8 ""
    if [ "$(q -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 0 ]; then
        tbl_row "pgvector HNSW|not available: pgvector is not installed here (no package for this PostgreSQL in scripts/install-deps.sh)|-|-|-|-|-|-|-"
    fi
    tbl_note "CPU: the inserting backend's (/proc/self/schedstat), which the machine's other load does not inflate; wall: the server's clock around all batches. x PK only: the primary-key-only CPU per row divided by this row's (the issue's target for lsh fastupdate on: >= 0.3). WAL: pg_current_wal_insert_lsn() before and after, after a CHECKPOINT (so it includes the first-touch full-page images). Pending lists merge during the inserts whenever they pass their limit (gin_pending_list_limit 4MB; minhash.lsh_pending_list_limit, 4MB unless the row says otherwise); the last column adds the merge of what is left (gin_clean_pending_list / minhash_lsh_clean_pending_list). Cluster: synchronous_commit = off, shared_buffers as the scale's. Rows before: each configuration inserts into the table as the previous one left it."
    tbl_end
    cat "$ING_PCT_TABLE"
    cat "$ING_PCT_TABLE" >>"$RESULTS/report.md"
    rm -f "$ING_PCT_TABLE"
    q -c "DROP TABLE ingest" >/dev/null
}
