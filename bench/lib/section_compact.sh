# Compact signatures (bits => 16 | 8): what they save and what they cost.
#  - heap bytes per row of a table holding one signature, per k and bits
#    (pg_relation_size / rows, tuple headers and alignment included), and
#    the signature's own pg_column_size;
#  - bias and mean absolute error of jaccard() against the exact Jaccard
#    similarity of 300 planted pairs (word 5-shingles, as the generator
#    computed it), per bits and k, beside the 8-bit share of equal values
#    without the correction for chance collisions: the estimator's point;
#  - the plot bench/plots/bbit_error.png of both;
#  - the lsh index over each width at the scale's rows (compact_index): heap
#    signature plus index bytes per row, recall and error, CPU per `%` query,
#    candidates per query, and what verifying every candidate in the table
#    instead would cost (bench/notes/2026-11-27-compact-index-built.md).

# "candidates returned" per query of `%` (t = 0.5) through the index of
# table $1 (query cast $2), from EXPLAIN ANALYZE's lsh line over 200 queries.
compact_candidates() {
    q -c "SELECT minhash_bits('1:[1]')" -c "SET enable_seqscan = off" \
      -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM queries q CROSS JOIN LATERAL (SELECT id FROM $1 d WHERE d.sig % q.sig$2) d WHERE q.qid <= 200" |
        sed -n 's/.*candidates \([0-9]*\), verified [0-9]*, returned \([0-9]*\).*/\1 \2/p' |
        awk '{ printf "%.1f %.1f\n", $1 / 200, $2 / 200 }'
}

