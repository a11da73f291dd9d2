# Query latency (pgbench -M prepared, one connection, per-transaction log)
# and quality (recall and precision against exact Jaccard) for the lsh index
# and the baselines, on the same table and the same query rows.
#
# Each query takes its signature from the queries table by a random qid, so
# the latency includes that primary-key lookup (an InitPlan), as an
# application looking up "rows like this one" would do.

# Scores $1 (a table qid, qrow, id) for threshold $2: recall of pairs with
# exact J >= t+0.1 and >= t, precision (returned with J >= t), returned pairs
# with J < t-0.1, rows per query. The query row itself is left out. Pairs
# absent from truth have J < 0.3 (the generator's join finds all above).
score_threshold() {
    q -F'|' -c "
    WITH ret AS (SELECT r.qid, r.id FROM $1 r WHERE r.id <> r.qrow),
         rel AS (SELECT qu.qid, t.o AS id, t.j FROM queries qu JOIN truth_sym t ON t.q = qu.id
                 WHERE qu.qid IN (SELECT DISTINCT qid FROM $1)),
         x AS (SELECT coalesce(ret.qid, rel.qid) AS qid, coalesce(rel.j, 0) AS j, ret.id IS NOT NULL AS got
               FROM ret FULL JOIN rel ON ret.qid = rel.qid AND ret.id = rel.id)
    SELECT round(sum((got AND j >= $2 + 0.1)::int)::numeric / nullif(sum((j >= $2 + 0.1)::int), 0), 4),
           round(sum((got AND j >= $2)::int)::numeric / nullif(sum((j >= $2)::int), 0), 4),
           round(sum((got AND j >= $2)::int)::numeric / nullif(sum(got::int), 0), 4),
           sum((got AND j < $2 - 0.1)::int),
           round(sum(got::int)::numeric / (SELECT count(DISTINCT qid) FROM $1), 2)
    FROM x"
}

# kNN: recall of the true neighbours with J >= 0.5 among the LIMIT 10 rows
# (clusters have at most 10 rows, so all of them fit); rows per query
# including the query row.
score_knn() {
    q -F'|' -c "
    WITH rel AS (SELECT qu.qid, t.o AS id FROM queries qu JOIN truth_sym t ON t.q = qu.id
                 WHERE t.j >= 0.5 AND qu.qid IN (SELECT DISTINCT qid FROM $1))
    SELECT round((SELECT count(*) FROM rel JOIN $1 r USING (qid, id))::numeric / nullif((SELECT count(*) FROM rel), 0), 4),
           '-', '-', '-',
           round((SELECT count(*) FROM $1)::numeric / (SELECT count(DISTINCT qid) FROM $1), 2)"
}

