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

# The issue-5 function, if built: its name as found in pg_proc, else empty.
allpairs_function() {
    q -c "SELECT proname FROM pg_proc WHERE proname ~ '^minhash_.*pairs' ORDER BY proname LIMIT 1"
}

section_allpairs() {
    section "all pairs"
    if [ "$have_ext" != 1 ] || [ "${LSH_INDEX:-0}" != 1 ]; then
        not_available "lsh index (issue 3; all pairs need it)"
        return
    fi
    local t=0.5 ms score fn
    tbl_start "All pairs with estimated J >= $t ($ROWS rows)" "method|s|pairs|recall J>=t+0.1|recall J>=t|precision J>=t"
    # One index probe per row. OFFSET 0 keeps a.id < b.id out of the probe:
    # otherwise the planner may scan the primary key for id > a.id and test
    # % on half the table per row, which is no index self-join at all.
    local selfjoin="SELECT a.id AS a, b.id AS b FROM docs a
        CROSS JOIN LATERAL (SELECT id FROM docs b WHERE b.sig % a.sig OFFSET 0) b WHERE a.id < b.id"
    local plan
    plan=$(PGOPTIONS="-c enable_seqscan=off" plan_of "$selfjoin" | tail -n 1)
    ms=$(PGOPTIONS="-c minhash.similarity_threshold=$t -c enable_seqscan=off" sql_ms "CREATE TABLE pairs_selfjoin AS $selfjoin")
    score=$(score_pairs pairs_selfjoin "$t")
    IFS='|' read -r rhi rt prec n <<<"$score"
    M_SELFJOIN_S=$(calc "$ms / 1000")
    tbl_row "self-join, one probe per row: LATERAL (... WHERE b.sig % a.sig) [$plan]|$(fmt %.2f "$M_SELFJOIN_S")|$n|$rhi|$rt|$prec"
    fn=$(allpairs_function)
    if [ -n "$fn" ]; then
        allpairs_call "$fn" "$t"
    else
        tbl_row "whole-table all-pairs function (issue 5)|not available|-|-|-|-"
        tbl_note "not available: all-pairs function (issue 5) not built"
    fi
    tbl_end
}

# Times the issue-5 function into pairs_fn(a, b) and adds its row.
allpairs_call() {
    local fn=$1 t=$2 ms score
    ms=$(PGOPTIONS="-c minhash.similarity_threshold=$t" sql_ms "
        CREATE TABLE pairs_fn AS SELECT key_a AS a, key_b AS b FROM $fn('docs_sig_lsh', 'docs', 'id', $t)") || {
        tbl_row "$fn (issue 5)|error (see stderr)|-|-|-|-"
        return
    }
    score=$(score_pairs pairs_fn "$t")
    IFS='|' read -r rhi rt prec n <<<"$score"
    M_PAIRS_S=$(calc "$ms / 1000")
    M_PAIRS_SPEEDUP=$(calc "$M_SELFJOIN_S / $M_PAIRS_S")
    M_PAIRS_RECALL=$rhi
    tbl_row "$fn (issue 5)|$(fmt %.2f "$M_PAIRS_S")|$n|$rhi|$rt|$prec"
}
