# Compact signatures (bits => 16 | 8): what they save and what they cost.
#  - heap bytes per row of a table holding one signature, per k and bits
#    (pg_relation_size / rows, tuple headers and alignment included), and
#    the signature's own pg_column_size;
#  - bias and mean absolute error of jaccard() against the exact Jaccard
#    similarity of 300 planted pairs (word 5-shingles, as the generator
#    computed it), per bits and k, beside the 8-bit share of equal values
#    without the correction for chance collisions: the estimator's point;
#  - the plot bench/plots/bbit_error.png of both.
# The lsh index over compact signatures is not built yet (its bytes come
# with it): bench/notes/2026-11-27-compact-index.md.

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
    return 0
}