# The lsh index over signatures of each width, at the scale's rows: a table
# (id, sig) per setting, its index, and a table of the signatures alone for
# the heap bytes (as in the table above).
compact_index() {
    local cfgs=("32||" "16|verify_bits = 16|" "16||" "8||") cfg w opts n=$ROWS base_total=""
    tbl_start "The lsh index over compact signatures: $n rows of docs, k = 128, \`%\` at t = 0.5 over $NREC queries" \
        "signatures|index options|heap B/row (signature)|index B/row|heap + index B/row|vs 32-bit|build s|recall J>=0.6|recall J>=0.5|MAE of jaccard()|CPU ms/query|candidates/query|rows to the executor/query|rows/query"
    for cfg in "${cfgs[@]}"; do
        IFS='|' read -r w opts _ <<<"$cfg"
        local t=ci_$w cast="" type=minhash
        [ "$w" != 32 ] && { cast="::minhash(128, $w)"; type="minhash(128, $w)"; }
        [ -n "$opts" ] && t=${t}x
        q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS $t, cih, res_ci" \
          -c "CREATE TABLE $t AS SELECT id, sig$cast AS sig FROM docs" \
          -c "CREATE TABLE cih AS SELECT sig$cast AS sig FROM docs" -c "VACUUM ANALYZE $t" -c "VACUUM ANALYZE cih" >/dev/null
        local heap build idx total cpu rec cand
        heap=$(q -c "SELECT pg_relation_size('cih')::float8 / count(*) FROM cih")
        build=$(sql_ms "CREATE INDEX ${t}_idx ON $t USING lsh (sig) ${opts:+WITH ($opts)}")
        idx=$(q -c "SELECT pg_relation_size('${t}_idx')::float8 / count(*) FROM $t")
        total=$(calc "$heap + $idx")
        [ -z "$base_total" ] && base_total=$total
        cpu=$(PGOPTIONS="-c enable_seqscan=off" sql_cpu "CREATE TABLE res_ci AS SELECT q.qid, q.id AS qrow, d.id
            FROM queries q CROSS JOIN LATERAL (SELECT id FROM $t d WHERE d.sig % q.sig$cast) d WHERE q.qid <= $NREC") || cpu="- -"
        rec=$(q -F'|' -c "
            WITH ret AS (SELECT r.qid, r.id FROM res_ci r WHERE r.id <> r.qrow),
                 rel AS (SELECT qu.qid, t.o AS id, t.j FROM queries qu JOIN truth_sym t ON t.q = qu.id WHERE qu.qid <= $NREC),
                 x AS (SELECT coalesce(rel.j, 0) AS j, ret.id IS NOT NULL AS got
                       FROM ret FULL JOIN rel ON ret.qid = rel.qid AND ret.id = rel.id)
            SELECT round(sum((got AND j >= 0.6)::int)::numeric / nullif(sum((j >= 0.6)::int), 0), 4),
                   round(sum((got AND j >= 0.5)::int)::numeric / nullif(sum((j >= 0.5)::int), 0), 4),
                   (SELECT round(avg(abs(jaccard(a.sig$cast, b.sig$cast) - t.j))::numeric, 4)
                    FROM queries qu JOIN truth_sym t ON t.q = qu.id JOIN docs a ON a.id = t.q JOIN docs b ON b.id = t.o
                    WHERE qu.qid <= $NREC),
                   round(sum(got::int)::numeric / $NREC, 2)
            FROM x" 2>/dev/null; q -c "DROP TABLE IF EXISTS res_ci" >/dev/null)
        rec=${rec%%$'\n'*}
        IFS='|' read -r r6 r5 mae rows <<<"$rec"
        read -r cand ret <<<"$(compact_candidates "$t" "$cast")"
        tbl_row "$w bits|${opts:-(default)}|$(fmt %.1f "$heap")|$(fmt %.1f "$idx")|$(fmt %.1f "$total")|$(fmt %.2f "$(calc "$total / $base_total")")|$(fmt %.1f "$(calc "$build / 1000")")|${r6:--}|${r5:--}|${mae:--}|$(fmt %.4f "$(calc "${cpu% *} * 1000 / $NREC")")|${cand:--}|${ret:--}|${rows:--}"
        [ "$w" = 16 ] && [ -z "$opts" ] && CI16_CAND=$cand CI16_RET=$ret
    done
    # verifying in the table instead (no values in the slots): each candidate a heap
    # fetch by TID and the operator, measured on 20,000 random rows of the 16-bit table
    local fetch
    # (the TIDs in a table: 20,000 of them in the statement's text overflow a command-line argument)
    q -c "DROP TABLE IF EXISTS ci_tids" -c "CREATE TABLE ci_tids AS SELECT ctid AS t FROM ci_16 ORDER BY hashint4(id) LIMIT 20000" >/dev/null
    fetch=$(sql_cpu "SELECT count(*) FROM ci_16 WHERE ctid = ANY((SELECT array_agg(t) FROM ci_tids)::tid[]) AND sig % (SELECT sig::minhash(128, 16) FROM queries WHERE qid = 1)") || fetch="- -"
    CI_FETCH_US=$(calc "${fetch% *} * 1e6 / 20000")
    tbl_note "heap B/row: pg_relation_size / rows of a table of the signatures alone (tuple header, line pointer, alignment); index B/row: pg_relation_size of the lsh index / rows (slots of 8 + k x bytes per value, band entries, internal pages). 16 bits (default) keeps 8 bits of each value in the slots and the executor rechecks what they let through; verify_bits = 16 keeps all 16 and verifies in the index. recall: of the truth pairs (exact Jaccard from the generator) of the first $NREC queries; MAE: mean |jaccard() - J| over those pairs. CPU: the backend's, for the $NREC queries in one statement (nested loop, index scan). candidates, rows to the executor: EXPLAIN ANALYZE's lsh counters (candidates, returned) over 200 queries. Verifying every candidate in the table instead of a copy in the slots (slots of 8 bytes, a TID and a state): a heap fetch by TID plus the operator, $(fmt %.2f "$CI_FETCH_US") µs of CPU each with the table in shared buffers (a TID scan of 20,000 random rows), i.e. about $(fmt %.3f "$(calc "${CI16_CAND:-0} * $CI_FETCH_US / 1000")") ms per query for ${CI16_CAND:-?} candidates, and a random heap read each beyond memory."
    tbl_end
    q -c "DROP TABLE IF EXISTS ci_32, ci_16x, ci_16, ci_8, cih, ci_tids" >/dev/null
}

section_compact() {
    section "compact signatures"
    if [ "$have_ext" != 1 ] || ! have_fn minhash_bits; then
        not_available "minhash(..., bits => N) (compact signatures)"
        return 0
    fi
    local n=$ROWS k b
    [ "$n" -gt 100000 ] && n=100000   # bytes per row do not depend on the table's size
    tbl_start "Heap bytes per row: a table of one signature column, $n rows of docs (word 5-shingles)" \
        "num_perm|bits|pg_column_size B|heap B per row|vs 32 bits"
    for k in 64 128 256; do
        local base=""
        for b in 32 16 8; do
            q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS compact_bytes" \
              -c "CREATE TABLE compact_bytes AS SELECT minhash(body, bits => $b, num_perm => $k) AS sig
                  FROM docs ORDER BY id LIMIT $n" -c "VACUUM ANALYZE compact_bytes" >/dev/null
            local col heap
            col=$(q -c "SELECT avg(pg_column_size(sig)) FROM compact_bytes")
            heap=$(q -c "SELECT pg_relation_size('compact_bytes')::float8 / count(*) FROM compact_bytes")
            [ -z "$base" ] && base=$heap
            tbl_row "$k|$b|$(fmt %.0f "$col")|$(fmt %.1f "$heap")|$(fmt %.2f "$(calc "$heap / $base")")"
        done
    done
    q -c "DROP TABLE compact_bytes" >/dev/null
    tbl_note "heap B per row = pg_relation_size / rows of CREATE TABLE AS SELECT minhash(body, bits => B, num_perm => K): the 24-byte tuple header, the 4-byte line pointer and alignment (the type is double-aligned) included; the table's pages are full (no updates)."
    tbl_end

    PLOTS=$RESULTS/plots
    mkdir -p "$PLOTS"
    local pairs=300
    [ "$smoke" = 1 ] && pairs=50
    q -F$'\t' -c "
        WITH p AS (SELECT t.a, t.b, t.j FROM truth t WHERE t.planted AND t.j BETWEEN 0.05 AND 0.95
                   ORDER BY hashint8(t.a::int8 * 7919 + t.b) LIMIT $pairs),
        e AS (
            SELECT n, bits, p.j,
                   jaccard(minhash(x.body, bits => bits, num_perm => n), minhash(y.body, bits => bits, num_perm => n)) AS est,
                   (SELECT count(*) FROM unnest(minhash_to_array(minhash(x.body, bits => bits, num_perm => n)),
                                                minhash_to_array(minhash(y.body, bits => bits, num_perm => n))) u(s, t)
                    WHERE s = t)::float8 / n AS share
            FROM p JOIN docs x ON x.id = p.a JOIN docs y ON y.id = p.b,
                 unnest(ARRAY[16, 32, 64, 128, 256, 512]) n, unnest(ARRAY[32, 16, 8]) bits)
        SELECT n, bits, avg(est - j), avg(abs(est - j)), avg(share - j), count(*)
        FROM e GROUP BY n, bits ORDER BY bits DESC, n" >"$PLOTS/bbit_error.tsv"
    tbl_start "Error of jaccard() by bits and num_perm: $pairs planted pairs (exact J 0.05-0.95, word 5-shingles)" \
        "bits|num_perm|bias (mean est - J)|mean abs. error|bias without the b-bit correction"
    while IFS=$'\t' read -r k b bias mae raw cnt; do
        tbl_row "$b|$k|$(fmt %+.4f "$bias")|$(fmt %.4f "$mae")|$(fmt %+.4f "$raw")"
    done <"$PLOTS/bbit_error.tsv"
    tbl_note "est = jaccard(minhash(x, bits => B, num_perm => K), minhash(y, ...)); the correction is (share - 2^-B) / (1 - 2^-B), clamped to [0, 1] (docs/sql.md, \"Compact signatures\"); 'without' is the plain share of equal values. Plot: bench/plots/bbit_error.png."
    tbl_end
    gp bbit_error "info='$pairs planted pairs'"
    [ "$smoke" != 1 ] && cp "$PLOTS/bbit_error.png" "$bench/plots/"
    have_am lsh && compact_index
    return 0
}
