# All similar pairs in the table (issue 5): the whole-table function when it
# exists, beside the self-join through the lsh index that it replaces, each
# scored against the exact-Jaccard truth.

# Recall (J >= t+0.1, J >= t) and precision (J >= t) of a pair table (a, b).
score_pairs() {
    q -F'|' -c "
    WITH p AS (SELECT DISTINCT least(a, b) AS a, greatest(a, b) AS b FROM $1),
         x AS (SELECT coalesce(t.j, 0) AS j, p.a IS NOT NULL AS got
               FROM p FULL JOIN truth t ON t.a = p.a AND t.b = p.b)
    SELECT round(sum((got AND j >= $2 + 0.1)::int)::numeric / nullif(sum((j >= $2 + 0.1)::int), 0), 4),
           round(sum((got AND j >= $2)::int)::numeric / nullif(sum((j >= $2)::int), 0), 4),
           round(sum((got AND j >= $2)::int)::numeric / nullif(sum(got::int), 0), 4),
           sum(got::int)
    FROM x"
}

# The issue-5 function, if built: minhash_similar_pairs(index, key_column,
# threshold, exact => ..., text_column => ...) -> (key_a, key_b, similarity).
have_allpairs() { have_fn minhash_similar_pairs; }

section_allpairs() {
    section "all pairs"
    if [ "$have_ext" != 1 ] || [ "${LSH_INDEX:-0}" != 1 ]; then
        not_available "lsh index (all pairs need it)"
        return
    fi
    local t=0.5 ms score
    tbl_start "All pairs with estimated J >= $t ($ROWS rows)" "method|s|pairs|recall J>=t+0.1|recall J>=t|precision J>=t"
    # One index probe per row. OFFSET 0 keeps a.id < b.id out of the probe:
    # otherwise the planner may scan the primary key for id > a.id and test
    # % on half the table per row, which is no index self-join at all.
    local selfjoin="SELECT a.id AS a, b.id AS b FROM docs a
        CROSS JOIN LATERAL (SELECT id FROM docs b WHERE b.sig % a.sig OFFSET 0) b WHERE a.id < b.id"
    local plan
    if [ "$big" = 1 ]; then
        tbl_row "self-join, one probe per row|not run at this scale|-|-|-|-"
        tbl_note "The self-join is not run at 10m: it took 82 s at 1M, so about 15 minutes here."
    else
        plan=$(PGOPTIONS="-c enable_seqscan=off" plan_of "$selfjoin" | tail -n 1)
        ms=$(PGOPTIONS="-c minhash.similarity_threshold=$t -c enable_seqscan=off" sql_ms "CREATE TABLE pairs_selfjoin AS $selfjoin")
        score=$(score_pairs pairs_selfjoin "$t")
        IFS='|' read -r rhi rt prec n <<<"$score"
        M_SELFJOIN_S=$(calc "$ms / 1000")
        tbl_row "self-join, one probe per row: LATERAL (... WHERE b.sig % a.sig) [$plan]|$(fmt %.2f "$M_SELFJOIN_S")|$n|$rhi|$rt|$prec"
    fi
    if have_allpairs; then
        allpairs_call "$t"
    else
        tbl_row "whole-table all-pairs function|not available|-|-|-|-"
        tbl_note "not available: all-pairs function not built"
    fi
    tbl_end
}

# Times the issue-5 functions (pairs, pairs verified exactly on the text,
# clusters) and adds their rows.
allpairs_call() {
    local t=$1 ms score nclusters
    local fn="minhash_similar_pairs('docs_sig_lsh', 'id', $t)"
    local fn_exact="minhash_similar_pairs('docs_sig_lsh', 'id', $t, exact => true, text_column => 'body')"
    if ms=$(sql_ms "CREATE TABLE pairs_fn AS SELECT key_a AS a, key_b AS b FROM $fn"); then
        IFS='|' read -r rhi rt prec n <<<"$(score_pairs pairs_fn "$t")"
        M_PAIRS_S=$(calc "$ms / 1000")
        [ -n "${M_SELFJOIN_S:-}" ] && M_PAIRS_SPEEDUP=$(calc "$M_SELFJOIN_S / $M_PAIRS_S")
        M_PAIRS_RECALL=$rhi
        tbl_row "$fn|$(fmt %.2f "$M_PAIRS_S")|$n|$rhi|$rt|$prec"
    else
        tbl_row "$fn|error (message above)|-|-|-|-"
    fi
    if have_fn minhash_clusters; then
        local cfn="minhash_clusters('docs_sig_lsh', 'id', $t)"
        if ms=$(sql_ms "CREATE TABLE clusters_fn AS SELECT * FROM $cfn"); then
            nclusters=$(q -c "SELECT count(DISTINCT cluster_id) FROM clusters_fn")
            tbl_row "$cfn: $nclusters clusters of $(q -c "SELECT count(*) FROM clusters_fn") rows|$(fmt %.2f "$(calc "$ms / 1000")")|-|-|-|-"
        else
            tbl_row "$cfn|error (message above)|-|-|-|-"
        fi
    fi
    if [ "$big" = 1 ] && [ "${BENCH_PAIRS_EXACT:-0}" != 1 ]; then
        tbl_row "$fn_exact|not run at this scale (BENCH_PAIRS_EXACT=1 runs it)|-|-|-|-"
        return
    fi
    if ms=$(sql_ms "CREATE TABLE pairs_fn_exact AS SELECT key_a AS a, key_b AS b FROM $fn_exact"); then
        IFS='|' read -r rhi rt prec n <<<"$(score_pairs pairs_fn_exact "$t")"
        tbl_row "${fn_exact}|$(fmt %.2f "$(calc "$ms / 1000")")|$n|$rhi|$rt|$prec"
    else
        tbl_row "$fn_exact|error (message above)|-|-|-|-"
    fi
}
