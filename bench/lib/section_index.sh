# Indexes: the lsh index (issue 3) and the baselines' indexes, built on the
# same table: build time, size against the signatures it covers, inserts
# after the build, VACUUM after deleting them again, minhash_lsh_check.

# Bands and rows for the GIN-over-bands baseline: the lsh index's own (read
# back with minhash_lsh_stats), so both see the same candidates and the
# comparison is at equal recall; without the index, what the optimiser picks
# for threshold 0.5 and 128 permutations.
lsh_bands_rows() {
    if [ "${LSH_INDEX:-0}" = 1 ] && have_fn minhash_lsh_stats; then
        q -F' ' -c "SELECT bands, rows FROM minhash_lsh_stats('docs_sig_lsh')"
    else
        q -F' ' -c "SELECT bands, rows FROM minhash_lsh_params(0.5, 128)"
    fi
}

index_row() {  # name, build seconds, relation
    local size rows sigbytes
    size=$(q -c "SELECT pg_relation_size('$3')")
    rows=${DOCROWS:-$(q -c "SELECT count(*) FROM docs")}
    sigbytes=${SIGBYTES:-$(q -c "SELECT sum(pg_column_size(sig)) FROM docs")}
    tbl_row "$1|$(fmt %.2f "$2")|$(fmt %.1f "$(calc "$size / 1048576")")|$(fmt %.0f "$(calc "$size / $rows")")|$(fmt %.2f "$(calc "$size / $sigbytes")")"
}

section_index() {
    section "indexes"
    if [ "$have_ext" != 1 ] || ! have_fn minhash; then
        not_available "minhash type and functions (indexes)"
        return
    fi
    q -c "SET maintenance_work_mem = '1GB'" >/dev/null
    tbl_start "Index build (on $ROWS rows, single process, maintenance_work_mem = 1GB)" \
        "index|build s|size MB|bytes/row|size / signature bytes"
    local sigbytes
    sigbytes=${SIGBYTES:-$(q -c "SELECT sum(pg_column_size(sig)) FROM docs")}
    tbl_row "(signatures themselves: sum(pg_column_size(sig)))|-|$(fmt %.1f "$(calc "$sigbytes / 1048576")")|$(fmt %.0f "$(calc "$sigbytes / $ROWS")")|1.00"

    if have_am lsh; then
        local ms
        if build_monitored lsh "CREATE INDEX docs_sig_lsh ON docs USING lsh (sig) WITH (threshold = 0.5)"; then
            ms=$(calc "$B_WALL * 1000")
            M_BUILD_S=$(calc "$ms / 1000")
            M_SIZE_RATIO=$(calc "$(q -c "SELECT pg_relation_size('docs_sig_lsh')") / $sigbytes")
            index_row "lsh (sig) WITH (threshold = 0.5)" "$M_BUILD_S" docs_sig_lsh
            LSH_INDEX=1
        else
            tbl_row "lsh|error (message above)|-|-|-"
            LSH_INDEX=0
        fi
    else
        tbl_row "lsh|not available|-|-|-"
        tbl_note "not available: lsh index access method not built"
        LSH_INDEX=0
    fi
    local inserts_table
    inserts_table=$(mktemp)
    if [ "$LSH_INDEX" = 1 ] && [ "$EXTRA" -gt 0 ]; then
        index_inserts >"$inserts_table"
    fi

    if [ "$big" = 1 ] && [ "${BENCH_GIN:-0}" != 1 ]; then
        tbl_row "GIN over minhash_bands|not built (10m)|-|-|-"
        tbl_note "GIN over minhash_bands is not built at 10m unless BENCH_GIN=1: its build took 164 s at 1M, so about half an hour here, and 10 GB."
    elif have_fn minhash_bands && have_fn minhash_lsh_params; then
        read -r LSH_B LSH_R < <(lsh_bands_rows)
        ms=$(sql_ms "CREATE INDEX docs_bands_gin ON docs USING gin (minhash_bands(sig, $LSH_B, $LSH_R))")
        index_row "GIN (minhash_bands(sig, $LSH_B, $LSH_R)) [baseline]" "$(calc "$ms / 1000")" docs_bands_gin
    else
        tbl_row "GIN over minhash_bands|not available|-|-|-"
        tbl_note "not available: minhash_bands / minhash_lsh_params not built"
    fi
    if [ "$smoke" = 1 ]; then
        tbl_note "pg_trgm and RUM baselines: skipped by --smoke (their builds and queries take minutes); run --scale 10k."
    elif [ "$ROWS" -le 100000 ] && [ "$big" != 1 ]; then
        q -c "CREATE EXTENSION IF NOT EXISTS pg_trgm" >/dev/null
        ms=$(sql_ms "CREATE INDEX docs_body_trgm ON docs USING gin (body gin_trgm_ops)")
        index_row "pg_trgm GIN (body gin_trgm_ops) [baseline]" "$(calc "$ms / 1000")" docs_body_trgm
    else
        tbl_note "pg_trgm is not built at this scale (10k and 100k only): its GIN % query over long texts takes seconds per query."
    fi
    if [ "$ROWS" -le 100000 ] && [ "$smoke" != 1 ] && [ "$big" != 1 ]; then
        index_rum
    fi
    q -c "ANALYZE docs" >/dev/null
    tbl_end
    [ "$LSH_INDEX" = 1 ] && build_report lsh "lsh (sig) WITH (threshold = 0.5)"
    if [ -s "$inserts_table" ]; then
        tbl_start "Inserts after the build ($EXTRA rows with precomputed signatures, one INSERT ... SELECT)" \
            "table|s|rows/s|notes"
        while IFS= read -r line; do tbl_row "$line"; done <"$inserts_table"
        tbl_end
    fi
    rm -f "$inserts_table"
}