# One method: $1 label, $2 threshold (or knn), $3 pgbench statement with
# :q, $4 inner query for the recall run (uses q.sig / q.body), $5 extra
# PGOPTIONS, $6 number of queries scored, $7 result key.
run_method() {
    local label=$1 t=$2 stmt=$3 inner=$4 opts=$5 nrec=$6 key=$7
    local guc="-c minhash.similarity_threshold=${t/knn/0.5} -c pg_trgm.similarity_threshold=${t/knn/0.5} -c rum.array_similarity_threshold=${t/knn/0.5}"
    local script=$RESULTS/pgbench_$key.sql plan lat score
    echo "   .. $label, t = $t (+$(( $(date +%s) - started ))s)"
    printf '\\set q random(1, %d)\n%s;\n' "$NQ" "$stmt" >"$script"
    plan=$(PGOPTIONS="$guc $opts" plan_of "${stmt//:q/1}")
    # The recall run doubles as a load-independent cost: the backend's CPU
    # time for the whole batch, per query.
    local cpu
    if ! cpu=$(PGOPTIONS="$guc $opts" sql_cpu "CREATE TABLE res_$key AS SELECT q.qid, q.id AS qrow, d.id
        FROM queries q CROSS JOIN LATERAL ($inner) d WHERE q.qid <= $nrec"); then
        tbl_row "$label|$t|${plan:-?}|error (message above)|-|-|-|-|-|-|-|-|-"
        return 0
    fi
    cpu=$(calc "${cpu% *} * 1000 / $nrec")
    if [ "$t" = knn ]; then score=$(score_knn "res_$key"); else score=$(score_threshold "res_$key" "$t"); fi
    lat=$(PGOPTIONS="$guc $opts" pgbench_latency "$script" "$PGB_SECS") || lat="error - - -"
    read -r n p50 p99 mean <<<"$lat"
    IFS='|' read -r rhi rt prec below per <<<"$score"
    tbl_row "$label|$t|${plan:-?}|$n|$p50|$p99|$mean|$(fmt %.3f "$cpu")|${rhi:--}|${rt:--}|${prec:--}|${below:--}|$per ($nrec q)"
    eval "R_${key}_p50=\$p50 R_${key}_p99=\$p99 R_${key}_recall=\${rhi:--} R_${key}_cpu=\$cpu"
}

section_queries() {
    section "queries"
    if [ "$have_ext" != 1 ] || ! have_fn minhash; then
        not_available "minhash type and functions (queries)"
        return
    fi
    tbl_start "Queries ($ROWS rows, 128 permutations; pgbench -M prepared, 1 client, ${PGB_SECS}s each; latency in ms)" \
        "method|t|plan|n|p50|p99|mean|CPU ms/q|recall J>=t+0.1|recall J>=t|precision J>=t|returned J<t-0.1|rows/query"
    local sub_sig="(SELECT sig FROM queries WHERE qid = :q)"
    # The floor under every row: the round trip and the query-row lookup alone.
    local floor_script=$RESULTS/pgbench_floor.sql
    printf '\\set q random(1, %d)\nSELECT sig FROM queries WHERE qid = :q;\n' "$NQ" >"$floor_script"
    read -r n p50 p99 mean <<<"$(pgbench_latency "$floor_script" "$PGB_SECS")"
    R_floor_p50=$p50
    tbl_row "floor: the query-row lookup alone (SELECT sig FROM queries WHERE qid = :q)|-|Index Scan using queries_pkey|$n|$p50|$p99|$mean|-|-|-|-|-|-"
    local noidx="-c enable_indexscan=off -c enable_bitmapscan=off"
    if [ "${LSH_INDEX:-0}" = 1 ]; then
        run_method "lsh index: sig % q" 0.5 "SELECT id FROM docs WHERE sig % $sub_sig" \
            "SELECT id FROM docs WHERE sig % q.sig" "" "$NREC" lsh05
        run_method "lsh index: sig % q" 0.8 "SELECT id FROM docs WHERE sig % $sub_sig" \
            "SELECT id FROM docs WHERE sig % q.sig" "" "$NREC" lsh08
        run_method "lsh index: ORDER BY sig <%> q LIMIT 10" knn "SELECT id FROM docs ORDER BY sig <%> $sub_sig LIMIT 10" \
            "SELECT id FROM docs ORDER BY sig <%> q.sig LIMIT 10" "" "$NREC" lshknn
    else
        tbl_row "lsh index|-|not available: lsh index access method not built|-|-|-|-|-|-|-|-|-|-"
    fi
    if [ "$NREC_SLOW" -gt 0 ]; then
        run_method "seq scan: sig % q [baseline]" 0.5 "SELECT id FROM docs WHERE sig % $sub_sig" \
            "SELECT id FROM docs WHERE sig % q.sig" "$noidx" "$NREC_SLOW" seq05
        run_method "seq scan: ORDER BY sig <%> q LIMIT 10 [baseline]" knn "SELECT id FROM docs ORDER BY sig <%> $sub_sig LIMIT 10" \
            "SELECT id FROM docs ORDER BY sig <%> q.sig LIMIT 10" "$noidx" "$NREC_SLOW" seqknn
    else
        tbl_row "seq scan [baseline]|-|not run at this scale (a scan of the whole table per query)|-|-|-|-|-|-|-|-|-|-"
    fi
    if have_table docs_bands_gin; then
        local b="$LSH_B, $LSH_R"
        # The recheck is written jaccard(...) >= t, not %, so the planner
        # cannot answer it with the lsh index instead of the GIN index.
        for t in 0.5 0.8; do
            run_method "GIN minhash_bands && + jaccard() >= t recheck [baseline]" "$t" \
                "SELECT d.id FROM queries q, docs d WHERE q.qid = :q AND minhash_bands(d.sig, $b) && minhash_bands(q.sig, $b) AND jaccard(d.sig, q.sig) >= $t" \
                "SELECT id FROM docs WHERE minhash_bands(sig, $b) && minhash_bands(q.sig, $b) AND jaccard(sig, q.sig) >= $t" \
                "" "$NREC" "gin${t/./}"
        done
    else
        tbl_row "GIN over minhash_bands|-|$([ "$big" = 1 ] && echo "not built at this scale (see the index table)" || echo "not available: minhash_bands not built")|-|-|-|-|-|-|-|-|-|-"
    fi
    if have_table docs_body_trgm; then
        run_method "pg_trgm GIN: body % q.body [baseline]" 0.5 "SELECT id FROM docs WHERE body % (SELECT body FROM queries WHERE qid = :q)" \
            "SELECT id FROM docs WHERE body % q.body" "" "$NREC_TRGM" trgm05
    fi
    if have_table docs_sh_rum; then
        run_method "RUM over shingle arrays: sh % q.sh, exact Jaccard [baseline]" 0.5 \
            "SELECT id FROM docs_sh WHERE sh % (SELECT sh FROM queries WHERE qid = :q)" \
            "SELECT id FROM docs_sh WHERE sh % q.sh" "-c rum.array_similarity_function=jaccard" "$NREC_SLOW" rum05
    fi
    tbl_note "Latency: pgbench wall-clock per transaction, so on this shared 2-core machine it includes waiting for a CPU (compare the floor row). CPU ms/q: the backend's CPU time for the recall batch (the same queries in one statement, LATERAL) divided by the number of queries, which the neighbours' load does not inflate. Recall and precision: against exact shingle Jaccard (word 5-shingles, the default of minhash(text)) from bench/gen, over the first N queries (shown); the query row itself is not counted. For ORDER BY ... LIMIT 10 the recall column is the share of true neighbours with J ≥ 0.5 returned, and rows/query includes the query row. pg_trgm compares trigram similarity, not shingle Jaccard, so its recall and precision measure how well it stands in for the latter. RUM computes exact Jaccard on the shingle arrays. smlar (the GIN similarity extension) is not packaged for Debian 12, so it is not run."
    tbl_end
}
