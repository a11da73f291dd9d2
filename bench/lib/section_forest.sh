# Issue 10 (complete answers from one lsh index): % at t = 0.3, 0.5, 0.7 and
# 0.9 through ONE default index (threshold 0.5: the probe depth follows t),
# through a dedicated index built for each t, and through GIN over the
# default index's bands; then ORDER BY <%> LIMIT 10/100/1000 against the
# exact top k of a sequential scan. Recall and CPU per query; a plot of
# recall against t (forest_recall.png).
#
# Runs after the other sections: it drops docs_sig_lsh while the dedicated
# indexes are measured, and builds it again at the end.

# "recall cpu_ms depth": recall of pairs with J >= t + 0.1 for the first $3
# queries of $1 (inner query with q.sig), at threshold $2, GUCs in $4.
forest_threshold_run() {
    local inner=$1 t=$2 nrec=$3 opts=$4 key=$5 cpu score depth
    cpu=$(PGOPTIONS="-c minhash.similarity_threshold=$t $opts" sql_cpu "CREATE TABLE fr_$key AS
        SELECT q.qid, q.id AS qrow, d.id FROM queries q CROSS JOIN LATERAL ($inner) d WHERE q.qid <= $nrec") || return 1
    cpu=$(calc "${cpu% *} * 1000 / $nrec")
    score=$(score_threshold "fr_$key" "$t")
    depth=$(PGOPTIONS="-c minhash.similarity_threshold=$t $opts" psql -X -q -tA -c "LOAD 'minhash'" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $(echo "${inner//q.sig/(SELECT sig FROM queries WHERE qid = 1)}")" |
        sed -n 's/.*depth \([0-9a-z]*\),.*/\1/p' | head -n 1)
    q -c "DROP TABLE fr_$key" >/dev/null
    echo "${score%%|*} $cpu ${depth:--}"
}

section_forest() {
    section "one index at any threshold; ORDER BY LIMIT k"
    if [ "${LSH_INDEX:-0}" != 1 ] || ! have_table docs_bands_gin; then
        not_available "lsh index and GIN over minhash_bands"
        return
    fi
    local nrec=$NREC b="$LSH_B, $LSH_R" lsh="SELECT id FROM docs WHERE sig % q.sig" ts="0.3 0.5 0.7 0.9"
    local -A one_r one_c one_d ded_r ded_c ded_d ded_br gin_r gin_c
    local t r c d load0
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    for t in $ts; do
        read -r r c d <<<"$(forest_threshold_run "$lsh" "$t" "$nrec" "" "one${t/./}")"
        one_r[$t]=$r one_c[$t]=$c one_d[$t]=$d
        read -r r c d <<<"$(forest_threshold_run "SELECT id FROM docs WHERE minhash_bands(sig, $b) && minhash_bands(q.sig, $b) AND jaccard(sig, q.sig) >= $t" \
            "$t" "$nrec" "" "gin${t/./}")"
        gin_r[$t]=$r gin_c[$t]=$c
    done
    q -c "DROP INDEX docs_sig_lsh" >/dev/null
    for t in $ts; do
        q -c "SET maintenance_work_mem = '1GB'; CREATE INDEX docs_sig_lsh_t ON docs USING lsh (sig) WITH (threshold = $t)" >/dev/null
        ded_br[$t]=$(q -c "SELECT bands || ' x ' || rows FROM minhash_lsh_stats('docs_sig_lsh_t')")
        read -r r c d <<<"$(forest_threshold_run "$lsh" "$t" "$nrec" "-c enable_bitmapscan=on" "ded${t/./}")"
        ded_r[$t]=$r ded_c[$t]=$c ded_d[$t]=$d
        q -c "DROP INDEX docs_sig_lsh_t" >/dev/null
    done
    q -c "SET maintenance_work_mem = '1GB'; CREATE INDEX docs_sig_lsh ON docs USING lsh (sig) WITH (threshold = 0.5); ANALYZE docs" >/dev/null

    tbl_start "% at threshold t from one index ($ROWS rows; recall of pairs with J >= t + 0.1 over $nrec queries; CPU ms per query; depth of the first query's probe)" \
        "t|one lsh index (0.5, $LSH_B x $LSH_R): recall|CPU ms/q|depth|dedicated lsh index: b x r|recall|CPU ms/q|depth|GIN over bands ($LSH_B x $LSH_R): recall|CPU ms/q|one index / dedicated CPU"
    mkdir -p "$RESULTS/plots"
    : >"$RESULTS/plots/forest_recall.tsv"
    for t in $ts; do
        tbl_row "$t|${one_r[$t]}|$(fmt %.3f "${one_c[$t]}")|${one_d[$t]}|${ded_br[$t]}|${ded_r[$t]}|$(fmt %.3f "${ded_c[$t]}")|${ded_d[$t]}|${gin_r[$t]}|$(fmt %.3f "${gin_c[$t]}")|$(fmt %.2f "$(calc "${one_c[$t]} / ${ded_c[$t]}")")"
        printf '%s\t%s\t%s\t%s\n' "$t" "${one_r[$t]}" "${ded_r[$t]}" "${gin_r[$t]}" >>"$RESULTS/plots/forest_recall.tsv"
    done
    tbl_note "One index: docs_sig_lsh WITH (threshold = 0.5) at the default minhash.lsh_recall (0.98); its probe depth (values of each band that must agree) follows t. Dedicated: an index WITH (threshold = t), built and dropped for each t. GIN: minhash_bands(sig, $LSH_B, $LSH_R) && q's bands, then jaccard() >= t: whole bands only, as the 1.0 lsh index. CPU: the backend's CPU time for the batch (one LATERAL statement) per query; all in one run, so ratios compare like with like. Load average (1, 5, 15 min) at the start of this section: $load0; at this table: $(cut -d' ' -f1-3 /proc/loadavg)."
    tbl_end
    PLOTS=$RESULTS/plots
    if command -v gnuplot >/dev/null; then
        gp forest_recall ""
        [ "$smoke" = 1 ] || cp "$PLOTS/forest_recall.png" "$bench/plots/"
    fi

    # ORDER BY LIMIT k: rows returned, recall@k against the exact top k (a
    # returned row counts if its distance is within the exact k-th distance:
    # ties at the k-th distance are interchangeable), CPU per query.
    local nk=$NREC_SLOW k rows rec cpu
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    tbl_start "ORDER BY sig <%> q LIMIT k through the lsh index ($ROWS rows, $nk queries; minhash.lsh_max_scan_tuples = 20000)" \
        "k|rows returned / query|recall@k vs exact top k (seq scan)|CPU ms/q (index)|CPU ms/q (seq scan + sort)"
    for k in 10 100 1000; do
        cpu=$(sql_cpu "CREATE TABLE fk_idx AS SELECT q.qid, d.id, d.dist FROM queries q CROSS JOIN LATERAL
            (SELECT id, sig <%> q.sig AS dist FROM docs ORDER BY sig <%> q.sig LIMIT $k) d WHERE q.qid <= $nk")
        local cpu_seq
        cpu_seq=$(PGOPTIONS="-c enable_indexscan=off -c enable_bitmapscan=off" sql_cpu "CREATE TABLE fk_seq AS SELECT q.qid, d.id, d.dist FROM queries q CROSS JOIN LATERAL
            (SELECT id, sig <%> q.sig AS dist FROM docs ORDER BY sig <%> q.sig LIMIT $k) d WHERE q.qid <= $nk")
        read -r rows rec <<<"$(q -F' ' -c "
            WITH kth AS (SELECT qid, max(dist) AS d FROM fk_seq GROUP BY qid)
            SELECT round((SELECT count(*) FROM fk_idx)::numeric / $nk, 1),
                   round((SELECT count(*) FROM fk_idx i JOIN kth USING (qid) WHERE i.dist <= kth.d)::numeric
                         / (SELECT count(*) FROM fk_seq), 4)")"
        tbl_row "$k|$rows|$rec|$(fmt %.3f "$(calc "${cpu% *} * 1000 / $nk")")|$(fmt %.3f "$(calc "${cpu_seq% *} * 1000 / $nk")")"
        q -c "DROP TABLE fk_idx, fk_seq" >/dev/null
    done
    tbl_note "The index widens depth by depth (whole bands, then shorter prefixes, then every signature not yet verified) until k rows are found or minhash.lsh_max_scan_tuples signatures have been verified; at the bound it returns what it verified, nearest first. CPU: the backend's CPU time for the batch per query. Load average at the start of this table: $load0; at its end: $(cut -d' ' -f1-3 /proc/loadavg)."
    tbl_end
}