# Prints table rows: inserting docs_extra into docs (primary key + lsh) and,
# for comparison, into a copy with only the primary key; then deletes them
# again and times VACUUM, checking the index with minhash_lsh_check.
index_inserts() {
    local ms_idx ms_plain ms_vac problems
    q -c "CREATE TABLE docs_plain (LIKE docs); ALTER TABLE docs_plain ADD PRIMARY KEY (id)" >/dev/null
    ms_plain=$(sql_ms "INSERT INTO docs_plain SELECT * FROM docs_extra")
    q -c "DROP TABLE docs_plain" >/dev/null
    ms_idx=$(sql_ms "INSERT INTO docs SELECT * FROM docs_extra")
    echo "docs (pkey + lsh)|$(fmt %.2f "$(calc "$ms_idx / 1000")")|$(fmt %.0f "$(calc "$EXTRA / ($ms_idx / 1000)")")|"
    echo "same rows, table with pkey only|$(fmt %.2f "$(calc "$ms_plain / 1000")")|$(fmt %.0f "$(calc "$EXTRA / ($ms_plain / 1000)")")|lsh index maintenance: $(fmt %.0f "$(calc "($ms_idx - $ms_plain) / $EXTRA * 1000")") µs/row"
    M_INSERT_RPS=$(calc "$EXTRA / ($ms_idx / 1000)")
    q -c "DELETE FROM docs WHERE id > $ROWS" >/dev/null
    ms_vac=$(sql_ms "VACUUM docs")
    problems=-
    if have_fn minhash_lsh_check; then
        problems=$(q -c "SELECT count(*) FROM minhash_lsh_check('docs_sig_lsh')")
    fi
    echo "VACUUM docs after deleting them|$(fmt %.2f "$(calc "$ms_vac / 1000")")|-|minhash_lsh_check problems: $problems"
}

# RUM (postgresql-15-rum) over the shingle arrays: exact Jaccard with an
# index, the peer that gives exact answers. Its index holds every shingle,
# so it is built at 10k and 100k rows only.
index_rum() {
    if [ "$(q -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'rum'")" = 0 ]; then
        tbl_row "RUM over shingle arrays|not available|-|-|-"
        tbl_note "not available: rum extension (postgresql-15-rum) not installed for this PostgreSQL"
        return
    fi
    q -c "CREATE EXTENSION IF NOT EXISTS rum" >/dev/null
    q -c "CREATE TABLE docs_sh AS SELECT id, minhash_shingles(body) AS sh FROM docs;
          ALTER TABLE docs_sh ADD PRIMARY KEY (id);
          ALTER TABLE queries ADD COLUMN sh text[];
          UPDATE queries SET sh = minhash_shingles(body)" >/dev/null
    local ms
    ms=$(sql_ms "CREATE INDEX docs_sh_rum ON docs_sh USING rum (sh rum_anyarray_ops)")
    index_row "RUM (minhash_shingles(body) rum_anyarray_ops) [baseline]" "$(calc "$ms / 1000")" docs_sh_rum
    tbl_note "RUM indexes a separate table docs_sh(id, sh text[]) of the distinct word 5-shingles ($(q -c "SELECT pg_size_pretty(pg_table_size('docs_sh'))") besides its index)."
    q -c "ANALYZE docs_sh" >/dev/null
}

# CREATE INDEX with the build watched from outside: once a second,
# pg_stat_progress_create_index (phase, tuples) and the building backend's
# /proc/PID/status (RssAnon: its private memory, the sort's; VmHWM: peak
# resident including the shared buffers it touched); trace_sort's LOG lines
# (sort memory, runs, disk blocks) go to $RESULTS/build_$1.trace. Sets B_WALL
# and B_CPU (seconds: client wall, backend CPU). $1 short name, $2 statement.
build_monitored() {
    local name=$1 sql=$2 out=$RESULTS/build_$1 bg pid="" r
    : >"$out.progress"
    PGAPPNAME=bench_build_$name PGOPTIONS="-c trace_sort=on -c client_min_messages=log" \
        sql_cpu "$sql" >"$out.cpu" 2>"$out.trace" &
    bg=$!
    while kill -0 "$bg" 2>/dev/null; do
        [ -n "$pid" ] || pid=$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'bench_build_$name' AND query LIKE 'CREATE INDEX%'" 2>/dev/null || true)
        if [ -n "$pid" ]; then
            r=$(q -F'|' -c "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total FROM pg_stat_progress_create_index WHERE pid = $pid" 2>/dev/null || true)
            [ -n "$r" ] && echo "$(date +%s.%N)|$r|$(awk '/^(RssAnon|VmHWM):/ { printf "%s=%s ", $1, $2 }' "/proc/$pid/status" 2>/dev/null)" >>"$out.progress"
        fi
        sleep 1
    done
    if ! wait "$bg"; then
        cat "$out.trace" >&2
        return 1
    fi
    read -r B_CPU B_WALL <"$out.cpu"
}

# The phases, CPU and memory of a build_monitored run, as a table.
build_report() {
    local name=$1 label=$2 out=$RESULTS/build_$1
    tbl_start "Build of $label: phases (pg_stat_progress_create_index, sampled each second), CPU and memory" \
        "phase|first seen s|last seen s|~duration s|tuples done at the end"
    awk -F'|' '
        NR == 1 { t0 = $1 }
        { ph = $2; if (!(ph in first)) { order[++n] = ph; first[ph] = $1 - t0 } last[ph] = $1 - t0; done[ph] = $3 }
        END { for (i = 1; i <= n; i++) { p = order[i]; nxt = (i < n) ? first[order[i + 1]] : last[p];
              printf "%s|%.0f|%.0f|%.0f|%s\n", p, first[p], last[p], nxt - first[p], done[p] } }' "$out.progress" |
        while IFS= read -r line; do tbl_row "$line"; done
    local anon hwm
    anon=$(grep -o 'RssAnon:=[0-9]*' "$out.progress" | cut -d= -f2 | sort -n | tail -n 1 || true)
    hwm=$(grep -o 'VmHWM:=[0-9]*' "$out.progress" | cut -d= -f2 | sort -n | tail -n 1 || true)
    local mem="The build ended before the first sample (one a second): no phases or memory."
    [ -n "$anon" ] && mem="Peak of the building backend, sampled: RssAnon $(fmt %.0f "$(calc "$anon / 1024")") MB (private memory: the sort), VmHWM $(fmt %.0f "$(calc "${hwm:-0} / 1024")") MB (resident high-water mark, shared buffers it touched included). Phase times are first-to-next sample, so ±1 s. The phases' samples: ${out#$root/}.progress."
    tbl_note "Whole build: $(fmt %.1f "$B_WALL") s wall, $(fmt %.1f "$B_CPU") s backend CPU (single process, maintenance_work_mem = $(q -c "SHOW maintenance_work_mem")). $mem"
    local sortlog
    sortlog=$(grep -E 'sort.* ended|performsort of|finished writing run|switching to external|begin datum sort' "$out.trace" | sed -E 's/^[A-Z]+: +//' | tail -n 6 | tr '\n' ';' || true)
    [ -n "$sortlog" ] && tbl_note "trace_sort (last lines): $sortlog"
    tbl_end
}
